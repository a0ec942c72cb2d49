"""fio's normal (text) output, read into the shape of its JSON: :func:`read_normal`.

fio prints its normal report for people, and people paste it: into files after the shell command
that made it, into issues and Markdown pages, several runs one after the other. :func:`read_normal`
finds every run in such a text and gives each as a :class:`~ebssim.fio.FioResult` with the rows and
columns :func:`~ebssim.fio.read_json` gives for fio's JSON (latency in ns whatever unit fio chose,
bytes and bytes per second whatever suffix it printed), so that a pasted report, a JSON report and
a prediction (:meth:`~ebssim.fio.FioPrediction.to_pandas`) line up column by column.

Each run is turned into the JSON document fio would have written (fio 3.x keys, latency in ns)
and read by :func:`~ebssim.fio.parse_json`, which checks every number as it does for JSON.

Format notes, checked against fio 2.x output (tests/data/real-ebs/01), fio 3.32 (…/03) and fio
3.33 normal and JSON output of one run (tests/data/fio/20):

* fio 2.x: ``read : io=21045MB, bw=119680KB/s, iops=7479, runt=180060msec``. Its ``KB``/``MB``/``GB``
  are 1,024-based (fio's default ``kb_base=1024``). Its ``num2str`` prints after the point the
  leading digits of the *remainder* in the next smaller unit, not a decimal fraction
  (``io=8657.1MB`` is 8,657 MiB and 928 KiB: 928 -> 93 -> 10 -> 1; ``max=1524.4K`` usec is 1,524
  thousand and some), so a value with a point and a unit is read to its whole units.
* fio 3.x: ``read: IOPS=37.1k, BW=580MiB/s (608MB/s)(102GiB/180001msec)``: ``KiB``/``MiB`` are
  1,024-based, ``kB``/``MB`` in the parentheses 1,000-based; IOPS and latency minima and maxima
  above six digits carry ``k``/``M``/``G`` (1,000-based: ``max=10842k`` nsec).
* ``iops`` is ``1000 * total_ios / runtime_ms``, fio's own formula for the figure it prints and
  for its JSON, with ``total_ios`` from the ``issued`` line; without that line, the printed figure.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from ._files import PathLike, read_text
from .report import FioResult, parse_json

__all__ = ["MAX_NORMAL_BYTES", "read_normal"]

#: Largest text :func:`read_normal` reads (a normal report is a few KiB per job).
MAX_NORMAL_BYTES = 256 << 20

_DIRECTIONS = ("read", "write", "trim", "mixed")
_SPLIT = ("read", "write", "trim")
_LAT_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6, "sec": 1e9}
_SUFFIX_1000 = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_IEC = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}
_SI = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15}
# fio 2.x: KB, MB, ... are 1,024-based (kb_base=1024, its default); KiB appears in late 2.x.
_FIO2 = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50, **_IEC}

_NUM = r"[0-9]+(?:\.[0-9]+)?"
_JOB_RE = re.compile(
    r"(?P<name>\S.*?): \(groupid=(?P<gid>[0-9]+), jobs=(?P<jobs>[0-9]+)\): "
    r"err=\s*(?P<err>-?[0-9]+)(?:\s*\([^)]*\))?(?:: pid=(?P<pid>[0-9]+))?(?::\s*(?P<time>.*))?"
)
_OPTS_RE = re.compile(
    r"(?P<name>\S.*?): \(g=(?P<gid>[0-9]+)\): rw=(?P<rw>[^,]+), bs=(?P<bs>.+?), "
    r"ioengine=(?P<engine>[^,]+), iodepth=(?P<depth>[0-9]+)"
)
_VERSION_LINE_RE = re.compile(r"fio-[0-9]+\.[0-9]+\S*")
_HEADER_MISC_RE = re.compile(
    r"Starting [0-9]+ (?:process|processes|thread|threads)(?: and [0-9]+ (?:process|processes|thread|threads))?"
    r"|Jobs: [0-9]+ .*|\S.*: Laying out IO file.*|\.\.\.|note: .*|fio: .*"
)
_DIR2_RE = re.compile(
    rf"(?P<dir>read|write|trim|mixed)\s*:\s*io=(?P<io>{_NUM})(?P<iou>[KMGTP]?i?B),\s*"
    rf"bw=(?P<bw>{_NUM})(?P<bwu>[KMGTP]?i?B)/s,\s*iops=(?P<iops>{_NUM}[kKMG]?),\s*runt=\s*(?P<runt>[0-9]+)\s*msec"
)
_DIR3_RE = re.compile(
    rf"(?P<dir>read|write|trim|mixed)\s*:\s*IOPS=(?P<iops>{_NUM}[kKMGTP]?)\s*,\s*"
    rf"BW=(?P<bw>{_NUM})(?P<bwu>[kKMGTP]?i?B)/s(?:\s*\([^)]*\))?\s*"
    rf"\((?P<io>{_NUM})(?P<iou>[kKMGTP]?i?B)/(?P<runt>[0-9]+)\s*msec\)(?:\s*;.*)?"
)
_DIR_START_RE = re.compile(r"(?:read|write|trim|mixed)\s*:")
_LAT_RE = re.compile(
    r"(?P<m>slat|clat|lat|sync)\s*\((?P<unit>nsec|usec|msec|sec)\)\s*:\s*"
    r"min=\s*(?P<min>\S+?),\s*max=\s*(?P<max>\S+?),\s*avg=\s*(?P<avg>\S+?),\s*stdev=\s*(?P<std>[^,\s]+)(?:,.*)?"
)
_LAT_DIST_RE = re.compile(r"lat\s*\((?:nsec|usec|msec|sec)\)\s*:\s*[<>=]*[0-9]+=")
_PCT_HEAD_RE = re.compile(r"(?P<m>slat|clat|lat|sync)\s+percentiles\s*\((?P<unit>nsec|usec|msec|sec)\)\s*:")
_PRIO_RE = re.compile(r"(?:[cs]?lat)\s+(?:high/low\s+)?prio\b.*")
_LAT_START_RE = re.compile(r"(?:slat|clat|lat|sync)\s*(?:\(|percentiles)")
_PCT_ITEM_RE = re.compile(r"\s*(?P<p>[0-9]+(?:\.[0-9]+)?)th=\[\s*(?P<v>[0-9]+)\s*\]\s*(?:,|$)")
_BW_WIN_RE = re.compile(r"bw\s*\(\s*(?P<unit>[kKMGT]?i?B)\s*/s\s*\)\s*:\s*(?P<kv>min=.*)")
_IOPS_WIN_RE = re.compile(r"iops\s*:\s*(?P<kv>min=.*)")
_CPU_RE = re.compile(
    r"cpu\s*:\s*usr=(?P<usr>[0-9.]+)%,\s*sys=(?P<sys>[0-9.]+)%,\s*ctx=(?P<ctx>[0-9]+),\s*"
    r"majf=(?P<majf>[0-9]+),\s*minf=(?P<minf>[0-9]+)"
)
_ISSUED3_RE = re.compile(
    r"issued rwts?\s*:\s*total=(?P<t>[0-9,]+)\s+short=(?P<s>[0-9,]+)\s+drop(?:ped)?=(?P<d>[0-9,]+)"
)
_ISSUED2_RE = re.compile(  # fio 2.x: total=r=0/w=554106/d=0, short=r=0/w=0/d=0, drop=r=0/w=0/d=0
    r"issued\s*:\s*total=(?P<t>r=[0-9]+/w=[0-9]+(?:/d=[0-9]+)?),\s*short=(?P<s>r=[0-9]+/w=[0-9]+(?:/d=[0-9]+)?),"
    r"\s*drop=(?P<d>r=[0-9]+/w=[0-9]+(?:/d=[0-9]+)?)"
)
_JOB_MISC_RE = re.compile(r"(?:IO depths|submit|complete|latency|fsync/fdatasync/sync_file_range)\s*:.*")
_GENERIC_STAT_RE = re.compile(r"[A-Za-z][A-Za-z0-9 _/()-]*:\s*[A-Za-z_]+=\S.*")
_STATUS_RE = re.compile(r"Run status group (?P<gid>[0-9]+) \(all jobs\):")
_GROUP_LINE_RE = re.compile(r"(?:READ|WRITE|TRIM|MIXED)\s*:\s*(?:io|bw)=.*")
_DISK_HEAD_RE = re.compile(r"Disk stats \(read/write\):")
_DISK_RE = re.compile(r"(?P<name>[^\s:]+):\s*(?P<kv>ios=.*)")
_DISK_KEYS = {
    "ios": ("read_ios", "write_ios"),
    "sectors": ("read_sectors", "write_sectors"),
    "merge": ("read_merges", "write_merges"),
    "ticks": ("read_ticks", "write_ticks"),
    "in_queue": ("in_queue",),
    "util": ("util",),
    # md devices: their members' sums, under fio's JSON names (aggr_write_merge is fio's spelling)
    "aggrios": ("aggr_read_ios", "aggr_write_ios"),
    "aggrmerge": ("aggr_read_merges", "aggr_write_merge"),
    "aggrticks": ("aggr_read_ticks", "aggr_write_ticks"),
    "aggrin_queue": ("aggr_in_queue",),
    "aggrutil": ("aggr_util",),
}
_MARK_RE = re.compile(r"(?<![^\s,])[*_]+|[*_]+(?=[\s,]|$)")


class _Bad(Exception):
    """A line that looks like fio's and cannot be read (turned into a ValueError naming it)."""


def _unmark(s: str) -> str:
    """Markdown emphasis taken off a pasted line (``**write: IOPS=40.1k**``, ``**_write:…_** ,``).

    Only lines holding ``**`` or ``__`` are touched, so that job names with underscores stay whole.
    """
    if "**" not in s and "__" not in s:
        return s
    return _MARK_RE.sub("", s).strip()


def _number(text: str, what: str, fio2: bool = False) -> float:
    """``12``, ``398.59``, ``37.1k``, ``10842k`` (fio's 1,000-based suffixes) -> float; fio 2.x's
    ``1524.4K`` is 1,524 thousand (see the module's notes)."""
    m = re.fullmatch(rf"({_NUM})([kKMGTP]?)", text)
    if m is None:
        raise _Bad(f"{what} is {text!r}: expected a number such as 398.59, 37.1k or 10842k")
    number = float(m.group(1))
    if fio2 and m.group(2):
        number = math.floor(number)  # fio 2.x's num2str: the digits after the point are not a fraction
    return number * _SUFFIX_1000[m.group(2)]


def _bytes(value: str, unit: str, fio2: bool, what: str) -> float:
    """A size fio printed -> bytes (see the module's notes for fio 2.x's digits after the point)."""
    table = _FIO2 if fio2 else (_IEC if "i" in unit or unit == "B" else _SI)
    if unit not in table:
        raise _Bad(f"{what} has the unit {unit!r}: expected one of {', '.join(table)}")
    number = float(value)
    if fio2 and "." in value and table[unit] > 1:
        number = math.floor(number)  # fio 2.x's num2str: the digits after the point are not a fraction
    return number * table[unit]


def _pairs(kv: str, what: str) -> Dict[str, str]:
    """``min=1, max=2, per=100.00%, avg=3`` -> {"min": "1", ...}."""
    out: Dict[str, str] = {}
    for item in kv.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise _Bad(f"{what}: {item!r} is not key=value")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _slashed(value: str, n: int, what: str) -> List[int]:
    """``0/554691``, ``0,7211815,0,0`` or fio 2.x's ``r=0/w=554106/d=0`` -> the counts."""
    parts = re.sub(r"\b[rwd]=", "", value).replace(",", "/").split("/")
    if not 2 <= len(parts) <= n or not all(p.isdigit() for p in parts):
        raise _Bad(f"{what} is {value!r}: expected counts separated by '/' or ','")
    return [int(p) for p in parts]


@dataclass
class _Direction:
    line: int
    obj: Dict[str, Any]


@dataclass
class _Job:
    line: int
    name: str
    groupid: int
    error: int
    directions: Dict[str, _Direction] = field(default_factory=dict)
    current: Optional[str] = None
    fio2: bool = False  # the job's direction lines are fio 2.x's
    extra: Dict[str, Any] = field(default_factory=dict)
    issued: Optional[Dict[str, List[int]]] = None


@dataclass
class _Run:
    first: int
    version: Optional[str] = None
    options: Dict[str, Dict[str, str]] = field(default_factory=dict)
    preamble: List[str] = field(default_factory=list)
    jobs: List[_Job] = field(default_factory=list)
    status_groups: List[int] = field(default_factory=list)
    disks: List[Dict[str, Any]] = field(default_factory=list)
    last: int = 0
    ended: bool = False


class _Reader:
    """The line-by-line state machine behind :func:`read_normal`."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.runs: List[_Run] = []
        self.run: Optional[_Run] = None  # the run whose jobs are being read
        self.pending: Optional[_Run] = None  # header lines (version, options) before its first job
        self.preamble: List[str] = []
        self.state = "free"  # free | job | pct | status | disk
        self.pct: Optional[Tuple[Dict[str, Any], int, float, int]] = None  # (dict, header line, scale, count)

    # -- runs ------------------------------------------------------------------------------------
    def _header(self, no: int) -> _Run:
        if self.run is not None and self.run.jobs:
            self._finish()
        if self.pending is None:
            self.pending = _Run(first=no)
        return self.pending

    def _finish(self) -> None:
        self._end_pct()
        run = self.run
        if run is None:
            return
        for job in run.jobs:
            if not job.directions:
                raise ValueError(
                    f"{self.label}, line {job.line}: fio job {job.name!r} has no read, write, trim or mixed "
                    f"statistics line after its header (was the output cut?)"
                )
        self.runs.append(run)
        self.run = None
        self.state = "free"

    def _start_job(self, m: "re.Match[str]", no: int) -> None:
        gid = int(m.group("gid"))
        run = self.run
        if run is not None and (run.ended or (run.status_groups and gid <= max(run.status_groups))):
            self._finish()  # a job of a group already summed up: the next run
            run = None
        if run is None:
            run = self.pending or _Run(first=no)
            self.pending = None
            run.preamble = self.preamble
            self.preamble = []
            self.run = run
        run.jobs.append(_Job(line=no, name=m.group("name"), groupid=gid, error=int(m.group("err"))))
        self.state = "job"

    # -- percentiles -----------------------------------------------------------------------------
    def _end_pct(self) -> None:
        if self.pct is not None:
            _, head, _, count = self.pct
            self.pct = None
            if count == 0:
                raise ValueError(
                    f"{self.label}, line {head}: a percentiles header with no '|' lines of values after it"
                )
            self.state = "job"

    def _pct_line(self, s: str, no: int) -> None:
        assert self.pct is not None
        target, head, scale, count = self.pct
        body = s[1:]
        pos = 0
        found = 0
        while pos < len(body.rstrip()):
            m = _PCT_ITEM_RE.match(body, pos)
            if m is None:
                raise _Bad(f"percentile values: expected entries like ' 99.00th=[ 1319]', found {body[pos:][:40]!r}")
            p = float(m.group("p"))
            if not 0.0 < p <= 100.0:
                raise _Bad(f"percentile {m.group('p')} is not between 0 and 100")
            target[f"{p:.6f}"] = int(m.group("v")) * scale
            pos = m.end()
            found += 1
        if not found:
            raise _Bad("a '|' line without percentile values")
        self.pct = (target, head, scale, count + found)

    # -- one line --------------------------------------------------------------------------------
    def line(self, raw: str, no: int) -> None:
        s = _unmark(raw.strip())
        before = len(self.preamble)
        try:
            self._line(s, no, raw.strip())
        except _Bad as exc:
            raise ValueError(f"{self.label}, line {no}: {exc}: {raw.strip()[:120]!r}") from None
        if s and self.run is not None and len(self.preamble) == before:
            self.run.last = no  # a line of the run's (not one before the next)

    def _line(self, s: str, no: int, text: str) -> None:
        if self.state == "pct":
            if s.startswith("|"):
                self._pct_line(s, no)
                return
            self._end_pct()
        m = _JOB_RE.fullmatch(s)
        if m is not None:
            self._end_pct()
            self._start_job(m, no)
            return
        m = _OPTS_RE.fullmatch(s)
        if m is not None:
            self._header(no).options[m.group("name")] = {
                "rw": m.group("rw"), "bs": m.group("bs"), "ioengine": m.group("engine"), "iodepth": m.group("depth"),
            }  # fmt: skip
            return
        if _VERSION_LINE_RE.fullmatch(s):
            self._header(no).version = s
            return
        if _HEADER_MISC_RE.fullmatch(s):
            self._header(no)
            return
        if not s:
            if self.state in ("job", "disk"):
                if self.state == "disk" and self.run is not None:
                    self.run.ended = True
                self.state = "free"
            return
        if self.state == "job" and self._job_line(s, no):
            return
        run = self.run
        if run is not None:
            m = _STATUS_RE.fullmatch(s)
            if m is not None:
                run.status_groups.append(int(m.group("gid")))
                self.state = "status"
                return
            if self.state == "status" and _GROUP_LINE_RE.fullmatch(s):
                return
            if _DISK_HEAD_RE.fullmatch(s) and not run.ended:
                self.state = "disk"
                return
            if self.state == "disk":
                m = _DISK_RE.fullmatch(s)
                if m is not None:
                    run.disks.append(self._disk(m, no))
                    return
                if "ios=" in s:
                    raise _Bad("a Disk stats line that cannot be read: expected 'NAME: ios=R/W, merge=R/W, ...'")
        # Anything else is not fio's: the run (if any) ended before it.
        if run is not None:
            if self.state == "job" and (_DIR_START_RE.match(s) or _LAT_START_RE.match(s)):
                raise _Bad("a fio statistics line that cannot be read")
            self._finish()
        self.state = "free"
        self.preamble.append(text)

    def _job_line(self, s: str, no: int) -> bool:
        """A line of the current job block; False when it is not one."""
        assert self.run is not None
        job = self.run.jobs[-1]
        if _DIR_START_RE.match(s):
            m2 = _DIR2_RE.fullmatch(s)
            m3 = _DIR3_RE.fullmatch(s) if m2 is None else None
            if m2 is None and m3 is None:
                raise _Bad(
                    "a direction line that cannot be read: expected fio 3.x 'read: IOPS=…, BW=…/s (…)(…/…msec)' "
                    "or fio 2.x 'read : io=…, bw=…/s, iops=…, runt=…msec'"
                )
            m = m2 or m3
            assert m is not None
            ddir = m.group("dir")
            if ddir in job.directions:
                raise _Bad(
                    f"a second {ddir!r} line in job {job.name!r} (its first is line {job.directions[ddir].line})"
                )
            fio2 = job.fio2 = m2 is not None
            io = _bytes(m.group("io"), m.group("iou"), fio2, "io")
            bw = _bytes(m.group("bw"), m.group("bwu"), fio2, "bw")
            job.directions[ddir] = _Direction(
                no,
                {
                    "io_bytes": int(io),
                    "io_kbytes": int(io) // 1024,
                    "bw_bytes": int(bw),
                    "bw": int(bw) // 1024,
                    "iops": _number(m.group("iops"), "iops", fio2),
                    "runtime": int(m.group("runt")),
                },
            )
            job.current = ddir
            return True
        if _LAT_START_RE.match(s) or _PRIO_RE.fullmatch(s):
            return self._latency_line(s, job, no)
        m = _BW_WIN_RE.fullmatch(s)
        if m is not None:
            obj = self._direction(job, "bw")
            unit = m.group("unit")
            scale = (_FIO2 if unit.upper() == unit else {**_IEC, "kB": 1000, "MB": 10**6, "GB": 10**9}).get(unit)
            if scale is None:
                raise _Bad(f"bw window statistics in {unit!r}/s: expected KiB/s, MiB/s, ...")
            kv = _pairs(m.group("kv"), "bw")
            for key, col in (("min", "bw_min"), ("max", "bw_max"), ("avg", "bw_mean"), ("stdev", "bw_dev")):
                if key in kv:
                    obj[col] = _number(kv[key], f"bw {key}") * scale / 1024
            if "per" in kv:
                obj["bw_agg"] = _number(kv["per"].rstrip("%"), "bw per")
            if "samples" in kv:
                obj["bw_samples"] = int(_number(kv["samples"], "bw samples"))
            return True
        m = _IOPS_WIN_RE.fullmatch(s)
        if m is not None:
            obj = self._direction(job, "iops")
            kv = _pairs(m.group("kv"), "iops")
            for key, col in (("min", "iops_min"), ("max", "iops_max"), ("avg", "iops_mean"), ("stdev", "iops_stddev")):
                if key in kv:
                    obj[col] = _number(kv[key], f"iops {key}")
            if "samples" in kv:
                obj["iops_samples"] = int(_number(kv["samples"], "iops samples"))
            return True
        if s.startswith("cpu"):
            m = _CPU_RE.fullmatch(s)
            if m is None:
                raise _Bad("a cpu line that cannot be read: expected 'cpu : usr=…%, sys=…%, ctx=…, majf=…, minf=…'")
            job.extra.update(
                usr_cpu=float(m.group("usr")), sys_cpu=float(m.group("sys")), ctx=int(m.group("ctx")),
                majf=int(m.group("majf")), minf=int(m.group("minf")),
            )  # fmt: skip
            return True
        if s.startswith("issued"):
            m = _ISSUED3_RE.fullmatch(s) or _ISSUED2_RE.fullmatch(s)
            if m is None:
                raise _Bad(
                    "an issued line that cannot be read: expected 'issued rwts: total=R,W,T,X short=… dropped=…'"
                )
            job.issued = {k: _slashed(m.group(k), 4, f"issued {k}") for k in ("t", "s", "d")}
            return True
        return bool(_JOB_MISC_RE.fullmatch(s) or _GENERIC_STAT_RE.fullmatch(s))

    def _direction(self, job: _Job, what: str) -> Dict[str, Any]:
        if job.current is None:
            raise _Bad(f"{what} statistics before any read, write, trim or mixed line of job {job.name!r}")
        return job.directions[job.current].obj

    def _latency_line(self, s: str, job: _Job, no: int) -> bool:
        if _PRIO_RE.fullmatch(s):  # per-priority statistics (fio 3.x cmdprio): not read
            if "percentiles" in s:
                self.pct = ({}, no, 1.0, 1)
                self.state = "pct"
            return True
        if _LAT_DIST_RE.match(s):  # the job's latency distribution ("lat (usec) : 250=0.46%, ...")
            return True
        m = _PCT_HEAD_RE.fullmatch(s)
        if m is not None:
            obj = self._direction(job, "percentile")
            lat = obj.setdefault(f"{m.group('m')}_ns", {})
            self.pct = (lat.setdefault("percentile", {}), no, _LAT_NS[m.group("unit")], 0)
            self.state = "pct"
            return True
        m = _LAT_RE.fullmatch(s)
        if m is None:
            raise _Bad("a latency line that cannot be read: expected 'clat (usec): min=…, max=…, avg=…, stdev=…'")
        obj = self._direction(job, m.group("m"))
        scale = _LAT_NS[m.group("unit")]
        lat = obj.setdefault(f"{m.group('m')}_ns", {})
        for key, col in (("min", "min"), ("max", "max"), ("avg", "mean"), ("std", "stddev")):
            lat[col] = _number(m.group(key), f"{m.group('m')} {col}", job.fio2) * scale
        return True

    def _disk(self, m: "re.Match[str]", no: int) -> Dict[str, Any]:
        disk: Dict[str, Any] = {"name": m.group("name")}
        for key, value in _pairs(m.group("kv"), "Disk stats").items():
            cols = _DISK_KEYS.get(key)
            if cols is None:
                continue  # a key of a later fio: kept out rather than guessed at
            if len(cols) == 2:
                disk.update(zip(cols, _slashed(value, 2, key)))
            elif key.endswith("util"):
                disk[cols[0]] = _number(value.rstrip("%"), key)
            else:
                disk[cols[0]] = int(_number(value, key))
        disk["line"] = no
        return disk


def _document(run: _Run) -> Tuple[Dict[str, Any], List[Dict[str, int]]]:
    """The fio JSON document of one run (fio 3.x keys, ns), and each job's direction lines."""
    jobs: List[Dict[str, Any]] = []
    lines: List[Dict[str, int]] = []
    for job in run.jobs:
        entry: Dict[str, Any] = {
            "jobname": job.name,
            "groupid": job.groupid,
            "error": job.error,
            "job options": dict(run.options.get(job.name, {})),
        }
        # fio's JSON has read, write and trim for every job (zeros when unused), or 'mixed' alone
        # (unified_rw_reporting=mixed); 'mixed' with the three for =both.
        mixed_only = set(job.directions) == {"mixed"}
        for k, ddir in enumerate(_DIRECTIONS):
            if ddir in job.directions:
                obj = dict(job.directions[ddir].obj)
            elif ddir != "mixed" and not mixed_only:
                obj = {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0}
            else:
                continue
            # the issued counts of the directions fio printed (a direction without its line did no I/O)
            if job.issued is not None and ddir in job.directions and ddir != "mixed" and k < len(job.issued["t"]):
                obj["total_ios"] = job.issued["t"][k]
                obj["short_ios"] = job.issued["s"][k]
                obj["drop_ios"] = job.issued["d"][k]
                if obj["runtime"] > 0:  # fio's own formula for the figure it prints and for its JSON
                    obj["iops"] = 1000.0 * obj["total_ios"] / obj["runtime"]
            for metric in ("slat_ns", "clat_ns", "lat_ns"):
                # fio's JSON holds every latency; one the text does not show had no samples (N = 0)
                obj.setdefault(metric, {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
            entry[ddir] = obj
        entry.update(job.extra)
        jobs.append(entry)
        lines.append({d: job.directions[d].line for d in job.directions})
    doc: Dict[str, Any] = {"jobs": jobs, "disk_util": [dict(d) for d in run.disks]}
    if run.version is not None:
        doc = {"fio version": run.version, **doc}
    return doc, lines


def _source(source: Union[PathLike, bytes]) -> Tuple[str, str]:
    if isinstance(source, bytes):
        try:
            return source.decode("utf-8"), "<bytes>"
        except UnicodeDecodeError:
            raise ValueError("<bytes>: not UTF-8 text (expected fio's normal output)") from None
    if isinstance(source, str) and "\n" in source:
        return source, "<text>"
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"read_normal: expected a path, text or bytes, got {type(source).__name__}")
    path = os.fspath(source)
    return read_text(path, MAX_NORMAL_BYTES, "fio normal output", f"{__name__}.MAX_NORMAL_BYTES"), path


def read_normal(source: Union[PathLike, bytes]) -> List[FioResult]:
    """Read fio's normal (text) output, fio 2.x and 3.x: every run found in the text.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A file name, or the text itself (a ``str`` containing a newline). The text may hold
        several runs one after the other and anything between them (shell prompts and commands,
        Markdown headings and fences, JSON of ``--output-format=normal,json``): those lines are kept
        as the next run's :attr:`~ebssim.fio.FioResult.preamble`. Text pasted from web pages or
        Markdown is read too: indentation may be lost, and Markdown emphasis (``**``, ``_``) on a
        line holding ``**`` or ``__`` is ignored.

    Returns
    -------
    list of FioResult
        One per run, in order (a run: fio's header lines if present, its job blocks, its ``Run
        status group`` sums and ``Disk stats``; a job of a group already summed up starts the next
        run). Each has the :attr:`~ebssim.fio.FioResult.jobs` rows and columns of
        :func:`~ebssim.fio.read_json` (one row per job and direction that did I/O; ``lat``,
        ``clat`` and ``slat`` in ns; ``<m>_p<P>_ns`` percentiles; window statistics from the
        ``bw``/``iops`` lines; ``usr_cpu_pct``, ``ctx``, ... from ``cpu``; ``total_ios``,
        ``short_ios``, ``drop_ios`` from ``issued``) plus ``line``, the line number of the row's
        direction line. :attr:`~ebssim.fio.FioResult.disk_util` holds the ``Disk stats`` lines
        (fio's JSON names: ``read_ios``, ``write_ios``, ``read_merges``, ``read_ticks``,
        ``in_queue``, ``util``, ``aggr_*`` for md devices, and ``line``); ``job_options`` what the
        header line ``NAME: (g=0): rw=…, bs=…, ioengine=…, iodepth=…`` says; ``fio_version`` the
        ``fio-3.33`` line; ``lines`` the run's first and last line; ``raw`` the JSON document the
        run was turned into. The printed precision is all there is: ``BW=580MiB/s`` is 580 MiB/s.

    Raises
    ------
    ValueError
        No fio run in the text, or a line that looks like fio's (a direction, latency,
        percentile, cpu, issued or Disk stats line) and cannot be read, or a job header without
        statistics; the message names the file (or ``<text>``) and the line.
    """
    text, label = _source(source)
    reader = _Reader(label)
    for no, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        reader.line(line, no)
    reader._finish()
    if not reader.runs:
        raise ValueError(
            f"{label}: no fio job found: expected fio's normal output, whose job blocks start like "
            f"'NAME: (groupid=0, jobs=1): err= 0: pid=…'"
        )
    results: List[FioResult] = []
    for run in reader.runs:
        doc, lines = _document(run)
        result = parse_json(doc, source=label)
        jobs = result.jobs.copy()
        jobs["line"] = [lines[int(j)][d] for j, d in zip(jobs["job"], jobs["direction"])]
        results.append(dataclasses.replace(result, jobs=jobs, preamble=list(run.preamble), lines=(run.first, run.last)))
    return results
