"""The checkout a command works on: the clone whose checks, sources and systems it runs, and the
folders it reads and writes there (the run files' folder, the shipped references, the results
store, the builds).  Only this module knows where they are.

One checkout a process, found once:
1. the one use() names: systems/config.py names its own, so a ReFrame run works on the checkout
   of the configuration it is given, whichever checkout's package is installed;
2. else the one the command is run from: the working folder, or the nearest folder above it,
   that holds a checkout;
3. else the one the package was installed from (`pip install -e .`).
A package installed by `pip install .` sits in site-packages, beside no checkout: it works from
inside a checkout, and elsewhere it is refused in one line that says what to do.

Imports neither ReFrame nor NumPy: every command may ask where its files are.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

# what only a jitterbench checkout holds, all of it
MARKS = ("systems/config.py", "src/CMakeLists.txt", "reframe_checks")

_root: Path | None = None


class CheckoutError(ValueError):
    """No checkout to work on: one line saying what to do."""


def is_checkout(folder) -> bool:
    return all((Path(folder) / mark).exists() for mark in MARKS)


def use(folder) -> Path:
    """Work on the checkout at folder from now on (systems/config.py: its own)."""
    global _root
    if not is_checkout(folder):
        raise CheckoutError(f"{folder}: not a jitterbench checkout (it lacks {' or '.join(MARKS)})")
    _root = Path(folder).resolve()
    return _root


def root() -> Path:
    """The checkout's top folder."""
    if _root is None:
        here = Path.cwd()
        for folder in (here, *here.parents, Path(__file__).resolve().parent.parent):
            if is_checkout(folder):
                return use(folder)
        raise CheckoutError(f"{here} is not inside a jitterbench checkout, and this jitterbench was installed "
                            f"from none: run it from a clone's folder (git clone ...; cd ...; "
                            f"bash ci/setup.sh --python-only), or install it with `pip install -e CLONE`")
    return _root


def sources() -> Path:
    """The benchmarks' CMake project."""
    return root() / "src"


def systems() -> Path:
    """The ReFrame configuration and its system modules (sites/, papers/)."""
    return root() / "systems"


def config() -> Path:
    return systems() / "config.py"


def checks() -> Path:
    return root() / "reframe_checks"


def output() -> Path:
    """Where runs write their files: JB_OUTPUT (empty counts as unset: CI variables are often
    declared empty), else output/ of the checkout."""
    # absolute: every path made from it (the configuration's stage, perflogs, store) then says where
    return Path(os.path.abspath(os.environ.get("JB_OUTPUT") or root() / "output"))


def shipped_references() -> Path:
    """The references files read where the machine has none of its own: JB_REFERENCE_DIR's,
    else the checkout's reference_data/."""
    return Path(os.environ.get("JB_REFERENCE_DIR") or root() / "reference_data")


def reference_dirs() -> list[Path]:
    """Where a system's references are looked for, in order: the machine's own (the baseline
    ci/main.sh records where no other file matches), then the shipped ones."""
    return [output() / "references", shipped_references()]


def reference_files(system) -> list[str]:
    """The reference files of system that exist, in the order they are tried."""
    return [str(p) for p in (d / f"{system}.yaml" for d in reference_dirs()) if p.exists()]


def results_store() -> Path:
    """ReFrame's results database: RFM_SQLITE_DB_FILE where a site set it, else the
    configuration's (systems/config.py: the output folder's results.db)."""
    return Path(os.environ.get("RFM_SQLITE_DB_FILE") or output() / "results.db")


def builds() -> Path:
    """The benchmarks built once per MPI by ci/setup.sh: JB_BUILD_ROOT, else build/."""
    return Path(os.environ.get("JB_BUILD_ROOT") or root() / "build")


def deps() -> Path:
    """What ci/setup.sh installs from PyPI (MPICH, Intel MPI) and npm."""
    return root() / ".deps"


def commit() -> str:
    """The checkout's commit (git, where the checkout is a clone), or "unknown": what a reference
    file and a stored run name as the jitterbench that made them."""
    try:
        out = subprocess.run(["git", "-C", str(root()), "rev-parse", "--short=12",
                              "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError, CheckoutError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def describe() -> str:
    """The checkout in one line, for a command's first line."""
    return f"checkout {root()}"
