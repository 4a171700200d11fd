"""The `jitterbench` command's entry point: Ctrl-C while the command's modules are still loading
(NumPy, ReFrame's support; most of a second) ends it with one line, as it does later (cli.main)."""
import sys


def main() -> int:
    try:
        from .cli import main as command  # noqa: PLC0415
    except KeyboardInterrupt:
        print("jitterbench: interrupted", file=sys.stderr)
        return 130
    return command()
