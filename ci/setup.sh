#!/usr/bin/env bash
# Set-up shared by the README's two commands: installs what is missing
# (MPI libraries, CMake, Python venv), builds every benchmark once per MPI.
# Idempotent: a second run only rebuilds what changed.
#
#   ci/setup.sh                 all of it
#   ci/setup.sh --no-build      all but the builds: the GitLab pipeline builds in a stage of its own
#   ci/setup.sh --python-only   the Python environment only (ReFrame, jitterbench): a site's
#                               runner, whose MPIs and compilers come from its modules
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

say() { printf '[setup] %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
    "") what=all ;;
    --no-build) what=no-build ;;
    --python-only) what=python ;;
    *) die "unknown option '$1' (expected --no-build or --python-only)" ;;
esac

# --- system packages (Debian) ------------------------------------------------
need_pkgs=()
if [ $what != python ]; then
    command -v mpicc.openmpi >/dev/null || need_pkgs+=(openmpi-bin libopenmpi-dev)
    command -v cmake >/dev/null || need_pkgs+=(cmake)
    command -v make >/dev/null || need_pkgs+=(make)
    command -v cc >/dev/null || need_pkgs+=(gcc)
    # the verbs baseline (reframe_checks/perftest.py): here, with no RDMA adapter, its
    # checks skip, and the tests see perftest's own error where a site names a missing one
    command -v ib_send_lat >/dev/null || need_pkgs+=(perftest)
fi
python3 -c 'import venv, ensurepip' 2>/dev/null || need_pkgs+=(python3-venv)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "missing ${need_pkgs[*]} and no apt-get to install them"
    [ "$(id -u)" = 0 ] || die "missing ${need_pkgs[*]}: run as root, or install them first"
    say "installing ${need_pkgs[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# --- Python virtual environment inside the repository ------------------------
VENV=$REPO/.venv
[ -x "$VENV/bin/python" ] || { say "creating $VENV"; python3 -m venv "$VENV"; }
stamp=$VENV/.jitterbench-installed
want=$(cat pyproject.toml VERSION | sha256sum | cut -d' ' -f1)  # VERSION: the package's version
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing Python dependencies"
    "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$VENV/bin/python" -m pip install -q -e ".[test]"
    echo "$want" > "$stamp"
fi
export PATH=$VENV/bin:$PATH
[ $what != python ] || exit 0

# --- MPICH and Intel MPI from PyPI, each in a venv of its own.  MPICH 5 (not
# Debian's 4.0.2, which hangs in MPI_Finalize across nodes; jitterbench/mpi.py);
# Intel MPI pinned: 2021.19 needs a libfabric that PyPI does not have ----------
pypi_mpi() { # folder, version, packages...
    local dir=$1 version=$2; shift 2
    if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$version" ]; then
        say "installing $* from PyPI into $dir"
        python3 -m venv "$dir"
        "$dir/bin/python" -m pip install -q "$@"
        echo "$version" > "$dir/.installed"
    fi
}
MPICH_VERSION=5.0.2
pypi_mpi "$REPO/.deps/mpich" $MPICH_VERSION "mpich==$MPICH_VERSION"
# that MPICH as Spack's external (spack.yaml includes this file for local and vcluster):
# an external's prefix takes no variable, so the concrete path is written here, the
# physical one (a checkout whose .deps links to another's writes the same file)
written=$(mktemp .deps/packages.yaml.XXXXXX)
printf '%s\n' "# written by ci/setup.sh: this checkout's MPICH from PyPI, for spack.yaml" "packages:" \
    "  mpich:" "    buildable: false" "    externals:" "    - spec: mpich@$MPICH_VERSION" \
    "      prefix: $(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$(cd .deps/mpich && pwd -P)")" \
    > "$written"
chmod 644 "$written"
mv "$written" .deps/packages.yaml
pypi_mpi "$REPO/.deps/impi" 2021.18.1 "impi-rt==2021.18.1" "impi-devel==2021.18.1"
[ $what != no-build ] || exit 0

# --- build every benchmark once per MPI ------------------------------------
mpis=$(python -m jitterbench.mpi)
[ -n "$mpis" ] || die "no MPI compiler wrapper found after installing"
while read -r name mpicc env; do
    say "building for $name ($mpicc) in build/$name"
    env $env cmake -S src -B "build/$name" -DMPI_C_COMPILER="$(command -v "$mpicc")" >/dev/null
    env $env cmake --build "build/$name" -j "$(nproc)" >/dev/null
done <<< "$mpis"
