#!/usr/bin/env bash
# The main job: set up, run the quick acceptance suite on this machine with
# ReFrame for every MPI found, then print one table: check, parameters, MAX,
# AVG, reference, pass/fail, and write the HTML report (output/report/index.html).
# Everything the run leaves is in output/.
set -uo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh || exit 1
export PATH=$PWD/.venv/bin:$PATH
export JB_OUTPUT=${JB_OUTPUT:-$PWD/output}
rm -rf "$JB_OUTPUT/stage" "$JB_OUTPUT/report.json"

reframe -C systems/config.py --mode quick -r
status=$?
echo
echo "== The quick suite on $(hostname): the verdict per check and MPI; the worst asserted variable, its slowdown"
echo "   against the reference (ratio) and the smallest the reference detects; MAX and AVG there, us per call"
echo "   (MAX = mean over calls of the max over tasks); every case: jitterbench table --all $JB_OUTPUT/report.json"
jitterbench table "$JB_OUTPUT/report.json" || status=1
jitterbench report "$JB_OUTPUT/report.json" -o "$JB_OUTPUT/report" >/dev/null || status=1
echo
echo "Perflogs: $JB_OUTPUT/perflogs   JUnit: $JB_OUTPUT/junit.xml   Run report: $JB_OUTPUT/report.json"
echo "The HTML report, figures and tables of this run: $JB_OUTPUT/report/index.html"
exit $status
