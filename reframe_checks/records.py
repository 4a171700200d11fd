"""The checks of the benchmarks whose record states all their check needs (jitterbench/benchmarks/,
own_check False): one PerCallCheck each, made from the record, so that adding such a
benchmark takes its src/ folder and its record and no check of its own.

The check runs jb-<benchmark> with the words its record sweeps (--<swept> LIST, the record's
`words` parameter) and the message sizes (--size LIST, `msg_sizes`), validates every payload,
and reads each quantity of the record's performance variables from the summary line of each
word and size (max_<word>_<size>, ...).
"""
import reframe.core.builtins as builtins
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.meta import make_test

from jitterbench import benchmarks
from jitterbench.harness.checks import PerCallCheck


def record_options(self):
    self.run_as_recorded(self.words)


def _made(record):
    names = {p.name for p in record.parameters}
    return rfm.simple_test(make_test(record.check, (PerCallCheck,), {
        "descr": f"{record.study}: {record.about}",
        "benchmark": record.benchmark,
        "words": builtins.variable(typ.List[str], value=record.value("words") if "words" in names else [],
                                   loggable=True),
        "msg_sizes": record.value("msg_sizes"),
        **({"calls": record.value("calls")} if "calls" in names else {}),
    }, methods=[builtins.run_after("setup")(record_options)]))


MADE = [_made(record) for record in benchmarks.ALL if record.benchmark and not record.own_check]
