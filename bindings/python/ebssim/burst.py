"""Closed forms for burst buckets under constant demand (AWS's gp2 burst table)."""

from __future__ import annotations

import math
from typing import Optional

from . import _core
from ._units import real
from .volumes import Volume
from .workloads import ClosedLoop

__all__ = ["burst_duration_s", "refill_time_s", "cliff_time_s"]


def _credits(volume: Volume, burst_balance_pct: Optional[float], default: float) -> float:
    if burst_balance_pct is None:
        return default
    pct = real(burst_balance_pct, "burst_balance_pct", "a percentage")
    if not math.isfinite(pct) or not 0 <= pct <= 100:
        raise ValueError(f"burst_balance_pct={burst_balance_pct!r} must be between 0 and 100")
    return volume.credit_capacity * pct / 100.0


def _demand(volume: Volume, iops: float, burst_balance_pct: Optional[float]) -> float:
    """The checked arguments of a closed form, before any shortcut (a type without a bucket
    answers inf whatever the demand, which must not let a NaN or negative demand through)."""
    if not isinstance(volume, Volume):
        raise ValueError(f"volume={volume!r} must be an ebssim.Volume")
    v = real(iops, "iops", "a number of I/Os per second")
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"iops={iops!r} must be a finite number of EBS-counted I/Os per second >= 0")
    _credits(volume, burst_balance_pct, 0.0)
    return v


def burst_duration_s(volume: Volume, iops: float = 3000.0, *, burst_balance_pct: Optional[float] = None) -> float:
    """Seconds a volume can serve ``iops`` EBS-counted operations per second before its bucket empties.

    ``duration = credits / (min(iops, burst) - baseline)``; ``inf`` when the demand never
    drains the bucket. Starts from the volume's initial balance unless ``burst_balance_pct``
    is given. A 100 GiB gp2 volume at 3,000 IOPS: 5.4e6 / (3,000 - 300) = 2,000 s.
    """
    demand = _demand(volume, iops, burst_balance_pct)
    if volume.credit_capacity <= 0:
        return math.inf
    credits = _credits(volume, burst_balance_pct, volume.initial_credits)
    return float(_core.burst_duration_s(volume._params, demand, credits))


def refill_time_s(volume: Volume, iops: float = 0.0, *, burst_balance_pct: float = 0.0) -> float:
    """Seconds for the bucket to fill from ``burst_balance_pct`` (default empty) while serving ``iops``.

    ``(capacity - credits) / (baseline - iops)``; a 100 GiB gp2 at rest: 5.4e6 / 300 = 18,000 s.
    """
    demand = _demand(volume, iops, burst_balance_pct)
    if volume.credit_capacity <= 0:
        return math.inf
    credits = _credits(volume, burst_balance_pct, 0.0)
    return float(_core.refill_time_s(volume._params, demand, credits))


def counted_iops(volume: Volume, workload: ClosedLoop, *, with_credits: bool = True) -> float:
    """EBS-counted operations per second a closed loop reaches on ``volume`` (no instance limit)."""
    io = workload.io_bytes
    st = workload.service_time_ms / 1e3 if workload.service_time_ms is not None else volume.service_time_s(io)
    per = _core.counted_ops_per_io(io, volume.io_unit_bytes, workload.pattern == "sequential")
    iops_cap = volume.max_iops if with_credits else volume.baseline_iops
    tput = (volume.max_throughput_mib_s if with_credits else volume.baseline_throughput_mib_s) * 2**20
    return min(workload.in_flight / st * per, iops_cap, tput / io * per)


def cliff_time_s(volume: Volume, workload: ClosedLoop) -> Optional[float]:
    """When a closed loop drains ``volume``'s bucket, seconds from the start (None: never)."""
    d = burst_duration_s(volume, counted_iops(volume, workload))
    return None if math.isinf(d) else d
