"""What the harness adds to the launch-to-launch spread (issue 41, item 4): one quick HaloCheck case
launched under ReFrame and the same job run from a plain loop, interleaved in rounds.

    python benchmarks/harness_spread.py --rounds 20 --mpi openmpi,mpich --out DIR

Per round and MPI, in a shuffled order (seeded): (reframe) a ReFrame run of the case, one launch
(JB_LAUNCHES=1), as the quick mode runs it; (script) the job script ReFrame wrote for it (its
environment: the transport account's verbose variables, the binding; its launch loop), run by
bash from a plain loop, ReFrame absent; (bare) the benchmark's command line alone under the MPI's
launcher, none of the job's variables.  Each prints the per-call MAX and AVG at 4 KiB and 40 KiB
(the median over the launch's calls is not what the checks assert: these are the checks' own
figures, means over calls).  The spread of a variant is over its rounds: the robust standard
deviation of the log (1.4826 x MAD) and max/min; a wider spread under ReFrame than from the script
is what the harness adds, a wider one from the script than bare is what the job's variables add.
Timings: nothing here asserts; the figures go in docs/references.md.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jitterbench import mpi as mpis  # noqa: E402
from verdict_rates import prefix  # noqa: E402  JB_PREFIX's root over ci/setup.sh's builds

REFRAME = REPO / ".venv" / "bin" / "reframe"
CASE = ["-n", "HaloCheck", "-P", "placement=row", "-P", "eager_limit=default"]
FIGURES = [f"{q}_isend-recv_{s}" for s in (4096, 40960) for q in ("max", "avg")]


def env_for(out: Path, root: Path) -> dict:
    return dict(os.environ, JB_OUTPUT=str(out), JB_PREFIX=f"{root}/{{environ}}", JB_LAUNCHES="1",
                JB_REFERENCE_DIR=str(out / "no-references"))


def reframe_run(out: Path, root: Path, mpi: str, keep=False) -> str:
    """One ReFrame run of the case under mpi; its job's stdout."""
    subprocess.run([str(REFRAME), "-C", "systems/config.py", "--mode", "quick", *CASE, "-S",
                    f"valid_prog_environs={mpi}", "-S", "judge_load=0", *(["--keep-stage-files"] if keep else []),
                    "-r"], cwd=REPO, env=env_for(out, root), capture_output=True, text=True, timeout=600)
    (job_out,) = (out / "output").rglob("HaloCheck_*/rfm_job.out")
    return job_out.read_text()


def figures(text: str) -> dict:
    """{figure: value} from the JB_RESULT lines of one launch (sizes 4096, 40960; isend-recv)."""
    found = {}
    for line in re.findall(r"^JB_RESULT .*$", text, re.M):
        size = re.search(r"\sns_size=(\d+)", line)[1]
        for q in ("max", "avg"):
            found[f"{q}_isend-recv_{size}"] = float(re.search(rf"\s{q}_us=(\S+)", line)[1])
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--mpi", default="openmpi,mpich")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--out", type=Path, required=True, help="a new folder for every run's output")
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=False)
    root = prefix(args.out / "prefix")
    rng = random.Random(args.seed)
    values = {}
    for mpi in args.mpi.split(","):
        m = mpis.by_name(mpi)
        # the job script ReFrame writes for the case, kept to run from a plain loop
        first = args.out / f"{mpi}-script-source"
        reframe_run(first, root, mpi, keep=True)
        (script,) = (first / "stage").rglob("HaloCheck_*/rfm_job.sh")
        stage = script.parent
        bare = re.search(r"launches\.sh \d+ \d+ .*? -np \d+ (\S+/jb-halo .*)$", script.read_text(), re.M)[1].split()
        for k in range(1, args.rounds + 1):
            order = ["reframe", "script", "bare"]
            rng.shuffle(order)
            for variant in order:
                if variant == "reframe":
                    text = reframe_run(args.out / f"{mpi}-reframe-{k}", root, mpi)
                elif variant == "script":
                    run = args.out / f"{mpi}-script-{k}"
                    shutil.copytree(stage, run, ignore=shutil.ignore_patterns("launch-*", "disturbed-*"))
                    text = subprocess.run(["bash", "rfm_job.sh"], cwd=run, capture_output=True, text=True,
                                          timeout=600, env=env_for(run, root)).stdout
                else:
                    cmd, env = m.launch(2, bare)
                    text = subprocess.run(cmd, cwd=args.out, env=env, capture_output=True, text=True,
                                          timeout=600).stdout
                for name, value in figures(text).items():
                    values.setdefault((mpi, variant, name), []).append(value)
        print(f"{mpi}: {args.rounds} rounds of reframe, script and bare, interleaved (seed {args.seed})", flush=True)
        print(f"  {'figure':22} {'variant':8} {'median us':>9} {'robust sd(log)':>14} {'max/min':>8}")
        for name in FIGURES:
            for variant in ("reframe", "script", "bare"):
                v = np.array(values.get((mpi, variant, name), [np.nan]))
                logs = np.log(v)
                sd = 1.4826 * statistics.median(abs(logs - statistics.median(logs)))
                print(f"  {name:22} {variant:8} {statistics.median(v):9.2f} {sd:14.3f} {v.max() / v.min():8.2f}")


if __name__ == "__main__":
    try:
        main()
    except FileExistsError as e:
        sys.exit(f"harness_spread: {e.filename} exists: name a new folder")
    except KeyboardInterrupt:
        sys.exit("harness_spread: interrupted")
