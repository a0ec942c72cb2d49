"""Predict the cliff from the first part of a run, before any cliff."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .. import _repr
from ..volumes import Volume
from . import _native
from ._fit import MAX_FIT_STEPS, _counted, _dt, _phase_tuples
from ._inputs import Source, load
from ._levels import MIN_RELATIVE_CHANGE, first_drop, fit_levels


@dataclass
class CliffPrediction:
    """When the bucket runs dry if the last job of the capture goes on, and the rate after.

    Times are on the capture's clock (seconds from the start of the first job's log)."""

    volume: Volume
    cliff_time_s: Optional[float]  # None: the load never drains the bucket
    cliff_time_stderr: Optional[float]
    iops_before: float
    iops_after: Optional[float]
    demand_iops: float  # what the last job asks for (inf: more than the volume's burst)

    def _rows(self) -> List[Tuple[str, str]]:
        if self.cliff_time_s is None:
            cliff = "never: the load does not drain the bucket"
        else:
            se = self.cliff_time_stderr
            cliff = _repr.when(self.cliff_time_s) + (f" ± {_repr.duration(se)}" if se else "")
        demand = (
            "more than the volume's burst" if math.isinf(self.demand_iops) else _repr.number(self.demand_iops, "IOPS")
        )
        return [
            ("volume", str(self.volume)),
            ("cliff", cliff),
            ("before", _repr.number(self.iops_before, "IOPS")),
            ("after", "n/a" if self.iops_after is None else _repr.number(self.iops_after, "IOPS")),
            ("the last job asks for", demand),
        ]

    def __repr__(self) -> str:
        return _repr.short_repr("CliffPrediction", [f"{k} {v}" if k != "volume" else v for k, v in self._rows()])

    def _repr_html_(self) -> str:
        return _repr.html_table("CliffPrediction", self._rows())


def predict_cliff(
    inputs: Sequence[Source],
    *,
    type: str,
    size_gib: float,
    burst_balance_pct: float = 100.0,
    rate_limits: str = "workload",
    bin_s: Optional[float] = None,
) -> CliffPrediction:
    """Predict when the cliff comes, and the level after it, from a capture that ends before it.

    Parameters
    ----------
    inputs
        As for :func:`ebssim.fit.fit`: the first part of a run (no cliff in it yet).
    type, size_gib
        The volume (a type with a bucket: gp2, st1, sc1, standard).
    burst_balance_pct : float, default 100
        BurstBalance when the capture started: CloudWatch's BurstBalance, or 100 for a new volume.
    rate_limits
        As for :func:`ebssim.fit.fit`.

    The last job's measured level is its demand when it is below the volume's burst cap (else the
    job asks for more than the volume gives); the engine runs the capture's phases on the volume
    and goes on with the last one until the bucket is empty. The cliff's standard error comes from
    the level's: the bucket drains at the level (in EBS operations) less the baseline.
    """
    vol = Volume(type, size_gib, burst_balance_pct=burst_balance_pct)
    if not vol.has_bucket:
        raise ValueError(f"type={type!r} has no burst bucket: there is no cliff to predict")
    capture = load(inputs, bin_s=bin_s)
    levels, _, _ = fit_levels(capture)
    if first_drop(levels) is not None:
        a, b = first_drop(levels)  # type: ignore[misc]
        raise ValueError(
            f"the capture already falls from {a.iops:.0f} to {b.iops:.0f} IOPS at {b.start_s:.3f} s: predict_cliff "
            f"takes the part before any cliff (fit the whole capture with ebssim.fit.fit)"
        )
    phases, members = _phase_tuples(capture, rate_limits, vol)
    last = max(levels, key=lambda lv: lv.end_s)
    cpi = _counted(vol, last.job)
    cap = vol.max_iops / cpi
    if vol.max_throughput_mib_s > 0:
        cap = min(cap, vol.max_throughput_mib_s * 2**20 / last.job.io_bytes)
    demand = math.inf if last.iops >= (1 - MIN_RELATIVE_CHANGE) * cap else last.iops
    # The measured phases, each at its measured demand (or more than the volume gives), then the last one going on.
    ph = []
    for p, js in zip(phases, members):
        lv = [x for x in levels if x.job in js]
        level = sum(x.iops for x in lv if x.end_s >= max(y.end_s for y in lv) - 1e-9)
        d = math.inf if level >= (1 - MIN_RELATIVE_CHANGE) * cap else level
        ph.append((p[0], p[1], p[2], p[3], p[4], min(d, p[5])))
    drain = (min(demand, cap) * cpi) - vol.baseline_iops
    if drain <= 0:
        return CliffPrediction(vol, None, None, min(demand, cap), None, demand)
    horizon = vol.initial_credits / drain + capture.end_s + 1.0
    end = ph[-1][1]
    ph.append((end, end + horizon, ph[-1][2], ph[-1][3], ph[-1][4], ph[-1][5]))
    dt = max(_dt(capture), horizon / MAX_FIT_STEPS)
    t0 = np.array([0.0, end + horizon - 1.0])
    t1 = np.array([min(1.0, end), end + horizon])
    sim = _native.simulate_windows(vol, ph, t0, t1, dt)
    cliff = float(sim.cliff_time_s)
    if not math.isfinite(cliff):
        return CliffPrediction(vol, None, None, min(demand, cap), None, demand)
    after = float(sim.predicted[-1])
    se_level = last.iops_se if math.isfinite(last.iops_se) and demand != math.inf else 0.0
    se = (cliff - last.start_s) * se_level * cpi / drain if se_level else 0.0
    return CliffPrediction(vol, cliff, se, min(demand, cap), after, demand)
