"""jitterbench: interconnect benchmarks that report what bulk-synchronous codes feel."""

__version__ = "0.1.0"
