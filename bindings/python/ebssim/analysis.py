"""What happened in a run: every cliff, the time each limit bound, the time above a latency,
the demand offered and the backlog.

The results expose these as properties and methods (``r.cliffs``, ``r.bound_s``,
``r.time_above_latency(20)``, ``r.offered_iops``, ``r.backlog_ops``); the functions here are
what they call. The engine records when buckets ran dry and how long each limit bound
(always, also with ``record=False``); the rest reads the per-step series.

A 100 GiB gp2 volume under 32 x 4 KiB reads bursts for 5.4e6 / (3,000 - 300) = 2,000 s, then
holds 300 IOPS at 32 / 300 = 106.7 ms:

>>> import ebssim
>>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
>>> (cliff,) = r.cliffs
>>> print(cliff)
BurstBalance empty from 2,000 s (33.3 min) to the end of the run (still empty): 11.7 min,
bound by volume_iops at 300 IOPS
>>> r.bound_s["volume_iops"], r.time_above_latency(20)   # seconds
(2700.0, 700.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _repr
from ._core import VolumeTotals
from ._units import real
from .latency import check_latency_at

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import TypeGuard

    from ._core import CliffEpisode
    from .results import InstanceResult, VolumeResult

__all__ = [
    "Cliff",
    "Span",
    "cliffs",
    "cliff_count",
    "first_cliff_s",
    "bound_seconds",
    "time_above_latency",
    "spans_above_latency",
    "bound_spans",
    "offered_iops",
    "BUCKET_NAMES",
]

FloatArray = npt.NDArray[np.float64]

#: The buckets whose episodes :func:`cliffs` reports, by the name CloudWatch gives their balance.
BUCKET_NAMES = ("BurstBalance", "EBSIOBalance", "EBSByteBalance")


@dataclass(frozen=True)
class Cliff:
    """One stretch of a run in which a credit bucket was empty: what :attr:`VolumeResult.cliffs`
    and :attr:`InstanceResult.cliffs` list. Times are simulated seconds, like ``time_s``."""

    start_s: float
    """When the bucket ran dry (interpolated inside the step); the run's start when the run
    started with it empty under demand that spends faster than it earns."""
    end_s: Optional[float]
    """When it held credits again (the start of the first step that ended with some); None when it
    was still empty at the end of the run."""
    duration_s: float
    """``end_s - start_s``, or up to the end of the run while still empty."""
    bucket: str
    """``BurstBalance`` (the volume's), ``EBSIOBalance`` or ``EBSByteBalance`` (the instance's)."""
    limit: str
    """The limit that held the I/O back during the episode, from :data:`ebssim.BOUND_NAMES`:
    the one bound in most of its steps (``demand`` if none did, e.g. a demand that only matched
    what the bucket earns)."""
    iops: float
    """Mean IOPS served during the episode (the application's I/Os for a volume, EBS-counted
    operations of all volumes for an instance); NaN when the run has no series."""
    offered_iops: float
    """Mean I/Os per second that arrived during the episode (an open loop's; NaN for a closed
    loop, which adapts to what it is served, for an instance, and without series)."""

    def __getitem__(self, key: str) -> object:
        if key not in self.__dataclass_fields__:
            raise KeyError(f"{key!r} is not a field of Cliff; fields: {', '.join(self.__dataclass_fields__)}")
        return getattr(self, key)

    def __str__(self) -> str:
        end = "the end of the run (still empty)" if self.end_s is None else _repr.when(self.end_s)
        held = "no limit bound" if self.limit == "demand" else f"bound by {self.limit}"
        text = (
            f"{self.bucket} empty from {_repr.when(self.start_s)} to {end}: {_repr.duration(self.duration_s)}, {held}"
        )
        if not math.isnan(self.iops):
            text += f" at {_repr.number(self.iops, 'IOPS')}"
            if not math.isnan(self.offered_iops):
                text += f" ({_repr.number(self.offered_iops)} arriving)"
        return text

    def __repr__(self) -> str:
        return _repr.short_repr("Cliff", [str(self)])

    def _repr_html_(self) -> str:
        end = "still empty at the end of the run" if self.end_s is None else _repr.when(self.end_s)
        rows = [
            ("empty from", _repr.when(self.start_s)),
            ("to", end),
            ("for", _repr.duration(self.duration_s)),
            ("held back by", "no limit" if self.limit == "demand" else self.limit),
            ("served", _repr.number(self.iops, "IOPS")),
        ]
        if not math.isnan(self.offered_iops):
            rows.append(("arriving", _repr.number(self.offered_iops, "IOPS")))
        return _repr.html_table(f"Cliff: {self.bucket} empty", rows)


@dataclass(frozen=True)
class Span:
    """A stretch of simulated time ``[start_s, end_s)`` in which something held (see
    :func:`spans_above_latency`, :func:`bound_spans`)."""

    start_s: float
    end_s: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def __repr__(self) -> str:
        return _repr.short_repr(
            "Span", [f"{_repr.when(self.start_s)} to {_repr.when(self.end_s)}: {_repr.duration(self.duration_s)}"]
        )

    def _repr_html_(self) -> str:
        rows = [
            ("from", _repr.when(self.start_s)),
            ("to", _repr.when(self.end_s)),
            ("for", _repr.duration(self.duration_s)),
        ]
        return _repr.html_table("Span", rows)


def _is_volume(r: Union["VolumeResult", "InstanceResult"]) -> "TypeGuard[VolumeResult]":
    """True for a volume's result, False for an instance's. Told apart by their totals (the core's
    types), not by the result classes: their properties call this module, which therefore does
    not import theirs."""
    return isinstance(r.totals, VolumeTotals)


def _has_series(r: Union["VolumeResult", "InstanceResult"], *names: str) -> bool:
    """True when ``names`` were recorded at every step (or the run has no steps)."""
    return r.n_steps == 0 or (r.record_every == 1 and all(n in r.recorded for n in names))


def _need_series(r: Union["VolumeResult", "InstanceResult"], what: str, *names: str) -> None:
    from .recording import _need_per_step

    _need_per_step(r, what, *names)


def offered_iops(r: "VolumeResult") -> FloatArray:
    """I/Os per second the workload offered in each step: an open loop's arrivals per second, a
    closed loop's unthrottled rate ``in_flight / (service time + think time)`` (the core's rule,
    :func:`ebssim.closed_loop_rate`), 0 at rest. Empty without series; recorded every so many
    steps, the mean over each interval, like ``iops``."""
    per_step = _offered_per_step(r, r.n_steps if r.recorded else 0)
    m = r.record_every
    if m == 1 or per_step.shape[0] == 0:
        return per_step
    starts = np.arange(0, per_step.shape[0], m)
    counts = np.minimum(m, per_step.shape[0] - starts)
    return np.add.reduceat(per_step, starts) / counts  # type: ignore[no-any-return]


def _offered_per_step(r: "VolumeResult", n: int) -> FloatArray:
    from .burst import closed_loop_rate
    from .workloads import ClosedLoop, OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop

    w = r.workload
    if isinstance(w, OpenLoop):
        return np.asarray(w.ops[:n], dtype=np.float64) / r.dt_s
    if isinstance(w, PiecewiseOpenLoop):
        return w.per_step(r.dt_s, n)[0] / r.dt_s
    if isinstance(w, ClosedLoop):
        return np.full(n, closed_loop_rate(r.volume, w).offered_iops)
    if isinstance(w, PhasedClosedLoop) and n:
        # Each distinct (users, think time) asks the core once: the rule stays in one place.
        pairs = np.column_stack([w.in_flight, np.asarray(w.think_time_ms)])
        uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
        rates = [
            closed_loop_rate(
                r.volume,
                ClosedLoop(u, w.io_size, w.read_fraction, w.pattern, w.service_time_ms, z, w.counted_per_io),
            ).offered_iops
            if u > 0
            else 0.0
            for u, z in uniq
        ]
        return np.asarray(rates, dtype=np.float64)[inverse.ravel()]
    return np.zeros(n)


def _default_limit(r: Union["VolumeResult", "InstanceResult"], bucket: str) -> str:
    if bucket == "EBSIOBalance":
        return "instance_iops"
    if bucket == "EBSByteBalance":
        return "instance_throughput"
    assert _is_volume(r)
    # st1 and sc1 buckets hold MiB: what runs out is throughput; gp2 and standard count I/Os.
    return "volume_throughput" if r.volume.type in ("st1", "sc1") else "volume_iops"


def _step_range(r: Union["VolumeResult", "InstanceResult"], start_s: float, end_s: float) -> Tuple[int, int]:
    """Indices of the steps that overlap [start_s, end_s)."""
    n = r.series.bound.shape[0]
    i0 = int(math.floor((start_s - r.t0_s) / r.dt_s + 1e-9))
    i1 = int(math.ceil((end_s - r.t0_s) / r.dt_s - 1e-9))
    i0 = min(max(i0, 0), n)
    return i0, min(max(i1, i0 + 1), n)


def _episodes(r: Union["VolumeResult", "InstanceResult"], raw: Sequence["CliffEpisode"], bucket: str) -> List[Cliff]:
    from .recording import BOUND_NAMES
    from .workloads import OpenLoop, PiecewiseOpenLoop

    run_end = r.t0_s + r.n_steps * r.dt_s
    out = []
    # The limit and IOPS of an episode come from the per-step bound and iops; recorded without
    # them, or every so many steps, they follow the bucket as with record=False.
    recorded = _has_series(r, "bound", "iops") and r.n_steps > 0
    offered_all: Optional[FloatArray] = None  # the run's offered IOPS, computed once
    for ep in raw:
        end = None if math.isnan(ep.end_s) else float(ep.end_s)
        stop = run_end if end is None else end
        limit = _default_limit(r, bucket)
        iops = offered = math.nan
        if recorded:
            i0, i1 = _step_range(r, ep.start_s, stop)
            counts = np.bincount(r.series.bound[i0:i1], minlength=len(BOUND_NAMES))
            counts[0] = 0  # "demand" is not a limit
            if counts.any():
                limit = BOUND_NAMES[int(counts.argmax())]
            elif i1 > i0:
                limit = "demand"
            iops = float(r.series.iops[i0:i1].mean()) if i1 > i0 else math.nan
            if _is_volume(r) and isinstance(r.workload, (OpenLoop, PiecewiseOpenLoop)) and i1 > i0:
                if offered_all is None:
                    offered_all = offered_iops(r)
                offered = float(offered_all[i0:i1].mean())
        out.append(Cliff(float(ep.start_s), end, stop - float(ep.start_s), bucket, limit, iops, offered))
    return out


def _rule(merge_gap_s: Optional[float], min_duration_s: Optional[float]) -> Dict[str, float]:
    """The cliff rule's parameters given (None: the core's default, CliffRule in totals.hpp)."""
    out = {}
    if merge_gap_s is not None:
        out["merge_gap_s"] = real(merge_gap_s, "merge_gap_s", "a number of seconds")
    if min_duration_s is not None:
        out["min_duration_s"] = real(min_duration_s, "min_duration_s", "a number of seconds")
    return out


def _merged(
    r: Union["VolumeResult", "InstanceResult"],
    merge_gap_s: Optional[float] = None,
    min_duration_s: Optional[float] = None,
) -> List[Tuple[str, Sequence["CliffEpisode"]]]:
    """Each bucket's cliffs under the rule (the core's ``merge_cliffs``), by bucket name."""
    from ._core import merge_cliffs

    rule = _rule(merge_gap_s, min_duration_s)
    totals = r.totals
    if isinstance(totals, VolumeTotals):  # a volume's result (_is_volume)
        raw = [("BurstBalance", totals.cliffs)]
    else:
        raw = [("EBSIOBalance", totals.io_cliffs), ("EBSByteBalance", totals.bytes_cliffs)]
    return [(bucket, merge_cliffs(eps, r.dt_s, **rule) if eps else ()) for bucket, eps in raw]


def first_cliff_s(r: Union["VolumeResult", "InstanceResult"]) -> Optional[float]:
    """When the first cliff of :func:`cliffs` started (None: no cliff), without building them."""
    starts = [float(eps[0].start_s) for _, eps in _merged(r) if eps]
    return min(starts) if starts else None


def cliff_count(r: Union["VolumeResult", "InstanceResult"]) -> int:
    """How many cliffs :func:`cliffs` lists, without building them."""
    return sum(len(eps) for _, eps in _merged(r))


def cliffs(
    r: Union["VolumeResult", "InstanceResult"],
    *,
    merge_gap_s: Optional[float] = None,
    min_duration_s: Optional[float] = None,
) -> Tuple[Cliff, ...]:
    """Every cliff of the run, in order of start: a stretch in which a credit bucket was empty.

    A volume reports its own bucket (``BurstBalance``; none for gp3, io1, io2); an instance
    its ``EBSIOBalance`` and ``EBSByteBalance`` buckets. The engine records every episode in
    which a bucket was empty (``totals.cliffs``); a cliff is made of them by one rule
    (docs/model.md, "Cliffs"; the core's ``merge_cliffs``), the same for results, plots and
    capacity plans: episodes apart by at most ``merge_gap_s`` of credits in the bucket (default:
    300 s, or two steps when that is longer) are one cliff; then a cliff that ended less than
    ``min_duration_s`` (default 60 s) after it started is none. ``merge_gap_s=0,
    min_duration_s=0`` lists the episodes as the engine recorded them.

    Cliffs are per run: one that goes on into the next run of the same Simulation ends this
    run's list with ``end_s=None`` (kept however short), and the next run's starts at its own
    start if its demand keeps the bucket empty. Recorded by the engine also with
    ``record=False`` (``limit`` then follows the bucket and ``iops`` is NaN).
    """
    eps: List[Cliff] = []
    for bucket, merged in _merged(r, merge_gap_s, min_duration_s):
        eps += _episodes(r, merged, bucket)
    return tuple(sorted(eps, key=lambda c: c.start_s))


def bound_seconds(r: Union["VolumeResult", "InstanceResult"]) -> Dict[str, float]:
    """Simulated seconds spent in each bound of :data:`ebssim.BOUND_NAMES` (steps x dt; also
    with ``record=False``). ``demand`` is the time nothing held the I/O back."""
    from .recording import BOUND_NAMES

    return {name: n * r.dt_s for name, n in zip(BOUND_NAMES, r.totals.steps_bound)}


def _threshold(ms: float, field: str = "ms") -> float:
    v = real(ms, field, "a latency in ms")
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{field}={ms!r} must be a finite latency in ms >= 0")
    return v


def _spans(mask: npt.NDArray[np.bool_], t0: float, dt: float) -> List[Span]:
    """The runs of True in a per-step mask as [start, end) spans of simulated time."""
    if mask.size == 0:
        return []
    edges = np.diff(mask.astype(np.int8), prepend=0, append=0)
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return [Span(t0 + dt * float(a), t0 + dt * float(b)) for a, b in zip(starts, ends)]


def time_above_latency(r: "VolumeResult", ms: float) -> float:
    """Simulated seconds in which the mean latency of the I/Os completed was above ``ms``.

    Steps in which nothing completed (latency NaN) do not count. Needs the per-step series.
    """
    threshold = _threshold(ms)
    _need_series(r, "time_above_latency", "latency_s")
    above = np.greater(r.latency_s, threshold / 1e3, where=~np.isnan(r.latency_s), out=np.zeros(r.n_steps, bool))
    return float(np.count_nonzero(above)) * r.dt_s


def spans_above_latency(r: "VolumeResult", ms: float, *, at: str = "arrival") -> List[Span]:
    """The stretches of the run with mean latency above ``ms``, in order (see :func:`time_above_latency`);
    ``at="device"``: its device latency (:attr:`~ebssim.VolumeResult.device_latency_s`)."""
    threshold = _threshold(ms)
    check_latency_at(at)
    _need_series(r, "spans_above_latency", "latency_s")
    lat = np.asarray(r.latency_s if at == "arrival" else r.device_latency_s, dtype=np.float64)
    above = np.greater(lat, threshold / 1e3, where=~np.isnan(lat), out=np.zeros(r.n_steps, bool))
    return _spans(above, r.t0_s, r.dt_s)


def bound_spans(r: Union["VolumeResult", "InstanceResult"], *limits: str) -> List[Span]:
    """The stretches of the run in which one of ``limits`` (names of :data:`ebssim.BOUND_NAMES`)
    held the I/O back, in order. Needs the per-step series."""
    from .recording import BOUND_NAMES

    for name in limits:
        if name not in BOUND_NAMES:
            raise ValueError(f"limit {name!r} is not one of {', '.join(BOUND_NAMES)}")
    _need_series(r, "bound_spans", "bound")
    codes = [BOUND_NAMES.index(name) for name in limits]
    return _spans(np.isin(r.series.bound, codes), r.t0_s, r.dt_s)
