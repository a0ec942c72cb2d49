"""The results of a run: :class:`VolumeResult` (one volume's per-step arrays and totals),
:class:`InstanceResult` (the instance the volumes share), :class:`RunResult` (one run's, one per
volume) and the records their methods return (:class:`WindowStats`, :class:`VolumeSummary`).

:mod:`ebssim.simulation` makes them (and exports them too); what happened in a run (cliffs, the
time each limit bound, ...) is read by :mod:`ebssim.analysis`, which the results' properties call.

>>> import ebssim
>>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
>>> type(r).__name__, r.n_steps, r.window(0, 2000).iops, r.window(2000, 2700).iops
('VolumeResult', 2700, 3000.0, 300.0)
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Dict,
    Generic,
    Iterator,
    List,
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

from . import _core, _repr
from ._core import CliffEpisode, InstanceSeries, InstanceTotals, VolumeSeries, VolumeTotals
from ._units import real
from .instances import Instance
from .latency import LatencyModel, check_latency_at, held_in_flight, latency_quantiles
from .recording import BOUND_NAMES, DEFAULT_INSTANCE_SERIES, DEFAULT_VOLUME_SERIES, _need_per_step
from .volumes import Volume
from .workloads import ClosedLoop, OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop, Workload

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .analysis import Cliff
    from .stripes import StripedResult

__all__ = ["VolumeResult", "InstanceResult", "RunResult", "WindowStats", "VolumeSummary", "LatencyPercentiles"]

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


# The compiled core's records that results hold (totals, series, cliff episodes) render as every
# result does (ebssim._repr): fields in their units, a series by its length, not its data.
_RECORD_REPRS = {"__repr__": _repr.core_record_repr, "_repr_html_": _repr.core_record_html}
for _record in (CliffEpisode, VolumeTotals, InstanceTotals, VolumeSeries, InstanceSeries):
    for _name, _render in _RECORD_REPRS.items():
        setattr(_record, _name, _render)

#: The series in seconds, which VolumeResult.to_pandas gives in ms under these names (every other
#: series is the column of its name; tests/python/test_series_table.py checks each has one).
_MS_COLUMNS: Dict[str, str] = {"latency_s": "latency_ms", "latency_max_s": "latency_max_ms"}


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


class LatencyPercentiles(Dict[float, float]):
    """What :meth:`VolumeResult.latency_percentiles` returns: a ``dict`` of latency in ms (plain
    floats) by percentile, as before, that shows its units: ``{50.0: 9.54, 99.0: 130.5}`` reads
    ``LatencyPercentiles(p50 9.54 ms, p99 130 ms)``, and a latency from a second on reads as a
    duration (``p99 46.9 min``). It compares, indexes, iterates and serialises as the dict it is.

    >>> p = LatencyPercentiles({50.0: 9.5442, 99.0: 2813093.69})
    >>> p
    LatencyPercentiles(p50 9.54 ms, p99 46.9 min)
    >>> p[99.0], p == {50.0: 9.5442, 99.0: 2813093.69}
    (2813093.69, True)
    """

    def __repr__(self) -> str:
        return _repr.short_repr("LatencyPercentiles", [f"p{p:g} {_repr.latency(ms)}" for p, ms in self.items()])

    def _repr_html_(self) -> str:
        return _repr.html_table("LatencyPercentiles", [(f"p{p:g}", _repr.latency(ms)) for p, ms in self.items()])


@dataclass(frozen=True, eq=True)
class WindowStats(_Record[float]):
    """A stretch of one volume's run: what :meth:`VolumeResult.window` returns."""

    iops: float
    """Mean application IOPS over the steps in the window (at least one: :meth:`VolumeResult.window`)."""
    throughput_mib_s: float
    """Mean throughput, MiB/s."""
    latency_ms: float
    """Mean latency of the I/Os completed in the window, weighted by I/O (NaN: none completed)."""

    def __repr__(self) -> str:
        return _repr.short_repr(
            "WindowStats",
            [
                _repr.number(self.iops, "IOPS"),
                _repr.number(self.throughput_mib_s, "MiB/s"),
                f"{_repr.latency(self.latency_ms)} mean latency",
            ],
        )

    def _repr_html_(self) -> str:
        return _repr.html_table(
            "WindowStats",
            [
                ("IOPS", _repr.number(self.iops, "IOPS")),
                ("throughput", _repr.number(self.throughput_mib_s, "MiB/s")),
                ("mean latency", _repr.latency(self.latency_ms)),
            ],
        )


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
    """When the first cliff started, simulated seconds (None: none; :attr:`VolumeResult.cliff_time_s`)."""
    burst_balance_end_pct: Optional[float]
    """BurstBalance at the end (None for types without a bucket)."""
    throttled_fraction: Dict[str, float]
    """Share of the steps spent in each bound, keyed by :data:`BOUND_NAMES`."""
    backlog_ops_end: float
    """I/Os still queued at the end of the run (open loop)."""
    cliff_count: int
    """Cliffs: stretches in which the credit bucket was empty (:attr:`VolumeResult.cliffs`)."""
    bucket_empty_s: float
    """Simulated seconds with the credit bucket empty, every episode the engine recorded together
    (brief touches of empty and the short refills inside a cliff do not count)."""
    bound_s: Dict[str, float]
    """Simulated seconds in each bound, keyed by :data:`BOUND_NAMES`."""
    instance_bound_s: float
    """Simulated seconds in which the instance's budget held the volume back (0 without one)."""
    instance_cliff_time_s: Optional[float]
    """When an instance bucket (EBSIOBalance%, EBSByteBalance%) first ran dry (None: never, or no instance)."""
    mean_device_latency_ms: Optional[float] = None
    """Mean latency at the device (:attr:`VolumeResult.mean_device_latency_ms`); the rest of
    :attr:`mean_latency_ms` waited in the application. None for an open loop bounded by
    ``max_in_flight`` run without per-step series."""
    bounded: bool = False
    """Whether the workload bounds its outstanding I/Os (an open loop's ``max_in_flight``)."""
    finish_s: Optional[float] = None
    """When the trace's work was done (:attr:`VolumeResult.finish_s`; None: not yet, or unknown)."""
    overrun_s: Optional[float] = None
    """How long after its last period with I/O the trace's work was done (:attr:`VolumeResult.overrun_s`)."""
    slowdown: Optional[float] = None
    """The replay's time for the trace's work over the trace's own (:attr:`VolumeResult.slowdown`)."""
    replay: bool = False
    """Whether the run went on after the trace until its work was done (:attr:`VolumeResult.trace_steps`)."""
    episode_count: int = 0
    """Episodes the engine recorded with the bucket empty (``totals.cliffs``), brief touches
    included: ``cliff_count`` counts the cliffs made of them."""

    def __repr__(self) -> str:
        if self.cliff_time_s is None:
            cliff = "no credit bucket" if self.burst_balance_end_pct is None else "no cliff"
        else:
            cliff = (
                f"{self.cliff_count} cliff{'s' * (self.cliff_count != 1)}, the first at {_repr.when(self.cliff_time_s)}"
            )
        balance = (
            "" if self.burst_balance_end_pct is None else f"BurstBalance {self.burst_balance_end_pct:.1f} % at the end"
        )
        return _repr.short_repr(
            "VolumeSummary",
            [
                f"{_repr.number(self.mean_iops, 'IOPS')} mean",
                f"{_repr.latency(self.mean_latency_ms)} mean latency",
                cliff,
                balance,
                f"{self.volume} under {self.workload}",
            ],
        )

    def _repr_html_(self) -> str:
        lines = str(self).split("\n")
        return _repr.html_table(f"VolumeSummary: {lines[0]}", [("", line.strip()) for line in lines[1:]])

    def __str__(self) -> str:
        lines = [f"{self.volume} under {self.workload}"]
        lines.append(
            f"  {_repr.number(self.mean_iops, 'IOPS')} mean, {_repr.latency(self.mean_latency_ms)} mean latency"
        )
        if self.bounded and self.mean_device_latency_ms is not None:
            wait = self.mean_latency_ms - self.mean_device_latency_ms
            lines.append(
                f"  {_repr.latency(self.mean_device_latency_ms)} mean at the device, "
                f"{_repr.latency(max(wait, 0.0))} mean wait in the application"
            )
        if self.cliff_time_s is None:
            if self.burst_balance_end_pct is None:
                bucket = "no credit bucket"
            elif self.episode_count > 0:
                times = "once" if self.episode_count == 1 else f"{self.episode_count} times"
                bucket = f"no cliff: the credit bucket touched empty {times}, each time too briefly"
            else:
                bucket = "the credit bucket never ran dry"
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
        if self.replay:
            if self.overrun_s is None:
                lines.append("  the trace's work was not done by the end of the run")
            elif self.overrun_s > 0:
                assert self.slowdown is not None
                lines.append(
                    f"  the trace's work was done {_repr.duration(self.overrun_s)} after its last I/O arrived: "
                    f"{self.slowdown:.4g} x the trace's time"
                )
            else:
                lines.append("  the trace's work was done in the trace's time")
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
    trace_steps: Optional[int] = None
    """Steps of the measured trace, when the run went on after it, with no new I/O, until the
    trace's work was done (:func:`ebssim.trace.replay`, :func:`ebssim.aws.replay`): the
    workload is the trace with those steps after it. None: the run is the workload's own."""

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
    def bounded(self) -> bool:
        """Whether the workload bounds its outstanding I/Os (an open loop's ``max_in_flight``):
        then part of :attr:`latency_s` may be a wait in the application, not at the device."""
        return isinstance(self.workload, (OpenLoop, PiecewiseOpenLoop)) and self.workload.max_in_flight is not None

    @functools.cached_property
    def _device_latency_s(self) -> FloatArray:
        from .trace import device_latency_s

        return _frozen(device_latency_s(self))

    @property
    def device_latency_s(self) -> FloatArray:
        """Mean latency at the device of the I/Os completed in each step, seconds (NaN where none
        completed): what the volume's own latency metrics (CloudWatch's VolumeTotalReadTime /
        VolumeReadOps) and fio's clat would show. :attr:`latency_s` counts from arrival; an open
        loop bounded by ``max_in_flight`` keeps at most that many I/Os at the device, and the rest
        of its backlog waits in the application: ``min(latency_s, max_in_flight / iops)``, and in
        a step whose backlog runs out after a held step, the I/Os served until then at
        ``max_in_flight`` over the rate before and the rest at the service time (the core's
        ``device_latency_s``, application.hpp; docs/replay.md). Without a bound, :attr:`latency_s`.
        A bounded open loop needs the per-step series ``iops`` and ``latency_s`` (and
        ``backlog_ops`` for the steps whose backlog runs out)."""
        return self._device_latency_s

    @property
    def device_latency_ms(self) -> FloatArray:
        """:attr:`device_latency_s` in ms."""
        return _frozen(self._device_latency_s * 1e3)

    @property
    def application_wait_ms(self) -> FloatArray:
        """Mean wait in the application before the device of the I/Os completed in each step, ms:
        :attr:`latency_ms` minus :attr:`device_latency_ms` (0 without a bound)."""
        return _frozen((np.asarray(self.latency_s, dtype=np.float64) - self._device_latency_s) * 1e3)

    @property
    def device_queue_length(self) -> FloatArray:
        """Mean I/Os outstanding at the device in each step (what CloudWatch's VolumeQueueLength
        measures): :attr:`device_latency_s` x :attr:`iops` (Little's law), at most ``max_in_flight``."""
        iops = np.asarray(self.iops, dtype=np.float64)
        out = np.zeros_like(iops)
        np.multiply(self._device_latency_s, iops, out=out, where=iops > 0)
        return _frozen(out)

    @property
    def mean_device_latency_ms(self) -> float:
        """Mean latency at the device over the run, weighted by the I/Os that completed (NaN: none
        did); :attr:`mean_latency_ms` without a bound on outstanding I/Os."""
        if not self.bounded:
            return self.mean_latency_ms
        device = self._device_latency_s  # (a ValueError without the per-step series)
        ops = np.asarray(self.iops, dtype=np.float64) * self.dt_s
        done = ops > 0
        served = float(ops[done].sum())
        return float((device[done] * ops[done]).sum() / served) * 1e3 if served > 0 else math.nan

    @property
    def mean_application_wait_ms(self) -> float:
        """Mean wait in the application over the run (:attr:`mean_latency_ms` minus
        :attr:`mean_device_latency_ms`; 0 without a bound)."""
        return max(self.mean_latency_ms - self.mean_device_latency_ms, 0.0) if self.bounded else 0.0

    # A replay that ran on after its trace (trace_steps): when the trace's work was done.
    @functools.cached_property
    def _finish(self) -> Tuple[Optional[float], float]:
        from .trace import finish_time

        return finish_time(self)

    @property
    def finish_s(self) -> Optional[float]:
        """When the last I/O of the trace completed, simulated seconds like :attr:`time_s` (None:
        not by the end of the run). The fluid queue empties inside a step: in the step whose end
        finds the trace's backlog gone, at the rate the step before served (a step after the
        trace serves only backlog); the arrivals of a step are spread over it, so a last step with
        I/O that ends with nothing queued finishes at its end. Needs the per-step ``iops`` and
        ``backlog_ops`` of an :class:`OpenLoop` trace."""
        return self._finish[0]

    @property
    def overrun_s(self) -> Optional[float]:
        """How long after the end of the trace's last step with I/O (the time by which the
        measured volume had done it: CloudWatch counts completed I/O) its work was done:
        :attr:`finish_s` minus that, 0 when the replay kept up (None: not done by the end of the
        run; run on with :func:`ebssim.trace.replay`)."""
        f, own = self._finish
        return None if f is None else max(f - own, 0.0)

    @property
    def slowdown(self) -> Optional[float]:
        """The job's slowdown: the replay's time for the trace's work over the trace's own, both
        from the run's start (1: it kept up; None: not done by the end of the run)."""
        f, own = self._finish
        if f is None:
            return None
        return (f - self.t0_s) / (own - self.t0_s) if own > self.t0_s else 1.0

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
        """Every cliff of this run, in order: a stretch in which the credit bucket was empty (each
        with its start, end, duration, the limit that bound and the IOPS served). Episodes apart by
        a short refill are one cliff, touches of empty shorter than a minute none
        (:func:`ebssim.analysis.cliffs`, docs/model.md "Cliffs")."""
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
        """When the first cliff of this run started (None: none), in simulated seconds since the
        Simulation started, like :attr:`time_s`: the start of ``cliffs[0]``. A bucket that starts
        empty under demand above baseline has its cliff at the start of the run. The first time
        the bucket touched empty at all, a touch too brief to be a cliff included, is
        ``totals.cliff_time_s`` (NaN: never)."""
        from .analysis import first_cliff_s

        return first_cliff_s(self)

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

    def _io_bytes(self) -> float:
        """The mean I/O size of this run's workload, bytes (0 when it issues none)."""
        w = self.workload
        if isinstance(w, (ClosedLoop, PhasedClosedLoop)):
            return float(w.io_bytes)
        if isinstance(w, OpenLoop) and float(w.ops.sum()) > 0:
            return float(w.bytes.sum()) / float(w.ops.sum())
        if isinstance(w, PiecewiseOpenLoop):
            return float(w.mean_io_bytes(self.n_steps * self.dt_s))
        return 0.0

    @property
    def service_time_s(self) -> float:
        """Mean unloaded service time of this run's I/O (the workload's, else the volume's model
        at the workload's I/O size and share of reads)."""
        st_ms = getattr(self.workload, "service_time_ms", None)
        if st_ms is not None:
            return float(st_ms) / 1e3
        return self.volume.service_time_s(self._io_bytes(), float(getattr(self.workload, "read_fraction", 1.0)))

    @property
    def latency_model(self) -> LatencyModel:
        """The latency model of this run (docs/model.md, "Latency percentiles"): the service
        times of a read and a write of the workload's I/O size (or the workload's own service
        time), the share of reads, the volume's service-time spread, and the waits' spread under
        the volume's limits and the instance's (the volume's ``wait_cv`` and the instance's if
        given, else the platform's default, Nitro without an instance, at the I/Os this run kept
        in flight while held: :func:`ebssim.held_in_flight` of its series)."""
        return self._latency_model(self.latency_s if "latency_s" in self.recorded else None)

    def _latency_model(self, latency_s: Optional[npt.ArrayLike]) -> LatencyModel:
        """:attr:`latency_model` with the I/Os in flight while held worked out from ``latency_s``
        (the run's latency from arrival, or its device latency; None: not recorded)."""
        own = getattr(self.workload, "service_time_ms", None)
        in_flight: Optional[float] = None
        if "iops" in self.recorded and latency_s is not None:
            n = held_in_flight(latency_s, self.iops, self.service_time_s)
            in_flight = None if math.isnan(n) else n
        return LatencyModel.of(
            self.volume,
            self._io_bytes(),
            float(getattr(self.workload, "read_fraction", 1.0)),
            instance=None if self.instance is None else self.instance.instance,
            service_time_s=None if own is None else float(own) / 1e3,
            in_flight=in_flight,
        )

    def latency_percentiles(
        self,
        percentiles: Sequence[float] = (50, 90, 95, 99, 99.9),
        *,
        direction: str = "all",
        model: Optional[LatencyModel] = None,
        at: str = "arrival",
    ) -> LatencyPercentiles:
        """Latency percentiles in ms of the I/Os completed over the run: a dict of plain floats by
        percentile (a :class:`LatencyPercentiles`, whose repr shows the units).

        ``at="arrival"`` (default) counts each I/O from its arrival (:attr:`latency_s`);
        ``at="device"`` from its submission to the device (:attr:`device_latency_s`: what the
        volume's own latency metrics and fio's clat show). They differ only for an open loop
        bounded by ``max_in_flight``, whose backlog above the bound waits in the application: its
        device latency stays at device scale when the application falls behind. The model's
        I/Os in flight while held (:func:`ebssim.held_in_flight`) come from the same series.

        The model (docs/model.md, "Latency percentiles"): in each step an I/O waits for the
        limit that holds it back, a gamma-distributed time whose mean is the step's mean latency
        minus the service time and whose spread is the platform's (wide under a volume's caps on
        Nitro, under an instance's the wider the more I/Os are in flight, narrow on Xen), then
        takes a gamma-distributed service time of its direction; the run mixes the steps weighted
        by the I/Os each completes.
        ``direction`` ``"all"``, ``"read"`` or ``"write"``; ``model`` replaces
        :attr:`latency_model` (e.g. ``dataclasses.replace(r.latency_model, wait_cv=0)``).
        """
        _need_per_step(self, "latency_percentiles", "iops", "latency_s")
        check_latency_at(at)
        if isinstance(percentiles, (numbers.Number, str)):
            raise ValueError(f"percentiles={percentiles!r} must be a sequence of numbers, e.g. (50, 99)")
        ps = [real(p, f"percentiles[{i}]") for i, p in enumerate(percentiles)]
        for p in ps:
            if not 0.0 <= p <= 100.0:
                raise ValueError(f"percentile {p!r} must be between 0 and 100")
        lat = self.latency_s if at == "arrival" else self._device_latency_s
        q = latency_quantiles(
            lat,
            self.iops * self.dt_s,
            np.array(ps) / 100.0,
            self._latency_model(lat) if model is None else model,
            bound=self.bound if "bound" in self.recorded else None,  # without it: the volume's spread
            direction=direction,
        )
        return LatencyPercentiles((p, float(v) * 1e3) for p, v in zip(ps, q))

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
        return VolumeSummary(
            volume=str(self.volume),
            workload=str(self.workload),
            mean_iops=self.mean_iops,
            mean_latency_ms=self.mean_latency_ms,
            cliff_time_s=self.cliff_time_s,
            burst_balance_end_pct=self.burst_balance_end_pct,
            throttled_fraction={name: steps[i] / n for i, name in enumerate(BOUND_NAMES)},
            backlog_ops_end=self.totals.backlog_ops,
            cliff_count=self._cliff_count(),
            bucket_empty_s=self._bucket_empty_s(),
            bound_s=self.bound_s,
            instance_bound_s=self.instance_bound_s,
            instance_cliff_time_s=self.instance.cliff_time_s if self.instance is not None else None,
            mean_device_latency_ms=self._summary_device_latency_ms(),
            bounded=self.bounded,
            finish_s=self.finish_s if self.trace_steps is not None else None,
            overrun_s=self.overrun_s if self.trace_steps is not None else None,
            slowdown=self.slowdown if self.trace_steps is not None else None,
            replay=self.trace_steps is not None,
            episode_count=len(self.totals.cliffs),
        )

    def _summary_device_latency_ms(self) -> Optional[float]:
        if not self.bounded:
            return self.mean_latency_ms
        try:
            return self.mean_device_latency_ms
        except ValueError:  # a bounded open loop without per-step series
            return None

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
        # A bounded open loop's latency at the device apart from its wait in the application.
        for name, get in (
            ("device_latency_ms", lambda: self.device_latency_ms),
            ("application_wait_ms", lambda: self.application_wait_ms),
        ):
            if not self.bounded:
                break
            try:
                columns[name] = get()
            except ValueError:
                continue
        # The extremes, where recorded (never in the default recording, nor with record=False),
        # in the engine's table's order.
        for name, aggregation, _, _ in _core.VOLUME_SERIES_TABLE:
            if aggregation in ("max", "min") and name in self.recorded:
                ms = _MS_COLUMNS.get(name)
                columns[ms or name] = getattr(self, name) * 1e3 if ms else getattr(self, name)
        return pd.DataFrame(columns, index=time_index(self))

    def _cliff_count(self) -> int:
        from .analysis import cliff_count

        return cliff_count(self)

    def _cliff_text(self) -> str:
        n = self._cliff_count()
        if not n or self.cliff_time_s is None:
            return "no cliff"
        at = _repr.when(self.cliff_time_s)
        return f"cliff at {at}" if n == 1 else f"{n} cliffs, the first at {at}"

    def _instance_text(self) -> str:
        if self.instance is None:
            return ""
        held = self.instance_bound_s
        run = self.n_steps * self.dt_s
        share = f" ({held / run:.0%})" if run > 0 else ""
        text = f", instance-bound {_repr.duration(held)}{share}" if held > 0 else ", never instance-bound"
        if self.instance.cliff_time_s is not None:
            text += f", instance balance ran dry at {_repr.when(self.instance.cliff_time_s)}"
        return text

    def __repr__(self) -> str:
        return (
            f"<VolumeResult {self.volume}: {_repr.steps(self.n_steps, self.dt_s)}, "
            f"{_repr.number(self.mean_iops, 'IOPS')} mean, {_repr.latency(self.mean_latency_ms)} mean latency, "
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
        """When the first cliff of either instance bucket (I/O or bytes) started in this run (None:
        none): the start of ``cliffs[0]``, under the rule of :attr:`VolumeResult.cliffs`. The first
        touch of empty at all is in ``totals.io_cliff_time_s`` and ``totals.bytes_cliff_time_s``."""
        from .analysis import first_cliff_s

        return first_cliff_s(self)

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
        """Every cliff of this run with EBSIOBalance% or EBSByteBalance% at 0, in order of start
        (the rule of :attr:`VolumeResult.cliffs`)."""
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
        c = f"balance ran out at {_repr.when(cliff)}" if cliff is not None else "balance never ran out"
        b = self.bound_s
        held = b["instance_iops"] + b["instance_throughput"]
        run = self.n_steps * self.dt_s
        bound = f", binding {_repr.duration(held)} ({held / run:.0%} of the run)" if held > 0 and run > 0 else ""
        return f"<InstanceResult {self.instance}: {c}{bound}>"

    def _repr_html_(self) -> str:
        return _repr.instance_result_html(self)


class RunResult(Sequence[VolumeResult]):
    """The results of one run, one :class:`VolumeResult` per volume, and the instance's if any.

    A run of named targets (``Simulation({"md0": md0, "log": ebssim.gp3(50)})``) also gives each
    target's result by name: ``run["log"]`` (a :class:`VolumeResult`), ``run["md0"]`` (a
    :class:`~ebssim.StripedResult`: the set's figures and its members'), all in :attr:`targets`;
    ``run[i]`` is the i-th volume stepped (a set's members in turn)."""

    def __init__(
        self,
        results: List[VolumeResult],
        instance: Optional[InstanceResult] = None,
        targets: Optional[Dict[str, Union[VolumeResult, "StripedResult"]]] = None,
    ) -> None:
        self._results = results
        self.instance = instance
        #: Each target's result by name (a run of named targets), else None.
        self.targets = targets

    @overload
    def __getitem__(self, i: int) -> VolumeResult: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[VolumeResult]: ...
    @overload
    def __getitem__(self, i: str) -> Union[VolumeResult, "StripedResult"]: ...
    def __getitem__(self, i: Union[int, slice, str]) -> Union[VolumeResult, Sequence[VolumeResult], "StripedResult"]:
        if isinstance(i, str):
            if self.targets is None:
                raise KeyError(f"{i!r}: this run's volumes have no names (Simulation([...])); index them by position")
            if i not in self.targets:
                raise KeyError(
                    f"{i!r} is not a target of this run: its targets are {', '.join(map(repr, self.targets))}"
                )
            return self.targets[i]
        return self._results[i]

    def __len__(self) -> int:
        return len(self._results)

    def __iter__(self) -> Iterator[VolumeResult]:
        return iter(self._results)

    def _volume_targets(self) -> List[Tuple[str, Optional[int]]]:
        """Each volume's target, in order (a run of named targets): its name, and its index among
        a striped set's members (None for a plain volume)."""
        assert self.targets is not None
        out: List[Tuple[str, Optional[int]]] = []
        for name, t in self.targets.items():
            members = getattr(t, "members", None)  # a StripedResult's member results
            if isinstance(members, tuple):
                out.extend((name, k) for k in range(len(members)))
            else:
                out.append((name, None))
        return out

    def to_pandas(self) -> "pd.DataFrame":
        """One long DataFrame: a ``volume`` column (position) plus every output column.

        A run of named targets adds two columns after ``volume``: ``target``, the name of the
        target the volume belongs to, and ``member``, its index among a striped set's members
        (``<NA>`` for a plain volume; pandas' nullable ``Int64``). A run of a list of volumes
        has neither.

        >>> import ebssim
        >>> md0 = ebssim.striped([ebssim.gp3(100)] * 2)
        >>> sim = ebssim.Simulation({"md0": md0, "log": ebssim.gp3(50)})
        >>> run = sim.run({"md0": ebssim.ClosedLoop(16, "4k"), "log": ebssim.Idle()}, duration_s=2)
        >>> df = run.to_pandas()
        >>> print(df[["volume", "target", "member"]].drop_duplicates().to_string(index=False))
         volume target  member
              0    md0       0
              1    md0       1
              2    log    <NA>
        >>> df.groupby("target", sort=False)["iops"].sum().to_dict()  # 8 in flight per member: 3,000 IOPS x 2 steps x 2
        {'md0': 12000.0, 'log': 0.0}
        """
        import pandas as pd

        frames = [r.to_pandas().reset_index().assign(volume=i) for i, r in enumerate(self._results)]
        if self.targets is not None:
            for f, (name, k) in zip(frames, self._volume_targets()):  # after 'volume', the last column
                f["target"] = name
                f["member"] = pd.Series([k] * len(f), index=f.index, dtype="Int64")
        return pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        return _repr.run_result_repr(self)

    def _repr_html_(self) -> str:
        return _repr.run_result_html(self)
