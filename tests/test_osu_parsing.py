"""The OSU parser on real OSU Micro-Benchmarks 7.4 output (../shared/fixtures/osu-7.4)."""
from __future__ import annotations

from pathlib import Path

import pytest

from jitterbench import osu

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "osu-7.4"


def fixture(name):
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"OSU fixtures not found at {FIXTURES}")
    return path.read_text()


@pytest.mark.parametrize("name,column,size,value", [
    ("osu_latency_np2_run1.txt", "avg_latency_us", 8, 0.62),
    ("osu_latency_z_np2_run1.txt", "p99_tail_lat_us", 4, 0.31),
    ("osu_bw_np2_run1.txt", "bandwidth_mb_s", 16, 117.33),
    ("osu_multi_lat_np2_run1.txt", "avg_latency_us", 32, 1.35),
    ("osu_mbw_mr_np2_run1.txt", "messages_s", 2, 10918185.26),
    ("osu_alltoall_f_np4_run1.txt", "max_latency_us", 4, 15.77),
    ("osu_barrier_f_np4_run1.txt", "avg_latency_us", None, 10.07),
    ("osu_latency_c_np2_run1.txt", "validation", 16, "Pass"),
])
def test_values_from_real_output(name, column, size, value):
    assert osu.value_at(fixture(name), column, size) == value


def test_every_fixture_parses_into_a_full_table():
    names = sorted(p.name for p in FIXTURES.glob("*.txt")) if FIXTURES.exists() else []
    if not names:
        pytest.skip(f"OSU fixtures not found at {FIXTURES}")
    for name in names:
        rows = osu.parse(fixture(name))
        assert rows and len({tuple(r) for r in rows}) == 1, name  # one header for every row
    sizes = [r["size"] for r in osu.parse(fixture("osu_latency_np2_run1.txt"))]
    assert sizes[0] == 1 and sizes == sorted(sizes) and sizes[-1] >= 4096


def test_broken_output_is_an_error_not_a_number():
    with pytest.raises(osu.OsuParseError, match="no result rows"):
        osu.parse("# OSU MPI Latency Test v7.4\n# Size  Avg Latency(us)\n")
    with pytest.raises(osu.OsuParseError, match="cells"):
        osu.parse("# Size       Avg Latency(us)\n8   0.5   extra\n")
    with pytest.raises(osu.OsuParseError, match="no row for size 16"):
        osu.value_at("# Size       Avg Latency(us)\n8                       0.62\n", "avg_latency_us", 16)


def test_validation_passes_only_where_every_size_says_pass():
    text = fixture("osu_latency_c_np2_run1.txt")
    assert osu.validation_passed(text)
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line.strip().endswith("Pass"))
    lines[last] = lines[last].replace("Pass", "Fail")
    assert not osu.validation_passed("\n".join(lines))
    assert not osu.validation_passed("")  # nothing printed: no size validated
    assert not osu.validation_passed(fixture("osu_latency_np2_run1.txt"))  # a run without -c validated nothing
