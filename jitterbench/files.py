"""Reading input files with one clear line on failure."""
from __future__ import annotations

from pathlib import Path


def read_text(path, error: type) -> str:
    """The file's text, or error("<path>: cannot read: ...") as one line."""
    path = Path(path)
    try:
        return path.read_text()
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not a text file") from None
