"""Comparing machines (or runs) variant by variant with the statistics the references use
(docs/references.md): the log scale, turned so that larger is worse, no normality assumed.

For each performance variable of each variant, every label's repeats are one sample.  A
label B is set beside the baseline A by the ratio of their medians (in the worse direction:
B's time over A's, A's bandwidth over B's), with a 95 % percentile-bootstrap interval, and the
two-sided Mann-Whitney U test (exact for small samples).  Over all the variables compared
Holm's step-down keeps the family-wise error at ALPHA, so that among hundreds of variables a
difference is named only where the repeats support it:

    "B slower than A by x"            Holm rejects, B worse
    "B faster than A by x"            Holm rejects, B better
    "no difference detectable above y" not rejected: y is the one-sided upper confidence bound of
                                       the slowdown (the rank test inverted, at ALPHA / m): a
                                       slowdown larger than y would have been detected
A variable with no better side known (its record declares none, nor its unit) is compared
as higher/lower.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
from scipy import stats

from . import bounds
from .roles import BETTER, role_of

ALPHA = 0.05


@dataclass
class Comparison:
    n: int                      # repeats of the label
    n_base: int                 # repeats of the baseline
    median: float
    median_base: float
    ratio: float                # median / baseline median
    ci: tuple | None            # 95 % bootstrap interval of the ratio, or None (fewer than 2 repeats a side)
    p: float | None             # Mann-Whitney U, two-sided, or None
    better: str | None          # which side is better (lower, higher) or None: not known
    slowdown: float             # the worse direction's ratio: > 1 where the label is worse
    verdict: str = ""           # set by decide(): over all the variables compared at once
    kind: str = ""              # slower, faster, none (no difference detectable), too-few
    detectable: float | None = None  # 'no difference detectable above' this slowdown (inf: none at all)


def smallest_p(n, m):
    """The smallest two-sided p-value the exact Mann-Whitney U test can give for n and m values."""
    return min(1.0, 2 / comb(n + m, n))


def compare(sample, base, unit="", check=None, variable=None, seed=1) -> Comparison:
    """The label's sample against the baseline's for one variable (whose record, else unit, says
    which side is better: roles.role_of).  The verdict comes from decide()."""
    a, b = np.asarray(sample, float), np.asarray(base, float)
    median, median_base = float(np.median(a)), float(np.median(b))
    ratio = median / median_base if median_base else float("nan")
    better = role_of(check, variable, unit).better if check and variable else None
    better = better or BETTER.get(unit)
    slowdown = 1 / ratio if better == "higher" else ratio
    ci = p = None
    if a.size >= 2 and b.size >= 2:
        p = float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
        if np.ptp(a) == 0 and np.ptp(b) == 0:  # constant samples: nothing to resample
            ci = (ratio, ratio)
        else:
            boot = stats.bootstrap((a, b), lambda x, y, axis: np.median(x, axis=axis) / np.median(y, axis=axis),
                                   vectorized=True, paired=False, confidence_level=1 - ALPHA, n_resamples=4999,
                                   method="percentile", rng=np.random.default_rng(seed))
            ci = (float(boot.confidence_interval.low), float(boot.confidence_interval.high))
    return Comparison(int(a.size), int(b.size), median, median_base, ratio, ci, p, better, slowdown)


def detectable_above(sample, base, better, level):
    """The one-sided upper (1 - level) confidence bound of the label's slowdown over the baseline,
    from the rank test inverted: the largest log shift d such that the label's worse-direction
    logs minus d are not significantly below the baseline's.  inf where no shift could be."""
    a = bounds.worse_logs(sample, better or "lower")
    b = bounds.worse_logs(base, better or "lower")
    if smallest_p(a.size, b.size) / 2 > level:
        return float("inf")
    differences = np.sort(np.subtract.outer(a, b).ravel())

    def rejected(d):  # the label, shifted down by d, significantly below the baseline
        return stats.mannwhitneyu(a - d, b, alternative="less").pvalue <= level
    # p falls as d grows and steps only at the differences: the bound is the first one rejected
    lo, hi = 0, differences.size - 1
    if not rejected(differences[hi] + 1e-12):
        return float("inf")
    while lo < hi:
        mid = (lo + hi) // 2
        if rejected(differences[mid] + 1e-12):
            hi = mid
        else:
            lo = mid + 1
    return float(np.exp(max(0.0, differences[lo])))


def decide(comparisons, samples=None, alpha=ALPHA):
    """Sets every comparison's verdict at once: Holm over the variables with a test.
    samples: [(sample, base)] beside them, for 'no difference detectable above y'."""
    tested = [i for i, c in enumerate(comparisons) if c.p is not None and smallest_p(c.n, c.n_base) <= alpha]
    rejected = dict(zip(tested, bounds.holm([comparisons[i].p for i in tested], alpha))) if tested else {}
    level = alpha / max(1, len(tested))
    for i, c in enumerate(comparisons):
        if i not in rejected:
            c.kind, c.verdict = "too-few", f"too few repeats ({c.n} and {c.n_base}) to tell"
        elif rejected[i]:
            worse = c.slowdown > 1
            c.kind = "slower" if worse else "faster"
            if c.better is None:
                c.verdict = f"{'higher' if c.ratio > 1 else 'lower'} by {max(c.ratio, 1 / c.ratio):.3g}x"
            else:
                c.verdict = f"{c.kind} by {max(c.slowdown, 1 / c.slowdown):.3g}x, detectable at this noise"
        else:
            c.kind = "none"
            c.detectable = detectable_above(*samples[i], c.better, level) if samples else None
            c.verdict = ("no difference detectable" if c.detectable in (None, float("inf"))
                         else f"no difference detectable above {c.detectable:.3g}x")
    return comparisons
