"""Parsing of perftest's output (linux-rdma/perftest: ib_send_lat, ib_write_bw, ib_read_lat and
the rest): the verbs' own latency and bandwidth, which an MPI's numbers sit on.

A client prints its test's name, a block of 'key : value' settings (device, link type, MTU,
...), then one table: a header line starting '#bytes' and a row per message size.  Latency
tables hold t_min .. t_max, t_typical (the median: perftest's README) and the 99th and 99.9th
percentiles of half the round trip; bandwidth tables hold the peak and average bandwidth,
in MiB/s (older releases print 'MB/sec' for the same unit) or, with --report_gbits, Gb/s.
"""
from __future__ import annotations

import re

# perftest_parameters.c: bw = bytes / time / format_factor, the factor 0x100000 for MiB/s (and
# 'MB/sec' before 5.x) and 125000000 for Gb/s.  bandwidth_mb_s turns either into OSU's MB/s
# (10^6 bytes per second), so the two can stand side by side
TO_MB_S = {"mib/sec": 1.048576, "mb/sec": 1.048576, "gb/sec": 125.0}

# a column title: '#bytes', or a name with its unit in brackets ('99.9% percentile[usec]')
_TITLE = re.compile(r"#\w+|[^\s#][^\[\]#]*?\[[^\]]*\]")
_UNIT = {"usec": "us", "cycles": "cycles", "mpps": "mpps", "mib/sec": "mib_s", "mb/sec": "mb_s",
         "gb/sec": "gb_s"}
_NAME = {"99%_percentile": "p99", "99.9%_percentile": "p999", "bw_average": "bw_average",
         "bw_peak": "bw_peak", "msgrate": "msg_rate"}
_SETTING = re.compile(r"(\S[^:\t]*?)\s*:\s*(\S+)")


class PerftestParseError(ValueError):
    pass


def column_key(title: str) -> str:
    """'#bytes' -> 'bytes', 't_typical[usec]' -> 't_typical_us', '99.9% percentile[usec]' ->
    'p999_us', 'BW average[MiB/sec]' -> 'bw_average_mib_s', 'MsgRate[Mpps]' -> 'msg_rate_mpps'."""
    if title.startswith("#"):
        return title[1:]
    name, unit = re.fullmatch(r"(.*?)\[(.*)\]", title).groups()
    name = re.sub(r"\s+", "_", name.strip()).lower()
    unit = unit.lower()
    return f"{_NAME.get(name, name)}_{_UNIT.get(unit, re.sub(r'[^a-z0-9]+', '_', unit))}"


def parse(text: str) -> dict:
    """{'test': 'Send Latency Test', 'settings': {'Device': 'mlx5_0', 'Link type': 'IB', ...},
    'units': {column: the title's unit}, 'rows': [{'bytes': 2, 'iterations': 1000, ...}, ...]}.

    Lines that are neither settings, header nor rows (warnings such as 'Conflicting CPU
    frequency values detected', the addresses of the queue pairs) are passed over."""
    test, settings, titles, units, rows = None, {}, None, {}, []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#bytes"):
            if rows:
                raise PerftestParseError("a second table header after rows: one run per output")
            titles = _TITLE.findall(stripped)
            keys = [column_key(t) for t in titles]
            units = {k: re.search(r"\[(.*)\]", t)[1] for k, t in zip(keys, titles) if "[" in t}
            continue
        if titles is None:
            if test is None and re.fullmatch(r"[\w ]+ (Latency|BW|Bidirectional BW) Test", stripped):
                test = stripped
            elif test is not None and ":" in stripped and not stripped.startswith(("local", "remote")):
                settings.update((k.strip(), v) for k, v in _SETTING.findall(line))
            continue
        cells = stripped.split()
        if not cells or not cells[0].isdigit():
            continue
        if len(cells) != len(keys):
            raise PerftestParseError(f"row '{stripped}' has {len(cells)} cells, the header {len(keys)}")
        try:
            rows.append({k: (int(c) if k in ("bytes", "iterations") else float(c)) for k, c in zip(keys, cells)})
        except ValueError:
            raise PerftestParseError(f"row '{stripped}' holds a cell that is not a number") from None
    if titles is None:
        raise PerftestParseError("no '#bytes' table header: not perftest output, or the run failed")
    if not rows:
        raise PerftestParseError("a table header but no rows: the run stopped before its first size")
    return {"test": test, "settings": settings, "units": units, "rows": rows}


def row_at(result: dict, size: int) -> dict:
    for row in result["rows"]:
        if row["bytes"] == size:
            return row
    raise PerftestParseError(f"no row for {size} bytes (sizes: {', '.join(str(r['bytes']) for r in result['rows'])})")


def value_at(text: str, column: str, size: int) -> float:
    """One column at one message size: 't_typical_us', 'p99_us', ..., or 'bandwidth_mb_s',
    the average bandwidth in MB/s whatever unit the run reported."""
    result = parse(text)
    row = row_at(result, size)
    if column == "bandwidth_mb_s":
        average = [k for k in row if k.startswith("bw_average_")]
        if not average:
            raise PerftestParseError("no bandwidth column: a latency test's output")
        unit = result["units"][average[0]].lower()
        if unit not in TO_MB_S:
            raise PerftestParseError(f"bandwidth in an unknown unit: {unit}")
        return row[average[0]] * TO_MB_S[unit]
    if column not in row:
        raise PerftestParseError(f"no column {column} (columns: {', '.join(row)})")
    return row[column]


def describe(text: str) -> str:
    """What decides the numbers, from the output's own settings: 'mlx5_0 IB RC MTU 4096[B]'."""
    s = parse(text)["settings"]
    return " ".join(v for v in (s.get("Device"), s.get("Link type"), s.get("Connection type"),
                                f"MTU {s['Mtu']}" if "Mtu" in s else None) if v)
