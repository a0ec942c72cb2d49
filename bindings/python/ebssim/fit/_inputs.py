"""What fio wrote, read and placed on one clock.

A *capture* is one or more fio invocations (job files, JSON/json+ reports, iops/bw/clat logs).
Each job becomes a :class:`JobData`: its options (I/O size, direction, pattern, depth, rate caps),
where it ran on the capture's clock, and its measured rate as windows ``(start_s, end_s]`` with a
mean IOPS each. Only the public fio readers are used (``ebssim.fio``).

Clock rules (fio 3.x):

- A job's log times are ms since the job's epoch: its start, moved to the end of ``ramp_time``.
- Jobs of one invocation run in stonewall phases; a phase starts when the one before it ends,
  and lasts as long as its longest job (``ramp_time`` + the JSON's ``job_runtime``, else the job
  file's ``runtime``, else the job's last log time).
- Invocations follow each other: placed by their JSON ``timestamp_ms`` (the end of the run) when
  every one has it, otherwise back to back in the order given. A gap between them is a rest.
- A windowed log row is stamped at the end of its window: it covers ``(t - w, t]``, ``w`` the
  spacing of the rows (``log_avg_msec``). A per-I/O row is stamped at completion: the rows are
  counted in bins.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .. import fio
from .._files import read_head

if TYPE_CHECKING:
    import pandas as pd

    from ..volumes import Volume

FloatArray = npt.NDArray[np.float64]
PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, "fio.FioResult", "fio.FioJobSet", "pd.DataFrame"]

_LOG_RE = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw|lat|clat|slat|clat_hist)(?:\.(?P<n>\d+))?\.log$")
#: Fewest windows a job needs for its level to be fitted.
MIN_WINDOWS = 3
#: Most bins a per-I/O log may be counted in (``--bin``/``bin_s``): checked from the log's time
#: span before anything is allocated (a day at the default 0.1 s is 864,000 bins).
MAX_LOG_BINS = 10_000_000
#: Bin width for per-I/O logs when none is given, in seconds.
DEFAULT_BIN_S = 0.1


@dataclass
class DirLatency:
    """One direction's completion latency (clat) as the report or the job's logs give it: I/Os,
    mean and standard deviation (s), printed percentiles {percent: s}, json+ or clat_hist bins
    (lower_s, upper_s, counts), a per-I/O log's sample (s, in completion order), the mean's
    standard error where the source gives one, and where it came from (``source``)."""

    n: float
    mean_s: float
    std_s: float
    percentiles: Dict[float, float] = field(default_factory=dict)
    bins: Optional[Tuple[FloatArray, FloatArray, FloatArray]] = None
    iops: float = math.nan
    sample: Optional[FloatArray] = None
    mean_se: float = math.nan
    source: str = "report"

    @property
    def mean_only(self) -> bool:
        """Only the mean is known (averaged logs): the spread is not determined."""
        return not self.percentiles and self.bins is None and self.sample is None and not math.isfinite(self.std_s)


@dataclass
class JobData:
    """One fio job (its clones summed) as the fitter sees it."""

    name: str
    invocation: int
    phase: int  # phase within its invocation
    thread: int  # fio's thread number of the first clone
    clones: int = 1
    io_bytes: float = 4096.0
    read_fraction: float = 1.0
    sequential: bool = False
    rate_iops: float = math.inf  # fio's rate_iops/rate caps for all clones together (I/Os per second)
    fio_job: Optional["fio.FioJob"] = None  # the job as its job file gives it (its offered load)
    ramp_s: float = 0.0
    runtime_s: Optional[float] = None  # from the JSON or the job file
    start_s: float = 0.0  # the job's log time 0 on the capture's clock
    end_s: float = 0.0
    per_io: bool = False
    source: str = ""
    t0: FloatArray = field(default_factory=lambda: np.zeros(0))  # window starts, capture clock
    t1: FloatArray = field(default_factory=lambda: np.zeros(0))  # window ends
    iops: FloatArray = field(default_factory=lambda: np.zeros(0))
    clat_mean_s: Optional[float] = None  # JSON clat mean (all directions)
    clat_n: float = 0.0
    clat_bins: Optional[Tuple[FloatArray, FloatArray, FloatArray]] = None  # lower_s, upper_s, counts
    directions: Tuple[str, ...] = ()
    latency: Dict[str, "DirLatency"] = field(default_factory=dict)  # per direction, from the report
    summary: bool = False  # no rate log: one window at the report's mean IOPS
    measured_demand_iops: Optional[float] = None  # set by the fit for a job below a known cap
    log_options: Dict[str, str] = field(default_factory=dict)  # the job's options (log layout hints)

    def demand_iops(self, volume: "Volume") -> float:
        """I/Os per second the job (all its clones) asks of ``volume``.

        A job with ``thinktime`` (known from its job file) offers what its closed loop does,
        :meth:`ebssim.fio.FioJob.offered_load` (the one mapping, as ``ebssim fio`` predicts
        it), at most its rate caps. Any other job is taken to ask for more than the volume
        gives unless a rate cap holds it (the fit reads the volume's limits from such jobs).
        """
        if self.measured_demand_iops is not None:
            return self.measured_demand_iops
        fj = self.fio_job
        if fj is None or fj.thinktime <= 0:
            return self.rate_iops
        return fj.offered_load(volume).offered_iops * fj.numjobs

    @property
    def window_s(self) -> float:
        d = self.t1 - self.t0
        return float(np.median(d)) if d.size else math.nan


@dataclass
class Capture:
    """Every job of the inputs on one clock, in time order."""

    jobs: List[JobData]
    sources: List[str]
    notes: List[str] = field(default_factory=list)
    fio_version: Optional[str] = None

    @property
    def end_s(self) -> float:
        return max(j.end_s for j in self.jobs)


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.I)


def _size(text: Optional[str], default: float, kb_base: int = 1024) -> float:
    if text is None:
        return default
    first = str(text).split(",")[0].split(":")[0]
    # fio's normal output prints "(R) 16.0KiB-16.0KiB": the read size's lower end.
    first = re.sub(r"^\s*\([RWT]\)\s*", "", first).split("-")[0]
    m = _SIZE_RE.match(first)
    if not m:
        return default
    mult = {"": 1, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}[m.group(2).lower()]
    return float(m.group(1)) * (kb_base**mult if m.group(2) else 1)


def _from_options(job: JobData, opts: Dict[str, str]) -> None:
    """Fill a job's workload from fio JSON options (strings, only those set)."""
    rw = opts.get("rw", opts.get("readwrite", "read"))
    rw = {"readwrite": "rw", "randrw": "randrw"}.get(rw, rw)
    mix = float(opts.get("rwmixread", "50"))
    job.read_fraction = 1.0 if rw in ("read", "randread") else 0.0 if rw in ("write", "randwrite") else mix / 100
    job.sequential = rw in ("read", "write", "rw")
    bs = opts.get("bs", opts.get("blocksize"))
    job.io_bytes = _size(bs, 4096.0)
    job.clones = max(1, int(float(opts.get("numjobs", "1"))))
    rate = opts.get("rate_iops")
    job.rate_iops = float(rate.split(",")[0]) * job.clones if rate and rate.split(",")[0].isdigit() else math.inf
    job.ramp_s = float(opts.get("ramp_time", "0")) if opts.get("ramp_time", "0").isdigit() else 0.0


def _from_fio_job(job: JobData, fj: "fio.FioJob") -> None:
    job.read_fraction = fj.read_fraction
    job.sequential = fj.sequential
    job.io_bytes = fj.mean_io_size
    job.clones = fj.numjobs
    job.fio_job = fj
    job.rate_iops = fj.rate_cap_iops * fj.numjobs
    job.ramp_s = fj.ramp_time
    if fj.time_based and fj.runtime is not None:
        job.runtime_s = fj.runtime


# --------------------------------------------------------------------------------------------
# Logs
# --------------------------------------------------------------------------------------------


def _read_rate_log(path: str, fio_version: Optional[str]) -> pd.DataFrame:
    """read_log, with the fitter's rules on rows out of order (see module docstring)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = fio.read_log(path, fio_version=fio_version)
    for w in caught:
        if issubclass(w.category, fio.FioLogOrderWarning):
            df.attrs["out_of_order"] = str(w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return df


def _check_frame(df: pd.DataFrame, label: str) -> Tuple[str, str]:
    """(value column, kind) of a read_log frame; NaN or negative values are refused."""
    import pandas as pd

    kinds = {"iops": "iops", "bw_kib_s": "bw", "bw_bytes_s": "bw", "clat_ns": "clat", "lat_ns": "lat"}
    col = next((c for c in kinds if c in df.columns), "")
    if not col:
        raise ValueError(
            f"{label}: cannot tell what this log measures or in which unit: expected a read_log frame with a "
            f"column iops, bw_kib_s, bw_bytes_s, clat_ns or lat_ns; got {', '.join(map(str, df.columns))}"
        )
    kind = kinds[col]
    for c in ("time_ms", col):
        if c not in df.columns:
            raise ValueError(f"{label}: missing column {c!r}")
        v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(v) | (v < 0))
        if bad.size:
            raise ValueError(
                f"{label}: row {int(bad[0])}: {c}={float(v[int(bad[0])])!r}: expected a finite number >= 0"
            )
    return col, kind


def _round_up(x: float) -> str:
    """``x`` rounded up to 3 significant digits, as text (a bin that surely fits the limit)."""
    e = math.floor(math.log10(x)) - 2
    return f"{math.ceil(x / 10.0**e) * 10.0**e:.3g}"


def _log_windows(
    df: pd.DataFrame, label: str, window_ms: Optional[float], bin_s: Optional[float]
) -> Tuple[FloatArray, FloatArray, FloatArray, bool, Tuple[str, ...]]:
    """Windows (start_s, end_s] on the job's own clock and their mean I/Os per second."""
    import pandas as pd

    col, kind = _check_frame(df, label)
    if kind not in ("iops", "bw", "clat", "lat"):
        raise ValueError(f"{label}: a {kind} log holds no rates")
    if len(df) == 0:
        raise ValueError(f"{label}: the log is empty: too short to fit (at least {MIN_WINDOWS} windows are needed)")
    t = df["time_ms"].to_numpy(dtype=float) / 1e3
    bs = df["bs"].to_numpy(dtype=float) if "bs" in df.columns else np.zeros(len(df))
    per_io = bool(df.attrs.get("per_io", bool(np.any(bs > 0))))
    dirs = tuple(sorted(set(map(str, df["direction"])))) if "direction" in df.columns else ("read",)
    order = df.attrs.get("out_of_order")
    if kind in ("clat", "lat") and not per_io:
        raise ValueError(f"{label}: a windowed {kind} log holds latencies, not rates: give the iops or bw log")
    if per_io:
        if order is not None:
            # A few rows a little out of order are fio's (threads stamping samples); many mean logs mixed.
            m_back = re.search(r"(\d+) row", order)
            n_back = int(m_back.group(1)) if m_back else len(df)
            if n_back > max(10, 0.01 * len(df)):
                raise ValueError(
                    f"{label}: {n_back} of {len(df)} rows go back in time: logs of several jobs seem mixed in "
                    f"one file (per_job_logs=0?); write one log per job"
                )
        if kind == "bw":
            ops = np.ones(len(df))  # one row per I/O
        elif kind == "iops":
            ops = df[col].to_numpy(dtype=float)  # 1 per row
        else:
            ops = np.ones(len(df))
        width = bin_s if bin_s else DEFAULT_BIN_S
        end = float(t.max())
        need = end / width  # a float: a tiny bin must not overflow before the check
        if need > MAX_LOG_BINS:
            given = f"{width!r} s" if bin_s else f"{width!r} s (the default)"
            raise ValueError(
                f"{label}: --bin (bin_s) {given} would count this per-I/O log's {end:g} s in {need:.4g} bins, more "
                f"than the limit of {MAX_LOG_BINS:,} ({__name__}.MAX_LOG_BINS); use --bin "
                f"{_round_up(end / MAX_LOG_BINS)} or more"
            )
        nb = max(1, int(math.ceil(need - 1e-9)))
        edges = np.arange(nb + 1) * width
        idx = np.clip(np.ceil(t / width - 1e-9).astype(np.int64) - 1, 0, nb - 1)  # (k w, (k+1) w]
        counts = np.bincount(idx, weights=ops, minlength=nb)
        rates: FloatArray = np.asarray(counts, dtype=float) / width
        return np.asarray(edges[:-1], dtype=float), np.asarray(edges[1:], dtype=float), rates, True, dirs
    if order is not None:
        raise ValueError(
            f"{label}: rows go back in time ({order.split(': ', 1)[-1]}): a windowed log's times only grow, so "
            f"logs of several jobs seem mixed in one file; write one log per job"
        )
    if kind == "iops":
        rate = df[col].to_numpy(dtype=float)
    else:
        bsz = df.attrs.get("io_bytes")
        if not bsz:
            raise ValueError(f"{label}: a bandwidth log needs the job's block size to give I/Os: pass the job file")
        rate = df[col].to_numpy(dtype=float) * (1024.0 if col == "bw_kib_s" else 1.0) / float(bsz)
    # One row per window and direction: the directions' I/Os add up (the volume's limits count both).
    frame = pd.DataFrame({"t": t, "rate": rate})
    if "direction" in df.columns:
        frame["d"] = df["direction"].to_numpy()
        if frame.duplicated(["t", "d"]).any():
            first = int(np.flatnonzero(frame.duplicated(["t", "d"]).to_numpy())[0])
            raise ValueError(
                f"{label}: two rows for time {t[first] * 1e3:.0f} ms and the same direction: logs of several jobs "
                f"seem mixed in one file; write one log per job"
            )
    g = frame.groupby("t", sort=True)["rate"].sum()
    ends = g.index.to_numpy(dtype=float)
    rates = g.to_numpy(dtype=float)
    if ends.size >= 2:
        w = float(np.median(np.diff(ends)))
    else:
        w = (window_ms or 1000.0) / 1e3
    if window_ms:
        w = window_ms / 1e3
    starts = np.concatenate([[max(0.0, ends[0] - w)], ends[:-1]])
    ok = ends > starts
    return starts[ok], ends[ok], rates[ok], False, dirs


# --------------------------------------------------------------------------------------------
# Finding the files
# --------------------------------------------------------------------------------------------


def _kind_of_file(path: str) -> str:
    base = os.path.basename(path)
    if _LOG_RE.match(base):
        return "log"
    if base.endswith(".json"):
        return "json"
    if base.endswith((".fio", ".job", ".ini")):
        return "job"
    try:
        head = read_head(path, 4096, "a fio job file, JSON report or log").decode("utf-8", "replace")
    except OSError as e:
        raise ValueError(f"{path}: cannot read it: {e.strerror}") from None
    lines = [ln.strip() for ln in head.splitlines() if ln.strip() and not ln.strip().startswith((";", "#"))]
    if any(ln.startswith("{") for ln in lines[:50]):
        return "json"
    if lines and lines[0].startswith("["):
        return "job"
    raise ValueError(
        f"{path}: not a fio job file, JSON report or log: expected a '.fio' job file, fio's JSON output, or a log "
        f"named '<prefix>_<iops|bw|clat|lat>.<N>.log'"
    )


def _expand(inputs: Sequence[Source]) -> List[Source]:
    out: List[Source] = []
    for x in inputs:
        if isinstance(x, (str, os.PathLike)) and os.path.isdir(x):
            names = sorted(os.listdir(x))
            files = [os.path.join(os.fspath(x), n) for n in names if os.path.isfile(os.path.join(os.fspath(x), n))]
            picked = [p for p in files if _LOG_RE.match(os.path.basename(p)) or p.endswith((".json", ".fio", ".job"))]
            if not picked:
                raise ValueError(f"{os.fspath(x)}: the directory holds no fio job file, JSON report or log")
            out.extend(picked)
        elif isinstance(x, (str, os.PathLike)) and not os.path.exists(x):
            raise ValueError(f"{os.fspath(x)}: no such file or directory")
        else:
            out.append(x)
    return out


@dataclass
class _Invocation:
    label: str
    jobset: Optional["fio.FioJobSet"] = None
    report: Optional["fio.FioResult"] = None
    directory: str = "."
    logs: Dict[Tuple[str, int], Any] = field(default_factory=dict)  # (prefix, N) -> path or frame
    # (prefix, N) -> {kind: path or frame}: clat, lat and clat_hist logs (the jobs' latencies)
    lat_logs: Dict[Tuple[str, int], Dict[str, Any]] = field(default_factory=dict)


def load(inputs: Sequence[Source], *, bin_s: Optional[float] = None) -> Capture:
    """Read fio output and place every job on one clock (see the module docstring).

    Parameters
    ----------
    inputs : paths, :class:`ebssim.fio.FioResult`, :class:`ebssim.fio.FioJobSet` or read_log frames
        Job files, JSON/json+ reports, iops/bw logs (windowed or per-I/O), or directories holding
        them. A job file's logs are found next to it by fio's names; a JSON report is paired with
        the job file of the same base name (or of the same job names), and its logs with it.
    bin_s : float, optional
        Bin width for per-I/O logs (default 0.1 s).
    """
    import pandas as pd

    if isinstance(inputs, (str, os.PathLike, pd.DataFrame)):
        inputs = [inputs]
    items = _expand(list(inputs))
    if not items:
        raise ValueError("no input given: expected fio job files, JSON reports, logs or directories")
    jobfiles: List[Tuple[str, "fio.FioJobSet"]] = []
    reports: List[Tuple[str, "fio.FioResult"]] = []
    logs: List[Tuple[str, Any]] = []
    for x in items:
        if isinstance(x, pd.DataFrame):
            logs.append((str(x.attrs.get("source", "<DataFrame>")), x))
        elif isinstance(x, fio.FioResult):
            reports.append((x.source, x))
        elif isinstance(x, fio.FioJobSet):
            jobfiles.append((x.source, x))
        else:
            p = os.fspath(x)
            kind = _kind_of_file(p)
            if kind == "json":
                reports.append((p, fio.read_json(p)))
            elif kind == "job":
                jobfiles.append((p, fio.parse_job_file(p)))
            else:
                logs.append((p, p))

    # Pair reports with job files: same base name, else the same job names.
    invs: List[_Invocation] = []
    used = set()
    for path, rep in reports:
        inv = _Invocation(label=path, report=rep, directory=os.path.dirname(path) or ".")
        stem = os.path.splitext(os.path.basename(path))[0]
        names = tuple(rep.jobs.drop_duplicates("job")["jobname"]) if len(rep.jobs) else ()
        for i, (jp, js) in enumerate(jobfiles):
            if i in used:
                continue
            if os.path.splitext(os.path.basename(jp))[0] == stem or (
                os.path.dirname(jp) == os.path.dirname(path)
                and tuple(dict.fromkeys(js.names)) == tuple(dict.fromkeys(names))
            ):
                inv.jobset = js
                used.add(i)
                break
        invs.append(inv)
    for i, (jp, js) in enumerate(jobfiles):
        if i not in used:
            invs.append(_Invocation(label=jp, jobset=js, directory=os.path.dirname(jp) or "."))
    if not invs:
        invs.append(_Invocation(label="<logs>"))

    # Logs: by the names each invocation's jobs write, else (one invocation) every log given.
    for src, lg in logs:
        lat_kind = _latency_kind(lg)
        if isinstance(lg, pd.DataFrame):
            m = _LOG_RE.match(os.path.basename(src)) if src != "<DataFrame>" else None
            n = (
                int(m.group("n"))
                if m and m.group("n")
                else int(lg["job"].iloc[0])
                if "job" in lg.columns and len(lg)
                else 1
            )
            prefix = m.group("prefix") if m else str(lg["prefix"].iloc[0]) if "prefix" in lg.columns and len(lg) else ""
            key = (prefix, n)
        else:
            m = _LOG_RE.match(os.path.basename(src))
            assert m is not None
            if m.group("kind") not in ("iops", "bw", "clat", "lat", "clat_hist"):
                continue  # rates come from iops and bw logs, latencies from clat, lat and clat_hist logs
            key = (m.group("prefix"), int(m.group("n") or 0))
        target = _owner(invs, key, src)
        if lat_kind is not None:
            target.lat_logs.setdefault(key, {})[lat_kind] = lg
            if not (isinstance(lg, pd.DataFrame) and lat_kind != "clat_hist" and lg.attrs.get("per_io", False)):
                continue  # a per-I/O latency frame also counts the job's I/Os (as before); others do not
        prev = target.logs.get(key)
        if prev is not None and _prefer(prev) >= _prefer(lg):
            continue
        target.logs[key] = lg

    capture = Capture(jobs=[], sources=[i.label for i in invs])
    version = next((r.fio_version for _, r in reports if r.fio_version), None)
    capture.fio_version = version
    for k, inv in enumerate(invs):
        _jobs_of(inv, k, capture, bin_s)
    if not capture.jobs:
        raise ValueError(
            "no job with a rate log was found: the fitter needs each job's iops or bw log "
            "(write_iops_log / write_bw_log), next to its job file or JSON report"
        )
    _place(invs, capture)
    return capture


def _prefer(lg: Any) -> int:
    """iops logs over bw logs."""
    import pandas as pd

    if isinstance(lg, pd.DataFrame):
        return 2 if "iops" in lg.columns else 1
    m = _LOG_RE.match(os.path.basename(str(lg)))
    return 2 if m and m.group("kind") == "iops" else 1


def _latency_kind(lg: Any) -> Optional[str]:
    """``clat``, ``lat`` or ``clat_hist`` for a latency log (path or frame), else None."""
    import pandas as pd

    if isinstance(lg, pd.DataFrame):
        if {"lower_ns", "upper_ns", "count"} <= set(lg.columns):
            return "clat_hist"
        return "clat" if "clat_ns" in lg.columns else "lat" if "lat_ns" in lg.columns else None
    m = _LOG_RE.match(os.path.basename(str(lg)))
    kind = m.group("kind") if m else None
    return kind if kind in ("clat", "lat", "clat_hist") else None


def _owner(invs: List[_Invocation], key: Tuple[str, int], src: str) -> _Invocation:
    d = os.path.dirname(src) or "."
    for inv in invs:
        if inv.jobset is not None:
            for j in inv.jobset.jobs:
                for kind, names in j.log_file_names().items():  # noqa: B007
                    if kind != "slat" and f"{key[0]}_{kind}.{key[1]}.log" in names:
                        if os.path.samefile(inv.directory, d) if os.path.isdir(d) else True:
                            return inv
    same_dir = [i for i in invs if os.path.isdir(d) and os.path.isdir(i.directory) and os.path.samefile(i.directory, d)]
    if len(same_dir) == 1:
        return same_dir[0]
    if len(invs) == 1:
        return invs[0]
    raise ValueError(f"{src}: cannot tell which fio run wrote this log: give it with its job file or JSON report")


def _jobs_of(inv: _Invocation, k: int, capture: Capture, bin_s: Optional[float]) -> None:
    """The jobs of one invocation, their options and their rate windows (on their own clocks)."""
    import pandas as pd

    rep = inv.report
    entries: List[Tuple[str, int, int, JobData]] = []  # name, thread, numjobs
    cache: Dict[str, "pd.DataFrame"] = {}  # latency logs read, by path
    if inv.jobset is not None:
        for fj in inv.jobset.jobs:
            jd = JobData(name=fj.name, invocation=k, phase=fj.phase, thread=fj.thread_number, source=inv.label)
            _from_fio_job(jd, fj)
            jd.log_options = {key: "1" if v is None else str(v) for key, v in fj.options.items()}
            entries.append((fj.name, fj.thread_number, fj.numjobs, jd))
            # Logs next to the job file, by fio's names, when not given explicitly.
            for kind in ("iops", "bw"):
                for name in fj.log_file_names().get(kind, ()):
                    m = _LOG_RE.match(name)
                    if not m:
                        continue
                    key = (m.group("prefix"), int(m.group("n") or 0))
                    path = os.path.join(inv.directory, name)
                    if key not in inv.logs and os.path.isfile(path):
                        inv.logs[key] = path
                    elif key in inv.logs and kind == "iops" and _prefer(inv.logs[key]) < 2 and os.path.isfile(path):
                        inv.logs[key] = path
            for kind in ("clat", "lat", "clat_hist"):
                for name in fj.log_file_names().get(kind, ()):
                    m = _LOG_RE.match(name)
                    path = os.path.join(inv.directory, name)
                    if m and os.path.isfile(path):
                        key = (m.group("prefix"), int(m.group("n") or 0))
                        inv.lat_logs.setdefault(key, {}).setdefault(kind, path)
    elif rep is not None:
        groups = rep.jobs.drop_duplicates("job")
        thread = 1
        phase_of_group: Dict[int, int] = {}
        for _, row in groups.iterrows():
            opts = rep.options(int(row["job"]))
            jd = JobData(name=str(row["jobname"]), invocation=k, phase=0, thread=thread, source=inv.label)
            _from_options(jd, opts)
            jd.log_options = {str(key): str(v) for key, v in opts.items()}
            g = int(row["groupid"])
            phase_of_group.setdefault(g, len(phase_of_group))
            jd.phase = phase_of_group[g]
            # Without group_reporting every clone has its own jobs[] entry.
            per_entry = jd.clones if str(opts.get("group_reporting", "0")) not in ("0", "") else 1
            if per_entry == 1 and jd.clones > 1:
                jd.rate_iops /= jd.clones
                jd.clones = 1
            entries.append((jd.name, thread, per_entry, jd))
            thread += per_entry
    else:
        keys = sorted(set(inv.logs) | set(inv.lat_logs))
        # One job only (docs/fit.md): several logs, whatever their names, may be jobs that ran one
        # after another or together, and each job would be given every log's rows.
        if len(keys) > 1:
            raise ValueError(
                f"logs of {len(keys)} jobs ({', '.join(f'{p}.{n}' for p, n in keys)}) without a job file or JSON "
                f"report: cannot tell whether they ran one after another or together; give the job file or the JSON"
            )
        for p, n in keys:
            entries.append((p, n, 1, JobData(name=p, invocation=k, phase=0, thread=n, source=inv.label)))

    # JSON figures: runtime, latency.
    for name, thread, numjobs, jd in entries:
        if rep is not None and len(rep.jobs):
            rows = rep.jobs[rep.jobs["jobname"] == name]
            if len(rows):
                jr = rows["job_runtime_ms"].to_numpy(dtype=float) if "job_runtime_ms" in rows else np.array([np.nan])
                rt = rows["runtime_ms"].to_numpy(dtype=float)
                jrt = float(np.nanmax(jr)) if np.isfinite(jr).any() else float(np.nanmax(rt))
                jd.runtime_s = jrt / 1e3
                nios = rows["total_ios"].to_numpy(dtype=float)
                if "clat_n" in rows:
                    cn = rows["clat_n"].to_numpy(dtype=float)
                    nios = np.where(np.isfinite(cn), cn, nios)
                mean = rows["clat_mean_ns"].to_numpy(dtype=float)
                ok = np.isfinite(mean) & (nios > 0)
                if ok.any():
                    jd.clat_mean_s = float(np.sum(mean[ok] * nios[ok]) / np.sum(nios[ok])) / 1e9
                    jd.clat_n = float(np.sum(nios[ok]))
                _direction_latency(jd, rows, rep.bins)
                b = rep.bins
                if len(b):
                    sel = b[(b["jobname"] == name) & (b["metric"] == "clat")]
                    if len(sel):
                        agg = sel.groupby(["lower_ns", "upper_ns"], as_index=False)["count"].sum()
                        jd.clat_bins = (
                            agg["lower_ns"].to_numpy(dtype=float) / 1e9,
                            agg["upper_ns"].to_numpy(dtype=float) / 1e9,
                            agg["count"].to_numpy(dtype=float),
                        )
        # Rate logs of the job's clones: summed.
        frames = []
        for n in range(thread, thread + max(1, numjobs)):
            for key, lg in inv.logs.items():
                if key[1] == n or (key[1] == 0 and numjobs >= 1 and n == thread and len(entries) == 1):
                    frames.append((key, lg))
        lat_logs = [
            (key, kinds)
            for n in range(thread, thread + max(1, numjobs))
            for key, kinds in inv.lat_logs.items()
            if key[1] == n or (key[1] == 0 and n == thread and len(entries) == 1)
        ]
        if lat_logs:
            _log_latency(jd, lat_logs, capture, cache)
        if not frames:
            # No iops or bw log: per-I/O clat (else lat) logs count the job's I/Os as well.
            for key, kinds in lat_logs:
                for kind in ("clat", "lat"):
                    df = _lat_frame(kinds.get(kind), jd, capture, cache)
                    if df is not None and bool(df.attrs.get("per_io")):
                        frames.append((key, df))
                        break
        if not frames:
            if rep is not None and jd.latency and jd.runtime_s:
                # A report without rate logs: the job's mean IOPS over its run, one window.
                jd.summary = True
                jd.directions = tuple(sorted(jd.latency))
                run = float(jd.runtime_s)
                jd.t0, jd.t1 = np.array([0.0]), np.array([run])
                jd.iops = np.array([sum(d.iops for d in jd.latency.values())])
                capture.jobs.append(jd)
            continue
        total: Optional[Tuple[FloatArray, FloatArray, FloatArray]] = None
        for _key, lg in frames:
            if isinstance(lg, pd.DataFrame):
                df = lg
                label = str(lg.attrs.get("source", "<DataFrame>"))
            else:
                df = _read_rate_log(lg, capture.fio_version)
                label = lg
            df.attrs["io_bytes"] = jd.io_bytes
            win_ms = None
            if inv.jobset is not None:
                own = next((j for j in inv.jobset.jobs if j.thread_number == thread), None)
                if own is not None and own.log_avg_msec > 0:
                    win_ms = float(own.log_avg_msec)
            t0, t1, r, per_io, dirs = _log_windows(df, label, win_ms, bin_s)
            jd.per_io = per_io
            jd.directions = tuple(sorted(set(jd.directions) | set(dirs)))
            if total is None:
                total = (t0, t1, r)
            else:
                total = (total[0], total[1], total[2] + _rebin(t0, t1, r, total[0], total[1]))
            jd.source = label if jd.source == inv.label and len(frames) == 1 else jd.source
        assert total is not None
        want = {"read"} if jd.read_fraction == 1 else {"write"} if jd.read_fraction == 0 else {"read", "write"}
        extra = set(jd.directions) - want
        if extra and (inv.jobset is not None or rep is not None):
            raise ValueError(
                f"{jd.source}: the log of job {jd.name!r} has {'/'.join(sorted(extra))} rows but the job only does "
                f"{'/'.join(sorted(want))}s: logs of different jobs mixed?"
            )
        jd.t0, jd.t1, jd.iops = total
        if jd.t0.size < MIN_WINDOWS and not jd.summary:
            raise ValueError(
                f"{jd.source}: job {jd.name!r} has {jd.t0.size} log window(s): too short to fit (at least "
                f"{MIN_WINDOWS} are needed; run longer or log more often with a smaller log_avg_msec)"
            )
        capture.jobs.append(jd)


# --------------------------------------------------------------------------------------------
# Latency logs
# --------------------------------------------------------------------------------------------


def _rank(d: DirLatency) -> int:
    """How much a direction's latency says: every I/O (per-I/O log) > the report's percentiles or
    json+ bins > clat_hist bins > the report's mean and standard deviation > window means."""
    if d.sample is not None:
        return 4
    if d.source == "report" and (d.percentiles or d.bins is not None):
        return 3
    if d.bins is not None:
        return 2
    return 1 if math.isfinite(d.std_s) else 0


def _quiet_read(read: Any, path: str, **kw: Any) -> "pd.DataFrame":
    """A reader's frame; fio's few rows out of order are sorted (FioLogOrderWarning) and not reported:
    a latency sample does not depend on the order of rows stamped in the same millisecond."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read(path, **kw)
    for w in caught:
        if not issubclass(w.category, fio.FioLogOrderWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    out: "pd.DataFrame" = df
    return out


def _lat_frame(lg: Any, jd: JobData, capture: Capture, cache: Dict[str, "pd.DataFrame"]) -> Optional["pd.DataFrame"]:
    """A clat or lat log as read_log's frame (read once per path)."""
    import pandas as pd

    if lg is None or isinstance(lg, pd.DataFrame):
        return lg
    path = str(lg)
    if path not in cache:
        cache[path] = _quiet_read(fio.read_log, path, fio_version=capture.fio_version, options=jd.log_options or None)
    return cache[path]


def _hist_frame(lg: Any, cache: Dict[str, "pd.DataFrame"]) -> Optional["pd.DataFrame"]:
    import pandas as pd

    if lg is None or isinstance(lg, pd.DataFrame):
        return lg
    path = str(lg)
    if path not in cache:
        cache[path] = _quiet_read(fio.read_hist_log, path)
    return cache[path]


def _log_latency(
    jd: JobData, lat_logs: Sequence[Tuple[Tuple[str, int], Dict[str, Any]]], capture: Capture, cache: Dict[str, Any]
) -> None:
    """Each direction's latency from the job's clat/lat/clat_hist logs (its clones pooled), where they
    say more than the report (:func:`_rank`)."""
    import pandas as pd

    found: Dict[str, DirLatency] = {}
    for kind in ("clat", "lat"):  # clat as fio's percentiles; lat (slat + clat) only without it
        frames = [_lat_frame(kinds.get(kind), jd, capture, cache) for _, kinds in lat_logs]
        given = [f for f in frames if f is not None and len(f)]
        if not given:
            continue
        df = pd.concat(given, ignore_index=True)
        col = f"{kind}_ns"
        label = ", ".join(sorted({str(f.attrs.get("source", "<DataFrame>")) for f in given}))
        if all(bool(f.attrs.get("per_io")) for f in given):
            df = df.sort_values("time_ms", kind="stable")  # the clones' I/Os in completion order
            for d, grp in df.groupby("direction"):
                x = grp[col].to_numpy(dtype=float) / 1e9
                if x.size >= 2 and str(d) not in found:
                    sd = float(np.std(x, ddof=1))
                    found[str(d)] = DirLatency(
                        float(x.size), float(np.mean(x)), sd, sample=x, source=f"per-I/O {kind} log"
                    )
            continue
        opts = {k.lower(): v.strip().lower() for k, v in jd.log_options.items()}
        maxima = opts.get("log_max_value") in ("1", "true", "yes", "on") or opts.get("log_window_value") in ("max", "1")
        if f"{kind}_max_ns" not in df.columns and maxima:
            capture.notes.append(
                f"{label}: an averaged {kind} log of window maxima (log_max_value): no mean latency is taken from it"
            )
            continue
        for d, grp in df.groupby("direction"):
            v = grp[col].to_numpy(dtype=float) / 1e9
            if not v.size or str(d) in found:
                continue
            # The windows' means: equal windows, so at a steady rate the I/O-weighted mean; their
            # scatter over the square root of their number is the mean's standard error.
            se = float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
            rep = jd.latency.get(str(d))
            n = rep.n if rep is not None else float(v.size)
            found[str(d)] = DirLatency(n, float(np.mean(v)), math.nan, mean_se=se, source=f"averaged {kind} log")
    hists = [_hist_frame(kinds.get("clat_hist"), cache) for _, kinds in lat_logs]
    hgiven = [h for h in hists if h is not None and len(h)]
    if hgiven:
        h = pd.concat(hgiven, ignore_index=True)
        for d, grp in h.groupby("direction"):
            agg = grp.groupby(["lower_ns", "upper_ns"], as_index=False).agg(
                count=("count", "sum"), latency_ns=("latency_ns", "first")
            )
            c = agg["count"].to_numpy(dtype=float)
            tot = float(c.sum())
            if tot <= 0:
                continue
            val = agg["latency_ns"].to_numpy(dtype=float) / 1e9
            mean = float(np.sum(c * val) / tot)
            sd = float(math.sqrt(np.sum(c * (val - mean) ** 2) / max(tot - 1, 1)))
            # The intervals' means, weighted by their I/Os (a ratio estimator's standard error).
            per = grp.assign(w=grp["count"] * grp["latency_ns"] / 1e9).groupby("time_ms")[["w", "count"]].sum()
            ci = per["count"].to_numpy(dtype=float)
            mi = per["w"].to_numpy(dtype=float) / np.maximum(ci, 1)
            se = float(math.sqrt(np.sum(ci**2 * (mi - mean) ** 2)) / tot) if ci.size > 1 else math.nan
            cand = DirLatency(
                tot,
                mean,
                sd,
                bins=(agg["lower_ns"].to_numpy(dtype=float) / 1e9, agg["upper_ns"].to_numpy(dtype=float) / 1e9, c),
                mean_se=se,
                source="clat_hist log",
            )
            if str(d) not in found or _rank(cand) > _rank(found[str(d)]):
                found[str(d)] = cand
    samples = {d: x.n for d, x in found.items() if x.sample is not None}
    if jd.fio_job is None and not jd.log_options and samples:
        # Logs alone: the per-I/O log's rows give the job's share of reads (and its directions).
        jd.read_fraction = samples.get("read", 0.0) / sum(samples.values())
    for d, cand in found.items():
        have = jd.latency.get(d)
        if have is None or _rank(cand) > _rank(have):
            jd.latency[d] = cand
    dirs = [x for x in jd.latency.values() if x.n > 0]
    if jd.clat_mean_s is None and dirs:
        jd.clat_n = float(sum(x.n for x in dirs))
        jd.clat_mean_s = float(sum(x.mean_s * x.n for x in dirs) / jd.clat_n)
    if jd.clat_bins is None:
        binned = [x.bins for x in dirs if x.bins is not None]
        if len(binned) == 1:
            jd.clat_bins = binned[0]


def _direction_latency(jd: JobData, rows: "pd.DataFrame", bins: "pd.DataFrame") -> None:
    """Each direction's clat figures of a job's report rows (clones' rows pooled by their I/Os)."""
    pcols = [c for c in rows.columns if c.startswith("clat_p") and c.endswith("_ns")]
    for d, grp in rows.groupby("direction"):
        n = grp["total_ios"].to_numpy(dtype=float) if "total_ios" in grp else np.full(len(grp), np.nan)
        if "clat_n" in grp:
            cn = grp["clat_n"].to_numpy(dtype=float)
            n = np.where(np.isfinite(cn), cn, n)
        mean = grp["clat_mean_ns"].to_numpy(dtype=float) / 1e9
        sd = grp["clat_stddev_ns"].to_numpy(dtype=float) / 1e9 if "clat_stddev_ns" in grp else np.full(n.shape, np.nan)
        ok = np.isfinite(mean) & (n > 0)
        if not ok.any():
            continue
        tot = float(np.sum(n[ok]))
        m = float(np.sum(mean[ok] * n[ok]) / tot)
        var = float(np.sum(n[ok] * (sd[ok] ** 2 + (mean[ok] - m) ** 2)) / tot)
        pct: Dict[float, float] = {}
        if int(ok.sum()) == 1:  # a clone's percentiles cannot be pooled: only a job's own
            row = grp[ok].iloc[0]
            for c in pcols:
                v = float(row[c])
                if math.isfinite(v) and v > 0:
                    pct[float(c[len("clat_p") : -len("_ns")].replace("_", "."))] = v / 1e9
        b = None
        if len(bins):
            sel = bins[(bins["jobname"] == jd.name) & (bins["metric"] == "clat")]
            if "direction" in sel:
                sel = sel[sel["direction"] == d]
            if len(sel):
                agg = sel.groupby(["lower_ns", "upper_ns"], as_index=False)["count"].sum()
                b = (
                    agg["lower_ns"].to_numpy(dtype=float) / 1e9,
                    agg["upper_ns"].to_numpy(dtype=float) / 1e9,
                    agg["count"].to_numpy(dtype=float),
                )
        iops = float(np.nansum(grp["iops"].to_numpy(dtype=float))) if "iops" in grp else math.nan
        jd.latency[str(d)] = DirLatency(tot, m, math.sqrt(var) if math.isfinite(var) else math.nan, pct, b, iops)


def _rebin(t0: FloatArray, t1: FloatArray, r: FloatArray, s0: FloatArray, s1: FloatArray) -> FloatArray:
    """Mean rate over windows (s0, s1] of a rate given over windows (t0, t1] (time-weighted)."""
    edges = np.concatenate([[t0[0]], t1])
    cum = np.concatenate([[0.0], np.cumsum(r * (t1 - t0))])
    c0 = np.interp(s0, edges, cum)
    c1 = np.interp(s1, edges, cum)
    out: FloatArray = (c1 - c0) / (s1 - s0)
    return out


def _place(invs: List[_Invocation], capture: Capture) -> None:
    """Move every job's windows onto the capture's clock (module docstring)."""
    t = 0.0
    starts: List[float] = []
    durations: List[float] = []
    by_inv: Dict[int, List[JobData]] = {}
    for j in capture.jobs:
        by_inv.setdefault(j.invocation, []).append(j)
    for k in range(len(invs)):
        jobs = by_inv.get(k, [])
        phase_t = 0.0
        for ph in sorted({j.phase for j in jobs}):
            members = [j for j in jobs if j.phase == ph]
            length = 0.0
            for j in members:
                run = j.runtime_s if j.runtime_s is not None else float(j.t1.max())
                run = max(run, float(j.t1.max()) if j.per_io else run)
                j.start_s = phase_t + j.ramp_s
                j.end_s = j.start_s + run
                length = max(length, j.ramp_s + run)
            phase_t += length
        durations.append(phase_t)
    stamps = [inv.report.raw.get("timestamp_ms") if inv.report is not None else None for inv in invs]
    use_stamps = len(invs) > 1 and all(isinstance(s, (int, float)) for s in stamps)
    for k in range(len(invs)):
        if k == 0:
            start = 0.0
        elif use_stamps:
            s_k = float(stamps[k]) / 1e3 - durations[k]  # type: ignore[arg-type]
            s_0 = float(stamps[0]) / 1e3 - durations[0]  # type: ignore[arg-type]
            start = max(s_k - s_0, starts[-1] + durations[k - 1])
        else:
            start = starts[-1] + durations[k - 1]
        starts.append(start)
        for j in by_inv.get(k, []):
            j.start_s += start
            j.end_s += start
            j.t0 = j.t0 + j.start_s
            j.t1 = j.t1 + j.start_s
            # Windows past the job's end (a late stamp) are cut at it.
            j.t1 = np.minimum(j.t1, max(j.end_s, float(j.t0.max()) + 1e-6))
            ok = j.t1 > j.t0
            j.t0, j.t1, j.iops = j.t0[ok], j.t1[ok], j.iops[ok]
    if len(invs) > 1 and not use_stamps:
        capture.notes.append(
            "fio runs placed back to back in the order given (not every JSON report has a timestamp_ms)"
        )
    capture.jobs.sort(key=lambda j: (j.start_s, j.thread))
    del t
