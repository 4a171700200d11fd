"""Reading input files with one clear line on failure.

A number no measurement can be (NaN, an infinity, 1e999, a 400-digit integer) is refused
with the file and the field that hold it, and so is a document nested too deeply to parse.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import yaml


def read_text(path, error: type) -> str:
    """The file's text, or error("<path>: cannot read: ...") as one line."""
    path = Path(path)
    try:
        return path.read_text()
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
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


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, but .nan, .inf and numbers beyond a float's range become _Refused."""

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
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise error(f"{path}: not YAML{where}: {getattr(e, 'problem', None) or e}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to read") from None
    _refuse_unusable_numbers(doc, path, error)
    return doc


def read_yaml(path, error: type):
    return loads_yaml(read_text(path, error), path, error)
