"""Issue 19 for the fio and fit surfaces: nothing lost, no silent accept, every bad input a ValueError.

Each case runs through the Python API and through the command line (one ``ebssim: error:`` line,
exit status 2). Overwrite cases also check that the input's bytes are unchanged afterwards.
Inputs are real fio output (tests/data), mutated in the test where the case needs a bad one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import ebssim
import ebssim.fit
import pytest
from ebssim.cli import main
from ebssim.fio import parse_job_file, parse_volume_spec, predict, read_json, volume_from_spec

DATA = Path(__file__).resolve().parents[1] / "data"
FIO = DATA / "fio"
FIT = DATA / "fit"
MIX = FIO / "12_randrw_mix70" / "12_randrw_mix70.json"  # fio 3.33, read/write/trim per job
UNIFIED = FIO / "13_unified_rw_reporting" / "13_unified_rw_reporting.json"  # =both and =mixed jobs
JSONPLUS = FIO / "11_jsonplus_hist" / "11_jsonplus_hist.json"  # json+ bins

VOLUME = "/dev/x=gp3:size=100"
JOB = "[x]\nfilename=/dev/x\nrw=randread\nruntime=1\ntime_based\n"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> Tuple[int, str, str]:
    try:
        rc = main(list(args))
    except SystemExit as e:  # argparse's refusals
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def _one_error_line(result: Tuple[int, str, str], *needles: str) -> str:
    rc, out, err = result
    assert rc == 2, (rc, out, err)
    assert out == ""
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("ebssim: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


# ---------------------------------------------------------------------------------------------
# 1. No output path is an input
# ---------------------------------------------------------------------------------------------


def _output_cases(tmp: Path) -> Dict[str, Tuple[List[str], Path]]:
    """name -> (ebssim fio arguments, the input that must survive)."""
    job = tmp / "job.fio"
    job.write_text(JOB)
    os.symlink("job.fio", tmp / "link.txt")
    os.link(job, tmp / "hard.txt")
    (tmp / "inc.fio").write_text("rw=randread\n")
    (tmp / "main.fio").write_text("[x]\nfilename=/dev/x\ninclude inc.fio\nruntime=1\ntime_based\n")
    cmdline = f"fio --name=y --filename=/dev/x --runtime=1 --time_based {tmp / 'job.fio'}"
    return {
        "same path": (["--output", "job.fio", "job.fio"], job),
        "other spelling": (["--output", "./job.fio", str(job)], job),
        "symbolic link": (["--output", "link.txt", "job.fio"], job),
        "hard link": (["--output", "hard.txt", "job.fio"], job),
        "an included file": (["--output", "inc.fio", "main.fio"], tmp / "inc.fio"),
        "a job file named on a command line": (["--output", "job.fio", cmdline], job),
        "the second RUN": (["--output", "job.fio", "main.fio", "job.fio"], job),
    }


@pytest.mark.parametrize(
    "case",
    [
        "same path",
        "other spelling",
        "symbolic link",
        "hard link",
        "an included file",
        "a job file named on a command line",
        "the second RUN",
    ],
)
def test_fio_output_is_not_an_input(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    args, kept = _output_cases(tmp_path)[case]
    before = kept.read_bytes()
    line = _one_error_line(_cli(capsys, "fio", "--volume", VOLUME, "--no-logs", *args), "--output", "input")
    assert repr(args[1]) in line  # the output path as given
    assert kept.read_bytes() == before


def test_fio_output_elsewhere_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.fio").write_text(JOB)
    rc, out, err = _cli(capsys, "fio", "--volume", VOLUME, "--output", "report.txt", "job.fio")
    assert (rc, out, err) == (0, "", "")
    assert (tmp_path / "report.txt").read_text().startswith("x: (groupid=0")
    assert (tmp_path / "job.fio").read_text() == JOB


def _log_cases(tmp: Path) -> Dict[str, Tuple[List[str], Path]]:
    """name -> (RUNs, the input a log would overwrite); logs go to tmp."""
    own = tmp / "x_iops.1.log"  # a job file named like its own log
    own.write_text(JOB + "write_iops_log=x\n")
    (tmp / "a.fio").write_text(JOB + "write_iops_log=b\n")
    (tmp / "b_iops.1.log").write_text(JOB)  # the second RUN, which a.fio's log would replace
    (tmp / "c.fio").write_text(JOB + "write_bw_log=c\n")
    os.link(tmp / "c.fio", tmp / "c_bw.1.log")  # the log's name is a hard link to the job file
    return {
        "its own job file": (["x_iops.1.log"], own),
        "another RUN": (["a.fio", "b_iops.1.log"], tmp / "b_iops.1.log"),
        "a hard link to its job file": (["c.fio"], tmp / "c.fio"),
    }


@pytest.mark.parametrize("case", ["its own job file", "another RUN", "a hard link to its job file"])
@pytest.mark.parametrize("surface", ["python", "cli"])
def test_fio_log_is_not_an_input(
    case: str, surface: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    runs, kept = _log_cases(tmp_path)[case]
    before = kept.read_bytes()
    if surface == "python":
        with pytest.raises(ValueError, match=r"write_(iops|bw)_log=\w+ writes the log .* which is the input"):
            predict(runs, {"/dev/x": ebssim.gp3(100)}, log_dir=".")
    else:
        _one_error_line(_cli(capsys, "fio", "--volume", VOLUME, *runs), "writes the log", "is the input")
    assert kept.read_bytes() == before


@pytest.mark.parametrize("log_dir", [".", "./", "logs"])
def test_fio_log_dir_and_no_logs_exclude_each_other(
    log_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "job.fio").write_text(JOB)
    result = _cli(capsys, "fio", "--volume", VOLUME, "--log-dir", log_dir, "--no-logs", "job.fio")
    _one_error_line(result, "--no-logs: not allowed with argument --log-dir")


# ---------------------------------------------------------------------------------------------
# 2. read_json: the report's shape and its strings
# ---------------------------------------------------------------------------------------------

Edit = Callable[[Dict[str, Any]], None]


def _drop(job: int, key: str) -> Edit:
    def edit(d: Dict[str, Any]) -> None:
        del d["jobs"][job][key]

    return edit


def _set(path: Tuple[Any, ...], value: Any) -> Edit:
    def edit(d: Dict[str, Any]) -> None:
        node: Any = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    return edit


def _add_key(path: Tuple[Any, ...], key: str) -> Edit:
    def edit(d: Dict[str, Any]) -> None:
        node: Any = d
        for k in path:
            node = node[k]
        node[key] = 1

    return edit


# (fixture, edit, words the message must hold)
BAD_REPORTS: Dict[str, Tuple[Path, Edit, Tuple[str, ...]]] = {
    "read missing": (MIX, _drop(0, "read"), ("jobs[0]", "'randrw_mix70'", "no 'read' object")),
    "write missing": (MIX, _drop(0, "write"), ("jobs[0]", "no 'write' object")),
    "trim missing": (MIX, _drop(0, "trim"), ("jobs[0]", "no 'trim' object")),
    "unified=both without read": (UNIFIED, _drop(0, "read"), ("jobs[0]", "'uni_both'", "no 'read' object")),
    "bins a list": (
        JSONPLUS,
        _set(("jobs", 0, "read", "clat_ns", "bins"), [[1000, 3]]),
        ("jobs[0].read.clat_ns.bins", "'jsonplus_qd8'", "expected an object"),
    ),
    "bins a number": (JSONPLUS, _set(("jobs", 0, "read", "clat_ns", "bins"), 7), ("clat_ns.bins", "is 7")),
    "percentile a list": (
        MIX,
        _set(("jobs", 0, "read", "clat_ns", "percentile"), [1, 2]),
        ("jobs[0].read.clat_ns.percentile", "expected an object"),
    ),
    "negative timestamp_ms": (MIX, _set(("timestamp_ms",), -1), ("timestamp_ms", "-1", ">= 0")),
    "negative timestamp": (MIX, _set(("timestamp",), -1), ("key timestamp ", "-1", ">= 0")),
    "timestamp_ms a string": (MIX, _set(("timestamp_ms",), "1796014200946"), ("timestamp_ms", "whole number")),
    "jobname a number": (MIX, _set(("jobs", 0, "jobname"), 7), ("jobs[0].jobname", "expected a string")),
    "surrogate in jobname": (MIX, _set(("jobs", 0, "jobname"), "\ud800"), ("jobs[0].jobname", "lone surrogate")),
    "surrogate in hostname": (MIX, _set(("jobs", 0, "hostname"), "a\udfff"), ("jobs[0].hostname", "lone surrogate")),
    "surrogate disk_util key": (UNIFIED, _add_key(("disk_util", 0), "\ud800"), ("disk_util[0]", "lone surrogate")),
    "surrogate in job options": (
        MIX,
        _set(("jobs", 0, "job options"), {"rw": "\udc80"}),
        ("jobs[0].job options.rw", "lone surrogate"),
    ),
    "surrogate global option key": (
        MIX,
        _add_key(("global options",), "\ud834"),
        ("global options", "lone surrogate"),
    ),
    "surrogate in fio version": (MIX, _set(("fio version",), "fio-\ud800"), ("fio version", "lone surrogate")),
    "fio version a number": (MIX, _set(("fio version",), 3.33), ("'fio version' is 3.33", "expected a string")),
    "disk_util an object": (UNIFIED, _set(("disk_util",), {"name": "vda"}), ("disk_util is", "expected a list")),
    "disk_util holding a string": (UNIFIED, _set(("disk_util",), ["vda"]), ("disk_util is", "expected a list")),
}


def _bad_report(name: str) -> Tuple[bytes, Tuple[str, ...]]:
    path, edit, needles = BAD_REPORTS[name]
    doc = json.loads(path.read_text())
    edit(doc)
    # ensure_ascii: a lone surrogate is written as fio never would, as a \ud800 escape.
    return json.dumps(doc, ensure_ascii=True).encode(), needles


@pytest.mark.parametrize("name", sorted(BAD_REPORTS))
def test_read_json_refuses(name: str) -> None:
    data, needles = _bad_report(name)
    with pytest.raises(ValueError) as info:
        read_json(data)
    for n in needles:
        assert n in str(info.value), (n, str(info.value))
    str(info.value).encode("utf-8")  # the message itself can be printed


@pytest.mark.parametrize("name", sorted(BAD_REPORTS))
def test_read_json_refuses_through_fit_cli(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, needles = _bad_report(name)
    (tmp_path / "report.json").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    _one_error_line(_cli(capsys, "fit", "report.json"), "report.json", *needles)


def test_read_json_disk_util_surrogate_reproducer() -> None:
    with pytest.raises(ValueError, match=r"<bytes>: a key in disk_util\[0\] holds a lone surrogate"):
        _ = read_json(b'{"jobs":[],"disk_util":[{"\\ud800":1}]}').disk_util


@pytest.mark.parametrize("path", sorted(FIO.glob("*/*.json")) + sorted(FIT.glob("*/*.json")), ids=lambda p: p.name)
def test_every_real_report_still_reads(path: Path) -> None:
    res = read_json(path)
    assert len(res.jobs) > 0
    assert res.raw["timestamp_ms"] > 0


def test_unified_mixed_alone_still_reads() -> None:
    res = read_json(UNIFIED)
    mixed = res.jobs[res.jobs["jobname"] == "uni_mixed"]
    assert list(mixed["direction"]) == ["mixed"]


# ---------------------------------------------------------------------------------------------
# 3. Job files with a UTF-8 byte-order mark: refused as fio refuses them, the mark named visibly
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["job file", "included file"])
@pytest.mark.parametrize("surface", ["python", "cli"])
def test_job_file_with_bom(
    where: str, surface: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    if where == "job file":
        (tmp_path / "job.fio").write_bytes(b"\xef\xbb\xbf" + JOB.encode())
        named = "job.fio:1"
    else:
        (tmp_path / "inc.fio").write_bytes(b"\xef\xbb\xbfrw=randread\n")
        (tmp_path / "job.fio").write_text("[x]\nfilename=/dev/x\ninclude inc.fio\nruntime=1\ntime_based\n")
        named = "inc.fio:1"
    if surface == "python":
        with pytest.raises(ValueError) as info:
            parse_job_file("job.fio")
        message = str(info.value)
    else:
        message = _one_error_line(_cli(capsys, "fio", "--volume", VOLUME, "job.fio"))
    assert named in message
    assert "byte-order mark (U+FEFF)" in message
    assert "\ufeff" not in message


# ---------------------------------------------------------------------------------------------
# 4. The volume SPEC: ASCII digits, an optional decimal part, an optional unit
# ---------------------------------------------------------------------------------------------

BAD_SPECS = [
    ("gp2:size=1_000", "size='1_000'"),
    ("gp2:size=\uff11\uff10\uff10", "size='\uff11\uff10\uff10'"),  # full-width 100
    ("gp2:size=+100", "size='+100'"),
    ("gp2:size=-1", "size='-1'"),
    ("gp2:size=1e3", "size='1e3'"),
    ("gp2:size=inf", "size='inf'"),
    ("gp2:size=nan", "size='nan'"),
    ("gp2:size=0x64", "size='0x64'"),
    ("gp2:size= 100", "size=' 100'"),
    ("gp2:size=100.", "size='100.'"),
    ("gp2:size=.5", "size='.5'"),
    ("gp2:size=", "size=''"),
    ("gp2:size=100TiB", "size='100TiB'"),  # not the key's unit
    ("gp3:iops=3000GiB", "iops='3000GiB'"),
    ("gp2:,", "empty key=value item"),
    ("gp2:", "empty key=value item"),
    ("gp2:size=100,", "empty key=value item"),
    ("gp2:=100", "empty key"),
]


@pytest.mark.parametrize(("spec", "named"), BAD_SPECS)
def test_spec_number_grammar(spec: str, named: str) -> None:
    with pytest.raises(ValueError) as info:
        volume_from_spec(spec)
    message = str(info.value)
    assert message.startswith(f"SPEC {spec!r}: "), message
    assert named in message
    assert "e.g." in message  # the accepted form is shown
    with pytest.raises(ValueError, match=re.escape(f"--volume '/dev/x={spec}'")):
        parse_volume_spec(f"/dev/x={spec}")


@pytest.mark.parametrize(("spec", "named"), BAD_SPECS)
@pytest.mark.parametrize("command", ["fio", "cost", "advise"])
def test_spec_number_grammar_cli(
    spec: str,
    named: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    if command == "fio":
        (tmp_path / "job.fio").write_text(JOB)
        args = ["fio", "--volume", f"/dev/x={spec}", "job.fio"]
    else:
        args = [command, "--region", "us-east-1", spec]
    _one_error_line(_cli(capsys, *args), spec, named)


def test_spec_units_are_the_keys_own() -> None:
    assert volume_from_spec("gp3:size=100GiB,iops=3000,throughput=250MiB/s") == ebssim.gp3(
        100, iops=3000, throughput_mib_s=250
    )
    with_units = volume_from_spec("gp2:size=100GiB,burst_balance=50%,latency_ms=0.5ms")
    assert with_units == volume_from_spec("gp2:size=100,burst_balance=50,latency_ms=0.5")
    assert with_units.burst_balance_pct == 50 and with_units.latency_ms == 0.5


# ---------------------------------------------------------------------------------------------
# 5. ebssim fit: logs of several jobs alone; --bin bounded by the log's span
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("surface", ["python", "cli"])
def test_fit_refuses_logs_of_two_jobs_alone(surface: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Two jobs of two fio runs, both thread 1: a_iops.1.log and b_iops.1.log.
    logs = [str(FIT / "03_gp2_invocations" / n) for n in ("a_iops.1.log", "b_iops.1.log")]
    needles = ("logs of 2 jobs", "a.1", "b.1", "without a job file or JSON")
    if surface == "python":
        with pytest.raises(ValueError) as info:
            ebssim.fit.fit(logs)
        assert all(n in str(info.value) for n in needles), str(info.value)
    else:
        _one_error_line(_cli(capsys, "fit", *logs), *needles)


def _span_s(log: Path) -> float:
    return max(int(line.split(",")[0]) for line in log.read_text().splitlines()) / 1e3


@pytest.mark.parametrize("bin_s", [1e-12, 5e-7])
@pytest.mark.parametrize("surface", ["python", "cli"])
def test_fit_bin_is_bounded(bin_s: float, surface: str, capsys: pytest.CaptureFixture[str]) -> None:
    src = FIT / "02_gp2_perio"
    span = _span_s(src / "perio_iops.1.log")  # the first job's per-I/O log: 10 s at 3,000 IOPS
    limit = 10_000_000
    assert span / bin_s > limit
    if surface == "python":
        with pytest.raises(ValueError) as info:
            ebssim.fit.fit([str(src)], type="gp2", bin_s=bin_s)
        message = str(info.value)
    else:
        message = _one_error_line(_cli(capsys, "fit", "--bin", repr(bin_s), str(src)))
    assert "perio_iops.1.log" in message
    assert f"--bin (bin_s) {bin_s!r} s" in message
    assert f"{span:g} s" in message and "10,000,000" in message
    smallest = float(message.rsplit("use --bin ", 1)[1].split()[0])
    assert span / limit <= smallest <= 1.01 * span / limit  # the smallest bin that would do, rounded up


# ---------------------------------------------------------------------------------------------
# Standard output is not an input either, and fit's inputs are bounded like every other
# ---------------------------------------------------------------------------------------------


def _ebssim(args: List[str], stdout: Any, cwd: Path, timeout: float = 120) -> "subprocess.CompletedProcess[bytes]":
    """The command line in its own process, standard output redirected as a shell's >> would."""
    return subprocess.run(
        [sys.executable, "-m", "ebssim.cli", *args], stdout=stdout, stderr=subprocess.PIPE, cwd=cwd, timeout=timeout
    )


def _stdout_cases(tmp: Path) -> Dict[str, Tuple[List[str], Path]]:
    """name -> (ebssim arguments, the input standard output is appended to)."""
    (tmp / "job.fio").write_text(JOB)
    fit_dir = tmp / "perio"
    shutil.copytree(FIT / "02_gp2_perio", fit_dir)
    volumes = tmp / "volumes.json"
    shutil.copyfile(DATA / "aws" / "ec2-describe-volumes.moto.json", volumes)
    return {
        "fio: the job file": (["fio", "--volume", VOLUME, "--no-logs", "job.fio"], tmp / "job.fio"),
        "fit: a log inside a directory given": (["fit", str(fit_dir)], fit_dir / "perio_iops.1.log"),
        "advise: the volumes file": (["advise", "--region", "us-east-1", str(volumes)], volumes),
    }


@pytest.mark.parametrize(
    "case", ["fio: the job file", "fit: a log inside a directory given", "advise: the volumes file"]
)
def test_standard_output_appended_to_an_input_is_refused(case: str, tmp_path: Path) -> None:
    # `ebssim fio job.fio >> job.fio` would append the report to the job file, as `cat x >> x`
    # would: refused (cat: "input file is output"), the input unchanged.
    args, target = _stdout_cases(tmp_path)[case]
    before = target.read_bytes()
    with open(target, "ab") as out:
        run = _ebssim(args, out, tmp_path)
    err = run.stderr.decode()
    assert run.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith("ebssim: error: standard output is one of the input files"), err
    assert target.read_bytes() == before


def test_standard_output_to_another_file_is_written(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text(JOB)
    with open(tmp_path / "report.txt", "ab") as out:
        run = _ebssim(["fio", "--volume", VOLUME, "--no-logs", "job.fio"], out, tmp_path)
    assert (run.returncode, run.stderr) == (0, b"")
    assert (tmp_path / "report.txt").read_text().startswith("x: (groupid=0")


@pytest.mark.parametrize("name", ["run.fio", "run.json", "run_iops.1.log", "unnamed"])
def test_fit_refuses_a_fifo_without_waiting(name: str, tmp_path: Path) -> None:
    # Opening a FIFO for reading waits for a writer; fit refuses it first, whatever it is named
    # (a name without a kind is opened to look at its first bytes).
    fifo = tmp_path / name
    os.mkfifo(fifo)
    run = _ebssim(["fit", str(fifo)], subprocess.PIPE, tmp_path, timeout=30)  # a wait for a writer times out
    err = run.stderr.decode()
    assert run.returncode == 2, err
    assert f"{fifo}: is a device, FIFO or socket, not a regular file" in err, err
