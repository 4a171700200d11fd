"""jb-torus: ring and torus patterns, neighbour maps, overlap."""
from __future__ import annotations

import statistics

import pytest

from conftest import assert_rejected, run_benchmark

PATTERNS = ["phases", "sendrecv", "isend", "issend", "ibsend"]


def torus(mpi, tmp_path, np, *args):
    run = run_benchmark(mpi, np, list(args), json_path=tmp_path / "t.json", benchmark="torus")
    assert run.returncode == 0, run.stderr
    return run


def neighbours(rank, dims):
    """Down and up each dimension on a periodic torus; MPI orders ranks row-major (last dimension fastest)."""
    coords, r = [], rank
    for d in reversed(dims):
        coords.insert(0, r % d)
        r //= d

    def rank_of(c):
        out = 0
        for x, d in zip(c, dims):
            out = out * d + x
        return out

    result = []
    for k, d in enumerate(dims):
        for step in (-1, 1):
            c = list(coords)
            c[k] = (c[k] + step) % d
            result.append(rank_of(c))
    return result


@pytest.mark.unit
def test_the_hand_computed_map_itself():
    assert neighbours(0, [2, 3]) == [3, 3, 2, 1]
    assert neighbours(5, [6]) == [4, 0]


@pytest.mark.parametrize("np,args,dims", [
    (3, [], [3]),                      # a ring of odd length
    (4, ["--ndims", "1"], [4]),
    (6, ["--dims", "2x3"], [2, 3]),
    (8, ["--ndims", "3"], [2, 2, 2]),
])
@pytest.mark.mpi
def test_every_pattern_delivers_intact_payloads_and_the_map_is_exact(mpi, tmp_path, np, args, dims):
    run = torus(mpi, tmp_path, np, "--validate", "--size", "8,100K", "--calls", "10", "--warmup", "2", *args)
    assert run.doc["config"]["dims"] == dims
    assert run.doc["config"]["rank0_neighbours"] == neighbours(0, dims)
    assert [(r["pattern"], r["size"]) for r in run.results()] == [(p, s) for s in (8, 102400) for p in PATTERNS]
    for r in run.results():
        assert r["max_us"] >= r["avg_us"] >= r["min_us"] > 0
        assert r["bandwidth_mb_s"] == pytest.approx(2 * len(dims) * r["size"] / r["max_us"], rel=1e-5)


@pytest.mark.mpi
def test_overlap_is_measured_after_and_before_the_wait(mpi, tmp_path):
    run = torus(mpi, tmp_path, 2, "--size", "16K", "--work", "64K,256K", "--calls", "20")
    results = run.results()
    assert [(r["pattern"], r["work"], r["work_bytes"]) for r in results] == [
        ("isend", "after", 65536), ("isend", "before", 65536), ("isend", "after", 262144), ("isend", "before", 262144)]
    for after, before in zip(results[::2], results[1::2]):
        assert before["saved_us"] == pytest.approx(after["max_us"] - before["max_us"], rel=1e-4, abs=1e-3)
        assert before["saved_fraction"] == pytest.approx(before["saved_us"] / after["max_us"], rel=1e-4, abs=1e-6)
        assert "saved_us" not in after


@pytest.mark.mpi
def test_the_fastest_of_n_trials_is_the_least_trial_mean_of_the_per_call_max(mpi, tmp_path):
    """--trials 4 --calls 10: each result times 40 calls in a row; a trial is 10 consecutive
    ones; fastest_us is the least of the four trials' mean per-call MAX (from --series, exactly),
    saved_fastest_us the saving between the fastest trials of work after and before."""
    run = torus(mpi, tmp_path, 2, "--size", "16K", "--work", "64K", "--calls", "10", "--trials", "4", "--series")
    after, before = run.results()
    for r in (after, before):
        assert (r["calls"], r["trials"]) == (40, 4) and len(r["series"]["max_us"]) == 40
        trial_means = [statistics.fmean(r["series"]["max_us"][k * 10:(k + 1) * 10]) for k in range(4)]
        assert r["fastest_us"] == pytest.approx(min(trial_means), rel=1e-4)
        assert r["max_us"] == pytest.approx(statistics.fmean(r["series"]["max_us"]), rel=1e-4)
    assert before["saved_fastest_us"] == pytest.approx(after["fastest_us"] - before["fastest_us"], rel=1e-4, abs=1e-3)
    assert before["saved_fastest_fraction"] == pytest.approx(before["saved_fastest_us"] / after["fastest_us"],
                                                             rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("np,args,message", [
    (4, ["--dims", "3x3"], "a torus of 9 tasks does not hold the 4 tasks"),
    (4, ["--work", "1K", "--pattern", "sendrecv"], "not pattern sendrecv"),
    (4, ["--ndims", "9"], "--ndims: 9 is out of range"),
    (4, ["--pattern", "ring"], "unknown name 'ring'"),
    (2, ["--trials", "0"], "--trials: 0 is out of range"),
    (2, ["--trials", "1001"], "--trials: 1001 is out of range"),
])
@pytest.mark.mpi
def test_bad_input(mpi, tmp_path, np, args, message):
    assert_rejected(mpi, np, args, message, "torus", tmp_path)
