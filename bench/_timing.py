"""The timer the Python bench scripts share: the least of N rounds, the cases of one comparison
run in turn within each round (A, B, A, B, ...), so that a slow spell of the machine (another
process, the host's neighbours) falls on both sides of a ratio instead of on one."""

from __future__ import annotations

import time
from typing import Any, Callable, List, Sequence, Tuple


def interleaved_best(fns: Sequence[Callable[[], Any]], repeats: int) -> List[Tuple[float, Any]]:
    """Each of ``fns`` run ``repeats`` times, in turn: (its least wall time in seconds, its last
    result), in the order given."""
    times: List[List[float]] = [[] for _ in fns]
    outs: List[Any] = [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            outs[i] = None  # the last round's result is freed before it is made again
            t0 = time.perf_counter()
            outs[i] = fn()
            times[i].append(time.perf_counter() - t0)
    return [(min(t), out) for t, out in zip(times, outs)]
