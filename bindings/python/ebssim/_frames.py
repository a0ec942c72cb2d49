"""Reading a trace from pandas: a Series or DataFrame indexed by time, checked and turned into
the fields of an :class:`~ebssim.OpenLoop` (:func:`trace_fields`).

The reader returns fields, not a workload: :meth:`ebssim.OpenLoop.from_pandas` builds the trace
from them, and :func:`ebssim.trace.from_pandas` (the public face, documented there) calls that.
So ebssim.workloads imports this module and not ebssim.trace, which imports ebssim.workloads.
"""

from __future__ import annotations

import math
import numbers
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _limits
from ._units import SizeLike, parse_size, real

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

FloatArray = npt.NDArray[np.float64]

#: Ways to treat periods without a value (a missing row or NaN): see :func:`from_pandas`.
GAPS = ("error", "zero", "interpolate")
#: Columns holding counts per row (I/Os, bytes), by what they split into.
COUNT_COLUMNS = ("ops", "read_ops", "write_ops", "bytes", "read_bytes", "write_bytes")
#: Columns holding rates (I/Os per second, MiB/s), in the same order as COUNT_COLUMNS.
RATE_COLUMNS = ("iops", "read_iops", "write_iops", "throughput_mib_s", "read_mib_s", "write_mib_s")
#: CloudWatch's demand metrics (namespace AWS/EBS), whose statistic ``Sum`` is the I/Os and bytes
#: of each period, and the count column each is read as (:data:`ebssim.aws.DEMAND_METRICS`).
CLOUDWATCH_COLUMNS: Mapping[str, str] = MappingProxyType(
    {
        "VolumeReadOps": "read_ops",
        "VolumeWriteOps": "write_ops",
        "VolumeReadBytes": "read_bytes",
        "VolumeWriteBytes": "write_bytes",
    }
)

_MiB = float(2**20)


def trace_fields(
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
    max_in_flight: Any = None,
) -> Dict[str, Any]:
    """The keyword arguments of the :class:`~ebssim.OpenLoop` that :func:`ebssim.trace.from_pandas`
    returns for these arguments (its docstring has the rules): ``ops`` and ``bytes`` per step,
    ``read_ops`` and ``read_bytes`` when the data splits reads and writes (else
    ``read_fraction``), ``dt``, ``start``, ``resolution_s``, ``pattern``, ``service_time_ms``,
    ``max_in_flight`` (a number, or one value per step: each period's repeated over its steps)."""
    if gaps not in GAPS:
        raise ValueError(f"gaps={gaps!r} must be one of {', '.join(map(repr, GAPS))}")
    frame = _as_frame(data)
    given = _columns(frame)
    period_s, positions, start, label = _grid(frame.index, period)
    fields = columns_fields(
        {name: frame[name] for name in given},
        period_s,
        positions,
        start,
        label,
        gaps=gaps,
        dt=dt,
        io_size=io_size,
        read_fraction=read_fraction,
        pattern=pattern,
        service_time_ms=service_time_ms,
        max_memory_bytes=max_memory_bytes,
    )
    if max_in_flight is not None:
        n = int(positions[-1]) + 1
        k = int(round(period_s / fields["dt"]))
        fields["max_in_flight"] = _bounds(max_in_flight, frame, positions, n, k)
    return fields


def columns_fields(
    columns: Mapping[str, Any],
    period_s: float,
    positions: npt.NDArray[np.int64],
    start: Optional["pd.Timestamp"],
    labels: Any,
    *,
    dt: Optional[float],
    io_size: Optional[SizeLike],
    read_fraction: float,
    pattern: str,
    service_time_ms: Optional[float],
    max_memory_bytes: Optional[float],
    gaps: str = "error",
    checked: bool = False,
) -> Dict[str, Any]:
    """:func:`trace_fields` from the checked columns (by their names as given: :func:`_columns`;
    each a pandas Series or a numpy array, one value per row) and the rows' grid (:func:`_grid`):
    the part that reads values, so that ``ebssim.fleet`` runs it on each volume's rows of one long
    frame without a DataFrame per volume. ``checked``: the columns are float64 arrays whose
    values :func:`_values` would accept (NaN or finite and >= 0), checked by the caller for many
    volumes at once; they are not written to. Returns the fields but ``max_in_flight``."""
    shown = {_canonical(c): c for c in columns}  # the data's own names, for messages
    rates = any(c in RATE_COLUMNS for c in shown)
    names = RATE_COLUMNS if rates else COUNT_COLUMNS
    n = int(positions[-1]) + 1
    step = period_s if dt is None else _step(dt, period_s)
    k = int(round(period_s / step))
    cap = _limits.max_memory_bytes(max_memory_bytes)
    need = 32.0 * n * k
    if need > cap:
        raise _limits.LimitError(
            f"the trace is {n:,} periods of {period_s:g} s at dt={step:g} s, {n * k:,} steps whose arrays take "
            f"{need:.4g} bytes (32 per step), above max_memory_bytes={cap:.4g}: use a coarser dt, replay a "
            f"part at a time, or raise max_memory_bytes (keyword, or ebssim.limits)"
        )
    whole = n == positions.shape[0]  # every period has its row: the rows are the grid

    def column(name: str) -> Optional[FloatArray]:
        if name not in shown:
            return None
        values = columns[shown[name]] if checked else _values(columns[shown[name]], shown[name], labels)
        if whole:
            full = values
        else:
            full = np.full(n, np.nan)
            full[positions] = values
        per = _fill(full, gaps, shown[name], labels, period_s)
        if name.endswith("iops"):
            return per * period_s
        return per * (period_s * _MiB) if name.endswith("mib_s") else per

    cloudwatch = any(c in CLOUDWATCH_COLUMNS for c in columns)

    def said(name: str) -> str:
        """A column as the data names it, or would: in CloudWatch's words if it uses them."""
        if name in shown:
            return shown[name]
        return _CLOUDWATCH_NAMES.get(name, name) if cloudwatch else name

    ops, r_ops, w_ops, nbytes, r_bytes, w_bytes = (column(c) for c in names)
    split = r_ops is not None or w_ops is not None
    if split:
        zero = np.zeros(n)
        r_ops = zero if r_ops is None else r_ops
        w_ops = zero if w_ops is None else w_ops
        if read_fraction != 1.0:
            raise ValueError(
                f"read_fraction={read_fraction!r} is given but the data splits reads and writes "
                f"({said(names[1])}, {said(names[2])}): leave read_fraction out"
            )
        if io_size is not None:
            if r_bytes is not None or w_bytes is not None or nbytes is not None:
                raise ValueError(f"io_size={io_size!r} is given but so are byte columns: give one or the other")
            size = parse_size(io_size)
            r_bytes, w_bytes = r_ops * size, w_ops * size
        else:
            if nbytes is not None:
                raise ValueError(
                    f"the I/Os are split ({said(names[1])}, {said(names[2])}) but the bytes are a total "
                    f"({said(names[3])}): give {said(names[4])} and {said(names[5])}, or io_size="
                )
            for which, o, b in (("read", r_ops, r_bytes), ("write", w_ops, w_bytes)):
                if b is None and (o > 0).any():
                    raise ValueError(
                        f"{said(names[1] if which == 'read' else names[2])} is given without "
                        f"{said(names[4] if which == 'read' else names[5])}: give the bytes too, or io_size="
                    )
            r_bytes = np.zeros(n) if r_bytes is None else r_bytes
            w_bytes = np.zeros(n) if w_bytes is None else w_bytes
        for which, o, b in (("read", r_ops, r_bytes), ("write", w_ops, w_bytes)):
            _no_bytes_without_ops(o, b, said(names[1 if which == "read" else 2]), labels, period_s)
        ops, nbytes = r_ops + w_ops, r_bytes + w_bytes
    else:
        if ops is None:
            raise ValueError(
                f"no I/O column: data needs {names[0]!r} or {names[1]!r} / {names[2]!r} "
                f"(counts per row: {', '.join(COUNT_COLUMNS)}; rates: {', '.join(RATE_COLUMNS)})"
            )
        if r_bytes is not None or w_bytes is not None:
            raise ValueError(
                f"the bytes are split ({said(names[4])}, {said(names[5])}) but the I/Os are a total "
                f"({said(names[0])}): give {said(names[1])} and {said(names[2])}"
            )
        if io_size is not None:
            if nbytes is not None:
                raise ValueError(f"io_size={io_size!r} is given but so is {said(names[3])}: give one or the other")
            nbytes = ops * parse_size(io_size)
        elif nbytes is None:
            raise ValueError(f"no byte column: data needs {names[3]!r} (or its read and write parts), or io_size=")
        _no_bytes_without_ops(ops, nbytes, said(names[0]), labels, period_s)

    def spread(x: FloatArray) -> FloatArray:
        return x if k == 1 else np.repeat(x / k, k)

    fields: Dict[str, Any] = {"ops": spread(ops), "bytes": spread(nbytes)}
    if split:
        assert r_ops is not None and r_bytes is not None
        fields.update(read_ops=spread(r_ops), read_bytes=spread(r_bytes))
    else:
        fields["read_fraction"] = read_fraction
    fields.update(dt=step, start=start, resolution_s=period_s, pattern=pattern, service_time_ms=service_time_ms)
    return fields


def _bounds(
    max_in_flight: Any, frame: "pd.DataFrame", positions: npt.NDArray[np.int64], n: int, k: int
) -> Union[float, FloatArray]:
    """``max_in_flight=`` of :func:`trace_fields`: a number as it is; one value per row of
    ``frame`` (a pandas Series indexed like it, or an array of its length) on the grid of
    periods, each period's value over its ``k`` steps, a period missing from the rows (a gap)
    taking the value of the period before it."""
    import pandas as pd

    if isinstance(max_in_flight, (numbers.Real, np.number)) and not isinstance(max_in_flight, bool):
        return float(max_in_flight)  # checked by OpenLoop
    if isinstance(max_in_flight, pd.Series):
        if not max_in_flight.index.equals(frame.index):
            if max_in_flight.index.has_duplicates or not frame.index.isin(max_in_flight.index).all():
                missing = frame.index[~frame.index.isin(max_in_flight.index)]
                where = f": it has no value for {missing[0]}" if len(missing) else " (its index repeats a label)"
                raise ValueError(
                    f"max_in_flight is a Series whose index is not the data's{where}; give one value per row of "
                    f"data, indexed like it"
                )
            max_in_flight = max_in_flight.reindex(frame.index)
        raw = max_in_flight.to_numpy()
    else:
        raw = np.asarray(max_in_flight)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1:
        raise ValueError(
            f"max_in_flight must be a number of I/Os, or one per row of data (a 1-D array of numbers or a Series "
            f"indexed like data), got {raw.dtype} of shape {raw.shape}"
        )
    if raw.shape[0] != frame.shape[0]:
        raise ValueError(
            f"max_in_flight has {raw.shape[0]} values but data has {frame.shape[0]} rows: one bound per row (period)"
        )
    values = raw.astype(np.float64)
    bad = ~(values > 0)  # also NaN
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"max_in_flight at {frame.index[i]} is {float(values[i])!r}: it must be a positive number of I/Os "
            f"(inf: no bound in that period)"
        )
    full = np.full(n, np.nan)
    full[positions] = values
    # A gap keeps the bound of the period before it (the first period is always a row).
    idx = np.where(np.isnan(full), 0, np.arange(n))
    full = full[np.maximum.accumulate(idx)]
    return full if k == 1 else np.repeat(full, k)


def _as_frame(data: Any) -> "pd.DataFrame":
    import pandas as pd

    if isinstance(data, pd.Series):
        if data.name is None:
            raise ValueError(
                "the Series has no name: name it after what it holds, e.g. s.rename('read_iops') "
                f"(counts per row: {', '.join(COUNT_COLUMNS)}; rates: {', '.join(RATE_COLUMNS)})"
            )
        return data.to_frame()
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data must be a pandas Series or DataFrame indexed by time, not {type(data).__name__}")
    if data.shape[0] == 0:
        raise ValueError("data has no rows: a trace needs at least one period")
    return data


_CLOUDWATCH_NAMES = {count: metric for metric, count in CLOUDWATCH_COLUMNS.items()}


def _canonical(name: str) -> str:
    """A column's name in :data:`COUNT_COLUMNS` or :data:`RATE_COLUMNS`: CloudWatch's names of the
    demand metrics (:data:`CLOUDWATCH_COLUMNS`) are the counts they hold; any other name is itself."""
    return CLOUDWATCH_COLUMNS.get(name, name)


def _columns(frame: "pd.DataFrame") -> List[str]:
    """The frame's columns, checked (:func:`check_names`)."""
    return check_names([str(c) for c in frame.columns])


def check_names(cols: List[str]) -> List[str]:
    """``cols``, once each and all demand of one kind (counts or rates), a total or its parts;
    a ValueError naming the columns otherwise."""
    if len(set(cols)) != len(cols):
        raise ValueError(f"data has repeated columns {cols}: each column once")
    unknown = [c for c in cols if _canonical(c) not in COUNT_COLUMNS + RATE_COLUMNS]
    if unknown:
        raise ValueError(
            f"column(s) {unknown} are not demand: data takes counts per row ({', '.join(COUNT_COLUMNS)}, or "
            f"CloudWatch's Sums {', '.join(CLOUDWATCH_COLUMNS)}) or rates ({', '.join(RATE_COLUMNS)}); select "
            f"the columns to replay, e.g. df[['read_iops', 'write_iops']], or rename yours, e.g. "
            f"df.rename(columns={{'reads': 'read_ops'}})"
        )
    same: Dict[str, str] = {}
    for c in cols:
        if _canonical(c) in same:
            raise ValueError(f"data has both {same[_canonical(c)]} and {c}, which hold the same quantity: give one")
        same[_canonical(c)] = c
    counts = [c for c in cols if _canonical(c) in COUNT_COLUMNS]
    rates = [c for c in cols if _canonical(c) in RATE_COLUMNS]
    if counts and rates:
        raise ValueError(
            f"data mixes counts per row {counts} and rates per second {rates}: use one kind "
            f"(a count is a rate times the period)"
        )
    if not cols:
        raise ValueError("data has no columns")
    total, split = ("ops", "iops"), ("read_ops", "write_ops", "read_iops", "write_iops")
    for t, s in (
        (total, split),
        (("bytes", "throughput_mib_s"), ("read_bytes", "write_bytes", "read_mib_s", "write_mib_s")),
    ):
        a = [c for c in cols if _canonical(c) in t]
        b = [c for c in cols if _canonical(c) in s]
        if a and b:
            raise ValueError(f"data has both a total {a} and its parts {b}: give one or the other")
    return cols


def _period_seconds(period: Any) -> float:
    import pandas as pd

    if isinstance(period, bool):
        raise ValueError(f"period={period!r} must be seconds, a string like '60s' or a pandas.Timedelta")
    if isinstance(period, numbers.Real):
        p = float(period)
    else:
        try:
            p = pd.Timedelta(period).total_seconds()
        except (TypeError, ValueError):
            raise ValueError(
                f"period={period!r} must be seconds, a string like '60s' or '1min', or a pandas.Timedelta"
            ) from None
    if not (math.isfinite(p) and p > 0):
        raise ValueError(f"period={period!r} must be a positive, finite length of time")
    return p


def _step(dt: float, period_s: float) -> float:
    step = real(dt, "dt", "a number of seconds")
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"dt={dt!r} must be a positive, finite number of seconds")
    q = period_s / step
    if q < 1 - 1e-9:
        raise ValueError(
            f"dt={dt!r} is coarser than the trace's period of {period_s:g} s: aggregate the data first, "
            f"e.g. df.resample('{step:g}s').sum() for counts, or use dt <= {period_s:g}"
        )
    if abs(q - round(q)) > 1e-9 * q:
        raise ValueError(
            f"dt={dt!r} does not divide the trace's period of {period_s:g} s into whole steps: "
            f"use a dt such as {period_s:g}, {period_s / 2:g}, {period_s / 60:g}"
        )
    return step


def _grid(index: "pd.Index", period: Any) -> Tuple[float, npt.NDArray[np.int64], Optional["pd.Timestamp"], Any]:
    """(period in seconds, each row's position on the grid, wall-clock start or None, row labels)."""
    import pandas as pd

    given = None if period is None else _period_seconds(period)
    freq_s: Optional[float] = None
    start: Optional[pd.Timestamp] = None
    if isinstance(index, pd.PeriodIndex):
        try:
            freq_s = _offset_seconds(index.freq)
        except (TypeError, ValueError):
            raise ValueError(
                f"the PeriodIndex has freq={index.freqstr!r}, which has no fixed length: convert it, "
                f"e.g. df.to_timestamp() and resample to a fixed period"
            ) from None
        index = index.to_timestamp(how="start")
    if isinstance(index, pd.DatetimeIndex):
        ns = _ns(index)
        if freq_s is None and index.freq is not None:
            try:
                freq_s = _offset_seconds(index.freq)
            except (TypeError, ValueError):
                freq_s = None
        labels: Any = index
    elif isinstance(index, pd.TimedeltaIndex):
        ns = _ns(index)
        if index.freq is not None:
            freq_s = _offset_seconds(index.freq)
        labels = index
    elif index.name == "time_s" and index.dtype.kind in "iuf":
        secs = np.asarray(index, dtype=np.float64)
        if not np.isfinite(secs).all():
            raise ValueError("the time_s index holds non-finite times")
        ns = np.round(secs * 1e9).astype(np.int64)
        labels = index
    else:
        if given is None:
            raise ValueError(
                f"the index ({type(index).__name__}) holds no time: pass period= (the seconds each row "
                f"covers), or index the rows by time (DatetimeIndex, PeriodIndex, TimedeltaIndex, or "
                f"seconds in an index named 'time_s')"
            )
        return given, np.arange(len(index), dtype=np.int64), None, None
    if index.hasnans:
        raise ValueError("the index has missing times (NaT): drop those rows")
    p, positions = grid_positions(ns, labels, given, freq_s, period)
    if isinstance(labels, pd.DatetimeIndex):
        start = labels[0]
    return p, positions, start, labels


def grid_positions(
    ns: npt.NDArray[np.int64], labels: Any, given: Optional[float], freq_s: Optional[float], period: Any
) -> Tuple[float, npt.NDArray[np.int64]]:
    """(period in seconds, each row's position on the grid) of rows at times ``ns`` (nanoseconds,
    no NaT), labelled ``labels`` in messages: :func:`_grid` once the index is read as times
    (``given``: the ``period=`` argument in seconds, or None; ``freq_s``: the index's freq)."""
    d = np.diff(ns)
    if (d <= 0).any():
        i = int(np.argmax(d <= 0)) + 1
        if d[i - 1] == 0:
            raise ValueError(
                f"the index has the time {labels[i]} twice (rows {i - 1} and {i}): combine such rows, "
                f"e.g. df.groupby(level=0).sum() for counts"
            )
        raise ValueError(
            f"the index is out of order: row {i} ({labels[i]}) comes before row {i - 1} ({labels[i - 1]}); "
            f"sort it: df.sort_index()"
        )
    if given is not None and freq_s is not None and abs(given - freq_s) > 1e-9 * given:
        raise ValueError(f"period={period!r} ({given:g} s) disagrees with the index's freq of {freq_s:g} s")
    p = given if given is not None else freq_s
    if p is None:
        if d.size == 0:
            raise ValueError("one row cannot tell the period: pass period= (e.g. period='60s')")
        if (d != d[0]).any():
            vals, counts = np.unique(d, return_counts=True)
            common = ", ".join(f"{v / 1e9:g} s ({c}x)" for v, c in sorted(zip(vals, counts), key=lambda x: -x[1])[:3])
            first = float(vals[np.argmax(counts)]) / 1e9
            raise ValueError(
                f"the index is irregular: its rows are {common} apart. Resample it to a fixed period, e.g. "
                f"df.resample('{first:g}s').sum() for counts (mean() for rates), or, if the period is "
                f"{first:g} s and rows are missing, pass period='{first:g}s' and gaps='zero' or 'interpolate'"
            )
        p = float(d[0]) / 1e9
    p_ns = round(p * 1e9)
    off = ns - ns[0]
    if abs(p_ns - p * 1e9) > 1e-3 or (off % p_ns != 0).any():
        i = int(np.argmax(off % p_ns != 0)) if p_ns > 0 else 0
        raise ValueError(
            f"row {i} ({labels[i]}) is not a whole number of periods of {p:g} s after the first row "
            f"({labels[0]}): resample to the period first, e.g. df.resample('{p:g}s').sum() for counts"
        )
    positions = (off // p_ns).astype(np.int64)
    return p, positions


def _offset_seconds(freq: Any) -> float:
    """Seconds of a fixed pandas frequency (``"min"``, ``"60s"``); TypeError or ValueError otherwise."""
    import pandas as pd

    return float(pd.Timedelta(freq).total_seconds())


def _ns(index: Any) -> npt.NDArray[np.int64]:
    """Nanoseconds of a DatetimeIndex or TimedeltaIndex (pandas 2 and later keep other units too)."""
    if hasattr(index, "as_unit"):
        index = index.as_unit("ns")
    return np.asarray(index.asi8, dtype=np.int64)


def _values(col: Any, name: str, labels: Any) -> FloatArray:
    """A column's values as floats (NaN: no value), checked: numbers, finite, >= 0 (``col``: a
    pandas Series or a numpy array)."""
    raw = col if isinstance(col, np.ndarray) else col.to_numpy()
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold numbers (integers or floats), got dtype {raw.dtype}")
    v = raw.astype(np.float64)
    bad = ~np.isnan(v) & ~(np.isfinite(v) & (v >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        where = f"row {i}" if labels is None else str(labels[i])
        raise ValueError(f"{name} at {where} is {float(v[i])!r}: demand must be a finite number >= 0")
    return v


def _fill(x: FloatArray, gaps: str, name: str, labels: Any, period_s: float) -> FloatArray:
    missing = np.isnan(x)
    if not missing.any():
        return x
    first = int(np.argmax(missing))
    when = _label_at(labels, first, period_s)
    if gaps == "error":
        raise ValueError(
            f"{name} has no value for {int(missing.sum())} of {x.size} periods of {period_s:g} s, the first at "
            f"{when}: pass gaps='zero' (no I/O in them) or gaps='interpolate' (a straight line between the "
            f"values either side), or fill them yourself"
        )
    if gaps == "zero":
        return np.where(missing, 0.0, x)
    have = np.flatnonzero(~missing)
    if missing[0] or missing[-1]:
        edge = first if missing[0] else int(have[-1]) + 1
        raise ValueError(
            f"{name} has no value at {_label_at(labels, edge, period_s)}, at the {'start' if missing[0] else 'end'} "
            f"of the trace, where gaps='interpolate' has no value on one side: use gaps='zero' or trim the trace"
        )
    out: FloatArray = np.interp(np.arange(x.size, dtype=np.float64), have.astype(np.float64), x[have])
    return out


def _label_at(labels: Any, i: int, period_s: float) -> str:
    """Where period ``i`` of the grid starts, for messages: a time, seconds, or a row number."""
    import pandas as pd

    t0 = None if labels is None else labels[0]
    if isinstance(t0, (pd.Timestamp, pd.Timedelta)):
        return str(t0 + pd.Timedelta(seconds=i * period_s))
    if isinstance(t0, (numbers.Real, np.number)) and not isinstance(t0, bool):
        return f"time_s={float(t0) + i * period_s:g}"
    return f"row {i}"


def _no_bytes_without_ops(ops: FloatArray, nbytes: FloatArray, name: str, labels: Any, period_s: float) -> None:
    bad = (ops == 0) & (nbytes > 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name} is 0 at {_label_at(labels, i, period_s)} but its bytes are {nbytes[i]:g}: bytes need I/Os"
        )
