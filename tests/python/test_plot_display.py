"""Every figure ebssim draws shows once in Jupyter, as ``ebssim.plot``'s does: ``ebssim.plot``,
``aws.Comparison.plot`` and ``fit``'s ``plot``, with pyplot's inline backend active (a notebook
that imported pyplot, or ran ``%matplotlib inline``) and without it.

Counted as IPython shows them: the PNGs its display hook writes for a cell's value, plus those
published with ``display()`` (how the inline backend shows pyplot's figures at the end of a
cell). A figure of pyplot's returned as the cell's value is shown twice; a plain matplotlib
Figure without the inline backend not at all (``<Figure size 800x550 with 2 Axes>``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List

import ebssim
import ebssim.aws as aws
import ebssim.fit as fit
import pytest

DATA = Path(__file__).resolve().parents[1] / "data"

pytest.importorskip("IPython")
pytest.importorskip("matplotlib_inline")


@pytest.fixture(scope="module")
def objects() -> Dict[str, Any]:
    r = ebssim.simulate(ebssim.gp2(100, burst_balance_pct=1), ebssim.ClosedLoop(32, "4k"), duration_s=60)
    ids = json.loads((DATA / "aws" / "aws-fixtures.versions.json").read_text())["volumes"]
    metrics = aws.read_metric_data(
        DATA / "aws" / "cloudwatch-get-metric-data.pages.moto.json",
        queries=DATA / "aws" / "cloudwatch-get-metric-data.queries.json",
    )
    vols = aws.read_volumes(DATA / "aws" / "ec2-describe-volumes.moto.json")
    att = aws.read_instances(DATA / "aws" / "ec2-describe-instances.moto.json")
    replayed = aws.replay(metrics, vols, att, gaps="zero")
    comparison = aws.compare(replayed[ids["data"]], metrics, ids["data"])
    f = fit.fit([DATA / "fit" / "02_gp2_perio"], type="gp2", rate_limits="volume")
    return {"ebssim": ebssim, "r": r, "comparison": comparison, "f": f}


@pytest.fixture
def shell() -> Iterator[Any]:
    import matplotlib
    from IPython.core.interactiveshell import InteractiveShell

    backend, interactive = matplotlib.get_backend(), matplotlib.is_interactive()
    sh = InteractiveShell.instance()
    # A kernel computes every format of a cell's value (a terminal only text/plain).
    sh.display_formatter.active_types = list(sh.display_formatter.format_types)
    with matplotlib.rc_context():
        yield sh
    import matplotlib.pyplot as plt

    plt.close("all")
    InteractiveShell.clear_instance()
    matplotlib.use(backend)
    matplotlib.interactive(interactive)


def inline_backend(shell: Any) -> None:
    """What ``%matplotlib inline`` does in a kernel (a terminal's shell has no GUI loop for the
    magic): pyplot's inline backend, which shows pyplot's figures at the end of each cell, and
    PNG as the format of a Figure that is a cell's value."""
    from IPython.core.pylabtools import activate_matplotlib, select_figure_formats
    from matplotlib_inline.backend_inline import configure_inline_support

    activate_matplotlib("module://matplotlib_inline.backend_inline")
    configure_inline_support(shell, "inline")
    select_figure_formats(shell, {"png"})


def shown(shell: Any, objects: Dict[str, Any], code: str, *, inline: bool) -> int:
    """PNGs a cell of ``code`` shows in a notebook."""
    from IPython.utils.capture import capture_output

    if inline:
        inline_backend(shell)
    shell.user_ns.update(objects)
    values: List[Dict[str, Any]] = []
    hook = shell.displayhook
    write = hook.write_format_data
    hook.write_format_data = lambda data, md=None: values.append(data)
    try:
        with capture_output() as cap:
            result = shell.run_cell(code)
    finally:
        hook.write_format_data = write
    result.raise_error()
    return sum("image/png" in v for v in values) + sum("image/png" in o.data for o in cap.outputs)


@pytest.mark.parametrize("inline", [False, True], ids=["no inline backend", "inline backend"])
@pytest.mark.parametrize("call", ["ebssim.plot(r)", "comparison.plot()", "f.plot()"])
def test_every_plot_shows_once(shell, objects, call, inline):
    assert shown(shell, objects, call, inline=inline) == 1
    # Kept in a variable, it shows where the notebook shows the variable, not before.
    assert shown(shell, objects, f"fig = {call}", inline=inline) == 0
    assert shown(shell, objects, "fig", inline=inline) == 1
