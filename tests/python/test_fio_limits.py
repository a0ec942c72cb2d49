"""Hardening of the fio front end, the readers and the CLI (issue 7): every bad or outsized input
gets a ValueError (CLI: one ``ebssim: error:`` line, exit 2) naming the field, the value and the
rule, before any large allocation; nothing hangs, nothing is silently accepted.

Fixtures are real fio 3.33 output from tests/data/fio (see its README); broken variants are
derived from them in tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any, List, Tuple

import ebssim.fio
import ebssim.fio.cost as fio_cost
import ebssim.fio.histograms as fio_histograms
import ebssim.fio.jobfile as fio_jobfile
import ebssim.fio.logs as fio_logs
import ebssim.fio.prediction as fio_prediction
import ebssim.fio.report as fio_report
import pytest
from deadlines import deadline
from ebssim import Volume
from ebssim.cli import main
from ebssim.fio import (
    FioJobError,
    FioJobSet,
    FioLogOrderWarning,
    parse_command_line,
    parse_job_file,
    parse_volume_spec,
    predict,
    read_hist_log,
    read_json,
    read_log,
    read_logs,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
MIX = DATA / "12_randrw_mix70"
MIX_JSON = MIX / "12_randrw_mix70.json"
JSONPLUS = DATA / "11_jsonplus_hist" / "11_jsonplus_hist.json"
HIST = DATA / "06_clat_hist_log" / "hist_clat_hist.1.log"

GP3 = "/dev/x=gp3:size=100"
RR = "fio --name=j --filename=/dev/x --rw=randread"

Cli = Tuple[int, str, str]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """ebssim.cli.main([...]) in tmp_path -> (exit status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> Cli:
        rc = main(list(args))
        out, err = capsys.readouterr()
        return rc, out, err

    return call


def one_line_error(result: Cli, *needles: str) -> str:
    rc, out, err = result
    assert rc == 2, (rc, out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("ebssim: error: "), err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


def write_log(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------
# A. Runs too large are refused before they start, naming the figure and the way out
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "run, needles",
    [
        (f"{RR} --runtime=3650d --time_based", ["315,360,000 job-steps", "MAX_JOB_STEPS", "--dt", "'j'"]),
        (f"{RR} --size=1000p", ["job-steps", "MAX_JOB_STEPS", "smaller size"]),
        (f"{RR} --loops=1g", ["job-steps", "MAX_JOB_STEPS"]),
        (f"{RR} --size=1g --ramp_time=1000000d", ["job-steps", "runs at least 8.64e+10 s"]),
        (f"{RR} --runtime=60 --time_based --dt=1e-9", []),
    ],
)
def test_huge_runs_are_refused_up_front(cli: Any, run: str, needles: List[str]) -> None:
    args = ["fio", "--volume", GP3, run]
    if run.endswith("--dt=1e-9"):
        args = ["fio", "--volume", GP3, "--dt", "1e-9", run[: -len(" --dt=1e-9")]]
        needles = ["60,000,000,000 job-steps", "dt=1e-09", "coarser --dt (6e-06 s or more)"]
    start = time.monotonic()
    one_line_error(cli(*args), *needles)
    assert time.monotonic() - start < 5  # refused before simulating, not after running out of memory


def test_estimate_names_the_job_file_line(tmp_path: Path) -> None:
    job = tmp_path / "long.fio"
    job.write_text("[global]\nfilename=/dev/x\n\n[short]\nruntime=10\n\n[long]\nruntime=400d\ntime_based\n")
    with pytest.raises(ValueError, match=r"job 'long' \(.*long\.fio:7\), runs at least 3\.456e\+07 s"):
        predict([job], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=None)


def test_run_that_outgrows_its_estimate_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    # 80 MiB of 4 KiB reads at QD32 take 6.8 s at gp2's 3,000 IOPS (the estimate: its fastest
    # time) but 204.8 s at the 100 IOPS of an empty 1 GiB gp2 volume.
    monkeypatch.setattr(fio_cost, "MAX_JOB_STEPS", 100)
    run = f"{RR} --ioengine=libaio --iodepth=32 --size=80m"
    vols = {"/dev/x": Volume("gp2", size_gib=1, burst_balance_pct=0)}
    with pytest.raises(ValueError, match=r"passed the limit of 100 job-steps .* was throttled"):
        predict([run], vols, dt=1.0, log_dir=None)
    monkeypatch.setattr(fio_cost, "MAX_JOB_STEPS", 1000)
    (j,) = predict([run], vols, dt=1.0, log_dir=None).jobs
    assert j.runtime_s == pytest.approx(80 * 256 / 100, rel=1e-9)


def test_too_many_log_rows_are_refused_before_the_run(tmp_path: Path) -> None:
    # 2 h at 1 ms steps, one row per step (log_avg_msec=0) in two logs: 14.4 M rows.
    run = f"{RR} --runtime=2h --time_based --write_iops_log=a --write_bw_log=a"
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"14,400,000 rows, more than the limit of 10,000,000 .*log_avg_msec=1000"):
        predict([run], {"/dev/x": Volume("gp3", size_gib=100)}, dt=0.001, log_dir=tmp_path)
    assert time.monotonic() - start < 5
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "run, needles",
    [
        (f"{RR} --numjobs=1g --runtime=1", ["numjobs=1g", "1,073,741,824 clones", "4,096"]),
        (f"{RR} --numjobs=3000 --runtime=1 --name=k --numjobs=1097", ["argument 7 '--numjobs=1097'", "4,097 job"]),
    ],
)
def test_too_many_jobs(run: str, needles: List[str]) -> None:
    with pytest.raises(FioJobError) as exc:
        parse_command_line(run)
    for n in needles:
        assert n in str(exc.value)
    assert exc.value.key == "numjobs"


def test_numjobs_costs_linear_time() -> None:
    # Was quadratic: 3,000 clones took 23 s.
    run = f"{RR} --ioengine=libaio --iodepth=4 --runtime=60 --time_based --numjobs=4096"
    start = time.monotonic()
    p = predict([run], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=None)
    assert time.monotonic() - start < 10
    assert len(p.jobs) == 4096
    # 16,384 in flight share 3,000 IOPS.
    assert sum(j.iops for j in p.jobs) == pytest.approx(3000.0, rel=1e-9)
    (g,) = predict([run + " --group_reporting"], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=None).jobs
    assert g.clones == 4096
    assert g.iops == pytest.approx(3000.0, rel=1e-9)


def _python_calls(fn: Any) -> int:
    """Python function calls made while ``fn()`` runs: a count of work that a loaded machine does
    not change (a wall-clock bound would; the speed itself is bench/'s job)."""
    calls = 0

    def prof(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def test_many_jobs_in_one_phase_cost_linear_time() -> None:
    # Jobs that run alone in one phase: the work grows with their number, not with its square.
    # Four times the jobs may cost four times the calls (plus a constant); a quadratic step would
    # cost sixteen times. 6x leaves room for the constant and nothing for a square.
    def run(n: int) -> None:
        text = "[global]\nfilename=/dev/x\nrw=randread\nruntime=60\ntime_based\n" + "".join(
            f"[j{i}]\n" for i in range(n)
        )
        p = predict([parse_job_file(text)], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=None)
        assert len(p.jobs) == n

    small, large = _python_calls(lambda: run(250)), _python_calls(lambda: run(1000))
    assert large < 6 * small, (small, large)


def test_many_jobs_ending_at_different_times_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each end is an event at which every running job does work: time quadratic in the number of
    # jobs (800 jobs of 800 sizes: minutes). Small limits keep the test fast.
    def jobs(n: int) -> FioJobSet:
        return parse_job_file(
            "[global]\nfilename=/dev/x\nrw=randread\n" + "".join(f"[j{i}]\nsize={i + 1}m\n" for i in range(n))
        )

    vols = {"/dev/x": Volume("gp3", size_gib=100)}
    assert len(predict([jobs(100)], vols, log_dir=None).jobs) == 100
    # Estimated before the run: 100 jobs of 1..100 MiB at psync's 7.75 MiB/s (4 KiB per 0.504 ms)
    # end within 13 s: at steps 1..13 of 1 s (the ramp end is step 1 too), 13 end times, about
    # 100 x 13 / 2 = 650 job-events.
    monkeypatch.setattr(fio_cost, "MAX_JOB_EVENTS", 600)
    with pytest.raises(ValueError, match=r"650 job-events.* 100 jobs run in one phase and end at 13 different"):
        predict([jobs(100)], vols, log_dir=None)
    # Counted while it runs: sharing the volume, they end later and further apart.
    monkeypatch.setattr(fio_cost, "MAX_JOB_EVENTS", 1000)
    with pytest.raises(ValueError, match=r"passed the limit of 1,000 job-events at t=\d+ s .* share their volume"):
        predict([jobs(100)], vols, log_dir=None)


@pytest.mark.parametrize("extra", ["--group_reporting", ""])
def test_numjobs_equals_identical_jobs(tmp_path: Path, extra: str) -> None:
    """numjobs=3 clones are simulated as one; the result must be that of three identical jobs."""
    opts = "--filename=/dev/x --rw=randrw --rwmixread=70 --bs=4k,16k --ioengine=libaio --iodepth=16 --size=3g"
    logs = "--write_iops_log=L --log_avg_msec=1000"
    vols = {"/dev/x": Volume("gp2", size_gib=100), "/dev/y": Volume("gp3", size_gib=10)}
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    many = predict([f"fio {extra} --name=c {opts} {logs} --numjobs=3"], vols, log_dir=a)
    same = predict([f"fio {extra} " + " ".join(f"--name=c {opts} {logs}" for _ in range(3))], vols, log_dir=b)
    assert len(many.jobs) == len(same.jobs)
    for x, y in zip(many.jobs, same.jobs):
        assert (x.clones, x.total_ios, x.io_bytes, x.runtime_s) == pytest.approx(
            (y.clones, y.total_ios, y.io_bytes, y.runtime_s), rel=1e-12
        )
        assert list(x.percentiles_s.values()) == pytest.approx(list(y.percentiles_s.values()), rel=1e-9)
        assert x.latency_mean_s == pytest.approx(y.latency_mean_s, rel=1e-12)
    assert sorted(p.name for p in a.iterdir()) == ["L_iops.1.log", "L_iops.2.log", "L_iops.3.log"]
    for n in (1, 2, 3):
        assert (a / f"L_iops.{n}.log").read_text() == (b / f"L_iops.{n}.log").read_text()


# -- files that are not regular, or too large ------------------------------------------------


def test_cli_refuses_dev_zero(cli: Any, tmp_path: Path) -> None:
    one_line_error(cli("fio", "--volume", GP3, "/dev/zero"), "/dev/zero", "not a regular file")
    inc = tmp_path / "inc.fio"
    inc.write_text("[j]\nfilename=/dev/x\nruntime=1\ninclude /dev/zero\n")
    one_line_error(cli("fio", "--volume", GP3, str(inc)), f"{inc}:4", "/dev/zero", "not a regular file")
    one_line_error(cli("fio", "--volume", GP3, f"fio {inc.parent}"), f"{inc.parent}: is a directory")


@pytest.mark.parametrize(
    "reader, name",
    [(read_json, "out.json"), (read_log, "x_iops.1.log"), (read_hist_log, "x_clat_hist.1.log")],
)
def test_readers_refuse_devices_fifos_and_directories(reader: Any, name: str, tmp_path: Path) -> None:
    zero = tmp_path / f"zero{name}" if reader is not read_json else Path("/dev/zero")
    if reader is not read_json:
        zero.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=f"{zero}: is a device, FIFO or socket, not a regular file"):
        reader(zero)
    fifo = tmp_path / name
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(ValueError, match=f"{fifo}: is a device, FIFO or socket, not a regular"):
        reader(fifo)
    directory = tmp_path / f"dir{name}"
    directory.mkdir()
    with pytest.raises(ValueError, match=f"{directory}: is a directory, not a regular file"):
        reader(directory)


def test_job_file_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "jobs.fio"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(FioJobError, match="not a regular file"):
        parse_job_file(fifo)


@pytest.mark.parametrize(
    "reader, path, module, limit",
    [
        (read_json, MIX_JSON, fio_report, "MAX_JSON_BYTES"),
        (read_log, MIX / "mix70_iops.1.log", fio_logs, "MAX_LOG_BYTES"),
        (read_hist_log, HIST, fio_histograms, "MAX_HIST_LOG_BYTES"),
    ],
)
def test_readers_refuse_files_over_their_limit(
    reader: Any, path: Path, module: Any, limit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader(path)  # the real file is within the real limit
    monkeypatch.setattr(module, limit, 100)
    with pytest.raises(ValueError, match=rf"holds more than 100 bytes, .*{re.escape(module.__name__)}\.{limit}"):
        reader(path)


def test_job_file_limit_counts_includes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "part.fio").write_text("rw=randread\n" * 10)  # 120 bytes
    main_file = tmp_path / "main.fio"
    main_file.write_text("[j]\nfilename=/dev/x\n" + "include part.fio\n" * 3)
    assert parse_job_file(main_file)[0].rw == "randread"
    monkeypatch.setattr(fio_jobfile, "MAX_JOB_FILE_BYTES", 300)
    with pytest.raises(FioJobError, match=r"main\.fio:4: cannot read included job file 'part\.fio': .*MAX_JOB_FILE"):
        parse_job_file(main_file)


# ---------------------------------------------------------------------------------------------
# B. No tracebacks: one line, exit 2 (130 when interrupted)
# ---------------------------------------------------------------------------------------------


def test_internal_error_is_one_line(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(fio_prediction, "_predict", broken)  # what ebssim fio calls
    monkeypatch.delenv("EBSSIM_DEBUG", raising=False)
    line = one_line_error(cli("fio", "--volume", GP3, f"{RR} --runtime=1"), "internal error", "ZeroDivisionError")
    assert "bug" in line and "EBSSIM_DEBUG=1" in line
    monkeypatch.setenv("EBSSIM_DEBUG", "1")
    rc, out, err = cli("fio", "--volume", GP3, f"{RR} --runtime=1")
    assert rc == 2
    assert "Traceback" in err and "ZeroDivisionError" in err
    assert err.rstrip("\n").split("\n")[-1].startswith("ebssim: error: internal error")


def test_keyboard_interrupt_exits_130(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(fio_prediction, "_predict", interrupted)  # what ebssim fio calls
    rc, out, err = cli("fio", "--volume", GP3, f"{RR} --runtime=1")
    assert (rc, out, err) == (130, "", "ebssim: interrupted\n")


@pytest.fixture
def usage_cli(cli: Any, capsys: pytest.CaptureFixture[str]) -> Any:
    """argparse's own errors exit through SystemExit(2): -> (status, stdout, stderr)."""

    def call(*args: str) -> Cli:
        try:
            return cli(*args)  # type: ignore[no-any-return]
        except SystemExit as e:
            out, err = capsys.readouterr()
            return int(e.code or 0), out, err

    return call


@pytest.mark.parametrize(
    "args, needles",
    [
        (["fio", "--volume", GP3, "--dt", "abc", RR], ["--dt", "'abc'"]),
        (["fio", "--volume", GP3], ["RUN"]),
        (["nope"], ["'nope'"]),
        (["fio", "--log-dir", "d", "--no-logs", RR], ["--no-logs", "--log-dir"]),
        (["fio", "--volume", GP3, "--dt", "nan", RR], ["--dt nan", "positive, finite"]),
        (["fio", "--volume", GP3, "--dt", "-1", RR], ["--dt -1.0", "positive, finite"]),
        (["fio", "--volume", GP3, "--log-dir", "missing", RR], ["--log-dir 'missing'", "not a directory"]),
    ],
)
def test_argparse_errors_are_one_line(usage_cli: Any, args: List[str], needles: List[str]) -> None:
    one_line_error(usage_cli(*args), *needles)


@pytest.mark.parametrize(
    "key, value",
    [
        ("total_ios", "Infinity"),
        ("total_ios", "1e400"),
        ("total_ios", "NaN"),
        ("io_bytes", "-Infinity"),
        ("runtime", "NaN"),
        ("io_bytes", "-4096"),
        ("runtime", "-1"),
        ("total_ios", "2.5"),
        ("iops", "Infinity"),
        ("io_bytes", "123456789012345678901234567890"),
    ],
)
def test_json_bad_numbers_name_file_and_key(tmp_path: Path, key: str, value: str) -> None:
    text = MIX_JSON.read_text()
    # The first occurrence is jobs[0].read's (fio writes "read" first; option values are strings).
    edited, n = re.subn(rf'"{key}" : [0-9.]+,', f'"{key}" : {value},', text, count=1)
    assert n == 1
    bad = tmp_path / "bad.json"
    bad.write_text(edited)
    with pytest.raises(ValueError, match=rf"bad\.json: key jobs\[0\]\.read\.{key} is .*: expected"):
        read_json(bad)


def test_json_too_many_digits(tmp_path: Path) -> None:
    bad = tmp_path / "digits.json"
    bad.write_text(MIX_JSON.read_text().replace('"total_ios" : ', '"total_ios" : ' + "9" * 5000, 1))
    with pytest.raises(ValueError, match=r"digits\.json: a number with 50\d\d digits") as exc:
        read_json(bad)
    assert "4300" not in str(exc.value)


def test_json_nested_too_deep(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(ValueError, match=r"deep\.json: JSON nested too deep .* the limit is 64"):
        read_json(deep)
    # Deep but within the decoder's reach: the key path and the limit are named.
    doc = json.loads(MIX_JSON.read_text())
    nest: Any = 1
    for _ in range(100):
        nest = {"x": nest}
    doc["jobs"][0]["job options"] = nest
    medium = tmp_path / "medium.json"
    medium.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"medium\.json: key jobs\[0\]\.job options\.x\.x.* the limit of 64"):
        read_json(medium)


# ---------------------------------------------------------------------------------------------
# C. Nonsense that was accepted
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, needles",
    [
        ("iodepth=1p", ["iodepth=1p", "1,125,899,906,842,624 I/Os in flight", "65,536"]),
        ("iodepth=" + "7" * 300, ["has 300 digits", "64-bit"]),
        ("iodepth=0x" + "f" * 17, ["has 17 digits", "16 hex digits"]),
        ("size=" + "1" * 300, ["has 300 digits"]),
        ("size=20000p", ["beyond fio's 64-bit range"]),
        ("runtime=" + "9" * 25 + "d", ["has 25 digits"]),
        ("runtime=9999999999999d", ["microseconds, beyond fio's 64-bit range"]),
        ("rate_iops=" + "5" * 40, ["has 40 digits"]),
        ("direct=" + "1" * 30, ["has 30 digits"]),
    ],
)
def test_job_numbers_out_of_range(option: str, needles: List[str]) -> None:
    with pytest.raises(FioJobError) as exc:
        parse_job_file(f"[j]\nfilename=/dev/x\n{option}\n", source="big.fio")
    msg = str(exc.value)
    assert msg.startswith("big.fio:3: ")
    assert "Exceeds the limit" not in msg
    for n in needles:
        assert n in msg, (n, msg)


def test_volume_spec_duplicate_key() -> None:
    with pytest.raises(ValueError, match=r"--volume '/dev/x=gp3:size=100,size=200': key 'size' is given twice"):
        parse_volume_spec("/dev/x=gp3:size=100,size=200")
    for bad in ("inf", "-inf", "1e400", "9" * 400):
        with pytest.raises(ValueError, match="expected a finite number"):
            parse_volume_spec(f"/dev/x=gp3:size={bad}")


def _bins_json(tmp_path: Path, edit: Any) -> Path:
    doc = json.loads(JSONPLUS.read_text())
    edit(doc["jobs"][0]["read"]["clat_ns"])
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(doc))
    return p


def _first_bin(lat: Any, value: Any) -> None:
    key = next(iter(lat["bins"]))
    lat["bins"][key] = value


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda lat: _first_bin(lat, -3), r"clat_ns\.bins\.\d+ is -3: expected a whole number >= 0"),
        (lambda lat: _first_bin(lat, 2.5), r"clat_ns\.bins\.\d+ is 2\.5: expected a whole number >= 0"),
        (lambda lat: lat["bins"].update({"-5": 1}), r"clat_ns\.bins\.'-5': expected a latency in ns"),
        (lambda lat: lat["bins"].update({"9" * 30: 1}), r"clat_ns\.bins\.'9+': expected a latency in ns"),
        (lambda lat: lat["percentile"].update({"nan": 5}), r"clat_ns\.percentile\.'nan': expected a percentile"),
        (lambda lat: lat["percentile"].update({"-1": 5}), r"clat_ns\.percentile\.'-1': expected a percentile"),
        (lambda lat: lat["percentile"].update({"100.5": 5}), r"clat_ns\.percentile\.'100\.5': expected a percentile"),
        (lambda lat: lat["percentile"].update({"50.000000": -2}), r"clat_ns\.percentile\.50\.000000 is -2: expected"),
        (lambda lat: lat.update({"mean": -1.0}), r"clat_ns\.mean is -1\.0: expected a number >= 0"),
    ],
)
def test_json_histograms_and_percentiles_are_checked(tmp_path: Path, edit: Any, match: str) -> None:
    with pytest.raises(ValueError, match=r"edited\.json: key jobs\[0\]\.read\." + match):
        read_json(_bins_json(tmp_path, edit))


def test_json_nan_statistics_are_still_accepted(tmp_path: Path) -> None:
    # Some fio versions print nan for statistics without samples: they stay NaN.
    text = MIX_JSON.read_text()
    doc = json.loads(text)
    marker = f'"bw_dev" : {doc["jobs"][0]["read"]["bw_dev"]:f},'
    assert marker in text
    p = tmp_path / "nan.json"
    p.write_text(text.replace(marker, '"bw_dev" : -nan,', 1))
    assert read_json(p).jobs["bw_win_dev_kib_s"].isna().iloc[0]


@pytest.mark.parametrize(
    "line, needles",
    [
        ("1000, -5, 0, 0, 0", ["line 2: field 2 is -5: expected a whole number >= 0", "'1000, -5, 0, 0, 0'"]),
        ("-1000, 5, 0, 0, 0", ["line 2: field 1 is -1000"]),
        ("1000, 5, 0, -4096, 0", ["line 2: field 4 is -4096"]),
    ],
)
def test_log_negative_values_name_file_and_line(tmp_path: Path, line: str, needles: List[str]) -> None:
    p = write_log(tmp_path / "x_iops.1.log", f"500, 7, 0, 0, 0\n{line}\n1500, 7, 0, 0, 0\n")
    with pytest.raises(ValueError) as exc:
        read_log(p)
    assert str(exc.value).startswith(f"{p}, line 2: ")
    for n in needles:
        assert n in str(exc.value)


def test_log_out_of_order_rows_are_sorted_with_one_warning(tmp_path: Path) -> None:
    # fio stamps a sample when it records it, from more than one thread: rows can be out of order.
    text = "500, 1, 0, 0, 0\n1000, 2, 0, 0, 0\n990, 3, 1, 0, 0\n1000, 4, 1, 0, 0\n980, 5, 0, 0, 0\n1500, 6, 0, 0, 0\n"
    p = write_log(tmp_path / "x_iops.1.log", text)
    with pytest.warns(FioLogOrderWarning) as record:
        df = read_log(p)
    assert len(record) == 1
    assert "2 row(s)" in str(record[0].message) and "line 3" in str(record[0].message)
    assert record[0].filename == __file__  # points at the caller
    assert list(df["time_ms"]) == [500, 980, 990, 1000, 1000, 1500]
    assert list(df["iops"]) == [1, 5, 3, 2, 4, 6]  # stable: equal times keep the file's order
    assert issubclass(FioLogOrderWarning, UserWarning)
    # read_logs: the same, per file.
    shutil.copy(p, tmp_path / "x_iops.2.log")
    with pytest.warns(FioLogOrderWarning) as record:
        both = read_logs(tmp_path, kind="iops")
    assert len(record) == 2 and all(r.filename == __file__ for r in record)
    assert list(both["time_ms"]) == [500, 980, 990, 1000, 1000, 1500] * 2


def test_real_logs_are_in_order() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p in sorted(DATA.glob("*/*.log")):
            if "clat_hist" not in p.name:
                read_log(p)


# ---------------------------------------------------------------------------------------------
# D. Messages name file, line and option
# ---------------------------------------------------------------------------------------------


def test_bs_over_the_io_limit_names_file_line_and_option(tmp_path: Path) -> None:
    job = tmp_path / "big.fio"
    job.write_text("[global]\nfilename=/dev/x\n\n[j]\nruntime=5\nbs=2g\n")
    with pytest.raises(FioJobError, match=r"big\.fio:6: bs=2g: a block size of 2,147,483,648 bytes .* 1 GiB") as e:
        parse_job_file(job)
    assert e.value.key == "bs"
    with pytest.raises(FioJobError, match=r"argument 2 '--bs=4k,2g': bs=4k,2g: a block size of 2,147,483,648"):
        parse_command_line("fio --name=j --bs=4k,2g")
    assert parse_command_line("fio --name=j --bs=1g")[0].bs == 2**30


@pytest.mark.parametrize(
    "line, needles",
    [
        ("2000, 1_000, 0, 0, 0", ["line 2: character '_' at column 8", "'2000, 1_000, 0, 0, 0'"]),
        ("2000, \u0663, 0, 0, 0", ["line 2: character '\u0663' at column 7"]),
        ("2000, 5, 0, 0\r0, 3000, 5, 0, 0, 0", ["line 2: expected 5 comma-separated fields", "got 4"]),
        ("2000, 99999999999999999999, 0, 0, 0", ["line 2: field 2 is '99999999999999999999'", "64 bits"]),
        ("2000, 0x10, 0, 0, 0", ["line 2: field 2 is '0x10'"]),
        ('"2000", 5, 0, 0, 0', ["line 2: character '\"' at column 1"]),
    ],
)
def test_log_parse_errors_name_the_line_and_text(tmp_path: Path, line: str, needles: List[str]) -> None:
    p = write_log(tmp_path / "x_iops.1.log", f"1000, 5, 0, 0, 0\n{line}\n")
    with pytest.raises(ValueError) as exc:
        read_log(p)
    msg = str(exc.value)
    assert msg.startswith(f"{p}, line 2: ")
    assert "could not parse" not in msg
    for n in needles:
        assert n in msg, (n, msg)


def test_log_with_crlf_and_trailing_blanks_still_reads(tmp_path: Path) -> None:
    p = write_log(tmp_path / "x_iops.1.log", "1000, 5, 0, 0, 0 \r\n2000, 6, 1, 0, 0\r\n")
    df = read_log(p)
    assert list(df["iops"]) == [5, 6]
    # CR alone ends a line too (old Mac line ends; Python's universal newlines read them so).
    p = write_log(tmp_path / "x_iops.1.log", "1000, 5, 0, 0, 0\r2000, 6, 1, 0, 0\r3000, 7, 0, 0, 0\r")
    assert list(read_log(p)["iops"]) == [5, 6, 7]


# ---------------------------------------------------------------------------------------------
# E. Logs stay under the log directory
# ---------------------------------------------------------------------------------------------

LOGGED = f"{RR} --runtime=3 --time_based --log_avg_msec=1000"


@pytest.mark.parametrize("name", ["../escape", "sub/../../escape"])
def test_log_names_leaving_the_directory_are_refused(cli: Any, tmp_path: Path, name: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.chdir(work)
    line = one_line_error(
        cli("fio", "--volume", GP3, f"{LOGGED} --write_iops_log={name}"),
        "write_iops_log=",
        "outside the log directory",
        "--allow-outside-log-paths",
    )
    assert "fio command line" in line
    assert not list(tmp_path.glob("escape*"))


def test_absolute_log_name_is_refused_unless_allowed(cli: Any, tmp_path: Path) -> None:
    target = tmp_path / "abs"
    target.mkdir()
    job = tmp_path / "j.fio"
    job.write_text(f"[j]\nfilename=/dev/x\nruntime=3\ntime_based\nlog_avg_msec=1000\nwrite_bw_log={target}/b\n")
    one_line_error(cli("fio", "--volume", GP3, str(job)), f"{job}:1", "write_bw_log=", "outside the log directory")
    assert list(target.iterdir()) == []
    rc, out, err = cli("fio", "--volume", GP3, "--allow-outside-log-paths", str(job))
    assert rc == 0, err
    assert [p.name for p in target.iterdir()] == ["b_bw.1.log"]
    assert len(read_log(target / "b_bw.1.log")) == 3


def test_symlink_out_of_the_log_directory_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "link").symlink_to(outside)
    with pytest.raises(FioJobError, match=r"write_lat_log=link/x writes 'link/x_lat\.1\.log', outside"):
        predict([f"{LOGGED} --write_lat_log=link/x"], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=logs)
    assert list(outside.iterdir()) == []


def test_log_dir_option_and_subdirectories(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "out" / "sub").mkdir(parents=True)
    rc, out, err = cli("fio", "--volume", GP3, "--log-dir", "out", f"{LOGGED} --write_iops_log=sub/r")
    assert rc == 0, err
    assert [p.name for p in (tmp_path / "out" / "sub").iterdir()] == ["r_iops.1.log"]
    rc, out, err = cli("fio", "--volume", GP3, "--no-logs", f"{LOGGED} --write_iops_log=../nowhere")
    assert rc == 0, err


def test_missing_log_subdirectory_is_refused_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(FioJobError, match=r"log file '.*nodir/x_iops\.1\.log': directory '.*nodir' does not exist"):
        predict([f"{LOGGED} --write_iops_log=nodir/x"], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=tmp_path)


def test_existing_non_file_log_target_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f_iops.1.log")
    with deadline(10), pytest.raises(FioJobError, match="exists and is not a regular file"):
        predict([f"{LOGGED} --write_iops_log=f"], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=tmp_path)


# ---------------------------------------------------------------------------------------------
# F. The documented names exist, and predictions line up with measurements
# ---------------------------------------------------------------------------------------------


def test_documented_names_are_exported() -> None:
    assert ebssim.fio.predict is fio_prediction.predict
    for name in ("predict", "parse_volume_spec", "FioPrediction", "JobPrediction", "FioLogOrderWarning"):
        assert name in ebssim.fio.__all__
        assert hasattr(ebssim.fio, name)


def test_to_pandas_has_read_jsons_columns() -> None:
    measured = read_json(MIX_JSON).jobs
    run = "fio --name=m --filename=/dev/x --rw=randrw --rwmixread=70 --ioengine=libaio --iodepth=4 --runtime=2"
    predicted = predict([run], {"/dev/x": Volume("gp3", size_gib=100)}, log_dir=None).to_pandas()
    assert list(predicted.columns) == list(measured.columns)
    assert list(predicted["direction"]) == ["read", "write"]
    assert predicted["iops"].sum() == pytest.approx(3000.0, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# G. Warnings during a CLI run: one line each
# ---------------------------------------------------------------------------------------------


def test_cli_shows_each_warning_once_on_one_line(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fio_prediction._predict

    def warns(*args: Any, **kwargs: Any) -> Any:
        for _ in range(3):
            warnings.warn(FioLogOrderWarning("x.log: 2 row(s) out of order\nsorted"), stacklevel=1)
        warnings.warn("something else", UserWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fio_prediction, "_predict", warns)  # what ebssim fio calls
    rc, out, err = cli("fio", "--volume", GP3, f"{RR} --runtime=1")
    assert rc == 0
    assert out.startswith("j: (groupid=0")
    assert err.splitlines() == [
        "ebssim: warning: x.log: 2 row(s) out of order sorted",
        "ebssim: warning: something else",
    ]


# ---------------------------------------------------------------------------------------------
# H. Inputs found by the fuzzer (tests/fuzz, `make fuzz`)
# ---------------------------------------------------------------------------------------------


def test_fuzz_log_number_beyond_int64_in_the_fast_path(tmp_path: Path) -> None:
    # pandas warned "invalid value encountered in cast" (RuntimeWarning) and went on.
    p = write_log(tmp_path / "f_lat.1.log", "01,6,777777777777777777777777777777777770 , \n")
    with pytest.raises(ValueError, match=r"f_lat\.1\.log, line 1: field 3 is '7+0': expected an integer of at most"):
        read_log(p)
