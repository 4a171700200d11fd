"""The CI's Spack, for the spack tier (tests/test_spack.py): Spack v1.1.0 and the builtin packages of
spack-packages v2025.11.0 from ../shared/vendor, beside the checkout as CI lays it out (its
README).  That folder is read-only and is never written to, nor copied: Spack runs from it in
place, and everything it writes goes to a work area of the checkout, .deps/spack/ (ignored by git
and kept between runs, as ci/setup.sh's MPIs are, so that a second run reuses what Spack allows):

    python/        a venv with clingo from PyPI, Spack's SPACK_PYTHON (without it, Spack would
                   bootstrap its concretizer from the network)
    config/        a configuration scope of its own: the builtin repository's path, bootstrapping
                   off, the install tree, build stage, source and misc caches here, the source
                   mirror, the concretization cache on, checksums off (below)
    mirror/        the source mirror: OSU 7.4's and IMB 2021.7's tarballs made from the vendored
                   trees, at the path Spack fetches from (_source-cache/archive/<sha256[:2]>/
                   <sha256>.tar.gz, the package's sha256) and the alias `spack mirror create` adds
    bin/spack      the command: the vendored bin/spack with the variables below
    install/, stage/, source-cache/, cache/ (misc cache: repository indexes, concretizations),
    user-cache/, user-config/, pycache/ (Python's bytecode of Spack and its packages)

Why each of these is so, in Spack v1.1.0's own code (lib/spack/spack/ of the vendored tree):
  - The scope is one that Python packages may register (config.py, config_paths_from_entry_points:
    the `spack.config` entry points of SPACK_PYTHON's packages), which the venv's
    jitterbench_spack_scope does.  Such a scope lies above Spack's own (etc/spack) and below an
    environment's, where `spack -C DIR` would lie above the environment: there the builtin
    repository would come before spack.yaml's own (merged keys of the higher scope come first,
    schema/__init__.py, merge_yaml), and Spack would take the builtin intel-mpi-benchmarks over
    the project's.  And it is writable, where a -C scope is not (main.py,
    add_command_line_scopes): Spack writes configuration to the highest writable scope
    (config.py, default_modify_scope), which would otherwise be the vendored etc/spack (this
    Spack has no etc/spack/include.yaml, so no user scope either).
  - The vendored files are read-only to others but not to root, which CI is: Python would write
    __pycache__ beside Spack's modules and the packages' package.py.  PYTHONPYCACHEPREFIX puts
    them in pycache/ instead.
  - The default source mirror (etc/spack/defaults/base/mirrors.yaml, spack-public) is on the
    network: `mirrors::` replaces the section with the local mirror alone.
  - The mirror's tarballs are made here from the release trees, not downloaded: their sha256 is
    not the package's, so `config: checksum: false`, which is what `spack install --no-checksum`
    sets (cmd/install.py); every tarball this Spack fetches is such a one.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
VENDOR = SHARED / "vendor"
WORK = REPO / ".deps" / "spack"
BUILTIN = VENDOR / "spack-packages" / "repos" / "spack_repo" / "builtin"
CLINGO = "clingo==5.8.3"

# what the tier takes from ../shared/vendor (its README): a file that says it is there, and what it is
NEEDS = [("spack/bin/spack", "Spack v1.1.0"),
         ("spack-packages/repos/spack_repo/builtin/repo.yaml", "spack-packages v2025.11.0's builtin repository"),
         ("osu-micro-benchmarks-7.4/configure", "the OSU Micro-Benchmarks 7.4 tree"),
         ("mpi-benchmarks-2021.7/src_cpp/Makefile", "the Intel MPI Benchmarks 2021.7 tree")]

# the source mirror's tarballs: (package, version, vendored tree, the folder the tarball holds)
SOURCES = [("osu-micro-benchmarks", "7.4", "osu-micro-benchmarks-7.4", "osu-micro-benchmarks-7.4"),
           ("intel-mpi-benchmarks", "2021.7", "mpi-benchmarks-2021.7", "mpi-benchmarks-IMB-v2021.7")]


def missing() -> str | None:
    """None where the vendored Spack is complete, else one line naming what is missing."""
    if not VENDOR.is_dir():
        return (f"no Spack here: {VENDOR} is absent (CI has it at ../shared/vendor: Spack v1.1.0, its builtin "
                f"packages and the OSU and IMB trees, docs/spack.md)")
    absent = [f"{what} ({VENDOR / path})" for path, what in NEEDS if not (VENDOR / path).exists()]
    if absent:
        return f"no Spack here: {VENDOR} lacks {'; '.join(absent)}"
    return None


def checksum(root: Path) -> str:
    """The sha256 of a folder as it is: every entry's path, type, permission bits, and a file's
    bytes or a link's target, in a fixed order; symbolic links are not followed."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            path = Path(folder, name)
            info = path.lstat()
            digest.update(f"{path.relative_to(root)}\0{stat.S_IFMT(info.st_mode)}\0{stat.S_IMODE(info.st_mode)}\0"
                          .encode(errors="surrogateescape"))
            if stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(path).encode(errors="surrogateescape"))
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        digest.update(block)
        digest.update(b"\1")
    return digest.hexdigest()


def sha256_of(package: str, version: str) -> str:
    """The sha256 the builtin package states for a version: the mirror path Spack fetches from."""
    text = (BUILTIN / "packages" / package.replace("-", "_") / "package.py").read_text()
    found = re.search(rf'version\(\s*"{re.escape(version)}",\s*sha256="([0-9a-f]{{64}})"', text)
    if not found:
        raise RuntimeError(f"{package}'s package.py states no sha256 for {version}")
    return found[1]


def _tarball(tree: Path, top: str, dest: Path):
    """A .tar.gz of tree under the folder name top, the same bytes every time (sorted entries, no
    owners, gzip's time 0), every entry writable by its owner (the vendored tree's are not)."""
    def clean(info):
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode |= stat.S_IWUSR
        return info
    tmp = dest.with_name(dest.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for folder, dirs, files in os.walk(tree):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                path = Path(folder, name)
                tar.add(path, arcname=f"{top}/{path.relative_to(tree)}", recursive=False, filter=clean)
    tmp.rename(dest)


def _mirror(root: Path):
    """The source mirror: each tarball at the digest path Spack fetches from (mirrors/layout.py,
    DefaultLayout: _source-cache/archive/<sha256[:2]>/<sha256>.<ext>, the sha256 the package states
    for the version) and its alias <package>/<package>-<version>.tar.gz, as `spack mirror create`
    lays it out.  Made once; a tarball already there is kept."""
    for package, version, tree, top in SOURCES:
        sha = sha256_of(package, version)
        digest = root / "_source-cache" / "archive" / sha[:2] / f"{sha}.tar.gz"
        if not digest.exists():
            digest.parent.mkdir(parents=True, exist_ok=True)
            _tarball(VENDOR / tree, top, digest)
        alias = root / package / f"{package}-{version}.tar.gz"
        if not alias.is_symlink():
            alias.parent.mkdir(parents=True, exist_ok=True)
            alias.symlink_to(os.path.relpath(digest, alias.parent))


def _python(venv: Path, scope: Path) -> Path:
    """A venv with clingo from PyPI (made once) and jitterbench_spack_scope, a module whose
    `spack.config` entry point gives Spack the scope's folder."""
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if not (python.exists() and stamp.exists() and stamp.read_text() == CLINGO):
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", CLINGO],
                       check=True, capture_output=True, text=True, timeout=600)
        stamp.write_text(CLINGO)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "jitterbench_spack_scope.py").write_text(
        '"""The configuration scope of the CI\'s Spack (jitterbench\'s tests/support/vendored_spack.py)."""\n\n\n'
        f"def path():\n    return {str(scope)!r}\n")
    info = site / "jitterbench_spack_scope-1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jitterbench-spack-scope\nVersion: 1\n")
    (info / "entry_points.txt").write_text("[spack.config]\njitterbench = jitterbench_spack_scope:path\n")
    return python


def _scope(work: Path) -> Path:
    """The configuration scope of the CI's Spack, written each time from the paths."""
    scope = work / "config"
    scope.mkdir(parents=True, exist_ok=True)
    q = lambda path: json.dumps(str(path))  # noqa: E731  a path as a YAML (JSON) string
    files = {
        "repos.yaml": f"repos:\n  builtin: {q(BUILTIN)}\n",
        "bootstrap.yaml": "bootstrap:\n  enable: false\n",
        # config:checksum false is what `spack install --no-checksum` sets (cmd/install.py): the
        # mirror's tarballs are made from the vendored trees, not the releases' bytes
        "config.yaml": (f"config:\n  install_tree:\n    root: {q(work / 'install')}\n"
                        f"  build_stage:\n  - {q(work / 'stage')}\n  source_cache: {q(work / 'source-cache')}\n"
                        f"  misc_cache: {q(work / 'cache')}\n  test_stage: {q(work / 'test-stage')}\n"
                        "  checksum: false\n"),
        # solver results kept by the sha256 of the whole problem (solver/asp.py, ConcretizationCache):
        # an unchanged input is not solved again; its folder is misc_cache/concretization
        "concretizer.yaml": "concretizer:\n  concretization_cache:\n    enable: true\n",
        # `::` replaces the defaults' spack-public, which is on the network
        "mirrors.yaml": f"mirrors::\n  sources:\n    url: {q('file://' + str(work / 'mirror'))}\n    binary: false\n",
    }
    for name, text in files.items():
        path = scope / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return scope


def environ(work: Path = WORK) -> dict:
    """The variables the CI's Spack runs with (bin/spack sets them too)."""
    return {"SPACK_PYTHON": str(work / "python" / "bin" / "python"), "SPACK_DISABLE_LOCAL_CONFIG": "1",
            "SPACK_USER_CONFIG_PATH": str(work / "user-config"), "SPACK_USER_CACHE_PATH": str(work / "user-cache"),
            "PYTHONPYCACHEPREFIX": str(work / "pycache")}


def setup(work: Path = WORK) -> Path:
    """The CI's Spack, ready: returns its command, <work>/bin/spack.  Idempotent: what is there is kept."""
    reason = missing()
    if reason:
        raise RuntimeError(reason)
    work.mkdir(parents=True, exist_ok=True)
    scope = _scope(work)
    _python(work / "python", scope)
    _mirror(work / "mirror")
    command = work / "bin" / "spack"
    command.parent.mkdir(exist_ok=True)
    variables = " ".join(f"{k}={shlex.quote(v)}" for k, v in environ(work).items())
    command.write_text("#!/bin/sh\n"
                       "# The CI's Spack (tests/support/vendored_spack.py): the vendored Spack v1.1.0, run in place,\n"
                       "# with this work area's Python (whose entry point names the configuration scope)\n"
                       f"export {variables}\n"
                       f"exec {shlex.quote(str(VENDOR / 'spack' / 'bin' / 'spack'))} \"$@\"\n")
    command.chmod(0o755)
    return command


def copy_checkout(dest: Path) -> Path:
    """A copy of this checkout's working tree (its files git tracks or would, as they are now, their
    times kept: a develop build of an unchanged src/ is not built again), the .deps/packages.yaml
    ci/setup.sh wrote (this machine's MPICH, which spack.yaml includes for local) and links to the
    MPIs it installed in .deps (the copy's ReFrame environments launch with them).  A copy made
    before is replaced."""
    shutil.rmtree(dest, ignore_errors=True)
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # a link to a folder (a worktree's .venv) is no file of the checkout
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name, follow_symlinks=False)
    (dest / ".deps").mkdir(exist_ok=True)
    written = REPO / ".deps" / "packages.yaml"
    if written.exists():
        shutil.copy2(written, dest / ".deps" / "packages.yaml")
    for name in ("mpich", "impi"):  # each link to its folder, never to .deps (which holds the copy)
        if (REPO / ".deps" / name).exists():
            (dest / ".deps" / name).symlink_to((REPO / ".deps" / name).resolve())
    return dest
