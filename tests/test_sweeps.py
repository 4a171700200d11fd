"""jitterbench/sweeps.py: a swept variable's quantity and values, a run split into the cases it
would have been, and the scales a sweep takes."""
from __future__ import annotations

import pytest



@pytest.mark.parametrize("check,variable,quantity,swept", [
    ("HaloCheck", "max_isend-recv_4096", "max", {"pattern": "isend-recv", "msg_size": 4096}),
    ("PingPongCheck", "cycle_send_65536_n8", "cycle", {"mode": "send", "msg_size": 65536, "messages": 8}),
    ("TorusCheck", "max_work_after_isend_16384", "max_work_after", {"pattern": "isend", "msg_size": 16384}),
    ("ContentionCheck", "latency_p50_8_d2", "latency_p50", {"msg_size": 8, "distance": 2}),
    ("EagerCheck", "eager_limit_shm", "eager_limit_shm", {}),
    ("OsuCheck", "latency_8", "latency", {"msg_size": 8}),
    # the node's figures sweep nothing: no pattern 'us' of a quantity 'node_probe'
    ("HaloCheck", "node_probe_us", "node_probe_us", {}),
    ("PingPongCheck", "node_pair_ns", "node_pair_ns", {}),
])
@pytest.mark.unit
def test_a_swept_variable_names_its_quantity_and_swept_values(check, variable, quantity, swept):
    from jitterbench import sweeps
    assert sweeps.unfold(check, variable) == (quantity, swept)
    word = {k: v for k, v in swept.items() if k == sweeps.WORD.get(check)}
    assert sweeps.name(quantity, *word.values(), **{k: v for k, v in swept.items() if k not in word}) == variable


@pytest.mark.unit
def test_split_gives_the_cases_a_run_would_have_been_with_every_swept_value_a_parameter():
    from jitterbench import sweeps
    split = sweeps.split("HaloCheck", {"nodes": 2}, {"max_sendrecv_4096": 1.0, "avg_sendrecv_4096": 0.5,
                                                     "max_sendrecv_40960": 3.0})
    assert split == [({"nodes": 2, "pattern": "sendrecv", "msg_size": 4096}, {"max": 1.0, "avg": 0.5}),
                     ({"nodes": 2, "pattern": "sendrecv", "msg_size": 40960}, {"max": 3.0})]


@pytest.mark.unit
def test_unswept_cases_keep_their_documents_once_and_a_case_without_values_whole():
    from jitterbench import runs, sweeps
    doc = {"benchmark": "halo"}
    swept = runs.Case("local", "local", "default", "openmpi", "HaloCheck", {"nodes": 1},
                      {"max_sendrecv_4096": 1.0, "max_sendrecv_40960": 2.0}, documents=[doc])
    failed = runs.Case("local", "local", "default", "openmpi", "HaloCheck", {"nodes": 2}, {}, result="fail")
    cases = sweeps.unswept([swept, failed])
    assert [(c.params, c.perf, c.documents) for c in cases] == [
        ({"nodes": 1, "pattern": "sendrecv", "msg_size": 4096}, {"max": 1.0}, [doc]),
        ({"nodes": 1, "pattern": "sendrecv", "msg_size": 40960}, {"max": 2.0}, []),
        ({"nodes": 2}, {}, [])]
    assert cases[2].result == "fail"


@pytest.mark.unit
def test_scales_are_powers_of_two_and_the_partition_s_own_size():
    from jitterbench.harness.configuration import per_node_scale, scale
    assert scale(1) == [1] and scale(3) == [1, 2, 3] and scale(128) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert scale(120) == [1, 2, 4, 8, 16, 32, 64, 120]
    assert per_node_scale(1) == [1] and per_node_scale(2) == [1, 2] and per_node_scale(32) == [1, 2, 16, 32]
    with pytest.raises(ValueError):
        scale(0)
