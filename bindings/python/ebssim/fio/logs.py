"""fio's iops/bw/lat/clat/slat logs, read and written: the log line format (``time_ms, value[, value1],
ddir, bs[, offset], prio[, issue_time_ns]`` and which fields each fio version writes), the log file
names (``PREFIX_KIND.N.log``, the ``write_*_log`` option of each kind), :func:`read_log` and
:func:`read_logs` that read real logs into pandas with named, unit-normalised columns, and the writer
of the windowed logs that :func:`ebssim.fio.predict` produces; the shared parser of fio's
comma-separated integer lines serves :mod:`ebssim.fio.histograms` too.
"""

from __future__ import annotations

import glob as _glob
import os
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._files import LineNumbers, PathLike, read_int_file

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DIRECTIONS",
    "LOG_KINDS",
    "LOG_OPTIONS",
    "MAX_LOG_BYTES",
    "FioLogOrderWarning",
    "log_file_name",
    "read_log",
    "read_logs",
]

VersionLike = Union[str, Tuple[int, ...], None]
FloatArray = npt.NDArray[np.float64]

#: Data directions of fio's ``ddir`` field (0, 1, 2) and JSON objects.
DIRECTIONS: Tuple[str, str, str] = ("read", "write", "trim")
#: Kinds of per-sample logs :func:`read_log` understands (file suffixes ``_<kind>.N.log``).
LOG_KINDS: Tuple[str, ...] = ("iops", "bw", "lat", "clat", "slat")
#: The ``write_*_log`` options and the log kinds each makes fio write, in fio's order
#: (``write_lat_log`` writes lat, clat and slat logs; histogram logs are read by
#: :func:`ebssim.fio.read_hist_log`).
LOG_OPTIONS: Mapping[str, Tuple[str, ...]] = {
    "write_iops_log": ("iops",),
    "write_bw_log": ("bw",),
    "write_lat_log": ("lat", "clat", "slat"),
    "write_hist_log": ("clat_hist",),
}
#: Largest iops/bw/lat log :func:`read_log` reads (tens of millions of per-I/O rows).
MAX_LOG_BYTES = 1 << 30


class FioLogOrderWarning(UserWarning):
    """A fio log whose timestamps go backwards; :func:`read_log` sorted its rows by time.

    fio takes a sample's timestamp when it records the sample, from more than one thread, so real
    logs can hold a few rows out of order.
    """


#: The latency metrics, as fio names their logs and JSON objects.
LATENCY_METRICS: Tuple[str, str, str] = ("lat", "clat", "slat")
_LOG_NAME_RE = re.compile(
    r"^(?P<prefix>.*)_(?P<kind>clat_hist|iops|bw|lat|clat|slat)(?:\.(?P<job>\d+))?\.log(?:\.(?P<rest>.+))?$"
)
_VERSION_RE = re.compile(r"(\d+)\.(\d+)")


def log_file_name(prefix: str, kind: str, job: Optional[int]) -> str:
    """fio's name for a log file: ``PREFIX_KIND.N.log``, with ``N`` the job's 1-based thread number,
    or ``PREFIX_KIND.log`` for ``job=None`` (``per_job_logs=0``, one file for all clones).

    >>> log_file_name("a", "iops", 2), log_file_name("a", "clat_hist", None)
    ('a_iops.2.log', 'a_clat_hist.log')
    """
    return f"{prefix}_{kind}.log" if job is None else f"{prefix}_{kind}.{job}.log"


def _kind_from_name(path: str) -> Tuple[Optional[str], Optional[str], Optional[int], Optional[str]]:
    """(kind, prefix, job, rest) from ``<prefix>_<kind>[.N].log[.rest]`` (:func:`log_file_name`; ``rest``
    is a client/server host or a compressed log's ``.fz``)."""
    m = _LOG_NAME_RE.match(os.path.basename(path))
    if m is None:
        return None, None, None, None
    job = m.group("job")
    return m.group("kind"), m.group("prefix"), int(job) if job is not None else None, m.group("rest")


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


# ============================================================================================
# The line format
# ============================================================================================
#
# Log lines are ``time_ms, value[, value1], ddir, bs[, offset], prio[, issue_time_ns]``: the optional
# columns depend on fio version and options (``log_offset``, ``log_window_value=both``,
# ``log_issue_time``), so the layout is resolved from the field count, the data and optional hints.
# Per-I/O bandwidth logs (``log_avg_msec=0``) hold ``bs * 10**6 / clat_ns`` (bytes per ms, i.e. units
# of 1000 B/s, derived from the completion latency), not KiB/s; they are converted to B/s and named
# ``bw_bytes_s``. Windowed bandwidth logs are KiB/s and named ``bw_kib_s``; windowed logs have bs 0.

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


def _ddir_ok(col: np.ndarray) -> bool:
    return bool(np.all((col >= 0) & (col <= 2)))


def _choose_layout(
    path: str,
    columns: List[np.ndarray],
    line_nos: Union[np.ndarray, LineNumbers],
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

    def problem(lay: Tuple[bool, bool, bool, bool]) -> Optional[Callable[[], str]]:
        """Why ``lay`` does not fit, as a message made when it is shown (a line number may
        have to be looked up in the file: :class:`LineNumbers`)."""
        fields = _layout_fields(lay)
        ddir = columns[fields.index("ddir")]
        if not _ddir_ok(ddir):
            r = int(np.argmax((ddir < 0) | (ddir > 2)))
            return lambda: (
                f"{path}, line {line_nos[r]}: ddir field is {ddir[r]}: expected 0 (read), 1 (write) or 2 (trim) "
                f"for layout {_layout_desc(lay)}"
            )
        if lay[2] and not hex_cols[fields.index("prio")]:
            prio = columns[fields.index("prio")]
            if not bool(np.all((prio == 0) | (prio == 1))):
                r = int(np.argmax((prio != 0) & (prio != 1)))
                return lambda: (
                    f"{path}, line {line_nos[r]}: prio field is {prio[r]}: expected 0 or 1 "
                    f"(or 0x.... with log_prio) for layout {_layout_desc(lay)}"
                )
        return None

    # Preference when the data fit several layouts: no value1, prio present (3.18+), no issue time.
    cands.sort(key=lambda lay: (lay[0], not lay[2], lay[3]))
    first: Optional[Callable[[], str]] = None
    for lay in cands:
        p = problem(lay)
        if p is None:
            return lay
        first = first or p
    assert first is not None
    raise ValueError(first())


def _value_names(kind: str, per_io: bool) -> Tuple[str, str]:
    """Column names of value and value1 (window maximum)."""
    if kind == "iops":
        return "iops", "iops_max"
    if kind == "bw":
        return ("bw_bytes_s", "bw_max_bytes_s") if per_io else ("bw_kib_s", "bw_max_kib_s")
    return f"{kind}_ns", f"{kind}_max_ns"


def directions(ddir: npt.NDArray[np.int64]) -> Any:
    """The ``direction`` column of fio's ``ddir`` codes (0, 1, 2: :data:`DIRECTIONS`), of the
    dtype pandas gives a column of text (``str`` in pandas 3, object before): each row a take of
    the three names, not a Python string per row that pandas would then convert."""
    return repeated(np.array(DIRECTIONS, dtype=object), ddir)


def repeated(texts: npt.NDArray[np.object_], codes: npt.NDArray[np.int64]) -> Any:
    """``texts[codes]`` as a column of text, taken from ``texts`` in the dtype pandas infers for
    them (so ``pd.DataFrame({"c": texts[codes]})`` would give the same column, more slowly)."""
    import pandas as pd

    return pd.Series(texts).array.take(codes)


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
    data, attrs = _read_log_columns(
        path,
        kind,
        log_offset=log_offset,
        window_value_both=window_value_both,
        issue_time=issue_time,
        per_io=per_io,
        fio_version=fio_version,
        options=options,
        stacklevel=3,  # the warning points at read_log's caller
    )
    return _log_frame(data, attrs)


def _log_frame(data: Dict[str, Any], attrs: Dict[str, Any]) -> pd.DataFrame:
    """The frame of :func:`_read_log_columns`' columns: ``direction`` named from its ddir codes."""
    import pandas as pd

    cols = {k: (directions(v) if k == "direction" else v) for k, v in data.items()}
    out = pd.DataFrame(cols, copy=False)  # the arrays are this call's own
    out.attrs.update(attrs)
    return out


def _read_log_columns(
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
) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """:func:`read_log`'s columns as int64 arrays (``direction``: fio's ddir codes, named by
    :func:`_log_frame`) and the frame's ``attrs``: :func:`read_logs` joins several files' arrays
    before it makes one frame."""
    spath = os.fspath(path)
    kind = _check_kind(kind, spath)
    version = _parse_version(fio_version)
    log_offset, window_value_both, issue_time, per_io = _hints_from_options(
        options, log_offset, window_value_both, issue_time, per_io
    )
    allowed = sorted({len(_layout_fields(lay)) for lay in _LAYOUTS})
    what = "fio log fields time_ms, value[, value1], ddir, bs[, offset][, prio][, issue_time_ns]"
    columns, line_nos, hex_cols = read_int_file(
        spath, MAX_LOG_BYTES, f"a fio {kind} log", f"{__name__}.MAX_LOG_BYTES", allowed, what
    )

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
        empty = np.zeros(0, dtype=np.int64)
        data = {{"value": vname, "value1": v1name, "ddir": "direction"}.get(f, f): empty for f in fields}
        return data, {"source": spath, "kind": kind, "per_io": is_per_io, "layout": tuple(fields)}

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
                f"{line_nos[int(back[0]) + 1]}); the rows were sorted by time_ms, keeping the file's order "
                f"among equal times"
            ),
            stacklevel=stacklevel,
        )
    col = dict(zip(fields, columns))
    is_per_io = bool(np.any(col["bs"] != 0)) if per_io is None else per_io
    vname, v1name = _value_names(kind, is_per_io)
    scale = 1
    if kind in LATENCY_METRICS and version is not None and version < (3, 0):
        scale = 1000  # fio 2.x logged latencies in microseconds
    elif kind == "bw" and is_per_io:
        scale = 1000  # 1000 B/s units -> B/s
    data = {}
    for f in fields:
        if f in ("value", "value1"):
            data[vname if f == "value" else v1name] = col[f] * scale if scale != 1 else col[f]
        else:
            data["direction" if f == "ddir" else f] = col[f]
    return data, {"source": spath, "kind": kind, "per_io": is_per_io, "layout": tuple(fields)}


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
    import pandas as pd

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
    parts: List[Tuple[Dict[str, np.ndarray], Dict[str, Any]]] = []
    for _, _, k, p, _ in found:
        data, attrs = _read_log_columns(
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
        parts.append((data, attrs))
    # Each file's rows: prefix, job[, host], then its own columns. Files of one layout are joined
    # as arrays and made one frame (no frame per file to concatenate); other mixes by pandas.
    labels = [(pre, job, host or "") for pre, job, _, _, host in found]
    full = [i for i, (data, _) in enumerate(parts) if len(next(iter(data.values())))] or [0]
    if len({tuple(parts[i][0]) for i in full}) == 1:
        rows = np.array([len(next(iter(parts[i][0].values()))) for i in full], dtype=np.intp)
        which = np.repeat(np.arange(len(full)), rows)
        joined: Dict[str, Any] = {
            "prefix": repeated(np.array([labels[i][0] for i in full], dtype=object), which),
            "job": np.repeat(np.array([labels[i][1] for i in full], dtype=np.int64), rows),
        }
        if with_host:
            joined["host"] = repeated(np.array([labels[i][2] for i in full], dtype=object), which)
        for key in parts[full[0]][0]:
            joined[key] = np.concatenate([parts[i][0][key] for i in full]) if len(full) > 1 else parts[full[0]][0][key]
        out = _log_frame(joined, parts[full[0]][1])
    else:
        frames = []
        for (data, attrs), (pre, job, host) in zip(parts, labels):
            if not len(next(iter(data.values()))):
                continue
            df = _log_frame(data, attrs)
            n = np.zeros(len(df), dtype=np.intp)
            df.insert(0, "job", np.full(len(df), job, dtype=np.int64))
            df.insert(0, "prefix", repeated(np.array([pre], dtype=object), n))
            if with_host:
                df.insert(2, "host", repeated(np.array([host], dtype=object), n))
            frames.append(df)
        out = pd.concat(frames, ignore_index=True)
    out.attrs = {"source": spec, "kind": kinds[0], "files": [f[3] for f in found]}
    return out


# ============================================================================================
# Writing: the windowed logs of a prediction
# ============================================================================================

#: The layout predictions are written in: fio 3.18+'s default, ``time_ms, value, ddir, bs, prio``.
_WRITTEN_LAYOUT = (False, False, True, False)
#: Kinds a prediction writes empty: no latency histogram is modelled.
EMPTY_WHEN_PREDICTED = frozenset({"clat_hist"})


def empty_when_predicted(kind: str, sync_engine: bool) -> bool:
    """Whether a prediction writes this log kind empty: the histogram logs, and a synchronous
    engine's slat log (fio leaves it empty: it measures no submission latency for them)."""
    return kind in EMPTY_WHEN_PREDICTED or (kind == "slat" and sync_engine)


def window_steps(log_avg_msec: int, dt: float) -> int:
    """Simulation steps of ``dt`` seconds in one log window: ``log_avg_msec``, or one step when it
    is 0 (where fio would log every I/O)."""
    window_ms = log_avg_msec or int(round(dt * 1000)) or 1
    return max(1, int(round(window_ms / (dt * 1000))))


@dataclass
class WindowedLog:
    """One job's predicted logs: the I/Os and mean latency of each averaging window, ready to write.

    ``paths`` holds, by kind, one path per clone or one path that every clone appends to
    (``per_job_logs=0``); ``end_ms`` each window's end, in ms from the end of the job's ramp (fio's
    time base); ``directions`` the ``(ddir, share of the I/Os, bs)`` of each direction the job does;
    ``copies`` the job's clones, which all log the same rows; ``slat_s`` each window's mean
    submission latency (an asynchronous engine's: the lat log holds ``latency_s``, the clat log
    ``latency_s - slat_s``, the slat log ``slat_s``), None for a synchronous engine (its slat log
    stays empty, as fio's does).
    """

    paths: Dict[str, List[str]]
    end_ms: FloatArray
    ios: FloatArray
    latency_s: FloatArray
    window_s: float
    directions: List[Tuple[int, float, int]]
    copies: int
    slat_s: Optional[FloatArray] = None

    def _empty(self, kind: str) -> bool:
        return empty_when_predicted(kind, self.slat_s is None)

    @property
    def rows(self) -> int:
        """Lines the logs hold together."""
        kinds = sum(1 for k in self.paths if not self._empty(k))
        return self.end_ms.size * len(self.directions) * kinds * self.copies

    def text(self, kind: str) -> str:
        """The lines of one log kind, one per window and direction: windowed I/Os per second, KiB/s
        or ns, as :func:`read_log` reads windowed logs (``bs`` 0, ``prio`` 0)."""
        if self._empty(kind) or not self.end_ms.size or not self.directions:
            return ""
        share = np.array([s for _, s, _ in self.directions], dtype=np.float64)
        ios = self.ios[:, None] * share[None, :]
        if kind == "iops":
            value = ios / self.window_s
        elif kind == "bw":
            value = ios * np.array([bs for _, _, bs in self.directions], dtype=np.float64) / self.window_s / 1024
        else:
            slat = self.slat_s if self.slat_s is not None else np.zeros_like(self.latency_s)
            lat = {"lat": self.latency_s, "clat": self.latency_s - slat, "slat": slat}[kind]
            value = np.broadcast_to(lat[:, None] * 1e9, ios.shape)
        columns: Dict[str, npt.NDArray[Any]] = {
            "time_ms": np.rint(self.end_ms)[:, None],
            "value": np.rint(value),
            "ddir": np.array([d for d, _, _ in self.directions])[None, :],
            "bs": np.zeros(1),  # 0: a windowed log
            "prio": np.zeros(1),
        }
        fields = [np.broadcast_to(columns[f], ios.shape) for f in _layout_fields(_WRITTEN_LAYOUT)]
        text = [np.asarray(f, dtype=np.int64).ravel().astype(str) for f in fields]
        return "".join(", ".join(row) + "\n" for row in zip(*text))


def write_logs(logs: Sequence[WindowedLog]) -> None:
    """Write one run's logs. Each run starts its files anew, as a new fio run would; clones sharing a
    file (``per_job_logs=0``) append to it one after the other, as fio's do."""
    written: Set[str] = set()
    for lg in logs:
        for kind, files in lg.paths.items():
            text = lg.text(kind)
            for path in files if len(files) > 1 else files * lg.copies:
                mode = "a" if path in written else "w"
                written.add(path)
                with open(path, mode) as f:
                    f.write(text)
