"""Comparing machines (or runs) variant by variant, as Hoefler and Belli (SC15) ask:
no normality assumed, medians beside means, the number of repeats with every number.

For each performance variable of each variant, every label's repeats are one sample.
A label is set beside the baseline by the ratio of their medians, with a 95 %
percentile-bootstrap interval of that ratio, and the two-sided Mann-Whitney U test
says whether their distributions differ (5 % level).  With too few repeats no
difference can be significant; the comparison says so instead of guessing.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
from scipy import stats

from .references import BETTER

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
    verdict: str                # better, worse, no significant difference, too few repeats, ...


def smallest_p(n, m):
    """The smallest two-sided p-value the exact Mann-Whitney U test can give for n and m values."""
    return min(1.0, 2 / comb(n + m, n))


def compare(sample, base, unit="", seed=1) -> Comparison:
    """The label's sample against the baseline's, for a variable in unit (which
    decides whether higher is better: references.BETTER)."""
    a, b = np.asarray(sample, float), np.asarray(base, float)
    median, median_base = float(np.median(a)), float(np.median(b))
    ratio = median / median_base if median_base else float("nan")
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
    if p is None or smallest_p(a.size, b.size) > ALPHA:
        verdict = f"too few repeats ({a.size} and {b.size}) to tell"
    elif p >= ALPHA:
        verdict = "no significant difference"
    else:
        higher = median > median_base
        better = BETTER.get(unit)
        verdict = ("higher" if higher else "lower") if better is None else (
            "better" if higher == (better == "higher") else "worse")
    return Comparison(int(a.size), int(b.size), median, median_base, ratio, ci, p, verdict)
