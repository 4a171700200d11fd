"""The bound rule's known answers (jitterbench/bounds.py, docs/references.md): its parts on
exact inputs, and over 10,000 simulated suites of known distributions its false-alarm rate
against the stated one and its power against the stored minimum detectable slowdown."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy import stats

from jitterbench import bounds, roles, sweeps

pytestmark = pytest.mark.unit

SUITES, RATE = 10_000, 0.01
# the binomial 95 % interval of false alarms in SUITES suites at RATE
LOW, HIGH = (x / SUITES for x in stats.binom.interval(0.95, SUITES, RATE))
# the suites of a distribution and spread, simulated once for the rate's test and the power's
calibrated = functools.cache(bounds.calibrate)


def test_leave_one_out_scores_set_each_repeat_against_the_others():
    scores = bounds.loo_scores(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]))
    assert scores.tolist() == [1 - 3.5, 2 - 3.5, 3 - 3.0, 4 - 2.5, 5 - 2.5]


def test_the_threshold_is_the_order_statistic_where_the_scores_reach_the_rate():
    scores = np.arange(100.0)
    # split-conformal: the ceil((N + 1)(1 - rate))-th smallest of N
    assert bounds.threshold(scores, 0.1) == 90.0
    assert bounds.threshold(scores, 1 / 101) == 99.0


def test_beyond_the_scores_the_exponential_tail_gives_its_exact_predictive_quantile():
    scores = np.arange(100.0)           # n = 10 top scores 90..99 above u = 89: mean excess 5.5
    p_u, rate = 11 / 101, 1e-4
    assert bounds.threshold(scores, rate) == pytest.approx(89 + 5.5 * 10 * ((p_u / rate) ** 0.1 - 1))
    # the Lomax identity it rests on: a new exponential excess is above t times the mean of n others
    # with probability (1 + t/n)^-n
    rng = np.random.default_rng(3)
    x = rng.exponential(1.0, (200_000, 11))
    t = 2.0
    assert np.mean(x[:, 0] > t * x[:, 1:].mean(axis=1)) == pytest.approx((1 + t / 10) ** -10, abs=0.003)


def test_percentiles_need_the_calls_that_hold_them():
    assert [bounds.percentile_of(n) for n in ("p99", "p999", "length_p50", "all_p99", "max", "t_max")] == [
        0.99, 0.999, 0.5, 0.99, None, None]
    assert bounds.calls_needed(0.99) == 299 and bounds.calls_needed(0.999) == 2995
    assert 1 - 0.99 ** 299 >= 0.95 > 1 - 0.99 ** 298


def test_holm_rejects_step_down():
    assert bounds.holm([0.01, 0.04, 0.03], 0.05).tolist() == [True, False, False]
    assert bounds.holm([0.01, 0.02, 0.04], 0.05).tolist() == [True, True, True]


def test_a_variable_maps_to_its_records_quantity():
    assert sweeps.quantity("HaloCheck", "max_isend-recv_4096").name == "max"
    assert sweeps.quantity("HaloCheck", "t_max_isend-recv_4096").name == "t_max"
    assert sweeps.quantity("EagerCheck", "eager_limit_shm").name == "eager_limit"   # the fabric's suffix
    assert sweeps.quantity("OsuCheck", "latency_8") is None                       # no record quantities


def test_what_is_asserted_follows_the_record_then_the_unit():
    assert roles.role_of("HaloCheck", "max_isend-recv_4096", "us", 100) == roles.Role("lower", True)
    assert not roles.role_of("NoiseCheck", "length_max", "us").asserted          # a maximum: reported
    p99 = roles.role_of("HaloCheck", "p99_isend-recv_4096", "us", 100)
    assert not p99.asserted and "needs 299 calls" in p99.why_not
    assert roles.role_of("HaloCheck", "p99_isend-recv_4096", "us", 300).asserted
    assert not roles.role_of("HaloCheck", "p99_isend-recv_4096", "us", 0).asserted  # calls unknown
    assert roles.role_of("EagerCheck", "eager_limit_shm", "B") == roles.Role("higher", True)
    assert roles.role_of("OsuCheck", "bandwidth_4096", "MB/s") == roles.Role("higher", True)
    assert not roles.role_of("PingPongCheck", "gain_send_8_n1", "ratio").asserted  # no better side known


@pytest.mark.parametrize("distribution", sorted(bounds.DISTRIBUTIONS))
def test_the_false_alarm_rate_over_10000_suites_is_the_stated_one_or_below(distribution):
    """Exactly the stated rate where the model holds (a Pareto tail: exponential on the log
    scale); at most it for lighter tails, where the exponential tail is conservative."""
    rate = calibrated(distribution, 0.1, suites=SUITES, rate=RATE)["false_alarm"].mean()
    if distribution == "pareto":
        assert LOW <= rate <= HIGH, (rate, LOW, HIGH)
    else:
        assert rate <= HIGH, (rate, HIGH)


@pytest.mark.parametrize("distribution", sorted(bounds.DISTRIBUTIONS))
@pytest.mark.parametrize("sigma", [0.03, 0.1, 0.3])
def test_power_matches_the_stored_minimum_detectable_slowdown(distribution, sigma):
    """A slowdown at or above a suite's minimum detectable slowdown is detected in at least half
    of the suites (a new run is above the median of k others half the time); one at most its
    square root in at most 5 % (each 95 % binomial test, where 100 or more suites fall there)."""
    run = calibrated(distribution, sigma, suites=SUITES, rate=RATE)
    for shift, detected in run["detected"].items():
        for where, claim in ((shift >= run["slowdown"], lambda k, n: stats.binomtest(k, n, 0.5, "less").pvalue),
                             (shift <= np.sqrt(run["slowdown"]),
                              lambda k, n: stats.binomtest(k, n, 0.05, "greater").pvalue)):
            n = int(where.sum())
            if n >= 100:
                assert claim(int(detected[where].sum()), n) > 0.01, (shift, n, detected[where].mean())


@pytest.mark.parametrize("distribution", sorted(bounds.DISTRIBUTIONS))
def test_where_the_scores_reach_the_rate_each_bound_holds_it_whatever_the_distribution(distribution):
    """The conformal regime (N + 1) rate >= 1: 250 scores, a variable's rate 2 %.  Exact but for
    the median of k - 1 that a score sets a repeat against (a new run meets the median of k):
    within a tenth of the rate on all three distributions."""
    rng = np.random.default_rng(2)
    logs = bounds.DISTRIBUTIONS[distribution](rng, (SUITES, 50, bounds.MIN_REPEATS + 1), 0.1)
    old, new = logs[..., :-1], logs[..., -1]
    q = bounds.threshold(bounds.loo_scores(old), 0.02)
    rate = np.mean(new - np.median(old, axis=-1) > q[:, None])
    assert rate == pytest.approx(0.02, rel=0.1)
