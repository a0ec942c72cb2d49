"""Traces from pandas: measured demand over time, replayed as an :class:`~ebssim.OpenLoop`.

:func:`from_pandas` (also :meth:`OpenLoop.from_pandas <ebssim.OpenLoop.from_pandas>`) reads a
Series or DataFrame indexed by time; the trace keeps its step (``dt``, from the index), its
wall-clock start and its per-step read/write split, so that results come back on the same
clock with reads and writes apart. docs/replay.md tells the whole story.

Columns (names carry the unit):

- counts per row (e.g. CloudWatch's ``Sum`` per period): I/Os as ``ops`` or ``read_ops`` /
  ``write_ops``, bytes as ``bytes`` or ``read_bytes`` / ``write_bytes``;
- rates: ``iops`` or ``read_iops`` / ``write_iops``, and ``throughput_mib_s`` or
  ``read_mib_s`` / ``write_mib_s`` (the names of ebssim's own result columns).

>>> import pandas as pd
>>> from ebssim.trace import from_pandas
>>> s = pd.Series([1200.0, 600.0], name="read_iops",
...               index=pd.date_range("2024-05-01", periods=2, freq="1min", tz="UTC"))
>>> t = from_pandas(s, io_size="4k")          # 1,200 IOPS for a minute = 72,000 I/Os
>>> t.ops, t.dt, t.start
(array([72000., 36000.]), 60.0, Timestamp('2024-05-01 00:00:00+0000', tz='UTC'))
>>> from_pandas(s, io_size="4k", dt=20).ops   # each minute spread evenly over three 20 s steps
array([24000., 24000., 24000., 12000., 12000., 12000.])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._frames import COUNT_COLUMNS, GAPS, RATE_COLUMNS, _MiB
from ._units import SizeLike
from .workloads import OpenLoop, PiecewiseOpenLoop

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .results import VolumeResult

__all__ = ["from_pandas", "GAPS", "COUNT_COLUMNS", "RATE_COLUMNS"]

FloatArray = npt.NDArray[np.float64]


def from_pandas(
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
) -> OpenLoop:
    """An :class:`~ebssim.OpenLoop` trace from a pandas Series or DataFrame indexed by time.

    Parameters
    ----------
    data : pandas.Series or pandas.DataFrame
        One row per period. Columns (a Series: its name) from the table in the module docstring:
        counts per row (``read_ops``, ``write_bytes``, ...) or rates (``read_iops``,
        ``write_mib_s``, ...), not both. I/Os as a total (``ops``) or split into reads and
        writes (either one alone: the other is zero); bytes likewise, split when the I/Os are
        split, or from ``io_size``. Other columns are an error (select the ones to replay).
    dt : float, optional
        Step of the simulation, seconds. Default: the period, so that each period is one step
        (the engine spreads a step's demand evenly over it). A finer ``dt`` must divide the
        period; each period's demand is then spread evenly over its steps. Coarser is an error:
        aggregate first (``df.resample("300s").sum()``).
    period : float (seconds), str or pandas.Timedelta, optional
        Length of one row. Default: the index's ``freq``, else its spacing when all rows are
        equally spaced. Needed when rows are missing (gaps) or the index holds no time (e.g. a
        RangeIndex); must agree with the index's ``freq``. The index may be a DatetimeIndex
        (the trace keeps its start: results get a DatetimeIndex), a PeriodIndex, a
        TimedeltaIndex, or seconds in a numeric index named ``time_s`` (ebssim's own results).
    gaps : {"error", "zero", "interpolate"}
        Periods with no value: a row missing from the index grid, or NaN. ``"error"`` (default)
        refuses them and says where; ``"zero"`` takes them as no I/O; ``"interpolate"`` joins
        the values either side with a straight line (a gap at the start or end cannot be
        interpolated: error).
    io_size : int, float or str, optional
        Bytes per I/O when ``data`` has no byte columns (``"4k"``, 16384, ...).
    read_fraction : float
        Share of reads when the I/Os are a total (``ops`` or ``iops``); default 1.
    pattern, service_time_ms
        As for :class:`~ebssim.OpenLoop`.
    max_memory_bytes : float, optional
        Bound on the trace's arrays (32 bytes per step: I/Os, bytes, and their reads); default
        :data:`ebssim.limits`.
    max_in_flight : float, array_like or pandas.Series, optional
        The application's bound on outstanding I/Os (:class:`~ebssim.OpenLoop`): one number, or
        one per row of ``data`` (a Series indexed like it, or an array of its length), e.g. the
        measured ``VolumeQueueLength``; each period's bound holds over its steps, and a period
        missing from the rows (a gap) keeps the bound of the period before it. Demand the bound
        cannot carry waits in the application and is served later: the replay takes longer
        instead of queueing at the device (docs/replay.md, "Applications").

    Returns
    -------
    OpenLoop
        With ``dt``, ``start`` (the first row's time, or None without wall-clock time),
        ``resolution_s`` (the period) and, when reads and writes are given apart, ``read_ops``
        and ``read_bytes`` per step.

    Errors name the column, the row's time and the rule: an index out of order or with a
    duplicate (sort or combine first), irregular spacing (resample: ``df.resample("60s").sum()``
    for counts), negative, infinite or non-numeric values, bytes without I/Os.

    Examples
    --------
    One-minute sums (CloudWatch's ``Sum`` per period) replay at one step per minute; the
    engine sees 72,000 I/Os per 60 s step, 1,200 IOPS:

    >>> import ebssim, pandas as pd
    >>> idx = pd.date_range("2024-05-01", periods=200, freq="1min", tz="UTC")
    >>> df = pd.DataFrame({"read_ops": 72_000.0, "read_bytes": 72_000 * 4096.0}, index=idx)
    >>> r = ebssim.simulate(ebssim.gp2(100), from_pandas(df))
    >>> r.cliff_time_s            # 5.4e6 credits / (1,200 - 300) IOPS
    6000.0
    >>> r.to_pandas().index[100]  # the step in which it ran out, on the wall clock
    Timestamp('2024-05-01 01:40:00+0000', tz='UTC')

    Rows missing from the index make it irregular; once the period is given they are gaps, which
    are refused unless you say how to fill them:

    >>> holes = df.drop(idx[5:7])
    >>> from_pandas(holes)
    Traceback (most recent call last):
    ...
    ValueError: the index is irregular: its rows are 60 s (196x), 180 s (1x) apart. Resample it ...
    >>> from_pandas(holes, period="60s")
    Traceback (most recent call last):
    ...
    ValueError: read_ops has no value for 2 of 200 periods of 60 s, the first at 2024-05-01 00:05:00+00:00: ...
    >>> from_pandas(holes, period="60s", gaps="zero").ops[4:8]
    array([72000.,     0.,     0., 72000.])
    """
    return OpenLoop.from_pandas(
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


# --- Results of a replay: wall-clock time and the served read/write split -------------------


def time_index(result: "VolumeResult") -> "pd.Index":
    """The index of ``result.to_pandas()``: wall-clock times (a DatetimeIndex named ``time``)
    when the workload is a trace with a ``start``, else simulated seconds (``time_s``)."""
    import pandas as pd

    start = getattr(result.workload, "start", None)
    if start is None:
        return pd.Index(result.time_s, name="time_s")
    return pd.date_range(start, periods=result.n_values, freq=pd.Timedelta(seconds=result.record_every_s), name="time")


def served_reads(result: "VolumeResult") -> Optional[Tuple[FloatArray, FloatArray]]:
    """Reads served per step, (I/Os per second, MiB/s), for a trace with a per-step read/write
    split (``OpenLoop.read_ops``); None for other workloads, which split at ``read_fraction``.

    The engine serves reads and writes together: in each step it serves the same fraction ``f``
    of everything available, the backlog and the new arrivals alike (a fluid queue, docs/model.md).
    So the reads waiting evolve as ``R[k+1] = (1 - f[k]) (R[k] + r[k])`` and the reads served are
    ``f[k] (R[k] + r[k])``, where ``r`` is the reads arriving; the same holds for bytes. ``f`` is
    read back from the run's per-step outputs: what a step served over what it served plus what
    waited after it (``iops`` and ``backlog_ops``); it is 1 in steps bound by demand. A backlog
    carried in from an earlier run is split at this trace's overall read share. The core computes
    it (``split_served``, libebssim/include/ebssim/directions.hpp). The limits do not depend on
    the split: it is reporting only.
    """
    w = result.workload
    if not isinstance(w, OpenLoop) or w.read_ops is None or w.read_bytes is None:
        return None
    if not result.recorded:
        empty = np.empty(0)
        return empty, empty
    from .recording import _need_per_step

    _need_per_step(result, "the read/write split of a trace", "iops", "throughput_mib_s", "backlog_ops")
    dt = result.dt_s
    served_ops = result.iops * dt
    served_bytes = result.throughput_mib_s * (_MiB * dt)
    reads, read_bytes = _core.split_served(
        w.ops,
        w.bytes,
        w.read_ops,
        w.read_bytes,
        served_ops,
        served_bytes,
        result.backlog_ops,
        result.totals.backlog_bytes,
        w.read_fraction,
    )
    return reads / dt, read_bytes / (_MiB * dt)


# --- An application's bound on outstanding I/Os: the device's latency, when the work was done --


def device_latency_s(result: "VolumeResult") -> FloatArray:
    """The mean latency at the device of each step's I/Os (:attr:`VolumeResult.device_latency_s`):
    the core's ``device_latency_s`` (application.hpp), ``min(latency_s, max_in_flight / iops)``,
    for an open loop bounded by ``max_in_flight``, and for an :class:`OpenLoop` whose backlog runs
    out inside a step after a step that held it at its bound, the I/Os served while the backlog
    lasted at ``max_in_flight`` over the rate of the step before and the rest at the service time
    (``drained_device_latency_s``; needs the per-step ``backlog_ops``, recorded by default);
    ``latency_s`` for any other workload."""
    w = result.workload
    lat = np.asarray(result.latency_s, dtype=np.float64)
    if not isinstance(w, (OpenLoop, PiecewiseOpenLoop)) or w.max_in_flight is None:
        return lat.copy()
    from .recording import _need_per_step

    _need_per_step(result, "the device latency of an open loop bounded by max_in_flight", "iops", "latency_s")
    if result.n_steps == 0:
        return np.empty(0)
    bound = w.in_flight_bounds() if isinstance(w, OpenLoop) else np.array([float(w.max_in_flight)])
    iops = np.asarray(result.iops, dtype=np.float64)
    if not isinstance(w, OpenLoop) or "backlog_ops" not in result.recorded:  # the steady rule alone
        out: FloatArray = _core.device_latency_s(lat, iops, bound)
        return out
    backlog = np.asarray(result.backlog_ops, dtype=np.float64)
    arrivals = np.asarray(w.ops, dtype=np.float64)[: result.n_steps]
    out = _core.device_latency_s(lat, iops, bound, backlog, arrivals, result.service_time_s, result.dt_s)
    return out


def finish_time(result: "VolumeResult") -> Tuple[Optional[float], float]:
    """(When the trace's last I/O completed, or None if not by the end of the run; the end of
    the trace's last step with I/O), simulated seconds: :attr:`VolumeResult.finish_s`."""
    w = result.workload
    if not isinstance(w, OpenLoop):
        raise ValueError(
            f"when a trace's work was done is a trace's (an OpenLoop), not {type(w).__name__}'s: this run has none"
        )
    t0, dt = result.t0_s, result.dt_s
    n_trace = result.n_steps if result.trace_steps is None else result.trace_steps
    busy = np.flatnonzero(w.ops[:n_trace] > 0)
    if busy.size == 0:
        return t0, t0  # no work
    from .recording import _need_per_step

    _need_per_step(result, "when the trace's work was done", "iops", "backlog_ops")
    last = int(busy[-1])
    own = t0 + (last + 1) * dt
    backlog = np.asarray(result.backlog_ops, dtype=np.float64)
    clear = np.flatnonzero(backlog[last:] <= 0)
    if clear.size == 0:
        return None, own
    j = last + int(clear[0])
    if j == last:
        return own, own  # its arrivals are spread over the step: the last one arrives at its end
    # Step j serves only backlog; the queue empties inside it at the rate the step before served
    # (the core's drain_time_s, the rule the device latency of such a step uses too).
    rate = float(np.asarray(result.iops, dtype=np.float64)[j - 1])
    return t0 + j * dt + _core.drain_time_s(float(backlog[j - 1]), 0.0, rate, dt), own


def run_on_trace(trace: OpenLoop, steps: int) -> OpenLoop:
    """``trace`` followed by ``steps`` steps without new I/O, its bound on outstanding I/Os kept
    at its last step's: what a replay runs until the trace's work is done."""
    import dataclasses

    zeros = np.zeros(steps)

    def longer(a: Optional[FloatArray]) -> Optional[FloatArray]:
        return None if a is None else np.concatenate([a, zeros])

    bound = trace.max_in_flight
    if isinstance(bound, np.ndarray):
        bound = np.concatenate([bound, np.full(steps, float(bound[-1]))])
    kwargs = {f.name: getattr(trace, f.name) for f in dataclasses.fields(trace) if f.init}
    kwargs.update(ops=longer(trace.ops), bytes=longer(trace.bytes), max_in_flight=bound)
    if trace.read_ops is not None:
        kwargs.update(read_ops=longer(trace.read_ops), read_bytes=longer(trace.read_bytes), read_fraction=1.0)
    return OpenLoop(**kwargs)


def idle_tail(trace: OpenLoop, steps: int) -> OpenLoop:
    """``steps`` steps without new I/O at ``trace``'s last bound on outstanding I/Os, its I/O
    pattern and service time: a look past a trace's end for when its backlog drains."""
    bound = trace.in_flight_bounds()[-1] if trace.max_in_flight is not None else math.inf
    zeros = np.zeros(steps)
    return OpenLoop(
        zeros,
        zeros.copy(),
        pattern=trace.pattern,
        service_time_ms=trace.service_time_ms,
        dt=trace.dt,
        max_in_flight=float(bound) if math.isfinite(bound) else None,
    )
