"""One resolved fio job and the jobs of one fio invocation: :class:`FioJob`, whose fields, each with
fio 3.33's default, are the only declaration of what a job holds (the parsers build a job by replacing
fields of ``FioJob(name="")``, the defaults), with what derives from them (depth in flight, read
fraction, targets, clones, log file names); :class:`FioJobSet` with fio's phases and reporting groups;
and :class:`FioJobError`, every problem with a job file or command line, naming where it was written.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple

from .logs import LOG_OPTIONS, log_file_name
from .values import split_paths

if TYPE_CHECKING:  # the model is imported when a load is asked for: parsing jobs needs none of it
    from ..volumes import Volume
    from ..workloads import ClosedLoop

__all__ = ["FioJob", "FioJobError", "FioJobSet", "FioLoad"]


class FioJobError(ValueError):
    """A fio job file or command line that cannot be simulated.

    The message starts with where the problem is: ``path:line`` for a job file, or
    ``fio command line, argument N '--opt=value'`` for a command line.

    Attributes
    ----------
    source : str or None
        The job file (path, or the ``source`` given for text), or ``"fio command line"``.
    line : int or None
        1-based line number in ``source`` (job files only).
    key : str or None
        The option involved, as written (``"bs"``, ``"readwrite"``), when there is one.
    argument : str or None
        The command-line argument involved (command lines only).
    reason : str
        The message without the location prefix.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: Optional[str] = None,
        line: Optional[int] = None,
        key: Optional[str] = None,
        argument: Optional[str] = None,
        index: Optional[int] = None,
    ) -> None:
        self.source = source
        self.line = line
        self.key = key
        self.argument = argument
        self.reason = reason
        where = _where(source, line, argument, index)
        super().__init__(f"{where}: {reason}" if where else reason)


def _where(source: Optional[str], line: Optional[int], argument: Optional[str], index: Optional[int]) -> str:
    if source is None:
        return ""
    if line is not None:
        return f"{source}:{line}"
    if argument is not None:
        num = f" {index}" if index is not None else ""
        return f"{source}, argument{num} {argument!r}"
    return source


@dataclass(frozen=True)
class FioLoad:
    """What one fio job clone offers a volume (:meth:`FioJob.offered_load`)."""

    loop: "ClosedLoop"
    """The closed loop the model runs: depth, think time, mean I/O size, read fraction, pattern, counting."""
    service_s: float
    """Unloaded service time of the mean I/O on the volume, seconds (the latency fio sees while nothing throttles)."""
    read_service_s: float
    """Unloaded service time of one of the job's reads (``bs_read``), seconds."""
    write_service_s: float
    """Unloaded service time of one of the job's writes (``bs_write``), seconds."""
    counted: float
    """EBS-counted operations per I/O, the mean over the read/write mix."""
    cap_iops: float
    """I/Os per second the ``rate_iops``/``rate`` caps allow (:attr:`FioJob.rate_cap_iops` of the share); inf: none."""
    offered_iops: float
    """I/Os per second the clone asks for when the volume holds nothing back: the loop's
    ``depth / (service time + think time)``, at most :attr:`cap_iops`."""


@dataclass(frozen=True)
class _Loc:
    """Where an option or section was written."""

    source: str
    line: Optional[int] = None
    argument: Optional[str] = None
    index: Optional[int] = None

    def error(self, reason: str, key: Optional[str] = None) -> FioJobError:
        return FioJobError(
            reason, source=self.source, line=self.line, key=key, argument=self.argument, index=self.index
        )


@dataclass(frozen=True)
class FioJob:
    """One fio job, resolved with fio's defaults and the ``[global]`` options it inherits.

    ``numjobs`` is kept as a field; :meth:`clones` gives the ``numjobs`` identical jobs fio runs.
    Sizes are in bytes, times in seconds.

    Attributes
    ----------
    name : str
        The job's name (section name, ``--name``, or a ``name=`` option in the section). fio gives
        every clone the same name.
    filename, directory : str or None
        As written; ``:`` separates several (see :attr:`filenames`, :attr:`targets`).
    ioengine : str
        Default ``psync`` (fio's default on Linux).
    sync_engine : bool
        Whether the engine is synchronous (:data:`~ebssim.fio.options.SYNC_ENGINES`): one I/O in flight per job.
    iodepth : int
        As written (default 1); see :attr:`effective_depth`.
    numjobs : int
        Identical copies of the job that run at the same time (default 1).
    rw : str
        One of ``read write randread randwrite rw randrw`` (``readwrite`` becomes ``rw``).
    rwmixread : int
        Percentage of reads in ``rw``/``randrw`` (default 50; ``rwmixwrite=x`` sets ``100 - x``).
    bs_read, bs_write : int
        Block sizes in bytes (default 4096; ``bs=4k,64k`` sets them apart). See :attr:`bs`.
    size : int or None
        Bytes of the region (and, without ``io_size``, of I/O) per job; ``None`` means the whole
        file or device, as in fio, or a percentage of it (:attr:`size_percent`).
    size_percent : float or None
        ``size=50%``: percent of the file or device, for the caller to resolve.
    io_size : int or None
        Bytes of I/O per job when it differs from ``size`` (``io_size=50%`` is resolved against
        ``size``).
    runtime : float or None
        Seconds; ``None`` means no time limit (fio's ``runtime=0``).
    time_based : bool
        Keep going until ``runtime`` even when ``size`` has been done.
    ramp_time : float
        Seconds of warm-up before statistics are kept.
    loops : int
        Times the job repeats its ``size`` (default 1).
    rate_iops_read, rate_iops_write : int
        IOPS caps per direction, 0 = none (``rate_iops=500`` caps each direction at 500).
    rate_read, rate_write : int
        Bandwidth caps in bytes/s per direction (fio's ``rate``), 0 = none.
    thinktime : float
        Seconds of idle time after every ``thinktime_blocks`` I/Os (fio's unit is microseconds:
        ``thinktime=500`` is 0.0005 s).
    thinktime_spin : float
        Seconds of that idle time spent spinning the CPU (part of ``thinktime``).
    thinktime_blocks : int
        I/Os between think times (default 1).
    thinktime_blocks_type : str
        ``complete`` (default) or ``issue``.
    stonewall : bool
        Wait for every earlier job to finish before starting (``wait_for_previous`` is an alias).
    new_group : bool
        Start a new reporting group without waiting.
    group_reporting : bool
        Report the job's clones (and its group) as one entry.
    write_iops_log, write_bw_log, write_lat_log, write_hist_log : str or None
        Log file prefixes (a bare option uses the job name). See :meth:`log_file_names`.
    log_avg_msec, log_hist_msec : int
        Averaging windows of the logs in ms (0: one entry per I/O).
    log_offset : bool
        Logs carry an offset column.
    per_job_logs : bool
        Log file names carry the job number (default true).
    kb_base : int
        1024 (default) or 1000, as used to read the sizes above.
    description : str or None
        fio's ``description``.
    options : dict
        Every option in effect (globals and the job's own), canonical names (aliases resolved)
        mapped to the value as written (``None`` for a bare option).
    job_options : dict
        The job's own options as written, like fio's JSON ``"job options"``.
    unmodelled : tuple of str
        Accepted options that change real I/O but are not simulated (:data:`~ebssim.fio.options.UNMODELLED_OPTIONS`).
    source : str
        The job file, or ``"fio command line"``.
    line : int or None
        Line of the section header in ``source`` (job files).
    index : int
        Position in the :class:`FioJobSet`.
    thread_number : int
        fio's 1-based job number of this job's first clone across the whole invocation; it is
        the ``N`` of ``prefix_iops.N.log``.
    clone_index : int
        0 for the job itself; 0..numjobs-1 for the results of :meth:`clones`.
    phase : int
        Which stonewall phase the job runs in (see :meth:`FioJobSet.phases`).
    groupid : int
        fio's reporting group id (``groupid`` in fio's JSON).
    """

    # fio's defaults, from `fio --cmdhelp=OPTION` (fio 3.33). The parsers start every job from
    # FioJob(name=""): these declarations are the only place a job field or its default is written.
    name: str
    filename: Optional[str] = None
    directory: Optional[str] = None
    ioengine: str = "psync"  # fio 3.33 on Linux: `fio --cmdhelp=ioengine` says "default: psync"
    sync_engine: bool = True  # derived from ioengine when a job is finished
    iodepth: int = 1
    numjobs: int = 1
    rw: str = "read"  # `fio --cmdhelp=rw`: default read
    rwmixread: int = 50
    bs_read: int = 4096  # `fio --cmdhelp=bs`: default 4096
    bs_write: int = 4096
    size: Optional[int] = None
    size_percent: Optional[float] = None
    io_size: Optional[int] = None
    runtime: Optional[float] = None
    time_based: bool = False
    ramp_time: float = 0.0
    loops: int = 1
    rate_iops_read: int = 0
    rate_iops_write: int = 0
    rate_read: int = 0
    rate_write: int = 0
    thinktime: float = 0.0
    thinktime_spin: float = 0.0
    thinktime_blocks: int = 1  # `fio --cmdhelp=thinktime_blocks`: default 1
    thinktime_blocks_type: str = "complete"
    stonewall: bool = False
    new_group: bool = False
    group_reporting: bool = False
    write_iops_log: Optional[str] = None
    write_bw_log: Optional[str] = None
    write_lat_log: Optional[str] = None
    write_hist_log: Optional[str] = None
    log_avg_msec: int = 0
    log_hist_msec: int = 0
    log_offset: bool = False
    per_job_logs: bool = True  # `fio --cmdhelp=per_job_logs`: default 1
    kb_base: int = 1024
    description: Optional[str] = None
    options: Dict[str, Optional[str]] = field(default_factory=dict, compare=False)
    job_options: Dict[str, Optional[str]] = field(default_factory=dict, compare=False)
    unmodelled: Tuple[str, ...] = ()
    source: str = ""
    line: Optional[int] = None
    index: int = 0
    thread_number: int = 1
    clone_index: int = 0
    phase: int = 0
    groupid: int = 0

    # ---- derived values -------------------------------------------------------------------

    @property
    def effective_depth(self) -> int:
        """I/Os in flight per job: 1 for a synchronous engine whatever ``iodepth`` says."""
        return 1 if self.sync_engine else self.iodepth

    @property
    def in_flight(self) -> int:
        """I/Os in flight for all clones together: ``numjobs x effective_depth``."""
        return self.numjobs * self.effective_depth

    @property
    def reads(self) -> bool:
        """Whether the job issues reads."""
        return self.read_fraction > 0

    @property
    def writes(self) -> bool:
        """Whether the job issues writes."""
        return self.read_fraction < 1

    @property
    def read_fraction(self) -> float:
        """Share of I/Os that are reads: 1 or 0 for pure jobs, ``rwmixread / 100`` for mixes."""
        if self.rw in ("read", "randread"):
            return 1.0
        if self.rw in ("write", "randwrite"):
            return 0.0
        return self.rwmixread / 100.0

    @property
    def sequential(self) -> bool:
        """Sequential (``read``, ``write``, ``rw``) rather than random I/O."""
        return self.rw in ("read", "write", "rw")

    @property
    def bs(self) -> int:
        """The block size in bytes, when the job issues one size.

        Raises
        ------
        FioJobError
            For a job that both reads and writes with different sizes: use :attr:`bs_read`,
            :attr:`bs_write` or :attr:`mean_io_size`.
        """
        if not self.writes:
            return self.bs_read
        if not self.reads:
            return self.bs_write
        if self.bs_read != self.bs_write:
            raise FioJobError(
                f"job {self.name!r} reads {self.bs_read}-byte and writes {self.bs_write}-byte blocks: "
                f"use bs_read/bs_write or mean_io_size",
                source=self.source or None,
                line=self.line,
                key="bs",
            )
        return self.bs_read

    @property
    def mean_io_size(self) -> float:
        """Mean bytes per I/O over the read/write mix."""
        rf = self.read_fraction
        return rf * self.bs_read + (1.0 - rf) * self.bs_write

    # ---- the load a job offers (the one mapping from fio to the model) ------------------------

    def _rate_cap(self, share: float) -> float:
        """The I/Os per second of the whole mix at which the first direction reaches its
        ``rate_iops``/``rate`` cap, for ``share`` of one clone (inf: no cap)."""
        rate = math.inf
        # fio caps each direction separately: rate_iops=100 is 100 reads/s and 100 writes/s.
        for cap_iops, cap_bytes, dshare, bs in (
            (self.rate_iops_read, self.rate_read, self.read_fraction, self.bs_read),
            (self.rate_iops_write, self.rate_write, 1 - self.read_fraction, self.bs_write),
        ):
            if dshare <= 0:
                continue
            for cap in (cap_iops, cap_bytes / bs if cap_bytes else 0):
                if cap and cap > 0:
                    rate = min(rate, cap * share / dshare)
        return rate

    @property
    def rate_cap_iops(self) -> float:
        """I/Os per second (reads and writes together) one clone may issue under its
        ``rate_iops``/``rate`` caps: the rate at which the first direction reaches its cap;
        ``inf`` without caps. ``rw=randrw:rwmixread=50`` with ``rate_iops=100`` gives 200."""
        return self._rate_cap(1.0)

    def offered_load(self, volume: "Volume", share: float = 1.0) -> "FioLoad":
        """What one clone of this job offers ``volume``: the closed loop the model runs for it and
        the rate it asks for (docs/fio.md, *How fio's options map onto the model*).

        The loop keeps :attr:`effective_depth` I/Os of :attr:`mean_io_size` in flight, counted
        by the volume's rule for each direction's block size. With ``thinktime``, fio issues
        ``thinktime_blocks`` I/Os (at most the depth at a time), then stalls ``thinktime`` after
        their completion: the depth becomes ``d = min(depth, blocks)``, a cycle moves ``blocks``
        I/Os in ``ceil(blocks / d)`` service times plus ``thinktime``, and each user's think time
        is what makes the loop's offer that cycle's rate, ``d / rate - service time``. The
        default ``thinktime_blocks=1`` makes any ``iodepth`` a depth of 1, as fio says.
        ``thinktime_spin`` is part of ``thinktime`` (the stall is the same length);
        ``thinktime_blocks_type=issue`` is taken as ``complete``. The offer is the loop's, at
        most :attr:`rate_cap_iops`.

        Parameters
        ----------
        volume : Volume
            The volume the clone does I/O to (its service time and counting rule).
        share : float, default 1.0
            The part of the clone on this volume: a job on ``k`` files puts ``1/k`` on each
            (its depth and its caps are shared).

        Examples
        --------
        16 KiB random reads at iodepth 16 with ``thinktime=1ms`` every 4 blocks on a gp3, whose
        service time for 16 KiB is 0.5153 ms: depth 4, a cycle of 4 I/Os in 0.5153 + 1 ms, so
        4 / 1.5153 ms = 2,639.8 I/Os per second, each user thinking 1 ms:

        >>> import ebssim
        >>> from ebssim.fio import FioJob
        >>> job = FioJob("j", ioengine="libaio", sync_engine=False, iodepth=16, rw="randread", bs_read=16384,
        ...              thinktime=0.001, thinktime_blocks=4)
        >>> load = job.offered_load(ebssim.gp3(100))
        >>> round(load.service_s * 1e3, 4), load.loop.in_flight, load.loop.think_time_ms, round(load.offered_iops, 1)
        (0.5153, 4.0, 1.0, 2639.8)
        """
        from ..burst import closed_loop_rate
        from ..workloads import ClosedLoop

        rf = self.read_fraction
        pattern = "sequential" if self.sequential else "random"
        # Mean EBS-counted operations per I/O over the read/write mix.
        counted = sum(
            dshare * volume.counted_ops_per_io(bs, pattern)
            for dshare, bs in ((rf, self.bs_read), (1 - rf, self.bs_write))
            if dshare > 0
        )
        mean_size = self.mean_io_size
        st = volume.service_time_s(mean_size, rf)
        depth = float(self.effective_depth)
        think = 0.0
        if self.thinktime > 0:
            blocks = max(1, self.thinktime_blocks)
            d = min(depth, float(blocks))
            cycle_rate = blocks / (math.ceil(blocks / d) * st + self.thinktime)
            depth = d
            think = max(0.0, d / cycle_rate - st)
        depth *= share
        loop = ClosedLoop(
            depth, mean_size, read_fraction=rf, pattern=pattern, think_time_ms=think * 1e3, counted_per_io=counted
        )
        cap = self._rate_cap(share)
        offered = min(closed_loop_rate(volume, loop).offered_iops, cap)  # depth / (service time + think time)
        return FioLoad(
            loop=loop,
            service_s=st,
            read_service_s=volume.service_time_s(self.bs_read, 1.0),
            write_service_s=volume.service_time_s(self.bs_write, 0.0),
            counted=counted,
            cap_iops=cap,
            offered_iops=offered,
        )

    @property
    def filenames(self) -> Tuple[str, ...]:
        """``filename`` split at fio's ``:`` separator."""
        return split_paths(self.filename)

    @property
    def directories(self) -> Tuple[str, ...]:
        """``directory`` split at fio's ``:`` separator."""
        return split_paths(self.directory)

    @property
    def targets(self) -> Tuple[str, ...]:
        """Paths the job does I/O to, for matching volumes.

        Each file name, joined to the directory when it is relative and a directory is set; the
        directories when no file name is given (fio then creates ``name.N.0`` files in them);
        empty when neither is set (files in the current directory).
        """
        names = self.filenames
        dirs = self.directories
        if not names:
            return dirs
        if not dirs:
            return names
        out: List[str] = []
        for n in names:
            if os.path.isabs(n):
                out.append(n)
            else:
                out.extend(os.path.join(d, n) for d in dirs)
        return tuple(out)

    # ---- clones and logs ------------------------------------------------------------------

    def clones(self) -> Tuple[FioJob, ...]:
        """The ``numjobs`` jobs fio runs for this one.

        Every clone has fio's name for it (the same ``name``), ``numjobs=1``, its
        ``clone_index`` (0..numjobs-1) and its own ``thread_number`` (consecutive, the ``N`` in
        log file names). Like fio, only the first clone keeps ``stonewall``/``new_group``.
        """
        return tuple(
            dataclasses.replace(
                self,
                numjobs=1,
                clone_index=i,
                thread_number=self.thread_number + i,
                stonewall=self.stonewall if i == 0 else False,
                new_group=self.new_group if i == 0 else False,
                options=dict(self.options),
                job_options=dict(self.job_options),
            )
            for i in range(self.numjobs)
        )

    def log_file_names(self) -> Dict[str, Tuple[str, ...]]:
        """The log files fio would write for this job, by kind, one per clone.

        Kinds: ``iops``, ``bw``, ``lat``, ``clat``, ``slat`` (``write_lat_log`` writes all three)
        and ``clat_hist``. Names follow fio: ``PREFIX_KIND.N.log`` with ``N`` the clone's
        :attr:`thread_number`, or ``PREFIX_KIND.log`` with ``per_job_logs=0`` (one shared file).
        Checked with fio 3.33: a command-line job then a 2-clone job and a 1-clone job from a
        file wrote ``pc_bw.1.log``, ``a_iops.2.log``, ``a_iops.3.log``, ``pb_iops.4.log``.

        >>> from ebssim.fio import parse_command_line
        >>> parse_command_line("fio --name=a --numjobs=2 --write_iops_log=a --filename=/dev/x")[0].log_file_names()
        {'iops': ('a_iops.1.log', 'a_iops.2.log')}
        """
        out: Dict[str, Tuple[str, ...]] = {}
        for option, kinds in LOG_OPTIONS.items():
            prefix: Optional[str] = getattr(self, option)
            if prefix is None:
                continue
            numbers = [self.thread_number + i for i in range(self.numjobs)] if self.per_job_logs else [None]
            for kind in kinds:
                out[kind] = tuple(log_file_name(prefix, kind, n) for n in numbers)
        return out


@dataclass(frozen=True)
class FioJobSet:
    """The jobs of one fio invocation (one job file, or one command line and its job files).

    Attributes
    ----------
    jobs : tuple of FioJob
        In the order fio starts them: command-line jobs first, then each job file's jobs.
    source : str
        The job file, or the command line as given.
    job_files : tuple of str
        Job files read (a job file itself, or those named on a command line).
    input_files : tuple of str
        Every file read to build the jobs, as opened: the job files and the files they
        ``include``. :func:`ebssim.fio.predict` writes no log over any of them.
    fio_options : dict
        fio's own command-line options (``output``, ``output-format``, ``eta``, ...), accepted
        and recorded; they are not part of any job.
    global_options : dict
        The global options in effect at the end, as written (fio's JSON ``"global options"``).
    """

    jobs: Tuple[FioJob, ...]
    source: str
    job_files: Tuple[str, ...] = ()
    input_files: Tuple[str, ...] = ()
    fio_options: Dict[str, Optional[str]] = field(default_factory=dict)
    global_options: Dict[str, Optional[str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[FioJob]:
        return iter(self.jobs)

    def __getitem__(self, index: int) -> FioJob:
        return self.jobs[index]

    @property
    def names(self) -> Tuple[str, ...]:
        """Job names in order."""
        return tuple(j.name for j in self.jobs)

    def job(self, name: str) -> FioJob:
        """The first job called ``name``."""
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(f"no job named {name!r}; jobs: {', '.join(self.names)}")

    def phases(self) -> Tuple[Tuple[FioJob, ...], ...]:
        """Jobs grouped into the phases fio runs one after the other.

        A job with ``stonewall`` waits until every earlier job has finished; jobs with no
        stonewall between them run at the same time (fio's ``run_threads``). A stonewall on the
        very first job waits for nothing. Each job file after the first on a command line starts
        with an implicit stonewall, as in fio.
        """
        out: Dict[int, List[FioJob]] = {}
        for j in self.jobs:
            out.setdefault(j.phase, []).append(j)
        return tuple(tuple(out[k]) for k in sorted(out))

    def groups(self) -> Dict[int, Tuple[FioJob, ...]]:
        """Jobs by fio reporting group id (``groupid``).

        fio starts a new group at a job with ``stonewall`` or ``new_group`` unless the current
        group is still empty (init.c ``add_job``; fio 3.33, run: ``[a] stonewall`` first stays
        group 0).
        """
        out: Dict[int, List[FioJob]] = {}
        for j in self.jobs:
            out.setdefault(j.groupid, []).append(j)
        return {k: tuple(v) for k, v in sorted(out.items())}

    def expand(self) -> Tuple[FioJob, ...]:
        """Every clone of every job (``numjobs`` expanded), in fio's order."""
        return tuple(c for j in self.jobs for c in j.clones())
