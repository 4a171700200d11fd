"""perftest beneath the MPIs: the parser on real perftest output (tests/fixtures/perftest, each
file's source in its SOURCES.md), and PerftestCheck on this machine, which has no RDMA adapter:
where a partition lists none the check skips and says so; where a site lists one that is not
there, perftest's own error fails it, in seconds, its server not left waiting."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jitterbench import perftest

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
FIXTURES = REPO / "tests" / "fixtures" / "perftest"
PAIR = REPO / "reframe_checks" / "perftest" / "pair.sh"


def fixture(name):
    return (FIXTURES / name).read_text()


# ---- the parser, on real output (tests/fixtures/perftest/SOURCES.md) --------------------------

SIZES = [2 ** k for k in range(1, 24)]  # -a: 2 bytes to 8 MiB


@pytest.mark.parametrize("name,test,iterations", [
    ("ib_send_lat-mlx4_0.txt", "Send Latency Test", 20000),
    ("ib_read_lat-mlx4_0.txt", "RDMA_Read Latency Test", 20000),
    ("ib_write_bw-mlx4_0.txt", "RDMA_Write BW Test", 50000),
])
@pytest.mark.unit
def test_real_output_reads_as_its_test_settings_and_every_size(name, test, iterations):
    result = perftest.parse(fixture(name))
    assert result["test"] == test
    assert [r["bytes"] for r in result["rows"]] == SIZES
    assert {r["iterations"] for r in result["rows"]} == {iterations}
    assert perftest.describe(fixture(name)) == "mlx4_0 IB RC MTU 2048[B]"
    assert result["settings"]["Data ex. method"] == "Ethernet"


@pytest.mark.unit
def test_latency_rows_hold_every_column_and_warnings_between_them_are_passed_over():
    text = fixture("ib_send_lat-mlx4_0.txt")
    assert text.count("Conflicting CPU frequency values detected") == 45
    rows = perftest.parse(text)["rows"]
    # the 8-byte row as printed: t_min t_max t_typical t_avg t_stdev 99% 99.9%
    assert perftest.row_at({"rows": rows}, 8) == {"bytes": 8, "iterations": 20000, "t_min_us": 1.03, "t_max_us": 9.40,
                                                  "t_typical_us": 1.09, "t_avg_us": 1.12, "t_stdev_us": 0.29,
                                                  "p99_us": 1.63, "p999_us": 5.02}
    for r in rows:  # what the columns mean, on every row of a real run
        assert r["t_min_us"] <= r["t_typical_us"] <= r["p99_us"] <= r["p999_us"] <= r["t_max_us"]
    assert perftest.value_at(fixture("ib_read_lat-mlx4_0.txt"), "p99_us", 65536) == 22.43


@pytest.mark.unit
def test_bandwidth_of_real_output_in_mb_s():
    text = fixture("ib_write_bw-mlx4_0.txt")
    # 3658.48 'MB/sec' at 64 KiB as printed, perftest's MB being 2^20 bytes; in 10^6-byte MB/s beside OSU's
    assert perftest.value_at(text, "bw_average_mb_s", 65536) == 3658.48
    assert perftest.value_at(text, "bandwidth_mb_s", 65536) == pytest.approx(3658.48 * 1.048576)
    with pytest.raises(perftest.PerftestParseError, match="no bandwidth column"):
        perftest.value_at(fixture("ib_send_lat-mlx4_0.txt"), "bandwidth_mb_s", 65536)


# ---- the parser, on hand-made inputs that must fail -------------------------------------------

@pytest.mark.parametrize("text,message", [
    ("", "no '#bytes' table header"),
    (" Did not detect devices \n Unable to find the Infiniband/RoCE device\n", "no '#bytes' table header"),
    (" #bytes #iterations    t_min[usec]    t_max[usec]\n", "a table header but no rows"),
    (" #bytes #iterations    t_min[usec]    t_max[usec]\n 2       1000          1.76\n", "has 3 cells, the header 4"),
    (" #bytes #iterations    t_min[usec]\n 2       1000          nan?\n", "not a number"),
    (" #bytes #iterations    t_min[usec]\n 2  1000  1.0\n #bytes #iterations    t_min[usec]\n", "a second table header"),
])
@pytest.mark.unit
def test_output_that_is_not_one_table_is_one_error(text, message):
    with pytest.raises(perftest.PerftestParseError, match=message):
        perftest.parse(text)


@pytest.mark.unit
def test_column_titles_become_keys_with_their_units():
    assert [perftest.column_key(t) for t in ("#bytes", "t_typical[usec]", "99% percentile[usec]",
                                             "99.9% percentile[usec]", "BW average[MiB/sec]",
                                             "BW peak[Gb/sec]", "MsgRate[Mpps]")] == [
        "bytes", "t_typical_us", "p99_us", "p999_us", "bw_average_mib_s", "bw_peak_gb_s", "msg_rate_mpps"]


@pytest.mark.unit
@pytest.mark.parametrize("unit,factor", [("MiB/sec", 1.048576), ("MB/sec", 1.048576), ("Gb/sec", 125.0)])
def test_bandwidth_is_given_in_mb_s_whatever_unit_perftest_printed(unit, factor):
    text = (f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]\n"
            " 65536      5000             10.00              8.00                 0.1\n")
    assert perftest.value_at(text, "bandwidth_mb_s", 65536) == pytest.approx(8.0 * factor)
    with pytest.raises(perftest.PerftestParseError, match=r"no row for 4096 bytes \(sizes: 65536\)"):
        perftest.value_at(text, "bandwidth_mb_s", 4096)


# ---- pair.sh and the check on this machine -----------------------------------------------------

needs_perftest = pytest.mark.skipif(shutil.which("ib_send_lat") is None,
                                    reason="perftest is not installed (ci/setup.sh installs Debian's perftest)")


@pytest.mark.process
@needs_perftest
def test_pair_without_an_adapter_fails_with_perftest_s_own_error_and_leaves_no_server(tmp_path):
    start = time.monotonic()
    proc = subprocess.run(["bash", str(PAIR), "ib_send_lat", "-a", "-F", "-d", "mlx5_0"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert proc.stdout.startswith("# perftest: Version:")
    assert "Did not detect devices" in proc.stdout or "IB device mlx5_0 not found" in proc.stdout, proc.stdout
    assert time.monotonic() - start < 30  # the server did not wait for a client that never came
    assert subprocess.run(["pgrep", "-f", "ib_send_lat -a -F -d mlx5_0"], capture_output=True).returncode == 1


SITE = '''site_configuration = {
    "systems": [{"name": "rdmasite", "hostnames": [".*"], "partitions": [
        {"name": "ib", "scheduler": "local", "launcher": "local", "environs": ["gnu"],
         "features": ["rdma"], "extras": {"rdma_devices": ["mlx5_0", "mlx5_1:1"]}},
        {"name": "eth", "scheduler": "local", "launcher": "local", "environs": ["gnu"]}]}],
    "environments": [{"name": "gnu", "cc": "gcc"}],
}
'''


def run_checks(tmp_path, *args, env=None):
    (tmp_path / "site.py").write_text(SITE)
    proc = subprocess.run([str(REFRAME), "-C", str(tmp_path / "site.py"), "-c", str(REPO / "reframe_checks" / "perftest.py"),
                           "--prefix", str(tmp_path / "out"), "--report-file", str(tmp_path / "report.json"), *args, "-r"],
                          cwd=tmp_path, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=300)
    cases = [c for run in json.loads((tmp_path / "report.json").read_text())["runs"] for c in run["testcases"]]
    return proc, cases


@pytest.mark.reframe
@needs_perftest
def test_a_partition_without_adapters_skips_and_one_whose_adapter_is_missing_fails_with_perftest_s_words(tmp_path):
    proc, cases = run_checks(tmp_path, "-n", "PerftestCheck%benchmark=ib_send_lat")
    results = sorted((f'{c["system"]}:{c["partition"]}', c["name"].split("%adapter=")[1].split()[0], c["result"])
                     for c in cases)
    # one case per adapter the ib partition lists; eth, which lists none, keeps adapter 0 to say why
    assert results == [("rdmasite:eth", "0", "skip"), ("rdmasite:ib", "0", "fail"), ("rdmasite:ib", "1", "fail")], proc.stdout
    assert "no RDMA device: partition rdmasite:eth lists none (extras rdma_devices)" in proc.stdout
    failed = [c for c in cases if c["result"] == "fail"]
    assert all("ib_send_lat printed no result table: Did not detect devices" in c["fail_reason"] for c in failed)
    # the adapter's name and port reach perftest as -d and -i
    scripts = sorted((tmp_path / "out" / "stage").rglob("rfm_job.sh"))
    commands = [s.read_text().splitlines()[-1] for s in scripts]
    assert any(" -d mlx5_0" in c and " -i " not in c for c in commands), commands
    assert any(" -d mlx5_1 -i 1" in c for c in commands), commands


@pytest.mark.reframe
def test_perftest_not_found_is_a_skip_naming_where_it_was_looked_for(tmp_path):
    empty = tmp_path / "prefix"
    (empty / "bin").mkdir(parents=True)
    proc, cases = run_checks(tmp_path, "-n", "PerftestCheck%benchmark=ib_write_bw", "-p", "gnu",
                             "--system", "rdmasite:ib", env={"JB_PERFTEST_PREFIX": str(empty)})
    assert [c["result"] for c in cases] == ["skip", "skip"]
    assert f"perftest not found: no ib_write_bw in {empty / 'bin'}" in proc.stdout


@pytest.mark.reframe
@needs_perftest
def test_the_spack_view_s_perftest_comes_before_path(tmp_path):
    view = tmp_path / "views" / "rdma" / "bin"
    view.mkdir(parents=True)
    (view / "ib_write_bw").symlink_to(shutil.which("ib_write_bw"))  # the real perftest, as a view links it
    proc, cases = run_checks(tmp_path, "-n", "PerftestCheck%benchmark=ib_write_bw", "--system", "rdmasite:ib",
                             env={"JB_SPACK_VIEWS": str(tmp_path / "views")})
    scripts = sorted((tmp_path / "out" / "stage").rglob("rfm_job.sh"))
    assert len(scripts) == 2 and all(f"pair.sh {view / 'ib_write_bw'} -a -F -d mlx5_" in s.read_text() for s in scripts)
    assert [c["result"] for c in cases] == ["fail", "fail"]  # no adapter here: perftest's own words, as above
