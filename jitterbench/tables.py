"""Text tables for the terminal: the one formatter of every command that prints a table."""
from __future__ import annotations


def format_table(header, rows) -> str:
    """header and rows (sequences of strings) as left-aligned columns two blanks apart."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)
