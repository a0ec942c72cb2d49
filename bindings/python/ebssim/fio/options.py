"""fio's options as ebssim knows them (fio 3.33): every option a job may hold, in tables by what ebssim
does with it (modelled into :class:`~ebssim.fio.FioJob` fields, whose defaults are fio's; ignored;
recorded for output; recorded as unmodelled; refused, with why), by kind (flag, boolean, bare string,
``read,write`` pair, ...), with fio's aliases, its own command-line options, its ioengines and ``rw``
patterns, the bounds on values, :data:`FIO_VERSION`, and how one option written in a job file or on a
command line is applied to a job being built.
"""

# How fio's semantics were checked: against fio 3.33 (`fio --cmdhelp=OPTION` for types, defaults and
# aliases; fio's parse.c and init.c for the parsing rules) and by running the real fio, e.g.
# `fio --name=x --filename=/tmp/f --size=1m --bs=4KiB --output-format=json` and reading
# `io_bytes / total_ios` and `groupid` from the JSON. Facts established that way are marked
# "(fio 3.33, run)" in the comments of the fio modules.

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from .job import FioJob, FioJobError, _Loc
from .logs import LOG_OPTIONS
from .values import BadValue, check_plain, parse_count, parse_pair, parse_percent, parse_size, parse_switch, parse_time

__all__ = [
    "ALIASES",
    "ASYNC_ENGINES",
    "FIO_VERSION",
    "IGNORED_OPTIONS",
    "MAX_BS",
    "MAX_IODEPTH",
    "MAX_JOBS",
    "OUTPUT_OPTIONS",
    "RW_KINDS",
    "SYNC_ENGINES",
    "UNMODELLED_OPTIONS",
    "UNSUPPORTED_OPTIONS",
]

#: The fio version whose options, defaults and output ebssim follows (fio prints it as
#: ``fio-3.33``: ``fio --version``, the JSON ``"fio version"``).
FIO_VERSION = "3.33"


#: I/Os in flight per job (``iodepth``): Linux's default ``aio-max-nr``; fio 3.33's libaio fails
#: to set up above it (``iodepth=100000``: "io_queue_init ... Resource temporarily unavailable").
MAX_IODEPTH = 65536
#: Job clones (``numjobs`` summed over the jobs) in one RUN: fio's default ``--max-jobs`` (fio
#: 3.33 stops with "maximum number of jobs reached" at that many).
MAX_JOBS = 4096
#: Bytes per I/O (``bs``): the simulator's limit on one I/O.
MAX_BS = 1 << 30


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

# Options modelled: turned into FioJob fields.
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
_BARE_STRING_OPTIONS: FrozenSet[str] = frozenset(LOG_OPTIONS)

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


def _canonical(key: str) -> str:
    return ALIASES.get(key, key)


def _unknown_option(key: str, loc: _Loc) -> FioJobError:
    if key in _CMD_ACCEPTED or key in _CMD_NOT_A_RUN:
        return loc.error(f"{key!r} is an option of the fio command (--{key}), not a job option", key)
    close = difflib.get_close_matches(key, _all_known_names(), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return loc.error(f"unknown fio option {key!r}{hint}", key)


# --------------------------------------------------------------------------------------------
# Applying options: a job's options in order onto a copy of the globals, as fio does
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One option as written: ``key=value``, or a bare ``key`` (``value`` None)."""

    key: str
    value: Optional[str]
    loc: _Loc


def _field_values(job: FioJob) -> Dict[str, Any]:
    return {f.name: getattr(job, f.name) for f in dataclasses.fields(job)}


@dataclass
class _Draft:
    """A job (or the global defaults) being built.

    ``values`` holds the job's field values so far by :class:`FioJob` field name, starting from
    ``FioJob(name="")``, so that each job field and its fio default is declared in FioJob only (a
    dict rather than a FioJob replaced at each option: a job file may hold 100,000 options). The
    rest is what building needs and a finished job does not.
    """

    values: Dict[str, Any] = field(default_factory=lambda: _field_values(FioJob(name="")))
    io_size_percent: Optional[float] = None  # io_size=N%: a percentage of size, resolved at the end
    # Bare write_*_log: the prefix is the job's name, decided when the job is finished.
    bare_logs: List[str] = field(default_factory=list)
    options: Dict[str, Optional[str]] = field(default_factory=dict)
    job_options: Dict[str, Optional[str]] = field(default_factory=dict)
    unmodelled: List[str] = field(default_factory=list)
    locs: Dict[str, _Loc] = field(default_factory=dict)

    def set(self, **values: Any) -> None:
        """Change field values."""
        self.values.update(values)

    def job(self) -> FioJob:
        """The FioJob of the values so far."""
        return FioJob(**self.values)

    def for_job(self, name: str) -> _Draft:
        """A new job starting from these (global) values."""
        return _Draft(
            values={**self.values, "name": name},
            io_size_percent=self.io_size_percent,
            bare_logs=list(self.bare_logs),
            options=dict(self.options),
            job_options={},
            unmodelled=list(self.unmodelled),
            locs=dict(self.locs),
        )


def _apply(draft: _Draft, entry: _Entry, *, in_global: bool) -> None:
    """Apply one option to ``draft`` (fio parses a section's options in order onto a copy of the globals)."""
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
        _apply_value(draft, canon, value, in_global=in_global)
    except BadValue as exc:
        shown = key if value is None else f"{key}={value}"
        raise loc.error(f"{shown}: {exc}", key) from None

    draft.options[canon] = value
    draft.job_options[key] = value
    draft.locs[canon] = loc
    if canon in UNMODELLED_OPTIONS:
        # `fsync=0`, `sync=none`, `verify=0` switch the behaviour off again (e.g. in a job, over
        # a global that set it): nothing left to warn about.
        off = value is not None and value in ("0", "none")
        if off and canon in draft.unmodelled:
            draft.unmodelled.remove(canon)
        elif not off and canon not in draft.unmodelled:
            draft.unmodelled.append(canon)


def _apply_value(draft: _Draft, canon: str, value: Optional[str], *, in_global: bool) -> None:
    now = draft.values
    kb: int = now["kb_base"]
    if canon in _FLAG_OPTIONS:
        on = True if value is None else parse_switch(value)
        if canon in ("time_based", "stonewall", "new_group", "group_reporting"):
            draft.set(**{canon: on})
        return
    if canon in _BOOL_OPTIONS:
        assert value is not None
        on = parse_switch(value)
        if canon in ("log_offset", "per_job_logs"):
            draft.set(**{canon: on})
        return
    if canon not in _MODELLED:
        # Ignored, output-only or unmodelled: accepted as written.
        return
    if canon in _BARE_STRING_OPTIONS:
        if value is None:
            if canon not in draft.bare_logs:
                draft.bare_logs.append(canon)
        else:
            check_plain(value)
            if canon in draft.bare_logs:
                draft.bare_logs.remove(canon)
        draft.set(**{canon: value})
        return
    assert value is not None
    if canon == "name":
        # In a job section `name=` renames the job (fio 3.33, run: [a] name=zz reports "zz");
        # in a global section it does not rename the jobs (fio 3.33, run).
        check_plain(value)
        if not in_global:
            draft.set(name=value)
    elif canon == "description":
        draft.set(description=value)
    elif canon in ("filename", "directory"):
        check_plain(value)
        draft.set(**{canon: value})
    elif canon == "ioengine":
        check_plain(value)
        if value not in SYNC_ENGINES and value not in ASYNC_ENGINES and value not in _OTHER_ENGINES:
            if not value.startswith("external:"):
                known = sorted(set(SYNC_ENGINES) | set(ASYNC_ENGINES) | _OTHER_ENGINES)
                close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise BadValue(f"unknown ioengine {value!r}{hint}")
        draft.set(ioengine=value)
    elif canon in ("iodepth", "numjobs", "loops"):
        n = parse_count(value, kb, "a whole number, 1 or more")
        if n < 1:
            raise BadValue("must be 1 or more")
        if canon == "iodepth" and n > MAX_IODEPTH:
            raise BadValue(
                f"{n:,} I/Os in flight per job is more than {MAX_IODEPTH:,}, Linux's default aio-max-nr "
                f"(fio's libaio cannot set up such a queue)"
            )
        if canon == "numjobs" and n > MAX_JOBS:
            raise BadValue(f"{n:,} clones is more than {MAX_JOBS:,}, the most jobs fio runs (its --max-jobs default)")
        draft.set(**{canon: n})
    elif canon in ("thinktime_blocks", "log_avg_msec", "log_hist_msec"):
        draft.set(**{canon: parse_count(value, kb, "a whole number")})
    elif canon == "rw":
        check_plain(value)
        base, colon, _ = value.partition(":")
        if base not in _RW_KINDS and base not in _TRIM_KINDS:
            close = difflib.get_close_matches(base, list(_RW_KINDS) + sorted(_TRIM_KINDS), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise BadValue(f"unknown I/O pattern {base!r}: expected one of {', '.join(_RW_KINDS)}{hint}")
        if colon:
            raise BadValue(
                f"the ':N' modifier of rw ({value!r}: holes in sequential I/O, or a new random offset "
                f"every N I/Os) is not supported by the simulator; write rw={base}"
            )
        # Trim kinds are recorded here and refused when the job is finished, so that a global
        # rw=trim overridden by every job does no harm.
        draft.set(rw=_RW_KINDS.get(base, base))
    elif canon in ("rwmixread", "rwmixwrite"):
        # Setting one sets the other; the later one wins (fio 3.33, run, in files and command lines).
        mix = parse_count(value, kb, "a percentage 0..100")
        if mix > 100:
            raise BadValue("must be a percentage between 0 and 100")
        draft.set(rwmixread=mix if canon == "rwmixread" else 100 - mix)
    elif canon == "bs":
        r, w = parse_pair(value, (now["bs_read"], now["bs_write"]), lambda text: parse_size(text, kb))
        if r < 1 or w < 1:
            raise BadValue("a block size must be at least 1 byte")
        if max(r, w) > MAX_BS:
            raise BadValue(f"a block size of {max(r, w):,} bytes is more than the simulator's limit of 1 GiB per I/O")
        draft.set(bs_read=r, bs_write=w)
    elif canon == "rate_iops":
        r, w = parse_pair(
            value,
            (now["rate_iops_read"], now["rate_iops_write"]),
            lambda text: parse_count(text, kb, "I/Os per second (0 = no limit)"),
        )
        draft.set(rate_iops_read=r, rate_iops_write=w)
    elif canon == "rate":
        r, w = parse_pair(value, (now["rate_read"], now["rate_write"]), lambda text: parse_size(text, kb))
        draft.set(rate_read=r, rate_write=w)
    elif canon in ("size", "io_size"):
        check_plain(value)
        pct = parse_percent(value)
        amount: Optional[int] = None
        if pct is None:
            if value.lower().endswith("z"):
                raise BadValue(f"{value!r}: sizes in zones ('z') are not supported (no zoned devices)")
            n = parse_size(value, kb)
            amount = n if n > 0 else None  # 0 means "not set" in fio
        if canon == "size":
            draft.set(size=amount, size_percent=pct)
        else:
            draft.set(io_size=amount)
            draft.io_size_percent = pct
    elif canon in ("runtime", "ramp_time"):
        secs = parse_time(value, 1_000_000)
        if canon == "runtime":
            draft.set(runtime=secs if secs > 0 else None)  # runtime=0: no limit, fio's default
        else:
            draft.set(ramp_time=secs)
    elif canon in ("thinktime", "thinktime_spin"):
        draft.set(**{canon: parse_time(value, 1)})
    elif canon == "thinktime_blocks_type":
        if value not in ("complete", "issue"):
            raise BadValue("expected complete or issue")
        draft.set(thinktime_blocks_type=value)
    elif canon == "kb_base":
        if value not in ("1024", "1000"):
            raise BadValue("expected 1024 (fio's default) or 1000")
        draft.set(kb_base=int(value))
    else:  # pragma: no cover - every modelled option is handled above
        raise AssertionError(canon)


def _order_for_file(entries: Sequence[_Entry]) -> List[_Entry]:
    """fio sorts a job-file section's options by priority before parsing them; what matters here is
    that ``kb_base`` goes first (``bs=4k`` then ``kb_base=1000`` in one section gives 4,000-byte
    blocks; fio 3.33, run). On the command line options are parsed in the order given."""
    first = [e for e in entries if _canonical(e.key) == "kb_base"]
    return first + [e for e in entries if _canonical(e.key) != "kb_base"]
