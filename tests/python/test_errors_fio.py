"""Issue 19 for the fio and fit surfaces: nothing lost, no silent accept, every bad input a ValueError.

Each case runs through the Python API and through the command line (one ``ebssim: error:`` line,
exit status 2). Overwrite cases also check that the input's bytes are unchanged afterwards.
Inputs are real fio output (tests/data), mutated in the test where the case needs a bad one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Tuple

import ebssim
import ebssim.fit
import pytest
from ebssim.cli import main
from ebssim.fio import predict

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
