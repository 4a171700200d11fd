"""jb-eager and EagerCheck: the MPI's effective eager limit, probed.

A document alone gives no cases: the check names its variables by the partition's
transports (eager_limit_shm, eager_limit_tcp), which the document does not know."""
from __future__ import annotations

from . import Column, Descriptor

DESCRIPTOR = Descriptor(
    check="EagerCheck", benchmark="eager", order=60,
    cost=lambda v: 10.0 * (2 if v["nodes"] > 1 else 1),  # a probe per pair of tasks
    summary=(Column.text("pair", "pair"), Column.text("eager limit B", "eager_limit_bytes"),
             Column("to --max-size", lambda r: "yes" if r.get("eager_up_to_max") else "no"),
             Column.number("send at the limit us", "eager_send_us"),
             Column.number("send 8 B above us", "rendezvous_send_us")),
)
