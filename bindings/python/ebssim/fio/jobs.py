"""Parse fio job files and fio command lines into resolved job descriptions.

This is the front half of ``ebssim fio``: it reads what fio would read and resolves every job the
way fio 3.33 does (``[global]`` inheritance, option aliases, size and time suffixes, ``numjobs``
clones, ``stonewall`` phases and reporting groups), so that the simulator only sees typed values.

Public API
----------
:func:`parse_job_file`
    A fio job file (path or text) -> :class:`FioJobSet`.
:func:`parse_command_line`
    ``"fio --name=x --rw=randread ..."`` (a string, shlex-split) or an argv list -> :class:`FioJobSet`.
    Job files named on the command line are parsed too.
:func:`parse_run`
    One ``RUN`` of ``ebssim fio``: a command line beginning with ``fio`` or a job file path.
:class:`FioJob`
    One job section, resolved (``numjobs`` kept as a field; :meth:`FioJob.clones` expands it).
:class:`FioJobSet`
    The jobs of one fio invocation, with :meth:`FioJobSet.phases` and :meth:`FioJobSet.groups`.
:class:`FioJobError`
    Every problem, a :class:`ValueError` naming the file and line (or the command-line argument),
    the option, and what was expected.

How fio's semantics were checked
--------------------------------
Against fio 3.33 (``fio --cmdhelp=OPTION`` for types, defaults and aliases; fio's ``parse.c`` and
``init.c`` for the parsing rules) and by running the real fio, e.g.
``fio --name=x --filename=/tmp/f --size=1m --bs=4KiB --output-format=json`` and reading
``io_bytes / total_ios`` and ``groupid`` from the JSON. Facts established that way are marked
"(fio 3.33, run)" in the comments below.

Where fio silently misreads a value (``bs=4q`` is 4 bytes, ``runtime=2sec`` is 2 microseconds,
``bs= 8k`` with a space after ``=`` is 8 bytes, ``runtime=1.5s`` is 1 s), ebssim refuses the value
and says why, rather than simulating a job nobody meant to run.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ._files import read_bounded

__all__ = [
    "ALIASES",
    "ASYNC_ENGINES",
    "FIO_VERSION",
    "IGNORED_OPTIONS",
    "MAX_BS",
    "MAX_IODEPTH",
    "MAX_JOBS",
    "MAX_JOB_FILE_BYTES",
    "OUTPUT_OPTIONS",
    "RW_KINDS",
    "SYNC_ENGINES",
    "UNMODELLED_OPTIONS",
    "UNSUPPORTED_OPTIONS",
    "FioJob",
    "FioJobError",
    "FioJobSet",
    "parse_command_line",
    "parse_job_file",
    "parse_run",
]

#: The fio version whose parsing rules this module follows.
FIO_VERSION = "3.33"

#: Bytes of job text one RUN may read, its includes counted: job files are a few KiB, and a
#: device such as /dev/zero or a huge download must not be read without end.
MAX_JOB_FILE_BYTES = 1 << 20
#: I/Os in flight per job (``iodepth``): Linux's default ``aio-max-nr``; fio 3.33's libaio fails
#: to set up above it (``iodepth=100000``: "io_queue_init ... Resource temporarily unavailable").
MAX_IODEPTH = 65536
#: Job clones (``numjobs`` summed over the jobs) in one RUN: fio's default ``--max-jobs`` (fio
#: 3.33 stops with "maximum number of jobs reached" at that many).
MAX_JOBS = 4096
#: Bytes per I/O (``bs``): the simulator's limit on one I/O.
MAX_BS = 1 << 30

PathLike = Union[str, "os.PathLike[str]"]

# --------------------------------------------------------------------------------------------
# Errors and locations
# --------------------------------------------------------------------------------------------

_CMDLINE = "fio command line"


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


class _Bad(Exception):
    """A bad value; the caller adds the location."""


# --------------------------------------------------------------------------------------------
# Option tables (fio 3.33: `fio --cmdhelp=all`, `fio --cmdhelp=OPTION`, `fio --enghelp=ENGINE`)
# --------------------------------------------------------------------------------------------

#: fio's option aliases (``fio --cmdhelp=OPTION`` prints them), alias -> canonical name.
ALIASES: Mapping[str, str] = {
    "readwrite": "rw",
    "blocksize": "bs",
    "blockalign": "ba",
    "blocksize_range": "bsrange",
    "blocksize_unaligned": "bs_unaligned",
    "iodepth_batch_submit": "iodepth_batch",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "io_limit": "io_size",
    "fill_fs": "fill_device",
    "fileoffset": "offset",
    "nr_files": "nrfiles",
    "timeout": "runtime",
    "iomem": "mem",
    "ratemin": "rate_min",
    "ratecycle": "rate_cycle",
    "wait_for_previous": "stonewall",
    "disable_bw": "disable_bw_measurement",
    "ss": "steadystate",
    "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
}

# Options this module turns into FioJob fields.
_MODELLED: FrozenSet[str] = frozenset(
    """
    name description filename directory ioengine iodepth numjobs rw rwmixread rwmixwrite bs size io_size
    runtime time_based ramp_time loops rate_iops rate thinktime thinktime_spin thinktime_blocks
    thinktime_blocks_type stonewall new_group group_reporting write_iops_log write_bw_log write_lat_log
    write_hist_log log_avg_msec log_hist_msec log_offset per_job_logs kb_base
    """.split()
)

#: Options accepted and ignored: they do not change what the EBS model computes.
IGNORED_OPTIONS: FrozenSet[str] = frozenset(
    # Page cache and file handling. The model assumes every I/O reaches the volume (as with
    # direct=1); `direct`/`buffered` are accepted and ignored as the product brief requires.
    "direct buffered invalidate fadvise_hint pre_read overwrite atomic file_append fallocate "
    "create_serialize create_fsync create_on_open allow_file_create allow_mounted_write unlink "
    "unlink_each_loop lockfile openfiles file_service_type filename_format unique_filename nrfiles "
    "offset offset_increment offset_align ba bs_unaligned write_iolog "
    # Random offset generation: EBS performance does not depend on which blocks are hit.
    "randrepeat allrandrepeat randseed norandommap random_generator random_distribution "
    # Data content: EBS neither compresses nor deduplicates.
    "zero_buffers refill_buffers scramble_buffers buffer_pattern buffer_compress_percentage "
    "buffer_compress_chunk dedupe_percentage dedupe_mode dedupe_working_set_percentage dedupe_global "
    # Clocks and measurement overhead.
    "clocksource gtod_reduce gtod_cpu disable_lat disable_clat disable_slat disable_bw_measurement "
    "disk_util log_entries log_compression_cpus error_dump block_error_percentiles "
    # Processes, CPUs, memory, scheduling, cgroups and users.
    "thread nice prio prioclass cpumask cpus_allowed cpus_allowed_policy numa_cpu_nodes numa_mem_policy "
    "mem lockmem hugepage-size cgroup cgroup_nodelete cgroup_weight uid gid exec_prerun exec_postrun "
    "ioscheduler write_hint "
    # Submission batching inside one job: the in-flight count is what the model uses.
    "iodepth_batch iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low "
    "serialize_overlap io_submit_mode "
    # Error handling and job exit (exitall itself is unsupported: it ends other jobs).
    "continue_on_error ignore_error exitall_on_error exit_what "
    # ioengine-specific options (fio --enghelp=libaio / io_uring / pvsync2).
    "userspace_reap hipri hipri_percentage cmdprio_percentage cmdprio_class cmdprio cmdprio_bssplit "
    "nowait fixedbufs registerfiles sqthread_poll sqthread_poll_cpu nonvectored uncached force_async "
    "cmd_type".split()
)

#: Options accepted and recorded (``FioJob.options``) that change only fio's report or log format.
#: Whoever writes simulated output may honour them; the model ignores them.
OUTPUT_OPTIONS: FrozenSet[str] = frozenset(
    "clat_percentiles lat_percentiles slat_percentiles percentile_list significant_figures "
    "unified_rw_reporting stats unit_base bwavgtime iopsavgtime log_hist_coarseness log_max_value "
    "log_prio log_compression log_store_compressed log_unix_epoch log_alternate_epoch "
    "log_alternate_epoch_clock_id".split()
)

#: Options accepted and recorded that change the real I/O in ways the model does not simulate
#: (flushes, O_SYNC writes, verification reads, per-file size). They are listed in
#: ``FioJob.unmodelled`` so that a front end can warn.
UNMODELLED_OPTIONS: FrozenSet[str] = frozenset(
    "fsync fdatasync write_barrier sync_file_range end_fsync fsync_on_close sync filesize "
    "verify do_verify verify_interval verify_offset verify_pattern verify_fatal verify_dump "
    "verify_async verify_backlog verify_backlog_batch experimental_verify verify_state_load "
    "verify_state_save".split()
)

_SEE_BS = "use one bs, or a read,write pair such as bs=4k,64k"
#: fio options that change the workload in ways the simulator cannot represent: an error, with why.
UNSUPPORTED_OPTIONS: Mapping[str, str] = {
    "wait_for": "it makes a job wait for one named job; use stonewall (wait for all earlier jobs)",
    "bsrange": f"it draws block sizes from a range; {_SEE_BS}",
    "bssplit": f"it mixes block sizes; {_SEE_BS}",
    "rw_sequencer": "it changes how often offsets are regenerated",
    "percentage_random": "it mixes random and sequential I/O in one job; use two jobs",
    "number_ios": "it stops a job after a count of I/Os; use size, io_size or runtime",
    "startdelay": "it delays a job's start within its phase",
    "fill_device": "it writes until the device is full",
    "verify_only": "it replaces the workload by a verification pass",
    "exitall": "it stops every job when one finishes",
    "opendir": "it adds every file under a directory tree; use filename or directory",
    "create_only": "it only creates files and does no I/O",
    "read_iolog": "it replays an I/O log; replay traces with ebssim's open-loop workloads",
    "read_iolog_chunked": "it replays an I/O log",
    "replay_no_stall": "it replays an I/O log",
    "replay_redirect": "it replays an I/O log",
    "replay_scale": "it replays an I/O log",
    "replay_align": "it replays an I/O log",
    "replay_time_scale": "it replays an I/O log",
    "replay_skip": "it replays an I/O log",
    "merge_blktrace_file": "it merges blktrace logs",
    "merge_blktrace_scalars": "it merges blktrace logs",
    "merge_blktrace_iters": "it merges blktrace logs",
    "trim_percentage": "trims are not simulated",
    "trim_verify_zero": "trims are not simulated",
    "trim_backlog": "trims are not simulated",
    "trim_backlog_batch": "trims are not simulated",
    "thinktime_iotime": "it alternates I/O periods and think time",
    "rate_min": "it aborts a job below a bandwidth",
    "rate_iops_min": "it aborts a job below an IOPS rate",
    "rate_process": "it changes how rate-limited I/Os are spaced",
    "rate_cycle": "it changes how rate limits are averaged",
    "rate_ignore_thinktime": "it changes how rate and thinktime combine",
    "max_latency": "it aborts a job above a latency",
    "latency_target": "it searches for the queue depth meeting a latency target",
    "latency_window": "it searches for the queue depth meeting a latency target",
    "latency_percentile": "it searches for the queue depth meeting a latency target",
    "latency_run": "it searches for the queue depth meeting a latency target",
    "flow_id": "flow control between jobs is not simulated",
    "flow": "flow control between jobs is not simulated",
    "flow_sleep": "flow control between jobs is not simulated",
    "steadystate": "it ends a job when a steady state is detected",
    "steadystate_duration": "it ends a job when a steady state is detected",
    "steadystate_ramp_time": "it ends a job when a steady state is detected",
    "profile": "fio's built-in profiles are not simulated",
    "zonemode": "zoned block devices are not simulated",
    "zonesize": "zoned block devices are not simulated",
    "zonecapacity": "zoned block devices are not simulated",
    "zonerange": "zoned block devices are not simulated",
    "zoneskip": "zoned block devices are not simulated",
    "read_beyond_wp": "zoned block devices are not simulated",
    "max_open_zones": "zoned block devices are not simulated",
    "job_max_open_zones": "zoned block devices are not simulated",
    "ignore_zone_limits": "zoned block devices are not simulated",
    "zone_reset_threshold": "zoned block devices are not simulated",
    "zone_reset_frequency": "zoned block devices are not simulated",
}

# fio "empty or boolean" options (FIO_OPT_STR_SET): a bare line sets them; `=0`/`=1` also work.
_FLAG_OPTIONS: FrozenSet[str] = frozenset(
    "bs_unaligned norandommap time_based verify_only exitall exitall_on_error stonewall new_group thread "
    "group_reporting zero_buffers refill_buffers".split()
)
# fio boolean options (FIO_OPT_BOOL): they need a value; a bare `direct` line makes fio drop the
# job ("failed parsing direct", fio 3.33, run).
_BOOL_OPTIONS: FrozenSet[str] = frozenset(
    "unique_filename randrepeat serialize_overlap fill_device file_append allrandrepeat direct atomic "
    "buffered overwrite do_verify verify_fatal verify_dump experimental_verify verify_state_load "
    "verify_state_save trim_verify_zero read_iolog_chunked replay_no_stall read_beyond_wp "
    "ignore_zone_limits rate_ignore_thinktime latency_run invalidate create_serialize create_fsync "
    "create_on_open create_only allow_file_create allow_mounted_write pre_read end_fsync fsync_on_close "
    "unlink unlink_each_loop per_job_logs log_max_value log_offset log_prio log_store_compressed "
    "log_unix_epoch log_alternate_epoch block_error_percentiles stats scramble_buffers dedupe_global "
    "clat_percentiles lat_percentiles slat_percentiles disk_util gtod_reduce disable_lat disable_clat "
    "disable_slat disable_bw_measurement error_dump cgroup_nodelete".split()
)
# String options that may be given bare: the log prefix then defaults to the job name
# (`write_iops_log` alone wrote a_iops.N.log for job a; fio 3.33, run).
_BARE_STRING_OPTIONS: FrozenSet[str] = frozenset("write_iops_log write_bw_log write_lat_log write_hist_log".split())

_JOB_OPTIONS: FrozenSet[str] = (
    _MODELLED | IGNORED_OPTIONS | OUTPUT_OPTIONS | UNMODELLED_OPTIONS | frozenset(UNSUPPORTED_OPTIONS)
)

# fio's own command-line options (init.c l_opts), name -> takes a value. They are not job options.
# Accepted and recorded in FioJobSet.fio_options: they change what fio prints, not the jobs.
_CMD_ACCEPTED: Mapping[str, bool] = {
    "output": True,
    "output-format": True,
    "minimal": False,
    "append-terse": False,
    "terse-version": True,
    "eta": True,
    "eta-newline": True,
    "eta-interval": True,
    "status-interval": True,
    "bandwidth-log": False,
    "debug": True,
    "warnings-fatal": False,
    "alloc-size": True,
    "max-jobs": True,
    "aux-path": True,
    "readonly": False,  # enforced: a job that writes is an error, as in fio
    "section": True,  # enforced: only the named sections of the first job file run, as in fio
    "idle-prof": True,
    "trigger-file": True,
    "trigger-timeout": True,
    "trigger": True,
    "trigger-remote": True,
}
# fio command-line options that make fio do something other than run jobs.
_CMD_NOT_A_RUN: Mapping[str, str] = {
    "version": "prints fio's version",
    "help": "prints fio's help",
    "cmdhelp": "prints option help",
    "enghelp": "prints ioengine help",
    "showcmd": "turns a job file into a command line",
    "parse-only": "parses options without running",
    "merge-blktrace-only": "merges blktrace logs without running",
    "cpuclock-test": "tests the CPU clock",
    "crctest": "benchmarks checksums",
    "inflate-log": "decompresses a log",
    "server": "starts a fio server",
    "daemonize": "starts a fio server",
    "client": "runs jobs on a remote fio server",
    "remote-config": "runs jobs on a remote fio server",
    "latency-log": "is deprecated; fio 3.33 refuses it (use write_lat_log)",
}

# fio 3.33 ioengines, from `fio --cmdhelp=ioengine`.
# Synchronous engines (fio's FIO_SYNCIO flag): one I/O at a time per job whatever iodepth says.
# Checked with the real fio: with iodepth=4 each of these printed "note: both iodepth >= 1 and
# synchronous I/O engine are selected, queue depth will be capped at 1"; the async ones did not.
SYNC_ENGINES: Tuple[str, ...] = ("sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice")
# Asynchronous engines: `iodepth` I/Os in flight per job.
ASYNC_ENGINES: Tuple[str, ...] = ("libaio", "io_uring", "io_uring_cmd", "posixaio", "windowsaio", "solarisaio")
# Engines fio knows that do not issue block I/O to a volume the simulator could model.
_OTHER_ENGINES: FrozenSet[str] = frozenset(
    "rbd netsplice sg null net cpuio rdma e4defrag falloc ftruncate gfapi gfapi_async pmemblk dev-dax filecreate "
    "filestat filedelete dircreate dirstat dirdelete external libpmem nbd http nfs xnvme exec libcufile "
    "dfs libhdfs mtd rados ime_psync ime_psyncv ime_aio".split()
)

_RW_KINDS: Mapping[str, str] = {
    "read": "read",
    "write": "write",
    "randread": "randread",
    "randwrite": "randwrite",
    "rw": "rw",
    "readwrite": "rw",
    "randrw": "randrw",
}
_TRIM_KINDS: FrozenSet[str] = frozenset(["trim", "randtrim", "trimwrite", "randtrimwrite"])

#: The ``rw`` values after normalisation (``readwrite`` is fio's alias of ``rw``).
RW_KINDS: Tuple[str, ...] = ("read", "write", "randread", "randwrite", "rw", "randrw")


def _all_known_names() -> List[str]:
    return sorted(_JOB_OPTIONS | frozenset(ALIASES))


# --------------------------------------------------------------------------------------------
# Values: numbers, sizes, times (fio's parse.c rules, made strict)
# --------------------------------------------------------------------------------------------

_NUM_RE = re.compile(r"^([0-9]+)([A-Za-z]*)$")
# fio keeps numbers in 64 bits: 20 decimal or 16 hex digits at most (leading zeros aside).
_MAX_DIGITS = {10: 20, 16: 16}
_U64_MAX = (1 << 64) - 1
_HEX_RE = re.compile(r"^0[xX][0-9a-fA-F]+$")
_DEC_RE = re.compile(r"^[0-9]*\.[0-9]+[A-Za-z%]*$")
_PCT_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)%$")

_SIZE_SUFFIX_HELP = (
    "a whole number of bytes, optionally with a suffix k, m, g, t or p (also kb/KiB forms; "
    "powers of kb_base, 1024 by default), e.g. 4k, 1m, 16KiB"
)
_TIME_UNITS_US: Mapping[str, int] = {
    "us": 1,
    "usec": 1,
    "ms": 1_000,
    "msec": 1_000,
    "s": 1_000_000,
    "m": 60_000_000,
    "h": 3_600_000_000,
    "d": 86_400_000_000,
}


def _size_multiplier(suffix: str, kb_base: int) -> Optional[int]:
    """Bytes per unit for a size suffix, as fio's ``__get_mult_bytes`` computes it.

    With the default ``kb_base=1024``, ``k``/``kb`` are powers of 1024 and the IEC forms ``KiB``
    are powers of 1000 (fio's compatibility mode: "inputs invert IEC and SI prefixes"); with
    ``kb_base=1000`` it is the other way round. Checked with fio 3.33: ``bs=4KiB`` issues
    4,000-byte I/Os, ``bs=4kB`` 4,096-byte ones (fio 3.33, run).
    """
    s = suffix.lower()
    if s in ("", "b"):
        return 1
    other = 1000 if kb_base == 1024 else 1024
    for power, letter in enumerate("kmgtp", start=1):
        if s in (letter, letter + "b"):
            return int(kb_base**power)
        if s == letter + "ib":
            return int(other**power)
    return None


def _int(digits: str, text: str, base: int = 10) -> int:
    """``int(digits, base)`` once the digits are known to fit fio's 64 bits (a 300-digit number is
    refused here, before Python's own limit on digit strings produces a message about itself)."""
    significant = len(digits.lstrip("0"))
    if significant > _MAX_DIGITS[base]:
        raise _Bad(
            f"{text[:24]!r}{'...' if len(text) > 24 else ''} has {significant} digits: fio reads 64-bit numbers "
            f"(at most {_MAX_DIGITS[base]} {'hex ' if base == 16 else ''}digits)"
        )
    value = int(digits, base)
    if value > _U64_MAX:
        raise _Bad(f"{text!r} is beyond fio's 64-bit range (at most {_U64_MAX})")
    return value


def _scaled(number: int, mult: int, text: str, unit: str) -> int:
    value = number * mult
    if value > _U64_MAX:
        raise _Bad(f"{text!r} is {value:,} {unit}, beyond fio's 64-bit range (at most {_U64_MAX:,})")
    return value


def _check_plain(text: str) -> None:
    if text != text.strip():
        raise _Bad(
            f"{text!r} has spaces around it; fio keeps a space after '=' and then misreads the value "
            f"(fio 3.33 runs 'bs= 8k' with 8-byte blocks): remove the space"
        )
    if text.startswith("("):
        raise _Bad(f"{text!r}: fio arithmetic expressions are not supported; write the value out")
    if "$" in text:
        raise _Bad(f"{text!r}: fio's $VARIABLE and $keyword substitution is not supported; expand it first")


def _parse_count(text: str, kb_base: int, what: str) -> int:
    """A non-negative integer; fio's integer options also take size suffixes (``1k`` = 1024)."""
    _check_plain(text)
    if _HEX_RE.match(text):
        return _int(text[2:], text, 16)
    m = _NUM_RE.match(text)
    if m is None:
        if _DEC_RE.match(text):
            raise _Bad(f"{text!r} is not a whole number: fio would silently drop the fraction; expected {what}")
        raise _Bad(f"{text!r} is not a number: expected {what}")
    mult = _size_multiplier(m.group(2), kb_base)
    if mult is None:
        raise _Bad(f"{text!r} has an unknown suffix {m.group(2)!r}: expected {what}")
    return _scaled(_int(m.group(1), text), mult, text, "")


def _parse_size(text: str, kb_base: int) -> int:
    """Bytes from a fio size such as ``4k``, ``1m``, ``16KiB`` or ``4096``."""
    _check_plain(text)
    if _HEX_RE.match(text):
        return _int(text[2:], text, 16)
    m = _NUM_RE.match(text)
    if m is None:
        if _DEC_RE.match(text):
            raise _Bad(
                f"{text!r} is not a whole number: fio reads only whole numbers here (it would run "
                f"{text!r} as {text.split('.')[0] or '0'} units); expected {_SIZE_SUFFIX_HELP}"
            )
        raise _Bad(f"{text!r} is not a size: expected {_SIZE_SUFFIX_HELP}")
    mult = _size_multiplier(m.group(2), kb_base)
    if mult is None:
        # fio matches suffixes by their first letters and ignores the rest; an unknown first
        # letter leaves plain bytes (fio 3.33, run: bs=4q issued 4-byte I/Os).
        silently = "" if m.group(2)[0].lower() in "kmgtp" else f" (fio would silently read {m.group(1)} bytes)"
        raise _Bad(f"{text!r} has an unknown size suffix {m.group(2)!r}{silently}: expected {_SIZE_SUFFIX_HELP}")
    return _scaled(_int(m.group(1), text), mult, text, "bytes")


def _parse_time(text: str, default_unit_us: int) -> float:
    """Seconds from a fio time: a whole number with an optional suffix us, ms, s, m, h, d.

    A number without a suffix is in the option's own unit: seconds for ``runtime`` and
    ``ramp_time``, microseconds for ``thinktime`` (fio's ``get_mult_time``; checked with fio 3.33:
    ``thinktime=200000`` and ``thinktime=200ms`` both give 4 x 256k reads in 0.8 s).
    """
    _check_plain(text)
    m = _NUM_RE.match(text)
    if m is None:
        if _DEC_RE.match(text):
            raise _Bad(
                f"{text!r} is not a whole number: fio reads only the integer part (it runs 'runtime=1.5s' "
                f"for 1 s); use a smaller unit such as 1500ms"
            )
        raise _Bad(f"{text!r} is not a time: expected a whole number with an optional suffix us, ms, s, m, h or d")
    suffix = m.group(2).lower()
    if suffix == "":
        mult = default_unit_us
    elif suffix in _TIME_UNITS_US:
        mult = _TIME_UNITS_US[suffix]
    else:
        raise _Bad(
            f"{text!r} has an unknown time suffix {m.group(2)!r} (fio 3.33 would silently read it as "
            f"microseconds: 'runtime=2sec' runs for 2 us): use us, ms, s, m, h or d"
        )
    return _scaled(_int(m.group(1), text), mult, text, "microseconds") / 1e6


def _parse_switch(text: str) -> bool:
    """fio's ``check_int``: an unsigned integer, non-zero meaning on."""
    _check_plain(text)
    if _HEX_RE.match(text):
        return _int(text[2:], text, 16) != 0
    if not re.fullmatch(r"[0-9]+", text):
        raise _Bad(f"{text!r} is not 0 or 1")
    return _int(text, text) != 0


# --------------------------------------------------------------------------------------------
# Raw input: entries and sections
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    key: str  # as written
    value: Optional[str]  # None for a bare option
    loc: _Loc


@dataclass
class _Section:
    name: str
    is_global: bool
    loc: _Loc
    entries: List[_Entry] = field(default_factory=list)


_MAX_INCLUDE_DEPTH = 8


def _split_sections(
    text: str,
    source: str,
    base_dir: str,
    *,
    depth: int = 0,
    into: Optional[_Section] = None,
    budget: Optional[List[int]] = None,
) -> List[_Section]:
    """fio's ``__parse_jobs_ini``: sections, ``key=value`` lines, comments, ``include``.

    A line whose first non-blank character is ``;`` or ``#`` is a comment; elsewhere ``;`` and
    ``#`` end the line (fio's ``strip_blank_end``). Leading and trailing blanks of a line are
    dropped, blanks before ``=`` too, but not blanks after it (fio keeps them: see ``_check_plain``).
    Any section whose name starts with ``global`` is a global section, as in fio.
    ``budget`` (a one-element list) holds the bytes that includes may still read.
    """
    if budget is None:
        budget = [MAX_JOB_FILE_BYTES - len(text)]
    sections: List[_Section] = []
    current = into
    for lineno, raw in enumerate(text.splitlines(), start=1):
        loc = _Loc(source, lineno)
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        line = re.split(r"[;#]", line, maxsplit=1)[0].rstrip()
        if line.startswith("["):
            if into is not None:
                raise loc.error(f"an included file cannot start a section: {line!r}")
            if not line.endswith("]"):
                raise loc.error(f"a section header must look like [jobname]: {line!r}")
            name = line[1:-1]
            if not name.strip():
                raise loc.error("a job section needs a name: '[]'; write [jobname]")
            current = _Section(name=name, is_global=name.startswith("global"), loc=loc)
            sections.append(current)
            continue
        if line.startswith("include") and (len(line) == 7 or line[7] in " \t"):
            if current is None:
                raise loc.error(f"option <{line}> outside of a [section]")
            target = line[7:].strip()
            if not target:
                raise loc.error("include needs a file name: include other.fio")
            if depth >= _MAX_INCLUDE_DEPTH:
                raise loc.error(f"include nested more than {_MAX_INCLUDE_DEPTH} deep (an include loop?)")
            # fio tries the name as given, then relative to the including file's directory.
            path = target
            if not os.path.exists(path) and not os.path.isabs(target):
                path = os.path.join(base_dir, target)
            try:
                inc_text = _read_job_text(path, budget)
            except UnicodeDecodeError:
                raise loc.error(f"included job file {target!r} is not UTF-8 text") from None
            except (OSError, ValueError) as exc:  # ValueError: not a regular file, too large, NUL in the name
                why = exc.strerror if isinstance(exc, OSError) else str(exc)
                raise loc.error(f"cannot read included job file {target!r}: {why}") from None
            _split_sections(inc_text, path, os.path.dirname(path) or ".", depth=depth + 1, into=current, budget=budget)
            continue
        if current is None:
            raise loc.error(f"option <{line}> outside of a [section]: job files start with [global] or [jobname]")
        key, sep, value = line.partition("=")
        key = key.rstrip()
        if not key:
            raise loc.error(f"expected option=value, got {line!r}")
        current.entries.append(_Entry(key=key, value=value if sep else None, loc=loc))
    return sections


# --------------------------------------------------------------------------------------------
# Resolution: a job's options applied in order onto the globals, as fio does
# --------------------------------------------------------------------------------------------


@dataclass
class _State:
    """A job (or the global defaults) being built: typed values plus the raw options."""

    name: str = ""
    description: Optional[str] = None
    filename: Optional[str] = None
    directory: Optional[str] = None
    ioengine: str = "psync"  # fio 3.33 on Linux: `fio --cmdhelp=ioengine` says "default: psync"
    iodepth: int = 1
    numjobs: int = 1
    rw: str = "read"  # `fio --cmdhelp=rw`: default read
    rwmixread: int = 50
    bs_read: int = 4096  # `fio --cmdhelp=bs`: default 4096
    bs_write: int = 4096
    size: Optional[int] = None
    size_percent: Optional[float] = None
    io_size: Optional[int] = None
    io_size_percent: Optional[float] = None
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
    # Bare write_*_log: the prefix is the job's name, decided when the job is finished.
    bare_logs: List[str] = field(default_factory=list)
    options: Dict[str, Optional[str]] = field(default_factory=dict)
    job_options: Dict[str, Optional[str]] = field(default_factory=dict)
    unmodelled: List[str] = field(default_factory=list)
    locs: Dict[str, _Loc] = field(default_factory=dict)

    def for_job(self, name: str) -> _State:
        """A new job starting from these (global) values."""
        return dataclasses.replace(
            self,
            name=name,
            bare_logs=list(self.bare_logs),
            options=dict(self.options),
            job_options={},
            unmodelled=list(self.unmodelled),
            locs=dict(self.locs),
        )


def _canonical(key: str) -> str:
    return ALIASES.get(key, key)


def _unknown_option(key: str, loc: _Loc) -> FioJobError:
    if key in _CMD_ACCEPTED or key in _CMD_NOT_A_RUN:
        return loc.error(f"{key!r} is an option of the fio command (--{key}), not a job option", key)
    close = difflib.get_close_matches(key, _all_known_names(), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return loc.error(f"unknown fio option {key!r}{hint}", key)


def _pair(
    value: str,
    prev: Tuple[int, int],
    parse_one: "_ParseOne",
) -> Tuple[int, int]:
    """fio's ``read,write[,trim]`` values (``handle_option`` in parse.c).

    One value applies to reads and writes; ``8k,32k`` gives reads 8k and writes 32k; an empty
    place keeps the value already set: ``,8k`` changes writes only, ``8k,`` reads only.
    A third (trim) value is checked and ignored.
    """
    pieces = value.split(",")
    if len(pieces) > 3:
        raise _Bad(f"{value!r} has more than three comma-separated values (read,write,trim)")
    parsed = [None if p == "" else parse_one(p) for p in pieces]
    if all(p is None for p in parsed):
        raise _Bad("no value given")
    if len(pieces) == 1:
        v = parsed[0]
        assert v is not None
        return v, v
    read, write = prev
    if parsed[0] is not None:
        read = parsed[0]
    if parsed[1] is not None:
        write = parsed[1]
    return read, write


class _ParseOne:
    """A typed parser for one piece of a pair (keeps mypy happy about the closures)."""

    def __init__(self, kind: str, kb_base: int, what: str) -> None:
        self.kind = kind
        self.kb_base = kb_base
        self.what = what

    def __call__(self, text: str) -> int:
        if self.kind == "size":
            return _parse_size(text, self.kb_base)
        return _parse_count(text, self.kb_base, self.what)


def _apply(state: _State, entry: _Entry, *, in_global: bool, readonly_cmd: bool = False) -> None:
    """Apply one option to ``state`` (fio parses a section's options in order onto a copy of the globals)."""
    key = entry.key
    canon = _canonical(key)
    value = entry.value
    loc = entry.loc

    if canon not in _JOB_OPTIONS:
        raise _unknown_option(key, loc)
    if canon in UNSUPPORTED_OPTIONS:
        raise loc.error(
            f"fio option {key!r} is not supported by the ebssim simulator: {UNSUPPORTED_OPTIONS[canon]}", key
        )

    # Does the option need a value?
    if value is None or value == "":
        if canon in _FLAG_OPTIONS:
            if value == "":
                raise loc.error(f"{key}= needs 0 or 1 (or write {key} alone to set it)", key)
        elif canon in _BARE_STRING_OPTIONS and value is None:
            pass
        else:
            example = "1" if canon in _BOOL_OPTIONS else "VALUE"
            raise loc.error(f"option {key!r} needs a value: write {key}={example}", key)

    try:
        _apply_value(state, canon, key, value, in_global=in_global)
    except _Bad as exc:
        shown = key if value is None else f"{key}={value}"
        raise loc.error(f"{shown}: {exc}", key) from None

    state.options[canon] = value
    state.job_options[key] = value
    state.locs[canon] = loc
    if canon in UNMODELLED_OPTIONS:
        # `fsync=0`, `sync=none`, `verify=0` switch the behaviour off again (e.g. in a job, over
        # a global that set it): nothing left to warn about.
        off = value is not None and value in ("0", "none")
        if off and canon in state.unmodelled:
            state.unmodelled.remove(canon)
        elif not off and canon not in state.unmodelled:
            state.unmodelled.append(canon)


def _apply_value(state: _State, canon: str, key: str, value: Optional[str], *, in_global: bool) -> None:
    kb = state.kb_base
    if canon in _FLAG_OPTIONS:
        on = True if value is None else _parse_switch(value)
        if canon in ("time_based", "stonewall", "new_group", "group_reporting"):
            setattr(state, canon, on)
        return
    if canon in _BOOL_OPTIONS:
        assert value is not None
        on = _parse_switch(value)
        if canon in ("log_offset", "per_job_logs"):
            setattr(state, canon, on)
        return
    if canon not in _MODELLED:
        # Ignored, output-only or unmodelled: accepted as written.
        return
    if canon in _BARE_STRING_OPTIONS:
        if value is None:
            if canon not in state.bare_logs:
                state.bare_logs.append(canon)
            setattr(state, canon, None)
        else:
            _check_plain(value)
            if canon in state.bare_logs:
                state.bare_logs.remove(canon)
            setattr(state, canon, value)
        return
    assert value is not None
    if canon == "name":
        # In a job section `name=` renames the job (fio 3.33, run: [a] name=zz reports "zz");
        # in a global section it does not rename the jobs (fio 3.33, run).
        _check_plain(value)
        if not in_global:
            state.name = value
    elif canon == "description":
        state.description = value
    elif canon in ("filename", "directory"):
        _check_plain(value)
        setattr(state, canon, value)
    elif canon == "ioengine":
        _check_plain(value)
        if value not in SYNC_ENGINES and value not in ASYNC_ENGINES and value not in _OTHER_ENGINES:
            if not value.startswith("external:"):
                known = sorted(set(SYNC_ENGINES) | set(ASYNC_ENGINES) | _OTHER_ENGINES)
                close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise _Bad(f"unknown ioengine {value!r}{hint}")
        state.ioengine = value
    elif canon in ("iodepth", "numjobs", "loops"):
        n = _parse_count(value, kb, "a whole number, 1 or more")
        if n < 1:
            raise _Bad("must be 1 or more")
        if canon == "iodepth" and n > MAX_IODEPTH:
            raise _Bad(
                f"{n:,} I/Os in flight per job is more than {MAX_IODEPTH:,}, Linux's default aio-max-nr "
                f"(fio's libaio cannot set up such a queue)"
            )
        if canon == "numjobs" and n > MAX_JOBS:
            raise _Bad(f"{n:,} clones is more than {MAX_JOBS:,}, the most jobs fio runs (its --max-jobs default)")
        setattr(state, canon, n)
    elif canon in ("thinktime_blocks", "log_avg_msec", "log_hist_msec"):
        setattr(state, canon, _parse_count(value, kb, "a whole number"))
    elif canon == "rw":
        _check_plain(value)
        base, colon, _ = value.partition(":")
        if base not in _RW_KINDS and base not in _TRIM_KINDS:
            close = difflib.get_close_matches(base, list(_RW_KINDS) + sorted(_TRIM_KINDS), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise _Bad(f"unknown I/O pattern {base!r}: expected one of {', '.join(_RW_KINDS)}{hint}")
        if colon:
            raise _Bad(
                f"the ':N' modifier of rw ({value!r}: holes in sequential I/O, or a new random offset "
                f"every N I/Os) is not supported by the simulator; write rw={base}"
            )
        # Trim kinds are recorded here and refused when the job is finished, so that a global
        # rw=trim overridden by every job does no harm.
        state.rw = _RW_KINDS.get(base, base)
    elif canon in ("rwmixread", "rwmixwrite"):
        # Setting one sets the other; the later one wins (fio 3.33, run, in files and command lines).
        mix = _parse_count(value, kb, "a percentage 0..100")
        if mix > 100:
            raise _Bad("must be a percentage between 0 and 100")
        state.rwmixread = mix if canon == "rwmixread" else 100 - mix
    elif canon == "bs":
        r, w = _pair(value, (state.bs_read, state.bs_write), _ParseOne("size", kb, "a size"))
        if r < 1 or w < 1:
            raise _Bad("a block size must be at least 1 byte")
        if max(r, w) > MAX_BS:
            raise _Bad(f"a block size of {max(r, w):,} bytes is more than the simulator's limit of 1 GiB per I/O")
        state.bs_read, state.bs_write = r, w
    elif canon == "rate_iops":
        prev = (state.rate_iops_read, state.rate_iops_write)
        state.rate_iops_read, state.rate_iops_write = _pair(
            value, prev, _ParseOne("count", kb, "I/Os per second (0 = no limit)")
        )
    elif canon == "rate":
        prev = (state.rate_read, state.rate_write)
        state.rate_read, state.rate_write = _pair(value, prev, _ParseOne("size", kb, "bytes per second"))
    elif canon in ("size", "io_size"):
        _check_plain(value)
        m = _PCT_RE.match(value)
        if m is not None:
            pct = float(m.group(1))
            if not 0 < pct <= 100:
                raise _Bad("a percentage must be more than 0 and at most 100")
            setattr(state, canon, None)
            setattr(state, canon + "_percent", pct)
        else:
            if value.lower().endswith("z"):
                raise _Bad(f"{value!r}: sizes in zones ('z') are not supported (no zoned devices)")
            n = _parse_size(value, kb)
            setattr(state, canon, n if n > 0 else None)  # 0 means "not set" in fio
            setattr(state, canon + "_percent", None)
    elif canon in ("runtime", "ramp_time"):
        secs = _parse_time(value, 1_000_000)
        if canon == "runtime":
            state.runtime = secs if secs > 0 else None  # runtime=0: no limit, fio's default
        else:
            state.ramp_time = secs
    elif canon in ("thinktime", "thinktime_spin"):
        setattr(state, canon, _parse_time(value, 1))
    elif canon == "thinktime_blocks_type":
        if value not in ("complete", "issue"):
            raise _Bad("expected complete or issue")
        state.thinktime_blocks_type = value
    elif canon == "kb_base":
        if value not in ("1024", "1000"):
            raise _Bad("expected 1024 (fio's default) or 1000")
        state.kb_base = int(value)
    else:  # pragma: no cover - every modelled option is handled above
        raise AssertionError(canon)


def _order_for_file(entries: Sequence[_Entry]) -> List[_Entry]:
    """fio sorts a job-file section's options by priority before parsing them; what matters here is
    that ``kb_base`` goes first (``bs=4k`` then ``kb_base=1000`` in one section gives 4,000-byte
    blocks; fio 3.33, run). On the command line options are parsed in the order given."""
    first = [e for e in entries if _canonical(e.key) == "kb_base"]
    return first + [e for e in entries if _canonical(e.key) != "kb_base"]


# --------------------------------------------------------------------------------------------
# Public results
# --------------------------------------------------------------------------------------------


def _split_paths(value: Optional[str]) -> Tuple[str, ...]:
    """fio's ``filename``/``directory`` lists: ``:``-separated, ``\\:`` for a literal colon."""
    if not value:
        return ()
    parts = re.split(r"(?<!\\):", value)
    return tuple(p.replace("\\:", ":") for p in parts if p)


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
        Whether the engine is synchronous (:data:`SYNC_ENGINES`): one I/O in flight per job.
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
        Accepted options that change real I/O but are not simulated (:data:`UNMODELLED_OPTIONS`).
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

    name: str
    filename: Optional[str] = None
    directory: Optional[str] = None
    ioengine: str = "psync"
    sync_engine: bool = True
    iodepth: int = 1
    numjobs: int = 1
    rw: str = "read"
    rwmixread: int = 50
    bs_read: int = 4096
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
    thinktime_blocks: int = 1
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
    per_job_logs: bool = True
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

    @property
    def filenames(self) -> Tuple[str, ...]:
        """``filename`` split at fio's ``:`` separator."""
        return _split_paths(self.filename)

    @property
    def directories(self) -> Tuple[str, ...]:
        """``directory`` split at fio's ``:`` separator."""
        return _split_paths(self.directory)

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
        """
        kinds: List[Tuple[str, Optional[str]]] = [
            ("iops", self.write_iops_log),
            ("bw", self.write_bw_log),
            ("lat", self.write_lat_log),
            ("clat", self.write_lat_log),
            ("slat", self.write_lat_log),
            ("clat_hist", self.write_hist_log),
        ]
        out: Dict[str, Tuple[str, ...]] = {}
        for kind, prefix in kinds:
            if prefix is None:
                continue
            if self.per_job_logs:
                out[kind] = tuple(f"{prefix}_{kind}.{self.thread_number + i}.log" for i in range(self.numjobs))
            else:
                out[kind] = (f"{prefix}_{kind}.log",)
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
    fio_options : dict
        fio's own command-line options (``output``, ``output-format``, ``eta``, ...), accepted
        and recorded; they are not part of any job.
    global_options : dict
        The global options in effect at the end, as written (fio's JSON ``"global options"``).
    """

    jobs: Tuple[FioJob, ...]
    source: str
    job_files: Tuple[str, ...] = ()
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


# --------------------------------------------------------------------------------------------
# Building the job set
# --------------------------------------------------------------------------------------------


class _Builder:
    """Collects finished jobs, numbering them, their phases and groups as fio's add_job does."""

    def __init__(self, readonly: bool) -> None:
        self.jobs: List[FioJob] = []
        self.readonly = readonly
        self._thread = 1
        self._phase = 0
        self._groupid = 0
        self._jobs_in_group = 0

    def add(self, state: _State, source: str, line: Optional[int]) -> None:
        job = self._finish(state, source, line)
        clones = self._thread - 1 + job.numjobs
        if clones > MAX_JOBS:
            loc = state.locs.get("numjobs", _Loc(source, line))
            raise loc.error(
                f"job {state.name!r}: {clones:,} job clones in this run (numjobs summed over its jobs) is more "
                f"than {MAX_JOBS:,}, the most jobs fio runs (its --max-jobs default)",
                "numjobs",
            )
        if job.stonewall and self.jobs:
            self._phase += 1
        if (job.stonewall or job.new_group) and self._jobs_in_group:
            self._groupid += 1
            self._jobs_in_group = 0
        self._jobs_in_group += job.numjobs
        job = dataclasses.replace(
            job, index=len(self.jobs), thread_number=self._thread, phase=self._phase, groupid=self._groupid
        )
        self._thread += job.numjobs
        self.jobs.append(job)

    def _finish(self, s: _State, source: str, line: Optional[int]) -> FioJob:
        def err(option: str, reason: str) -> FioJobError:
            loc = s.locs.get(option)
            if loc is None:
                loc = _Loc(source, line)
            return loc.error(f"job {s.name!r}: {reason}", option)

        if s.rw in _TRIM_KINDS:
            raise err("rw", f"rw={s.rw}: trim workloads are not supported by the simulator (reads and writes only)")
        if s.ioengine not in SYNC_ENGINES and s.ioengine not in ASYNC_ENGINES:
            raise err(
                "ioengine",
                f"ioengine={s.ioengine} does not issue block I/O the simulator models; use a synchronous "
                f"engine ({', '.join(SYNC_ENGINES)}) or an asynchronous one ({', '.join(ASYNC_ENGINES)})",
            )
        io_size = s.io_size
        if s.io_size_percent is not None:
            # fio's HOWTO: "io_size=N%" multiplies size.
            if s.size is None:
                raise err(
                    "io_size",
                    f"io_size={s.io_size_percent:g}% is a percentage of size, which is not known in bytes "
                    f"here; give size in bytes or io_size in bytes",
                )
            io_size = int(s.size * s.io_size_percent / 100.0)
        if s.time_based and s.runtime is None:
            raise err(
                "time_based",
                "time_based is set but runtime is not: fio would run until stopped; set runtime",
            )
        if self.readonly and s.rw not in ("read", "randread"):
            raise err("rw", f"rw={s.rw} writes, but the command line has --readonly (fio refuses this job too)")
        logs = {k: getattr(s, k) for k in _BARE_STRING_OPTIONS}
        for k in s.bare_logs:
            logs[k] = s.name
        # Every FioJob field the builder also has is copied as is; the rest is resolved here.
        fields: Dict[str, Any] = {
            f.name: getattr(s, f.name) for f in dataclasses.fields(FioJob) if f.init and hasattr(s, f.name)
        }
        fields.update(
            sync_engine=s.ioengine in SYNC_ENGINES,
            io_size=io_size,
            options=dict(s.options),
            job_options=dict(s.job_options),
            unmodelled=tuple(s.unmodelled),
            source=source,
            line=line,
            **logs,
        )
        return FioJob(**fields)


def _run_sections(
    sections: Sequence[_Section],
    globals_: _State,
    builder: _Builder,
    *,
    stonewall_first: bool,
    only: Optional[Sequence[str]] = None,
) -> _State:
    """Jobs of one job file, added to ``builder``; returns the global state at the end."""
    for sec in sections:
        if only and not sec.is_global and sec.name not in only:
            continue
        if sec.is_global:
            for e in _order_for_file(sec.entries):
                _apply(globals_, e, in_global=True)
            continue
        job = globals_.for_job(sec.name)
        if stonewall_first:
            # fio: "Separate multiple job files by a stonewall" (init.c __parse_jobs_ini).
            job.stonewall = True
            stonewall_first = False
        for e in _order_for_file(sec.entries):
            _apply(job, e, in_global=False)
        builder.add(job, sec.loc.source, sec.loc.line)
    return globals_


def _read_job_text(path: str, budget: Optional[List[int]]) -> str:
    """Raises OSError, ValueError (not a regular file, too large) or UnicodeDecodeError."""
    left = MAX_JOB_FILE_BYTES if budget is None else max(0, budget[0])
    data = read_bounded(path, left, "fio job files (with their includes)", "ebssim.fio.jobs.MAX_JOB_FILE_BYTES")
    if budget is not None:
        budget[0] -= len(data)
    return data.decode("utf-8")


def _read_text(path: str, loc: Optional[_Loc], budget: Optional[List[int]] = None) -> str:
    """A job file's text; ``budget`` holds the bytes that the RUN may still read (includes too)."""
    try:
        return _read_job_text(path, budget)
    except OSError as exc:
        reason = f"cannot read job file {path!r}: {exc.strerror}"
    except UnicodeDecodeError:
        reason = f"job file {path!r} is not UTF-8 text"
    except ValueError as exc:  # not a regular file, too large, or a NUL byte in the name
        reason = f"cannot read job file {path!r}: {exc}"
    if loc is not None:
        raise loc.error(reason)
    raise FioJobError(reason, source=path)


def _raw_global_options(sections: Sequence[_Section], start: Dict[str, Optional[str]]) -> Dict[str, Optional[str]]:
    out = dict(start)
    for sec in sections:
        if sec.is_global:
            for e in sec.entries:
                out[e.key] = e.value
    return out


def _looks_like_text(s: str) -> bool:
    return "\n" in s or s.lstrip().startswith("[")


def parse_job_file(path_or_text: PathLike, *, source: Optional[str] = None) -> FioJobSet:
    """Parse a fio job file.

    Parameters
    ----------
    path_or_text : str or os.PathLike
        A path to a job file, or the text of one (a string containing a newline or starting
        with ``[``).
    source : str, optional
        Name used in messages and in :attr:`FioJob.source`; default: the path, or
        ``"<job file>"`` for text.

    Returns
    -------
    FioJobSet

    Raises
    ------
    FioJobError
        For anything fio would reject or the simulator cannot represent; the message names the
        file, the line, the option and what was expected.

    Notes
    -----
    Follows fio 3.33: ``[global]`` sections (any section whose name starts with ``global``) set
    defaults for the jobs after them, and a later ``[global]`` changes them for later jobs only;
    ``key=value`` lines, bare flags (``time_based``), ``;`` and ``#`` comments, ``include FILE``.
    """
    budget = [MAX_JOB_FILE_BYTES]
    if isinstance(path_or_text, str) and _looks_like_text(path_or_text):
        text = path_or_text
        budget[0] -= len(text)
        name = source or "<job file>"
        base_dir = "."
        files: Tuple[str, ...] = ()
    else:
        path = os.fspath(path_or_text)
        name = source or path
        text = _read_text(path, None, budget)
        base_dir = os.path.dirname(path) or "."
        files = (path,)
    sections = _split_sections(text, name, base_dir, budget=budget)
    builder = _Builder(readonly=False)
    _run_sections(sections, _State(), builder, stonewall_first=False)
    if not builder.jobs:
        raise FioJobError("no jobs defined: a job file needs at least one [jobname] section", source=name)
    return FioJobSet(
        jobs=tuple(builder.jobs),
        source=name,
        job_files=files,
        global_options=_raw_global_options(sections, {}),
    )


def _is_fio(word: str) -> bool:
    return os.path.basename(word) == "fio"


def _take_value(argv: Sequence[str], i: int, value: Optional[str], loc: _Loc, name: str) -> Tuple[str, int]:
    """The value of ``--name=value``, or of ``--name value`` (then the next argument is used up).

    fio's getopt would take the next argument even when it is another option; ebssim refuses that
    (``--write_iops_log --bs=4k`` would name a log "--bs=4k" and drop the block size).
    """
    if value is not None:
        return value, i
    if i < len(argv) and not (argv[i].startswith("-") and len(argv[i]) > 1):
        return argv[i], i + 1
    example = "1" if _canonical(name) in _BOOL_OPTIONS else "VALUE"
    raise loc.error(f"--{name} needs a value: write --{name}={example}", name)


def parse_command_line(cmd: Union[str, Sequence[str]], *, cwd: Optional[PathLike] = None) -> FioJobSet:
    """Parse a fio command line.

    Parameters
    ----------
    cmd : str or sequence of str
        ``"fio --name=a --rw=randread ... [jobfile ...]"`` (split like a shell would), or an
        argv list with or without ``"fio"`` first.
    cwd : str or os.PathLike, optional
        Directory that relative job file paths are relative to; default: the current directory.

    Returns
    -------
    FioJobSet

    Raises
    ------
    FioJobError
        The message names the argument, the option and what was expected.

    Notes
    -----
    As fio 3.33 does (checked by running it):

    * ``--name=X`` starts job X; options before the first ``--name`` are global, and
      ``--name=global`` returns to the globals. Options after ``--name=X`` belong to X, even when
      a job file comes between them.
    * ``--opt=value`` or ``--opt value``; flags such as ``--time_based`` take no separate value
      (``--time_based=1`` works). A single dash (``-name=x``) works too.
    * Positional arguments are job files. Command-line jobs run first, then the job files' jobs
      in order; the first job file sees the command-line globals, later ones start from fio's
      defaults, and each later file's first job has an implicit stonewall.
    * fio's own options (``--output``, ``--output-format``, ``--eta``, ``--status-interval``,
      ``--minimal``, ...) are recorded in :attr:`FioJobSet.fio_options`. ``--section`` selects
      sections of the first job file, ``--readonly`` refuses jobs that write.
    """
    if isinstance(cmd, str):
        text = cmd
        try:
            argv = shlex.split(cmd)
        except ValueError as exc:
            raise FioJobError(f"cannot split the command line: {exc}", source=_CMDLINE) from None
        if not argv or not _is_fio(argv[0]):
            first = argv[0] if argv else ""
            raise FioJobError(
                f"a fio command line must begin with 'fio', not {first!r}: expected e.g. "
                f"'fio --name=job --rw=randread --bs=4k --filename=/dev/nvme1n1'",
                source=_CMDLINE,
            )
        argv = argv[1:]
    else:
        argv = [str(a) for a in cmd]
        if argv and _is_fio(argv[0]):
            argv = argv[1:]
        text = " ".join(shlex.quote(a) for a in ["fio", *argv])
    base = os.fspath(cwd) if cwd is not None else None

    globals_ = _State()
    current: Optional[_State] = None
    builder_jobs: List[_State] = []
    files: List[Tuple[str, _Loc]] = []
    fio_options: Dict[str, Optional[str]] = {}
    sections_only: List[str] = []
    global_raw: Dict[str, Optional[str]] = {}

    i = 0
    only_positional = False
    while i < len(argv):
        arg = argv[i]
        index = i + 1
        loc = _Loc(_CMDLINE, argument=arg, index=index)
        i += 1
        if only_positional or arg == "-" or not arg.startswith("-"):
            if arg == "-":
                raise loc.error("reading a job file from standard input ('-') is not supported")
            files.append((arg, loc))
            continue
        if arg == "--":
            only_positional = True
            continue
        body = arg[2:] if arg.startswith("--") else arg[1:]
        key, eq, value_part = body.partition("=")
        value: Optional[str] = value_part if eq else None
        if not key:
            raise loc.error(f"expected --option or --option=value, got {arg!r}")

        if key in _CMD_NOT_A_RUN:
            raise loc.error(f"--{key} {_CMD_NOT_A_RUN[key]}; it is not a run ebssim can simulate", key)
        if key in _CMD_ACCEPTED:
            if _CMD_ACCEPTED[key]:
                v: Optional[str]
                v, i = _take_value(argv, i, value, loc, key)
            else:
                if value is not None:
                    raise loc.error(f"--{key} takes no value", key)
                v = None
            if key == "section":
                assert v is not None
                sections_only.append(v)
            fio_options[key] = v
            continue

        canon = _canonical(key)
        if canon == "name":
            name, i = _take_value(argv, i, value, loc, "name")
            if not name:
                raise loc.error("--name needs a job name: write --name=JOB", "name")
            if current is not None:
                builder_jobs.append(current)
                current = None
            if name.startswith("global"):
                continue  # `--name=global`: what follows is global again
            current = globals_.for_job(name)
            current.job_options["name"] = name
            continue
        if canon in _FLAG_OPTIONS:
            # fio's getopt table: flags never consume the next argument.
            entry_value: Optional[str] = value
        elif canon in _JOB_OPTIONS:
            entry_value, i = _take_value(argv, i, value, loc, key)
        else:
            raise _unknown_option(key, loc)
        entry = _Entry(key=key, value=entry_value, loc=loc)
        if current is not None:
            _apply(current, entry, in_global=False)
        else:
            _apply(globals_, entry, in_global=True)
            global_raw[key] = entry_value
    if current is not None:
        builder_jobs.append(current)

    builder = _Builder(readonly="readonly" in fio_options)
    for state in builder_jobs:
        builder.add(state, _CMDLINE, None)
    job_files: List[str] = []
    budget = [MAX_JOB_FILE_BYTES]
    for n, (path, floc) in enumerate(files):
        full = path if base is None or os.path.isabs(path) else os.path.join(base, path)
        file_text = _read_text(full, floc, budget)
        sections = _split_sections(file_text, path, os.path.dirname(full) or ".", budget=budget)
        # fio resets the globals before every job file after the first (parse_options ->
        # fill_def_thread), and --section only filters the first file (fio 3.33, run).
        start = globals_ if n == 0 else _State()
        _run_sections(
            sections,
            start,
            builder,
            stonewall_first=n > 0,
            only=sections_only if n == 0 else None,
        )
        global_raw = _raw_global_options(sections, global_raw if n == 0 else {})
        job_files.append(path)
    if not builder.jobs:
        raise FioJobError(
            "no jobs defined: give --name=JOB (options before the first --name are global) or a job file",
            source=_CMDLINE,
        )
    return FioJobSet(
        jobs=tuple(builder.jobs),
        source=text,
        job_files=tuple(job_files),
        fio_options=fio_options,
        global_options=global_raw,
    )


def parse_run(run: Union[str, PathLike], *, cwd: Optional[PathLike] = None) -> FioJobSet:
    """Parse one ``RUN`` of ``ebssim fio``: a command line starting with ``fio`` or a job file.

    Parameters
    ----------
    run : str or os.PathLike
        ``"fio --name=..."`` or the path of a job file.
    cwd : str or os.PathLike, optional
        Directory for relative paths; default: the current directory.

    Returns
    -------
    FioJobSet
    """
    if isinstance(run, str):
        stripped = run.strip()
        if stripped == "fio" or stripped.startswith(("fio ", "fio\t")):
            return parse_command_line(stripped, cwd=cwd)
        if cwd is not None and not os.path.isabs(run) and not _looks_like_text(run):
            return parse_job_file(os.path.join(os.fspath(cwd), run), source=run)
    return parse_job_file(run)
