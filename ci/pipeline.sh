#!/usr/bin/env bash
# The jobs of the GitLab acceptance pipeline (ci/gitlab-ci.yml), run in the project folder:
#
#   ci/pipeline.sh build        the Spack environment where the runner has Spack, else every
#                               benchmark built with CMake and installed in install/<environ>
#   ci/pipeline.sh acceptance   reframe --mode $JB_MODE on $JB_SYSTEM; evidence in output/$JB_SYSTEM,
#                               the run added to the results store (store below)
#   ci/pipeline.sh history      jitterbench history of $JB_SYSTEM's runs in the store: fails on a
#                               new step to the worse side
#   ci/pipeline.sh report       the summary of every system's run: output/summary.txt and the
#                               HTML report output/report/index.html
#
# The variables are those of ci/gitlab-ci.yml.  Each job ends non-zero when its step failed,
# so a failed check turns its acceptance job red.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.venv/bin:$PATH

die() { echo "pipeline: error: $*" >&2; exit 2; }
need_system() { [ -n "${JB_SYSTEM:-}" ] || die "JB_SYSTEM is not set: the job must name its ReFrame system"; }

build() {
    need_system
    # the build stage decides where binaries come from; nothing set before it may point elsewhere
    unset JB_PREFIX JB_SPACK_VIEWS
    if command -v spack >/dev/null; then
        export JB_SPACK_SYSTEM=${JB_SPACK_SYSTEM:-$JB_SYSTEM}
        # a site's fork may commit spack.lock; then the build is exactly that one
        [ -f spack.lock ] || spack -e . concretize
        spack -e . install
    else
        JB_OUTPUT=$PWD/output/$JB_SYSTEM/build reframe -C systems/config.py --system "$JB_SYSTEM" \
            -c reframe_checks/install.py -S install_root="$PWD/install" \
            --report-junit="$PWD/output/$JB_SYSTEM/build/junit.xml" -r
    fi
}

# The results store every acceptance run adds to, kept across pipelines: JB_RESULTS_DB (a path on
# the runner's machine or shared storage), else results/<system>/results.db in the project, which
# the jobs' GitLab cache carries from one pipeline to the next.
store() {
    if [ -n "${JB_RESULTS_DB:-}" ]; then
        echo "$JB_RESULTS_DB"
    else
        echo "$PWD/results/$JB_SYSTEM/results.db"
    fi
}

say_store() {
    local where="GitLab's cache (key jitterbench-results-$JB_SYSTEM)"
    [ -z "${JB_RESULTS_DB:-}" ] || where="JB_RESULTS_DB"
    echo "results store: $(store), kept across pipelines by $where"
}

acceptance() {
    need_system
    export RFM_SQLITE_DB_FILE
    RFM_SQLITE_DB_FILE=$(store)
    mkdir -p "$(dirname "$RFM_SQLITE_DB_FILE")"
    say_store
    case "${JB_MODE:-}" in
        quick|acceptance) ;;
        *) die "JB_MODE is '${JB_MODE:-}': expected quick or acceptance" ;;
    esac
    # the binaries of the build stage: its install/ folder, or the Spack environment's views
    if [ -d install ]; then
        export JB_PREFIX=$PWD/install/{environ}
    elif [ -f spack.lock ] && command -v spack >/dev/null; then
        spack -e . install  # installs nothing the build stage did not; writes the views here
        export JB_SPACK_VIEWS=$PWD/.spack-env/views
    fi
    # what the sweep will run and cost, stated before it starts (nothing runs)
    python -m jitterbench plan --system "$JB_SYSTEM" --mode "$JB_MODE"
    local opts=(--system "$JB_SYSTEM${JB_PARTITION:+:$JB_PARTITION}" --mode "$JB_MODE")
    [ -z "${JB_ACCOUNT:-}" ] || opts+=(-J "account=$JB_ACCOUNT")
    # JB_MODULES and JB_RFM_OPTIONS are split into words on purpose (several in one variable),
    # by read: no word is taken as a file pattern
    local modules=() rfm_options=() module status=0
    read -r -a modules <<<"${JB_MODULES:-}"
    read -r -a rfm_options <<<"${JB_RFM_OPTIONS:-}"
    for module in "${modules[@]}"; do opts+=(-m "$module"); done
    local run=(reframe -C systems/config.py "${opts[@]}" --session-extras "$(jitterbench history --session-extras "$JB_MODE")"
               "${rfm_options[@]}" -r) report=output/$JB_SYSTEM/report.json
    JB_OUTPUT=$PWD/output/$JB_SYSTEM "${run[@]}" || status=$?
    # a verdict takes two attempts, as the references' rate does (docs/references.md, "Two attempts"):
    # each check that failed under an MPI runs again at once, alone, and fails only if it fails again
    if [ $status != 0 ] && [ -n "$(jitterbench table --failed "$report" 2>/dev/null)" ]; then
        echo "== Judged again, at once and alone (a check fails only if it fails again):"
        JB_OUTPUT=$PWD/output/$JB_SYSTEM jitterbench again "$report" -- "${run[@]}" && status=0 || status=$?
    fi
    # the store as it now is, among the job's artifacts (SQLite's own copy: whole, whoever writes)
    [ ! -f "$RFM_SQLITE_DB_FILE" ] || python -c 'import sqlite3, sys
with sqlite3.connect(sys.argv[1]) as src, sqlite3.connect(sys.argv[2]) as dst: src.backup(dst)' \
        "$RFM_SQLITE_DB_FILE" "output/$JB_SYSTEM/results.db"
    return $status
}

history() {
    need_system
    say_store
    mkdir -p "output/$JB_SYSTEM"
    local status=0
    jitterbench history --store "$(store)" --system "$JB_SYSTEM" --json > "output/$JB_SYSTEM/history.json" || status=$?
    [ $status -le 1 ] || return $status
    jitterbench history --store "$(store)" --system "$JB_SYSTEM" | tee "output/$JB_SYSTEM/history.txt"
    return $status
}

report() {
    local reports=(output/*/report.json) summary=output/summary.txt
    mkdir -p output
    {
        echo "# jitterbench acceptance: pipeline ${CI_PIPELINE_ID:-?} of commit ${CI_COMMIT_SHORT_SHA:-?}"
        echo "# MAX and AVG are per call, in us (MAX = mean over calls of the max over tasks)"
        for report in "${reports[@]}"; do
            [ -f "$report" ] || { echo "no system left a run report"; break; }
            echo
            echo "== $(basename "$(dirname "$report")")"
            jitterbench table "$report"
        done
    } > "$summary.tmp"
    mv "$summary.tmp" "$summary"
    cat "$summary"
    # the HTML report of every system's run: figures, tables, what each ran with
    [ ! -f "${reports[0]}" ] || jitterbench report "${reports[@]}" -o output/report
}

case "${1:-}" in
    # every variable checked first: one line naming a wrong one (jitterbench/settings.py)
    build|acceptance|history|report) python -m jitterbench.settings || exit 2; "$1" ;;
    *) die "usage: ci/pipeline.sh build|acceptance|history|report" ;;
esac
