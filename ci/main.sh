#!/usr/bin/env bash
# The main job: set up, run the quick acceptance suite on this machine with
# ReFrame for every MPI found, then print one table: per check and MPI, its verdict
# against the references, and write the HTML report (output/report/index.html).
# Arguments go to ReFrame (e.g. -n HaloCheck).  Everything the run leaves is in output/.
#
# References are the machine's own: a run takes a file's references only where its
# fingerprint (CPU, MPI libraries, transports) matches the run's (docs/references.md).
# Where no file matches, this job records a baseline: BASELINE_RUNS quick runs in all
# (this one and the rest, about 3 minutes each on a 2-core machine), more up to BASELINE_MOST
# where fewer bound too few of an MPI's central figures (WANT_BOUNDED of them within 2x), made
# into output/references/<system>.yaml, which the next run asserts against.
set -uo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh || exit 1
export PATH=$PWD/.venv/bin:$PATH
export JB_OUTPUT=${JB_OUTPUT:-$PWD/output}
BASELINE_RUNS=5  # the fewest repeats a bound takes (jitterbench/bounds.py, MIN_REPEATS)
# Five runs bounded Intel MPI's central figures within 2x at a median of 39 % here, ten at 92 %
# (docs/references.md, "A baseline enough to judge by"): the baseline adds runs until every MPI's
# are bounded at WANT_BOUNDED, or it has BASELINE_MOST
BASELINE_MOST=10
WANT_BOUNDED=0.8
rm -rf "$JB_OUTPUT/stage" "$JB_OUTPUT/report.json"
# every run is kept in ReFrame's results database ($JB_OUTPUT/results.db, or where the site's
# RFM_SQLITE_DB_FILE says), tagged with what decides its numbers; `jitterbench history` reads it
extras=$(jitterbench history --session-extras quick) || exit 1

run_started=$SECONDS
reframe -C systems/config.py --mode quick --session-extras "$extras" -r "$@"
status=$?
run_took=$((SECONDS - run_started))
# --check: 0 a file matches, 1 none does (record a baseline), 2 a file it cannot read (say so, record nothing)
matched=0
if [ -s "$JB_OUTPUT/report.json" ]; then
    jitterbench reference --check "$JB_OUTPUT/report.json" >"$JB_OUTPUT/machine.txt" 2>&1 || matched=$?
fi
if [ $matched = 2 ]; then
    cat "$JB_OUTPUT/machine.txt"
    status=1
elif [ $matched = 1 ]; then
    started=$SECONDS
    baseline=$(mktemp -d "$JB_OUTPUT/baseline-$(date -u +%Y%m%dT%H%M%S)-XXXX")
    echo
    # one line: which facts of this machine differ from each file's (the hardware fact by fact)
    echo "== No references of this machine: $(paste -sd ' ' "$JB_OUTPUT/machine.txt"). Nothing was judged;" \
         "recording a baseline of $BASELINE_RUNS quick runs (about $((run_took * (BASELINE_RUNS - 1) / 60)) min more)," \
         "up to $BASELINE_MOST (about $((run_took * (BASELINE_MOST - 1) / 60)) min) where fewer bound under" \
         "$(awk "BEGIN { print $WANT_BOUNDED * 100 }") % of an MPI's central figures within 2x, in $baseline;" \
         "the next run asserts against it"
    cp "$JB_OUTPUT/report.json" "$baseline/run-1.json"
    mkdir -p "$JB_OUTPUT/references"
    k=1
    while true; do
        k=$((k + 1))
        reframe -C systems/config.py --mode quick --session-extras "$extras" -r "$@" --report-file "$baseline/run-$k.json" \
            >"$baseline/run-$k.log" 2>&1 || echo "   baseline run $k: some case failed ($baseline/run-$k.log)"
        [ $k -ge $BASELINE_RUNS ] || continue
        made=0
        jitterbench reference "$baseline"/run-*.json -o "$JB_OUTPUT/references" --want-bounded $WANT_BOUNDED \
            --measured-by "ci/main.sh's baseline on $(hostname)" >"$baseline/reference.txt" 2>&1 || made=$?
        if [ $made = 4 ] && [ $k -lt $BASELINE_MOST ]; then
            echo "   $k runs: $(grep 'too few central' "$baseline/reference.txt" | sed 's/^ *//'); one more run"
            continue
        fi
        sed 's/^/   /' "$baseline/reference.txt"
        [ $made = 0 ] || [ $made = 4 ] || status=1
        break
    done
    echo "   the baseline took $((SECONDS - started)) s ($k runs)"
fi
# a file that matches but lacks what newer files hold (the hardware, the node figures) says so
[ $matched != 0 ] || grep -h "the file lacks" "$JB_OUTPUT/machine.txt" | sed 's/^/== /'
# A verdict takes two attempts (docs/references.md, "Two attempts"): each check that failed under an
# MPI runs again at once, alone, and fails only if it fails again.  The run's report keeps both
# attempts, and the verdict, this job's exit code too, is then the last attempt's.
if [ $matched = 0 ] && [ -n "$(jitterbench table --failed "$JB_OUTPUT/report.json")" ]; then
    echo
    echo "== Judged again, at once and alone (a check fails only if it fails again):"
    jitterbench again "$JB_OUTPUT/report.json" -- reframe -C systems/config.py --mode quick \
        --session-extras "$extras" "$@" -r | sed 's/^/   /'
    [ "${PIPESTATUS[0]}" != 0 ] || status=0
fi
echo
echo "== The quick suite on $(hostname): the verdict per check and MPI; the worst asserted variable, its slowdown"
echo "   against the reference (ratio) and the smallest the reference detects; MAX and AVG there, us per call"
echo "   (MAX = mean over calls of the max over tasks); every case: jitterbench table --all $JB_OUTPUT/report.json"
# 3: some case inconclusive (its node past its bounds, or a launch disturbed through every try) and none failed:
# say so, exit 3
jitterbench table "$JB_OUTPUT/report.json"
case $? in
    0) ;;
    3) status=3 ;;
    *) status=1 ;;
esac
store=${RFM_SQLITE_DB_FILE:-$JB_OUTPUT/results.db}  # every run so far: the report's History section
history=(); [ -f "$store" ] && history=(--history "$store")
jitterbench report "$JB_OUTPUT/report.json" -o "$JB_OUTPUT/report" "${history[@]}" >/dev/null || status=1
echo
echo "Perflogs: $JB_OUTPUT/perflogs   JUnit: $JB_OUTPUT/junit.xml   Run report: $JB_OUTPUT/report.json"
echo "The HTML report, figures and tables of this run: $JB_OUTPUT/report/index.html"
[ $status != 3 ] || echo "Inconclusive: nothing of some cases was judged; the table says why: a node finding first" \
    "(the node moved, not the network: see what changed on it), or a launch something else disturbed through every" \
    "try (run bash ci/main.sh again when the machine is quiet)."
exit $status
