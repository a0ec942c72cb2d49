"""Closed forms under constant demand: what a closed loop reaches on a volume and how long a
burst bucket lasts (AWS's gp2 burst table).

Each is computed by the C++ core with the rules the engine steps with (counting, service time,
think time, limits), so a simulated run agrees with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

from . import _core, _repr
from ._units import a_an, flag, real
from .recording import BOUND_NAMES
from .volumes import Volume
from .workloads import ClosedLoop, Idle, OpenLoop, PiecewiseOpenLoop, Workload

__all__ = ["ClosedLoopRate", "burst_duration_s", "cliff_time_s", "closed_loop_rate", "counted_iops", "refill_time_s"]


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


@dataclass(frozen=True)
class ClosedLoopRate:
    """The steady state of a closed loop on one volume alone (no instance limit)."""

    offered_iops: float
    """I/Os per second the loop asks for when nothing holds it back: in_flight / (service time + think time)."""
    iops: float
    """Application I/Os completed per second."""
    ebs_iops: float
    """EBS-counted operations per second (what the bucket spends)."""
    throughput_mib_s: float
    latency_ms: float
    """Mean latency: Little's law over each user's cycle, in_flight / iops - think time."""
    bound: str
    """What held it back: ``demand`` (nothing), ``volume_iops`` or ``volume_throughput``."""

    def _rows(self) -> List[Tuple[str, str]]:
        return [
            ("served", f"{_repr.number(self.iops, 'IOPS')} of {_repr.number(self.offered_iops)} offered"),
            ("EBS-counted", _repr.number(self.ebs_iops, "IOPS")),
            ("throughput", _repr.number(self.throughput_mib_s, "MiB/s")),
            ("mean latency", _repr.latency(self.latency_ms)),
            ("held back by", "nothing" if self.bound == "demand" else self.bound),
        ]

    def __repr__(self) -> str:
        return _repr.short_repr("ClosedLoopRate", [f"{k} {v}" if k != "served" else v for k, v in self._rows()])

    def _repr_html_(self) -> str:
        return _repr.html_table("ClosedLoopRate", self._rows())


def _closed_loop(volume: Volume, workload: Workload, what: str) -> ClosedLoop:
    if not isinstance(volume, Volume):
        raise ValueError(f"volume must be an ebssim.Volume, got {type(volume).__name__}")
    if not isinstance(workload, ClosedLoop):
        raise ValueError(f"{what} takes a ClosedLoop workload, got {type(workload).__name__}")
    return workload


def closed_loop_rate(volume: Volume, workload: ClosedLoop, *, with_credits: bool = True) -> ClosedLoopRate:
    """What ``workload`` completes on ``volume`` alone, as the engine serves it in every step.

    ``min(offered, IOPS cap / counted ops per I/O, throughput cap / I/O size)``, with the caps
    while credits remain (``with_credits``, the default) or those of an empty bucket (the
    baseline). Types without a bucket have one set of caps. Think time counts: 4 users with 1 ms
    think time on a 100 GiB gp2 offer 4 / (0.504 ms + 1 ms) = 2,660 IOPS.
    """
    w = _closed_loop(volume, workload, "closed_loop_rate")
    r = _core.closed_loop_rate(volume._params, w._native, flag(with_credits, "with_credits"))
    return ClosedLoopRate(
        offered_iops=float(r.offered_iops),
        iops=float(r.iops),
        ebs_iops=float(r.counted_iops),
        throughput_mib_s=float(r.throughput_bytes_s) / 2**20,
        latency_ms=float(r.latency_s) * 1e3,
        bound=BOUND_NAMES[r.bound],
    )


def counted_iops(volume: Volume, workload: ClosedLoop, *, with_credits: bool = True) -> float:
    """EBS-counted operations per second a closed loop reaches on ``volume`` (no instance limit)."""
    return closed_loop_rate(volume, workload, with_credits=with_credits).ebs_iops


def cliff_time_s(volume: Volume, workload: Workload) -> Optional[float]:
    """When a workload drains ``volume``'s bucket, seconds from the start (None: never).

    A :class:`ClosedLoop`: ``burst_duration_s`` at its counted rate with credits, think time
    included; the same time a simulated run reports. :class:`Idle` never drains a bucket: None.
    A constant open loop, a :class:`PiecewiseOpenLoop` whose segments all have the same rate
    (or that has one): ``burst_duration_s`` at the counted rate it is served while credits last
    (what arrives above the burst caps queues; with ``max_in_flight``, at most that many I/Os per
    service time), None when its ``duration_s`` ends first. An :class:`OpenLoop` trace, or a
    piecewise one whose rate changes, has no constant rate: simulate it (ValueError).

    >>> import ebssim
    >>> ebssim.cliff_time_s(ebssim.gp2(100), ebssim.OpenLoop.piecewise([0], [1200], "4k"))
    6000.0

    (5.4e6 credits / (1,200 - 300) IOPS.)
    """
    if isinstance(workload, Idle):
        if not isinstance(volume, Volume):
            raise ValueError(f"volume must be an ebssim.Volume, got {type(volume).__name__}")
        return None
    if isinstance(workload, PiecewiseOpenLoop):
        if not isinstance(volume, Volume):
            raise ValueError(f"volume must be an ebssim.Volume, got {type(volume).__name__}")
        iops, nbytes = workload.iops, workload.bytes_per_s
        if (iops != iops[0]).any() or (nbytes != nbytes[0]).any():
            raise ValueError(
                f"cliff_time_s needs a constant demand (ClosedLoop, Idle, or a PiecewiseOpenLoop of one rate); "
                f"this PiecewiseOpenLoop's rate changes ({float(iops.min()):,.6g} to {float(iops.max()):,.6g} IOPS "
                f"over {iops.shape[0]} segments): simulate it and read VolumeResult.cliff_time_s"
            )
        d = float(
            _core.open_loop_cliff_time_s(
                volume._params,
                float(iops[0]),
                float(nbytes[0]),
                read_fraction=workload.read_fraction,
                sequential=workload.pattern == "sequential",
                service_time_s=workload._service_time_s,
                max_in_flight=workload._max_in_flight,
            )
        )
        if math.isinf(d) or (workload.duration_s is not None and d > workload.duration_s):
            return None
        return d
    if isinstance(workload, OpenLoop):
        raise ValueError(
            f"cliff_time_s needs a constant demand (ClosedLoop, Idle, or a PiecewiseOpenLoop of one rate); "
            f"{a_an(type(workload).__name__)} trace varies: simulate it and read VolumeResult.cliff_time_s"
        )
    w = _closed_loop(volume, workload, "cliff_time_s")
    d = float(_core.cliff_time_s(volume._params, w._native))
    return None if math.isinf(d) else d
