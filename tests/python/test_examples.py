"""The demo script and the tutorial notebooks run end to end and tell the documented story."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gp2_vs_gp3_cliff.py"
INSTANCE_EXAMPLE = ROOT / "examples" / "instance_bottleneck.py"
FIO_PHASES_EXAMPLE = ROOT / "examples" / "fio_phases.py"
FIO_PSYNC_EXAMPLE = ROOT / "examples" / "fio_psync_vs_libaio.py"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _run_example(cwd: Path, script: Path, *args: str) -> str:
    """Run an example script as a user would; return what it printed (it must exit 0)."""
    proc = subprocess.run([sys.executable, str(script), *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_gp2_vs_gp3_cliff_example(tmp_path: Path) -> None:
    png = tmp_path / "plots" / "cliff.png"
    out = _run_example(tmp_path, EXAMPLE, "--output", str(png))

    m = re.search(r"gp2: cliff at (\d+) s", out)
    assert m, out
    # 5.4e6 credits / (3,000 - 300) IOPS = 2,000 s
    assert abs(int(m.group(1)) - 2000) <= 1, out
    assert re.search(r"^gp3: no cliff\b", out, re.MULTILINE), out
    assert str(png) in out

    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 20_000  # a three-panel figure, not an empty canvas


def _iops(text: str) -> float:
    return float(text.replace(",", ""))


def test_instance_bottleneck_example(tmp_path: Path) -> None:
    png = tmp_path / "plots" / "instance.png"
    out = _run_example(tmp_path, INSTANCE_EXAMPLE, "--output", str(png))

    # Alone, the two gp3 volumes (16,000 IOPS each) serve 32,000 IOPS together.
    m = re.search(r"^Alone\b.*together ([\d,]+) IOPS", out, re.MULTILINE)
    assert m and _iops(m.group(1)) == pytest.approx(32_000), out

    # m5.large: the bucket holds (18,750 - 3,600) x 1,800 s and drains at 18,750 - 3,600 per second
    # while the volumes ask for more than the maximum: EBSIOBalance% reaches 0 after 1,800 s.
    m = re.search(r"^.*\binstance\b.*EBSIOBalance% reaches 0 at (\d+) s", out, re.MULTILINE)
    assert m, out
    assert abs(int(m.group(1)) - 1800) <= 1, out

    # Proportional sharing of equal demands: half each of 18,750 before, of 3,600 after.
    expected = {"before": (18_750, 9_375), "after": (3_600, 1_800)}
    for phase, (total, each) in expected.items():
        block = re.search(rf"^  {phase} \(.*?\n((?:    volume .*\n)+)", out, re.MULTILINE)
        assert block, out
        m = re.search(rf"^  {phase} \(.*together ([\d,]+) IOPS", out, re.MULTILINE)
        assert m and _iops(m.group(1)) == pytest.approx(total, rel=1e-6), out
        vols = re.findall(r"volume (\d+):\s+([\d,]+) IOPS", block.group(1))
        assert [v for v, _ in vols] == ["1", "2"], out
        for _, iops in vols:
            assert _iops(iops) == pytest.approx(each, rel=1e-6), out

    assert re.search(r"^Takeaway:", out, re.MULTILINE), out
    assert str(png) in out
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 20_000  # a three-panel figure, not an empty canvas


def test_fio_phases_example(tmp_path: Path) -> None:
    out = _run_example(tmp_path, FIO_PHASES_EXAMPLE)
    assert out.startswith("$ ebssim fio --volume /dev/nvme1n1=gp2:size=100 --volume /dev/nvme2n1=gp3:size=100 ")

    # The fio-like report: every job, in order, with fio's reporting groups.
    heads = re.findall(r"^(\w+): \(groupid=(\d+), jobs=(\d+)\)", out, re.MULTILINE)
    assert heads == [
        ("warm_a", "0", "1"),
        ("warm_b", "0", "1"),
        ("seqwrite_a", "1", "1"),
        ("mixed_b", "2", "2"),
        ("probe_a", "3", "1"),
        ("final_a", "4", "1"),
        ("final_b", "4", "1"),
    ], out
    assert "clat percentiles (usec):" in out

    summary = {
        m.group(1): m
        for m in re.finditer(
            r"^  (\w+)\s+group (\d+):\s+([\d,.]+) IOPS, mean latency\s+([\d.]+) ms, (no cliff|cliff at ([\d.]+) s), "
            r"(?:BurstBalance ([\d.]+) % at end|no burst bucket), bound by (\w+)$",
            out,
            re.MULTILINE,
        )
    }
    assert list(summary) == [h[0] for h in heads], out

    def iops(name: str) -> float:
        return _iops(summary[name].group(3))

    # Volume A (gp2 100 GiB) credits, from 5.4 M, earning 300/s:
    # phase 1: 30 min at 3,000 IOPS: -2,700 x 1,800 = -4,860,000 -> 540,000 (10.00 %)
    assert summary["warm_a"].group(7) == "10.00"
    assert iops("warm_a") == iops("warm_b") == pytest.approx(3000.0)
    # phase 2: 1 MiB writes at gp2's 128 MiB/s = 512 counted ops/s. Phase 1 (16 MiB/s) stayed below
    # the throughput cap and saved a second of it (overshoot, 1 s on Nitro): the first second
    # moves 256 MiB, so 128 x 301 / 300 = 128.43 MiB/s; -(512 x 301 - 300 x 300) -> 475,888 (8.81 %)
    assert iops("seqwrite_a") == pytest.approx(128.0 * 301 / 300, abs=0.05)
    assert summary["seqwrite_a"].group(7) == "8.81"
    # phase 3: probe_a 1 / (0.504 + 0.5) ms = 996.2 IOPS for 5 min: -696.2 x 300 -> 267,028 (4.94 %),
    # then A rests until mixed_b ends (5 more min): +90,000 -> 357,028.
    assert iops("probe_a") == pytest.approx(996.2, abs=0.05)
    assert summary["probe_a"].group(7) == "4.94"
    # B (gp3) serves 3,000 whenever asked, and mixed_b's 600 s, after B rested through phase 2,
    # a saved second more: 3,000 x 601 / 600 = 3,005, its mean latency below 32 / 3,000.
    assert iops("mixed_b") == pytest.approx(3000.0 * 601 / 600)
    assert float(summary["mixed_b"].group(4)) < 32 / 3000 * 1e3
    # phase 4: the rest saved a second of the 3,000 IOPS cap: the first second serves 6,000
    # (-5,700), and 351,328 / 2,700 = 130.1 s more at 3,000 (5 s of the 131.1 are ramp), then 300:
    # reported IOPS (126.1 x 3,000 + 473.9 x 300) / 600 = 867.5. The cliff is reported in fio's
    # time base, from the end of the ramp: 131.1 - 5 = 126.1 s.
    assert float(summary["final_a"].group(6)) == pytest.approx(126.12, abs=0.05)
    assert iops("final_a") == pytest.approx(867.5, abs=0.1)
    assert summary["final_a"].group(7) == "0.00"
    for name in ("warm_b", "mixed_b", "final_b"):
        assert summary[name].group(5) == "no cliff" and summary[name].group(7) is None
    for name in ("warm_b", "final_b"):
        assert float(summary[name].group(4)) == pytest.approx(32 / 3000 * 1e3, abs=1e-3)
    assert summary["seqwrite_a"].group(8) == "volume_throughput"
    assert summary["probe_a"].group(8) == "demand"


def test_fio_psync_vs_libaio_example(tmp_path: Path) -> None:
    out = _run_example(tmp_path, FIO_PSYNC_EXAMPLE)
    # s = 0.5 ms + 16 KiB / 1,024 MiB/s = 0.5153 ms
    assert "= 0.5153 ms" in out
    pred = {
        m.group(1): m
        for m in re.finditer(
            r"^  predicted (.+?): ([\d,]+) IOPS \(([\d,]+) per job\), mean latency ([\d.]+) ms, .*bound by (\w+)$",
            out,
            re.MULTILINE,
        )
    }
    assert list(pred) == ["psync numjobs=4", "libaio iodepth=64 numjobs=4", "psync numjobs=9"], out
    # psync: 4 in flight -> 4 / 0.5153 ms = 7,763 IOPS (1,941 per job), latency = s.
    p = pred["psync numjobs=4"]
    assert (_iops(p.group(2)), _iops(p.group(3)), p.group(4), p.group(5)) == (7763, 1941, "0.515", "demand")
    assert re.search(r"rule: 4 / 0\.5153 ms = 7,763 IOPS", out), out
    # libaio: 256 in flight, capped at 16,000; latency 256 / 16,000 = 16 ms.
    a = pred["libaio iodepth=64 numjobs=4"]
    assert (_iops(a.group(2)), _iops(a.group(3)), a.group(4), a.group(5)) == (16000, 4000, "16.000", "volume_iops")
    assert "256 / 16,000 = 16.000 ms" in out
    # ceil(16,000 x 0.5153 ms) = ceil(8.24) = 9 psync jobs reach the cap; latency 9 / 16,000.
    n = pred["psync numjobs=9"]
    assert (_iops(n.group(2)), n.group(4), n.group(5)) == (16000, "0.562", "volume_iops")
    assert re.search(r"^Takeaway:", out, re.MULTILINE), out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    # Opt in to jupyter_core's future (platformdirs) paths: some versions and platforms warn
    # with a DeprecationWarning about the switch, which filterwarnings=error would turn fatal.
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            stripped = cell.outputs == [] and cell.execution_count is None
            assert stripped, f"{path.name}: commit the notebook with outputs stripped"

    # The kernel must be this interpreter (the one with ebssim installed), not some other python3.
    nb.cells.append(nbformat.v4.new_code_cell("import sys, ebssim\nprint(sys.prefix)"))
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=120,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    # Every figure shows once: a cell that draws one (ebssim.plot, a Comparison's or a fit's plot)
    # shows one PNG, and no cell shows two (pyplot's inline backend would show again a pyplot
    # figure that a cell also returns; a plain Figure would show as text).
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        images = sum("image/png" in o.get("data", {}) for o in c.outputs)
        draws = re.search(r"(^|\n)[^#\n=]*\bplot\(", c.source) is not None
        assert images == (1 if draws else images) and images <= 1, f"{path.name} cell {i}: {images} figures shown"
    check = nb.cells[-1].outputs
    assert check and check[0].get("text", "").strip() == sys.prefix, check
