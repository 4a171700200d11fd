#!/usr/bin/env bash
# Every test: set up, then the pytest tiers (pyproject.toml's markers) one after the other, the
# unit tier first so that a broken edit shows at once (the spack tier beside the two that start no
# MPI job, below), and the C unit tests (ctest) of each build.
# Every tier runs even if one before it failed; the exit status is non-zero if any failed.
# Arguments go to every pytest run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
export PATH=$PWD/.venv/bin:$PATH

FAILED=()
TIMES=()
run_tier() {
    local tier=$1 start=$SECONDS status=0
    shift
    echo "[test] tier $tier"
    python -m pytest -m "$tier" -ra --durations=10 "$@" || status=$?
    # 5: no test collected, which a tier holds only if every test of it was taken out on purpose
    if [ $status = 5 ]; then
        echo "[test] tier $tier: no test collected"
    elif [ $status != 0 ]; then
        FAILED+=("$tier")
    fi
    TIMES+=("$tier $((SECONDS - start)) s")
    echo "[test] tier $tier: $((SECONDS - start)) s, pytest exit status $status"
}

# the tiers in the order they run: tests/conftest.py's TIERS
read -r -a TIERS < <(cd tests && python -c 'from conftest import TIERS; print(*TIERS)')

# The spack tier runs beside the tiers that start no MPI job (unit, process) and the installs
# below: most of a cold spack tier is Spack's solver, and CI's whole run was 3,070 s before the
# tier's ~450 s came in (60 minutes the limit).  Its output is shown whole when it ends, before
# anything starts that launches MPI jobs (its own checks then have the machine).
BESIDE=(unit process)
SIDE=.deps/spack-tier
SIDE_PID=
if [[ " ${TIERS[*]} " == *" spack "* ]]; then
    mkdir -p $SIDE
    rm -f $SIDE/failed $SIDE/times
    (
        FAILED=() TIMES=()
        run_tier spack -p no:cacheprovider --basetemp=$SIDE/tmp "$@"
        echo "${FAILED[*]}" > $SIDE/failed
        echo "${TIMES[*]}" > $SIDE/times
    ) > $SIDE/log 2>&1 &
    SIDE_PID=$!
    # a background job takes no Ctrl-C: whatever ends this script ends the tier's processes too
    kill_tree() { local child; for child in $(pgrep -P "$1"); do kill_tree "$child"; done; kill "$1" 2>/dev/null || true; }
    trap '[ -z "$SIDE_PID" ] || kill_tree "$SIDE_PID"' EXIT
fi
run_tier unit "$@"

# gitlab-ci-local runs the GitLab pipeline's jobs here (tests/test_pipeline.py).  4.73.0 is
# the last release that runs on Node.js 20: 4.74 calls Set.prototype.union (Node.js 22).
GITLAB_CI_LOCAL=4.73.0
if [ "$(cat .deps/gitlab-ci-local/.installed 2>/dev/null)" != $GITLAB_CI_LOCAL ]; then
    if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ]; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
    fi
    echo "[test] installing gitlab-ci-local $GITLAB_CI_LOCAL from npm into .deps/gitlab-ci-local"
    npm install --prefix .deps/gitlab-ci-local --no-save --no-audit --no-fund --loglevel=error \
        "gitlab-ci-local@$GITLAB_CI_LOCAL" >/dev/null
    echo $GITLAB_CI_LOCAL > .deps/gitlab-ci-local/.installed
fi
# gitlab-ci-local copies the project into its build folder with rsync
if ! command -v rsync >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "[test] installing rsync from Debian (gitlab-ci-local needs it)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rsync >/dev/null
fi
# Debian's chromium renders the HTML report in tests/test_report.py
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "[test] installing chromium from Debian"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
run_tier process "$@"
if [ -n "$SIDE_PID" ]; then
    wait "$SIDE_PID" || true
    SIDE_PID=
    cat $SIDE/log
    # no file: the tier ended before it could say how it went
    { [ -f $SIDE/failed ] && [ -z "$(cat $SIDE/failed)" ]; } || FAILED+=(spack)
    TIMES+=("$(cat $SIDE/times 2>/dev/null || echo 'spack ? s') (beside ${BESIDE[*]})")
    BESIDE+=(spack)
fi
# The ASan+UBSan build, build/asan-openmpi (tests/test_sanitizers.py, test_fuzz.py,
# test_hostile_c.py): built here, from the same sources as the others, so that the loop
# below never runs the unit tests of a stale or half-built one left by an earlier run.
python tests/support/fuzz_benchmarks.py --build-sanitized >/dev/null
for dir in build/*/; do
    ctest --test-dir "$dir" --output-on-failure || FAILED+=("ctest $dir")
done
for tier in "${TIERS[@]}"; do
    [[ " ${BESIDE[*]} " == *" $tier "* ]] || run_tier "$tier" "$@"
done

echo "[test] time per tier: $(IFS=,; echo "${TIMES[*]}" | sed 's/,/, /g'); total $SECONDS s"
if [ ${#FAILED[@]} != 0 ]; then
    echo "[test] failed: ${FAILED[*]}"
    exit 1
fi
