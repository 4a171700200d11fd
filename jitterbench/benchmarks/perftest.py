"""PerftestCheck: perftest's verbs latency and bandwidth (ib_send_lat, ib_read_lat, ib_write_bw),
the network's own numbers beneath the MPIs'.  Not a jitterbench benchmark; the figure `osu`
draws it beside OSU and jb-pingpong."""
from __future__ import annotations

from . import Descriptor

CHECK = "PerftestCheck"

# perftest -a runs every size from 2 bytes to 8 MiB: seconds on a verbs network
DESCRIPTOR = Descriptor(check=CHECK, benchmark=None, order=91, cost=lambda v: 20.0, features=())  # any partition
