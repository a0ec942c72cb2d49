"""Running simulations and reading their results."""

from __future__ import annotations

import functools
import math
import numbers
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

#: What held a volume back in a step, indexed by the ``bound`` codes of the series (from the C++ ``Bound``).
BOUND_NAMES: tuple[str, ...] = tuple(_core.BOUND_NAMES)

FloatArray = npt.NDArray[np.float64]


def _time_axis(t0_s: float, dt_s: float, n: int) -> FloatArray:
    return t0_s + dt_s * np.arange(n, dtype=np.float64)


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
    """Mean application IOPS over the steps in the window (NaN: no step starts in it)."""
    throughput_mib_s: float
    """Mean throughput, MiB/s (NaN: no step starts in it)."""
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


@dataclass(frozen=True)
class VolumeResult:
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

    @property
    def iops(self) -> FloatArray:
        """Application I/Os completed per second."""
        return self.series.iops

    @property
    def ebs_iops(self) -> FloatArray:
        """EBS-counted operations per second (256 KiB units on SSD, 1 MiB on HDD)."""
        return self.series.ebs_iops

    @property
    def throughput_mib_s(self) -> FloatArray:
        """MiB/s completed."""
        return self.series.throughput_mib_s

    @property
    def credits(self) -> FloatArray:
        """Burst credits at the end of each step (I/O credits; MiB on st1 and sc1)."""
        return self.series.credits

    @property
    def latency_s(self) -> FloatArray:
        """Mean latency of the I/Os completed in the step (NaN where none completed)."""
        return self.series.latency_s

    @property
    def bound(self) -> npt.NDArray[np.uint8]:
        """Which limit held the volume back: index into :data:`BOUND_NAMES`."""
        return self.series.bound

    @property
    def time_s(self) -> FloatArray:
        """Start of each recorded step, simulated seconds since the Simulation started."""
        return _time_axis(self.t0_s, self.dt_s, self.iops.shape[0])

    @property
    def queue_length(self) -> FloatArray:
        """Mean I/Os outstanding (waiting + in service): by Little's law, latency x completion rate."""
        out: FloatArray = np.zeros_like(self.iops)
        np.multiply(self.latency_s, self.iops, out=out, where=self.iops > 0)
        return out

    @property
    def latency_ms(self) -> FloatArray:
        return self.latency_s * 1e3

    @property
    def backlog_ops(self) -> FloatArray:
        """I/Os waiting at the end of each step (arrived, not completed, not in service): queued at
        the device, or held in the application above an open loop's ``max_in_flight``."""
        return self.series.backlog_ops

    @property
    def offered_iops(self) -> FloatArray:
        """I/Os per second the workload offered in each step (an open loop's arrivals, a closed
        loop's unthrottled rate, 0 at rest): the demand next to what was served, :attr:`iops`."""
        from .analysis import offered_iops

        return offered_iops(self)

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

        return served_reads(self)

    @property
    def read_iops(self) -> FloatArray:
        split = self._served_reads
        return self.iops * self.read_fraction if split is None else split[0]

    @property
    def write_iops(self) -> FloatArray:
        split = self._served_reads
        return self.iops * (1.0 - self.read_fraction) if split is None else np.maximum(self.iops - split[0], 0.0)

    @property
    def read_mib_s(self) -> FloatArray:
        split = self._served_reads
        return self.throughput_mib_s * self.read_fraction if split is None else split[1]

    @property
    def write_mib_s(self) -> FloatArray:
        split = self._served_reads
        if split is None:
            return self.throughput_mib_s * (1.0 - self.read_fraction)
        return np.maximum(self.throughput_mib_s - split[1], 0.0)

    @property
    def burst_balance_pct(self) -> FloatArray:
        """CloudWatch's BurstBalance: credits left as a percentage (NaN for types without a bucket)."""
        cap = self.volume.credit_capacity
        if cap <= 0:
            return np.full(self.credits.shape[0], np.nan)
        return self.credits * (100.0 / cap)

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
        if self.iops.shape[0] != self.n_steps:
            raise ValueError("this result was run with record=False and has no per-step series")
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

        ``start_s`` and ``end_s`` are finite, in order, in simulated seconds like :attr:`time_s`.
        A window in which no step starts has no numbers (NaN), nor has latency where no I/O completed.
        """
        if self.iops.shape[0] != self.n_steps:
            raise ValueError("this result was run with record=False and has no per-step series")
        start = real(start_s, "start_s", "a time in seconds")
        end = real(end_s, "end_s", "a time in seconds")
        span = f"the run spans {self.t0_s:g} to {self.t0_s + self.n_steps * self.dt_s:g} s in steps of {self.dt_s:g} s"
        if not (math.isfinite(start) and math.isfinite(end)):
            raise ValueError(f"start_s={start_s!r}, end_s={end_s!r}: both must be finite times in seconds ({span})")
        if start > end:
            raise ValueError(f"start_s={start_s!r} is after end_s={end_s!r} ({span})")
        t = self.time_s
        sel = (t >= start) & (t < end)
        ops = self.iops[sel] * self.dt_s
        done = ops > 0
        served = float(ops.sum())
        lat = float((self.latency_s[sel][done] * ops[done]).sum() / served) if served > 0 else math.nan
        return WindowStats(
            iops=float(self.iops[sel].mean()) if sel.any() else math.nan,
            throughput_mib_s=float(self.throughput_mib_s[sel].mean()) if sel.any() else math.nan,
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

        df = pd.DataFrame(
            {
                "iops": self.iops,
                "ebs_iops": self.ebs_iops,
                "throughput_mib_s": self.throughput_mib_s,
                "read_iops": self.read_iops,
                "write_iops": self.write_iops,
                "read_mib_s": self.read_mib_s,
                "write_mib_s": self.write_mib_s,
                "credits": self.credits,
                "burst_balance_pct": self.burst_balance_pct,
                "queue_length": self.queue_length,
                "backlog_ops": self.backlog_ops,
                "latency_ms": self.latency_ms,
                "bound": pd.Categorical.from_codes(self.bound.astype(np.int8), categories=pd.Index(BOUND_NAMES)),
            },
            index=time_index(self),
        )
        return df

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
class InstanceResult:
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

    @property
    def iops(self) -> FloatArray:
        """EBS-counted operations per second over all attached volumes."""
        return self.series.iops

    @property
    def throughput_mb_s(self) -> FloatArray:
        """Decimal MB/s over all attached volumes."""
        return self.series.throughput_mb_s

    @property
    def io_balance_pct(self) -> FloatArray:
        """CloudWatch's EBSIOBalance% at the end of each step."""
        return self.series.io_balance_pct

    @property
    def byte_balance_pct(self) -> FloatArray:
        """CloudWatch's EBSByteBalance% at the end of each step."""
        return self.series.byte_balance_pct

    @property
    def bound(self) -> npt.NDArray[np.uint8]:
        """demand, instance_iops or instance_throughput: index into :data:`BOUND_NAMES`."""
        return self.series.bound

    @property
    def time_s(self) -> FloatArray:
        """Start of each recorded step, simulated seconds since the Simulation started."""
        return _time_axis(self.t0_s, self.dt_s, self.iops.shape[0])

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

        return pd.DataFrame(
            {
                "iops": self.iops,
                "throughput_mb_s": self.throughput_mb_s,
                "io_balance_pct": self.io_balance_pct,
                "byte_balance_pct": self.byte_balance_pct,
                "bound": pd.Categorical.from_codes(self.bound.astype(np.int8), categories=pd.Index(BOUND_NAMES)),
            },
            index=pd.Index(self.time_s, name="time_s"),
        )

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

    @property
    def time_s(self) -> float:
        """Simulated time so far."""
        return float(self._sim.time_s)

    def credits(self, i: int = 0) -> float:
        """Credits in volume ``i``'s bucket now (I/O credits; MiB on st1 and sc1; 0 without one).

        ``i`` indexes :attr:`volumes` (negative from the end); outside them is an IndexError.
        """
        n = len(self.volumes)
        k = integer(i, "i", "a volume index")
        if not -n <= k < n:
            raise IndexError(f"volume index {k} is out of range: the simulation has {n} volume{'s' * (n != 1)}")
        return float(self._sim.credits(k % n))

    def run(
        self,
        workloads: Sequence[Workload],
        duration_s: Optional[float] = None,
        *,
        record: bool = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
        lockstep: bool = True,
    ) -> RunResult:
        """Advance the simulation with one workload per volume.

        ``duration_s`` may be omitted when an :class:`OpenLoop` trace sets the length.

        The compiled loop runs with the GIL released. Run from the main thread, it honours
        Ctrl-C within about 0.1 s: KeyboardInterrupt, with the simulation as it was before the
        call. A run is refused up front (``LimitError``, a ValueError) when it would take more
        than ``max_volume_steps`` volume-steps, or, recorded, more than ``max_memory_bytes`` of
        per-step arrays; both default to :data:`ebssim.limits` (1e10 volume-steps, 4 GiB).
        Split a longer run into consecutive runs, use a coarser ``dt``, pass ``record=False``,
        or raise the limits.

        Volumes without an instance are independent: ``threads`` C++ threads step them in
        parallel (default None: every core; 1: the calling thread only). Each volume is stepped
        whole by one thread (with up to seven others in lockstep, below), so the results are
        the same, to the last bit, for any ``threads``.
        Volumes on an instance are coupled in every step and run in one thread; to use every
        core for many instances, see :func:`ebssim.fleet.simulate_fleet`.

        ``jump`` (default True) lets the core jump over constant stretches in closed form:
        where a volume's demand is constant (a closed loop, a rest, equal values in a row of a
        trace, a :class:`PiecewiseOpenLoop` segment) and its step steady, it advances the steps
        that keep every branch of the step the same at once. Results equal stepping's, bit for
        bit at fixed points (full or empty bucket, no bucket) and otherwise to rounding (relative
        1e-9; docs/model.md, "Jumps over constant stretches"). ``jump=False`` steps every step.
        Volumes attached to an instance are always stepped, and so are the totals-only
        :class:`OpenLoop` traces stepped in lockstep (below; ``lockstep=False`` jumps their runs
        of equal values too). ``max_volume_steps`` counts every step of the run, jumped or not.

        Volumes without an instance that replay an :class:`OpenLoop` trace with
        ``record=False`` (a fleet's totals) are stepped several at a time, one per lane of the
        CPU's vector registers (AVX2 or AVX-512), with results identical to the last bit to
        stepping each alone. ``lockstep=False`` steps them one at a time: for checking and
        benchmarking only.
        """
        ws, n = self._prepare(workloads, duration_s)
        record = flag(record, "record")
        jump = flag(jump, "jump")
        n_threads = _threads(threads)
        lockstep = flag(lockstep, "lockstep")
        try:
            raw = self._sim.run(
                self._natives(ws, n),
                n,
                record,
                max_volume_steps=_limits.max_volume_steps(max_volume_steps),
                max_memory_bytes=_limits.max_memory_bytes(max_memory_bytes),
                threads=n_threads,
                jump=jump,
                lockstep=lockstep,
            )
        except _limits.LimitError as err:
            what = f"the trace's {n:,} steps" if duration_s is None else f"duration_s={duration_s!r} at dt={self.dt:g}"
            raise _limits.LimitError(
                f"{what}: {err} (keywords max_volume_steps= and max_memory_bytes=, or ebssim.limits)"
            ) from None
        return self._result(ws, raw)

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

    def _result(self, ws: List[Workload], raw: _core.RunResult) -> RunResult:
        """The public results of a compiled run of ``ws`` on this simulation."""
        inst = None
        if self.instance is not None:
            assert raw.instance_series is not None and raw.instance_totals is not None  # the core ran it attached
            inst = InstanceResult(
                instance=self.instance,
                t0_s=raw.t0_s,
                dt_s=raw.dt_s,
                n_steps=raw.n_steps,
                series=raw.instance_series,
                totals=raw.instance_totals,
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
            )
            for v, w, series, totals in zip(self.volumes, ws, raw.series, raw.totals)
        ]
        return RunResult(out, inst)

    def rest(
        self,
        duration_s: float,
        *,
        record: bool = True,
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
        return f"<Simulation t={self.time_s:g} s, dt={self.dt:g} s: {vols}{on}>"


def _threads(threads: Optional[int]) -> int:
    """The engine's thread count for ``threads=``: None is 0 (every core)."""
    if threads is None:
        return 0
    n = integer(threads, "threads", "a number of threads")
    if n < 1:
        raise ValueError(f"threads={threads!r} must be >= 1, or None for every core ({_core.hardware_threads} here)")
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
    record: bool = True,
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
    record : bool
        Keep per-step arrays (default). ``False`` keeps only the totals, for speed.
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
