"""Readers for real fio output: JSON/JSON+, iops/bw/lat/clat/slat logs and clat histogram logs.

Everything is returned as :mod:`pandas` objects with named, unit-normalised columns:
latency in **ns** whatever the fio version, bandwidth in KiB/s or bytes/s as the column name says,
times in ms. Pure Python (json, re, numpy, pandas); no fio installation is needed.

Public API
----------
:func:`read_json`
    fio ``--output-format=json`` / ``json+`` output (file or text, also stdout captures that start
    with fio ``note:``/warning lines) -> :class:`FioResult`.
:func:`parse_json`
    The same from an already decoded JSON object.
:func:`read_log`, :func:`read_logs`
    ``write_iops_log`` / ``write_bw_log`` / ``write_lat_log`` files (one file, or the per-job
    numbered files of a run) -> long :class:`pandas.DataFrame`.
:func:`read_hist_log`, :func:`hist_percentiles`, :func:`hist_buckets`
    ``write_hist_log`` files, fio's latency buckets and fio-style percentiles.
:func:`plat_idx_to_val`, :func:`plat_val_to_idx`
    fio's latency bucket mapping (``stat.h``/``stat.c``).

Format notes (checked against fio's source and fio 3.33 output; see ``docs`` of the shared fio notes)
---------------------------------------------------------------------------------------------------
* JSON throughput is taken from ``<ddir>.iops``, ``bw`` (KiB/s) and ``bw_bytes`` (B/s), which fio
  computes as total / runtime. ``iops_mean``/``bw_mean`` are statistics over sampling windows (or,
  with per-I/O logs, over single I/Os) and are exposed only as ``iops_win_*``/``bw_win_*`` columns.
* fio 3.0 renamed ``clat``/``lat``/``slat`` (µs) to ``clat_ns``/``lat_ns``/``slat_ns`` (ns);
  ``bw_bytes`` arrived in 3.2, ``job_runtime`` in 3.8, ``N`` in 3.18. Older forms are converted.
* Log lines are ``time_ms, value[, value1], ddir, bs[, offset], prio[, issue_time_ns]``: the
  optional columns depend on fio version and options (``log_offset``, ``log_window_value=both``,
  ``log_issue_time``), so the layout is resolved from the field count, the data and optional hints.
* Per-I/O bandwidth logs (``log_avg_msec=0``) hold ``bs * 10**6 / clat_ns`` (bytes per ms, i.e.
  units of 1000 B/s, derived from the completion latency), not KiB/s; they are converted to B/s
  and named ``bw_bytes_s``. Windowed bandwidth logs are KiB/s and named ``bw_kib_s``.
"""

from __future__ import annotations

import csv
import dataclasses
import glob as _glob
import io
import json
import math
import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

import numpy as np
import pandas as pd

from ._files import read_bounded

__all__ = [
    "DEFAULT_PERCENTILES",
    "DIRECTIONS",
    "FIO_IO_U_PLAT_BITS",
    "FIO_IO_U_PLAT_NR",
    "FIO_IO_U_PLAT_VAL",
    "LOG_KINDS",
    "MAX_HIST_LOG_BYTES",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_LOG_BYTES",
    "FioLogOrderWarning",
    "FioResult",
    "hist_buckets",
    "hist_percentiles",
    "parse_json",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "read_hist_log",
    "read_json",
    "read_log",
    "read_logs",
]

PathLike = Union[str, "os.PathLike[str]"]
VersionLike = Union[str, Tuple[int, ...], None]

#: Data directions of fio's ``ddir`` field (0, 1, 2) and JSON objects.
DIRECTIONS: Tuple[str, str, str] = ("read", "write", "trim")
#: Kinds of per-sample logs :func:`read_log` understands (file suffixes ``_<kind>.N.log``).
LOG_KINDS: Tuple[str, ...] = ("iops", "bw", "lat", "clat", "slat")
#: fio's default ``percentile_list`` (JSON ``percentile`` keys).
DEFAULT_PERCENTILES: Tuple[float, ...] = (
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
)  # fmt: skip

#: Largest fio JSON file :func:`read_json` reads (fio's JSON+ for hundreds of jobs stays far below).
MAX_JSON_BYTES = 256 << 20
#: Deepest nesting of objects and arrays :func:`read_json` accepts (fio's own output nests about 6 deep).
MAX_JSON_DEPTH = 64
#: Largest iops/bw/lat log :func:`read_log` reads (tens of millions of per-I/O rows).
MAX_LOG_BYTES = 1 << 30
#: Largest clat histogram log :func:`read_hist_log` reads (each row holds 1,856 counts).
MAX_HIST_LOG_BYTES = 256 << 20


class FioLogOrderWarning(UserWarning):
    """A fio log whose timestamps go backwards; :func:`read_log` sorted its rows by time.

    fio takes a sample's timestamp when it records the sample, from more than one thread, so real
    logs can hold a few rows out of order.
    """


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

_LAT_METRICS = ("lat", "clat", "slat")
_JSON_DIRECTIONS = ("read", "write", "trim", "mixed")
_LOG_NAME_RE = re.compile(
    r"^(?P<prefix>.*)_(?P<kind>clat_hist|iops|bw|lat|clat|slat)(?:\.(?P<job>\d+))?\.log(?:\.(?P<rest>.+))?$"
)
_VERSION_RE = re.compile(r"(\d+)\.(\d+)")
_BARE_NAN_RE = re.compile(r"(:\s*)(-?nan|-?inf)\b", re.IGNORECASE)
_NON_FINITE = {"nan": "NaN", "-nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


# ============================================================================================
# Small helpers
# ============================================================================================


def _parse_version(version: VersionLike) -> Optional[Tuple[int, int]]:
    """``(major, minor)`` from ``"fio-3.33"``, ``"3.33"``, ``(3, 33)`` or ``None``."""
    if version is None:
        return None
    if isinstance(version, tuple):
        if len(version) < 2 or not all(isinstance(v, int) for v in version[:2]):
            raise ValueError(f"fio_version={version!r}: expected a tuple like (3, 33) or a string like 'fio-3.33'")
        return (int(version[0]), int(version[1]))
    m = _VERSION_RE.search(str(version))
    if m is None:
        raise ValueError(f"fio_version={version!r}: expected a string like 'fio-3.33' or '3.33'")
    return (int(m.group(1)), int(m.group(2)))


def _truthy(value: Optional[str]) -> Optional[bool]:
    """fio boolean option text -> bool (``None`` if unset or not boolean)."""
    if value is None:
        return None
    v = str(value).strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pct_label(key: str) -> str:
    """``"99.900000"`` -> ``"p99_9"``; ``"50.000000"`` -> ``"p50"``."""
    text = f"{float(key):.6f}".rstrip("0").rstrip(".")
    return "p" + text.replace(".", "_")


def _read_text(path: str, what: str, limit: int, limit_name: str) -> str:
    data = read_bounded(path, limit, what, f"ebssim.fio.readers.{limit_name}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (expected {what})") from None


# ============================================================================================
# Latency buckets (stat.h / stat.c)
# ============================================================================================


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


def hist_percentiles(hist: pd.DataFrame, percentiles: Iterable[float] = DEFAULT_PERCENTILES) -> pd.Series[float]:
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


# ============================================================================================
# JSON / JSON+
# ============================================================================================


@dataclass(frozen=True, eq=False)
class FioResult:
    """A parsed fio JSON (or JSON+) report.

    Attributes
    ----------
    jobs : pandas.DataFrame
        One row per ``jobs[]`` entry and data direction (``read``/``write``/``trim``, and ``mixed``
        with ``unified_rw_reporting``); by default only directions that did I/O. Columns:

        * ``job`` (0-based position in ``jobs[]``), ``jobname``, ``groupid``, ``direction``, ``error``
          (and ``hostname`` for client/server output);
        * throughput, computed by fio as total / runtime: ``io_bytes``, ``bw_bytes_s`` (B/s),
          ``bw_kib_s`` (KiB/s), ``iops``, ``runtime_ms``, ``total_ios``, ``short_ios``, ``drop_ios``;
        * latency in ns for ``lat``, ``clat``, ``slat``: ``<m>_min_ns``, ``<m>_max_ns``,
          ``<m>_mean_ns``, ``<m>_stddev_ns``, ``<m>_n`` (samples, fio 3.18+), and each reported
          percentile as ``<m>_p<P>_ns`` (``clat_p50_ns``, ``clat_p99_ns``, ``clat_p99_9_ns``, ...).
          Statistics of a latency with ``N == 0`` (e.g. ``slat`` of sync engines) are NaN, not 0;
        * window statistics, **not** throughput: ``bw_win_min_kib_s``, ``bw_win_max_kib_s``,
          ``bw_win_mean_kib_s``, ``bw_win_dev_kib_s``, ``bw_win_samples``, ``bw_agg_pct``,
          ``iops_win_min``, ``iops_win_max``, ``iops_win_mean``, ``iops_win_stddev``,
          ``iops_win_samples`` (with per-I/O logs these are per-I/O values: ``iops_win_mean == 1``);
        * per job: ``job_runtime_ms`` (3.8+), ``job_start_ms`` (3.36+), ``elapsed_s`` (whole-run wall
          time, not the job's), ``usr_cpu_pct``, ``sys_cpu_pct``, ``ctx``, ``majf``, ``minf``.

        Missing values (older fio, absent statistics) are NaN. ``sync`` (fsync latency), ``prios``,
        ``latency_*`` distributions and ``iodepth_*`` stay in :attr:`raw`.
    bins : pandas.DataFrame
        JSON+ latency histograms (empty for plain JSON): ``job``, ``jobname``, ``groupid``,
        ``direction``, ``metric`` (``clat``, ``lat`` or ``slat``), ``latency_ns`` (fio's bucket value,
        the JSON key), ``count``, ``bucket``, ``lower_ns``, ``upper_ns``.
    raw : dict
        The decoded JSON document.
    fio_version : str or None
        ``"fio version"``, e.g. ``"fio-3.33"``.
    version : tuple of int or None
        ``(major, minor)`` parsed from it.
    global_options : dict of str to str
        ``"global options"`` (values are strings as fio prints them; empty if absent).
    job_options : list of dict of str to str
        ``"job options"`` of each ``jobs[]`` entry (empty dicts if absent).
    source : str
        File name, or ``"<text>"``.
    preamble : list of str
        Lines before the JSON document (fio ``note:``/warning lines on stdout).
    """

    jobs: pd.DataFrame
    bins: pd.DataFrame
    raw: Dict[str, Any]
    fio_version: Optional[str]
    version: Optional[Tuple[int, int]]
    global_options: Dict[str, str]
    job_options: List[Dict[str, str]]
    source: str
    preamble: List[str] = field(default_factory=list)

    @property
    def clat_bins(self) -> pd.DataFrame:
        """JSON+ completion-latency histogram rows (``bins`` with ``metric == 'clat'``)."""
        return self.bins[self.bins["metric"] == "clat"].reset_index(drop=True)

    @property
    def is_json_plus(self) -> bool:
        """Whether any latency object carried JSON+ ``bins``."""
        return len(self.bins) > 0

    @property
    def disk_util(self) -> pd.DataFrame:
        """``disk_util[]`` as a DataFrame (empty if fio collected no disk statistics)."""
        rows = self.raw.get("disk_util")
        if not isinstance(rows, list) or not rows:
            return pd.DataFrame()
        return pd.DataFrame([r for r in rows if isinstance(r, dict)])

    def options(self, job: int) -> Dict[str, str]:
        """Options in effect for ``jobs[job]`` as reported: global options overridden by job options.

        Parameters
        ----------
        job : int
            0-based position in ``jobs[]`` (the ``job`` column of :attr:`jobs`).

        Returns
        -------
        dict of str to str
            Only options set explicitly (fio reports no defaults).
        """
        if not 0 <= job < len(self.job_options):
            raise ValueError(f"{self.source}: job {job} out of range: the report has {len(self.job_options)} job(s)")
        merged = dict(self.global_options)
        merged.update(self.job_options[job])
        return merged


def _source_text(source: Union[PathLike, bytes]) -> Tuple[str, str]:
    """(text, label) from a path, JSON text or bytes."""
    if isinstance(source, bytes):
        try:
            return source.decode("utf-8"), "<bytes>"
        except UnicodeDecodeError:
            raise ValueError("<bytes>: not UTF-8 text (expected fio JSON output)") from None
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{")):
        return source, "<text>"
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"read_json: expected a path, JSON text or bytes, got {type(source).__name__}")
    path = os.fspath(source)
    return _read_text(path, "fio JSON output", MAX_JSON_BYTES, "MAX_JSON_BYTES"), path


class _LongNumber(ValueError):
    """An integer in the JSON text with more digits than any 64-bit number."""


def _json_int(digits: str) -> int:
    # Bounded before int(): Python refuses 4,300+ digits with a message about its own limit.
    # Shorter numbers beyond 64 bits are refused later, with their key named (_checked).
    if len(digits.lstrip("-")) > 4000:
        raise _LongNumber(
            f"a number with {len(digits.lstrip('-'))} digits ({digits[:20]}...): fio writes 64-bit numbers"
        )
    return int(digits)


def _raw_decode(decoder: json.JSONDecoder, text: str, start: int, label: str) -> Any:
    try:
        return decoder.raw_decode(text, start)[0]
    except _LongNumber as exc:
        raise ValueError(f"{label}: {exc}") from None
    except RecursionError:
        raise ValueError(
            f"{label}: JSON nested too deep for the decoder (fio's output nests about 6 levels; "
            f"the limit is {MAX_JSON_DEPTH})"
        ) from None


def _check_depth(obj: Any, label: str) -> None:
    """Refuse documents nested deeper than MAX_JSON_DEPTH, naming the deepest key path found.

    Iterative, so the check itself cannot exhaust the stack; each container is visited once.
    """
    stack: List[Tuple[Any, str, int]] = [(obj, "", 0)]
    seen: Set[int] = set()
    while stack:
        node, path, depth = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in seen:
            continue
        seen.add(id(node))
        if depth >= MAX_JSON_DEPTH:
            raise ValueError(
                f"{label}: key {path or '(top)'} is nested {depth} levels deep: more than the limit of "
                f"{MAX_JSON_DEPTH} (fio's output nests about 6 levels)"
            )
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if isinstance(v, (dict, list)):
                key = f"{path}[{k}]" if isinstance(node, list) else (f"{path}.{k}" if path else str(k))
                stack.append((v, key[:200], depth + 1))


def _decode_json(text: str, label: str) -> Tuple[Dict[str, Any], List[str]]:
    text = text.lstrip("\ufeff")
    m = re.search(r"^\{", text, re.MULTILINE)
    if m is None:
        raise ValueError(
            f"{label}: no line starting with '{{': expected fio JSON output (--output-format=json or json+)"
        )
    preamble = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
    decoder = json.JSONDecoder(parse_int=_json_int)
    try:
        obj = _raw_decode(decoder, text, m.start(), label)
    except json.JSONDecodeError as exc:
        # Some fio versions print non-finite floats as bare nan/inf, which is not JSON.
        fixed = _BARE_NAN_RE.sub(lambda mm: mm.group(1) + _NON_FINITE[mm.group(2).lower()], text)
        try:
            obj = _raw_decode(decoder, fixed, m.start(), label)
        except json.JSONDecodeError:
            if exc.pos >= len(text.rstrip()):
                start_line = text.count("\n", 0, m.start()) + 1
                raise ValueError(
                    f"{label}: truncated fio JSON: the document starting at line {start_line} ends at line "
                    f"{exc.lineno} before its closing '}}' (was the output cut or fio still running?)"
                ) from None
            raise ValueError(
                f"{label}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg} "
                f"(expected fio --output-format=json output)"
            ) from None
    if not isinstance(obj, dict):
        raise ValueError(f"{label}: not fio JSON output: the document is a {type(obj).__name__}, expected an object")
    return obj, preamble


def _jobs_list(raw: Mapping[str, Any], label: str) -> List[Dict[str, Any]]:
    key = "jobs" if "jobs" in raw else ("client_stats" if "client_stats" in raw else None)
    if key is None:
        raise ValueError(
            f"{label}: not fio JSON output: top-level key 'jobs' missing (expected an object with "
            f"'fio version' and 'jobs' as written by fio --output-format=json; found keys {sorted(raw)[:8]})"
        )
    jobs = raw[key]
    if not isinstance(jobs, list):
        raise ValueError(f"{label}: key '{key}' is a {type(jobs).__name__}: expected a list of job objects")
    for i, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise ValueError(f"{label}: {key}[{i}] is a {type(job).__name__}: expected a job object")
    return jobs


def _str_dict(value: Any, where: str, label: str) -> Dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{label}: key {where} is a {type(value).__name__}: expected an object of option strings")
    return {str(k): str(v) for k, v in value.items()}


class _Where:
    """Key path for error messages, e.g. ``jobs[0].read.iops``."""

    def __init__(self, label: str, path: str) -> None:
        self.label = label
        self.path = path

    def num(self, obj: Mapping[str, Any], key: str, *, required: bool = False, kind: str = "stat") -> float:
        """``obj[key]`` checked for its kind (NaN when absent and not required).

        Kinds: ``count`` (a whole number >= 0: bytes, I/Os, ms), ``rate`` (a finite number >= 0),
        ``latency`` (a number >= 0, or NaN: some fio versions print nan for empty statistics),
        ``stat`` (any number, NaN and infinity included: window statistics).
        """
        if key not in obj:
            if required:
                raise ValueError(f"{self.label}: missing key {self.path}.{key} (expected in fio JSON output)")
            return math.nan
        return _checked(obj[key], kind, f"{self.label}: key {self.path}.{key}")


_KIND_RULES = {
    "count": "a whole number >= 0 (a count as fio writes it)",
    "rate": "a finite number >= 0",
    "latency": "a number >= 0 in ns (or NaN)",
    "stat": "a number",
}


def _checked(value: Any, kind: str, where: str) -> float:
    """A JSON number checked against ``kind`` (see :meth:`_Where.num`); ints stay ints."""
    ok = _is_number(value)
    if ok and isinstance(value, int):
        # Beyond int64, pandas would keep Python objects and numpy would overflow.
        ok = abs(value) < 2**63 and (kind == "stat" or value >= 0)
    elif ok:
        v = float(value)
        if kind == "count":
            ok = math.isfinite(v) and v >= 0 and v.is_integer() and v < 2**63
        elif kind == "rate":
            ok = math.isfinite(v) and v >= 0
        elif kind == "latency":
            ok = math.isnan(v) or (math.isfinite(v) and v >= 0)
    if not ok:
        shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:30]}... ({len(repr(value))} characters)"
        raise ValueError(f"{where} is {shown}: expected {_KIND_RULES[kind]}")
    if isinstance(value, float) and kind == "count":
        return int(value)
    return float(value) if isinstance(value, float) else int(value)


def _latency_fields(
    ddir_obj: Mapping[str, Any], where: _Where, row: Dict[str, Any]
) -> List[Tuple[str, Dict[str, Any], int]]:
    """Add latency statistics to ``row``; return (metric, object, scale) for JSON+ bins."""
    found: List[Tuple[str, Dict[str, Any], int]] = []
    for metric in _LAT_METRICS:
        if f"{metric}_ns" in ddir_obj:
            key, scale = f"{metric}_ns", 1
        elif metric in ddir_obj:  # fio 2.x: microseconds
            key, scale = metric, 1000
        else:
            continue
        lat = ddir_obj[key]
        if not isinstance(lat, dict):
            raise ValueError(f"{where.label}: key {where.path}.{key} is {lat!r}: expected a latency object")
        w = _Where(where.label, f"{where.path}.{key}")
        n = w.num(lat, "N", kind="count")
        empty = not math.isnan(n) and n == 0
        for stat in ("min", "max", "mean", "stddev"):
            v = w.num(lat, stat, kind="latency")
            row[f"{metric}_{stat}_ns"] = math.nan if empty or math.isnan(v) else v * scale
        row[f"{metric}_n"] = n
        pct = lat.get("percentile")
        if isinstance(pct, dict):
            for pkey, pval in pct.items():
                try:
                    p = float(pkey) if len(pkey) <= 32 else math.nan
                except ValueError:
                    p = math.nan
                if not 0.0 <= p <= 100.0:  # NaN fails too
                    raise ValueError(
                        f"{where.label}: key {w.path}.percentile.{pkey[:40]!r}: expected a percentile between 0 and "
                        f"100 written like '99.000000'"
                    )
                v = _checked(pval, "rate", f"{where.label}: key {w.path}.percentile.{pkey}")
                row[f"{metric}_{_pct_label(pkey)}_ns"] = v * scale
        found.append((metric, lat, scale))
    return found


def _io_bytes(obj: Mapping[str, Any], w: _Where) -> float:
    """Bytes moved; fio before io_kbytes existed wrote KiB under the name io_bytes."""
    io_bytes = w.num(obj, "io_bytes", required=True, kind="count")
    if "io_kbytes" in obj:
        return io_bytes
    bw = w.num(obj, "bw", kind="count")
    runtime = w.num(obj, "runtime", kind="count")
    if not (bw > 0 and runtime > 0):
        return io_bytes * 1024
    expected = bw * 1024 * runtime / 1000.0
    as_bytes = abs(io_bytes - expected)
    as_kib = abs(io_bytes * 1024 - expected)
    return io_bytes if as_bytes <= as_kib else io_bytes * 1024


_WINDOW_KEYS = (
    ("bw_min", "bw_win_min_kib_s"),
    ("bw_max", "bw_win_max_kib_s"),
    ("bw_mean", "bw_win_mean_kib_s"),
    ("bw_dev", "bw_win_dev_kib_s"),
    ("bw_samples", "bw_win_samples"),
    ("bw_agg", "bw_agg_pct"),
    ("iops_min", "iops_win_min"),
    ("iops_max", "iops_win_max"),
    ("iops_mean", "iops_win_mean"),
    ("iops_stddev", "iops_win_stddev"),
    ("iops_samples", "iops_win_samples"),
)
_JOB_KEYS = (
    ("job_runtime", "job_runtime_ms"),
    ("job_start", "job_start_ms"),
    ("elapsed", "elapsed_s"),
    ("usr_cpu", "usr_cpu_pct"),
    ("sys_cpu", "sys_cpu_pct"),
    ("ctx", "ctx"),
    ("majf", "majf"),
    ("minf", "minf"),
)
_BASE_COLUMNS = (
    "job", "jobname", "groupid", "direction", "error", "io_bytes", "bw_bytes_s", "bw_kib_s", "iops",
    "runtime_ms", "total_ios", "short_ios", "drop_ios",
)  # fmt: skip
_BIN_COLUMNS = (
    "job", "jobname", "groupid", "direction", "metric", "latency_ns", "count", "bucket", "lower_ns", "upper_ns",
)  # fmt: skip


def parse_json(data: Mapping[str, Any], *, source: str = "<dict>", all_directions: bool = False) -> FioResult:
    """Build a :class:`FioResult` from a decoded fio JSON document.

    Parameters
    ----------
    data : mapping
        The decoded ``--output-format=json``/``json+`` object (``jobs`` or, for client/server
        output, ``client_stats``).
    source : str
        Name used in error messages.
    all_directions : bool, default False
        Keep directions without I/O (zeros, NaN latencies) as rows too.

    Returns
    -------
    FioResult
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: not fio JSON output: expected an object, got {type(data).__name__}")
    _check_depth(data, source)
    raw = dict(data)
    jobs = _jobs_list(raw, source)
    fio_version = raw.get("fio version")
    fio_version = str(fio_version) if fio_version is not None else None
    version = _parse_version(fio_version) if fio_version and _VERSION_RE.search(fio_version) else None
    jobs_key = "jobs" if "jobs" in raw else "client_stats"

    rows: List[Dict[str, Any]] = []
    bins: List[Dict[str, Any]] = []
    job_options: List[Dict[str, str]] = []
    for i, job in enumerate(jobs):
        where = f"{jobs_key}[{i}]"
        if "jobname" not in job:
            raise ValueError(f"{source}: missing key {where}.jobname (expected in every fio JSON job object)")
        job_options.append(_str_dict(job.get("job options"), f"{where}.'job options'", source))
        directions = [d for d in _JSON_DIRECTIONS if d in job]
        if not directions:
            raise ValueError(
                f"{source}: {where} ({job['jobname']!r}) has no 'read', 'write', 'trim' or 'mixed' object "
                f"(expected fio JSON per-job statistics)"
            )
        wj = _Where(source, where)
        job_cols: Dict[str, Any] = {}
        for key, col in _JOB_KEYS:
            job_cols[col] = wj.num(job, key, kind="stat" if col.endswith("_cpu_pct") else "count")
        for ddir in directions:
            obj = job[ddir]
            w = _Where(source, f"{where}.{ddir}")
            if not isinstance(obj, dict):
                raise ValueError(f"{source}: key {w.path} is {obj!r}: expected a direction object")
            total_ios = w.num(obj, "total_ios", kind="count")
            io_bytes = _io_bytes(obj, w)
            has_io = (total_ios > 0) if not math.isnan(total_ios) else io_bytes > 0
            if not (has_io or all_directions):
                continue
            runtime = w.num(obj, "runtime", required=True, kind="count")
            bw_bytes = w.num(obj, "bw_bytes", kind="count")
            if math.isnan(bw_bytes):  # before fio 3.2: same formula as fio's
                bw_bytes = (1000 * int(io_bytes)) // int(runtime) if runtime > 0 else 0
            row: Dict[str, Any] = {
                "job": i,
                "jobname": str(job["jobname"]),
                "groupid": wj.num(job, "groupid", kind="count"),
                "direction": ddir,
                "error": wj.num(job, "error", kind="count"),
            }
            if "hostname" in job:
                row["hostname"] = str(job["hostname"])
            row.update(
                {
                    "io_bytes": io_bytes,
                    "bw_bytes_s": bw_bytes,
                    "bw_kib_s": w.num(obj, "bw", required=True, kind="count"),
                    "iops": float(w.num(obj, "iops", required=True, kind="rate")),
                    "runtime_ms": runtime,
                    "total_ios": total_ios,
                    "short_ios": w.num(obj, "short_ios", kind="count"),
                    "drop_ios": w.num(obj, "drop_ios", kind="count"),
                }
            )
            lats = _latency_fields(obj, w, row)
            for key, col in _WINDOW_KEYS:
                row[col] = w.num(obj, key)
            row.update(job_cols)
            rows.append(row)
            for metric, lat, scale in lats:
                b = lat.get("bins")
                if not isinstance(b, dict) or scale != 1:
                    continue
                for k, count in b.items():
                    if not re.fullmatch(r"[0-9]{1,18}", k):
                        raise ValueError(
                            f"{source}: key {w.path}.{metric}_ns.bins.{k[:40]!r}: expected a latency in ns "
                            f"(a whole number >= 0 below 10**18)"
                        )
                    latency = int(k)
                    where_bin = f"{source}: key {w.path}.{metric}_ns.bins.{k}"
                    count = _checked(count, "count", where_bin)
                    bins.append(
                        {
                            "job": i,
                            "jobname": row["jobname"],
                            "groupid": row["groupid"],
                            "direction": ddir,
                            "metric": metric,
                            "latency_ns": latency,
                            "count": int(count),
                        }
                    )

    columns: List[str] = list(_BASE_COLUMNS)
    for r in rows:
        for c in r:
            if c not in columns:
                columns.append(c)
    jobs_df = pd.DataFrame.from_records(rows, columns=columns) if rows else pd.DataFrame(columns=columns)
    bins_df = _bins_frame(bins)
    return FioResult(
        jobs=jobs_df,
        bins=bins_df,
        raw=raw,
        fio_version=fio_version,
        version=version,
        global_options=_str_dict(raw.get("global options"), "'global options'", source),
        job_options=job_options,
        source=source,
    )


def _bins_frame(bins: List[Dict[str, Any]]) -> pd.DataFrame:
    if not bins:
        return pd.DataFrame({c: pd.Series(dtype=np.int64 if c not in ("jobname", "direction", "metric") else object)
                             for c in _BIN_COLUMNS})  # fmt: skip
    df = pd.DataFrame.from_records(bins)
    idx = np.array([plat_val_to_idx(v) for v in df["latency_ns"]], dtype=np.int64)
    lower, upper, _ = _fine_bounds(idx)
    df["bucket"] = idx
    df["lower_ns"] = lower
    df["upper_ns"] = upper
    return df[list(_BIN_COLUMNS)]


def read_json(source: Union[PathLike, bytes], *, all_directions: bool = False) -> FioResult:
    """Read fio ``--output-format=json`` or ``json+`` output (fio 2.x and 3.0 .. 3.42).

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A file name, or the JSON text itself (a ``str`` containing a newline or starting with ``{``).
        Lines before the first line starting with ``{`` (fio ``note:``/warning lines when JSON goes to
        stdout) are skipped and kept in :attr:`FioResult.preamble`. Only the first JSON document is
        read (``--status-interval`` writes several).
    all_directions : bool, default False
        Also return ``read``/``write``/``trim`` rows of directions that did no I/O.

    Returns
    -------
    FioResult
        ``jobs`` (one row per job and direction, latency in ns), ``bins`` (JSON+ histograms), options,
        version and the raw document.

    Raises
    ------
    ValueError
        Truncated or invalid JSON, a document that is not fio output, or a job object with a missing or
        non-numeric key; the message names the file (or ``<text>``) and the key or line.
    """
    text, label = _source_text(source)
    raw, preamble = _decode_json(text, label)
    result = parse_json(raw, source=label, all_directions=all_directions)
    return dataclasses.replace(result, preamble=preamble)


# ============================================================================================
# iops / bw / lat / clat / slat logs
# ============================================================================================

# (value1, offset, prio, issue_time): every layout fio has written.
_LAYOUTS: Tuple[Tuple[bool, bool, bool, bool], ...] = (
    (False, False, False, False),  # <= 3.17
    (False, False, True, False),  # 3.18+
    (False, True, False, False),  # <= 3.17, log_offset=1
    (False, True, True, False),  # 3.18+, log_offset=1
    (True, False, True, False),  # 3.37+, log_window_value=both
    (True, True, True, False),  # 3.37+, both + log_offset
    (False, True, True, True),  # 3.38+, log_offset + log_issue_time
    (True, True, True, True),  # 3.38+, all
)


def _layout_fields(layout: Tuple[bool, bool, bool, bool]) -> List[str]:
    value1, offset, prio, issue = layout
    out = ["time_ms", "value"]
    if value1:
        out.append("value1")
    out += ["ddir", "bs"]
    if offset:
        out.append("offset")
    if prio:
        out.append("prio")
    if issue:
        out.append("issue_time_ns")
    return out


def _layout_desc(layout: Tuple[bool, bool, bool, bool]) -> str:
    return ", ".join(_layout_fields(layout))


_INT_FIELD_RE = re.compile(r"[+-]?[0-9]{1,19}")
_HEX_FIELD_RE = re.compile(r"0[xX][0-9a-fA-F]{1,16}")
_INT64_MAX = 2**63 - 1


def _parse_int_field(text: str, allow_hex: bool) -> int:
    """One field, strictly: decimal digits (64-bit), or ``0x...`` where the column is hex."""
    s = text.strip(" \t")
    if allow_hex and _HEX_FIELD_RE.fullmatch(s):
        value = int(s, 16)
    elif _INT_FIELD_RE.fullmatch(s):
        value = int(s)
    else:
        raise ValueError(s)
    if abs(value) > _INT64_MAX:
        raise ValueError(s)
    return value


def _slow_table(
    path: str, lines: List[Tuple[int, str]], allowed: Sequence[int], what: str
) -> Tuple[List[np.ndarray], np.ndarray, List[bool]]:
    """Parse the table line by line: either the columns or an error naming the line and its text.

    Used when pandas' fast parser refused the text, so that every refusal names file:line.
    """
    counts = [ln.count(",") + 1 for _, ln in lines]
    n = Counter(counts).most_common(1)[0][0]
    if n not in allowed:
        no, ln = lines[0]
        raise ValueError(f"{path}, line {no}: {n} comma-separated fields per line, expected {what}: {ln[:120]!r}")
    for (no, ln), k in zip(lines, counts):
        if k != n:
            raise ValueError(
                f"{path}, line {no}: expected {n} comma-separated fields like the other lines ({what}), "
                f"got {k}: {ln[:120]!r}"
            )
    hex_cols = [f.strip()[:2].lower() == "0x" for f in lines[0][1].split(",")]
    rows: List[List[int]] = []
    for no, ln in lines:
        row = []
        for j, f in enumerate(ln.split(",")):
            try:
                row.append(_parse_int_field(f, hex_cols[j]))
            except ValueError:
                raise ValueError(
                    f"{path}, line {no}: field {j + 1} is {f.strip()[:40]!r}: expected an integer of at most "
                    f"64 bits ({what}): {ln[:120]!r}"
                ) from None
        rows.append(row)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), n)
    line_nos = np.array([no for no, _ in lines], dtype=np.int64)
    return [table[:, j].copy() for j in range(n)], line_nos, hex_cols


# Anything but digits, hex, signs, commas and blanks (a lone CR, a NUL, a non-ASCII digit).
_BAD_CHAR_RE = re.compile(r"[^0-9a-fA-FxX,+\- \t\n]")


def _line_text(body: str, no: int) -> str:
    return body.split("\n", no)[no - 1]


def _hex_int(s: str) -> int:
    return _parse_int_field(s, True)


def _read_int_table(
    path: str, text: str, allowed: Sequence[int], what: str
) -> Tuple[List[np.ndarray], np.ndarray, List[bool]]:
    """Parse fio's ``", "``-separated integer lines (fast path: pandas' C parser).

    Returns (one int64 array per field, 1-based line number of each row, hex flag per field).
    Anything the fast path refuses is parsed again line by line, which either reads it or names
    the offending line; every field must be >= 0 (fio logs no negative time, value or count).
    """
    body = text.rstrip().replace("\r\n", "\n")
    if not body:
        return [], np.zeros(0, dtype=np.int64), []
    bad = _BAD_CHAR_RE.search(body)
    if bad is not None:
        no = body.count("\n", 0, bad.start()) + 1
        col = bad.start() - (body.rfind("\n", 0, bad.start()) + 1) + 1
        raise ValueError(
            f"{path}, line {no}: character {bad.group()!r} at column {col}: expected {what}: "
            f"{_line_text(body, no)[:120]!r}"
        )
    if body[:1].isspace() or any(t in body for t in ("\n\n", "\n ", "\n\t")):
        # possibly blank lines inside (fio writes none): number the non-blank rows the slow way
        line_nos = np.array([no for no, ln in enumerate(body.split("\n"), start=1) if ln.strip()], dtype=np.int64)
    else:
        line_nos = np.arange(1, body.count("\n") + 2, dtype=np.int64)
    first = body.lstrip().split("\n", 1)[0]
    n = first.count(",") + 1
    columns: Optional[List[np.ndarray]] = None
    hex_cols = [f.strip()[:2].lower() == "0x" for f in first.split(",")]
    if n in allowed:
        converters = {i: _hex_int for i, h in enumerate(hex_cols) if h}
        dtypes = {i: np.int64 for i in range(n) if not hex_cols[i]}
        try:
            with warnings.catch_warnings():
                # pandas warns (and goes on) where a number does not fit int64: the slow path
                # names the line instead.
                warnings.simplefilter("error")
                df = pd.read_csv(
                    io.StringIO(body),
                    header=None,
                    names=list(range(n)),
                    sep=",",
                    skipinitialspace=True,
                    dtype=dtypes,
                    converters=converters,
                    engine="c",
                    quoting=csv.QUOTE_NONE,
                )
            if len(df) == len(line_nos):
                columns = [df[i].to_numpy(dtype=np.int64) for i in range(n)]
        except (ValueError, TypeError, OverflowError, pd.errors.ParserError, Warning):
            columns = None
    if columns is None:
        lines = [(no, ln) for no, ln in enumerate(body.split("\n"), start=1) if ln.strip()]
        columns, line_nos, hex_cols = _slow_table(path, lines, allowed, what)
    for j, values in enumerate(columns):
        if values.size and int(values.min()) < 0:
            r = int(np.argmax(values < 0))
            ln = _line_text(body, int(line_nos[r]))
            raise ValueError(
                f"{path}, line {line_nos[r]}: field {j + 1} is {values[r]}: expected a whole number >= 0 ({what}): "
                f"{ln[:120]!r}"
            )
    return columns, line_nos, hex_cols


def _ddir_ok(col: np.ndarray) -> bool:
    return bool(np.all((col >= 0) & (col <= 2)))


def _choose_layout(
    path: str,
    columns: List[np.ndarray],
    line_nos: np.ndarray,
    hex_cols: List[bool],
    *,
    log_offset: Optional[bool],
    value1: Optional[bool],
    issue_time: Optional[bool],
    version: Optional[Tuple[int, int]],
) -> Tuple[bool, bool, bool, bool]:
    n = len(columns)
    shaped = [lay for lay in _LAYOUTS if len(_layout_fields(lay)) == n]
    cands = []
    for lay in shaped:
        v1, off, prio, iss = lay
        if log_offset is not None and off != log_offset:
            continue
        if value1 is not None and v1 != value1:
            continue
        if issue_time is not None and iss != issue_time:
            continue
        if version is not None:
            if prio != (version >= (3, 18)):
                continue
            if v1 and version < (3, 37):
                continue
            if iss and version < (3, 38):
                continue
        fields = _layout_fields(lay)
        if any(h and fields[j] != "prio" for j, h in enumerate(hex_cols)):
            continue
        cands.append(lay)
    hints = f"log_offset={log_offset}, value1={value1}, issue_time={issue_time}, fio_version={version}"
    if not cands:
        opts = "; ".join(_layout_desc(lay) for lay in shaped) or "none"
        raise ValueError(
            f"{path}: {n} fields per line do not match any fio log layout allowed by the hints ({hints}); "
            f"layouts with {n} fields: {opts}"
        )

    def problem(lay: Tuple[bool, bool, bool, bool]) -> Optional[str]:
        fields = _layout_fields(lay)
        ddir = columns[fields.index("ddir")]
        if not _ddir_ok(ddir):
            r = int(np.argmax((ddir < 0) | (ddir > 2)))
            return (
                f"{path}, line {line_nos[r]}: ddir field is {ddir[r]}: expected 0 (read), 1 (write) or 2 (trim) "
                f"for layout {_layout_desc(lay)}"
            )
        if lay[2] and not hex_cols[fields.index("prio")]:
            prio = columns[fields.index("prio")]
            if not bool(np.all((prio == 0) | (prio == 1))):
                r = int(np.argmax((prio != 0) & (prio != 1)))
                return (
                    f"{path}, line {line_nos[r]}: prio field is {prio[r]}: expected 0 or 1 "
                    f"(or 0x.... with log_prio) for layout {_layout_desc(lay)}"
                )
        return None

    # Preference when the data fit several layouts: no value1, prio present (3.18+), no issue time.
    cands.sort(key=lambda lay: (lay[0], not lay[2], lay[3]))
    problems = [problem(lay) for lay in cands]
    for lay, p in zip(cands, problems):
        if p is None:
            return lay
    raise ValueError(problems[0])


def _kind_from_name(path: str) -> Tuple[Optional[str], Optional[str], Optional[int], Optional[str]]:
    """(kind, prefix, job, rest) from ``<prefix>_<kind>[.N].log[.rest]``."""
    m = _LOG_NAME_RE.match(os.path.basename(path))
    if m is None:
        return None, None, None, None
    job = m.group("job")
    return m.group("kind"), m.group("prefix"), int(job) if job is not None else None, m.group("rest")


def _value_names(kind: str, per_io: bool) -> Tuple[str, str]:
    """Column names of value and value1 (window maximum)."""
    if kind == "iops":
        return "iops", "iops_max"
    if kind == "bw":
        return ("bw_bytes_s", "bw_max_bytes_s") if per_io else ("bw_kib_s", "bw_max_kib_s")
    return f"{kind}_ns", f"{kind}_max_ns"


def _check_kind(kind: Optional[str], path: str) -> str:
    name_kind, _, _, rest = _kind_from_name(path)
    if rest is not None and rest.lower().endswith("fz"):
        raise ValueError(
            f"{path}: compressed fio log (log_store_compressed): expected a text log; "
            f"decompress it with 'fio --inflate-log={os.path.basename(path)}'"
        )
    if kind is None:
        kind = name_kind
        if kind is None:
            raise ValueError(
                f"{path}: cannot infer the log kind from the file name: expected '<prefix>_<kind>.<N>.log' "
                f"with kind one of {', '.join(LOG_KINDS)}, or pass kind="
            )
    if kind == "clat_hist":
        raise ValueError(f"{path}: kind 'clat_hist' is a histogram log: read it with read_hist_log()")
    if kind not in LOG_KINDS:
        raise ValueError(f"{path}: unknown log kind {kind!r}: expected one of {', '.join(LOG_KINDS)}")
    return kind


def _hints_from_options(
    options: Optional[Mapping[str, str]],
    log_offset: Optional[bool],
    window_value_both: Optional[bool],
    issue_time: Optional[bool],
    per_io: Optional[bool],
) -> Tuple[Optional[bool], Optional[bool], Optional[bool], Optional[bool]]:
    if not options:
        return log_offset, window_value_both, issue_time, per_io
    if log_offset is None:
        log_offset = _truthy(options.get("log_offset"))
        if log_offset is None:
            log_offset = False
    if window_value_both is None:
        wv = str(options.get("log_window_value", options.get("log_max_value", ""))).strip().lower()
        window_value_both = wv in ("both", "2")
    if issue_time is None:
        issue_time = bool(_truthy(options.get("log_issue_time")))
    if per_io is None:
        avg = options.get("log_avg_msec", "0")
        try:
            per_io = int(str(avg).strip() or "0") == 0
        except ValueError:
            per_io = None
    return log_offset, window_value_both, issue_time, per_io


def read_log(
    path: PathLike,
    kind: Optional[str] = None,
    *,
    log_offset: Optional[bool] = None,
    window_value_both: Optional[bool] = None,
    issue_time: Optional[bool] = None,
    per_io: Optional[bool] = None,
    fio_version: VersionLike = None,
    options: Optional[Mapping[str, str]] = None,
) -> pd.DataFrame:
    """Read one fio iops/bw/lat/clat/slat log file.

    Parameters
    ----------
    path : str or os.PathLike
        A ``write_iops_log``/``write_bw_log``/``write_lat_log`` file (``<prefix>_<kind>.<N>.log``).
    kind : {'iops', 'bw', 'lat', 'clat', 'slat'}, optional
        Inferred from the file name if omitted.
    log_offset, window_value_both, issue_time : bool, optional
        Whether the job used ``log_offset=1``, ``log_window_value=both`` (3.37+) or
        ``log_issue_time=1`` (3.38+). Unset hints are resolved from the field count and the data
        (``ddir`` must be 0..2, ``prio`` 0/1 unless printed as hex by ``log_prio=1``); when several
        layouts fit, fio 3.18+ with the fewest options is assumed.
    per_io : bool, optional
        Per-I/O log (``log_avg_msec=0``) or windowed. Inferred from ``bs`` (0 in every windowed row,
        the I/O size in per-I/O rows); needed only to name the value column of an empty bw log.
    fio_version : str or tuple, optional
        e.g. ``"fio-3.33"``: fixes the layout (no ``prio`` before 3.18) and the latency unit (µs before 3.0).
    options : mapping, optional
        The job's options, e.g. ``FioResult.options(job)``: used for unset hints.

    Returns
    -------
    pandas.DataFrame
        In file order: ``time_ms`` (ms since the job's start, or since the epoch with
        ``log_unix_epoch``), the value, ``direction`` (``read``/``write``/``trim`` from ddir 0/1/2),
        ``bs``, then ``offset`` (with ``log_offset``), ``prio`` (fio 3.18+; an int, also when fio
        printed it as hex) and ``issue_time_ns`` when present. The value column is

        * ``iops``: windowed I/Os per second, or ``1`` per row in per-I/O logs;
        * ``bw_kib_s``: windowed bandwidth in KiB/s; per-I/O logs give ``bw_bytes_s`` instead, the
          logged value (``bs * 10**6 / clat_ns``, units of 1000 B/s) times 1000, i.e. bytes/s over the
          I/O's completion latency;
        * ``lat_ns``, ``clat_ns``, ``slat_ns``: ns (window mean in windowed logs).

        With ``log_window_value=both`` the window maximum follows as ``<value>_max`` (e.g.
        ``clat_max_ns``). An empty file (sync engines leave 0-byte slat logs) gives an empty frame with
        these columns. ``DataFrame.attrs`` holds ``source``, ``kind``, ``per_io`` and ``layout``.

        Rows are in time order: fio can write a few rows out of order (it stamps a sample when it
        records it, from more than one thread); those are sorted by ``time_ms`` (stably, so rows
        with equal times keep the file's order) and one :class:`FioLogOrderWarning` says how many.

    Raises
    ------
    ValueError
        Unknown or uninferable kind, a compressed ``.fz`` log, a line with a different number of fields,
        a field that is not a 64-bit integer or is negative (the message names the file, the line and its
        text), fields that fit no fio layout, or a path that is not a regular file or holds more than
        :data:`MAX_LOG_BYTES`.
    """
    return _read_log(
        path,
        kind,
        log_offset=log_offset,
        window_value_both=window_value_both,
        issue_time=issue_time,
        per_io=per_io,
        fio_version=fio_version,
        options=options,
        stacklevel=3,
    )


def _read_log(
    path: PathLike,
    kind: Optional[str],
    *,
    log_offset: Optional[bool],
    window_value_both: Optional[bool],
    issue_time: Optional[bool],
    per_io: Optional[bool],
    fio_version: VersionLike,
    options: Optional[Mapping[str, str]],
    stacklevel: int,
) -> pd.DataFrame:
    """:func:`read_log`; ``stacklevel`` makes its warning point at the public caller's line."""
    spath = os.fspath(path)
    kind = _check_kind(kind, spath)
    version = _parse_version(fio_version)
    log_offset, window_value_both, issue_time, per_io = _hints_from_options(
        options, log_offset, window_value_both, issue_time, per_io
    )
    text = _read_text(spath, f"a fio {kind} log", MAX_LOG_BYTES, "MAX_LOG_BYTES")
    allowed = sorted({len(_layout_fields(lay)) for lay in _LAYOUTS})
    what = "fio log fields time_ms, value[, value1], ddir, bs[, offset][, prio][, issue_time_ns]"
    columns, line_nos, hex_cols = _read_int_table(spath, text, allowed, what)

    if not len(line_nos):
        lay = (
            bool(window_value_both),
            bool(log_offset) or bool(issue_time),
            version is None or version >= (3, 18),
            bool(issue_time),
        )
        is_per_io = bool(per_io)
        fields = _layout_fields(lay)
        vname, v1name = _value_names(kind, is_per_io)
        cols: Dict[str, Any] = {}
        for f in fields:
            if f == "ddir":
                cols["direction"] = pd.Series(dtype=str)
            else:
                cols[{"value": vname, "value1": v1name}.get(f, f)] = pd.Series(dtype=np.int64)
        out = pd.DataFrame(cols)
        out.attrs.update({"source": spath, "kind": kind, "per_io": is_per_io, "layout": tuple(fields)})
        return out

    lay = _choose_layout(
        spath,
        columns,
        line_nos,
        hex_cols,
        log_offset=log_offset,
        value1=window_value_both,
        issue_time=issue_time,
        version=version,
    )
    fields = _layout_fields(lay)
    times = columns[0]
    back = np.flatnonzero(times[1:] < times[:-1])
    if back.size:
        order = np.argsort(times, kind="stable")
        columns = [c[order] for c in columns]
        warnings.warn(
            FioLogOrderWarning(
                f"{spath}: {back.size} row(s) have a time_ms before the row above them (first at line "
                f"{line_nos[back[0] + 1]}); the rows were sorted by time_ms, keeping the file's order "
                f"among equal times"
            ),
            stacklevel=stacklevel,
        )
    col = dict(zip(fields, columns))
    is_per_io = bool(np.any(col["bs"] != 0)) if per_io is None else per_io
    vname, v1name = _value_names(kind, is_per_io)
    scale = 1
    if kind in _LAT_METRICS and version is not None and version < (3, 0):
        scale = 1000  # fio 2.x logged latencies in microseconds
    elif kind == "bw" and is_per_io:
        scale = 1000  # 1000 B/s units -> B/s
    data: Dict[str, Any] = {}
    for f in fields:
        if f == "value":
            data[vname] = col[f] * scale
        elif f == "value1":
            data[v1name] = col[f] * scale
        elif f == "ddir":
            data["direction"] = np.array(DIRECTIONS, dtype=object)[col[f]]
        else:
            data[f] = col[f]
    out = pd.DataFrame(data)
    out.attrs.update({"source": spath, "kind": kind, "per_io": is_per_io, "layout": tuple(fields)})
    return out


def read_logs(
    directory_or_glob: PathLike,
    prefix: Optional[str] = None,
    kind: Optional[str] = None,
    *,
    log_offset: Optional[bool] = None,
    window_value_both: Optional[bool] = None,
    issue_time: Optional[bool] = None,
    per_io: Optional[bool] = None,
    fio_version: VersionLike = None,
    options: Optional[Mapping[str, str]] = None,
) -> pd.DataFrame:
    """Read the per-job numbered log files of a run (``name_bw.1.log``, ``name_bw.2.log``, ...).

    Parameters
    ----------
    directory_or_glob : str or os.PathLike
        A directory (all ``<prefix>_<kind>[.N].log`` files in it) or a glob pattern / file name.
        Files whose names do not follow fio's pattern, and clat histogram logs, are skipped.
    prefix : str, optional
        Keep only files of this log prefix (the ``write_*_log=`` value, or the job name).
    kind : {'iops', 'bw', 'lat', 'clat', 'slat'}, optional
        Keep only this kind. Required when the files matched hold several kinds.
    log_offset, window_value_both, issue_time, per_io, fio_version, options
        Passed to :func:`read_log` for every file.

    Returns
    -------
    pandas.DataFrame
        The :func:`read_log` frames of all files, concatenated in (prefix, job number) order, with
        ``prefix`` and ``job`` columns first. ``job`` is fio's 1-based thread number from the file name
        (jobs after a ``stonewall`` keep counting); 0 for files without a number (``per_job_logs=0``).
        Client/server logs (``.log.<host>``) get a ``host`` column.

    Raises
    ------
    ValueError
        No matching files, several kinds without ``kind=``, or any :func:`read_log` error.
    """
    spec = os.fspath(directory_or_glob)
    if kind is not None and kind not in LOG_KINDS:
        if kind == "clat_hist":
            raise ValueError(f"{spec}: kind 'clat_hist' is a histogram log: read it with read_hist_log()")
        raise ValueError(f"{spec}: unknown log kind {kind!r}: expected one of {', '.join(LOG_KINDS)}")
    if os.path.isdir(spec):
        paths = [os.path.join(spec, f) for f in os.listdir(spec)]
    else:
        paths = _glob.glob(spec)
    found: List[Tuple[str, int, str, str, Optional[str]]] = []  # prefix, job, kind, path, host
    for p in paths:
        k, pre, job, rest = _kind_from_name(p)
        if k is None or pre is None or k == "clat_hist" or not os.path.isfile(p):
            continue
        if rest is not None and rest.lower().endswith("fz"):
            continue
        if prefix is not None and pre != prefix:
            continue
        if kind is not None and k != kind:
            continue
        found.append((pre, job if job is not None else 0, k, p, rest))
    if not found:
        raise ValueError(
            f"{spec}: no fio log files matched (prefix={prefix!r}, kind={kind!r}); "
            f"expected names like '<prefix>_<kind>.<N>.log' with kind one of {', '.join(LOG_KINDS)}"
        )
    kinds = sorted({f[2] for f in found})
    if len(kinds) > 1:
        raise ValueError(f"{spec}: matched logs of several kinds ({', '.join(kinds)}): pass kind= one of them")
    found.sort(key=lambda f: (f[0], f[1], f[4] or "", f[3]))
    with_host = any(f[4] is not None for f in found)
    frames: List[pd.DataFrame] = []
    empty: Optional[pd.DataFrame] = None
    for pre, job, k, p, host in found:
        df = _read_log(
            p,
            k,
            log_offset=log_offset,
            window_value_both=window_value_both,
            issue_time=issue_time,
            per_io=per_io,
            fio_version=fio_version,
            options=options,
            stacklevel=3,
        )
        df.insert(0, "job", np.full(len(df), job, dtype=np.int64))
        df.insert(0, "prefix", pd.Series([pre] * len(df), dtype=str))
        if with_host:
            df.insert(2, "host", pd.Series([host or ""] * len(df), dtype=str))
        if len(df):
            frames.append(df)
        elif empty is None:
            empty = df
    if not frames:
        assert empty is not None
        out = empty.reset_index(drop=True)
    else:
        out = pd.concat(frames, ignore_index=True)
    out.attrs = {"source": spec, "kind": kinds[0], "files": [f[3] for f in found]}
    return out


# ============================================================================================
# Histogram logs (write_hist_log)
# ============================================================================================


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
    text = _read_text(spath, "a fio clat histogram log", MAX_HIST_LOG_BYTES, "MAX_HIST_LOG_BYTES")
    columns, line_nos, _ = _read_int_table(spath, text, allowed, what)
    names = ["time_ms", "direction", "bs", "bucket", "lower_ns", "upper_ns", "latency_ns", "count"]
    if not len(line_nos):
        out = pd.DataFrame({c: pd.Series(dtype=str if c == "direction" else np.int64) for c in names})
        out.attrs.update({"source": spath, "coarseness": None, "nbuckets": None, "intervals": 0})
        return out
    shape = _hist_shape(len(columns) - 3)
    assert shape is not None  # guaranteed by `allowed`
    coarseness, total = shape
    ddir = columns[1]
    if not _ddir_ok(ddir):
        r = int(np.argmax((ddir < 0) | (ddir > 2)))
        raise ValueError(f"{spath}, line {line_nos[r]}: ddir field is {ddir[r]}: expected 0, 1 or 2")
    counts = np.column_stack(columns[3:])
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
            "time_ms": columns[0][rows],
            "direction": np.array(DIRECTIONS, dtype=object)[ddir[rows]],
            "bs": columns[2][rows],
            "bucket": bidx.astype(np.int64),
            "lower_ns": buckets["lower_ns"].to_numpy()[bidx],
            "upper_ns": buckets["upper_ns"].to_numpy()[bidx],
            "latency_ns": buckets["latency_ns"].to_numpy()[bidx],
            "count": counts[rows, bidx],
        }
    )
    out.attrs.update({"source": spath, "coarseness": coarseness, "nbuckets": total, "intervals": nrow})
    return out
