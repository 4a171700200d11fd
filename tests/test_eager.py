"""jb-eager: the probed eager limit follows the MPI's eager-limit variable."""
from __future__ import annotations

import pytest

from conftest import assert_rejected, run_benchmark

pytestmark = pytest.mark.mpi

# bytes of the limit each MPI keeps for its header on shared memory, as probed
HEADER = {"openmpi": 56}


def probe(mpi, tmp_path, env=None, *args):
    run = run_benchmark(mpi, 2, list(args), json_path=tmp_path / "eager.json", benchmark="eager", env=env)
    assert run.returncode == 0, run.stderr
    return {r["pair"]: r for r in run.results()}


@pytest.mark.parametrize("limit", [8192, 32768])
def test_the_declared_shared_memory_variable_moves_the_probe(mpi, tmp_path, limit):
    variable = mpi.eager_var("shm")
    if not variable:
        pytest.skip(f"{mpi.name} declares no shared-memory eager variable (jitterbench/mpi.py says why)")
    pairs = probe(mpi, tmp_path, {variable: str(limit)})
    on_node = pairs["on-node"]
    # within the probe's 8-byte resolution of the limit less the header
    assert limit - HEADER[mpi.name] - 8 <= on_node["eager_limit_bytes"] <= limit - HEADER[mpi.name]
    # the evidence: at the limit the send returned before the receiver posted; just above it, it waited
    assert on_node["eager_send_us"] < on_node["delay_us"] / 2 <= on_node["rendezvous_send_us"]
    assert "off-node" not in pairs  # one node, one pair


def test_every_size_probed_is_logged_and_classified_consistently(mpi, tmp_path):
    pairs = probe(mpi, tmp_path, None, "--max-size", "64K")
    on_node = pairs["on-node"]
    limit, delay = on_node["eager_limit_bytes"], on_node["delay_us"]
    probes = on_node["probes_size_us"]
    assert probes and all(size <= 65536 for size, _ in probes)
    for size, us in probes:  # the limit found agrees with every probe made
        assert (us < delay / 2) == (size <= limit), (size, us, limit)


@pytest.mark.parametrize("args,message", [
    (["--delay", "5"], "--delay: 5 is out of range"),
    (["--max-size", "2G"], "--max-size: give 8 bytes to 1G"),
    (["--repeats", "0"], "--repeats: 0 is out of range"),
])
def test_bad_input(mpi, tmp_path, args, message):
    assert_rejected(mpi, 2, args, message, "eager", tmp_path)


def test_one_task_is_a_clear_error(mpi, tmp_path):
    run = run_benchmark(mpi, 1, [], benchmark="eager", timeout=60)
    assert run.returncode != 0 and "needs at least 2 tasks" in run.error_lines("eager")[0]
