"""The `ebssim fio` command line: its contract (docs "Public surfaces") and its numbers.

Most cases call ebssim.cli.main in-process (fast); a few run the installed console script in a
subprocess to check the real entry point, exit status and streams. The CLI always runs with
cwd=tmp_path so that the logs it writes land there.

Service times used below (gp2/gp3: 0.5 ms + size / 1,024 MiB/s): 4 KiB 0.503815 ms,
16 KiB 0.515259 ms.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import ebssim
import pytest
from ebssim.cli import main
from ebssim.fio import FIO_PERCENTILES, read_json, read_log

DATA = Path(__file__).resolve().parent.parent / "data" / "fio_jobs"
FOUR_PHASE = DATA / "four_phase_stonewall.fio"

MiB = 1024**2
S4K = 0.5e-3 + 4096 / (1024 * MiB)
S16K = 0.5e-3 + 16384 / (1024 * MiB)

FAST_GP3 = "gp3:size=1000,iops=16000,throughput=1000"
GP2_CLIFF = (
    "fio --name=rr --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 --runtime=2700 --time_based"
)

_SCRIPT = Path(sys.executable).with_name("ebssim")
ENTRY: List[str] = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "ebssim.cli"]


def ebssim_fio(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    return subprocess.run([*ENTRY, "fio", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


Cli = Tuple[int, str, str]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """ebssim.cli.main(["fio", ...]) in tmp_path -> (exit status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> Cli:
        rc = main(["fio", *args])
        out, err = capsys.readouterr()
        return rc, out, err

    return call


def _no_nan(token: str) -> None:
    raise AssertionError(f"invalid JSON constant {token} in ebssim's output")


def load(text: str) -> Dict[str, Any]:
    """Strict JSON: NaN / Infinity are not JSON."""
    doc = json.loads(text, parse_constant=_no_nan)
    assert isinstance(doc, dict)
    return doc


def assert_one_line_error(rc: int, out: str, err: str, *needles: str) -> str:
    assert rc == 2, (rc, out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("ebssim: error: "), err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


# ---------------------------------------------------------------------------------------------
# 1. psync vs libaio, end to end through the console script and read_json
# ---------------------------------------------------------------------------------------------


def test_psync_vs_libaio_json(tmp_path: Path) -> None:
    common = "--filename=/dev/x --rw=randread --bs=16k --numjobs=4 --runtime=30 --time_based"
    psync = f"fio --name=ps {common} --ioengine=psync"
    libaio = f"fio --name=aio {common} --ioengine=libaio --iodepth=64"
    # Without overshoot (the aio run would spend a second saved during the psync run: 31/30 of
    # the cap, tests/python/test_fio_simulate.py::test_psync_vs_libaio_fixture_phases).
    spec = f"/dev/x={FAST_GP3},overshoot=0"
    proc = ebssim_fio(["--volume", spec, "--output-format", "json", psync, libaio], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    res = read_json(proc.stdout.encode())
    jobs = res.jobs
    assert list(jobs["jobname"]) == ["ps"] * 4 + ["aio"] * 4
    assert set(jobs["direction"]) == {"read"}
    assert (jobs["runtime_ms"] == 30000).all()
    ps, aio = jobs.iloc[:4], jobs.iloc[4:]
    # psync: 1 in flight per job -> 1 / 0.5152588 ms = 1,940.77 per job, 7,763.09 in all;
    # latency = the service time.
    assert list(ps["iops"]) == pytest.approx([1 / S16K] * 4, rel=1e-9)
    assert ps["iops"].sum() == pytest.approx(7763.09, abs=0.01)
    assert list(ps["clat_mean_ns"]) == pytest.approx([S16K * 1e9] * 4, rel=1e-9)
    assert ps["slat_mean_ns"].isna().all()  # a synchronous engine: fio prints no slat (N 0)
    assert list(ps["total_ios"]) == pytest.approx([30 / S16K] * 4, abs=1)
    # libaio QD64 x 4 = 256 in flight, capped at 16,000: 4,000 per job, 256 / 16,000 = 16 ms of
    # lat; fio's slat is 0.84 / 64 = 0.013125 of the wait 16 - 0.51526 = 15.48474 ms (Nitro,
    # docs/model.md "Submission latency"): 0.20324 ms; clat the rest, 15.79676 ms.
    assert list(aio["iops"]) == pytest.approx([4000.0] * 4, rel=1e-9)
    slat = 0.84 / 64 * (16e-3 - S16K)
    assert slat == pytest.approx(0.20324e-3, rel=1e-4)
    assert list(aio["lat_mean_ns"]) == pytest.approx([16e6] * 4, rel=1e-9)
    assert list(aio["slat_mean_ns"]) == pytest.approx([slat * 1e9] * 4, rel=1e-9)
    assert list(aio["clat_mean_ns"]) == pytest.approx([(16e-3 - slat) * 1e9] * 4, rel=1e-9)
    assert list(aio["total_ios"]) == pytest.approx([120_000] * 4, abs=1)
    assert list(aio["bw_kib_s"]) == pytest.approx([4000 * 16] * 4, abs=1)
    runs = [j["ebssim"]["run"] for j in res.raw["jobs"]]
    assert runs == [psync] * 4 + [libaio] * 4
    assert [j["ebssim"]["bound"] for j in res.raw["jobs"]] == ["demand"] * 4 + ["volume_iops"] * 4


# ---------------------------------------------------------------------------------------------
# 2. gp2 cliff through fio: JSON and the iops log
# ---------------------------------------------------------------------------------------------


def test_gp2_cliff_json_and_log(tmp_path: Path) -> None:
    run = GP2_CLIFF + " --write_iops_log=rr --log_avg_msec=1000"
    proc = ebssim_fio(["--volume", "/dev/x=gp2:size=100", "--output-format=json", run], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = load(proc.stdout)
    res = read_json(proc.stdout)
    (row,) = res.jobs.itertuples()
    # (2,000 x 3,000 + 700 x 300) / 2,700 = 2,300 IOPS over 2,700,000 ms.
    assert row.iops == pytest.approx(2300.0, rel=1e-9)
    assert row.runtime_ms == 2_700_000
    assert row.total_ios == 6_210_000
    # The same percentiles as the API's run of the same load with the same share 0.84 / 32 of each
    # wait in submission (libaio at iodepth 32 on Nitro: fio's slat, docs/model.md): p50 9.31 ms,
    # below the 10.40 ms clat mean of the 6.0 M I/Os before the cliff (10.67 ms of lat less
    # 0.02625 x 10.16 ms of slat); p99 past the 103.9 ms (106.7 - 0.02625 x 106.2) after it.
    r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), 2700)
    share = 0.84 / 32
    api = r.latency_percentiles([50, 99], model=dataclasses.replace(r.latency_model, submission_share=share))
    assert row.clat_p50_ns == pytest.approx(api[50] * 1e6, rel=1e-6)
    assert row.clat_p99_ns == pytest.approx(api[99] * 1e6, rel=1e-6)
    s4k = 0.5e-3 + 4096 / (1024 * MiB)
    before, after = 32 / 3000 - share * (32 / 3000 - s4k), 32 / 300 - share * (32 / 300 - s4k)
    assert before == pytest.approx(10.3999e-3, rel=1e-4) and after == pytest.approx(103.880e-3, rel=1e-4)
    assert 0.85 < row.clat_p50_ns / (before * 1e9) < 0.95 and 1.1 < row.clat_p99_ns / (after * 1e9) < 1.3
    eb = doc["jobs"][0]["ebssim"]
    assert eb["cliff_time_s"] == pytest.approx(2000.0, abs=1e-6)  # 5.4e6 / (3,000 - 300)
    assert eb["burst_balance_end_pct"] == pytest.approx(0.0, abs=1e-9)
    assert eb["bound"] == "volume_iops"
    # The log is written in the working directory, in fio's format.
    log = read_log(tmp_path / "rr_iops.1.log")
    assert len(log) == 2700
    assert (log.loc[log["time_ms"] <= 2_000_000, "iops"] == 3000).all()
    assert (log.loc[log["time_ms"] > 2_000_000, "iops"] == 300).all()
    assert log["time_ms"].iloc[1999] == 2_000_000 and log["iops"].iloc[2000] == 300


def test_normal_report_reads_like_fio(cli: Any) -> None:
    rc, out, err = cli("--volume", "/dev/x=gp2:size=100", GP2_CLIFF)  # normal is the default
    assert rc == 0 and err == ""
    assert out.startswith("rr: (groupid=0, jobs=1): err= 0:")
    assert "read: IOPS=2300, BW=" in out
    assert "2700000msec" in out
    assert "clat (usec): min=" in out and "avg=" in out and "stdev=" in out
    assert "clat percentiles (usec):" in out
    for label in ("1.00th=[", "50.00th=[", "99.00th=[", "99.99th=["):
        assert label in out
    assert "cliff at 2000.0 s" in out
    rc2, out2, _ = cli("--output-format", "normal", "--volume", "/dev/x=gp2:size=100", GP2_CLIFF)
    assert rc2 == 0 and out2 == out


# ---------------------------------------------------------------------------------------------
# 3. Size-limited jobs and ramp
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, runtime_ms, io_bytes",
    [
        ("--size=1g", 8192, 1024 * MiB),  # 1,024 MiB / 125 MiB/s = 8.192 s
        ("--size=4g --io_size=1g", 8192, 1024 * MiB),
        ("--size=1g --ramp_time=2", 8192, 1024 * MiB),  # the ramp is not reported
        ("--time_based --runtime=10 --ramp_time=2", 10000, 10 * 125 * MiB),
    ],
)
def test_size_limited_json(cli: Any, extra: str, runtime_ms: int, io_bytes: int) -> None:
    run = f"fio --name=s --filename=/dev/x --rw=read --bs=1m --ioengine=libaio --iodepth=8 {extra}"
    rc, out, err = cli("--volume", "/dev/x=gp3:size=100", "--output-format", "json", "--dt", "1", run)
    assert rc == 0, err
    read = load(out)["jobs"][0]["read"]
    assert read["runtime"] == runtime_ms
    assert read["io_bytes"] == io_bytes
    assert read["bw_bytes"] == 125 * MiB
    assert read["iops"] == pytest.approx(125.0, rel=1e-9)
    assert read["lat_ns"]["mean"] == pytest.approx(8 / 125 * 1e9, rel=1e-9)  # 8 in flight / 125
    # libaio at iodepth 8 (Nitro): slat is 0.84 / 8 = 0.105 of the wait 64 - s ms, s = 0.5 ms +
    # 1 MiB / 1,024 MiB/s = 1.4766 ms: 0.105 x 62.5234 = 6.5650 ms; clat 57.4350 ms.
    s1m = 0.5e-3 + 1 / 1024
    assert read["slat_ns"]["mean"] == pytest.approx(0.105 * (8 / 125 - s1m) * 1e9, rel=1e-9)
    assert read["clat_ns"]["mean"] == pytest.approx((8 / 125 - 0.105 * (8 / 125 - s1m)) * 1e9, rel=1e-9)
    assert read["clat_ns"]["mean"] == pytest.approx(57.4350e6, rel=1e-5)


# ---------------------------------------------------------------------------------------------
# 4. Phases, logs in the working directory, JSON shape
# ---------------------------------------------------------------------------------------------

# Without overshoot: the phases' figures below hold from each phase's first second (overshoot
# across phases: tests/python/test_examples.py::test_fio_phases_example).
TWO_VOLUMES = ["--volume", "/dev/nvme1n1=gp2:size=100,overshoot=0", "--volume", "/dev/nvme2n1=gp2:size=100,overshoot=0"]


def test_four_phase_fixture(cli: Any, tmp_path: Path) -> None:
    rc, out, err = cli(*TWO_VOLUMES, "--output-format", "json", str(FOUR_PHASE))
    assert rc == 0, err
    doc = load(out)
    jobs = doc["jobs"]
    assert [j["jobname"] for j in jobs] == ["warm_a", "warm_b", "seqwrite_a", "mixed_b", "probe_a", "final"]
    assert [j["groupid"] for j in jobs] == [0, 0, 1, 2, 3, 4]
    assert [j["ebssim"]["clones"] for j in jobs] == [1, 1, 1, 2, 1, 1]
    j = {x["jobname"]: x for x in jobs}
    # Phase 2: writes only, 128 MiB/s on gp2 100 GiB.
    assert j["seqwrite_a"]["write"]["bw_bytes"] == 128 * MiB
    assert j["seqwrite_a"]["read"]["io_bytes"] == 0
    # Phase 3: mixed_b's two clones merged: 3,000 IOPS, 70/30.
    assert j["mixed_b"]["read"]["iops"] == pytest.approx(2100.0, rel=1e-9)
    assert j["mixed_b"]["write"]["iops"] == pytest.approx(900.0, rel=1e-9)
    assert j["mixed_b"]["read"]["runtime"] == 60000
    assert j["probe_a"]["read"]["runtime"] == 30000
    # Phase 4: 2 m reported, the 5 s ramp left out.
    assert j["final"]["read"]["runtime"] == 120000
    assert j["final"]["read"]["iops"] == pytest.approx(6000.0, rel=1e-9)
    # B (gp2) balance at mixed_b's end: 5.4e6 - 162,000 + 18,000 (rests in phase 2) - 162,000.
    assert j["mixed_b"]["ebssim"]["burst_balance_end_pct"] == pytest.approx(5_094_000 / 5.4e6 * 100, rel=1e-9)
    # warm_a has write_iops_log=warm_a: fio's name, job number 1, in the working directory.
    log = read_log(tmp_path / "warm_a_iops.1.log")
    assert list(log["time_ms"]) == [1000 * k for k in range(1, 61)]
    assert (log["iops"] == 3000).all()


def test_json_shape(cli: Any) -> None:
    rc, out, err = cli(*TWO_VOLUMES, "--output-format", "json", str(FOUR_PHASE))
    assert rc == 0, err
    doc = load(out)
    assert doc["fio version"].startswith("fio-3.")
    assert isinstance(doc["jobs"], list) and doc["jobs"]
    pkeys = [f"{p:.6f}" for p in FIO_PERCENTILES]
    assert "99.000000" in pkeys and "99.990000" in pkeys and "1.000000" in pkeys
    for job in doc["jobs"]:
        assert isinstance(job["jobname"], str) and isinstance(job["groupid"], int)
        for d in ("read", "write"):
            o = job[d]
            for k in ("io_bytes", "bw", "bw_bytes", "iops", "runtime", "total_ios", "lat_ns", "clat_ns"):
                assert k in o, (job["jobname"], d, k)
            for k in ("io_bytes", "bw", "bw_bytes", "runtime", "total_ios"):
                assert isinstance(o[k], int), (job["jobname"], d, k)
            assert o["bw"] == pytest.approx(o["bw_bytes"] / 1024, abs=1)  # KiB/s
            for lat in ("lat_ns", "clat_ns"):
                for k in ("min", "max", "mean", "stddev"):
                    assert k in o[lat], (job["jobname"], d, lat, k)
            if o["total_ios"] > 0:
                assert o["iops"] == pytest.approx(o["total_ios"] / (o["runtime"] / 1000), rel=1e-3)
                assert o["bw_bytes"] == pytest.approx(o["io_bytes"] / (o["runtime"] / 1000), rel=1e-3)
                c = o["clat_ns"]
                assert list(c["percentile"]) == pkeys
                vals = list(c["percentile"].values())
                assert all(isinstance(v, int) for v in vals) and vals == sorted(vals)
                assert c["min"] <= c["mean"] <= c["max"]
            else:
                assert o["iops"] == 0
        eb = job["ebssim"]
        for k in ("cliff_time_s", "burst_balance_end_pct", "bound", "run"):
            assert k in eb
        assert eb["run"] == str(FOUR_PHASE)
        assert eb["bound"] in ("demand", "volume_iops", "volume_throughput", "instance_iops", "instance_throughput")
    # read_json accepts the whole document.
    res = read_json(out)
    assert res.fio_version == doc["fio version"]
    assert len(res.jobs) == 7  # mixed_b has a read and a write row


def test_several_runs_carry_state_in_one_document(cli: Any) -> None:
    drain = (
        "fio --name=drain --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
        "--runtime=2000 --time_based"
    )
    rc, out, err = cli("--volume", "/dev/x=gp2:size=100", "--output-format", "json", drain, GP2_CLIFF)
    assert rc == 0, err
    doc = load(out)
    assert [j["jobname"] for j in doc["jobs"]] == ["drain", "rr"]
    assert [j["ebssim"]["run"] for j in doc["jobs"]] == [drain, GP2_CLIFF]
    # drain spends the 5.4 M credits in exactly 2,000 s; rr starts at the cliff: 300 IOPS all along.
    assert doc["jobs"][0]["read"]["iops"] == pytest.approx(3000.0, rel=1e-9)
    assert doc["jobs"][1]["read"]["iops"] == pytest.approx(300.0, rel=1e-9)
    assert doc["jobs"][1]["read"]["lat_ns"]["mean"] == pytest.approx(32 / 300 * 1e9, rel=1e-9)
    # clat = lat less slat, 0.84 / 32 of the wait 106.667 - 0.504 ms (libaio on Nitro): 103.880 ms.
    clat = 32 / 300 - 0.84 / 32 * (32 / 300 - (0.5e-3 + 4096 / (1024 * MiB)))
    assert clat == pytest.approx(103.880e-3, rel=1e-5)
    assert doc["jobs"][1]["read"]["clat_ns"]["mean"] == pytest.approx(clat * 1e9, rel=1e-9)


def test_instance_m5_large(cli: Any) -> None:
    run = (
        "fio --rw=randread --bs=16k --ioengine=libaio --iodepth=64 --runtime=3600 --time_based "
        "--name=a --filename=/dev/a --name=b --filename=/dev/b"
    )
    rc, out, err = cli(
        "--volume", f"/dev/a={FAST_GP3}", "--volume", f"/dev/b={FAST_GP3}",
        "--instance", "m5.large", "--output-format", "json", "--dt", "1", run,
    )  # fmt: skip
    assert rc == 0, err
    jobs = load(out)["jobs"]
    # 18,750 for 1,800 s then 3,600, split evenly: (1,800 x 18,750 + 1,800 x 3,600) / 3,600 / 2.
    for j in jobs:
        assert j["read"]["iops"] == pytest.approx((1800 * 18750 + 1800 * 3600) / 3600 / 2, rel=1e-9)
        assert j["ebssim"]["bound"] == "instance_iops"
    rc, out, err = cli(
        "--volume", f"/dev/a={FAST_GP3}", "--volume", f"/dev/b={FAST_GP3}", "--output-format", "json", run
    )
    assert rc == 0, err
    assert [j["read"]["iops"] for j in load(out)["jobs"]] == pytest.approx([16000.0, 16000.0], rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 5. Output options
# ---------------------------------------------------------------------------------------------


def test_output_file(cli: Any, tmp_path: Path) -> None:
    rc, out, err = cli("--volume", "/dev/x=gp2:size=100", "--output-format", "json", "--output", "pred.json", GP2_CLIFF)
    assert (rc, out, err) == (0, "", "")
    res = read_json(tmp_path / "pred.json")
    assert res.jobs["iops"].tolist() == pytest.approx([2300.0], rel=1e-9)


def test_fio_output_options_inside_a_run_are_ignored(cli: Any, tmp_path: Path) -> None:
    run = GP2_CLIFF + " --output-format=json --output=fio_said.json --eta=never"
    rc, out, err = cli("--volume", "/dev/x=gp2:size=100", run)
    assert rc == 0, err
    # ebssim's flags decide: normal report on stdout, nothing at fio's --output.
    assert out.startswith("rr: (groupid=0")
    assert not (tmp_path / "fio_said.json").exists()
    assert "read: IOPS=2300" in out


# ---------------------------------------------------------------------------------------------
# 6. Errors: exit status 2, one line on stderr, no traceback
# ---------------------------------------------------------------------------------------------

RUN_X = "fio --name=j --filename=/dev/x --rw=randread --runtime=5 --time_based"


@pytest.mark.parametrize(
    "spec, needles",
    [
        ("/dev/x=gp3:sizee=10", ["sizee", "size, iops, throughput, burst_balance, latency_ms"]),  # wrong key
        ("/dev/x=gp3:size=abc", ["size", "'abc'", "not a number"]),  # bad number
        ("/dev/x=gp3:iops=3000.5", ["3000.5"]),
        ("/dev/x=gp3:size=nan", ["nan"]),
        ("/dev/x=gp4", ["'gp4'", "gp2, gp3, io1, io2, st1, sc1, standard"]),  # unknown type
        ("/dev/x=GP3", ["'GP3'"]),
        # invalid AWS combinations, the rule named
        ("/dev/x=gp3:size=10,iops=6000", ["iops=6000", "500 IOPS per GiB", "5000"]),
        ("/dev/x=gp3:throughput=1000", ["1000", "0.25 MiB/s per provisioned IOPS", "750"]),
        ("/dev/x=io1:size=10,iops=1000", ["iops=1000", "50 IOPS per GiB"]),
        ("/dev/x=gp2:size=0", ["size_gib=0", "1 to 16384 GiB"]),
        ("/dev/x=st1:size=100", ["size_gib=100", "125 to 16384 GiB"]),
        ("/dev/x=gp3:burst_balance=50", ["burst_balance", "gp3"]),
        ("/dev/x=gp2:burst_balance=150", ["burst_balance", "150"]),
        # grammar
        ("/dev/x", ["TARGET=TYPE"]),
        ("=gp3", ["TARGET"]),
        ("/dev/x=gp3:size", ["'size'", "key=value"]),
    ],
)
def test_bad_volume_spec(cli: Any, spec: str, needles: List[str]) -> None:
    line = assert_one_line_error(*cli("--volume", spec, RUN_X), *needles)
    assert spec in line  # the offending argument is quoted


def test_bad_volume_spec_console_script(tmp_path: Path) -> None:
    proc = ebssim_fio(["--volume", "/dev/x=gp3:size=10,iops=6000", RUN_X], tmp_path)
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, "500 IOPS per GiB")


def test_job_matching_no_volume_names_job_file_and_line(cli: Any, tmp_path: Path) -> None:
    jobfile = tmp_path / "jobs.fio"
    jobfile.write_text(
        "[global]\n"  # 1
        "rw=randread\n"  # 2
        "runtime=5\n"  # 3
        "\n"  # 4
        "[ok]\n"  # 5
        "filename=/dev/x\n"  # 6
        "\n"  # 7
        "[lost]\n"  # 8
        "filename=/dev/nvme9n1\n"  # 9
    )
    assert_one_line_error(*cli("--volume", "/dev/x=gp3", str(jobfile)), f"{jobfile}:8", "'lost'", "/dev/nvme9n1")
    assert_one_line_error(
        *cli("--volume", "/dev/x=gp3", "fio --name=cmd --filename=/dev/y --rw=randread --runtime=5"),
        "fio command line",
        "'cmd'",
        "'/dev/y'",
    )


def test_job_without_filename(cli: Any) -> None:
    assert_one_line_error(
        *cli("--volume", "/dev/x=gp3", "fio --name=nofile --rw=randread --runtime=5"), "'nofile'", "filename"
    )


def test_directory_target(cli: Any) -> None:
    vol = ["--volume", "/mnt/data=gp2:size=100", "--output-format", "json"]
    for run in (
        "fio --name=f --filename=/mnt/data/testfile --rw=randread --runtime=5 --time_based",
        "fio --name=d --directory=/mnt/data --rw=randread --runtime=5 --time_based",
        "fio --name=r --directory=/mnt/data --filename=sub/file --rw=randread --runtime=5 --time_based",
    ):
        rc, out, err = cli(*vol, run)
        assert rc == 0, err
        # psync 4 KiB on gp2: 1 / 0.504 ms = 1,984.9 IOPS, under 3,000.
        assert load(out)["jobs"][0]["read"]["iops"] == pytest.approx(1 / S4K, rel=1e-9)
    # A sibling whose name merely starts with the TARGET does not lie under it.
    assert_one_line_error(
        *cli(*vol, "fio --name=s --filename=/mnt/database/f --rw=randread --runtime=5"), "'s'", "/mnt/database/f"
    )


def test_unknown_fio_option(cli: Any, tmp_path: Path) -> None:
    jobfile = tmp_path / "bad.fio"
    jobfile.write_text("[a]\nfilename=/dev/x\nruntime=5\nbogus_opt=3\n")
    assert_one_line_error(*cli("--volume", "/dev/x=gp3", str(jobfile)), f"{jobfile}:4", "bogus_opt")
    assert_one_line_error(*cli("--volume", "/dev/x=gp3", RUN_X + " --bogus=1"), "fio command line", "bogus")


def test_options_that_do_not_change_the_model_are_accepted(cli: Any) -> None:
    run = RUN_X + " --direct=1 --randrepeat=0 --clocksource=clock_gettime --norandommap"
    rc, out, err = cli("--volume", "/dev/x=gp3", run)
    assert rc == 0, err
    assert "read: IOPS=1985" in out  # 1 / 0.503815 ms


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--volume", "/dev/x=gp3", "missing.fio"], ["missing.fio"]),
        (["--volume", "/dev/x=gp3", "--instance", "m5.huge", RUN_X], ["m5.huge", "m5.large"]),
        ([RUN_X], ["--volume"]),
        (["--volume", "/dev/x=gp3", "--dt", "0", RUN_X], ["dt"]),
        (["--volume", "/dev/x=gp3", "fio"], ["no jobs"]),
    ],
)
def test_other_errors(cli: Any, args: List[str], needles: List[str]) -> None:
    assert_one_line_error(*cli(*args), *needles)


def test_instance_without_ebs_limits_simulates_the_volumes_alone(tmp_path: Path) -> None:
    # t2.micro publishes no EBS limits: the volume runs alone (psync, one I/O in flight on 8 GiB
    # gp3: 1 / 0.503815 ms = 1,985 IOPS), and stderr says why no instance limit applied.
    proc = ebssim_fio(["--volume", "/dev/x=gp3", "--instance", "t2.micro", RUN_X], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "read: IOPS=1985" in proc.stdout
    assert "t2.micro" in proc.stderr and "no EBS limits" in proc.stderr
    assert "Traceback" not in proc.stderr
