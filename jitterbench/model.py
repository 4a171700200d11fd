"""Models of what a run measured, for the simulators (jitterbench.simulate may absorb it)."""
from __future__ import annotations

import numpy as np


def per_task_times(bins):
    """Per-task times rebuilt from a merged histogram [[lower_us, upper_us or None, count], ...]:
    each bin's count of its middle (geometric; the bound there is where the other is 0 or
    open).  A merged histogram also counts a task's waits for a delayed neighbour, so from a
    run of more than one task these times are longer than the tasks' own."""
    return np.repeat([np.sqrt(lo * hi) if lo > 0 and hi is not None else (hi or lo) for lo, hi, _ in bins],
                     [n for _, _, n in bins])
