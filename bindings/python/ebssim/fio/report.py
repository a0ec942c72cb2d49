"""fio's JSON report, read and written, so that its shape lives here only: :func:`read_json` and
:func:`parse_json` read fio ``--output-format=json``/``json+`` output of fio 2.x to 3.42 into a
:class:`FioResult` (one pandas row per job and direction, latency in ns whatever the fio version,
JSON+ ``bins`` as histogram rows), checking every number they take; and the writers turn predicted
jobs into fio 3.33's JSON shape and into a report that reads like fio's normal output (used by
:class:`ebssim.fio.FioPrediction`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import time as _time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

import numpy as np

from .. import _repr
from .._units import a_an
from ._files import PathLike, read_text
from ._types import LatencyStats
from .histograms import _fine_bounds, plat_val_to_idx
from .logs import _VERSION_RE, LATENCY_METRICS, _parse_version
from .options import FIO_VERSION

if TYPE_CHECKING:
    import pandas as pd

    from ._types import JobPrediction

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "FioResult",
    "parse_json",
    "read_json",
]

# Format notes, checked against fio's source and fio 3.33 output:
# * Throughput is taken from ``<ddir>.iops``, ``bw`` (KiB/s) and ``bw_bytes`` (B/s), which fio
#   computes as total / runtime. ``iops_mean``/``bw_mean`` are statistics over sampling windows (or,
#   with per-I/O logs, over single I/Os) and are exposed only as ``iops_win_*``/``bw_win_*`` columns.
# * fio 3.0 renamed ``clat``/``lat``/``slat`` (µs) to ``clat_ns``/``lat_ns``/``slat_ns`` (ns);
#   ``bw_bytes`` arrived in 3.2, ``job_runtime`` in 3.8, ``N`` in 3.18. Older forms are converted.

#: Largest fio JSON file :func:`read_json` reads (fio's JSON+ for hundreds of jobs stays far below).
MAX_JSON_BYTES = 256 << 20
#: Deepest nesting of objects and arrays :func:`read_json` accepts (fio's own output nests about 6 deep).
MAX_JSON_DEPTH = 64

_JSON_DIRECTIONS = ("read", "write", "trim", "mixed")
_SPLIT_DIRECTIONS = ("read", "write", "trim")
_BARE_NAN_RE = re.compile(r"(:\s*)(-?nan|-?inf)\b", re.IGNORECASE)
_NON_FINITE = {"nan": "NaN", "-nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pct_label(key: str) -> str:
    """``"99.900000"`` -> ``"p99_9"``; ``"50.000000"`` -> ``"p50"``."""
    text = f"{float(key):.6f}".rstrip("0").rstrip(".")
    return "p" + text.replace(".", "_")


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
        Lines before the JSON document (fio ``note:``/warning lines on stdout); for
        :func:`~ebssim.fio.read_normal`, the lines between the previous run and this one (the
        shell command that ran it, headings).
    lines : tuple of int or None
        For :func:`~ebssim.fio.read_normal`: the run's first and last line in the text (1-based).
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
    lines: Optional[Tuple[int, int]] = None

    def _rows(self) -> List[List[str]]:
        """A row per job and direction: what fio measured, in units that read (latency from ns)."""

        def lat(row: Any, name: str) -> str:
            x = row.get(name, math.nan)
            return "n/a" if x is None or not math.isfinite(float(x)) else _repr.latency_s(float(x) / 1e9)

        return [
            [
                str(r.get("jobname", "")),
                str(r.get("direction", "")),
                _repr.number(float(r.get("iops", math.nan)), "IOPS"),
                _repr.number(float(r.get("bw_bytes_s", math.nan)) / 2**20, "MiB/s"),
                lat(r, "clat_mean_ns"),
                lat(r, "clat_p99_ns"),
            ]
            for _, r in self.jobs.iterrows()
        ]

    def _title(self) -> str:
        n = len(self.job_options)
        return f"{self.fio_version or 'fio'} report of {n} job{'s' * (n != 1)} from {self.source}"

    def __repr__(self) -> str:
        parts = [self._title()] + [f"{j} {d}: {i}, {b}, clat {m} mean, p99 {p}" for j, d, i, b, m, p in self._rows()]
        return _repr.short_repr("FioResult", parts, sep="; ")

    def _repr_html_(self) -> str:
        header = ["job", "direction", "IOPS", "bandwidth", "clat mean", "clat p99"]
        return _repr.html_grid(f"FioResult: {self._title()}", header, self._rows())

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
        import pandas as pd

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
    return read_text(path, MAX_JSON_BYTES, "fio JSON output", f"{__name__}.MAX_JSON_BYTES"), path


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


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _string_problem(text: str, kind: str) -> Optional[str]:
    """Why a key or string of the document cannot be taken, or None."""
    if _has_surrogate(text):
        return (
            f"holds a lone surrogate ({kind} {ascii(text[:40])}): not Unicode text; fio writes UTF-8 and never a "
            f"\\ud800-\\udfff escape"
        )
    return None


def _check_document(obj: Any, label: str) -> None:
    """Refuse documents nested deeper than MAX_JSON_DEPTH, naming the deepest key path found, and
    keys or strings that are not Unicode text (a lone surrogate from a ``\\ud800`` escape, which
    pandas and every writer would later fail on) or keys that are not strings (a dict given to
    :func:`parse_json` that no JSON text decodes to), naming the key path.

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
            if isinstance(node, dict):
                if not isinstance(k, str):
                    raise ValueError(
                        f"{label}: key {ascii(k)[:40]} in {path or '(top)'} is {a_an(type(k).__name__)}: "
                        f"JSON object keys are strings"
                    )
                why = _string_problem(k, "key")
                if why is not None:
                    raise ValueError(f"{label}: a key in {path or '(top)'} {why}")
            key = f"{path}[{k}]" if isinstance(node, list) else (f"{path}.{k}" if path else str(k))
            if isinstance(v, (dict, list)):
                stack.append((v, key[:200], depth + 1))
            elif isinstance(v, str):
                why = _string_problem(v, "value")
                if why is not None:
                    raise ValueError(f"{label}: key {key[:200]} {why}")


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
        what = a_an(type(obj).__name__)
        raise ValueError(f"{label}: not fio JSON output: the document is {what}, expected an object")
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
        raise ValueError(f"{label}: key '{key}' is {a_an(type(jobs).__name__)}: expected a list of job objects")
    for i, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise ValueError(f"{label}: {key}[{i}] is {a_an(type(job).__name__)}: expected a job object")
    return jobs


def _str_dict(value: Any, where: str, label: str) -> Dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{label}: key {where} is {a_an(type(value).__name__)}: expected an object of option strings")
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


def _shown(value: Any) -> str:
    """A JSON value for a message: short, and ASCII (a lone surrogate cannot be printed)."""
    text = ascii(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


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
        raise ValueError(f"{where} is {_shown(value)}: expected {_KIND_RULES[kind]}")
    if isinstance(value, float) and kind == "count":
        return int(value)
    return float(value) if isinstance(value, float) else int(value)


def _latency_fields(
    ddir_obj: Mapping[str, Any], where: _Where, row: Dict[str, Any]
) -> List[Tuple[str, Dict[str, Any], int]]:
    """Add latency statistics to ``row``; return (metric, object, scale) for JSON+ bins."""
    found: List[Tuple[str, Dict[str, Any], int]] = []
    for metric in LATENCY_METRICS:
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
        if pct is not None and not isinstance(pct, dict):
            raise ValueError(
                f"{where.label}: key {w.path}.percentile is {_shown(pct)}: expected an object of percentile -> "
                f"latency, as fio writes it"
            )
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
                if p == 0.0:
                    # fio 2.x pads its list to 20 entries with "0.00" : 0 (three of them in fio-2.14):
                    # slots, not a percentile (fio has no 0th)
                    continue
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
    import pandas as pd

    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: not fio JSON output: expected an object, got {type(data).__name__}")
    _check_document(data, source)
    raw = dict(data)
    jobs = _jobs_list(raw, source)
    fio_version = raw.get("fio version")
    if fio_version is not None and not isinstance(fio_version, str):
        raise ValueError(f"{source}: key 'fio version' is {_shown(fio_version)}: expected a string such as 'fio-3.33'")
    disk_util = raw.get("disk_util")
    if disk_util is not None and not (isinstance(disk_util, list) and all(isinstance(r, dict) for r in disk_util)):
        raise ValueError(
            f"{source}: key disk_util is {_shown(disk_util)}: expected a list of disk objects, as fio writes it"
        )
    version = _parse_version(fio_version) if fio_version and _VERSION_RE.search(fio_version) else None
    jobs_key = "jobs" if "jobs" in raw else "client_stats"
    for key in ("timestamp", "timestamp_ms"):
        if key in raw:  # seconds and ms since the epoch: fit places separate runs by timestamp_ms
            _checked(raw[key], "count", f"{source}: key {key}")

    rows: List[Dict[str, Any]] = []
    bins: List[Dict[str, Any]] = []
    job_options: List[Dict[str, str]] = []
    for i, job in enumerate(jobs):
        where = f"{jobs_key}[{i}]"
        if "jobname" not in job:
            raise ValueError(f"{source}: missing key {where}.jobname (expected in every fio JSON job object)")
        for key in ("jobname", "hostname"):
            if key in job and not isinstance(job[key], str):
                raise ValueError(
                    f"{source}: key {where}.{key} is {_shown(job[key])}: expected a string, as fio writes it"
                )
        job_options.append(_str_dict(job.get("job options"), f"{where}.'job options'", source))
        directions = [d for d in _JSON_DIRECTIONS if d in job]
        if not directions:
            raise ValueError(
                f"{source}: {where} ({job['jobname']!r}) has no 'read', 'write', 'trim' or 'mixed' object "
                f"(expected fio JSON per-job statistics)"
            )
        # fio writes read, write and trim for every job, zeros when unused; only
        # unified_rw_reporting=mixed replaces all three by 'mixed' (=both adds it to them).
        split = [d for d in _SPLIT_DIRECTIONS if d in job]
        if split or "mixed" not in job:
            missing = [d for d in _SPLIT_DIRECTIONS if d not in job]
            if missing:
                raise ValueError(
                    f"{source}: {where} ({job['jobname']!r}) has no {' or '.join(repr(d) for d in missing)} object: "
                    f"fio writes read, write and trim for every job (zeros when unused), or 'mixed' alone with "
                    f"unified_rw_reporting=mixed (was the report edited?)"
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
                if b is None:
                    continue
                if not isinstance(b, dict):
                    key = f"{metric}_ns" if scale == 1 else metric
                    raise ValueError(
                        f"{source}: key {w.path}.{key}.bins (job {row['jobname']!r}, {ddir}) is {_shown(b)}: expected "
                        f"an object of latency (ns) -> count, as fio's json+ writes it"
                    )
                if scale != 1:  # fio 2.x json+ bins are indices, not latencies: not read
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
    import pandas as pd

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
# Writing: the predicted report
# ============================================================================================


def _prediction_json(jobs: Sequence[JobPrediction], runs: Sequence[str]) -> Dict[str, Any]:
    """One fio-shaped JSON document listing the jobs of every run in order."""
    now = int(_time.time())
    return {
        "fio version": f"fio-{FIO_VERSION}",
        "timestamp": now,
        "timestamp_ms": now * 1000,
        "time": _time.ctime(now),
        "ebssim": {"prediction": True, "runs": list(runs)},
        "jobs": [_job_json(j) for j in jobs],
    }


def _latency(j: JobPrediction, direction: Optional[str]) -> LatencyStats:
    """One direction's latency (its own when the prediction has it), else every I/O's."""
    if direction is not None and direction in j.by_direction:
        return j.by_direction[direction]
    return LatencyStats(j.latency_mean_s, j.latency_stddev_s, j.latency_min_s, j.latency_max_s, j.percentiles_s)


def _lat_obj(j: JobPrediction, share: float, direction: Optional[str] = None) -> Dict[str, Any]:
    n = int(round(j.total_ios * share))
    if n == 0:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    st = _latency(j, direction)
    return {
        "min": int(round(st.min_s * 1e9)),
        "max": int(round(st.max_s * 1e9)),
        "mean": st.mean_s * 1e9,
        "stddev": st.stddev_s * 1e9,
        "N": n,
    }


def _slat_obj(j: JobPrediction, share: float, direction: Optional[str]) -> Dict[str, Any]:
    """fio's slat: the model gives its mean only (docs/model.md, "Submission latency"); min, max
    and stddev are those of a constant. None for a synchronous engine (N 0, as fio prints none)."""
    slat = _latency(j, direction).slat_mean_s
    n = int(round(j.total_ios * share))
    if n == 0 or not slat > 0:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    return {"min": int(round(slat * 1e9)), "max": int(round(slat * 1e9)), "mean": slat * 1e9, "stddev": 0.0, "N": n}


def _total_obj(j: JobPrediction, share: float, direction: Optional[str]) -> Dict[str, Any]:
    """fio's lat = slat + clat: clat's statistics shifted by the mean slat."""
    out = _lat_obj(j, share, direction)
    slat = _latency(j, direction).slat_mean_s
    if out["N"] and slat > 0:
        out["mean"] += slat * 1e9
        out["min"] += int(round(slat * 1e9))
        out["max"] += int(round(slat * 1e9))
    return out


def _dir_json(j: JobPrediction, share: float, direction: Optional[str] = None) -> Dict[str, Any]:
    io_bytes = j.io_bytes * share
    runtime_ms = int(round(j.runtime_s * 1e3)) if share > 0 else 0
    bw_bytes = io_bytes / j.runtime_s if j.runtime_s > 0 and share > 0 else 0.0
    clat = _lat_obj(j, share, direction)
    if clat["N"]:
        # fio prints percentile keys with "%f": "99.900000".
        clat["percentile"] = {f"{p:.6f}": int(round(v * 1e9)) for p, v in _latency(j, direction).percentiles_s.items()}
    return {
        "io_bytes": int(round(io_bytes)),
        "io_kbytes": int(round(io_bytes / 1024)),
        "bw_bytes": int(round(bw_bytes)),
        "bw": int(round(bw_bytes / 1024)),
        "iops": j.iops * share,
        "runtime": runtime_ms,
        "total_ios": int(round(j.total_ios * share)),
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": _slat_obj(j, share, direction),
        "clat_ns": clat,
        "lat_ns": _total_obj(j, share, direction),
    }


def _job_json(j: JobPrediction) -> Dict[str, Any]:
    empty = _dir_json(j, 0.0)
    return {
        "jobname": j.name,
        "groupid": j.groupid,
        "error": 0,
        "job options": j.job_options,
        "read": _dir_json(j, j.read_fraction, "read") if j.read_fraction > 0 else empty,
        "write": _dir_json(j, 1 - j.read_fraction, "write") if j.read_fraction < 1 else empty,
        "trim": empty,
        "job_runtime": int(round(j.runtime_s * 1e3)),
        "ebssim": {
            "run": j.run,
            "clones": j.clones,
            "cliff_time_s": j.cliff_time_s,
            "instance_cliff_time_s": j.instance_cliff_time_s,
            "burst_balance_end_pct": j.burst_balance_end_pct,
            "bound": j.bound,
            "bound_fraction": j.bound_fraction,
        },
    }


def _fmt_bw(bps: float) -> str:
    mib = bps / 2**20
    return f"{mib:.1f}MiB/s ({bps / 1e6:.1f}MB/s)" if mib >= 1 else f"{bps / 1024:.1f}KiB/s ({bps / 1e3:.1f}kB/s)"


def _normal_report(jobs: Sequence[JobPrediction]) -> str:
    lines: List[str] = []
    for j in jobs:
        lines.append(f"{j.name}: (groupid={j.groupid}, jobs={j.clones}): err= 0: ebssim prediction ({j.run})")
        for d, share in (("read", j.read_fraction), ("write", 1 - j.read_fraction)):
            if share <= 0:
                continue
            io = j.io_bytes * share
            lines.append(
                f"  {d}: IOPS={j.iops * share:.0f}, BW={_fmt_bw(j.bw_bytes_s * share)}"
                f"({io / 2**20:.0f}MiB/{j.runtime_s * 1e3:.0f}msec)"
            )
            st = _latency(j, d)
            sl = st.slat_mean_s
            if sl > 0:  # the mean only (docs/model.md, "Submission latency")
                us = sl * 1e6
                lines.append(f"    slat (usec): min={us:.0f}, max={us:.0f}, avg={us:.2f}, stdev=0.00")
            lines.append(
                f"    clat (usec): min={st.min_s * 1e6:.0f}, max={st.max_s * 1e6:.0f}, "
                f"avg={st.mean_s * 1e6:.2f}, stdev={st.stddev_s * 1e6:.2f}"
            )
            if sl > 0:  # lat = slat + clat
                lines.append(
                    f"     lat (usec): min={(st.min_s + sl) * 1e6:.0f}, max={(st.max_s + sl) * 1e6:.0f}, "
                    f"avg={(st.mean_s + sl) * 1e6:.2f}, stdev={st.stddev_s * 1e6:.2f}"
                )
            lines.append("    clat percentiles (usec):")
            items = [f"{p:5.2f}th=[{v * 1e6:7.0f}]" for p, v in st.percentiles_s.items()]
            for i in range(0, len(items), 3):
                lines.append("     | " + ", ".join(items[i : i + 3]) + ("," if i + 3 < len(items) else ""))
        cliff = f"cliff at {j.cliff_time_s:.1f} s" if j.cliff_time_s is not None else "no cliff"
        if j.instance_cliff_time_s is not None:
            cliff += f", instance EBS balance ran out at {j.instance_cliff_time_s:.1f} s"
        bb = f", BurstBalance {j.burst_balance_end_pct:.1f} % at end" if j.burst_balance_end_pct is not None else ""
        lines.append(f"  ebssim: {cliff}{bb}, bound by {j.bound}")
        lines.append("")
    return "\n".join(lines)
