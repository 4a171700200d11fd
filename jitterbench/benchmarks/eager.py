"""jb-eager and EagerCheck: the MPI's effective eager limit, probed.

A document alone gives no cases: the check names its variables by the partition's
transports (eager_limit_shm, eager_limit_tcp), which the document does not know."""
from __future__ import annotations

from . import Column, Descriptor, Quantity

DESCRIPTOR = Descriptor(
    check="EagerCheck", benchmark="eager", order=60,
    study="jitterbench", about="the MPI's effective eager limit, probed for each pair of tasks",
    # the check's variables are eager_limit_<fabric>, the probed limit of the pair that crosses it
    quantities=(Quantity("eager_limit", "eager_limit_bytes", "B", "the largest size MPI_Send returned from before the "
                         "receiver posted, per pair", better="higher"),
                Quantity("eager_send", "eager_send_us", "us", "MPI_Send's time at the limit", role="recorded"),
                Quantity("rendezvous_send", "rendezvous_send_us", "us", "MPI_Send's time 8 B above it", role="recorded")),
    result_fields=("pair", "partner", "eager_up_to_max", "delay_us", "probes_size_us"),
    small=("--delay", "100", "--repeats", "1", "--max-size", "1K"),
    option_values={"delay": ["100", "200"], "repeats": ["1", "2"], "max-size": ["8", "1K"]},
    long_options=("delay",),
    cost=lambda v: 10.0 * (2 if v["nodes"] > 1 else 1),  # a probe per pair of tasks
    summary=(Column.text("pair", "pair"), Column.text("eager limit B", "eager_limit_bytes"),
             Column("to --max-size", lambda r: "yes" if r.get("eager_up_to_max") else "no"),
             Column.number("send at the limit us", "eager_send_us"),
             Column.number("send 8 B above us", "rendezvous_send_us")),
)
