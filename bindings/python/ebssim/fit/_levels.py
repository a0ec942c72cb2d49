"""Levels and change points: ruptures finds them, the C++ least squares refines them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ..volumes import NITRO_OVERSHOOT_S
from . import _native
from ._inputs import Capture, JobData

FloatArray = npt.NDArray[np.float64]

#: Adjacent levels closer than this fraction of the larger are one level (fio's and EBS's jitter).
MIN_RELATIVE_CHANGE = 0.03

#: The overshoot after time below a limit (docs/model.md, "Overshoot"; the default on Nitro).
OVERSHOOT_S = NITRO_OVERSHOOT_S


@dataclass
class Level:
    """A stretch of one job at a constant rate."""

    job: JobData
    start_s: float
    end_s: float
    iops: float
    iops_se: float
    start_se: float  # NaN for a fixed start (the job's start)
    end_se: float
    n_windows: int

    @property
    def throughput_mib_s(self) -> float:
        return self.iops * self.job.io_bytes / 2**20


def _noise(x: FloatArray) -> float:
    """Robust standard deviation of a series' jitter (median absolute first difference)."""
    if x.size < 3:
        return float(np.std(x)) if x.size else 0.0
    d = np.abs(np.diff(x))
    return float(1.4826 * np.median(d) / math.sqrt(2))


def _breaks(job: JobData) -> List[int]:
    """Indices where a new level starts, from ruptures' PELT with a BIC-like penalty."""
    import ruptures as rpt

    x = job.iops
    n = x.size
    if n < 4:
        return []
    sigma = max(_noise(x), 1e-3 * float(np.median(np.abs(x))), 1e-9)
    # PELT on the l2 cost (a change of mean), ruptures' C implementation (KernelCPD with the linear kernel).
    algo = rpt.KernelCPD(kernel="linear", min_size=2).fit(x.reshape(-1, 1))
    bkps = [int(b) for b in algo.predict(pen=4.0 * sigma**2 * math.log(n)) if b < n]
    # Merge neighbours whose levels barely differ.
    while True:
        edges = [0, *bkps, n]
        means = [float(np.mean(x[a:b])) for a, b in zip(edges[:-1], edges[1:])]
        small = [
            k
            for k in range(len(bkps))
            if abs(means[k + 1] - means[k]) < MIN_RELATIVE_CHANGE * max(abs(means[k]), abs(means[k + 1]), 1e-12)
        ]
        if not small:
            return bkps
        k = min(small, key=lambda k: abs(means[k + 1] - means[k]))
        del bkps[k]


def fit_levels(capture: Capture) -> Tuple[List[Level], float, int]:
    """Levels of every job (split at the change points found in it), fitted job by job.

    Returns the levels, the weighted sum of squares and its degrees of freedom. Windows are
    weighted by their length over the variance of their level's jitter. Jobs share no parameter
    (their ends are fixed), so each is fitted on its own windows: the core fits one rate, and
    refuses segments that overlap in time (jobs that ran at the same time).
    """
    levels: List[Level] = []
    ssr, dof = 0.0, 0
    for job in capture.jobs:
        lv, s, d = _fit_job(job)
        levels.extend(lv)
        ssr += s
        dof += d
    return levels, ssr, dof


def _fit_job(job: JobData) -> Tuple[List[Level], float, int]:
    segments: List[_native.SegmentTuple] = []
    sizes: List[int] = []
    level0: List[float] = []
    change0: List[float] = []
    x = job.iops
    bk = _breaks(job)
    edges = [0, *bk, x.size]
    dur = job.t1 - job.t0
    w = np.empty_like(x)
    for k, (ia, ib) in enumerate(zip(edges[:-1], edges[1:])):
        seg = x[ia:ib]
        level = float(np.mean(seg))
        sd = max(_noise(seg), 1e-3 * abs(level), math.sqrt(max(level, 1e-12) / float(np.median(dur[ia:ib]))))
        w[ia:ib] = dur[ia:ib] / float(np.median(dur)) / sd**2
        last = ib == x.size
        segments.append(
            (
                job.start_s if k == 0 else 0.0,
                job.end_s if last else 0.0,
                -1 if k == 0 else k - 1,
                -1 if last else k,
            )
        )
        sizes.append(ib - ia)
        level0.append(level)
        if ib < x.size:
            change0.append(float(job.t1[ib - 1]))
    r = _native.fit_levels(job.t0, job.t1, x, w, segments, level0, change0)
    levels: List[Level] = []
    for k, (sg, nw) in enumerate(zip(segments, sizes)):
        a = sg[0] if sg[2] < 0 else float(r.change_s[sg[2]])
        b_ = sg[1] if sg[3] < 0 else float(r.change_s[sg[3]])
        levels.append(
            Level(
                job=job,
                start_s=a,
                end_s=b_,
                iops=float(r.level[k]),
                iops_se=float(r.level_se[k]),
                start_se=math.nan if sg[2] < 0 else float(r.change_se[sg[2]]),
                end_se=math.nan if sg[3] < 0 else float(r.change_se[sg[3]]),
                n_windows=nw,
            )
        )
    return levels, float(r.ssr), int(r.dof)


def window_weights(capture: Capture, levels: List[Level]) -> List[FloatArray]:
    """Per job, the weights of its windows: length over the variance of the jitter of its level."""
    out: List[FloatArray] = []
    for job in capture.jobs:
        dur = job.t1 - job.t0
        w = np.ones_like(job.iops)
        mine = [lv for lv in levels if lv.job is job]
        mid = (job.t0 + job.t1) / 2
        for lv in mine:
            sel = (mid >= lv.start_s - 1e-9) & (mid <= lv.end_s + 1e-9)
            if not sel.any():
                continue
            seg = job.iops[sel]
            sd = max(_noise(seg), 1e-3 * abs(lv.iops), math.sqrt(max(lv.iops, 1e-12) / float(np.median(dur[sel]))))
            w[sel] = dur[sel] / float(np.median(dur)) / sd**2
        out.append(w)
    return out


def first_drop(levels: List[Level]) -> Optional[Tuple[Level, Level]]:
    """The first fall of the rate by more than MIN_RELATIVE_CHANGE, in time order (the cliff's guess)."""
    order = sorted(levels, key=lambda lv: lv.start_s)
    for a, b in zip(order[:-1], order[1:]):
        if b.iops < (1 - MIN_RELATIVE_CHANGE) * a.iops and b.job.io_bytes == a.job.io_bytes:
            return a, b
    return None


def overshoot_transients(levels: List[Level]) -> set[int]:
    """The ids of levels that are a job's overshoot, not a cap: its first level when that lasts at
    most two windows of at most OVERSHOOT_S each and the job's next level is lower (after time
    below a limit, a volume runs above it for a moment by up to OVERSHOOT_S of it)."""
    out: set[int] = set()
    jobs: dict[int, List[Level]] = {}
    for lv in levels:
        jobs.setdefault(id(lv.job), []).append(lv)
    for ls in jobs.values():
        ls.sort(key=lambda lv: lv.start_s)
        first = ls[0]
        if (
            len(ls) >= 2
            and first.end_s - first.start_s <= 2 * OVERSHOOT_S * (1 + 1e-9)
            and ls[1].iops < (1 - MIN_RELATIVE_CHANGE) * first.iops
        ):
            out.add(id(first))
    return out
