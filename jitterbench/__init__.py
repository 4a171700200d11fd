"""jitterbench: interconnect benchmarks that report what bulk-synchronous codes feel."""

from importlib.metadata import version

__version__ = version("jitterbench")  # pyproject.toml takes it from the repository's VERSION file
