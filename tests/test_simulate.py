"""The all-to-all and halo simulators of jitterbench.simulate, on cases worked out by hand."""
from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

from jitterbench import simulate as sim
from jitterbench.simulate import alltoall, resampling
from jitterbench.simulate import Interrupts, SimulationInputError

pytestmark = pytest.mark.unit


def rng(seed=1):
    return np.random.default_rng(seed)


def skewed_sample(n=4000):
    """Right-skewed like the paper's SP2 exchanges: a gamma shape set to mean 173 us, sd 58 us."""
    g = rng(7).gamma(4.0, 1.0, n)
    return 173.0 + 58.0 * (g - g.mean()) / g.std()


def fixed_times(table):
    """An exchange-time function for alltoall._play from {round: {(a, b): time}}."""
    return lambda r, a, b, start: np.array([[table[r][(x, y)]] for x, y in zip(a, b)], dtype=float)


# --- schedule -----------------------------------------------------------------------------------

@pytest.mark.parametrize("P", range(2, 13))
def test_every_pair_meets_exactly_once_and_nobody_twice_per_round(P):
    s = sim.schedule(P)
    assert s.shape == (P - 1 if P % 2 == 0 else P, P)
    met = []
    for row in s:
        busy = np.flatnonzero(row >= 0)
        assert (row[row[busy]] == busy).all()  # partners agree, so each processor is in one pair
        assert (row[busy] != busy).all()
        met += [tuple(sorted((p, int(row[p])))) for p in busy if p < row[p]]
    assert sorted(met) == list(combinations(range(P), 2))


def test_schedule_for_six_is_the_papers_table():
    rounds = [[(0, 5), (1, 4), (2, 3)], [(1, 5), (2, 0), (3, 4)], [(2, 5), (3, 1), (4, 0)],
              [(3, 5), (4, 2), (0, 1)], [(4, 5), (0, 3), (1, 2)]]
    expected = np.full((5, 6), -1)
    for r, pairs in enumerate(rounds):
        for a, b in pairs:
            expected[r, a], expected[r, b] = b, a
    assert (sim.schedule(6) == expected).all()


@pytest.mark.parametrize("P", [3, 5, 7, 9, 11])
def test_odd_schedule_has_processor_i_idle_in_round_i_only(P):
    assert ((sim.schedule(P) == -1) == np.eye(P, dtype=bool)).all()


# --- the dependency logic, by hand --------------------------------------------------------------

def test_four_processors_by_hand():
    # Rounds: (0-3, 1-2), (0-2, 1-3), (0-1, 2-3).
    # r0: 0-3 takes 5, 1-2 takes 1          -> free 0:5 1:1 2:1 3:5
    # r1: 0-2 starts 5 (2 waits 4), takes 2 -> 7; 1-3 starts 5 (1 waits 4), takes 1 -> 6
    # r2: 0-1 starts 7 (1 waits 1), takes 3 -> 10; 2-3 starts 7 (3 waits 1), takes 1 -> 8
    times = {0: {(0, 3): 5, (1, 2): 1}, 1: {(0, 2): 2, (1, 3): 1}, 2: {(0, 1): 3, (2, 3): 1}}
    finish, idle = alltoall._play(sim.schedule(4), 1, fixed_times(times))
    assert finish[:, 0].tolist() == [10, 10, 8, 8]
    assert idle[:, 0].tolist() == [0, 5, 4, 1]


def test_six_processors_one_slow_exchange_delays_everyone_within_two_rounds():
    # r0 0-5 takes 10, every other exchange 1.  r0 -> free 0:10 5:10, others 1.
    # r1 (1-5, 2-0, 3-4): 1 and 2 wait 9, end 11; 3-4 end 2.
    # r2 (2-5, 3-1, 4-0): 3 and 4 wait 9 for 1 and 0, all end 12. r3, r4: all end 14.
    times = {r: {tuple(sorted((p, int(q)))): 1 for p, q in enumerate(row)} for r, row in enumerate(sim.schedule(6))}
    times[0][(0, 5)] = 10
    finish, idle = alltoall._play(sim.schedule(6), 1, fixed_times(times))
    assert finish[:, 0].tolist() == [14] * 6
    assert idle[:, 0].tolist() == [0, 9, 9, 9, 9, 0]


def test_three_processors_by_hand():
    # Rounds: (1-2, 0 out), (0-2, 1 out), (0-1, 2 out).
    # r0: 1-2 takes 4 -> 4. r1: 0-2 starts 4 (0 waits 4), takes 1 -> 5. r2: 0-1 starts 5 (1 waits 1), 1 -> 6.
    times = {0: {(1, 2): 4}, 1: {(0, 2): 1}, 2: {(0, 1): 1}}
    finish, idle = alltoall._play(sim.schedule(3), 1, fixed_times(times))
    assert finish[:, 0].tolist() == [6, 6, 5]
    assert idle[:, 0].tolist() == [4, 1, 0]


@pytest.mark.parametrize("P", [2, 4, 6, 16])
def test_constant_times_even_no_idle_and_rounds_times_t(P):
    out = sim.simulate_alltoall([2.5], P, 3, rng())
    assert (out["total_us"] == (P - 1) * 2.5).all()
    assert (out["idle_us"] == 0).all()


@pytest.mark.parametrize("P", [3, 5, 9])
def test_constant_times_odd_the_round_sat_out_is_one_wait(P):
    # Processor i sits out round i, so it waits t for its round-(i+1) partner; P-1 sits out the last.
    out = sim.simulate_alltoall([2.0], P, 2, rng())
    assert (out["total_us"] == P * 2.0).all()
    assert (out["idle_us"] == [2.0] * (P - 1) + [0.0]).all()
    assert (out["finish_us"][:, -1] == (P - 1) * 2.0).all()


def test_shapes_and_consistency_across_chunks():
    trials = resampling.CHUNK_ELEMENTS // 64 * 2 + 5  # three chunks of trials
    out = sim.simulate_alltoall(skewed_sample(), 64, trials, rng(3))
    assert out["total_us"].shape == (trials,) and out["idle_us"].shape == out["finish_us"].shape == (trials, 64)
    assert (out["total_us"] == out["finish_us"].max(axis=1)).all()
    assert (out["finish_us"] >= out["idle_us"]).all()


# --- resampling and seeds -----------------------------------------------------------------------

def test_same_seed_same_result_different_seed_different_result():
    s = skewed_sample()
    a, b, c = (sim.simulate_alltoall(s, 6, 500, rng(seed)) for seed in (5, 5, 6))
    for key in ("total_us", "idle_us", "finish_us"):
        assert (a[key] == b[key]).all()
    assert not (a["total_us"] == c["total_us"]).all()
    h1, h2, h3 = (sim.halo_prediction(s, [4, 64], rng(seed), 500) for seed in (5, 5, 6))
    assert h1 == h2 and h1 != h3


def test_table_1_throughput_falls_and_idle_grows_with_p():
    s = skewed_sample()
    assert s.mean() == pytest.approx(173) and s.std() == pytest.approx(58) and s.min() > 0
    throughput, idle = [], []
    for P in (2, 4, 8, 16, 32):
        out = sim.simulate_alltoall(s, P, 2000, rng(P))
        throughput.append(sim.throughput_mb_s(out["total_us"], P, 1024).mean())
        idle.append(out["idle_us"].mean())
    assert all(x > y for x, y in zip(throughput, throughput[1:])), throughput
    assert idle[0] == 0 and all(x < y for x, y in zip(idle, idle[1:])), idle


def test_throughput_definition():
    # 2 (P-1) messages of 1000 B in 100 us: 2*3*1000/100 = 60 B/us = 60 MB/s
    assert sim.throughput_mb_s(np.array([100.0, 200.0]), 4, 1000).tolist() == [60.0, 30.0]


# --- interrupts ---------------------------------------------------------------------------------

def test_interrupts_with_zero_cost_leave_the_result_unchanged():
    s = skewed_sample()
    plain = sim.simulate_alltoall(s, 7, 300, rng(11))
    quiet = sim.simulate_alltoall(s, 7, 300, rng(11), Interrupts(period_us=100.0, tick_us=0.0, rare_rate_per_us=0.0,
                                                               rare_us=5000.0))
    for key in plain:
        assert (plain[key] == quiet[key]).all()


def test_ticks_are_counted_on_both_partners():
    # P=2, one exchange of 10 us; ticks every 4 us at a random phase: each partner gets 2 or 3
    # ticks in [0, 10), so the exchange costs 10 + 1 * (4..6) us.
    out = sim.simulate_alltoall([10.0], 2, 2000, rng(), Interrupts(period_us=4.0, tick_us=1.0))
    extra = np.unique(out["total_us"] - 10.0)
    assert set(extra.tolist()) == {4.0, 5.0, 6.0}
    # E[ticks per partner in 10 us] = 10/4, so mean extra = 2 * 2.5 * 1
    assert (out["total_us"] - 10).mean() == pytest.approx(5, rel=0.03)


def test_rare_events_make_the_all_to_all_slower():
    s = skewed_sample()
    plain = sim.simulate_alltoall(s, 16, 500, rng(2))["total_us"].mean()
    noisy = sim.simulate_alltoall(s, 16, 500, rng(2), Interrupts(period_us=1e4, rare_rate_per_us=1e-4,
                                                                  rare_us=2000.0))["total_us"].mean()
    assert noisy > plain + 1000


def test_interrupts_reject_nonsense():
    with pytest.raises(ValueError, match="period_us"):
        Interrupts(period_us=0)
    with pytest.raises(ValueError, match="rare_us"):
        Interrupts(period_us=1, rare_us=-1)
    for impossible in (dict(tick_us=1.0), dict(rare_rate_per_us=2.0), dict(rare_rate_per_us=0.5, rare_us=2.0)):
        with pytest.raises(ValueError):  # interrupts that leave a processor no time: refused
            Interrupts(period_us=1, **impossible)


# --- expected maximum and the halo prediction ---------------------------------------------------

def test_switch_jitter_one_exchange_in_200_at_double_time():
    sample = [1.0] * 199 + [2.0]
    assert sim.expected_max(sample, 1) == pytest.approx(1.005, abs=1e-12)
    assert sim.expected_max(sample, 1000) > 1.99  # 2 - 0.995**1000 = 1.9933
    assert sim.expected_max(sample, 1000) == pytest.approx(2 - 0.995 ** 1000, abs=1e-12)
    assert sim.expected_max([1.0, 2.0], 1000, probs=[199, 1]) == pytest.approx(2 - 0.995 ** 1000, abs=1e-12)
    pred = sim.halo_prediction(sample, [1, 1000], rng(), 2000)
    assert pred[1]["max_mean"] == pytest.approx(1.005, abs=0.01)
    assert pred[1000]["max_mean"] > 1.98 and pred[1000]["ratio"] > 1.9


def test_expected_max_of_a_small_sample_by_hand():
    # Two draws from {1, 2, 4}: max is 1 w.p. 1/9, 2 w.p. 3/9, 4 w.p. 5/9 -> (1 + 6 + 20) / 9 = 3
    assert sim.expected_max([4.0, 1.0, 2.0], 2) == pytest.approx(3.0, abs=1e-12)


@pytest.mark.parametrize("N", [1, 8, 100])
def test_simulated_halo_max_matches_the_exact_expected_max(N):
    # A sample much larger than the number of calls, so max_se (which also covers the sample's own
    # uncertainty) is close to the simulation's noise and 3 of them is a tight bound.
    sample = skewed_sample(20000)
    pred = sim.halo_prediction(sample, [N], rng(N), 2000)[N]
    assert abs(pred["max_mean"] - sim.expected_max(sample, N)) < 3 * pred["max_se"]
    assert pred["avg_mean"] == pytest.approx(sample.mean(), rel=0.01)
    assert pred["ratio"] == pytest.approx(pred["max_mean"] / pred["avg_mean"])


def test_without_barriers_the_delays_average_out():
    sample = [1.0] * 199 + [2.0]
    coupled = sim.halo_prediction(sample, [1000], rng(), 1000)[1000]
    loose = sim.halo_prediction(sample, [1000], rng(), 1000, barrier_coupled=False)[1000]
    assert coupled["ratio"] > 1.9 and loose["ratio"] < 1.02


# --- input files --------------------------------------------------------------------------------

def test_text_and_json_samples_load(tmp_path):
    text = tmp_path / "x.txt"
    text.write_text("# exchange times, us\n170.5\n\n  181\n# done\n0\n")
    assert sim.load_samples(text).tolist() == [170.5, 181.0, 0.0]
    doc = tmp_path / "a.json"
    doc.write_text(json.dumps({"benchmark": "alltoall", "results": [{"bytes": 1024, "samples_us": [1.5, 2]}]}))
    assert sim.load_samples(doc).tolist() == [1.5, 2.0]
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"results": [{"samples_us": [1]}, {"max_us": 3}, {"samples_us": [5, 6]}]}))
    assert sim.load_samples(two, entry=2).tolist() == [5.0, 6.0]


@pytest.mark.parametrize("name,content,message", [
    ("missing.txt", None, "cannot read"),
    ("words.txt", "1.0\n2.0\nfast\n", "line 3: not a number"),
    ("empty.txt", "# nothing measured\n\n", "no samples"),
    ("negative.txt", "1.0\n-2.0\n", "line 2"),
    ("nan.txt", "nan\n", "line 1"),
    ("inf.txt", "1\ninf\n", "line 2"),
    ("broken.json", '{"results": [', "not JSON"),
    ("nolist.json", '{"benchmark": "alltoall"}', "no 'results' list"),
    ("nosamples.json", '{"results": [{"max_us": 3}]}', "no results entry holds 'samples_us'"),
    ("emptysamples.json", '{"results": [{"samples_us": []}]}', "no samples"),
    ("strings.json", '{"results": [{"samples_us": [1, "2"]}]}', "not a number"),
    ("negjson.json", '{"results": [{"samples_us": [1, -3]}]}', "sample 1 is -3.0"),
    ("two.json", '{"results": [{"samples_us": [1]}, {"samples_us": [2]}]}', "choose one"),
])
def test_bad_input_is_one_line_naming_the_file(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(SimulationInputError) as e:
        sim.load_samples(path)
    text = str(e.value)
    assert str(path) in text and message in text and "\n" not in text


def test_bad_samples_passed_directly_are_refused():
    with pytest.raises(SimulationInputError, match="no samples"):
        sim.simulate_alltoall([], 4, 10, rng())
    with pytest.raises(SimulationInputError, match="not a finite time"):
        sim.halo_prediction([1.0, np.nan], [4], rng(), 10)


# ---- interrupts replayed from a trace --------------------------------------------------------

def test_trace_window_costs_are_exact():
    trace = sim.TraceInterrupts([10.0, 20.0, 35.0], [1.0, 2.0, 4.0], length_us=40.0)
    cost = lambda s, d: float(trace._cost_before(np.array(s + d)) - trace._cost_before(np.array(s)))  # noqa: E731
    assert cost(0, 10) == 0.0        # [0, 10): the event at 10 is not yet inside
    assert cost(0, 10.5) == 1.0
    assert cost(15, 25) == 6.0       # 20 and 35
    assert cost(30, 25) == 4.0 + 1.0  # 35, then 10 of the next lap (= 50)
    assert cost(0, 80) == 14.0       # two whole laps


def test_trace_interrupts_of_zero_cost_change_nothing_and_real_ones_slow_it_down():
    sample = np.full(50, 100.0)
    plain = sim.simulate_alltoall(sample, 6, 200, np.random.default_rng(5))
    free = sim.simulate_alltoall(sample, 6, 200, np.random.default_rng(5),
                                      sim.TraceInterrupts([50.0], [0.0], 1000.0))
    assert np.array_equal(plain["total_us"], free["total_us"])
    slow = sim.simulate_alltoall(sample, 6, 200, np.random.default_rng(5),
                                      sim.TraceInterrupts([50.0], [300.0], 1000.0))
    assert slow["total_us"].mean() > plain["total_us"].mean() and slow["idle_us"].mean() > 0


def test_bad_trace_files_are_one_line(tmp_path):
    cases = {"words.txt": "10 1\nsoon 2\n", "order.txt": "10 1\n5 1\n", "short.txt": "# length_us 5\n10 1\n"}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(SimulationInputError) as err:
            sim.load_interrupt_trace(tmp_path / name)
        assert name in str(err.value) and "\n" not in str(err.value)


# ---- the fast replay against a direct one ------------------------------------------------------

def direct_replay(P, n, exchange_time):
    """The schedule replayed processor by processor, gathering and scattering each round's pairs:
    slow and plain, the reference the slot-shifting _play must match bit for bit."""
    free, idle = np.zeros((P, n)), np.zeros((P, n))
    for r, partner in enumerate(sim.schedule(P)):
        a = np.flatnonzero(partner > np.arange(P))
        b = partner[a]
        start = np.maximum(free[a], free[b])
        idle[a] += start - free[a]
        idle[b] += start - free[b]
        free[a] = free[b] = start + exchange_time(r, a, b, start)
    return free, idle


def hashed_times(r, a, b, start):
    """A duration per round, pair and trial, whatever order the pairs come in."""
    trial = np.arange(start.shape[1])
    x = (r * 1000003 + a[:, None] * 7919 + b[:, None] * 104729 + trial * 15485863) % 9973
    return 1.0 + x / 97.0


@pytest.mark.parametrize("P", list(range(2, 20)) + [32, 33, 64])
def test_the_replay_matches_a_direct_one_bit_for_bit(P):
    finish, idle = alltoall._play(sim.schedule(P), 7, hashed_times)
    want_finish, want_idle = direct_replay(P, 7, hashed_times)
    assert np.array_equal(finish, want_finish) and np.array_equal(idle, want_idle)


def test_play_refuses_another_schedule():
    with pytest.raises(ValueError, match="schedule"):
        alltoall._play(sim.schedule(6)[::-1], 1, hashed_times)


def test_indices_are_exactly_uniform_where_multiply_and_shift_alone_are_not():
    # m = 3 * 2^29: multiply-and-shift maps each 32-bit word u to u * 3/8, so without rejection
    # the indices 0 and 1 (mod 3) get 3 words of every 8 and 2 (mod 3) gets 2: 3/8, 3/8, 1/4.
    # The division method (u // 2, a quarter of the words rejected) makes it 1/3 each.
    m, k = 3 << 29, 300000
    x = resampling.uniform_indices(rng(1), m, k)
    assert x.min() >= 0 and x.max() < m
    share = np.bincount(x % 3, minlength=3) / k
    assert np.abs(share - 1 / 3).max() < 4 * np.sqrt(2 / 9 / k), share
    words = rng(1).bit_generator.random_raw(k // 2).view(np.uint32).astype(np.uint64)
    biased = np.bincount(((words * np.uint64(m)) >> np.uint64(32)).astype(np.int64) % 3, minlength=3) / k
    assert abs(biased[2] - 0.25) < 0.01  # what the check above would have caught
    small = resampling.uniform_indices(rng(2), 3, 90000)
    assert np.abs(np.bincount(small) / 90000 - 1 / 3).max() < 0.01


class Words:
    """A stand-in for a Generator whose bit generator yields the given 32-bit words in order."""

    def __init__(self, words):
        self.words = list(words)
        self.bit_generator = self

    def random_raw(self, count):
        take, self.words = self.words[:2 * count], self.words[2 * count:]
        return np.array(take + [0] * (2 * count - len(take)), dtype=np.uint32).view(np.uint64)


def test_indices_by_division_redraw_exactly_the_words_above_the_last_whole_lot():
    # m = 3 * 2^29: c = 2^32 // m = 2 words per index, words from 3 * 2^30 on are rejected
    m, top = 3 << 29, (3 << 30) - 1
    words = [0, 1, 2**32 - 1, top + 1, top, 99,  # the first draw (3 64-bit words, 99 unused): two rejected
             5, 2**32 - 2,                       # their new words: the one at 3 is rejected again
             7]
    assert resampling.uniform_indices(Words(words), m, 5).tolist() == [0, 0, 2, 3, top // 2]
    assert resampling.uniform_indices(Words([2**32 - 1] * 4), 1, 4).tolist() == [0] * 4  # m = 1: no word needed


@pytest.mark.parametrize("interrupts", [None, Interrupts(period_us=300.0, tick_us=5.0, rare_rate_per_us=1e-4, rare_us=500.0),
                                        sim.TraceInterrupts([50.0, 700.0], [20.0, 3.0], 1000.0)])
def test_the_result_does_not_depend_on_the_number_of_workers(monkeypatch, interrupts):
    P = 8  # few processors: three chunks of trials cost an eighth of what they cost at 64
    trials = resampling.CHUNK_ELEMENTS // P * 2 + 5  # three chunks of trials
    runs = []
    for workers in (1, 2, 3):
        monkeypatch.setattr(alltoall, "WORKERS", workers)
        runs.append(sim.simulate_alltoall(skewed_sample(), P, trials, rng(8), interrupts))
    for other in runs[1:]:
        for key in runs[0]:
            assert np.array_equal(runs[0][key], other[key])
    assert len(set(runs[0]["total_us"][[0, trials // 2, -1]].tolist())) == 3  # chunks draw different times


def test_a_chunk_that_fails_in_a_worker_raises_its_own_error_here():
    done = []

    def run(i):
        if i == 3:
            raise ValueError(f"chunk {i} failed")
        done.append(i)  # in this process only for the chunks it runs again

    with pytest.raises(ValueError, match="chunk 3 failed"):
        alltoall._in_workers(run, 6, 2)
    assert done == [1]  # worker 1 (chunks 1, 3, 5) failed at 3: run again here, 1 then 3


def test_resampled_exchanges_have_the_samples_distribution():
    s = np.array([1.0, 2.0, 5.0])
    out = sim.simulate_alltoall(s, 2, 60000, rng(4))  # P = 2: one exchange, total = its time
    share = np.array([(out["total_us"] == v).mean() for v in s])
    assert np.abs(share - 1 / 3).max() < 0.01


# ---- the halo with a noise trace -----------------------------------------------------------------

def test_window_costs_by_hand():
    # Detours [100, 150) and [600, 610) of a 1000 us trace: the task runs 940 us of it. A 20 us
    # call starting at s meets the first if s is in (80, 100], the second if s is in (580, 600].
    trace = sim.TraceInterrupts([100.0, 600.0], [50.0, 10.0], 1000.0)
    costs, probs = sim.window_costs(trace, 20.0)
    assert costs.tolist() == [0.0, 10.0, 50.0]
    assert probs == pytest.approx([900 / 940, 20 / 940, 20 / 940])
    # two laps and 500 us: both detours twice, then exactly one of them, 500 us apart: the second
    # if s is in (100, 600], of which the task runs (150, 600), else the first
    costs, probs = sim.window_costs(trace, 2500.0)
    assert costs.tolist() == [130.0, 170.0]
    assert probs == pytest.approx([450 / 940, 490 / 940])


@pytest.mark.parametrize("N0,N", [(1, 1), (1, 8), (2, 2), (2, 16)])
def test_halo_trace_prediction_agrees_with_replaying_the_trace(N0, N):
    # The same model played out: per call, a length b (the maximum of N/N0 measured calls) and N
    # tasks at random instants of the trace at which they run, each meeting what starts in [s, s + b).
    g = rng(5)
    times = np.sort(g.uniform(0, 5000, 40))
    trace = sim.TraceInterrupts(times, g.exponential(30, 40), 5000.0)
    series = g.gamma(3, 20, 300)
    pred = sim.halo_trace_prediction(series, N0, [N], trace, rng(6), groups=300)[N]
    calls = 50000
    b = series[g.integers(series.size, size=(calls, N // N0))].max(axis=1)
    worst, met = np.zeros(calls), np.zeros(calls, bool)
    ends = times + np.diff(trace.cum)
    for _ in range(N):
        s = g.uniform(0, 5000, calls)
        redraw = np.arange(calls)
        while redraw.size:  # instants inside a detour (or the last one's wrap into the lap) again
            t = s[redraw]
            redraw = redraw[((t[:, None] >= times) & (t[:, None] < ends)).any(axis=1) | (t + 5000 < ends.max())]
            s[redraw] = g.uniform(0, 5000, redraw.size)
        w = trace._cost_before(s + b) - trace._cost_before(s)
        worst, met = np.maximum(worst, w), met | (w > 0)
    replay = b + worst
    assert abs(pred["max_mean"] - replay.mean()) < 4 * replay.std() / np.sqrt(calls)
    assert abs(pred["detour_fraction"] - met.mean()) < 4 * np.sqrt(met.mean() * (1 - met.mean()) / calls) + 1e-9
    assert pred["max_se"] > 0 and pred["detour_fraction_se"] >= 0


def test_a_trace_of_zero_costs_gives_the_extrapolation_back():
    series = skewed_sample(500)
    quiet = sim.halo_extrapolation(series, 2, [2, 64], rng(1))
    traced = sim.halo_trace_prediction(series, 2, [2, 64], sim.TraceInterrupts([10.0], [0.0], 100.0), rng(1))
    for N in (2, 64):
        assert traced[N]["max_mean"] == pytest.approx(quiet[N]["max_mean"], rel=1e-12)
        assert traced[N]["detour_fraction"] == 0
