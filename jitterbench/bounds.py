"""The bound rule: a one-sided prediction bound for one new run, from k >= 5 repeats, at a
stated false-alarm rate (the derivation, its model and its calibration: docs/references.md).

Everything is on the log scale and turned so that larger is worse (the log of a time, minus
the log of a bandwidth).  For a variable with repeats y_1..y_k the bound is

    median(y_1..y_k) + q

where q is shared by a group of variables (one check, partition and environment: its
quantities at every size, pattern, eager limit and node count) and is the (1 - rate)
upper quantile of the group's leave-one-out scores y_i - median(y_j, j != i): each repeat set
against the others, as a new run is set against the k repeats, so that the scores hold the
uncertainty of the median as well as the run-to-run noise.  Where the N scores reach the rate
((N + 1) rate >= 1) q is their order statistic (split-conformal: distribution-free).  Below
that the tail is extrapolated by a model: the top n = ceil(sqrt(N)) scores' excesses over the
next one are exponential (exactly so for a Pareto tail of times, conservative for lighter
tails such as a lognormal's), and q is the exact predictive quantile of that model with its
mean excess estimated, u + beta_hat n ((p_u / rate)^(1/n) - 1), p_u = (n + 1) / (N + 1).

The functions take arrays with any leading axes (one simulated suite a row) so that
benchmarks/bounds_calibration.py and the tests run 10,000 suites at once.
"""
from __future__ import annotations

import math

import numpy as np

MIN_REPEATS = 5          # independent runs a bound needs (k)
FALSE_ALARM_RATE = 0.01  # the suite's, per run on a clean machine (default)
# the attempts a verdict takes: a check fails under an MPI only where it fails in each, the main job
# judging a failed one again at once (ci/main.sh), so each attempt's bounds hold the rate's square root
ATTEMPTS = 2
MAX_DETECTABLE = 2.0     # a variable whose minimum detectable slowdown is above it is not asserted
# the confidence of the distribution-free bound that a percentile over calls needs: the largest of
# n calls is above the p-th percentile with probability 1 - p^n
PERCENTILE_CONFIDENCE = 0.95


def worse_logs(values, better):
    """log(values), turned so that larger is worse: minus the log where higher is better."""
    logs = np.log(np.asarray(values, float))
    return -logs if better == "higher" else logs


def loo_scores(logs):
    """(..., m, k) log values (m variables, k repeats each) -> (..., m k) leave-one-out scores:
    each repeat minus the median of the other k - 1 of its variable, as np.median takes it (the
    middle value, or the mean of the middle two; nan where one of them is nan), from one sort of
    each variable's repeats: k medians of k - 1 took twice as long (10,000 suites, tests/test_bounds.py)."""
    logs = np.asarray(logs, float)
    k = logs.shape[-1]
    order = np.argsort(logs, axis=-1, kind="stable")
    ranked = np.take_along_axis(logs, order, axis=-1)
    middle = [(k - 2) // 2] if k % 2 == 0 else [(k - 3) // 2, (k - 1) // 2]  # of the k - 1 others

    def median_without(r):  # of the values but the one of rank r: the others' j-th is the j-th, or from r the next
        values = [ranked[..., j + (j >= r)] for j in middle]
        return values[0] if len(values) == 1 else (values[0] + values[1]) / 2

    medians = np.empty_like(logs)
    np.put_along_axis(medians, order, np.stack([median_without(r) for r in range(k)], axis=-1), axis=-1)
    nans = np.isnan(logs)
    medians[nans.sum(axis=-1, keepdims=True) - nans > 0] = np.nan
    return (logs - medians).reshape(*logs.shape[:-2], -1)


def threshold(scores, rate):
    """(..., N) scores -> (...) the q that one new score exceeds with probability rate:
    the order statistic where N reaches rate, else the exponential tail's predictive quantile."""
    scores = np.sort(np.asarray(scores, float), axis=-1)
    N = scores.shape[-1]
    if N < 2:
        raise ValueError("a threshold needs at least 2 scores")
    if (N + 1) * rate >= 1:  # split-conformal: P(new > the j-th smallest of N) = (N + 1 - j) / (N + 1)
        return scores[..., math.ceil((N + 1) * (1 - rate)) - 1]
    n = min(N - 1, math.ceil(math.sqrt(N)))
    u = scores[..., N - n - 1]
    beta = (scores[..., N - n:] - u[..., None]).mean(axis=-1)
    # n exponential excesses with mean beta_hat: a new excess exceeds t beta_hat with probability
    # (1 + t/n)^-n (a Lomax, exactly); above u with probability p_u
    p_u = (n + 1) / (N + 1)
    return u + beta * n * ((p_u / rate) ** (1 / n) - 1)


def detectable_slowdown(q):
    """The ratio of the bound to the median: the minimum detectable slowdown."""
    return np.exp(q)


def percentile_of(quantity_name):
    """The percentile a quantity name stands for (p99 -> 0.99, length_p999 -> 0.999), or None."""
    tail = quantity_name.rsplit("_", 1)[-1]
    if len(tail) > 1 and tail[0] == "p" and tail[1:].isdigit():
        digits = tail[1:]
        return int(digits) / 10 ** max(2, len(digits))
    return None


def calls_needed(p, confidence=PERCENTILE_CONFIDENCE):
    """The fewest calls n with 1 - p^n >= confidence: p99 needs 299 at 95 %."""
    return math.ceil(math.log(1 - confidence) / math.log(p) - 1e-9)


def holm(pvalues, alpha):
    """Holm's step-down over the p-values: which are rejected at family-wise level alpha."""
    p = np.asarray(pvalues, float)
    order = np.argsort(p)
    passed = p[order] <= alpha / (p.size - np.arange(p.size))
    rejected = np.zeros(p.size, bool)
    rejected[order] = np.cumprod(passed).astype(bool)
    return rejected


# ---- the rule's calibration on synthetic runs (tests/test_bounds.py, benchmarks/bounds_calibration.py) ----

# the worse-direction log of one run's value, spread sigma: a lognormal; a Pareto time (its log is
# exponential: the heavy tail the rule's model is exact for); a bimodal one, a fifth of the runs in
# a stall mode 1.5x slower
DISTRIBUTIONS = {
    "lognormal": lambda rng, size, sigma: rng.normal(0.0, sigma, size),
    "pareto": lambda rng, size, sigma: rng.exponential(sigma, size),
    "bimodal": lambda rng, size, sigma: rng.normal(0.0, sigma, size) + np.log(1.5) * (rng.random(size) < 0.2),
}


def calibrate(distribution, sigma, suites=10_000, variables=50, repeats=MIN_REPEATS, rate=FALSE_ALARM_RATE,
              shifts=(1.5, 2.0), seed=1):
    """Simulated suites on a clean machine: each has `variables` variables of one group (pooled),
    `repeats` runs to build the bounds from and one new run.  Returns, per suite, whether any
    variable of the new run failed its bound (a false alarm), the group's minimum detectable
    slowdown, and for each shift whether variable 0, slowed by it, failed."""
    rng = np.random.default_rng(seed)
    draw = DISTRIBUTIONS[distribution]
    logs = draw(rng, (suites, variables, repeats + 1), sigma) + rng.uniform(0, 5, (suites, variables, 1))
    old, new = logs[..., :repeats], logs[..., repeats]
    q = np.maximum(0.0, threshold(loo_scores(old), rate / variables))
    over = new - np.median(old, axis=-1)  # each variable's new run above its median
    return {"false_alarm": (over > q[:, None]).any(axis=-1), "slowdown": detectable_slowdown(q),
            "detected": {s: over[:, 0] + np.log(s) > q for s in shifts}}
