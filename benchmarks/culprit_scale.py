"""What jb-pairs and jb-congestion cost at scale against a trivial MPI loop doing the same messages,
and how their JSON grows with the tasks (issue 30): 32, 128 and 256 ranks on this machine, each its
own virtual node (--tasks-per-node 1), oversubscribed and unbound, as the issue asks.

The trivial loops are C programs written here and compiled with the MPI's own mpicc into a
temporary folder: jb-pairs's schedule (the circle method, a barrier a round, the ping-pongs and
windows of the same sizes and counts) and jb-congestion's calls (a barrier, a ring exchange with two
random neighbours or an 8-byte allreduce, isolated and beside an all-to-all loop), without the
statistics, clocks, watchdog and output.  Runs alternate, benchmark and loop, --repeats times;
printed: the median wall time of each, their ratio, and the JSON's size.

    .venv/bin/python benchmarks/culprit_scale.py [--ranks 32,128,256] [--repeats 3] [--mpi openmpi]

A benchmark script, not a test: timings on a shared machine are printed, never asserted.
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jitterbench import mpi as mpis

CALLS, WINDOWS, WINDOW, SMALL, LARGE = 12, 6, 16, 8, 4096
CANARY_CALLS, ROUNDS = 20, 2

PAIRS_LOOP = r"""
#include <mpi.h>
#include <stdlib.h>
static long partner(long n, long r, long i) {
    long m = n % 2 ? n + 1 : n, t = m - 1, p = i == t ? r : i == r ? t : ((2 * r - i) % t + t) % t;
    return p >= n ? -1 : p;
}
int main(int argc, char **argv) {
    int me, n; MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &me); MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *s = calloc(WINDOW, LARGE), *d = calloc(WINDOW, LARGE), ack = 0; MPI_Request q[WINDOW];
    long rounds = n % 2 ? n : n - 1;
    for (long r = 0; r < rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int p = (int)partner(n, r, me); if (p < 0) continue;
        for (int c = 0; c < CALLS + 10; c++)
            if (me < p) { MPI_Send(s, SMALL, MPI_BYTE, p, 0, MPI_COMM_WORLD); MPI_Recv(d, SMALL, MPI_BYTE, p, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { MPI_Recv(d, SMALL, MPI_BYTE, p, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(s, SMALL, MPI_BYTE, p, 0, MPI_COMM_WORLD); }
        for (int c = 0; c < WINDOWS + 2; c++)
            if (me < p) { for (int k = 0; k < WINDOW; k++) MPI_Isend(s + k * LARGE, LARGE, MPI_BYTE, p, k, MPI_COMM_WORLD, &q[k]);
                          MPI_Waitall(WINDOW, q, MPI_STATUSES_IGNORE); MPI_Recv(&ack, 1, MPI_BYTE, p, WINDOW, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { for (int k = 0; k < WINDOW; k++) MPI_Irecv(d + k * LARGE, LARGE, MPI_BYTE, p, k, MPI_COMM_WORLD, &q[k]);
                   MPI_Waitall(WINDOW, q, MPI_STATUSES_IGNORE); MPI_Send(&ack, 1, MPI_BYTE, p, WINDOW, MPI_COMM_WORLD); }
    }
    MPI_Finalize(); return 0;
}
"""

CONGESTION_LOOP = r"""
#include <mpi.h>
#include <stdlib.h>
/* canaries: node i with (i C) mod N < C, C = max(2, round(0.2 N)); the rest one all-to-all group */
int main(int argc, char **argv) {
    int me, n; MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &me); MPI_Comm_size(MPI_COMM_WORLD, &n);
    long c_n = (long)(0.2 * n + 0.5); c_n = c_n < 2 ? 2 : c_n > n - 1 ? n - 1 : c_n;
    int canary = ((long)me * c_n) % n < c_n; MPI_Comm comm; MPI_Comm_split(MPI_COMM_WORLD, !canary, me, &comm);
    int cme, cn; MPI_Comm_rank(comm, &cme); MPI_Comm_size(comm, &cn);
    char *s = calloc(2 * (size_t)cn + 2, 131072), *d = calloc(2 * (size_t)cn + 2, 131072);
    long *perm = malloc(sizeof(long) * cn); srand(7);
    for (int round = 0; round < ROUNDS; round++)
        for (int phase = 0; phase < 2; phase++) {
            MPI_Request start, done;
            if (!canary && phase) { int fin = 0, all = 0; MPI_Alltoall(s, 4096, MPI_BYTE, d, 4096, MPI_BYTE, comm);
                MPI_Ibarrier(MPI_COMM_WORLD, &start); MPI_Wait(&start, MPI_STATUS_IGNORE); MPI_Ibarrier(MPI_COMM_WORLD, &done);
                while (!all) { MPI_Alltoall(s, 4096, MPI_BYTE, d, 4096, MPI_BYTE, comm);
                    if (!fin) MPI_Test(&done, &fin, MPI_STATUS_IGNORE); MPI_Allreduce(&fin, &all, 1, MPI_INT, MPI_MIN, comm); }
                continue; }
            if (!canary) { MPI_Barrier(MPI_COMM_WORLD); continue; }
            if (phase) { MPI_Ibarrier(MPI_COMM_WORLD, &start); MPI_Wait(&start, MPI_STATUS_IGNORE); }
            for (int k = 0; k < 3; k++)
                for (int c = 0; c < CANARY_CALLS / ROUNDS + (round ? 0 : 10); c++) {
                    for (long i = 0; i < cn; i++) perm[i] = i;
                    for (long i = cn - 1; i > 0; i--) { long j = rand() % (i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
                    int left = 0, right = 0; for (long i = 0; i < cn; i++) if (perm[i] == cme) { left = perm[(i + cn - 1) % cn]; right = perm[(i + 1) % cn]; }
                    MPI_Barrier(comm);
                    if (k == 2) { double x = cme, y; MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm); continue; }
                    int size = k ? 131072 : 8; MPI_Request q[4];
                    MPI_Irecv(d, size, MPI_BYTE, left, 0, comm, &q[0]); MPI_Irecv(d + size, size, MPI_BYTE, right, 1, comm, &q[1]);
                    MPI_Isend(s, size, MPI_BYTE, right, 0, comm, &q[2]); MPI_Isend(s + size, size, MPI_BYTE, left, 1, comm, &q[3]);
                    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
                }
            if (phase) { MPI_Ibarrier(MPI_COMM_WORLD, &done); MPI_Wait(&done, MPI_STATUS_IGNORE); }
            else MPI_Barrier(MPI_COMM_WORLD);
        }
    MPI_Finalize(); return 0;
}
"""


def compile_loop(m, folder, name, source, defines):
    path = Path(folder, f"{name}.c")
    path.write_text(source)
    binary = Path(folder, name)
    subprocess.run([m.mpicc, "-O2", *[f"-D{k}={v}" for k, v in defines.items()], "-o", str(binary), str(path)],
                   check=True, env=m.launch(1, [])[1])
    return binary


def timed(m, ranks, argv):
    cmd, env = m.launch(ranks, [str(a) for a in argv])
    cmd[1:1] = ["--bind-to", "none"] if m.name == "openmpi" else []
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpi", default="openmpi", choices=[m.name for m in mpis.ALL])
    parser.add_argument("--ranks", default="32,128,256")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    m = mpis.by_name(args.mpi)
    defines = {"CALLS": CALLS, "WINDOWS": WINDOWS, "WINDOW": WINDOW, "SMALL": SMALL, "LARGE": LARGE,
               "CANARY_CALLS": CANARY_CALLS, "ROUNDS": ROUNDS}
    with tempfile.TemporaryDirectory() as tmp:
        loops = {"pairs": compile_loop(m, tmp, "pairs_loop", PAIRS_LOOP, defines),
                 "congestion": compile_loop(m, tmp, "congestion_loop", CONGESTION_LOOP, defines)}
        options = {"pairs": ["--calls", CALLS, "--windows", WINDOWS, "--window", WINDOW, "--passes", 1,
                             "--latency-size", SMALL, "--bandwidth-size", LARGE],
                   "congestion": ["--calls", CANARY_CALLS, "--rounds", ROUNDS, "--congestors", "alltoall"]}
        print(f"# {m.name}; each rank a virtual node, unbound; median of {args.repeats} alternating runs")
        print(f"{'benchmark':>10} {'ranks':>6} {'jitterbench s':>14} {'loop s':>8} {'ratio':>6} {'JSON bytes':>11}"
              f" {'per rank':>9}")
        for ranks in (int(r) for r in args.ranks.split(",")):
            for bench in ("pairs", "congestion"):
                doc = Path(tmp, f"{bench}.json")
                ours, loop = [], []
                for _ in range(args.repeats):
                    ours.append(timed(m, ranks, [m.binary(bench), "--tasks-per-node", 1, *options[bench],
                                                 "--json", doc]))
                    loop.append(timed(m, ranks, [loops[bench]]))
                size = doc.stat().st_size
                a, b = statistics.median(ours), statistics.median(loop)
                print(f"{bench:>10} {ranks:>6} {a:14.2f} {b:8.2f} {a / b:6.2f} {size:11d} {size / ranks:9.0f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
