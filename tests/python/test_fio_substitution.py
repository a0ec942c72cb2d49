"""fio's ``${VAR}`` and ``$keyword`` substitutions in job files (ebssim.fio.substitution, issue 22).

What fio does is in tests/data/fio_jobs/substitution (README there): the same job files run by the
fio 3.33 binary with a given environment, and what it made of them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from ebssim.fio import FioJobError, parse_command_line, parse_job_file, parse_run
from ebssim.fio.substitution import bc_integer, machine_keywords

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "fio_jobs" / "substitution"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "job.fio"
    p.write_text(text)
    return p


def test_variables_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEV_ID", "/dev/nvme1n1")
    monkeypatch.setenv("TEST_MODE", "randwrite")
    monkeypatch.setenv("BS", "16")
    (job,) = parse_job_file(_write(tmp_path, "[j]\nfilename=${DEV_ID}\nrw=${TEST_MODE}\nbs=${BS}k\n"))
    assert (job.filename, job.rw, job.bs) == ("/dev/nvme1n1", "randwrite", 16 * 1024)


def test_environ_mapping_replaces_the_process_environment(tmp_path: Path) -> None:
    p = _write(tmp_path, "[j]\nfilename=${DEV_ID}\nrw=${TEST_MODE}\nbs=${BS}k\n")
    (job,) = parse_job_file(p, environ={"DEV_ID": "/dev/nvme1n1", "TEST_MODE": "randwrite", "BS": "16"})
    assert (job.filename, job.rw, job.bs) == ("/dev/nvme1n1", "randwrite", 16 * 1024)
    (same,) = parse_run(str(p), environ={"DEV_ID": "/dev/nvme1n1", "TEST_MODE": "randwrite", "BS": "16"})
    assert same.filename == "/dev/nvme1n1"


def test_an_unset_variable_names_itself_the_option_and_the_line(tmp_path: Path) -> None:
    p = _write(tmp_path, "[global]\nbs=4k\n[j]\nfilename=${DEV_ID}\n")
    with pytest.raises(FioJobError) as info:
        parse_job_file(p, environ={})
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err).startswith(f"{p}:4: ")
    assert "option 'filename'" in str(err) and "${DEV_ID} is not set" in str(err)
    assert err.line == 4 and err.key == "filename"
    with pytest.raises(FioJobError, match=r"'\$\{\}' names no variable"):
        parse_job_file(_write(tmp_path, "[j]\nfilename=${}\n"), environ={})


def test_keywords_and_their_bc_arithmetic(tmp_path: Path) -> None:
    kw = {"ncpus": 8, "pagesize": 4096, "mb_memory": 1024}
    text = "[j]\nnumjobs=$ncpus/3\nbs=$pagesize\nsize=2*$mb_memory\niodepth=($ncpus+1)*2\n"
    (job,) = parse_job_file(text, keywords=kw)
    # bc at scale 0: 8 / 3 = 2 (truncated); (8 + 1) x 2 = 18
    assert (job.numjobs, job.bs, job.size, job.iodepth) == (2, 4096, 2048, 18)
    # a keyword without + - * / is replaced and not computed
    (job,) = parse_job_file("[j]\nnumjobs=$ncpus\n", keywords={"ncpus": 3})
    assert job.numjobs == 3


def test_keywords_default_to_this_machine() -> None:
    mine = machine_keywords()
    assert mine["ncpus"] == os.sysconf("SC_NPROCESSORS_ONLN")
    assert mine["pagesize"] == os.sysconf("SC_PAGESIZE")
    assert mine["mb_memory"] == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE") // 2**20
    (job,) = parse_job_file("[j]\nnumjobs=$ncpus\n")
    assert job.numjobs == mine["ncpus"]


def test_what_bc_cannot_compute_is_an_error(tmp_path: Path) -> None:
    for text, why in [
        ("[j]\nsize=$mb_memory*1.5\n", r"decimal number"),
        ("[j]\nnumjobs=$ncpus/0\n", r"division by zero"),
        ("[j]\nsize=4k*$ncpus\n", r"bc cannot compute '4k\*2': unexpected 'k'"),
    ]:
        with pytest.raises(
            FioJobError, match=r"job.fio:2: option '(size|numjobs)': fio hands .* to bc \(.*\): .*" + why
        ):
            parse_job_file(_write(tmp_path, text), keywords={"ncpus": 2, "mb_memory": 100})


def test_bc_integer_semantics() -> None:
    # bc, scale 0: / and % truncate toward zero, ^ is right-associative, a unary minus binds tightest
    assert bc_integer("7/2") == 3 and bc_integer("-7/2") == -3 and bc_integer("-7%3") == -1
    assert bc_integer("2^3^2") == 512 and bc_integer("-2^2") == 4 and bc_integer("2+3*4") == 14
    assert bc_integer(" ( 1 + 2 ) * 3 ") == 9
    with pytest.raises(ValueError, match="64-bit"):
        bc_integer("2^200")


def test_a_dollar_left_over_says_what_fio_substitutes(tmp_path: Path) -> None:
    with pytest.raises(FioJobError, match=r"job.fio:2: size=\$SIZE: .*only \$\{NAME\} \(with braces\)"):
        parse_job_file(_write(tmp_path, "[j]\nsize=$SIZE\n"), environ={"SIZE": "1m"})
    with pytest.raises(FioJobError, match=r"only in job files"):
        parse_command_line(["fio", "--name=j", "--numjobs=$ncpus"])


def test_keywords_are_checked() -> None:
    with pytest.raises(ValueError, match=r"keywords=\{'cpus'"):
        parse_job_file("[j]\nnumjobs=$ncpus\n", keywords={"cpus": 2})
    with pytest.raises(ValueError, match=r"keywords\['ncpus'\]=-1"):
        parse_job_file("[j]\nnumjobs=$ncpus\n", keywords={"ncpus": -1})


def test_section_names_and_include_lines_are_not_substituted(tmp_path: Path) -> None:
    (job,) = parse_job_file("[${NAME}]\nrw=read\n", environ={})
    assert job.name == "${NAME}"
    with pytest.raises(FioJobError, match=re.escape("cannot read included job file '${INC}'")):
        parse_job_file(_write(tmp_path, "[j]\ninclude ${INC}\n"), environ={"INC": "other.fio"})


# ---- against the fio binary (tests/data/fio_jobs/substitution) ---------------------------------


def _fio_parsed(name: str) -> tuple[dict[str, str], dict[str, int], int]:
    """fio's --debug=parse of a job file: each option's value once substituted (``ptr``), the
    number fio read from it (``out``), and fio's exit status."""
    text = (FIXTURE / name).read_text()
    ptr: dict[str, str] = {}
    out: dict[str, int] = {}
    last = ""
    for line in text.splitlines():
        m = re.match(r"parse\s+\d+ handle_option=(\w+), ptr=(.*)$", line)
        if m:
            last = m.group(1)
            ptr[last] = m.group(2)
        m = re.match(r"parse\s+\d+\s+ret=0, out=(\d+)$", line)
        if m:
            out[last] = int(m.group(1))
    rc = int(re.findall(r"^rc=(\d+)$", text, flags=re.M)[-1])
    return ptr, out, rc


def _machine() -> dict[str, int]:
    pairs = (line.split("=") for line in (FIXTURE / "machine.txt").read_text().split())
    return {k: int(v) for k, v in pairs}


def test_same_values_as_fio() -> None:
    env = {"DEV_ID": "/tmp/fitfio/subst/data", "TEST_MODE": "randread", "BS": "8", "KW": "$ncpus*3"}  # README
    (job,) = parse_job_file(FIXTURE / "subst.fio", environ=env, keywords=_machine())
    ptr, out, rc = _fio_parsed("subst.parse.txt")
    assert rc == 0
    assert (job.filename, job.rw, job.description) == (ptr["filename"], ptr["rw"], ptr["description"])
    assert job.bs == out["bs"]
    assert job.numjobs == out["numjobs"]  # $ncpus/2 on 2 CPUs: 1
    assert job.iodepth == out["iodepth"]  # ($ncpus+1)*2: 6
    assert job.rate_iops_read == job.rate_iops_write == out["rate_iops"]  # $pagesize: 4096
    assert job.thinktime == pytest.approx(out["thinktime"] * 1e-6)  # ${KW} = $ncpus*3 us
    assert job.size == out["size"]  # $mb_memory*1024
    m = _machine()
    assert ptr["description"] == f"{m['ncpus']} {m['pagesize']} {m['mb_memory']}"


def test_unset_variable_where_fio_substitutes_nothing() -> None:
    ptr, _, rc = _fio_parsed("unset.parse.txt")
    assert ptr["rw"] == "" and rc == 1  # fio: an empty rw=, which it then refuses
    with pytest.raises(FioJobError) as info:
        parse_job_file(FIXTURE / "unset.fio", environ={})
    assert info.value.line == 5 and info.value.key == "rw" and "${UNSET_VAR} is not set" in str(info.value)


def test_bc_error_where_fio_drops_the_job() -> None:
    text = (FIXTURE / "bc_error.parse.txt").read_text()
    assert "syntax error" in text and "fio: failed parsing size=4k*$ncpus" in text and text.endswith("rc=1\n")
    with pytest.raises(
        FioJobError, match=r"bc_error.fio:4: option 'size': fio hands '4k\*2' to bc .*: bc cannot compute"
    ):
        parse_job_file(FIXTURE / "bc_error.fio", keywords={"ncpus": 2})
