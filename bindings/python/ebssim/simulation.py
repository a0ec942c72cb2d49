"""Running simulations and reading their results."""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Dict,
    Generic,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    cast,
    overload,
)

import numpy as np
import numpy.typing as npt

from . import _core, _limits, _repr
from ._core import CliffEpisode, InstanceSeries, InstanceTotals, VolumeSeries, VolumeTotals
from ._units import flag, integer, real
from .instances import Instance, _resolve_instance
from .latency import SERVICE_TIME_SHAPE, latency_quantiles
from .recording import (
    BOUND_NAMES,
    DEFAULT_INSTANCE_SERIES,
    DEFAULT_VOLUME_SERIES,
    INSTANCE_SERIES,
    VOLUME_SERIES,
    Recording,
    _need_per_step,
    resolve,
)
from .volumes import Volume
from .workloads import ClosedLoop, Idle, OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop, Workload, _dt, _steps

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .analysis import Cliff

__all__ = [
    "simulate",
    "Simulation",
    "VolumeResult",
    "RunResult",
    "InstanceResult",
    "BOUND_NAMES",
    "VolumeTotals",
    "InstanceTotals",
    "VolumeSeries",
    "InstanceSeries",
    "CliffEpisode",
    "WindowStats",
    "VolumeSummary",
]

FloatArray = npt.NDArray[np.float64]
#: A recorded series: float64, or float32 when recorded with ``Recording(dtype="float32")``.
SeriesArray = npt.NDArray[np.floating[Any]]


def _time_axis(t0_s: float, dt_s: float, n: int) -> FloatArray:
    return t0_s + dt_s * np.arange(n, dtype=np.float64)


def _first_step(t0_s: float, dt_s: float, n: int, x: float) -> int:
    """The first step ``k`` of ``_time_axis(t0_s, dt_s, n)`` that starts at or after ``x`` (``n``:
    none does), as ``searchsorted(..., side="left")`` finds it, without the array: the estimate
    is moved onto the axis's own float values."""
    k = min(max(0, math.ceil((x - t0_s) / dt_s)), n)
    while k > 0 and t0_s + dt_s * (k - 1) >= x:
        k -= 1
    while k < n and t0_s + dt_s * k < x:
        k += 1
    return k


_Array = TypeVar("_Array", bound="np.ndarray[Any, Any]")


def _frozen(a: _Array) -> _Array:
    """``a``, read-only: a result's arrays are its record of the run, not scratch space (a write
    would change what every later read of the result, its summary and its plots see)."""
    a.flags.writeable = False
    return a


def _freeze_series(series: Any, names: Tuple[str, ...]) -> None:
    """Make every array of a compiled run's series read-only, in place. The engine's own buffers
    are the result's alone; a caller's buffer (``Recording(out=...)``) was handed to the engine
    as a view (:meth:`Simulation.run`), so only that view is frozen and the caller's array stays
    writeable (to stream the next chunk into)."""
    for name in names:
        getattr(series, name).flags.writeable = False


def _series(r: Union["VolumeResult", "InstanceResult"], name: str) -> Any:
    """The recorded array of series ``name``: empty when the run was not recorded; a ValueError
    when it was, without this series."""
    a = getattr(r.series, name)
    if r.recorded and name not in r.recorded:
        raise ValueError(
            f"{name} was not recorded: this result records {', '.join(r.recorded)} (Recording(series=...))"
        )
    return a


_V = TypeVar("_V", covariant=True)


class _Record(Generic[_V]):
    """Base of the frozen dataclasses that results return: ``record["field"]`` reads
    ``record.field``, as these results were dicts before. They are records, not mappings:
    ``dataclasses.asdict(record)`` makes a dict, and pandas reads a list of them as rows
    (``pd.DataFrame([w1, w2])``)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[Dict[str, object]]  # set by @dataclass on each subclass
    # Not iterable: __getitem__ alone would let Python iterate a record by index (record[0]).
    __iter__ = None

    def __getitem__(self, key: str) -> _V:
        if key not in self.__dataclass_fields__:
            fields = ", ".join(self.__dataclass_fields__)
            raise KeyError(f"{key!r} is not a field of {type(self).__name__}; fields: {fields}")
        return cast(_V, getattr(self, key))


@dataclass(frozen=True, eq=True)
class WindowStats(_Record[float]):
    """A stretch of one volume's run: what :meth:`VolumeResult.window` returns."""

    iops: float
    """Mean application IOPS over the steps in the window (at least one: :meth:`VolumeResult.window`)."""
    throughput_mib_s: float
    """Mean throughput, MiB/s."""
    latency_ms: float
    """Mean latency of the I/Os completed in the window, weighted by I/O (NaN: none completed)."""


@dataclass(frozen=True, eq=True)
class VolumeSummary(_Record[object]):
    """One volume's run in a few numbers: what :meth:`VolumeResult.summary` returns."""

    volume: str
    """The volume, as ``str(Volume)`` prints it."""
    workload: str
    """The workload, as ``str(workload)`` prints it."""
    mean_iops: float
    """Application I/Os completed per second over the run."""
    mean_latency_ms: float
    """Mean latency over the run, weighted by the I/Os that completed (NaN: none did)."""
    cliff_time_s: Optional[float]
    """When the bucket first ran dry, simulated seconds (None: it never did)."""
    burst_balance_end_pct: Optional[float]
    """BurstBalance at the end (None for types without a bucket)."""
    throttled_fraction: Dict[str, float]
    """Share of the steps spent in each bound, keyed by :data:`BOUND_NAMES`."""
    backlog_ops_end: float
    """I/Os still queued at the end of the run (open loop)."""
    cliff_count: int
    """Episodes in which the credit bucket was empty (:attr:`VolumeResult.cliffs`)."""
    bucket_empty_s: float
    """Simulated seconds with the credit bucket empty, all episodes together."""
    bound_s: Dict[str, float]
    """Simulated seconds in each bound, keyed by :data:`BOUND_NAMES`."""
    instance_bound_s: float
    """Simulated seconds in which the instance's budget held the volume back (0 without one)."""
    instance_cliff_time_s: Optional[float]
    """When an instance bucket (EBSIOBalance%, EBSByteBalance%) first ran dry (None: never, or no instance)."""

    def __str__(self) -> str:
        lines = [f"{self.volume} under {self.workload}"]
        lines.append(
            f"  {_repr.number(self.mean_iops, 'IOPS')} mean, {_repr.latency(self.mean_latency_ms)} mean latency"
        )
        if self.cliff_time_s is None:
            bucket = "no credit bucket" if self.burst_balance_end_pct is None else "the credit bucket never ran dry"
            lines.append(f"  {bucket}")
        else:
            lines.append(
                f"  {self.cliff_count} cliff{'s' * (self.cliff_count != 1)}, the first at "
                f"{_repr.when(self.cliff_time_s)}; bucket empty {_repr.duration(self.bucket_empty_s)} in all"
            )
        if self.burst_balance_end_pct is not None:
            lines.append(f"  BurstBalance {self.burst_balance_end_pct:.1f} % at the end")
        total = sum(self.bound_s.values())
        held = [(k, v) for k, v in self.bound_s.items() if k != "demand" and v > 0]
        if held:
            parts = ", ".join(f"{k} {_repr.duration(v)} ({v / total:.0%})" for k, v in held)
            lines.append(f"  held back by: {parts}")
        else:
            lines.append("  never held back by a limit")
        if self.instance_cliff_time_s is not None:
            lines.append(f"  instance balance ran dry at {_repr.when(self.instance_cliff_time_s)}")
        if self.backlog_ops_end > 0:
            lines.append(f"  {_repr.number(self.backlog_ops_end)} I/Os still queued at the end")
        return "\n".join(lines)


class _RecordedAxis:
    """The time axis of a result's recorded series, for VolumeResult and InstanceResult (the
    dataclasses that set these attributes)."""

    t0_s: float
    dt_s: float
    n_steps: int
    record_every: int
    recorded: Tuple[str, ...]

    @property
    def record_every_s(self) -> float:
        """Seconds per recorded value (``dt_s`` unless recorded with ``Recording(every_s=...)``)."""
        return self.record_every * self.dt_s

    @property
    def n_values(self) -> int:
        """Values per recorded series: ``ceil(n_steps / record_every)`` (0 with ``record=False``)."""
        return -(-self.n_steps // self.record_every) if self.recorded else 0

    @property
    def time_s(self) -> FloatArray:
        """Start of each recorded step (interval, with ``Recording(every_s=...)``), simulated
        seconds since the Simulation started."""
        return _frozen(_time_axis(self.t0_s, self.record_every_s, self.n_values))


@dataclass(frozen=True)
class VolumeResult(_RecordedAxis):
    """The outputs of one volume over one run: per-step numpy arrays (one entry per step, read
    from :attr:`series` without a copy) and the run's :attr:`totals`.

    ``time_s[k]`` is the start of step ``k``; rates are averages over the step.
    """

    volume: Volume
    workload: Workload
    t0_s: float
    """Simulated time at the start of the run, seconds."""
    dt_s: float
    """The step, seconds."""
    n_steps: int
    """Steps in the run (the arrays are empty when the run was not recorded)."""
    series: VolumeSeries
    """The per-step arrays, also read below as :attr:`iops`, :attr:`credits`, ... (empty when
    the run was not recorded)."""
    totals: VolumeTotals
    """Totals over the run (always computed): served ops and bytes, backlog, credits at the end, ..."""
    instance: Optional["InstanceResult"] = None
    """The run of the instance the volume is attached to (shared with the other volumes on it);
    None without an instance."""
    record_every: int = 1
    """Steps per recorded value (``Recording(every_s=...)`` / ``dt``; 1: one value per step)."""
    recorded: Tuple[str, ...] = DEFAULT_VOLUME_SERIES
    """The series this result recorded (empty: ``record=False``, totals only)."""

    @property
    def iops(self) -> SeriesArray:
        """Application I/Os completed per second."""
        return _series(self, "iops")  # type: ignore[no-any-return]

    @property
    def ebs_iops(self) -> SeriesArray:
        """EBS-counted operations per second (256 KiB units on SSD, 1 MiB on HDD)."""
        return _series(self, "ebs_iops")  # type: ignore[no-any-return]

    @property
    def throughput_mib_s(self) -> SeriesArray:
        """MiB/s completed."""
        return _series(self, "throughput_mib_s")  # type: ignore[no-any-return]

    @property
    def credits(self) -> SeriesArray:
        """Burst credits at the end of each step (I/O credits; MiB on st1 and sc1)."""
        return _series(self, "credits")  # type: ignore[no-any-return]

    @property
    def latency_s(self) -> SeriesArray:
        """Mean latency of the I/Os completed in the step (NaN where none completed)."""
        return _series(self, "latency_s")  # type: ignore[no-any-return]

    @property
    def bound(self) -> npt.NDArray[np.uint8]:
        """Which limit held the volume back: index into :data:`BOUND_NAMES`."""
        return _series(self, "bound")  # type: ignore[no-any-return]

    @property
    def iops_max(self) -> SeriesArray:
        """Largest step :attr:`iops` of each interval (only when named in ``Recording(series=...)``)."""
        return _series(self, "iops_max")  # type: ignore[no-any-return]

    @property
    def latency_max_s(self) -> SeriesArray:
        """Largest step :attr:`latency_s` of each interval among the steps that completed I/O (NaN
        where none did; only when named in ``Recording(series=...)``)."""
        return _series(self, "latency_max_s")  # type: ignore[no-any-return]

    @property
    def credits_min(self) -> SeriesArray:
        """Lowest :attr:`credits` at the end of a step of each interval (only when named in
        ``Recording(series=...)``)."""
        return _series(self, "credits_min")  # type: ignore[no-any-return]

    @property
    def backlog_max(self) -> SeriesArray:
        """Largest :attr:`backlog_ops` at the end of a step of each interval (only when named in
        ``Recording(series=...)``)."""
        return _series(self, "backlog_max")  # type: ignore[no-any-return]

    @property
    def queue_length(self) -> SeriesArray:
        """Mean I/Os outstanding (waiting + in service): by Little's law, latency x completion rate."""
        iops, latency = self.iops, self.latency_s
        out: SeriesArray = np.zeros_like(iops)
        np.multiply(latency, iops, out=out, where=iops > 0)
        return _frozen(out)

    @property
    def latency_ms(self) -> SeriesArray:
        """:attr:`latency_s` in ms."""
        return _frozen(self.latency_s * 1e3)

    @property
    def backlog_ops(self) -> SeriesArray:
        """I/Os waiting at the end of each step (arrived, not completed, not in service): queued at
        the device, or held in the application above an open loop's ``max_in_flight``."""
        return _series(self, "backlog_ops")  # type: ignore[no-any-return]

    @property
    def offered_iops(self) -> FloatArray:
        """I/Os per second the workload offered in each step (an open loop's arrivals, a closed
        loop's unthrottled rate, 0 at rest): the demand next to what was served, :attr:`iops`."""
        from .analysis import offered_iops

        return _frozen(offered_iops(self))

    @property
    def cliffs(self) -> Tuple["Cliff", ...]:
        """Every episode of this run in which the credit bucket was empty, in order (each with its
        start, end, duration, the limit that bound and the IOPS served): see :mod:`ebssim.analysis`."""
        from .analysis import cliffs

        return cliffs(self)

    @property
    def bound_s(self) -> Dict[str, float]:
        """Simulated seconds spent in each bound, keyed by :data:`BOUND_NAMES` (``demand``: not held back)."""
        from .analysis import bound_seconds

        return bound_seconds(self)

    @property
    def instance_bound_s(self) -> float:
        """Simulated seconds in which the instance's EBS budget held this volume back."""
        b = self.bound_s
        return b["instance_iops"] + b["instance_throughput"]

    def time_above_latency(self, ms: float) -> float:
        """Simulated seconds in which the mean latency was above ``ms`` (needs the per-step series).

        >>> import ebssim
        >>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
        >>> r.time_above_latency(20)   # after the cliff at 2,000 s: 32 / 300 IOPS = 106.7 ms
        700.0
        """
        from .analysis import time_above_latency

        return time_above_latency(self, ms)

    @property
    def read_fraction(self) -> float:
        """Share of the I/Os that are reads (1 for Idle)."""
        return float(getattr(self.workload, "read_fraction", 1.0))

    # Replay (ebssim.trace): a trace with a per-step read/write split reports what was served of
    # each per step; other workloads split at their read_fraction.
    @functools.cached_property
    def _served_reads(self) -> Optional[Tuple[FloatArray, FloatArray]]:
        from .trace import served_reads

        split = served_reads(self)
        # Cached and handed out by every read of read_iops and read_mib_s: read-only.
        return None if split is None else (_frozen(split[0]), _frozen(split[1]))

    @property
    def read_iops(self) -> SeriesArray:
        split = self._served_reads
        return _frozen(self.iops * self.read_fraction) if split is None else split[0]

    @property
    def write_iops(self) -> SeriesArray:
        split = self._served_reads
        w = self.iops * (1.0 - self.read_fraction) if split is None else np.maximum(self.iops - split[0], 0.0)
        return _frozen(w)

    @property
    def read_mib_s(self) -> SeriesArray:
        split = self._served_reads
        return _frozen(self.throughput_mib_s * self.read_fraction) if split is None else split[1]

    @property
    def write_mib_s(self) -> SeriesArray:
        split = self._served_reads
        if split is None:
            return _frozen(self.throughput_mib_s * (1.0 - self.read_fraction))
        return _frozen(np.maximum(self.throughput_mib_s - split[1], 0.0))

    @property
    def burst_balance_pct(self) -> SeriesArray:
        """CloudWatch's BurstBalance: credits left as a percentage (NaN for types without a bucket)."""
        credits = self.credits
        cap = self.volume.credit_capacity
        if cap <= 0:
            return _frozen(np.full(credits.shape[0], np.nan, dtype=credits.dtype))
        return _frozen(credits * credits.dtype.type(100.0 / cap))

    @property
    def cliff_time_s(self) -> Optional[float]:
        """When the credit bucket first ran dry in this run (None: it never did), in simulated
        seconds since the Simulation started, like :attr:`time_s`. A bucket that starts empty
        under demand above baseline has its cliff at the start of the run."""
        t = self.totals.cliff_time_s
        return None if math.isnan(t) else t

    @property
    def burst_balance_end_pct(self) -> Optional[float]:
        """BurstBalance at the end of the run (None for types without a bucket)."""
        cap = self.volume.credit_capacity
        return self.totals.credits_end * 100.0 / cap if cap > 0 else None

    @property
    def mean_iops(self) -> float:
        return self.totals.served_ops / (self.n_steps * self.dt_s) if self.n_steps else math.nan

    @property
    def mean_latency_ms(self) -> float:
        """Mean latency over the run, weighted by the I/Os that completed."""
        ops = self.totals.served_ops
        return self.totals.latency_ops_s / ops * 1e3 if ops > 0 else math.nan

    @property
    def service_time_s(self) -> float:
        """Unloaded service time of this run's I/O (the workload's, else the volume's model)."""
        w = self.workload
        st_ms = getattr(w, "service_time_ms", None)
        if st_ms is not None:
            return float(st_ms) / 1e3
        if isinstance(w, (ClosedLoop, PhasedClosedLoop)):
            return self.volume.service_time_s(w.io_bytes)
        if isinstance(w, OpenLoop) and float(w.ops.sum()) > 0:
            return self.volume.service_time_s(float(w.bytes.sum()) / float(w.ops.sum()))
        if isinstance(w, PiecewiseOpenLoop):
            return self.volume.service_time_s(w.mean_io_bytes(self.n_steps * self.dt_s))
        return self.volume.service_time_s(0.0)

    def latency_percentiles(
        self, percentiles: Sequence[float] = (50, 90, 95, 99, 99.9), *, shape: float = SERVICE_TIME_SHAPE
    ) -> Dict[float, float]:
        """Latency percentiles in ms of the I/Os completed over the run.

        The model (docs/model.md): in each step an I/O waits the step's mean latency minus the
        service time, then takes a gamma-distributed service time (mean: the unloaded service
        time, ``shape`` 4: coefficient of variation 0.5); the run mixes the steps weighted by the
        I/Os each completes. A run throttled part of the time has its p50 near the service time
        and its high percentiles near the throttled latency.
        """
        _need_per_step(self, "latency_percentiles", "iops", "latency_s")
        if isinstance(percentiles, (numbers.Number, str)):
            raise ValueError(f"percentiles={percentiles!r} must be a sequence of numbers, e.g. (50, 99)")
        ps = [real(p, f"percentiles[{i}]") for i, p in enumerate(percentiles)]
        shape = real(shape, "shape")
        for p in ps:
            if not 0.0 <= p <= 100.0:
                raise ValueError(f"percentile {p!r} must be between 0 and 100")
        q = latency_quantiles(
            self.latency_s, self.iops * self.dt_s, self.service_time_s, np.array(ps) / 100.0, shape=shape
        )
        return {p: float(v) * 1e3 for p, v in zip(ps, q)}

    def window(self, start_s: float, end_s: float) -> WindowStats:
        """Mean IOPS, throughput and I/O-weighted mean latency for steps starting in [start_s, end_s).

        ``start_s`` and ``end_s`` are finite, in order, in simulated seconds like :attr:`time_s`,
        and at least one step of the run starts in the window: a window outside the run (or
        between two steps) is a ValueError naming the run's span, not NaN numbers. The latency
        is NaN where no I/O completed in the window. Recorded every ``every_s``, the window must
        cover whole intervals (its ends on the grid of :attr:`time_s`, or beyond the run); the
        means are then those of the steps.
        """
        if not self.recorded and self.n_steps > 0:
            raise ValueError("this result was run with record=False and has no per-step series")
        start = real(start_s, "start_s", "a time in seconds")
        end = real(end_s, "end_s", "a time in seconds")
        span = f"the run spans {self.t0_s:g} to {self.t0_s + self.n_steps * self.dt_s:g} s in steps of {self.dt_s:g} s"
        if not (math.isfinite(start) and math.isfinite(end)):
            raise ValueError(f"start_s={start_s!r}, end_s={end_s!r}: both must be finite times in seconds ({span})")
        if start > end:
            raise ValueError(f"start_s={start_s!r} is after end_s={end_s!r} ({span})")
        # The steps that start in [start, end): k0 <= k < k1.
        k0, k1 = (_first_step(self.t0_s, self.dt_s, self.n_steps, x) for x in (start, end))
        if k0 >= k1:
            raise ValueError(
                f"window(start_s={start_s!r}, end_s={end_s!r}) holds no step: {span} "
                f"(a window holds the start of at least one step)"
            )
        if self.record_every == 1:
            # In float64 also when recorded in float32 (a float32 sum of a month loses digits).
            iops64 = np.asarray(self.iops[k0:k1], dtype=np.float64)
            ops = iops64 * self.dt_s
            done = ops > 0
            served = float(ops.sum())
            lat_s = np.asarray(self.latency_s[k0:k1], dtype=np.float64)
            lat = float((lat_s[done] * ops[done]).sum() / served) if served > 0 else math.nan
            tput = np.asarray(self.throughput_mib_s[k0:k1], dtype=np.float64)
            return WindowStats(iops=float(iops64.mean()), throughput_mib_s=float(tput.mean()), latency_ms=lat * 1e3)
        # Intervals: the steps starting in the window must be whole intervals; each interval's
        # mean counts for its steps (the last may be short), its latency for its I/Os.
        m = self.record_every
        if k0 % m or (k1 % m and k1 != self.n_steps):
            raise ValueError(
                f"window({start_s!r}, {end_s!r}) cuts an interval: this result was recorded every {m} steps "
                f"({self.record_every_s:g} s) from {self.t0_s:g} s, so the window's ends must be on that grid "
                f"(or record every step)"
            )
        j0, j1 = k0 // m, -(-k1 // m)
        n = np.minimum(m, self.n_steps - m * np.arange(j0, j1)).astype(np.float64)  # steps per interval
        iops = np.asarray(self.iops[j0:j1], dtype=np.float64)
        tput = np.asarray(self.throughput_mib_s[j0:j1], dtype=np.float64)
        lat_s = np.asarray(self.latency_s[j0:j1], dtype=np.float64)
        ops = iops * n
        done = ops > 0
        served = float(ops.sum())
        lat = float((lat_s[done] * ops[done]).sum() / served) if served > 0 else math.nan
        return WindowStats(
            iops=float(ops.sum() / n.sum()),
            throughput_mib_s=float((tput * n).sum() / n.sum()),
            latency_ms=lat * 1e3,
        )

    def summary(self) -> VolumeSummary:
        """The run in a few numbers."""
        steps = self.totals.steps_bound
        n = max(1, self.n_steps)
        eps = self.totals.cliffs
        return VolumeSummary(
            volume=str(self.volume),
            workload=str(self.workload),
            mean_iops=self.mean_iops,
            mean_latency_ms=self.mean_latency_ms,
            cliff_time_s=self.cliff_time_s,
            burst_balance_end_pct=self.burst_balance_end_pct,
            throttled_fraction={name: steps[i] / n for i, name in enumerate(BOUND_NAMES)},
            backlog_ops_end=self.totals.backlog_ops,
            cliff_count=len(eps),
            bucket_empty_s=self._bucket_empty_s(),
            bound_s=self.bound_s,
            instance_bound_s=self.instance_bound_s,
            instance_cliff_time_s=self.instance.cliff_time_s if self.instance is not None else None,
        )

    def _bucket_empty_s(self) -> float:
        """Simulated seconds with the credit bucket empty in this run, all episodes together."""
        run_end = self.t0_s + self.n_steps * self.dt_s
        return float(sum((run_end if math.isnan(e.end_s) else e.end_s) - e.start_s for e in self.totals.cliffs))

    def to_pandas(self) -> "pd.DataFrame":
        """A DataFrame with one column per output, indexed by ``time_s``, or, for a trace with a
        wall-clock ``start`` (:meth:`OpenLoop.from_pandas`), by a DatetimeIndex named ``time``."""
        import pandas as pd

        from .trace import time_index

        def bound() -> Any:
            return pd.Categorical.from_codes(self.bound.astype(np.int8), categories=pd.Index(BOUND_NAMES))

        columns: Dict[str, Any] = {}
        # A Recording of some series only, or every so many steps, has the columns it can give.
        for name, get in (
            ("iops", lambda: self.iops),
            ("ebs_iops", lambda: self.ebs_iops),
            ("throughput_mib_s", lambda: self.throughput_mib_s),
            ("read_iops", lambda: self.read_iops),
            ("write_iops", lambda: self.write_iops),
            ("read_mib_s", lambda: self.read_mib_s),
            ("write_mib_s", lambda: self.write_mib_s),
            ("credits", lambda: self.credits),
            ("burst_balance_pct", lambda: self.burst_balance_pct),
            ("queue_length", lambda: self.queue_length),
            ("backlog_ops", lambda: self.backlog_ops),
            ("latency_ms", lambda: self.latency_ms),
            ("bound", bound),
        ):
            try:
                columns[name] = get()
            except ValueError:
                continue
        # The extremes, where recorded (never in the default recording, nor with record=False).
        for name, series, get in (
            ("iops_max", "iops_max", lambda: self.iops_max),
            ("latency_max_ms", "latency_max_s", lambda: self.latency_max_s * 1e3),
            ("credits_min", "credits_min", lambda: self.credits_min),
            ("backlog_max", "backlog_max", lambda: self.backlog_max),
        ):
            if series in self.recorded:
                columns[name] = get()
        return pd.DataFrame(columns, index=time_index(self))

    def _cliff_text(self) -> str:
        eps = self.totals.cliffs
        if not eps:
            return "no cliff"
        first = f"cliff at {self.cliff_time_s:.0f} s"
        return first if len(eps) == 1 else f"{len(eps)} cliffs, the first at {self.cliff_time_s:.0f} s"

    def _instance_text(self) -> str:
        if self.instance is None:
            return ""
        held = self.instance_bound_s
        run = self.n_steps * self.dt_s
        share = f" ({held / run:.0%})" if run > 0 else ""
        text = f", instance-bound {_repr.duration(held)}{share}" if held > 0 else ", never instance-bound"
        if self.instance.cliff_time_s is not None:
            text += f", instance balance ran dry at {self.instance.cliff_time_s:.0f} s"
        return text

    def __repr__(self) -> str:
        return (
            f"<VolumeResult {self.volume}: {self.n_steps} steps of {self.dt_s:g} s, "
            f"{self.mean_iops:.0f} IOPS mean, {self.mean_latency_ms:.2f} ms mean latency, "
            f"{self._cliff_text()}{self._instance_text()}>"
        )

    def _repr_html_(self) -> str:
        return _repr.volume_result_html(self)


@dataclass(frozen=True)
class InstanceResult(_RecordedAxis):
    """The outputs of the instance the volumes share over one run: per-step numpy arrays (one
    entry per step, read from :attr:`series` without a copy) and the run's :attr:`totals`."""

    instance: Instance
    t0_s: float
    dt_s: float
    n_steps: int
    series: InstanceSeries
    """The per-step arrays, also read below as :attr:`iops`, ... (empty when the run was not recorded)."""
    totals: InstanceTotals
    """Totals over the run (always computed): served operations and bytes, buckets at the end, ..."""
    record_every: int = 1
    """Steps per recorded value (1: one value per step)."""
    recorded: Tuple[str, ...] = DEFAULT_INSTANCE_SERIES
    """The series this result recorded (empty: ``record=False``, totals only)."""

    @property
    def iops(self) -> SeriesArray:
        """EBS-counted operations per second over all attached volumes."""
        return _series(self, "iops")  # type: ignore[no-any-return]

    @property
    def throughput_mb_s(self) -> SeriesArray:
        """Decimal MB/s over all attached volumes."""
        return _series(self, "throughput_mb_s")  # type: ignore[no-any-return]

    @property
    def io_balance_pct(self) -> SeriesArray:
        """CloudWatch's EBSIOBalance% at the end of each step."""
        return _series(self, "io_balance_pct")  # type: ignore[no-any-return]

    @property
    def byte_balance_pct(self) -> SeriesArray:
        """CloudWatch's EBSByteBalance% at the end of each step."""
        return _series(self, "byte_balance_pct")  # type: ignore[no-any-return]

    @property
    def bound(self) -> npt.NDArray[np.uint8]:
        """demand, instance_iops or instance_throughput: index into :data:`BOUND_NAMES`."""
        return _series(self, "bound")  # type: ignore[no-any-return]

    @property
    def iops_max(self) -> SeriesArray:
        """Largest step :attr:`iops` of each interval (only when named in ``Recording(instance_series=...)``)."""
        return _series(self, "iops_max")  # type: ignore[no-any-return]

    @property
    def io_balance_min_pct(self) -> SeriesArray:
        """Lowest EBSIOBalance% at the end of a step of each interval (only when named in
        ``Recording(instance_series=...)``)."""
        return _series(self, "io_balance_min_pct")  # type: ignore[no-any-return]

    @property
    def byte_balance_min_pct(self) -> SeriesArray:
        """Lowest EBSByteBalance% at the end of a step of each interval (only when named in
        ``Recording(instance_series=...)``)."""
        return _series(self, "byte_balance_min_pct")  # type: ignore[no-any-return]

    @property
    def cliff_time_s(self) -> Optional[float]:
        """First time either instance bucket (I/O or bytes) ran dry in this run (None: never)."""
        ts = [self.totals.io_cliff_time_s, self.totals.bytes_cliff_time_s]
        ts = [t for t in ts if not math.isnan(t)]
        return min(ts) if ts else None

    @property
    def io_balance_end_pct(self) -> float:
        cap = float(self.instance._params.io_capacity)
        return self.totals.io_credits_end / cap * 100.0 if cap > 0 else 100.0

    @property
    def byte_balance_end_pct(self) -> float:
        cap = float(self.instance._params.bytes_capacity)
        return self.totals.bytes_credits_end / cap * 100.0 if cap > 0 else 100.0

    @property
    def cliffs(self) -> Tuple["Cliff", ...]:
        """Every episode of this run with EBSIOBalance% or EBSByteBalance% at 0, in order of start."""
        from .analysis import cliffs

        return cliffs(self)

    @property
    def bound_s(self) -> Dict[str, float]:
        """Simulated seconds in each bound (``demand``, ``instance_iops``, ``instance_throughput``)."""
        from .analysis import bound_seconds

        return bound_seconds(self)

    def to_pandas(self) -> "pd.DataFrame":
        import pandas as pd

        columns: Dict[str, Any] = {}
        for name in self.recorded if self.recorded else DEFAULT_INSTANCE_SERIES:
            a = getattr(self.series, name)
            if name == "bound":
                a = pd.Categorical.from_codes(a.astype(np.int8), categories=pd.Index(BOUND_NAMES))
            columns[name] = a
        return pd.DataFrame(columns, index=pd.Index(self.time_s, name="time_s"))

    def __repr__(self) -> str:
        cliff = self.cliff_time_s
        c = f"balance ran out at {cliff:.0f} s" if cliff is not None else "balance never ran out"
        b = self.bound_s
        held = b["instance_iops"] + b["instance_throughput"]
        run = self.n_steps * self.dt_s
        bound = f", binding {_repr.duration(held)} ({held / run:.0%} of the run)" if held > 0 and run > 0 else ""
        return f"<InstanceResult {self.instance}: {c}{bound}>"

    def _repr_html_(self) -> str:
        return _repr.instance_result_html(self)


class RunResult(Sequence[VolumeResult]):
    """The results of one run, one :class:`VolumeResult` per volume, and the instance's if any."""

    def __init__(self, results: List[VolumeResult], instance: Optional[InstanceResult] = None) -> None:
        self._results = results
        self.instance = instance

    @overload
    def __getitem__(self, i: int) -> VolumeResult: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[VolumeResult]: ...
    def __getitem__(self, i: Union[int, slice]) -> Union[VolumeResult, Sequence[VolumeResult]]:
        return self._results[i]

    def __len__(self) -> int:
        return len(self._results)

    def __iter__(self) -> Iterator[VolumeResult]:
        return iter(self._results)

    def to_pandas(self) -> "pd.DataFrame":
        """One long DataFrame: a ``volume`` column (position) plus every output column."""
        import pandas as pd

        frames = [r.to_pandas().reset_index().assign(volume=i) for i, r in enumerate(self._results)]
        return pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        inst = f",\n  {self.instance!r}" if self.instance is not None else ""
        return "RunResult([\n  " + ",\n  ".join(repr(r) for r in self._results) + inst + "\n])"

    def _repr_html_(self) -> str:
        return _repr.run_result_html(self)


class Simulation:
    """Volumes stepped together with a fixed step ``dt``. State (credits, backlog, clock) carries
    from one :meth:`run` to the next, so phases and rests are consecutive runs.

    ``instance`` attaches the volumes to an instance type (an :class:`Instance`, or a name from
    the shipped catalog) whose EBS budget they share. A type for which AWS publishes no EBS
    limits (not EBS-optimized, e.g. ``"t2.micro"``) simulates the volumes alone and emits a
    :class:`NoEbsLimitsWarning`.

    A 100 GiB gp2 volume bursts at 3,000 IOPS for 5.4e6 / (3,000 - 300) = 2,000 s, then holds
    its 300 IOPS baseline with an empty bucket; resting earns 300 credits per second:

    >>> from ebssim import ClosedLoop, Simulation, gp2
    >>> sim = Simulation([gp2(100)])
    >>> burst = sim.run([ClosedLoop(32, "4k")], duration_s=2700)
    >>> burst[0].cliff_time_s
    2000.0
    >>> rest = sim.rest(600)
    >>> sim.credits(0)   # 600 x 300
    180000.0
    >>> sim.time_s
    3300.0

    A Simulation is state, and one object serialises its runs: two threads that call
    :meth:`run` (or :meth:`rest`) on it at once get one run after the other, the second from the
    state the first left (credits spent once, the clock advanced by both), in the order they
    took the object; which thread goes first is not defined. :attr:`time_s` and :meth:`credits`
    read the state between runs: called during another thread's run, they wait for it to end.
    For runs in parallel, use one Simulation per thread (or :func:`ebssim.fleet.simulate_fleet`).
    A run interrupted with Ctrl-C, or refused, leaves the state as it was and lets the next run
    in; Ctrl-C while waiting for another thread's run raises KeyboardInterrupt before this one
    starts.
    """

    def __init__(
        self, volumes: Sequence[Volume], dt: float = 1.0, *, instance: Union[Instance, str, None] = None
    ) -> None:
        if isinstance(volumes, (Volume, str)) or not isinstance(volumes, Iterable):
            raise ValueError(f"volumes={volumes!r} must be a sequence of ebssim.Volume, e.g. [ebssim.gp3(100)]")
        vols = list(volumes)
        if not vols:
            raise ValueError("volumes is empty: a simulation needs at least one volume")
        for i, v in enumerate(vols):
            if not isinstance(v, Volume):
                raise ValueError(f"volumes[{i}] must be an ebssim.Volume, got {type(v).__name__}")
        self.volumes = vols
        self.dt = _dt(dt)
        instance = _resolve_instance(instance, stacklevel=2)
        self.instance: Optional[Instance] = instance
        specs = [v._spec() for v in vols]
        if instance is None:
            self._sim = _core.Simulation(specs, self.dt)
        else:
            self._sim = _core.Simulation(specs, instance._spec(), self.dt)
        # Held by a run for its whole length (the compiled loop runs without the GIL) and by every
        # read of the state: runs on one object are serialised, reads never see a run half done.
        # Re-entrant: a signal handler in the running thread may read the state (repr, time_s).
        self._lock = threading.RLock()

    @property
    def time_s(self) -> float:
        """Simulated time so far (waits for a run in progress in another thread)."""
        with self._state():
            return float(self._sim.time_s)

    def credits(self, i: int = 0) -> float:
        """Credits in volume ``i``'s bucket now (I/O credits; MiB on st1 and sc1; 0 without one;
        waits for a run in progress in another thread).

        ``i`` indexes :attr:`volumes` (negative from the end); outside them is an IndexError.
        """
        n = len(self.volumes)
        k = integer(i, "i", "a volume index")
        if not -n <= k < n:
            raise IndexError(f"volume index {k} is out of range: the simulation has {n} volume{'s' * (n != 1)}")
        with self._state():
            return float(self._sim.credits(k % n))

    @contextlib.contextmanager
    def _state(self) -> Iterator[None]:
        """Hold the state (runs and reads, serialised). The wait is in slices of 50 ms: a Python
        signal handler runs only between bytecodes, so Ctrl-C (KeyboardInterrupt) ends a wait
        for another thread's run at once, before this run starts."""
        while not self._lock.acquire(timeout=0.05):
            pass
        try:
            yield
        finally:
            self._lock.release()

    def run(
        self,
        workloads: Sequence[Workload],
        duration_s: Optional[float] = None,
        *,
        record: Union[bool, Recording] = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
        lockstep: bool = True,
    ) -> RunResult:
        """Advance the simulation with one workload per volume.

        ``duration_s`` may be omitted when an :class:`OpenLoop` trace sets the length.
        ``record`` keeps every series but the extremes per interval at every step (True, the
        default), only the totals (False), or what an :class:`~ebssim.Recording` chooses: some
        series, one value every ``every_s``, the interval's extremes, float32, into caller
        buffers (:mod:`ebssim.recording`).

        The compiled loop runs with the GIL released. Run from the main thread, it honours
        Ctrl-C within about 0.1 s: KeyboardInterrupt, with the simulation as it was before the
        call. Runs on one Simulation from several threads are serialised: each starts from the
        state the one before left (the class's docstring). A run is refused up front
        (``LimitError``, a ValueError) when it would take more than ``max_volume_steps``
        volume-steps, or, recorded, more than ``max_memory_bytes`` of per-step arrays; both
        default to :data:`ebssim.limits` (1e10 volume-steps, 4 GiB). Split a longer run into
        consecutive runs, use a coarser ``dt``, pass ``record=False``, or raise the limits.

        Volumes without an instance are independent: ``threads`` C++ threads step them in
        parallel (default None, or 0: every core; 1: the calling thread only). Each volume is
        stepped whole by one thread (with up to seven others in lockstep, below), so the results
        are the same, to the last bit, for any ``threads``.
        Volumes on an instance are coupled in every step and run in one thread; to use every
        core for many instances, see :func:`ebssim.fleet.simulate_fleet`.

        ``jump`` (default True) lets the core jump over constant stretches in closed form:
        where a volume's demand is constant (a closed loop, a rest, equal values in a row of a
        trace, a :class:`PiecewiseOpenLoop` segment) and its step steady, or an open loop's
        backlog grows or drains at the volume's cap (in a run that records no series, also a
        backlog of another I/O size than its arrivals), it advances the steps that keep every
        branch of the step the same at once. Volumes on an instance are jumped together, with the
        instance's buckets, where every one of them is steady. Results equal stepping's, bit for
        bit at fixed points (full or empty bucket, no bucket) and otherwise to rounding (relative
        1e-9; docs/model.md, "Jumps over constant stretches"). ``jump=False`` steps every step.
        ``max_volume_steps`` counts every step of the run, jumped or not.

        Volumes without an instance that replay a noisy :class:`OpenLoop` trace with
        ``record=False`` (a fleet's totals) are stepped several at a time, one per lane of the
        CPU's vector registers (AVX2 or AVX-512), with results identical to the last bit to
        stepping each alone; a trace made mostly of runs of equal values is jumped instead.
        ``lockstep=False`` steps (or jumps) them one at a time: for checking and benchmarking.
        """
        ws, n = self._prepare(workloads, duration_s)
        rec = resolve(record)
        every = rec.every_steps(self.dt) if rec is not None else 1
        jump = flag(jump, "jump")
        n_threads = _threads(threads)
        lockstep = flag(lockstep, "lockstep")
        if rec is not None and rec.instance_series is not None and self.instance is None:
            raise ValueError(
                f"Recording(instance_series={rec.instance_series!r}) is given but the simulation has no instance: "
                f"attach one (instance=) or leave instance_series out"
            )
        natives = self._natives(ws, n)
        with self._state():
            try:
                raw = self._sim.run(
                    natives,
                    n,
                    rec is not None,
                    max_volume_steps=_limits.max_volume_steps(max_volume_steps),
                    max_memory_bytes=_limits.max_memory_bytes(max_memory_bytes),
                    threads=n_threads,
                    jump=jump,
                    lockstep=lockstep,
                    series=None if rec is None else rec.series,
                    instance_series=None if rec is None else rec.instance_series,
                    every=every,
                    dtype="float64" if rec is None else rec.dtype,
                    out=None if rec is None else _views(rec.out),
                    instance_out=None if rec is None else _views(rec.instance_out),
                )
            except _limits.LimitError as err:
                what = (
                    f"the trace's {n:,} steps" if duration_s is None else f"duration_s={duration_s!r} at dt={self.dt:g}"
                )
                raise _limits.LimitError(
                    f"{what}: {err} (keywords max_volume_steps= and max_memory_bytes=, or ebssim.limits)"
                ) from None
        return self._result(ws, raw, recorded=rec is not None)

    def _natives(self, ws: List[Workload], n: int) -> List[Any]:
        """The core's workloads for a run of ``n`` steps (a piecewise loop's change steps depend
        on this simulation's ``dt`` and the run's length)."""
        return [w._native_for(self.dt, n) if isinstance(w, PiecewiseOpenLoop) else w._native for w in ws]

    def _prepare(self, workloads: Sequence[Workload], duration_s: Optional[float]) -> Tuple[List[Workload], int]:
        """The workloads of :meth:`run`, checked against the volumes, and the run's steps."""
        if isinstance(workloads, (ClosedLoop, OpenLoop, PhasedClosedLoop, Idle, str)) or not isinstance(
            workloads, Iterable
        ):
            raise ValueError(f"workloads={workloads!r} must be a sequence with one workload per volume")
        ws = list(workloads)
        if len(ws) != len(self.volumes):
            raise ValueError(f"workloads has {len(ws)} entries but the simulation has {len(self.volumes)} volumes")
        for i, w in enumerate(ws):
            if not isinstance(w, (ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop, Idle)):
                raise ValueError(
                    f"workloads[{i}]={w!r} must be a ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop or Idle"
                )
            if isinstance(w, OpenLoop) and w.dt is not None and w.dt != self.dt:
                raise ValueError(_dt_mismatch(f"workloads[{i}]", w.dt, self.dt, "Simulation(..., dt=)"))
        return ws, self._n_steps(ws, duration_s)

    def _result(self, ws: List[Workload], raw: _core.RunResult, recorded: bool = True) -> RunResult:
        """The public results of a compiled run of ``ws`` on this simulation (``recorded``: with
        series; a totals-only run has none, which spares a fleet a look at each volume's)."""
        n_values = -(-raw.n_steps // raw.record_every) if recorded else 0  # values per recorded series
        for series in raw.series:
            _freeze_series(series, VOLUME_SERIES)
        inst = None
        if self.instance is not None:
            assert raw.instance_series is not None and raw.instance_totals is not None  # the core ran it attached
            _freeze_series(raw.instance_series, INSTANCE_SERIES)
            inst = InstanceResult(
                instance=self.instance,
                t0_s=raw.t0_s,
                dt_s=raw.dt_s,
                n_steps=raw.n_steps,
                series=raw.instance_series,
                totals=raw.instance_totals,
                record_every=raw.record_every,
                recorded=_recorded(raw.instance_series, INSTANCE_SERIES, DEFAULT_INSTANCE_SERIES, n_values)
                if recorded
                else (),
            )
        out = [
            VolumeResult(
                volume=v,
                workload=w,
                t0_s=raw.t0_s,
                dt_s=raw.dt_s,
                n_steps=raw.n_steps,
                series=series,
                totals=totals,
                instance=inst,
                record_every=raw.record_every,
                recorded=_recorded(series, VOLUME_SERIES, DEFAULT_VOLUME_SERIES, n_values) if recorded else (),
            )
            for v, w, series, totals in zip(self.volumes, ws, raw.series, raw.totals)
        ]
        return RunResult(out, inst)

    def rest(
        self,
        duration_s: float,
        *,
        record: Union[bool, Recording] = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
    ) -> RunResult:
        """Let every volume idle for ``duration_s`` (gp2 earns credits); keywords as for :meth:`run`."""
        return self.run(
            [Idle() for _ in self.volumes],
            duration_s,
            record=record,
            max_volume_steps=max_volume_steps,
            max_memory_bytes=max_memory_bytes,
            threads=threads,
            jump=jump,
        )

    def _n_steps(self, ws: List[Workload], duration_s: Optional[float]) -> int:
        trace_steps = {w.n_steps for w in ws if isinstance(w, (OpenLoop, PhasedClosedLoop))}
        for w in ws:
            if isinstance(w, PiecewiseOpenLoop):
                own = w.n_steps(self.dt)
                if own is not None:
                    trace_steps.add(own)
        if len(trace_steps) > 1:
            raise ValueError(
                f"per-step workloads (OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop with duration_s) have different "
                f"lengths {sorted(trace_steps)}: they must match"
            )
        if duration_s is None:
            if not trace_steps:
                raise ValueError(
                    "duration_s is required unless an OpenLoop, PhasedClosedLoop or PiecewiseOpenLoop with "
                    "duration_s sets the length"
                )
            return trace_steps.pop()
        n = _steps(duration_s, self.dt)
        if trace_steps and n != next(iter(trace_steps)):
            raise ValueError(
                f"duration_s={duration_s!r} is {n} steps of dt={self.dt:g} but the trace has "
                f"{next(iter(trace_steps))} steps"
            )
        return n

    def __repr__(self) -> str:
        vols = ", ".join(str(v) for v in self.volumes)
        on = f" on {self.instance}" if self.instance is not None else ""
        # Never waits: a repr (a debugger's, a log line's) during another thread's run says so.
        if not self._lock.acquire(blocking=False):
            return f"<Simulation running, dt={self.dt:g} s: {vols}{on}>"
        try:
            return f"<Simulation t={self._sim.time_s:g} s, dt={self.dt:g} s: {vols}{on}>"
        finally:
            self._lock.release()


def _recorded(series: Any, names: Tuple[str, ...], default: Tuple[str, ...], n_values: int) -> Tuple[str, ...]:
    """The series a compiled run recorded: those with a value per interval (none with record=False).
    A run without steps has no values to tell them apart: it reads as the default recording."""
    if n_values == 0:
        return default
    return tuple(n for n in names if getattr(series, n).shape[0] == n_values)


def _views(buffers: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """Caller buffers (``Recording(out=...)``) as new views of the same memory: the engine writes
    through them and the result hands them out frozen (read-only), which leaves the caller's own
    arrays writeable."""
    return None if buffers is None else {k: a.view() for k, a in buffers.items()}


def _threads(threads: Optional[int]) -> int:
    """The engine's thread count for ``threads=``: None and 0 are every core, as in the core."""
    if threads is None:
        return 0
    n = integer(threads, "threads", "a number of threads")
    if n < 0:
        raise ValueError(
            f"threads={threads!r} must be >= 1, or 0 or None for every core ({_core.hardware_threads} here)"
        )
    return n


def _dt_mismatch(what: str, trace_dt: float, dt: float, where: str) -> str:
    return (
        f"{what} is a trace in steps of {trace_dt:g} s but {where} is {dt:g} s: a trace's step is part of "
        f"its demand (ops per step), so simulate it at dt={trace_dt:g}, or build it at dt={dt:g} "
        f"(OpenLoop.from_pandas(..., dt={dt:g}) spreads each period evenly over finer steps)"
    )


def simulate(
    volume: Volume,
    workload: Workload,
    duration_s: Optional[float] = None,
    *,
    dt: Optional[float] = None,
    record: Union[bool, Recording] = True,
    instance: Union[Instance, str, None] = None,
    max_volume_steps: Optional[float] = None,
    max_memory_bytes: Optional[float] = None,
    threads: Optional[int] = None,
    jump: bool = True,
) -> VolumeResult:
    """Run one workload on one fresh volume and return its per-step results.

    Parameters
    ----------
    volume : Volume
        For example ``ebssim.gp2(100)``.
    workload : ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop or Idle
    duration_s : float, optional
        Length of the run; optional for an OpenLoop trace (its length sets it).
    dt : float, optional
        Step in seconds (default 1; finer steps such as 0.001 resolve sub-second behaviour). A
        trace that knows its step (``OpenLoop.dt``, e.g. from :meth:`OpenLoop.from_pandas`)
        sets the default, and another ``dt`` is an error.
    record : bool or Recording
        Keep per-step arrays (default). ``False`` keeps only the totals, for speed. A
        :class:`~ebssim.Recording` chooses the series, an interval (``every_s``), float32 and
        caller buffers (:mod:`ebssim.recording`).
    instance : Instance or str, optional
        Attach the volume to an instance type (e.g. ``"m5.large"``) whose EBS limits then apply.
        A type without published EBS limits (e.g. ``"t2.micro"``) simulates the volume alone,
        with a :class:`NoEbsLimitsWarning`.
    max_volume_steps, max_memory_bytes : int, optional
        Bounds on this run's work and recorded memory (default :data:`ebssim.limits`; see
        :meth:`Simulation.run`).
    threads : int, optional
        As for :meth:`Simulation.run`: one volume is stepped by one thread, whatever the count
        (kept for symmetry with it; many volumes in one call: :func:`ebssim.fleet.simulate_fleet`).
    jump : bool
        Jump over constant stretches in closed form (default); ``False`` steps every step
        (:meth:`Simulation.run`).

    Examples
    --------
    A 100 GiB gp2 volume at queue depth 32 bursts at 3,000 IOPS until its 5.4 M credits run
    out: 5.4e6 / (3,000 - 300) = 2,000 s.

    >>> import ebssim
    >>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
    >>> print(r.cliff_time_s, r.iops[0], r.iops[-1])
    2000.0 3000.0 300.0
    """
    trace_dt = workload.dt if isinstance(workload, OpenLoop) else None
    if dt is None:
        dt = 1.0 if trace_dt is None else trace_dt
    elif trace_dt is not None and _dt(dt) != trace_dt:
        raise ValueError(_dt_mismatch("workload", trace_dt, dt, "dt"))
    inst = _resolve_instance(instance, stacklevel=2)
    return Simulation([volume], dt=dt, instance=inst).run(
        [workload],
        duration_s,
        record=record,
        max_volume_steps=max_volume_steps,
        max_memory_bytes=max_memory_bytes,
        threads=threads,
        jump=jump,
    )[0]
