#!/usr/bin/env bash
# Every test: set up, then the C unit tests (ctest) for each build and the
# pytest suite, which drives the benchmarks under each MPI's real launcher.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
export PATH=$PWD/.venv/bin:$PATH
for dir in build/*/; do
    ctest --test-dir "$dir" --output-on-failure
done
exec python -m pytest -ra --durations=15 "$@"
