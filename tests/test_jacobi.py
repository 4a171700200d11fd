"""jb-jacobi: the Jacobi inverter of Hein, Booth and Bull (section 8): the study's halo sizes, the same
field whatever the grid of tasks and halo method, the exact iterate that --validate checks, the
fastest trial's statistics, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_rejected, run_benchmark

pytestmark = pytest.mark.mpi


def jacobi(mpi, tmp_path, np, *args):
    run = run_benchmark(mpi, np, list(args), json_path=tmp_path / f"j{np}.json", benchmark="jacobi")
    assert run.returncode == 0, run.stderr
    return run


def test_the_study_s_part_of_the_lattice_gives_its_halos_of_848_and_1016_bytes(mpi, tmp_path):
    # 6720 x 8064 on 32 x 32 tasks is 210 x 252 a task: so is 420 x 504 on 2 x 2
    for args in (["--lattice", "420x504"], ["--local", "210x252"], []):
        run = jacobi(mpi, tmp_path, 4, "--calls", "5", "--warmup", "1", *args)
        assert {(r["dims"], r["lattice"], r["local"], r["halo_x_bytes"], r["halo_y_bytes"]) for r in run.results()} == \
            {("2x2", "420x504", "210x252", 1016, 848)}
        assert [r["halo"] for r in run.results()] == ["sendrecv", "waitall"]


def reference_checksum(nx, ny, sweeps):
    """The benchmark's checksum worked out whole, with numpy in the same float32 operations: u = 0,
    f = ((7x + 13y) mod 17) / 17, each sweep (u[x-1] + u[x+1] + u[y-1] + u[y+1] + f) / 4 periodic, then the
    sum of u (1 + (3x + 5y) mod 11)."""
    x, y = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    f = ((7 * x + 13 * y) % 17).astype(np.float32) / np.float32(17)
    u = np.zeros((nx, ny), np.float32)
    for _ in range(sweeps):
        u = np.float32(0.25) * ((((np.roll(u, 1, 0) + np.roll(u, -1, 0)) + np.roll(u, 1, 1)) + np.roll(u, -1, 1)) + f)
    return float(np.sum((u * (1 + (3 * x + 5 * y) % 11).astype(np.float32)).astype(np.float64)))


@pytest.mark.parametrize("np_,dims", [(1, "1x1"), (2, "2x1"), (2, "1x2"), (4, "2x2"), (4, "4x1")])
def test_every_grid_and_both_halo_methods_iterate_the_same_field(mpi, tmp_path, np_, dims):
    """Both methods give the identical field on one grid, and every grid the field worked out whole (but for
    the order of the checksum's sum)."""
    run = jacobi(mpi, tmp_path, np_, "--lattice", "60x84", "--dims", dims, "--calls", "40", "--warmup", "3",
                 "--trials", "2", "--validate")
    assert "# validate: every payload arrived intact" in run.stdout
    sendrecv, waitall = run.results()
    assert sendrecv["checksum"] == waitall["checksum"]
    assert sendrecv["checksum"] == pytest.approx(reference_checksum(60, 84, 40), rel=1e-12)


def test_the_fastest_trial_is_one_of_the_trials(mpi, tmp_path):
    run = jacobi(mpi, tmp_path, 2, "--local", "16x16", "--calls", "20", "--trials", "5")
    for r in run.results():
        assert r["trials"] == 5 and r["calls"] == 20
        # the mean over every trial's iterations is the mean of the trials' means: never below the least
        assert r["fastest_step_us"] <= r["step_us"] * (1 + 1e-12)
        # per iteration the MAX of halo + compute is at most the MAX of each, summed
        assert r["fastest_step_us"] <= (r["fastest_halo_us"] + r["fastest_compute_us"]) * (1 + 1e-12)
        assert r["max_us"] >= r["avg_us"] >= r["min_us"] > 0
    single = jacobi(mpi, tmp_path, 2, "--local", "16x16", "--calls", "20", "--halo", "waitall")
    (r,) = single.results()
    assert (r["fastest_step_us"], r["fastest_halo_us"], r["fastest_compute_us"]) == \
        (r["step_us"], r["max_us"], r["compute_us"])


def test_an_injected_wait_is_inside_the_timed_halo_and_not_the_sweep(mpi, tmp_path):
    """--inject 1:US makes every task wait US us (busy) at every iteration inside the halo's timing:
    every task's halo time, so its MIN over tasks, is at least US; the sweep is not touched (the
    verdict's power runs slow the halo by a known amount, benchmarks/verdict_rates.py)."""
    run = jacobi(mpi, tmp_path, 2, "--local", "16x16", "--calls", "20", "--inject", "1:200", "--halo", "waitall")
    (r,) = run.results()
    assert r["min_us"] >= 200 and r["compute_us"] < 200, r


@pytest.mark.parametrize("np,args,message", [
    (2, ["--lattice", "421x504"], "--lattice: 421 points in x do not split evenly over 2 tasks"),
    (2, ["--lattice", "8x8", "--local", "4x4"], "--lattice and --local: give one of them"),
    (2, ["--dims", "3x1"], "--dims: a grid of 3 tasks does not hold the 2 tasks"),
    (2, ["--local", "0x5"], "--local: '0x5' is not a shape AxB"),
    (2, ["--local", "5"], "--local: '5' is not LXxLY"),
    (2, ["--halo", "isend"], "--halo"),
    (2, ["--local", "1048576x1048576"], "--local"),
    (2, ["--calls", "100000000", "--trials", "1000"], "--calls x --trials"),
])
def test_bad_input(mpi, tmp_path, np, args, message):
    assert_rejected(mpi, np, args, message, "jacobi", tmp_path)
