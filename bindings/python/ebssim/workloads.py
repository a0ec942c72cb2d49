"""Workloads: what a volume is asked to do during a run."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union, cast

import numpy as np
import numpy.typing as npt

from . import _core, _limits, _pickle, _repr
from ._units import SizeLike, integer, parse_size, real

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .results import VolumeResult
    from .volumes import Volume

__all__ = [
    "ClosedLoop",
    "OpenLoop",
    "PhasedClosedLoop",
    "PiecewiseOpenLoop",
    "Idle",
    "LoopResult",
    "SharedClosedLoops",
    "Workload",
    "PATTERNS",
]

PATTERNS = ("random", "sequential")


def _check_pattern(pattern: str) -> bool:
    if pattern not in PATTERNS:
        raise ValueError(f"pattern={pattern!r} must be one of {', '.join(PATTERNS)}")
    return pattern == "sequential"


def _check_read_fraction(rf: float) -> float:
    v = real(rf, "read_fraction", "a number between 0 and 1")
    if not 0.0 <= v <= 1.0:  # also rejects NaN
        raise ValueError(f"read_fraction={rf!r} must be between 0 and 1")
    return v


def _think_time_s(think_time_ms: float) -> float:
    t = real(think_time_ms, "think_time_ms", "a number of ms")
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"think_time_ms={think_time_ms!r} must be a finite number of ms >= 0")
    return t / 1e3


def _counted_per_io(counted_per_io: Optional[float]) -> float:
    if counted_per_io is None:
        return math.nan
    c = float(counted_per_io)
    if not math.isfinite(c) or c <= 0:
        raise ValueError(f"counted_per_io={counted_per_io!r} must be a positive, finite number of operations")
    return c


def _max_in_flight(max_in_flight: Optional[float]) -> float:
    if max_in_flight is None:
        return math.inf
    m = real(max_in_flight, "max_in_flight", "a number of I/Os")
    if not m > 0:  # also NaN
        raise ValueError(
            f"max_in_flight={max_in_flight!r} must be a positive number of I/Os (None: no bound on outstanding I/Os)"
        )
    return m


def _service_time_s(service_time_ms: Optional[float]) -> float:
    if service_time_ms is None:
        return math.nan
    st = real(service_time_ms, "service_time_ms", "a number of ms")
    # The core's bound (max_service_time_s), stated here in the unit the caller wrote.
    limit_ms = _core.max_service_time_s * 1e3
    if not 0 < st <= limit_ms:  # also NaN and infinity
        raise ValueError(f"service_time_ms={service_time_ms!r} must be > 0 and at most {limit_ms:g} ms")
    return st / 1e3


@dataclass(frozen=True)
class ClosedLoop:
    """``in_flight`` I/Os always outstanding, as fio keeps ``numjobs x iodepth`` in flight.

    The volume completes ``min(in_flight / service_time, limits)`` I/Os per second; when a
    limit binds, I/Os wait, so mean latency is ``in_flight / completion rate`` (Little's law).

    Parameters
    ----------
    in_flight : float
        I/Os outstanding at all times (queue depth). Sync engines such as psync keep one per job.
        A run refuses a loop that would offer more than 1e15 I/Os in one step
        (``in_flight / (service time + think time) x dt``), the bound a trace has too.
    io_size : int, float or str
        Size of each I/O: bytes, or a string such as ``"4k"`` or ``"1MiB"``.
    read_fraction : float
        Share of I/Os that are reads, 0..1.
    pattern : {"random", "sequential"}
        How EBS counts the I/Os (AWS's rule): I/Os under 32 KiB count one operation each either
        way; sequential I/Os from 32 KiB merge into 256 KiB operations (1 MiB on HDD), random
        ones count one each up to that size and split above it.
    service_time_ms : float, optional
        Unloaded service time; default from the volume's latency model.
    think_time_ms : float
        Pause between an I/O's completion and the next submission by the same user (fio's
        ``thinktime``): throughput = ``in_flight / (latency + think time)``.
    counted_per_io : float, optional
        EBS-counted operations per I/O; default from ``io_size``, ``pattern`` and the volume
        (:meth:`Volume.counted_ops_per_io`). Set it to describe a mix of I/O sizes by its means
        (e.g. reads and writes of different sizes).
    """

    in_flight: float = 1
    io_size: SizeLike = 4096
    read_fraction: float = 1.0
    pattern: str = "random"
    service_time_ms: Optional[float] = None
    think_time_ms: float = 0.0
    counted_per_io: Optional[float] = None
    _native: _core.ClosedLoop = field(init=False, repr=False, compare=False)

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:  # the compiled part is rebuilt (ebssim._pickle)
        return _pickle.reduce(self, _pickle.init_fields(self))

    def __post_init__(self) -> None:
        sequential = _check_pattern(self.pattern)
        in_flight = real(self.in_flight, "in_flight", "a number of I/Os")
        if not (math.isfinite(in_flight) and in_flight > 0):
            raise ValueError(f"in_flight={self.in_flight!r} must be a positive, finite number of I/Os")
        native = _core.ClosedLoop(
            in_flight,
            parse_size(self.io_size),
            read_fraction=_check_read_fraction(self.read_fraction),
            sequential=sequential,
            service_time_s=_service_time_s(self.service_time_ms),
            think_time_s=_think_time_s(self.think_time_ms),
            counted_per_io=_counted_per_io(self.counted_per_io),
        )
        object.__setattr__(self, "_native", native)

    @property
    def io_bytes(self) -> float:
        return parse_size(self.io_size)

    def _repr_html_(self) -> str:
        return _repr.closed_loop_html(self)

    def __str__(self) -> str:
        size = self.io_bytes
        size_s = f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size / 1024:g} KiB"
        kind = "reads" if self.read_fraction == 1 else "writes" if self.read_fraction == 0 else "I/O"
        return f"{size_s} {self.pattern} {kind} at queue depth {self.in_flight:g}"


@dataclass(frozen=True, eq=False)
class OpenLoop:
    """A trace: I/Os and bytes arriving in each step. Demand above the limits queues and is
    served later (a work-conserving fluid queue), which shows as queue length and latency.

    Parameters
    ----------
    ops : array_like
        I/Os arriving in each step (length = number of steps, at least 1).
    bytes : array_like
        Bytes arriving in each step (same length). Both take integer or float values; boolean,
        complex, string and object arrays are refused, and so are masked arrays with masked
        values (the engine would ignore the mask: fill or drop those steps first).
    read_fraction, pattern, service_time_ms
        As for :class:`ClosedLoop`.
    read_ops, read_bytes : array_like, optional
        Reads among ``ops`` and ``bytes`` in each step (the rest are writes), for a trace whose
        mix varies over time; both or neither, each at most ``ops`` and ``bytes``. With them,
        ``read_fraction`` is left out: it becomes the trace's overall share of reads. The
        limits apply to reads and writes together; results split what was served per step
        (``read_iops``, ``write_iops``, ...; docs/replay.md).
    dt : float, optional
        Seconds per step of the trace. With it, :func:`simulate` steps at ``dt`` by default, and
        a simulation with another step is an error (rather than silently reading, say,
        one-minute sums as one-second demand). Without it, the trace takes the simulation's step.
    start : pandas.Timestamp, optional
        Wall-clock time of the start of step 0; results then have a DatetimeIndex.
    resolution_s : float, optional
        Seconds per measurement the trace was spread from (at least ``dt``, a whole number of
        steps): each measurement was spread evenly over its steps, so variation and queueing
        inside one measurement cannot be seen. Default: ``dt``.
    max_in_flight : float or array_like, optional
        The application's bound on outstanding I/Os (its threads, connections or queue depth):
        one number, or one per step (the concurrency measured per period, e.g. CloudWatch's
        ``VolumeQueueLength``; ``inf`` in a step: no bound in it). Arrivals beyond it wait in
        the application, not in the device's queue, so the device completes at most
        ``max_in_flight / service time`` I/Os per second (``bound`` reports ``max_in_flight``
        when that binds first). Latency counts from arrival: the wait in the application is part
        of it; :attr:`VolumeResult.device_latency_ms` is the device's part (docs/replay.md).
        Default None: no bound, every arrival queues at the device. A bound per step is stepped
        by the scalar stepper only (not in lockstep with other volumes).

    :meth:`from_pandas` builds a trace, with all of these, from a pandas Series or DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> ops = np.array([3000.0, 3000.0, 0.0])
    >>> w = OpenLoop(ops, ops * 4096, service_time_ms=1, max_in_flight=2)   # 2 / 1 ms = 2,000 IOPS at most
    >>> import ebssim
    >>> r = ebssim.simulate(ebssim.gp3(100), w)
    >>> r.iops.tolist(), r.backlog_ops.tolist()
    ([2000.0, 2000.0, 2000.0], [1000.0, 2000.0, 0.0])
    """

    ops: npt.NDArray[np.float64]
    bytes: npt.NDArray[np.float64]
    read_fraction: float = 1.0
    pattern: str = "random"
    service_time_ms: Optional[float] = None
    read_ops: Optional[npt.NDArray[np.float64]] = field(default=None, repr=False)
    read_bytes: Optional[npt.NDArray[np.float64]] = field(default=None, repr=False)
    dt: Optional[float] = None
    start: Optional["pd.Timestamp"] = None
    resolution_s: Optional[float] = None
    max_in_flight: Union[float, npt.NDArray[np.float64], None] = None
    _native: _core.OpenLoop = field(init=False, repr=False, compare=False)

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:  # the compiled part is rebuilt (ebssim._pickle)
        kwargs = _pickle.init_fields(self)
        if self.read_ops is not None:
            del kwargs["read_fraction"]  # computed from read_ops again
        return _pickle.reduce(self, kwargs)

    def __post_init__(self) -> None:
        sequential = _check_pattern(self.pattern)
        ops = _as_series(self.ops, "ops")
        nbytes = _as_series(self.bytes, "bytes")
        if ops.shape != nbytes.shape:
            raise ValueError(
                f"ops has {ops.shape[0]} steps but bytes has {nbytes.shape[0]}: the arrays must have the same length"
            )
        object.__setattr__(self, "ops", ops)
        object.__setattr__(self, "bytes", nbytes)
        read_fraction = _check_read_fraction(self.read_fraction)
        if self.read_ops is not None or self.read_bytes is not None:
            read_fraction = self._check_reads(ops, nbytes)
            object.__setattr__(self, "read_fraction", read_fraction)
        self._check_timing()
        per_step = self._bound_steps(ops.shape[0])
        self._build(ops, nbytes, read_fraction, sequential, per_step)

    def _build(
        self,
        ops: npt.NDArray[np.float64],
        nbytes: npt.NDArray[np.float64],
        read_fraction: float,
        sequential: bool,
        per_step: Optional[npt.NDArray[np.float64]],
    ) -> None:
        """The compiled trace, which checks the values (finite, >= 0, no bytes without I/Os)."""
        native = _core.OpenLoop(
            ops,
            nbytes,
            read_fraction=read_fraction,
            sequential=sequential,
            service_time_s=_service_time_s(self.service_time_ms),
            max_in_flight=math.inf
            if per_step is not None
            else _max_in_flight(cast(Optional[float], self.max_in_flight)),
            max_in_flight_steps=per_step,
        )
        object.__setattr__(self, "_native", native)

    def _pieces(
        self, bounds: Sequence[Tuple[int, int]], starts: Sequence[Optional["pd.Timestamp"]]
    ) -> List["OpenLoop"]:
        """Steps ``[a, b)`` of this trace as traces of their own, each from its wall-clock
        ``start``: what ``OpenLoop(ops[a:b], ...)`` gives, without checking again what was checked
        for the whole (a stretch of a valid trace is valid) but the compiled trace's values. Its
        read share is its own. ``ebssim.fleet`` reads the volumes of a long DataFrame this way."""
        sequential = _check_pattern(self.pattern)
        per_step = isinstance(self.max_in_flight, np.ndarray)
        same: Dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        out = []
        for (a, b), start in zip(bounds, starts):
            piece = object.__new__(OpenLoop)
            ops, nbytes = self.ops[a:b], self.bytes[a:b]
            fields = dict(same, ops=ops, bytes=nbytes, start=start)
            if self.read_ops is not None and self.read_bytes is not None:
                fields.update(read_ops=self.read_ops[a:b], read_bytes=self.read_bytes[a:b])
                fields["read_fraction"] = _read_share(fields["read_ops"], ops)
            if per_step:
                fields["max_in_flight"] = cast(npt.NDArray[np.float64], self.max_in_flight)[a:b]
            for name, value in fields.items():
                object.__setattr__(piece, name, value)
            piece._build(
                ops, nbytes, fields["read_fraction"], sequential, fields["max_in_flight"] if per_step else None
            )
            out.append(piece)
        return out

    def _bound_steps(self, n: int) -> Optional[npt.NDArray[np.float64]]:
        """The per-step bound on outstanding I/Os when ``max_in_flight`` is an array (checked:
        one value per step, each > 0; ``inf``: none in that step), else None."""
        m = self.max_in_flight
        if m is None or isinstance(m, (numbers.Real, np.floating, np.integer)) or np.ndim(m) == 0:
            return None
        a = _as_series(m, "max_in_flight")
        if a.shape[0] != n:
            raise ValueError(
                f"max_in_flight has {a.shape[0]} steps but the trace has {n}: give one bound, or one per step"
            )
        bad = ~(a > 0)  # also NaN
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(
                f"max_in_flight[{k}]={float(a[k])!r} must be a positive number of I/Os (inf: no bound in that step)"
            )
        object.__setattr__(self, "max_in_flight", a)
        return a

    def in_flight_bounds(self) -> npt.NDArray[np.float64]:
        """The bound on outstanding I/Os of each step (``inf``: none), one value per step."""
        m = self.max_in_flight
        if m is None:
            return np.full(self.n_steps, math.inf)
        if isinstance(m, np.ndarray) and m.ndim == 1:
            return m
        return np.full(self.n_steps, float(m))

    def _check_reads(self, ops: npt.NDArray[np.float64], nbytes: npt.NDArray[np.float64]) -> float:
        """Validate read_ops and read_bytes; return the trace's overall share of reads."""
        if self.read_ops is None or self.read_bytes is None:
            given, missing = ("read_ops", "read_bytes") if self.read_bytes is None else ("read_bytes", "read_ops")
            raise ValueError(f"{given} is given without {missing}: a per-step read/write split needs both")
        if self.read_fraction != 1.0:
            raise ValueError(
                f"read_fraction={self.read_fraction!r} and read_ops are both given: with a per-step split, "
                f"read_fraction is the trace's overall share of reads; leave it out"
            )
        for name, reads, total in (("read_ops", self.read_ops, ops), ("read_bytes", self.read_bytes, nbytes)):
            r = _as_series(reads, name)
            if r.shape != total.shape:
                raise ValueError(f"{name} has {r.shape[0]} steps but the trace has {total.shape[0]}: same length")
            bad = ~(np.isfinite(r) & (r >= 0) & (r <= total))
            if bad.any():
                k = int(np.argmax(bad))
                whole = "ops" if name == "read_ops" else "bytes"
                raise ValueError(
                    f"{name}[{k}]={float(r[k])!r} must be a finite number between 0 and "
                    f"{whole}[{k}]={float(total[k])!r} "
                    f"(the reads among the step's {whole})"
                )
            object.__setattr__(self, name, r)
        return _read_share(self.read_ops, ops)

    def _check_timing(self) -> None:
        if self.dt is not None:
            object.__setattr__(self, "dt", _dt(self.dt))
        if self.resolution_s is not None:
            res = real(self.resolution_s, "resolution_s", "a number of seconds")
            step = self.dt
            if step is None:
                raise ValueError(f"resolution_s={self.resolution_s!r} needs dt, the step it is spread over")
            k = res / step
            if not (math.isfinite(res) and k >= 1 - 1e-9 and abs(k - round(k)) <= 1e-9 * k):
                raise ValueError(
                    f"resolution_s={self.resolution_s!r} must be a whole number (at least 1) of steps of dt={step!r}"
                )
            object.__setattr__(self, "resolution_s", res)
        if self.start is not None:
            import pandas as pd

            if not isinstance(self.start, pd.Timestamp):
                raise ValueError(f"start={self.start!r} must be a pandas.Timestamp (the wall-clock time of step 0)")

    @classmethod
    def from_pandas(
        cls,
        data: "Union[pd.Series, pd.DataFrame]",
        *,
        dt: Optional[float] = None,
        period: Union[float, str, "pd.Timedelta", None] = None,
        gaps: str = "error",
        io_size: Optional[SizeLike] = None,
        read_fraction: float = 1.0,
        pattern: str = "random",
        service_time_ms: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        max_in_flight: "Union[float, npt.ArrayLike, pd.Series, None]" = None,
    ) -> "OpenLoop":
        """A trace from a pandas Series or DataFrame indexed by time: see :func:`ebssim.trace.from_pandas`.

        >>> import pandas as pd
        >>> minutes = pd.date_range("2024-05-01 00:00", periods=3, freq="1min", tz="UTC")
        >>> df = pd.DataFrame({"read_ops": [60_000, 30_000, 0], "write_ops": [12_000, 0, 6_000],
        ...                    "read_bytes": [60_000 * 4096, 30_000 * 4096, 0],
        ...                    "write_bytes": [12_000 * 16384, 0, 6_000 * 16384]}, index=minutes)
        >>> trace = OpenLoop.from_pandas(df)     # one-minute sums: dt = 60 s, from the index
        >>> trace.dt, trace.ops, trace.read_fraction   # 90,000 reads of 108,000 I/Os
        (60.0, array([72000., 30000.,  6000.]), 0.8333333333333334)
        """
        from ._frames import trace_fields

        return cls(
            **trace_fields(
                data,
                dt=dt,
                period=period,
                gaps=gaps,
                io_size=io_size,
                read_fraction=read_fraction,
                pattern=pattern,
                service_time_ms=service_time_ms,
                max_memory_bytes=max_memory_bytes,
                max_in_flight=max_in_flight,
            )
        )

    @classmethod
    def constant(
        cls,
        iops: float,
        io_size: SizeLike,
        duration_s: float,
        *,
        dt: float = 1.0,
        max_memory_bytes: Optional[float] = None,
        **kwargs: Any,
    ) -> "OpenLoop":
        """A constant arrival rate of ``iops`` I/Os of ``io_size`` for ``duration_s``.

        The trace holds two arrays of 8 bytes per step; more than ``max_memory_bytes`` (default
        :data:`ebssim.limits`, 4 GiB: 268 M steps) is refused before allocating.

        >>> OpenLoop.constant(100, "4k", 3).ops
        array([100., 100., 100.])
        """
        rate = real(iops, "iops", "a number of I/Os per second")
        if not (math.isfinite(rate) and rate >= 0):
            raise ValueError(f"iops={iops!r} must be a finite number of I/Os per second >= 0")
        n = _steps(duration_s, dt)
        size = parse_size(io_size)
        cap = _limits.max_memory_bytes(max_memory_bytes)
        need = 2 * 8 * n
        if need > cap:
            raise _limits.LimitError(
                f"duration_s={duration_s!r} at dt={dt!r} is {n:,} steps, whose ops and bytes arrays take "
                f"{need:.4g} bytes (16 per step), above max_memory_bytes={cap:.4g}: use a coarser dt, run a "
                f"shorter trace repeatedly on one Simulation (state carries over), or raise max_memory_bytes "
                f"(keyword, or ebssim.limits)"
            )
        ops = np.full(n, rate * float(dt))
        return cls(ops, ops * size, **kwargs)

    @staticmethod
    def piecewise(
        change_s: npt.ArrayLike,
        iops: npt.ArrayLike,
        io_size: Optional[SizeLike] = None,
        *,
        bytes_per_s: Optional[npt.ArrayLike] = None,
        duration_s: Optional[float] = None,
        read_fraction: float = 1.0,
        pattern: str = "random",
        service_time_ms: Optional[float] = None,
        max_in_flight: Optional[float] = None,
    ) -> "PiecewiseOpenLoop":
        """Arrivals at a rate that is constant between change times: ``iops[i]`` I/Os per second
        from ``change_s[i]`` until the next change (the last until the end of the run). Nothing
        per step is stored, so a month at ``dt=0.001`` (2.6e9 steps) takes a few hundred values,
        and the engine jumps over each steady stretch (:meth:`Simulation.run`'s ``jump``).

        Give the bytes as one ``io_size`` for every segment, or as ``bytes_per_s`` per segment.
        ``duration_s``, if given, is the trace's length (as an array's length is an
        :class:`OpenLoop`'s); else the run's ``duration_s`` sets it. Each change time must be a
        whole number of steps of the run's ``dt``. The other keywords are :class:`OpenLoop`'s.
        Returns a :class:`PiecewiseOpenLoop`.

        >>> import ebssim
        >>> w = ebssim.OpenLoop.piecewise([0, 3600], [1000, 2000], "4k")
        >>> w
        PiecewiseOpenLoop(2 segments: 1,000 IOPS x 4 KiB from 0 s, 2,000 IOPS x 4 KiB from 3,600 s)

        On a 100 GiB gp2 the first hour drains 700 credits a second (5.4e6 - 2.52e6 = 2.88e6
        left), the second 1,700 a second: empty 2.88e6 / 1,700 = 1,694.1 s into it.

        >>> r = ebssim.simulate(ebssim.gp2(100), w, duration_s=7200, record=False)
        >>> round(r.cliff_time_s, 1)
        5294.1
        """
        return PiecewiseOpenLoop(
            change_s,
            iops,
            io_size,
            bytes_per_s=bytes_per_s,
            duration_s=duration_s,
            read_fraction=read_fraction,
            pattern=pattern,
            service_time_ms=service_time_ms,
            max_in_flight=max_in_flight,
        )

    @property
    def n_steps(self) -> int:
        return int(self.ops.shape[0])

    def __str__(self) -> str:
        steps = f"{self.n_steps} steps" if self.dt is None else f"{self.n_steps} steps of {self.dt:g} s"
        if self.resolution_s is not None and self.resolution_s != self.dt:
            steps += f" (measured per {self.resolution_s:g} s, spread evenly)"
        since = "" if self.start is None else f" from {self.start.isoformat()}"
        bound = ""
        if self.max_in_flight is not None:
            b = self.in_flight_bounds()
            lo, hi = float(b.min()), float(b.max())
            bound = f", at most {lo:g} in flight" if lo == hi else f", at most {lo:g} to {hi:g} in flight per step"
        return f"open-loop trace of {steps}{since} ({self.ops.sum():.4g} I/Os{bound})"

    def __repr__(self) -> str:
        return _repr.open_loop_repr(self)

    def _repr_html_(self) -> str:
        return _repr.open_loop_html(self)


def _read_share(read_ops: npt.NDArray[np.float64], ops: npt.NDArray[np.float64]) -> float:
    """A trace's overall share of reads (1 without I/O)."""
    total_ops = float(ops.sum())
    return float(np.sum(read_ops)) / total_ops if total_ops > 0 else 1.0


def _as_series(x: Any, name: str) -> npt.NDArray[np.float64]:
    index = getattr(x, "index", None)
    if type(index).__name__ in ("DatetimeIndex", "TimedeltaIndex", "PeriodIndex"):
        # The issue that brought OpenLoop.from_pandas: such an index was silently dropped, and with
        # it the trace's step (one-minute sums read as one-second demand).
        raise ValueError(
            f"{name} is a pandas object indexed by time ({type(index).__name__}), whose index an array "
            f"would drop: build the trace with ebssim.OpenLoop.from_pandas(data), which takes the step "
            f"(dt) and the wall-clock start from the index"
        )
    if np.ma.isMaskedArray(x) and np.ma.is_masked(x):
        raise ValueError(
            f"{name} is a masked array with {int(np.asarray(x.mask).sum())} masked values, which the simulation "
            f"would read as their underlying data: fill them (e.g. {name}.filled(0)) or drop those steps"
        )
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} must be a 1-D array of numbers: {e}") from None
    # Only integers and floats are demand; converting other kinds would drop an imaginary part,
    # count True as one I/O, or parse strings.
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a 1-D array of numbers (integers or floats), got dtype {raw.dtype}")
    if raw.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {raw.shape}")
    if raw.shape[0] == 0:
        raise ValueError(f"{name} is empty: a trace needs at least one step")
    # Values are checked by the core in one pass (finite, >= 0, no bytes without ops).
    return np.ascontiguousarray(raw, dtype=np.float64)


def _levels(x: npt.ArrayLike, name: str, what: str) -> npt.NDArray[np.float64]:
    """A 1-D array of finite numbers >= 0, one per segment."""
    a = _as_series(x, name)
    bad = ~(np.isfinite(a) & (a >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}[{i}]={float(a[i])!r} must be a finite number of {what} >= 0")
    return a


class PiecewiseOpenLoop:
    """An open loop whose arrival rate is constant between change times (a step function):
    ``iops[i]`` I/Os per second and ``bytes_per_s[i]`` bytes per second from ``change_s[i]``
    until the next change, the last segment until the end of the run. Build it with
    :meth:`OpenLoop.piecewise` (which documents the parameters); it runs wherever an
    :class:`OpenLoop` does, without storing a value per step. Results are what the equivalent
    per-step trace gives (the core steps the same rule; docs/model.md, "Jumps").
    """

    change_s: npt.NDArray[np.float64]
    iops: npt.NDArray[np.float64]
    bytes_per_s: npt.NDArray[np.float64]
    duration_s: Optional[float]
    read_fraction: float
    pattern: str
    service_time_ms: Optional[float]
    max_in_flight: Optional[float]
    dt: None = None  # no step of its own: it takes the simulation's

    def __init__(
        self,
        change_s: npt.ArrayLike,
        iops: npt.ArrayLike,
        io_size: Optional[SizeLike] = None,
        *,
        bytes_per_s: Optional[npt.ArrayLike] = None,
        duration_s: Optional[float] = None,
        read_fraction: float = 1.0,
        pattern: str = "random",
        service_time_ms: Optional[float] = None,
        max_in_flight: Optional[float] = None,
    ) -> None:
        self._sequential = _check_pattern(pattern)
        change = _levels(change_s, "change_s", "seconds")
        rates = _levels(iops, "iops", "I/Os per second")
        if rates.shape != change.shape:
            raise ValueError(
                f"iops has {rates.shape[0]} values but change_s has {change.shape[0]}: one rate per segment"
            )
        if (io_size is None) == (bytes_per_s is None):
            raise ValueError("give the bytes as io_size (one size for every segment) or bytes_per_s, not both")
        if bytes_per_s is None:
            assert io_size is not None  # one of the two, checked above
            nbytes = rates * parse_size(io_size)
        else:
            nbytes = _levels(bytes_per_s, "bytes_per_s", "bytes per second")
            if nbytes.shape != change.shape:
                raise ValueError(
                    f"bytes_per_s has {nbytes.shape[0]} values but change_s has {change.shape[0]}: one per segment"
                )
        if change[0] != 0:
            raise ValueError(f"change_s[0]={float(change[0])!r} must be 0 (the first segment starts the run)")
        steps = np.diff(change)
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0)) + 1
            raise ValueError(
                f"change_s[{i}]={float(change[i])!r} must be > change_s[{i - 1}]={float(change[i - 1])!r} "
                f"(strictly increasing)"
            )
        zero_ops = (rates == 0) & (nbytes > 0)
        if zero_ops.any():
            i = int(np.argmax(zero_ops))
            raise ValueError(f"bytes_per_s[{i}]={float(nbytes[i])!r} with iops[{i}]=0: bytes need at least one I/O")
        if duration_s is not None:
            d = real(duration_s, "duration_s", "a number of seconds")
            if not (math.isfinite(d) and d > float(change[-1])):
                raise ValueError(
                    f"duration_s={duration_s!r} must be a finite number of seconds after the last change "
                    f"(change_s[{change.shape[0] - 1}]={float(change[-1])!r})"
                )
            duration_s = d
        self.change_s = change
        self.iops = rates
        self.bytes_per_s = nbytes
        self.duration_s = duration_s
        self.read_fraction = _check_read_fraction(read_fraction)
        self.pattern = pattern
        self._service_time_s = _service_time_s(service_time_ms)
        self.service_time_ms = service_time_ms
        self._max_in_flight = _max_in_flight(max_in_flight)
        self.max_in_flight = max_in_flight

    def change_steps(self, dt: float) -> npt.NDArray[np.int64]:
        """The first step of each segment at step ``dt``; a change time that is not a whole
        number of steps is a ValueError naming it."""
        step = _dt(dt)
        q = self.change_s / step
        k = np.round(q)
        off = np.abs(k - q) > 1e-9 * np.maximum(1.0, q)
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(f"change_s[{i}]={float(self.change_s[i])!r} is not a whole number of steps of dt={dt!r}")
        if k[-1] >= 2**53:
            raise ValueError(
                f"change_s[{k.shape[0] - 1}]={float(self.change_s[-1])!r} at dt={dt!r} is more than 2^53 steps"
            )
        return k.astype(np.int64)

    def n_steps(self, dt: float) -> Optional[int]:
        """Steps at ``dt`` when the trace has its own ``duration_s``, else None (the run says)."""
        return None if self.duration_s is None else _steps(self.duration_s, dt)

    def _native_for(self, dt: float, n_steps: int) -> _core.PiecewiseOpenLoop:
        """The core's workload at step ``dt`` for a run of ``n_steps``."""
        change = self.change_steps(dt)
        if change[-1] >= n_steps:
            i = int(np.argmax(change >= n_steps))
            raise ValueError(
                f"change_s[{i}]={float(self.change_s[i])!r} is at or after the end of the run "
                f"({n_steps:,} steps of dt={dt:g} s = {n_steps * dt:g} s)"
            )
        return _core.PiecewiseOpenLoop(
            change,
            self.iops * dt,
            self.bytes_per_s * dt,
            read_fraction=self.read_fraction,
            sequential=self._sequential,
            service_time_s=self._service_time_s,
            max_in_flight=self._max_in_flight,
        )

    def per_step(self, dt: float, n_steps: int) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The I/Os and bytes arriving in each of ``n_steps`` steps of ``dt``: the equivalent
        :class:`OpenLoop` trace's arrays (materialised: 16 bytes per step)."""
        change = self.change_steps(dt)
        lengths = np.diff(np.append(np.minimum(change, n_steps), n_steps))
        return np.repeat(self.iops * dt, lengths), np.repeat(self.bytes_per_s * dt, lengths)

    def mean_io_bytes(self, duration_s: float) -> float:
        """Mean I/O size over the first ``duration_s`` seconds (0 when nothing arrives)."""
        ends = np.minimum(np.append(self.change_s[1:], duration_s), duration_s)
        seconds = np.maximum(ends - np.minimum(self.change_s, duration_s), 0.0)
        ops = float(np.dot(self.iops, seconds))
        return float(np.dot(self.bytes_per_s, seconds)) / ops if ops > 0 else 0.0

    def __str__(self) -> str:
        n = self.change_s.shape[0]
        return f"piecewise open loop of {n} segment{'s' * (n != 1)}, {float(self.iops.max()):g} IOPS at most"

    def __repr__(self) -> str:
        def seg(i: int) -> str:
            rate = float(self.iops[i])
            size = float(self.bytes_per_s[i]) / rate if rate > 0 else 0.0
            kib = f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size / 1024:g} KiB"
            return f"{rate:,.6g} IOPS x {kib} from {float(self.change_s[i]):,g} s"

        n = self.change_s.shape[0]
        shown = ", ".join(seg(i) for i in range(min(n, 4)))
        more = f", ... ({n - 4} more)" if n > 4 else ""
        return f"PiecewiseOpenLoop({n} segment{'s' * (n != 1)}: {shown}{more})"

    def _repr_html_(self) -> str:
        return _repr.html_table("PiecewiseOpenLoop", [("", repr(self)[len("PiecewiseOpenLoop(") : -1])])


@dataclass(frozen=True, eq=False)
class PhasedClosedLoop:
    """A closed loop whose users (I/Os in flight) and think time change from step to step: a day
    of traffic, a batch that ramps up, fio phases back to back. In every step the engine does
    exactly what a :class:`ClosedLoop` with that step's ``in_flight`` and think time would do
    (one run, one result; the rule is the core's, as for ClosedLoop). The I/O (size, mix,
    pattern, service time, counting) is the same in every step.

    Parameters
    ----------
    in_flight : array_like
        Users in each step (length = number of steps); 0 is a step without users.
    think_time_ms : float or array_like
        Think time of every step, or of each step.
    io_size, read_fraction, pattern, service_time_ms, counted_per_io
        As for :class:`ClosedLoop`.

    Examples
    --------
    32 users for 2,000 s, then 4 with 10 ms think time, on a 100 GiB gp2: the bucket empties at
    5.4e6 / (3,000 - 300) = 2,000 s, and the 4 users then offer 4 / (0.504 + 10) ms = 381 IOPS,
    above the 300 baseline:

    >>> import ebssim
    >>> w = PhasedClosedLoop.from_phases([(2000, 32), (700, 4, 10.0)], io_size="4k")
    >>> w
    PhasedClosedLoop(2,700 steps of 4 KiB random reads in 2 phases: 32 in flight for 2,000 steps,
    4 in flight and 10 ms think time for 700 steps)
    >>> r = ebssim.simulate(ebssim.gp2(100), w)
    >>> print(r.cliff_time_s, r.iops[0], r.iops[-1])
    2000.0 3000.0 300.0
    """

    in_flight: npt.NDArray[np.float64]
    think_time_ms: Union[float, npt.NDArray[np.float64]] = 0.0
    io_size: SizeLike = 4096
    read_fraction: float = 1.0
    pattern: str = "random"
    service_time_ms: Optional[float] = None
    counted_per_io: Optional[float] = None
    _native: _core.PhasedClosedLoop = field(init=False, repr=False, compare=False)

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:  # the compiled part is rebuilt (ebssim._pickle)
        return _pickle.reduce(self, _pickle.init_fields(self))

    def __post_init__(self) -> None:
        sequential = _check_pattern(self.pattern)
        users = _as_series(self.in_flight, "in_flight")
        if isinstance(self.think_time_ms, (int, float, np.integer, np.floating)) and not isinstance(
            self.think_time_ms, bool
        ):
            _think_time_s(float(self.think_time_ms))
            think = np.full(users.shape[0], float(self.think_time_ms))
        else:
            think = _as_series(self.think_time_ms, "think_time_ms")
            if think.shape != users.shape:
                raise ValueError(
                    f"think_time_ms has {think.shape[0]} steps but in_flight has {users.shape[0]}: give one think "
                    f"time, or one per step"
                )
        for name, a in (("in_flight", users), ("think_time_ms", think)):
            bad = ~(np.isfinite(a) & (a >= 0))
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"{name}[{i}]={float(a[i])!r} must be a finite number >= 0")
        object.__setattr__(self, "in_flight", users)
        object.__setattr__(self, "think_time_ms", think)
        loop = _core.ClosedLoop(
            1.0,
            parse_size(self.io_size),
            read_fraction=_check_read_fraction(self.read_fraction),
            sequential=sequential,
            service_time_s=_service_time_s(self.service_time_ms),
            counted_per_io=_counted_per_io(self.counted_per_io),
        )
        object.__setattr__(self, "_native", _core.PhasedClosedLoop(loop, users, think / 1e3))

    @classmethod
    def from_phases(
        cls,
        phases: Sequence[Union[Tuple[float, float], Tuple[float, float, float]]],
        io_size: SizeLike = 4096,
        *,
        dt: float = 1.0,
        **kwargs: Any,
    ) -> "PhasedClosedLoop":
        """Phases one after the other: ``(duration_s, in_flight)`` or ``(duration_s, in_flight,
        think_time_ms)``, each a whole number of steps of ``dt``; other keywords as for the class."""
        if isinstance(phases, (str, bytes)) or not isinstance(phases, Sequence) or not phases:
            raise ValueError(f"phases={phases!r} must be a non-empty list of (duration_s, in_flight[, think_time_ms])")
        users: List[np.ndarray] = []
        think: List[np.ndarray] = []
        for i, ph in enumerate(phases):
            if not isinstance(ph, (tuple, list)) or len(ph) not in (2, 3):
                raise ValueError(
                    f"phases[{i}]={ph!r} must be (duration_s, in_flight) or (duration_s, in_flight, think_time_ms)"
                )
            n = _steps(ph[0], dt)
            users.append(np.full(n, real(ph[1], f"phases[{i}] in_flight", "a number of I/Os")))
            think.append(
                np.full(n, real(ph[2], f"phases[{i}] think_time_ms", "a number of ms") if len(ph) == 3 else 0.0)
            )
        return cls(np.concatenate(users), np.concatenate(think), io_size, **kwargs)

    @property
    def n_steps(self) -> int:
        return int(self.in_flight.shape[0])

    @property
    def io_bytes(self) -> float:
        return parse_size(self.io_size)

    def phases(self) -> List[Tuple[int, float, float]]:
        """The runs of steps with the same users and think time: (steps, in_flight, think_time_ms)."""
        th = np.asarray(self.think_time_ms)
        change = np.flatnonzero((np.diff(self.in_flight) != 0) | (np.diff(th) != 0)) + 1
        starts = np.concatenate([[0], change])
        ends = np.append(change, self.n_steps)
        return [(int(b - a), float(self.in_flight[a]), float(th[a])) for a, b in zip(starts, ends)]

    def __str__(self) -> str:
        loop = ClosedLoop(1, self.io_size, self.read_fraction, self.pattern)
        what = str(loop).rsplit(" at queue depth", 1)[0]
        lo, hi = float(self.in_flight.min()), float(self.in_flight.max())
        depth = f"queue depth {lo:g}" if lo == hi else f"queue depth {lo:g} to {hi:g}"
        return f"{what}, {depth} over {self.n_steps:,} steps"

    def __repr__(self) -> str:
        loop = ClosedLoop(1, self.io_size, self.read_fraction, self.pattern)
        what = str(loop).rsplit(" at queue depth", 1)[0]
        phases = self.phases()
        shown = [
            f"{u:g} in flight" + (f" and {z:g} ms think time" if z else "") + f" for {n:,} steps"
            for n, u, z in phases[:4]
        ]
        more = f", ... ({len(phases) - 4} more)" if len(phases) > 4 else ""
        return (
            f"PhasedClosedLoop({self.n_steps:,} steps of {what} in {len(phases)} phase{'s' * (len(phases) != 1)}: "
            f"{', '.join(shown)}{more})"
        )

    def _repr_html_(self) -> str:
        return _repr.html_table("PhasedClosedLoop", [("", repr(self)[len("PhasedClosedLoop(") : -1])])


@dataclass(frozen=True)
class Idle:
    """The volume rests: no new I/O; gp2 earns credits; a queued backlog still drains."""

    _native: _core.Idle = field(init=False, repr=False, compare=False)

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:  # the compiled part is rebuilt (ebssim._pickle)
        return _pickle.reduce(self, _pickle.init_fields(self))

    def __post_init__(self) -> None:
        object.__setattr__(self, "_native", _core.Idle())

    def __str__(self) -> str:
        return "idle"

    def _repr_html_(self) -> str:
        return "<b>Idle</b>: no new I/O (a queued backlog still drains; gp2 earns credits)"


@dataclass(frozen=True)
class LoopResult:
    """One loop of a :class:`SharedClosedLoops` run, per step (one copy of it): what
    :meth:`SharedClosedLoops.split` gives."""

    loop: ClosedLoop
    fraction: npt.NDArray[np.float64]
    """The share of its offer the volume served in each step (1: nothing held it back)."""
    iops: npt.NDArray[np.float64]
    """I/Os it completed per second: its offer times ``fraction``."""
    throughput_mib_s: npt.NDArray[np.float64]
    latency_s: npt.NDArray[np.float64]
    """Mean latency, seconds: its service time while ``fraction`` is 1, else Little's law over its loop."""

    @property
    def latency_ms(self) -> npt.NDArray[np.float64]:
        """:attr:`latency_s` in ms."""
        return self.latency_s * 1e3

    @property
    def mean_iops(self) -> float:
        """I/Os per second over the run."""
        return float(self.iops.mean()) if self.iops.size else math.nan

    @property
    def mean_latency_ms(self) -> float:
        """Mean latency of the run's I/Os (each step weighted by what it completed)."""
        done = float(self.iops.sum())
        return float((self.latency_s * self.iops).sum() / done) * 1e3 if done > 0 else math.nan

    def _rows(self) -> List[Tuple[str, str]]:
        held = int(np.count_nonzero(self.fraction < 1.0))
        return [
            ("loop", str(self.loop)),
            ("served", f"{_repr.number(self.mean_iops, 'IOPS')} mean over {self.iops.size:,} steps"),
            ("mean latency", _repr.latency(self.mean_latency_ms)),
            ("held back", f"in {held:,} step{'s' * (held != 1)}"),
        ]

    def __repr__(self) -> str:
        return _repr.short_repr("LoopResult", [f"{k} {v}" if k != "loop" else v for k, v in self._rows()])

    def _repr_html_(self) -> str:
        return _repr.html_table("LoopResult", self._rows())


@dataclass(frozen=True, eq=False)
class SharedClosedLoops:
    """Several closed loops on one volume, sharing its limits: fio's jobs (and their clones) on
    one device at the same time, several applications on one disk.

    Each loop offers what it would alone, ``in_flight / (service time + think time)``, at most
    its ``max_iops`` (fio's ``rate_iops``); the volume runs their sum as one :class:`ClosedLoop`
    (:meth:`on`: the offers' total, their mean I/O size, read fraction and counting weighted by
    offer) and, when a limit binds, serves every loop the same fraction ``f`` of its offer. A
    loop's latency is its service time while ``f`` is 1 (a ``max_iops`` cap holds I/Os before
    they are submitted, not in the volume); throttled, Little's law over its own loop,
    ``in_flight / (f x offer) - think time``, never below its service time.

    In :meth:`Simulation.run` it stands for one volume's workload; the volume's result describes
    the sum (its ``workload`` is :meth:`on`'s loop) and :meth:`split` gives each loop's.

    Parameters
    ----------
    loops : sequence of ClosedLoop
    max_iops : sequence of float, optional
        Each loop's cap on its offered I/Os per second (``inf``: none); default none.
    copies : sequence of int, optional
        Identical copies of each loop (fio's ``numjobs``), each offering the loop's load; default 1.

    Examples
    --------
    Depth 8 and depth 24 of 16 KiB random reads on a gp3 (3,000 IOPS): they offer
    8 / 0.5153 ms and 24 / 0.5153 ms, 62,105 I/Os per second in all, of which the volume serves
    3,000, f = 4.83 %: 750 and 2,250 IOPS, each waiting 8 / 750 = 24 / 2,250 = 10.7 ms:

    >>> import ebssim
    >>> from ebssim import ClosedLoop, SharedClosedLoops
    >>> w = SharedClosedLoops([ClosedLoop(8, "16k"), ClosedLoop(24, "16k")])
    >>> r = ebssim.simulate(ebssim.gp3(100), w, duration_s=60)
    >>> [(round(p.mean_iops), round(p.mean_latency_ms, 2)) for p in w.split(r)]
    [(750, 10.67), (2250, 10.67)]
    """

    loops: Sequence[ClosedLoop]
    max_iops: Optional[Sequence[float]] = None
    copies: Optional[Sequence[int]] = None

    def __post_init__(self) -> None:
        if isinstance(self.loops, ClosedLoop) or not isinstance(self.loops, Sequence) or not self.loops:
            raise ValueError(f"loops={self.loops!r} must be a non-empty sequence of ClosedLoop")
        loops = tuple(self.loops)
        for i, lp in enumerate(loops):
            if not isinstance(lp, ClosedLoop):
                raise ValueError(f"loops[{i}]={lp!r} must be a ClosedLoop, not {type(lp).__name__}")
        n = len(loops)
        caps = [math.inf] * n if self.max_iops is None else list(self.max_iops)
        if len(caps) != n:
            raise ValueError(f"max_iops has {len(caps)} entries but loops has {n}: give one cap per loop")
        for i, c in enumerate(caps):
            v = real(c, f"max_iops[{i}]", "a number of I/Os per second")
            if not v > 0:  # also NaN
                raise ValueError(f"max_iops[{i}]={c!r} must be a positive number of I/Os per second (inf: no cap)")
            caps[i] = v
        copies = [1] * n if self.copies is None else list(self.copies)
        if len(copies) != n:
            raise ValueError(f"copies has {len(copies)} entries but loops has {n}: give one count per loop")
        for i, k in enumerate(copies):
            if integer(k, f"copies[{i}]", "a whole number of copies") < 1:
                raise ValueError(f"copies[{i}]={k!r} must be at least 1")
            copies[i] = int(k)
        object.__setattr__(self, "loops", loops)
        object.__setattr__(self, "max_iops", tuple(caps))
        object.__setattr__(self, "copies", tuple(copies))

    def _copies(self) -> Tuple[int, ...]:
        return tuple(self.copies or ())

    def _service_s(self, volume: "Volume") -> List[float]:
        return [
            lp.service_time_ms / 1e3
            if lp.service_time_ms is not None
            else volume.service_time_s(lp.io_bytes, lp.read_fraction)
            for lp in self.loops
        ]

    def offered_iops(self, volume: "Volume") -> List[float]:
        """Each loop's offer on ``volume`` (one copy): ``in_flight / (service time + think time)``
        (the core's closed-loop rule), at most its ``max_iops``."""
        caps = tuple(self.max_iops or ())
        return [
            min(float(_core.closed_loop_rate(volume._params, lp._native, True).offered_iops), cap)
            for lp, cap in zip(self.loops, caps)
        ]

    def on(self, volume: "Volume") -> ClosedLoop:
        """The one closed loop the volume runs: the loops' offers summed (in flight: the I/Os
        they keep in service, ``offer x service time``), their I/O size, read fraction and
        counted operations per I/O weighted by offer."""
        rates = self.offered_iops(volume)
        service = self._service_s(volume)
        weights = [rate * k for rate, k in zip(rates, self._copies())]
        counted = [
            lp.counted_per_io if lp.counted_per_io is not None else volume.counted_ops_per_io(lp.io_bytes, lp.pattern)
            for lp in self.loops
        ]
        r = sum(weights)
        inflight = sum(w * s for w, s in zip(weights, service))
        return ClosedLoop(
            inflight,
            sum(w * lp.io_bytes for w, lp in zip(weights, self.loops)) / r,
            read_fraction=sum(w * lp.read_fraction for w, lp in zip(weights, self.loops)) / r,
            service_time_ms=inflight / r * 1e3,
            counted_per_io=sum(w * c for w, c in zip(weights, counted)) / r,
        )

    def split(self, result: "VolumeResult") -> List[LoopResult]:
        """Each loop's figures in a run of this workload (``result``: the volume's, with its
        per-step ``iops``), in the order of :attr:`loops`; one copy each."""
        volume = result.volume
        rates = self.offered_iops(volume)
        total = sum(rate * k for rate, k in zip(rates, self._copies()))
        served_all = np.asarray(result.iops, dtype=np.float64)
        f = np.minimum(served_all / total, 1.0)
        out: List[LoopResult] = []
        for lp, rate, st in zip(self.loops, rates, self._service_s(volume)):
            served = rate * f
            little = _core.closed_loop_latency_s(volume._params, lp._native, np.maximum(served, 1e-300))
            lat = np.where(f >= 1 - 1e-12, st, little)
            out.append(LoopResult(lp, f, served, served * lp.io_bytes / 2**20, lat))
        return out

    def __str__(self) -> str:
        n = sum(self._copies())
        return f"{n} closed loop{'s' * (n != 1)} sharing one volume: " + "; ".join(
            (f"{k} x " if k > 1 else "") + str(lp) for lp, k in zip(self.loops, self._copies())
        )


Workload = Union[ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop, Idle]


def _dt(dt: float) -> float:
    """The step, checked: a positive, finite number of seconds."""
    step = real(dt, "dt", "a number of seconds")
    if not math.isfinite(step) or step <= 0:
        raise ValueError(f"dt={dt!r} must be a positive, finite number of seconds")
    return step


def _steps(duration_s: float, dt: float) -> int:
    """Whole number of steps in ``duration_s``; a clear error otherwise."""
    step = _dt(dt)
    d = real(duration_s, "duration_s", "a number of seconds")
    if not math.isfinite(d) or d <= 0:
        raise ValueError(f"duration_s={duration_s!r} must be a positive, finite number of seconds")
    q = d / step
    if q > 2**53:  # also an infinite quotient (dt below 1e-308 and so on)
        raise ValueError(
            f"duration_s={duration_s!r} at dt={dt!r} is {q:.4g} steps, more than 2^53, beyond which steps cannot "
            f"be counted exactly; use a coarser dt or a shorter duration_s"
        )
    n = round(q)
    if n < 1 or abs(n * step - d) > 1e-9 * max(1.0, d):
        raise ValueError(f"duration_s={duration_s!r} is not a whole number of steps of dt={dt!r}")
    return int(n)
