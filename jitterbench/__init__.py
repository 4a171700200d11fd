"""jitterbench: interconnect benchmarks that report what bulk-synchronous codes feel."""


def __getattr__(name):
    """__version__, read when asked: importing the package loads nothing, so that the command's entry
    point (jitterbench/entry.py) installs its signal handler first (a SIGTERM while importlib.metadata
    loaded was Python's default death)."""
    if name == "__version__":
        from importlib.metadata import version  # noqa: PLC0415
        return version("jitterbench")  # pyproject.toml takes it from the repository's VERSION file
    raise AttributeError(f"module 'jitterbench' has no attribute {name!r}")
