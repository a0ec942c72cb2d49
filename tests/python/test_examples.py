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
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_gp2_vs_gp3_cliff_example(tmp_path: Path) -> None:
    png = tmp_path / "plots" / "cliff.png"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--output", str(png)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout

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
    proc = subprocess.run(
        [sys.executable, str(INSTANCE_EXAMPLE), "--output", str(png)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout

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
    check = nb.cells[-1].outputs
    assert check and check[0].get("text", "").strip() == sys.prefix, check
