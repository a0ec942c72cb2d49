"""fio job files and command lines -> resolved jobs (ebssim.fio.jobfile, ebssim.fio.cmdline).

Expected values were checked against the real fio 3.33 where fio's behaviour is not obvious:
each such test says how (typically `fio --output-format=json ...` on a small file, reading
`io_bytes / total_ios`, `groupid` and the log files written).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ebssim.fio import FioJob, FioJobError, FioJobSet, parse_command_line, parse_job_file, parse_run
from ebssim.fio.options import (
    ALIASES,
    ASYNC_ENGINES,
    IGNORED_OPTIONS,
    OUTPUT_OPTIONS,
    SYNC_ENGINES,
    UNMODELLED_OPTIONS,
    UNSUPPORTED_OPTIONS,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DATA = Path(__file__).resolve().parents[1] / "data" / "fio_jobs"
REAL = DATA / "real"
KiB, MiB, GiB = 1024, 1024**2, 1024**3


def write(tmp_path: Path, text: str, name: str = "job.fio") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def one(text: str) -> FioJob:
    (job,) = parse_job_file(text).jobs
    return job


def file_error(tmp_path: Path, text: str, line: int, pattern: str, key: str | None = None) -> FioJobError:
    """Parse ``text`` from a file; the error must name the file and line and match ``pattern``."""
    p = write(tmp_path, text)
    with pytest.raises(FioJobError) as info:
        parse_job_file(p)
    err = info.value
    msg = str(err)
    assert msg.startswith(f"{p}:{line}: "), msg
    assert re.search(pattern, msg), msg
    assert err.source == str(p) and err.line == line
    if key is not None:
        assert err.key == key
    assert isinstance(err, ValueError)
    return err


def cmd_error(cmd: str, argument: str | None, pattern: str) -> FioJobError:
    with pytest.raises(FioJobError) as info:
        parse_command_line(cmd)
    err = info.value
    msg = str(err)
    assert msg.startswith("fio command line"), msg
    if argument is not None:
        assert f"{argument!r}" in msg, msg
        assert err.argument == argument
    assert err.line is None
    assert re.search(pattern, msg), msg
    return err


# --------------------------------------------------------------------------------------------
# The real job files that produced /work/shared/data/fio (fio 3.33)
# --------------------------------------------------------------------------------------------

REAL_EXPECTED = {
    "02a_randread16k_psync_nj4.fio": dict(
        name="rr16k_psync", ioengine="psync", sync_engine=True, iodepth=1, numjobs=4, rw="randread",
        bs_read=16 * KiB, runtime=5.0, log_avg_msec=1000, write_iops_log="rr16k_psync", group_reporting=False,
    ),
    "02b_randread16k_libaio_qd64_nj4.fio": dict(
        name="rr16k_libaio_qd64", ioengine="libaio", sync_engine=False, iodepth=64, numjobs=4, rw="randread",
        bs_read=16 * KiB, runtime=5.0, log_avg_msec=1000, write_iops_log="rr16k_libaio", group_reporting=False,
    ),
    "03a_seqread_1m_qd8.fio": dict(
        name="seq1m_read", ioengine="libaio", sync_engine=False, iodepth=8, numjobs=1, rw="read",
        bs_read=MiB, runtime=5.0, log_avg_msec=1000, write_iops_log="seq1m_read", group_reporting=False,
    ),
    "03b_seqwrite_1m_qd8.fio": dict(
        name="seq1m_write", ioengine="libaio", sync_engine=False, iodepth=8, numjobs=1, rw="write",
        bs_read=MiB, runtime=5.0, log_avg_msec=1000, write_iops_log="seq1m_write", group_reporting=False,
    ),
    "04_groupreport_libaio_qd64_nj4.fio": dict(
        name="rr16k_libaio_qd64_grp", ioengine="libaio", sync_engine=False, iodepth=64, numjobs=4, rw="randread",
        bs_read=16 * KiB, runtime=3.0, log_avg_msec=0, write_iops_log=None, group_reporting=True,
    ),
    "06_clat_hist_log.fio": dict(
        name="hist_qd8", ioengine="libaio", sync_engine=False, iodepth=8, numjobs=1, rw="randread",
        bs_read=4 * KiB, runtime=3.0, log_avg_msec=0, write_iops_log=None, group_reporting=False,
    ),
}  # fmt: skip


def test_every_real_job_file_is_covered():
    assert sorted(p.name for p in REAL.glob("*.fio")) == sorted(REAL_EXPECTED)


@pytest.mark.parametrize("fname", sorted(REAL_EXPECTED))
def test_real_job_files(fname):
    s = parse_job_file(REAL / fname)
    assert isinstance(s, FioJobSet)
    assert s.job_files == (str(REAL / fname),)
    (job,) = s.jobs
    for k, v in REAL_EXPECTED[fname].items():
        assert getattr(job, k) == v, k
    assert job.filename == "/tmp/fiodata/testfile"
    assert job.size == GiB
    assert job.time_based is True
    assert job.options["direct"] == "1"  # accepted and ignored
    assert job.unmodelled == ()
    assert (job.phase, job.groupid, job.thread_number, job.line) == (0, 0, 1, job.line)
    assert job.source == str(REAL / fname)


def test_real_02a_psync_numjobs4():
    s = parse_job_file(REAL / "02a_randread16k_psync_nj4.fio")
    job = s[0]
    assert job.bs == 16384  # bs=16k
    assert job.runtime == 5.0  # runtime=5 is seconds
    assert job.effective_depth == 1 and job.in_flight == 4
    assert job.read_fraction == 1.0 and job.sequential is False
    assert job.line == 15  # the [rr16k_psync] header
    # The 4 clones all carry fio's job name (the JSON has 4 jobs named rr16k_psync), and numbers
    # 1..4, which fio puts in the log file names (rr16k_psync_iops.1.log ... .4.log).
    clones = s.expand()
    assert [c.name for c in clones] == ["rr16k_psync"] * 4
    assert [c.thread_number for c in clones] == [1, 2, 3, 4]
    assert [c.clone_index for c in clones] == [0, 1, 2, 3]
    assert all(c.numjobs == 1 for c in clones)
    logs = job.log_file_names()
    assert set(logs) == {"iops", "bw", "lat", "clat", "slat"}
    assert logs["iops"] == tuple(f"rr16k_psync_iops.{n}.log" for n in (1, 2, 3, 4))
    assert logs["slat"][3] == "rr16k_psync_slat.4.log"
    assert clones[2].log_file_names() == {k: (v[2],) for k, v in logs.items()}


def test_real_02b_libaio_depth():
    job = parse_job_file(REAL / "02b_randread16k_libaio_qd64_nj4.fio")[0]
    assert job.effective_depth == 64 and job.in_flight == 256


def test_real_03_sequential():
    r = parse_job_file(REAL / "03a_seqread_1m_qd8.fio")[0]
    w = parse_job_file(REAL / "03b_seqwrite_1m_qd8.fio")[0]
    assert r.sequential and w.sequential
    assert (r.read_fraction, w.read_fraction) == (1.0, 0.0)
    assert r.bs == w.bs == 1048576
    assert w.log_file_names()["bw"] == ("seq1m_write_bw.1.log",)


def test_real_06_hist_log():
    job = parse_job_file(REAL / "06_clat_hist_log.fio")[0]
    assert job.write_hist_log == "hist" and job.log_hist_msec == 1000
    assert job.options["log_hist_coarseness"] == "0"  # output option, recorded
    assert job.log_file_names() == {"clat_hist": ("hist_clat_hist.1.log",)}  # as fio wrote it


def test_real_05_command_line_psync_iodepth4():
    # Case 05 of the real samples: psync with iodepth=4; fio printed "queue depth will be capped at 1".
    s = parse_command_line(
        "fio --output-format=json --name=psync_qd4 --filename=/tmp/fiodata/testfile --size=1G "
        "--direct=1 --rw=randread --bs=4k --ioengine=psync --iodepth=4 --time_based --runtime=3"
    )
    job = s[0]
    assert job.iodepth == 4 and job.effective_depth == 1
    assert s.fio_options == {"output-format": "json"}


# --------------------------------------------------------------------------------------------
# The fixture job files
# --------------------------------------------------------------------------------------------


def test_four_phase_stonewall():
    # Checked with fio 3.33 on a copy with the filenames pointed at two 4 MiB files and runtime=1:
    # groupids were warm_a 0, warm_b 0, seqwrite_a 1, mixed_b 2, probe_a 3, final 4, and mixed_b
    # (2 clones, rate_iops=2000,500) reported 3991 read and 998 write IOPS: the caps are per clone
    # and per direction.
    s = parse_job_file(DATA / "four_phase_stonewall.fio")
    assert s.names == ("warm_a", "warm_b", "seqwrite_a", "mixed_b", "probe_a", "final")
    phases = s.phases()
    assert [[j.name for j in p] for p in phases] == [
        ["warm_a", "warm_b"],
        ["seqwrite_a"],
        ["mixed_b", "probe_a"],
        ["final"],
    ]
    assert {g: [j.name for j in js] for g, js in s.groups().items()} == {
        0: ["warm_a", "warm_b"],
        1: ["seqwrite_a"],
        2: ["mixed_b"],
        3: ["probe_a"],
        4: ["final"],
    }
    assert [j.thread_number for j in s] == [1, 2, 3, 4, 6, 7]
    assert [j.index for j in s] == list(range(6))
    assert len(s.expand()) == 7
    a, b, seq, mixed, probe, final = s.jobs
    assert a.filename == "/dev/nvme1n1" and b.filename == "/dev/nvme2n1"
    assert a.runtime == 60.0 and a.time_based and a.ioengine == "libaio" and a.in_flight == 32
    assert a.write_iops_log == "warm_a" and b.write_iops_log is None
    assert a.log_file_names() == {"iops": ("warm_a_iops.1.log",)}
    assert seq.stonewall and seq.bs == MiB and seq.sequential and seq.read_fraction == 0.0
    assert mixed.stonewall  # wait_for_previous is stonewall's alias
    assert mixed.options["stonewall"] is None and "wait_for_previous" in mixed.job_options
    assert mixed.rw == "randrw" and mixed.read_fraction == 0.7 and mixed.bs == 16 * KiB
    assert (mixed.rate_iops_read, mixed.rate_iops_write) == (2000, 500)
    assert mixed.numjobs == 2 and mixed.in_flight == 32 and mixed.group_reporting
    assert probe.new_group and not probe.stonewall
    assert probe.sync_engine and probe.effective_depth == 1
    assert probe.thinktime == pytest.approx(500e-6)  # thinktime=500 is 500 microseconds
    assert probe.thinktime_blocks == 1 and probe.runtime == 30.0
    assert final.filenames == ("/dev/nvme1n1", "/dev/nvme2n1")
    assert final.targets == ("/dev/nvme1n1", "/dev/nvme2n1")
    assert final.ramp_time == 5.0 and final.runtime == 120.0
    # Only the first clone keeps stonewall, as fio clears it on the copies.
    c0, c1 = mixed.clones()
    assert (c0.stonewall, c1.stonewall) == (True, False)
    assert (c0.thread_number, c1.thread_number) == (4, 5)


def test_psync_vs_libaio():
    s = parse_job_file(DATA / "psync_vs_libaio.fio")
    psync, libaio, default = s.jobs
    assert psync.iodepth == 4  # the inline "; comment" is not part of the value
    assert (psync.sync_engine, psync.effective_depth, psync.in_flight) == (True, 1, 4)
    assert (libaio.sync_engine, libaio.effective_depth, libaio.in_flight) == (False, 4, 16)
    assert default.ioengine == "psync" and default.iodepth == 8 and default.effective_depth == 1
    assert [[j.name for j in p] for p in s.phases()] == [["psync_qd4"], ["libaio_qd4"], ["default_engine"]]
    assert [j.groupid for j in s] == [0, 1, 2]
    assert [j.thread_number for j in s] == [1, 5, 9]


def test_global_inheritance():
    # Checked with fio 3.33 (filename pointed at a 4 MiB file, size=4m, runtime=1): inherits read
    # 16k blocks; overrides wrote 32k blocks (the later blocksize= wins); after_second_global read
    # 4k and wrote 8k blocks, 74%/26% of I/Os; last read 4k blocks.
    s = parse_job_file(DATA / "global_inheritance.fio")
    assert s.names == ("inherits", "overrides", "after_second_global", "last")
    inherits, overrides, after, last = s.jobs
    assert (inherits.bs, inherits.size, inherits.iodepth, inherits.rw) == (16 * KiB, GiB, 16, "randread")
    assert inherits.filename == "/data/testfile" and inherits.runtime is None and not inherits.time_based
    assert inherits.job_options == {}
    assert (overrides.bs, overrides.rw, overrides.iodepth) == (32 * KiB, "randwrite", 1)
    assert overrides.job_options == {"bs": "64k", "readwrite": "randwrite", "iodepth": "1", "blocksize": "32k"}
    assert overrides.options["rw"] == "randwrite" and overrides.options["bs"] == "32k"
    # The second [global] applies to the jobs after it only.
    assert (after.bs_read, after.bs_write, after.runtime, after.time_based) == (4 * KiB, 8 * KiB, 10.0, True)
    assert after.thinktime == pytest.approx(0.002) and after.thinktime_blocks == 8
    assert after.rw == "rw" and after.rwmixread == 75 and after.read_fraction == 0.75 and after.sequential
    assert after.mean_io_size == pytest.approx(0.75 * 4096 + 0.25 * 8192)
    with pytest.raises(FioJobError, match=r"reads 4096-byte and writes 8192-byte blocks"):
        _ = after.bs
    # [global-extra] is a global section (its name starts with "global").
    assert last.loops == 2 and last.size is None and last.size_percent == 50.0
    assert last.bs == 4 * KiB and last.rw == "randread"
    assert s.global_options["loops"] == "2" and s.global_options["bs"] == "4k,8k"


# --------------------------------------------------------------------------------------------
# Values: sizes, times, pairs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, kb_base, expected",
    [
        ("4096", 1024, 4096),
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4kb", 1024, 4096),
        ("4KB", 1024, 4096),
        # fio's compatibility mode: with kb_base=1024 the IEC forms are powers of 1000. Checked
        # with fio 3.33: bs=4KiB and bs=4kib issued 4,000-byte I/Os (263 I/Os for 1 MiB).
        ("4KiB", 1024, 4000),
        ("4kib", 1024, 4000),
        ("1m", 1024, MiB),
        ("1MiB", 1024, 1000**2),
        ("1g", 1024, GiB),
        ("1t", 1024, 1024**4),
        ("1p", 1024, 1024**5),
        ("4b", 1024, 4),
        ("0x1000", 1024, 4096),
        # kb_base=1000: SI prefixes are powers of 1000, IEC ones powers of 1024 (fio 3.33, run:
        # kb_base=1000 with bs=4k issued 4,000-byte I/Os).
        ("4k", 1000, 4000),
        ("4KiB", 1000, 4096),
        ("1m", 1000, 1000**2),
    ],
)
def test_size_suffixes(value, kb_base, expected):
    # size, not bs: bs is limited to 1 GiB (the simulator's limit on one I/O).
    job = one(f"[global]\nkb_base={kb_base}\n[j]\nsize={value}\n")
    assert job.size == expected
    assert job.kb_base == kb_base


def test_kb_base_in_a_section_applies_to_the_whole_section():
    # fio sorts a section's options before parsing: bs=4k then kb_base=1000 gives 4,000-byte blocks
    # (fio 3.33, run). On the command line options apply in order, so kb_base must come first.
    assert one("[j]\nbs=4k\nkb_base=1000\n").bs == 4000
    assert parse_command_line("fio --name=j --kb_base=1000 --bs=4k")[0].bs == 4000
    assert parse_command_line("fio --name=j --bs=4k --kb_base=1000")[0].bs == 4096


@pytest.mark.parametrize(
    "option, value, seconds",
    [
        ("runtime", "5", 5.0),  # runtime: a plain number is seconds
        ("runtime", "5s", 5.0),
        ("runtime", "1500ms", 1.5),
        ("runtime", "1500msec", 1.5),
        ("runtime", "2m", 120.0),  # m is minutes for times
        ("runtime", "1h", 3600.0),
        ("runtime", "1d", 86400.0),
        ("runtime", "250000us", 0.25),
        ("timeout", "7", 7.0),  # alias
        ("ramp_time", "10", 10.0),
        ("ramp_time", "500ms", 0.5),
        ("thinktime", "500", 500e-6),  # thinktime: a plain number is microseconds
        ("thinktime", "2ms", 0.002),
        ("thinktime", "1s", 1.0),
        ("thinktime_spin", "100", 100e-6),
    ],
)
def test_time_suffixes(option, value, seconds):
    job = one(f"[j]\n{option}={value}\n")
    attr = "runtime" if option == "timeout" else option
    assert getattr(job, attr) == pytest.approx(seconds)


def test_runtime_zero_is_no_limit():
    assert one("[j]\nruntime=0\n").runtime is None
    assert one("[j]\n").runtime is None


@pytest.mark.parametrize(
    "globals_bs, job_bs, read, write",
    [
        ("", "4k", 4096, 4096),
        ("", "4k,64k", 4096, 65536),
        ("", "4k,64k,8k", 4096, 65536),  # the trim size is checked and ignored
        ("bs=16k", ",8k", 16384, 8192),  # an empty place keeps the value already set
        ("bs=16k", "8k,", 8192, 16384),
        ("bs=16k", "", 16384, 16384),
    ],
)
def test_bs_read_write_pairs(globals_bs, job_bs, read, write):
    job_line = f"bs={job_bs}\n" if job_bs else ""
    job = one(f"[global]\n{globals_bs}\n[j]\nrw=randrw\n{job_line}")
    assert (job.bs_read, job.bs_write) == (read, write)


def test_rate_iops_and_rate():
    job = one("[j]\nrate_iops=500\n")
    assert (job.rate_iops_read, job.rate_iops_write) == (500, 500)
    job = one("[j]\nrate_iops=2000,500\nrate=1m,512k\n")
    assert (job.rate_iops_read, job.rate_iops_write) == (2000, 500)
    assert (job.rate_read, job.rate_write) == (MiB, 512 * KiB)
    job = one("[j]\n")
    assert (job.rate_iops_read, job.rate_iops_write, job.rate_read, job.rate_write) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "rw, canonical, read_fraction, sequential",
    [
        ("read", "read", 1.0, True),
        ("write", "write", 0.0, True),
        ("randread", "randread", 1.0, False),
        ("randwrite", "randwrite", 0.0, False),
        ("rw", "rw", 0.5, True),
        ("readwrite", "rw", 0.5, True),
        ("randrw", "randrw", 0.5, False),
    ],
)
def test_rw_kinds(rw, canonical, read_fraction, sequential):
    job = one(f"[j]\nrw={rw}\n")
    assert (job.rw, job.read_fraction, job.sequential) == (canonical, read_fraction, sequential)
    assert job.reads == (read_fraction > 0) and job.writes == (read_fraction < 1)


def test_rwmix_last_one_wins():
    # fio 3.33, run: rwmixwrite=30 then rwmixread=90 gave 89% reads; the reverse order 69%.
    assert one("[j]\nrw=randrw\nrwmixwrite=30\nrwmixread=90\n").rwmixread == 90
    assert one("[j]\nrw=randrw\nrwmixread=90\nrwmixwrite=30\n").rwmixread == 70
    assert one("[j]\nrw=randrw\n").rwmixread == 50


def test_defaults():
    # fio 3.33 defaults, from `fio --cmdhelp=OPTION`.
    job = one("[j]\n")
    assert (job.ioengine, job.sync_engine, job.iodepth, job.numjobs) == ("psync", True, 1, 1)
    assert (job.rw, job.bs, job.rwmixread, job.size, job.io_size) == ("read", 4096, 50, None, None)
    assert (job.runtime, job.time_based, job.ramp_time, job.loops) == (None, False, 0.0, 1)
    assert (job.thinktime, job.thinktime_blocks, job.thinktime_blocks_type) == (0.0, 1, "complete")
    assert (job.stonewall, job.new_group, job.group_reporting) == (False, False, False)
    assert (job.log_avg_msec, job.log_offset, job.per_job_logs, job.kb_base) == (0, False, True, 1024)
    assert job.filename is None and job.directory is None and job.targets == ()


@pytest.mark.parametrize("engine", SYNC_ENGINES)
def test_sync_engines_cap_depth(engine):
    # fio 3.33, run with iodepth=4: each printed "queue depth will be capped at 1".
    job = one(f"[j]\nioengine={engine}\niodepth=4\nnumjobs=3\n")
    assert job.sync_engine and job.effective_depth == 1 and job.in_flight == 3


@pytest.mark.parametrize("engine", ASYNC_ENGINES)
def test_async_engines_use_iodepth(engine):
    job = one(f"[j]\nioengine={engine}\niodepth=4\nnumjobs=3\n")
    assert not job.sync_engine and job.effective_depth == 4 and job.in_flight == 12


def test_size_and_io_size():
    assert one("[j]\nsize=50%\n").size_percent == 50.0
    job = one("[j]\nsize=1g\nio_size=50%\n")
    assert (job.size, job.io_size) == (GiB, GiB // 2)
    job = one("[j]\nsize=10g\nio_limit=2g\n")
    assert (job.size, job.io_size) == (10 * GiB, 2 * GiB)
    assert one("[j]\nsize=0\n").size is None  # 0: the whole file, as in fio


def test_logs_bare_prefix_and_per_job_logs():
    # fio 3.33, run: a bare write_iops_log in job a wrote a_iops.N.log; per_job_logs=0 wrote
    # pa_iops.log once for 2 clones.
    job = one("[a]\nnumjobs=2\nwrite_iops_log\nwrite_lat_log=p\n")
    assert job.write_iops_log == "a"
    assert job.log_file_names()["iops"] == ("a_iops.1.log", "a_iops.2.log")
    assert job.log_file_names()["clat"] == ("p_clat.1.log", "p_clat.2.log")
    job = one("[a]\nnumjobs=2\nper_job_logs=0\nwrite_iops_log=pa\nlog_offset=1\n")
    assert job.log_file_names() == {"iops": ("pa_iops.log",)}
    assert job.log_offset is True
    # A bare prefix in [global] becomes each job's own name.
    s = parse_job_file("[global]\nwrite_bw_log\n[x]\n[y]\n")
    assert [j.write_bw_log for j in s] == ["x", "y"]


def test_name_option_renames_a_job_but_not_from_global():
    # fio 3.33, run: [a] name=zz reports as "zz"; name=gg in [global] leaves a and b alone.
    assert one("[a]\nname=zz\n").name == "zz"
    assert parse_job_file("[global]\nname=gg\n[a]\n[b]\n").names == ("a", "b")


def test_targets():
    assert one("[j]\nfilename=/dev/xvdf\n").targets == ("/dev/xvdf",)
    assert one("[j]\ndirectory=/mnt/data\n").targets == ("/mnt/data",)
    assert one("[j]\ndirectory=/mnt/data\nfilename=f1:f2\n").targets == ("/mnt/data/f1", "/mnt/data/f2")
    assert one("[j]\nfilename=/a\\:b:/c\n").filenames == ("/a:b", "/c")


def test_accepted_options_are_recorded():
    job = one(
        "[j]\ndirect=1\nrandrepeat=0\nnorandommap\nclocksource=gettimeofday\ngtod_reduce=1\n"
        "refill_buffers\nfsync=32\nverify=crc32c\npercentile_list=50:99\ndescription=a test job\n"
    )
    assert job.options["norandommap"] is None and job.options["direct"] == "1"
    assert job.options["percentile_list"] == "50:99"
    assert job.unmodelled == ("fsync", "verify")
    assert job.description == "a test job"
    # Switched off again in the job: nothing unmodelled is left.
    s = parse_job_file("[global]\nfsync=8\nsync=1\n[a]\n[b]\nfsync=0\nsync=none\n")
    assert [j.unmodelled for j in s] == [("fsync", "sync"), ()]


def test_option_categories_are_disjoint_and_known():
    cats = [IGNORED_OPTIONS, OUTPUT_OPTIONS, UNMODELLED_OPTIONS, frozenset(UNSUPPORTED_OPTIONS)]
    for i, a in enumerate(cats):
        for b in cats[i + 1 :]:
            assert not a & b
    known = frozenset().union(*cats)
    assert set(ALIASES.values()) - {"rw", "bs", "io_size", "runtime", "stonewall"} <= known


def test_include(tmp_path):
    (tmp_path / "common.inc").write_text("bs=64k\niodepth=8\n")
    p = write(tmp_path, "[j]\nioengine=libaio\ninclude common.inc\n")
    job = parse_job_file(p).jobs[0]
    assert (job.bs, job.effective_depth) == (64 * KiB, 8)


def test_trim_in_global_overridden_is_fine():
    assert one("[global]\nrw=trim\n[j]\nrw=read\n").rw == "read"


def test_comments_blank_lines_and_crlf():
    text = "; comment\r\n\r\n# another\r\n[j]  \r\n  bs =8k  ; why\r\nrw=write#c\r\n"
    job = one(text)
    assert (job.bs, job.rw, job.name) == (8192, "write", "j")
    # A blank after '=' is kept by fio (it then runs "bs = 8k" with 8-byte blocks, fio 3.33, run).
    with pytest.raises(FioJobError, match=r"<job file>:5: bs= 8k: ' 8k' has spaces around it"):
        one(text.replace("bs =8k", "bs = 8k"))


def test_text_and_path_inputs(tmp_path):
    p = write(tmp_path, "[j]\nbs=8k\n")
    assert parse_job_file(p)[0].bs == 8192
    assert parse_job_file(str(p))[0].source == str(p)
    s = parse_job_file("[j]\nbs=8k\n", source="inline.fio")
    assert s.source == "inline.fio" and s[0].source == "inline.fio" and s[0].line == 1
    assert s.job("j").bs == 8192
    with pytest.raises(KeyError, match="no job named 'x'"):
        s.job("x")


# --------------------------------------------------------------------------------------------
# Phases and reporting groups
# --------------------------------------------------------------------------------------------


def test_phase_and_group_rules():
    # fio 3.33, run: [a] stonewall / [b] new_group / [c] / [d] stonewall new_group gave groupids
    # 0, 1, 1, 2 (a stonewall on the first job starts nothing new).
    s = parse_job_file("[a]\nstonewall\n[b]\nnew_group\n[c]\n[d]\nstonewall\nnew_group\n")
    assert [j.groupid for j in s] == [0, 1, 1, 2]
    assert [j.phase for j in s] == [0, 0, 0, 1]
    assert [[j.name for j in p] for p in s.phases()] == [["a", "b", "c"], ["d"]]


def test_global_stonewall_runs_jobs_one_by_one():
    # fio 3.33, run: [global] stonewall, [a] numjobs=2, [b], [c] new_group -> groupids 0, 0, 1, 2.
    s = parse_job_file("[global]\nstonewall\n[a]\nnumjobs=2\n[b]\n[c]\nnew_group\n")
    assert [j.groupid for j in s] == [0, 1, 2]
    assert [[j.name for j in p] for p in s.phases()] == [["a"], ["b"], ["c"]]
    assert [c.groupid for c in s.expand()] == [0, 0, 1, 2]


def test_stonewall_values():
    assert one("[j]\nstonewall=0\n").stonewall is False
    assert one("[j]\nstonewall=2\n").stonewall is True  # fio: any non-zero number
    assert one("[j]\nwait_for_previous\n").stonewall is True
    assert one("[j]\ntime_based=0\nruntime=1\n").time_based is False


# --------------------------------------------------------------------------------------------
# Command lines
# --------------------------------------------------------------------------------------------


def test_command_line_basic_forms():
    s = parse_command_line(
        "fio --name=a --filename=/dev/xvdf --bs 8k --time_based --runtime=2 --rw=randread "
        "--ioengine=libaio --iodepth=16 --numjobs=2"
    )
    (a,) = s.jobs
    assert (a.name, a.bs, a.time_based, a.runtime, a.in_flight) == ("a", 8192, True, 2.0, 32)
    assert a.source == "fio command line" and a.line is None
    assert a.job_options["name"] == "a" and a.options["bs"] == "8k"
    # argv lists, with or without "fio", and a path to fio, and single-dash options (fio uses
    # getopt_long_only: `fio -name=a -bs=8k` works, fio 3.33, run).
    for argv in (
        ["fio", "--name=a", "--bs=8k"],
        ["--name=a", "--bs=8k"],
        ["/usr/bin/fio", "-name=a", "-bs=8k"],
    ):
        assert parse_command_line(argv)[0].bs == 8192
    assert parse_command_line("/usr/bin/fio --name=a --bs=8k")[0].bs == 8192


def test_command_line_globals_and_jobs():
    s = parse_command_line(
        "fio --bs=16k --rw=randread --name=a --bs=8k --name=b --name=global --iodepth=4 --ioengine=libaio --name=c"
    )
    a, b, c = s.jobs
    assert (a.bs, b.bs, c.bs) == (8192, 16384, 16384)  # --bs after --name=a is a's own
    assert (a.iodepth, b.iodepth, c.iodepth) == (1, 1, 4)  # --name=global returns to the globals
    assert c.effective_depth == 4
    assert s.global_options == {"bs": "16k", "rw": "randread", "iodepth": "4", "ioengine": "libaio"}
    assert [j.thread_number for j in s] == [1, 2, 3]


def test_command_line_output_options_are_recorded():
    s = parse_command_line(
        "fio --output-format=json+ --output out.json --eta=never --eta-newline=5 --status-interval=10 "
        "--minimal --terse-version=3 --append-terse --name=a"
    )
    assert s.fio_options == {
        "output-format": "json+",
        "output": "out.json",
        "eta": "never",
        "eta-newline": "5",
        "status-interval": "10",
        "minimal": None,
        "terse-version": "3",
        "append-terse": None,
    }
    assert all(k not in s[0].options for k in s.fio_options)


def test_command_line_with_job_files(tmp_path):
    # fio 3.33, run: command-line jobs start first whatever the order of arguments; command-line
    # globals apply to the first job file only; fio resets the globals for every later job file
    # and gives its first job a stonewall (g1.fio g2.fio: b got 4k blocks and groupid 1).
    write(tmp_path, "[global]\nbs=8k\n[f1a]\n[f1b]\n", "one.fio")
    write(tmp_path, "[f2a]\n[f2b]\n", "two.fio")
    s = parse_command_line(f"fio --iodepth=8 --ioengine=libaio {tmp_path}/one.fio --name=c {tmp_path}/two.fio")
    assert s.names == ("c", "f1a", "f1b", "f2a", "f2b")
    assert [j.bs for j in s] == [4096, 8192, 8192, 4096, 4096]
    assert [j.iodepth for j in s] == [8, 8, 8, 1, 1]
    assert [j.phase for j in s] == [0, 0, 0, 1, 1]
    assert [j.groupid for j in s] == [0, 0, 0, 1, 1]
    assert [j.stonewall for j in s] == [False, False, False, True, False]
    assert s.job_files == (f"{tmp_path}/one.fio", f"{tmp_path}/two.fio")
    assert s[1].source == f"{tmp_path}/one.fio" and s[1].line == 3
    # Relative paths against cwd.
    s = parse_command_line(["fio", "one.fio"], cwd=tmp_path)
    assert s.names == ("f1a", "f1b") and s.job_files == ("one.fio",)


def test_command_line_section_filter(tmp_path):
    # fio 3.33, run: --section=a ran a from the first file and every job of the second.
    write(tmp_path, "[global]\nbs=8k\n[a]\n[b]\n", "s1.fio")
    write(tmp_path, "[a]\n[c]\n", "s2.fio")
    s = parse_command_line(["fio", "--section=a", "s1.fio", "s2.fio"], cwd=tmp_path)
    assert s.names == ("a", "a", "c")
    assert s[0].bs == 8192
    s = parse_command_line(["fio", "--section", "a", "--section=b", "s1.fio"], cwd=tmp_path)
    assert s.names == ("a", "b")


def test_parse_run(tmp_path):
    p = write(tmp_path, "[j]\nbs=8k\n")
    assert parse_run(str(p))[0].bs == 8192
    assert parse_run("job.fio", cwd=tmp_path)[0].bs == 8192
    assert parse_run("  fio --name=x --bs=2k ")[0].bs == 2048


def test_readonly():
    assert parse_command_line("fio --readonly --name=a --rw=randread")[0].rw == "randread"
    cmd_error(
        "fio --readonly --name=a --rw=randwrite", "--rw=randwrite", r"writes, but the command line has --readonly"
    )


# --------------------------------------------------------------------------------------------
# Errors: each names the file and line (or the argument), the option and what was expected
# --------------------------------------------------------------------------------------------


def test_error_unknown_option(tmp_path):
    err = file_error(tmp_path, "[global]\nrw=read\n[j]\nblocksiz=4k\n", 4, r"unknown fio option 'blocksiz'", "blocksiz")
    assert "did you mean" in str(err) and "'blocksize'" in str(err)
    file_error(tmp_path, "[j]\nruntim=5\n", 2, r"did you mean 'runtime'")
    file_error(tmp_path, "[j]\noutput=x.json\n", 2, r"'output' is an option of the fio command \(--output\)")


def test_error_unknown_option_in_global_needs_no_job(tmp_path):
    file_error(tmp_path, "[global]\nioengin=libaio\n", 2, r"did you mean 'ioengine'")


def test_error_bad_size_suffix(tmp_path):
    # fio 3.33, run: bs=4q issued 4-byte I/Os without a word.
    file_error(
        tmp_path, "[j]\nbs=4q\n", 2, r"bs=4q: '4q' has an unknown size suffix 'q' \(fio would silently read 4 bytes\)"
    )
    file_error(tmp_path, "[j]\nsize=10x\n", 2, r"size=10x: .*unknown size suffix")
    file_error(tmp_path, "[j]\nbs=4kq\n", 2, r"unknown size suffix 'kq': expected a whole number of bytes")
    file_error(tmp_path, "[j]\nbs=0.5k\n", 2, r"not a whole number")
    file_error(tmp_path, "[j]\nbs=0\n", 2, r"at least 1 byte")
    file_error(tmp_path, "[j]\nbs=4k,8k,1k,2k\n", 2, r"more than three")


def test_error_space_after_equals(tmp_path):
    # fio 3.33, run: "bs= 8k" keeps the space and issues 8-byte I/Os.
    file_error(tmp_path, "[j]\nbs= 8k\n", 2, r"has spaces around it.*remove the space")


def test_error_bad_number(tmp_path):
    file_error(
        tmp_path,
        "[j]\niodepth=abc\n",
        2,
        r"iodepth=abc: 'abc' is not a number: expected a whole number, 1 or more",
        "iodepth",
    )
    file_error(tmp_path, "[j]\nnumjobs=1.5\n", 2, r"not a whole number")
    file_error(tmp_path, "[j]\nnumjobs=0\n", 2, r"must be 1 or more")
    file_error(tmp_path, "[j]\nrwmixread=101\n", 2, r"between 0 and 100")
    file_error(tmp_path, "[j]\ndirect=yes\n", 2, r"direct=yes: 'yes' is not 0 or 1")
    file_error(tmp_path, "[j]\ntime_based=yes\n", 2, r"not 0 or 1")
    file_error(tmp_path, "[j]\nkb_base=1001\n", 2, r"expected 1024 \(fio's default\) or 1000")
    file_error(tmp_path, "[j]\nsize=150%\n", 2, r"at most 100")
    file_error(tmp_path, "[j]\nbs=(2*4k)\n", 2, r"arithmetic expressions are not supported")
    # fio substitutes ${VAR} (ebssim too: tests/python/test_fio_substitution.py); $NAME it keeps as it is
    file_error(tmp_path, "[j]\nsize=$SIZE\n", 2, r"fio takes this '\$' as it is", "size")


def test_error_bad_time(tmp_path):
    # fio 3.33, run: runtime=2sec ran for ~0 s (2 us); runtime=1.5s ran 1 s.
    file_error(tmp_path, "[j]\nruntime=2sec\n", 2, r"unknown time suffix 'sec'.*use us, ms, s, m, h or d", "runtime")
    file_error(tmp_path, "[j]\nruntime=1.5s\n", 2, r"not a whole number.*1500ms")
    file_error(tmp_path, "[j]\nthinktime=fast\n", 2, r"'fast' is not a time")


def test_error_job_without_name(tmp_path):
    file_error(tmp_path, "[global]\nbs=4k\n[]\nrw=read\n", 3, r"a job section needs a name")
    file_error(tmp_path, "[job\nrw=read\n", 1, r"must look like \[jobname\]")
    file_error(tmp_path, "bs=4k\n[j]\n", 1, r"outside of a \[section\]")
    cmd_error("fio --name= --bs=4k", "--name=", r"--name needs a job name")
    with pytest.raises(FioJobError, match=r"job.fio: no jobs defined"):
        parse_job_file(write(tmp_path, "[global]\nbs=4k\n"))
    cmd_error("fio --bs=4k --rw=randread", None, r"no jobs defined: give --name=JOB")


def test_error_unsupported_rw(tmp_path):
    err = file_error(
        tmp_path, "[j]\nrw=randomread\n", 2, r"unknown I/O pattern 'randomread'.*did you mean randread", "rw"
    )
    assert "expected one of read, write, randread, randwrite, rw, readwrite, randrw" in str(err)
    file_error(tmp_path, "[j]\nrw=randread:8\n", 2, r"':N' modifier of rw .* not supported")


@pytest.mark.parametrize("kind", ["trim", "randtrim", "trimwrite", "randtrimwrite"])
def test_error_trim(tmp_path, kind):
    file_error(tmp_path, f"[j]\nbs=4k\nrw={kind}\n", 3, rf"job 'j': rw={kind}: trim workloads are not supported", "rw")


def test_error_trim_from_global_names_the_global_line(tmp_path):
    file_error(tmp_path, "[global]\nrw=trim\n[j]\n", 2, r"job 'j': rw=trim")


def test_error_missing_value(tmp_path):
    file_error(tmp_path, "[j]\nbs\n", 2, r"option 'bs' needs a value: write bs=VALUE", "bs")
    file_error(tmp_path, "[j]\nbs=\n", 2, r"option 'bs' needs a value")
    # fio 3.33, run: a bare `direct` line makes fio drop the job.
    file_error(tmp_path, "[j]\ndirect\n", 2, r"option 'direct' needs a value: write direct=1")
    file_error(tmp_path, "[j]\ntime_based=\n", 2, r"time_based= needs 0 or 1")
    cmd_error("fio --name=a --bs", "--bs", r"--bs needs a value: write --bs=VALUE")
    cmd_error("fio --name=a --direct --bs=4k", "--direct", r"--direct needs a value: write --direct=1")
    cmd_error("fio --name=a --write_iops_log --bs=4k", "--write_iops_log", r"needs a value")
    cmd_error("fio --name=a --minimal=1", "--minimal=1", r"--minimal takes no value")


def test_error_command_line_not_fio():
    cmd_error("fi --name=a", None, r"must begin with 'fio', not 'fi'")
    cmd_error("", None, r"must begin with 'fio'")
    cmd_error("fio --name='a", None, r"cannot split the command line")
    with pytest.raises(FioJobError, match=r"must begin with 'fio'"):
        parse_command_line("sudo fio --name=a")


def test_error_command_line_options():
    err = cmd_error(
        "fio --name=a --blocksize=4k --iodeph=8", "--iodeph=8", r"unknown fio option 'iodeph'; did you mean 'iodepth'"
    )
    assert err.key == "iodeph" and err.source == "fio command line"
    assert "argument 3" in str(err)
    cmd_error("fio --name=a --bs=4q", "--bs=4q", r"unknown size suffix 'q'")
    cmd_error("fio --name=a --runtime=2sec", "--runtime=2sec", r"unknown time suffix")
    cmd_error("fio --version", "--version", r"prints fio's version; it is not a run")
    cmd_error("fio --showcmd job.fio", "--showcmd", r"not a run ebssim can simulate")
    cmd_error("fio --name=a -", "-", r"standard input")
    cmd_error("fio --name=a no_such_file.fio", "no_such_file.fio", r"cannot read job file 'no_such_file.fio'")
    # `--time_based 1`: a flag takes no separate value, so "1" is a job file, as for fio
    # ("unable to open '1' job file", fio 3.33, run).
    cmd_error("fio --name=a --runtime=5 --time_based 1", "1", r"cannot read job file '1'")


def test_error_in_job_file_named_on_command_line(tmp_path):
    write(tmp_path, "[j]\n\nbs=4q\n", "bad.fio")
    with pytest.raises(FioJobError, match=r"^bad.fio:3: bs=4q"):
        parse_command_line(["fio", "bad.fio"], cwd=tmp_path)


def test_error_unsupported_known_options(tmp_path):
    file_error(
        tmp_path,
        "[j]\nbssplit=4k/50:64k/50\n",
        2,
        r"fio option 'bssplit' is not supported by the ebssim simulator: it mixes block sizes",
    )
    file_error(tmp_path, "[j]\nwait_for=other\n", 2, r"use stonewall")
    file_error(tmp_path, "[j]\nzonemode=zbd\n", 2, r"zoned block devices")


def test_error_engines(tmp_path):
    file_error(tmp_path, "[j]\nioengine=libai\n", 2, r"unknown ioengine 'libai'; did you mean libaio")
    file_error(tmp_path, "[j]\nioengine=null\n", 2, r"ioengine=null does not issue block I/O the simulator models")


def test_error_time_based_without_runtime(tmp_path):
    file_error(tmp_path, "[j]\ntime_based\n", 2, r"time_based is set but runtime is not")


def test_error_io_size_percent_without_size(tmp_path):
    file_error(tmp_path, "[j]\nio_size=50%\n", 2, r"io_size=50% is a percentage of size")


def test_error_include(tmp_path):
    file_error(tmp_path, "[j]\ninclude missing.inc\n", 2, r"cannot read included job file 'missing.inc'")
    (tmp_path / "loop.inc").write_text("include loop.inc\n")
    with pytest.raises(FioJobError, match=r"include nested more than"):
        parse_job_file(write(tmp_path, "[j]\ninclude loop.inc\n"))
    (tmp_path / "sec.inc").write_text("[other]\n")
    with pytest.raises(FioJobError, match=r"sec.inc:1: an included file cannot start a section"):
        parse_job_file(write(tmp_path, "[j]\ninclude sec.inc\n"))


def test_error_missing_file(tmp_path):
    with pytest.raises(FioJobError, match=r"cannot read job file .*nope.fio"):
        parse_job_file(tmp_path / "nope.fio")


# --------------------------------------------------------------------------------------------
# Fuzz: whatever the input, a FioJobSet or a FioJobError, never another exception
# --------------------------------------------------------------------------------------------

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_PIECES = [
    "[global]", "[j]", "[]", "[", "bs=", "bs=4k", "bs=4k,,8k", "rw=randrw", "rw=trim", "iodepth=0",
    "numjobs=3", "time_based", "runtime=5", "=", "include x", "size=50%", "io_size=10%",
    "write_iops_log", "kb_base=1000", "name=", "thinktime=1.5", "$x", "(1+2)", "0xZZ",
    "rate_iops=1,2,3", "stonewall=99999999999999999999", "bs=-4k", "bs=4k:8k", ";", "#", "\x00", "é",
]  # fmt: skip
_LINE = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=4).map(" ".join)


@FUZZ
@given(st.lists(_LINE, max_size=12))
def test_fuzz_job_text(lines):
    try:
        s = parse_job_file("[j]\n" + "\n".join(lines))
    except FioJobError:
        return
    assert len(s) >= 1 and all(j.effective_depth >= 1 for j in s)


_ARGS = st.sampled_from(
    ["--name=a", "--bs", "4k", "--time_based", "--", "-", "--name=global", "--section", "--output",
     "x", "--rw=randread", "--=", "-=", "---", "--bs=", "--name", "--runtime=1", "--eta=never"]
)  # fmt: skip


@FUZZ
@given(st.lists(st.one_of(_ARGS, st.text(max_size=10)), max_size=8))
def test_fuzz_command_line(argv):
    try:
        s = parse_command_line(["fio", *argv], cwd="/nonexistent-ebssim-dir")
    except FioJobError:
        return
    assert len(s) >= 1
