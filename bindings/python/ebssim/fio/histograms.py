"""fio's latency histograms: the bucket mapping of ``stat.h``/``stat.c`` (1,856 nanosecond buckets in
fio 3.x, 1,216 microsecond ones in 2.x, merged by ``log_hist_coarseness``), the percentiles fio reports
from them (its default ``percentile_list``, :data:`FIO_PERCENTILES`, and ``calc_clat_percentiles``),
and :func:`read_hist_log` for the clat histogram logs of ``write_hist_log``. JSON+ ``bins`` are read by
:mod:`ebssim.fio.report` with these buckets.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Optional, Tuple

import numpy as np

from ._files import PathLike, read_int_matrix
from .logs import _ddir_ok, _kind_from_name, directions

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FIO_IO_U_PLAT_BITS",
    "FIO_IO_U_PLAT_NR",
    "FIO_IO_U_PLAT_VAL",
    "FIO_PERCENTILES",
    "MAX_HIST_LOG_BYTES",
    "hist_buckets",
    "hist_percentiles",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "read_hist_log",
]

#: The percentiles fio reports by default (its ``percentile_list``), as fio spells the JSON
#: ``percentile`` keys with ``"%f"``: ``1.000000`` ... ``99.990000``.
FIO_PERCENTILES: Tuple[float, ...] = (
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
)  # fmt: skip
#: Largest clat histogram log :func:`read_hist_log` reads (each row holds 1,856 counts).
MAX_HIST_LOG_BYTES = 256 << 20

#: ``stat.h``: bits of a latency value kept exactly inside each bucket group.
FIO_IO_U_PLAT_BITS = 6
#: ``stat.h``: buckets per group (``1 << FIO_IO_U_PLAT_BITS``).
FIO_IO_U_PLAT_VAL = 1 << FIO_IO_U_PLAT_BITS
#: ``stat.h``: bucket groups in fio 3.x (nanosecond histograms).
FIO_IO_U_PLAT_GROUP_NR = 29
#: ``stat.h``: total latency buckets in fio 3.x (29 * 64 = 1856).
FIO_IO_U_PLAT_NR = FIO_IO_U_PLAT_GROUP_NR * FIO_IO_U_PLAT_VAL
#: Bucket count of fio 2.x histograms (19 * 64, microseconds).
_FIO2_PLAT_NR = 19 * FIO_IO_U_PLAT_VAL


def plat_idx_to_val(idx: int) -> int:
    """Latency value fio reports for histogram bucket ``idx`` (``stat.c`` ``plat_idx_to_val``).

    Buckets below ``2 * FIO_IO_U_PLAT_VAL`` (128) hold one value each; above, bucket ``idx`` of group
    ``idx >> 6`` covers ``2**error_bits`` values and fio reports its midpoint. In fio 3.x the unit is ns
    (JSON+ ``bins`` keys, clat histogram logs); in fio 2.x it was µs.

    Parameters
    ----------
    idx : int
        Bucket index, ``0 <= idx < FIO_IO_U_PLAT_NR``.

    Returns
    -------
    int
        The bucket's representative latency (its midpoint, truncated as fio does).
    """
    if not 0 <= idx < FIO_IO_U_PLAT_NR:
        raise ValueError(f"bucket index {idx} out of range: expected 0 <= idx < {FIO_IO_U_PLAT_NR}")
    if idx < (FIO_IO_U_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> FIO_IO_U_PLAT_BITS) - 1
    base = 1 << (error_bits + FIO_IO_U_PLAT_BITS)
    k = idx % FIO_IO_U_PLAT_VAL
    return base + int((k + 0.5) * (1 << error_bits))


def plat_val_to_idx(val: int) -> int:
    """Histogram bucket fio files a latency ``val`` into (``stat.c`` ``plat_val_to_idx``).

    Parameters
    ----------
    val : int
        Latency (ns in fio 3.x), ``>= 0``. Values beyond the last bucket land in the last bucket.

    Returns
    -------
    int
        Bucket index in ``[0, FIO_IO_U_PLAT_NR)``.

    Examples
    --------
    1,000 ns falls in the 8 ns wide bucket 317 (1,000 to 1,007 ns), which fio reports as 1,004 ns:

    >>> plat_val_to_idx(1000), plat_idx_to_val(317)
    (317, 1004)
    """
    val = int(val)
    if val < 0:
        raise ValueError(f"latency {val} is negative: expected a value >= 0")
    msb = val.bit_length() - 1 if val else 0
    if msb <= FIO_IO_U_PLAT_BITS:
        return val
    error_bits = msb - FIO_IO_U_PLAT_BITS
    base = (error_bits + 1) << FIO_IO_U_PLAT_BITS
    offset = (FIO_IO_U_PLAT_VAL - 1) & (val >> error_bits)
    return min(base + offset, FIO_IO_U_PLAT_NR - 1)


def _fine_bounds(idx: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised lower bound, exclusive upper bound and fio value of fine buckets ``idx``."""
    idx = idx.astype(np.int64)
    small = idx < (FIO_IO_U_PLAT_VAL << 1)
    error_bits = np.maximum((idx >> FIO_IO_U_PLAT_BITS) - 1, 0)
    width = np.left_shift(np.int64(1), error_bits)
    base = np.left_shift(np.int64(1), error_bits + FIO_IO_U_PLAT_BITS)
    lower = np.where(small, idx, base + (idx % FIO_IO_U_PLAT_VAL) * width)
    width = np.where(small, 1, width)
    value = np.where(small, idx, lower + width // 2)
    return lower, lower + width, value


def hist_buckets(coarseness: int = 0, *, nbuckets: int = FIO_IO_U_PLAT_NR) -> pd.DataFrame:
    """fio's latency histogram buckets, as used by JSON+ ``bins`` and ``write_hist_log``.

    Parameters
    ----------
    coarseness : int, default 0
        ``log_hist_coarseness``: ``2**coarseness`` adjacent buckets are merged (0..6).
    nbuckets : int, default 1856
        Fine bucket count: 1856 (fio 3.x, ns) or 1216 (fio 2.x, µs; values are still returned in ns).

    Returns
    -------
    pandas.DataFrame
        One row per (merged) bucket: ``bucket`` (index at this coarseness), ``lower_ns`` (inclusive),
        ``upper_ns`` (exclusive; the last bucket also collects everything above), ``latency_ns``
        (the value fio reports for the bucket: ``plat_idx_to_val`` at coarseness 0, the midpoint of the
        merged range otherwise).
    """
    import pandas as pd

    if nbuckets not in (FIO_IO_U_PLAT_NR, _FIO2_PLAT_NR):
        raise ValueError(f"nbuckets={nbuckets}: expected {FIO_IO_U_PLAT_NR} (fio 3.x) or {_FIO2_PLAT_NR} (fio 2.x)")
    if not 0 <= coarseness <= FIO_IO_U_PLAT_BITS:
        raise ValueError(f"coarseness={coarseness}: expected 0..{FIO_IO_U_PLAT_BITS} (log_hist_coarseness)")
    stride = 1 << coarseness
    first = np.arange(0, nbuckets, stride, dtype=np.int64)
    lower, _, value = _fine_bounds(first)
    _, upper, _ = _fine_bounds(first + stride - 1)
    if coarseness:
        value = (lower + upper) // 2
    scale = 1000 if nbuckets == _FIO2_PLAT_NR else 1
    return pd.DataFrame(
        {
            "bucket": np.arange(len(first), dtype=np.int64),
            "lower_ns": lower * scale,
            "upper_ns": upper * scale,
            "latency_ns": value * scale,
        }
    )


def hist_percentiles(hist: pd.DataFrame, percentiles: Iterable[float] = FIO_PERCENTILES) -> pd.Series[float]:
    """Latency percentiles from a histogram, computed the way fio does (``calc_clat_percentiles``).

    The counts of all rows are summed per bucket; the p-th percentile is the value of the first bucket
    whose cumulative count reaches ``p / 100 * total``. Applied to one job's JSON+ ``bins`` this gives
    exactly the JSON ``percentile`` values. Select the rows first (a job, a direction, a time range).

    Parameters
    ----------
    hist : pandas.DataFrame
        Needs ``latency_ns`` and ``count`` columns: :func:`read_hist_log` output or
        :attr:`FioResult.bins` (restricted to one ``metric``).
    percentiles : iterable of float
        Percentiles in ``[0, 100]``; fio's default list if omitted.

    Returns
    -------
    pandas.Series
        Latency in ns (float) indexed by percentile; all NaN if the histogram holds no samples.
    """
    import pandas as pd

    missing = [c for c in ("latency_ns", "count") if c not in hist.columns]
    if missing:
        raise ValueError(f"hist_percentiles: missing column(s) {missing}: expected 'latency_ns' and 'count'")
    if "metric" in hist.columns and hist["metric"].nunique() > 1:
        raise ValueError(
            f"hist_percentiles: rows mix metrics {sorted(hist['metric'].unique())}; select one (e.g. metric == 'clat')"
        )
    plist = [float(p) for p in percentiles]
    bad = [p for p in plist if not 0.0 <= p <= 100.0]
    if bad:
        raise ValueError(f"hist_percentiles: percentiles {bad} outside [0, 100]")
    counts = hist.groupby("latency_ns")["count"].sum().sort_index()
    cum = np.cumsum(counts.to_numpy(dtype=np.float64))
    values = counts.index.to_numpy(dtype=np.float64)
    index = pd.Index(plist, name="percentile", dtype=np.float64)
    total = cum[-1] if len(cum) else 0.0
    if total <= 0:
        return pd.Series(np.full(len(plist), np.nan), index=index, name="latency_ns", dtype=np.float64)
    thresholds = np.array([p / 100.0 * total for p in plist], dtype=np.float64)
    pos = np.minimum(np.searchsorted(cum, thresholds, side="left"), len(cum) - 1)
    return pd.Series(values[pos], index=index, name="latency_ns", dtype=np.float64)


def _hist_shape(nb: int) -> Optional[Tuple[int, int]]:
    """(coarseness, fine bucket count) for a row with ``nb`` counts."""
    for total in (FIO_IO_U_PLAT_NR, _FIO2_PLAT_NR):
        for c in range(FIO_IO_U_PLAT_BITS + 1):
            if total >> c == nb:
                return c, total
    return None


def read_hist_log(path: PathLike, *, include_zero: bool = False) -> pd.DataFrame:
    """Read a fio clat histogram log (``write_hist_log`` with ``log_hist_msec``).

    Each line is ``time_ms, ddir, bs, c0, ..., c(K-1)``: the completion-latency bucket counts of the
    I/Os completed since the previous line of that direction, ``K = 1856 / 2**log_hist_coarseness``
    (fio 3.x, ns buckets; ``1216 / 2**c`` in fio 2.x, µs buckets, converted to ns here).
    fio usually does not write the last, partial interval.

    Parameters
    ----------
    path : str or os.PathLike
        A ``<prefix>_clat_hist.<N>.log`` file.
    include_zero : bool, default False
        Also return the buckets with a zero count (K rows per interval).

    Returns
    -------
    pandas.DataFrame
        Long form, one row per interval and bucket: ``time_ms`` (end of the interval), ``direction``,
        ``bs``, ``bucket`` (index at the file's coarseness), ``lower_ns`` (inclusive), ``upper_ns``
        (exclusive), ``latency_ns`` (fio's bucket value, see :func:`hist_buckets`), ``count``.
        ``attrs`` holds ``source``, ``coarseness``, ``nbuckets`` and ``intervals`` (line count).
        Feed it (or a selection) to :func:`hist_percentiles`.

    Raises
    ------
    ValueError
        A bucket count that matches no fio histogram, lines of different lengths, non-integer fields or
        a bad ddir; the message names the file and line.
    """
    import pandas as pd

    spath = os.fspath(path)
    name_kind, _, _, rest = _kind_from_name(spath)
    if rest is not None and rest.lower().endswith("fz"):
        raise ValueError(f"{spath}: compressed fio log: decompress it with 'fio --inflate-log' first")
    if name_kind is not None and name_kind != "clat_hist":
        raise ValueError(f"{spath}: a fio {name_kind} log, not a clat histogram log: read it with read_log()")
    allowed = sorted(
        3 + (total >> c) for total in (FIO_IO_U_PLAT_NR, _FIO2_PLAT_NR) for c in range(FIO_IO_U_PLAT_BITS + 1)
    )
    what = "clat histogram log fields time_ms, ddir, bs and 1856/2**coarseness bucket counts"
    table, line_nos = read_int_matrix(
        spath, MAX_HIST_LOG_BYTES, "a fio clat histogram log", f"{__name__}.MAX_HIST_LOG_BYTES", allowed, what
    )
    names = ["time_ms", "direction", "bs", "bucket", "lower_ns", "upper_ns", "latency_ns", "count"]
    if not len(line_nos):
        out = pd.DataFrame({c: pd.Series(dtype=str if c == "direction" else np.int64) for c in names})
        out.attrs.update({"source": spath, "coarseness": None, "nbuckets": None, "intervals": 0})
        return out
    shape = _hist_shape(table.shape[1] - 3)
    assert shape is not None  # guaranteed by `allowed`
    coarseness, total = shape
    ddir = table[:, 1]
    if not _ddir_ok(ddir):
        r = int(np.argmax((ddir < 0) | (ddir > 2)))
        raise ValueError(f"{spath}, line {line_nos[r]}: ddir field is {ddir[r]}: expected 0, 1 or 2")
    counts = table[:, 3:]
    if bool(np.any(counts < 0)):
        r = int(np.argmax(np.any(counts < 0, axis=1)))
        raise ValueError(f"{spath}, line {line_nos[r]}: negative bucket count: expected counts >= 0")
    buckets = hist_buckets(coarseness, nbuckets=total)
    nrow, nb = counts.shape
    if include_zero:
        rows = np.repeat(np.arange(nrow), nb)
        bidx = np.tile(np.arange(nb), nrow)
    else:
        rows, bidx = np.nonzero(counts)
    out = pd.DataFrame(
        {
            "time_ms": table[:, 0][rows],
            "direction": directions(ddir[rows]),
            "bs": table[:, 2][rows],
            "bucket": bidx.astype(np.int64),
            "lower_ns": buckets["lower_ns"].to_numpy()[bidx],
            "upper_ns": buckets["upper_ns"].to_numpy()[bidx],
            "latency_ns": buckets["latency_ns"].to_numpy()[bidx],
            "count": counts[rows, bidx],
        }
    )
    out.attrs.update({"source": spath, "coarseness": coarseness, "nbuckets": total, "intervals": nrow})
    return out
