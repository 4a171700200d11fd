#!/usr/bin/env bash
# The main job: set up, then run the halo benchmark on this machine for every
# MPI, over its patterns and both placements, and print MAX and AVG.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
export PATH=$PWD/.venv/bin:$PATH

# 8 ranks as 2 virtual nodes of 4 on a 4 x 2 grid: row placement puts a row on
# a node, bunched a 2 x 2 block, so the two differ in off-node traffic.
ranks=8 calls=${JB_CALLS:-200}
mkdir -p results
files=()
for mpi in $(python -m jitterbench.mpi | cut -d' ' -f1); do
    for placement in row bunched; do
        out=results/halo-$mpi-$placement.json
        echo "== jb-halo, $mpi, $placement placement"
        python - "$mpi" "$ranks" build/"$mpi"/jb-halo --px 4 --tasks-per-node 4 --placement "$placement" \
            --calls "$calls" --validate --json "$out" <<'PY'
import subprocess, sys
from jitterbench import mpi
cmd, env = mpi.by_name(sys.argv[1]).launch(int(sys.argv[2]), sys.argv[3:])
sys.exit(subprocess.run(cmd, env=env).returncode)
PY
        files+=("$out")
    done
done
echo
echo "== MAX and AVG per call (us), $ranks ranks, $calls calls; MAX = mean over calls of the max over tasks"
jitterbench summarize "${files[@]}"
