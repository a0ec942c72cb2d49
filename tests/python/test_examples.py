"""The demo script and the tutorial notebooks run end to end and tell the documented story."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gp2_vs_gp3_cliff.py"
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
