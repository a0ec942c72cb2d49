"""``ebssim fit``: the command-line contract on real fio output (tests/data/fit, fio 3.33)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from ebssim.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "fit"
KEYS = {
    "volume",
    "volume_type",
    "size_gib",
    "baseline_iops",
    "burst_iops",
    "baseline_throughput_mib_s",
    "burst_throughput_mib_s",
    "cliff_time_s",
    "initial_burst_balance_pct",
    "service_time",
    "phases",
    "parameters",
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> Tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    rc, out, err = _run(capsys, "fit", "--output-format", "json", *args)
    assert rc == 0, err
    return json.loads(out)


def test_json_contract_gp2(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "--type", "gp2", "--rate-limits", "volume", str(DATA / "02_gp2_perio"))
    assert KEYS <= set(d)
    assert d["volume_type"] == "gp2" and d["size_gib"] == 100
    assert (d["baseline_iops"], d["burst_iops"]) == (300, 3000)
    assert (d["baseline_throughput_mib_s"], d["burst_throughput_mib_s"]) == (75, 128)  # min(128, 300 x 0.25)
    assert abs(d["cliff_time_s"] - 10.0) <= 0.1
    assert abs(d["initial_burst_balance_pct"] - 100 * 2700 * 10 / 5.4e6) <= 100 * 2700 * 0.1 / 5.4e6
    assert set(d["service_time"]) == {"intercept_ms", "per_mib_ms"}
    assert [p["job"] for p in d["phases"]] == ["burst", "baseline"]
    for p in d["phases"]:
        assert {"job", "start_s", "end_s", "iops", "throughput_mib_s", "bound"} <= set(p)
    names = [p["name"] for p in d["parameters"]]
    assert {"size_gib", "burst_balance_pct", "cliff_time_s"} <= set(names)
    for p in d["parameters"]:
        assert {"name", "value", "stderr"} <= set(p)


def test_volume_spec_is_accepted_by_ebssim_fio(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    d = _json(capsys, "--type", "gp2", "--rate-limits", "volume", str(DATA / "01_gp2_windowed"))
    rc, out, err = _run(
        capsys,
        "fio",
        "--no-logs",
        "--output-format",
        "json",
        "--volume",
        f"/dev/x={d['volume']}",
        "fio --name=a --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 --runtime=60 --time_based",
    )
    assert rc == 0, err
    job = json.loads(out)["jobs"][0]
    # the fitted balance lasts the cliff's time at 3,000 - 300 IOPS
    assert job["ebssim"]["cliff_time_s"] == pytest.approx(d["cliff_time_s"], abs=0.05)


def test_without_type_levels_and_consistent_types(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "--rate-limits", "volume", str(DATA / "03_gp2_invocations"))
    assert d["volume"] is None and d["volume_type"] is None and d["cliff_time_s"] is None
    assert [round(p["iops"], -1) for p in d["phases"]] == [3000, 300]
    assert any(c["type"] == "gp2" and c["size_gib"] == 100 for c in d["consistent_with"])


def test_inputs_file_by_file(capsys: pytest.CaptureFixture[str]) -> None:
    case = DATA / "01_gp2_windowed"
    d = _json(capsys, str(case / "cliff.fio"))  # a job file: its logs are found next to it
    assert [round(p["iops"], -1) for p in d["phases"]] == [3000, 300]
    d = _json(capsys, str(case / "cliff.json"), str(case / "cliff_iops.1.log"), str(case / "cliff_iops.2.log"))
    assert [round(p["iops"], -1) for p in d["phases"]] == [3000, 300]


def test_normal_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "fit", "--type", "gp2", "--rate-limits", "volume", str(DATA / "02_gp2_perio"))
    assert rc == 0, err
    assert "volume: gp2 100 GiB" in out and "cliff_time_s" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fit", str(DATA / "nope")], "no such file or directory"),
        (["fit", "--type", "gp2", "--size", "-1", str(DATA / "01_gp2_windowed")], "--size -1.0"),
        (["fit", "--type", "gp9", str(DATA / "01_gp2_windowed")], "invalid choice: 'gp9'"),
    ],
)
def test_errors_are_one_line(capsys: pytest.CaptureFixture[str], args: List[str], message: str) -> None:
    try:
        rc = main(args)
    except SystemExit as e:  # argparse
        rc = int(e.code or 0)
    _, err = capsys.readouterr()
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ebssim: error: ") and message in lines[0]


def test_installed_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ebssim.cli", "fit", "--output-format", "json", str(DATA / "02_gp2_perio")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert KEYS <= set(json.loads(proc.stdout))
