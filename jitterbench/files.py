"""Reading input files and writing outputs, with one clear line on failure.

Reading: a number no measurement can be (NaN, an infinity, 1e999, a 400-digit integer) is
refused with the file and the field that hold it, and so is a document nested too deeply to
parse.  Writing: an output appears whole or not at all, even on Ctrl-C, and never replaces
what the tool did not make.
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import math
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import yaml

from . import signals


class OutputError(ValueError):
    """An output that cannot be written where asked; nothing was changed there."""


MAX_INPUT = 1 << 30  # bytes: the largest file a command reads (a run report of a full sweep is tens of MB)


def open_input(path, error: type):
    """The file at path opened for reading in binary, or error("<path>: ...") as one line: a pipe,
    device or folder is refused without waiting on it (opened non-blocking, then checked), and so
    is a file above MAX_INPUT.  For a reader that streams (simulate's samples); read_text reads whole."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_INPUT:
        os.close(fd)
        raise error(f"{path}: not a regular file (a pipe, device or folder): give a file" if not stat.S_ISREG(
            st.st_mode) else f"{path}: {st.st_size / 2**30:.1f} GiB, above the {MAX_INPUT >> 30} GiB a command reads")
    return os.fdopen(fd, "rb")


def read_text(path, error: type) -> str:
    """The file's text, or error("<path>: ...") as one line: a pipe, device or folder is refused
    without waiting on it (opened non-blocking, then checked), and so is a file above MAX_INPUT."""
    path = Path(path)
    with open_input(path, error) as f:
        try:
            data = f.read(MAX_INPUT + 1)
        except OSError as e:
            raise error(f"{path}: cannot read: {e.strerror}") from None
    if len(data) > MAX_INPUT:  # it grew while read
        raise error(f"{path}: above the {MAX_INPUT >> 30} GiB a command reads")
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise error(f"{path}: not a text file") from None


# ---- numbers ---------------------------------------------------------------------------

INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_number(text: str):
    """text as an int or a float, or None where it is no number, or one beyond what a float
    holds: NaN, infinities, 1e999 or an integer of 400 digits.  Such a value breaks every
    mean, median and plot it reaches; a measurement is never one."""
    try:
        value = float(text)  # unlike int(), float() takes any number of digits
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(text) if INTEGER.fullmatch(text.strip()) else value


def is_number(value) -> bool:
    """An int or a float, not a bool (which Python counts as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Refused:
    """Stands, in a parsed document, for a number parse_number refuses, until
    _refuse_unusable_numbers names the field that holds it."""

    def __init__(self, text: str):
        length = len(text.strip().lstrip("+-"))
        self.problem = f"{text.strip()!r} is not a finite number" if length <= 24 else \
            f"a number of {length} characters is out of range"


def _refuse_unusable_numbers(doc, path, error):
    """Raises error naming the file and field of the first _Refused in doc.  Walked without
    recursion (a deep document would exceed Python's stack), and each mapping or list once
    (a YAML alias repeats one, and aliases of aliases would make the walk exponential)."""
    stack, seen = [("", doc)], set()
    while stack:
        where, node = stack.pop()
        if isinstance(node, _Refused):
            raise error(f"{path}: field {where or 'the document'}: {node.problem}")
        if id(node) in seen or not isinstance(node, (dict, list)):
            continue
        seen.add(id(node))
        if isinstance(node, list):
            stack += reversed([(f"{where}[{i}]", v) for i, v in enumerate(node)])
            continue
        for key in node:
            if isinstance(key, _Refused):
                raise error(f"{path}: field {where or 'the document'}: key {key.problem}")
        stack += reversed([(f"{where}.{k}" if where else str(k), v) for k, v in node.items()])


def loads_json(text: str, path, error: type):
    """A JSON document; NaN, infinities and out-of-range numbers refused, naming their field."""
    refused = []

    def number(text):
        value = parse_number(text)
        if value is None:
            refused.append(text)
            return _Refused(text)
        return value

    try:
        doc = json.loads(text, parse_int=number, parse_float=number, parse_constant=number)
    except json.JSONDecodeError as e:
        raise error(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to read") from None
    if refused:
        _refuse_unusable_numbers(doc, path, error)
    return doc


def read_json(path, error: type):
    return loads_json(read_text(path, error), path, error)


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML's safe loader, but .nan, .inf and numbers beyond a float's range become _Refused.  On
    libyaml's parser where PyYAML has it (a reference file read 9x faster: 22 ms against 204 ms for
    local.yaml; the unit tier reads ~100), the same constructors either way."""

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        return value if math.isfinite(value) else _Refused(node.value)

    def construct_yaml_int(self, node):
        try:  # more than 4,300 digits: Python refuses to convert them at all
            value = super().construct_yaml_int(node)
        except ValueError:
            return _Refused(node.value)
        return value if parse_number(str(value)) is not None else _Refused(node.value)


_StrictLoader.add_constructor("tag:yaml.org,2002:float", _StrictLoader.construct_yaml_float)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def loads_yaml(text: str, path, error: type):
    """A YAML document (safe tags only); unusable numbers refused, naming their field."""
    try:
        doc = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or e
        if problem == "exceeded maximum nesting depth":  # libyaml's limit (1,000), as Python's recursion's
            raise error(f"{path}: nested too deeply to read") from None
        mark, context, opened = (getattr(e, name, None) for name in ("problem_mark", "context", "context_mark"))
        where = f" (line {mark.line + 1})" if mark else ""
        # what was left open, where it began: libyaml marks the problem where it noticed it (the end)
        began = f" ({context} from line {opened.line + 1})" if context and opened else ""
        raise error(f"{path}: not YAML{where}: {problem}{began}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to read") from None
    _refuse_unusable_numbers(doc, path, error)
    return doc


# ---- writing ---------------------------------------------------------------------------

def umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


def _temporary(path: Path, shown, make):
    """make(dir=, prefix=) beside path (so that a rename onto path is atomic), as one line on failure."""
    try:
        return make(dir=path.parent, prefix=f".{path.name}.")
    except OSError as e:
        raise OutputError(f"{shown}: cannot write: {e.strerror}") from None


def write_text(path, text: str, own=None, force: bool = False) -> None:
    """Writes text to path whole or not at all: a temporary file beside it, then os.replace.
    On any failure or interruption (Ctrl-C too) the temporary file goes and path is as it
    was.  With own (how the tool's own files of this kind begin: a string, or a compiled
    pattern matched at the start; or a function of the path that tells them), a file there is replaced only if it is one of those, and
    never through a symbolic link: anything else is the user's and is refused, unless force (it
    keeps its permissions).  What is not a regular file (a folder, a pipe, a device) and a file
    or folder the user may not write are refused (writable)."""
    mode = writable(path, own, force)
    real = Path(os.path.realpath(path))  # through a symbolic link, to the file it names
    fd, tmp = None, None
    try:  # the temporary file made inside the block that removes it, its name kept before a signal is
        with signals_held():  # acted on: a signal cannot leave it behind
            fd, tmp = _temporary(real, path, lambda **where: tempfile.mkstemp(suffix=".tmp", **where))
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~umask())  # mkstemp's is 0600
        os.replace(tmp, real)
    except BaseException as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise OutputError(f"{path}: cannot write: {e.strerror}") from None
        raise


def writable(path, own=None, force: bool = False):
    """The mode of what is at path (None: nothing), or OutputError where write_text would refuse
    to write there: so that a long run can be refused before it starts, not after."""
    if not str(path):
        raise OutputError("the output is named '': name a file to write")
    try:
        mode = os.lstat(path).st_mode if own is not None else os.stat(path).st_mode
    except FileNotFoundError:
        _check_folder_writable(Path(os.path.realpath(path)).parent, path)
        return None
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {e.strerror}") from None
    if own is not None and not force:
        if stat.S_ISLNK(mode):
            raise OutputError(f"{path}: is a symbolic link; jitterbench writes no file through one "
                              f"(name the file itself, or --force)")
        if stat.S_ISREG(mode) and not _opens_with(path, own):
            raise OutputError(f"{path}: exists and is not a file jitterbench wrote; name another, or --force "
                              f"to replace it")
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise OutputError(f"{path}: is a folder; name a file to write")
    if not stat.S_ISREG(mode):  # a pipe would block until read, a device cannot be written whole
        raise OutputError(f"{path}: not a regular file (a pipe, socket or device); name a file to write")
    if not os.access(path, os.W_OK):
        raise OutputError(f"{path}: is read-only; not replaced")
    _check_folder_writable(Path(os.path.realpath(path)).parent, path)
    return mode


def _check_folder_writable(folder: Path, shown):
    """OutputError where folder exists and the user may not make a file in it (the temporary file
    every write begins with); a folder still to be made is the caller's to check."""
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{shown}: its folder {folder} is read-only; nothing written")


def within(folder, name) -> Path:
    """folder/name, once sure it stays in folder: name is a text of an input (a system's name in a
    run report), and '../x', '/x' or a symbolic link out would write elsewhere."""
    base = Path(os.path.realpath(folder))
    path = Path(os.path.realpath(base / name))
    if path.parent != base:
        raise OutputError(f"{folder}: the file name {str(name)[:60]!r} would write outside it; nothing written")
    return path


def _opens_with(path, own) -> bool:
    """Whether the file at path begins as the tool's files of this kind do (own: a string, or a
    compiled pattern matched at the start of its first 4 KiB); the same text further in is no sign.
    own may instead be a function of the path that decides from the whole file (a reference file:
    references.written_by_jitterbench)."""
    if callable(own):
        return bool(own(path))
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode(errors="replace")
    except OSError:
        return False
    return bool(own.match(head)) if isinstance(own, re.Pattern) else head.startswith(own)


# A folder the tool writes whole (a report) holds this file: the tool's name and version, then a
# line for every entry it wrote there, "sha256:<hex> <path>" for a file and "folder <path>" for a
# folder.  Only such a folder, holding nothing else, each file's bytes still those it wrote, is
# replaced: the marker is text anyone can write, so what it names proves nothing by itself (a
# forged one naming thesis.tex removed it, issue 61); a checksum that matches proves the bytes are
# the tool's own, and a marker of an earlier version (names alone) proves nothing, so its folder
# is kept.
MARKER = ".jitterbench-report"
_CHUNK = 1 << 20


def _raise(error):
    raise error


def checksum(path) -> str:
    """sha256:<hex> of the file at path, read without following a symbolic link and in chunks."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def _marker_text(folder: Path, tool: str) -> str:
    """The marker of folder, every entry the tool made in it with a file's checksum."""
    lines = [tool]
    for root, dirs, names in os.walk(folder):
        for name in sorted(dirs + names):
            path = os.path.join(root, name)
            entry = os.path.relpath(path, folder)
            if "\n" in entry or os.path.islink(path):  # the tool writes neither; the marker could not hold it
                raise OutputError(f"{folder}: the report holds {entry!r}, which a marker cannot name")
            lines.append(f"folder {entry}" if os.path.isdir(path) else f"{checksum(path)} {entry}")
    return "\n".join(lines) + "\n"


def _replaceable(folder: Path):
    """None if folder is one the tool wrote whole earlier and holds nothing else, each file's bytes
    the ones it wrote (their checksums in the marker), else why not."""
    marker = folder / MARKER
    if marker.is_symlink() or not marker.is_file():
        return f"is not a jitterbench report (it has no {MARKER})"
    try:
        tool, *written = read_text(marker, OutputError).splitlines() or [""]
        if not tool.startswith("jitterbench "):
            return f"has a {MARKER} that jitterbench did not write"
        folders, sums = set(), {}
        for line in written:
            kind, _, entry = line.partition(" ")
            if kind == "folder":
                folders.add(entry)
            elif kind.startswith("sha256:"):
                sums[entry] = kind
            else:  # an earlier version's (names alone), or not the tool's: it proves nothing
                return f"has a {MARKER} without the checksum of {line[:60]!r}, so nothing proves it jitterbench's"
        for root, dirs, names in os.walk(folder, onerror=_raise):  # symbolic links not followed
            for name in dirs + names:
                path = os.path.join(root, name)
                entry = os.path.relpath(path, folder)
                if entry == MARKER:
                    continue
                if os.path.isdir(path) and not os.path.islink(path):
                    if entry not in folders:
                        return f"holds {entry}, which jitterbench did not write"
                elif entry not in sums:
                    return f"holds {entry}, which jitterbench did not write"
                elif checksum(path) != sums[entry]:
                    return f"holds {entry}, changed since jitterbench wrote it"
    except OutputError as e:
        return f"cannot be checked ({e})"
    except (OSError, UnicodeDecodeError) as e:
        return f"cannot be checked ({getattr(e, 'strerror', None) or e})"
    return None


def check_folder_output(path) -> Path:
    """The real folder path names (symbolic links followed), once sure that writing a folder
    there destroys nothing the tool did not make: it is new, or one the tool wrote earlier and the
    user may still write (a report made read-only is kept as it is)."""
    if not str(path):
        raise OutputError("the output is named '': name a folder to write")
    real = Path(os.path.realpath(path))
    if real.is_dir():
        why = _replaceable(real)
        if why:
            raise OutputError(f"{path}: {why}; not replaced: choose another -o, or move it away yourself")
        if not os.access(real, os.W_OK | os.X_OK):
            raise OutputError(f"{path}: is read-only; not replaced")
    elif os.path.lexists(real):
        raise OutputError(f"{path}: exists and is not a folder; not replaced")
    _check_folder_writable(real.parent, path)
    return real


def exchange(a, b) -> bool:
    """Swaps the paths a and b in one step (Linux's renameat2 with RENAME_EXCHANGE): at every
    instant each name holds one of the two.  False where the C library, kernel or file system
    cannot, having changed nothing."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2  # <fcntl.h>, <linux/fs.h>
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def write_folder(path, fill, tool: str) -> None:
    """Makes the folder path with fill(folder) and marks it, with every entry in it, as the
    tool's (MARKER).  Built beside path under a temporary name, then swapped in: exchanged
    with the old folder in one step where the system can (exchange), else the old folder
    renamed aside and the new one renamed in; then the old one removed.  So at every instant
    path holds the old report or the new one, and an error, Ctrl-C, SIGTERM or SIGHUP leaves
    one of them and no temporary folder.  Only a folder the tool wrote earlier is replaced
    (check_folder_output).  The folder gets the user's umask (0755 with 022)."""
    real = check_folder_output(path)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{path}: cannot make the folder it goes in: {e.strerror}") from None
    new = aside = None
    try:  # the temporary folder made inside the block that removes it, its name kept before a signal is
        with signals_held():  # acted on: a signal cannot leave it behind
            new = Path(_temporary(real, path, tempfile.mkdtemp))
        new.chmod(0o777 & ~umask())  # mkdtemp's is 0700
        fill(new)
        # every entry of the new folder is the tool's (it made the folder): an empty folder too,
        # so that the same command may replace it again; each file with its checksum
        (new / MARKER).write_text(_marker_text(new, tool))
        if real.exists():
            check_folder_output(path)  # again: it may have changed while the new one was made
            if exchange(new, real):  # one step: path holds the old report, then the new one
                aside, new = new, None
            else:  # no exchange here: the old one aside, the new one in (put back if stopped between)
                with signals_held():  # its name kept before a signal is acted on
                    aside = Path(_temporary(real, path, tempfile.mkdtemp))
                os.rename(real, aside)  # onto the empty folder mkdtemp made: atomic, and no name clash
        if new is not None:
            os.rename(new, real)
    except BaseException as e:
        if new is not None:
            shutil.rmtree(new, ignore_errors=True)
        if isinstance(e, OSError):
            raise OutputError(f"{path}: cannot write: {e.strerror}") from None
        raise
    finally:
        if aside is not None:
            with signals_held():  # a signal now waits until the temporary folder is gone
                _remove_the_old(aside, real, path)


def _remove_the_old(aside: Path, real: Path, shown):
    """The old report, moved aside by the swap: put back where the new one never came, else
    removed, but only if it is still a report the tool wrote and nothing else (checked again:
    another process may have put something at path between the check and the swap).  Anything
    else stays under its temporary name, and the error names it."""
    if not os.path.lexists(real) and (aside / MARKER).exists():
        os.rename(aside, real)  # stopped between the two renames: the old one back
    elif not any(aside.iterdir()):
        aside.rmdir()  # the empty folder the fallback made to rename the old one onto
    elif _replaceable(aside) is None:
        shutil.rmtree(aside, ignore_errors=True)
    else:
        raise OutputError(f"{shown}: what was there changed while the report was written and is not "
                          f"the tool's to remove: kept as {aside}")


signals_held = signals.held  # the one signal path: jitterbench/signals.py
