"""The cliff plot: IOPS, BurstBalance and latency against time, for one or several results."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ._units import real
from .simulation import VolumeResult

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["plot"]


def plot(
    results: Union[VolumeResult, Sequence[VolumeResult]],
    labels: Optional[Sequence[str]] = None,
    *,
    title: Optional[str] = None,
    time_unit: str = "s",
    figsize: tuple[float, float] = (9.0, 7.5),
) -> "Figure":
    """Draw IOPS, BurstBalance % and mean latency against time, one line per result.

    Parameters
    ----------
    results : VolumeResult or sequence of them
        Results on the same time axis, e.g. gp2 and gp3 under the same workload.
    labels : sequence of str, optional
        Legend entries; default: each result's volume.
    title : str, optional
    time_unit : {"s", "min", "h"}
    figsize : (width, height) in inches

    Returns
    -------
    matplotlib.figure.Figure
        Three stacked axes sharing the time axis; cliffs are marked with a dotted line.
    """
    from matplotlib.figure import Figure

    rs = [results] if isinstance(results, VolumeResult) else list(results)
    if not rs:
        raise ValueError("results is empty: pass at least one VolumeResult")
    for i, r in enumerate(rs):
        if not isinstance(r, VolumeResult):
            raise ValueError(f"results[{i}]={r!r} must be a VolumeResult (e.g. simulate(...) or run[0])")
    if not (isinstance(figsize, (tuple, list)) and len(figsize) == 2):
        raise ValueError(f"figsize={figsize!r} must be (width, height) in inches")
    for name, v in zip(("width", "height"), figsize):
        inches = real(v, f"figsize {name}", "a number of inches")
        if not (math.isfinite(inches) and inches > 0):
            raise ValueError(f"figsize {name}={v!r} must be a positive, finite number of inches")
    for r in rs:
        if r.iops.shape[0] == 0 and r.n_steps > 0:
            raise ValueError("a result was run with record=False and has no per-step series to plot")
    scale = {"s": 1.0, "min": 60.0, "h": 3600.0}
    if time_unit not in scale:
        raise ValueError(f"time_unit={time_unit!r} must be one of s, min, h")
    if labels is None:
        labels = [str(r.volume) for r in rs]
    elif len(labels) != len(rs):
        raise ValueError(f"labels has {len(labels)} entries for {len(rs)} results")

    fig = Figure(figsize=figsize, layout="constrained")
    ax_iops, ax_bb, ax_lat = fig.subplots(3, 1, sharex=True)
    styles = ["-", "--", ":", "-."]
    no_bucket = []
    for j, (r, label) in enumerate(zip(rs, labels)):
        t = r.time_s / scale[time_unit]
        # Distinct line styles keep identical series (e.g. two volumes before a cliff) visible.
        ls = styles[j % len(styles)]
        (line,) = ax_iops.plot(t, r.iops, label=label, lw=1.6, ls=ls, zorder=3 - 0.1 * j)
        color = line.get_color()
        bb = r.burst_balance_pct
        if np.all(np.isnan(bb)):
            no_bucket.append(label)
        else:
            ax_bb.plot(t, bb, color=color, lw=1.6, ls=ls)
        ax_lat.plot(t, r.latency_ms, color=color, lw=1.6, ls=ls)
        cliff = r.cliff_time_s
        if cliff is not None:
            for ax in (ax_iops, ax_bb, ax_lat):
                ax.axvline(cliff / scale[time_unit], color=color, ls=":", lw=1)
            ax_iops.annotate(
                f"cliff at {cliff:.0f} s",
                (cliff / scale[time_unit], float(np.nanmax(r.iops))),
                xytext=(5, -14),
                textcoords="offset points",
                color=color,
                fontsize=8,
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
                zorder=5,
            )
    ax_iops.set_ylabel("IOPS")
    ax_iops.set_ylim(0, 1.15 * max(float(np.nanmax(r.iops)) if r.iops.size else 1.0 for r in rs))
    ax_bb.set_ylabel("BurstBalance %")
    ax_bb.set_ylim(-3, 103)
    if no_bucket:
        ax_bb.text(
            0.99,
            0.94,
            "no credit bucket: " + ", ".join(no_bucket),
            transform=ax_bb.transAxes,
            ha="right",
            va="top",
            fontsize=8,
            color="0.35",
        )
    ax_lat.set_ylabel("mean latency (ms)")
    ax_lat.set_ylim(bottom=0)
    ax_lat.set_xlabel(f"time ({time_unit})")
    for ax in (ax_iops, ax_bb, ax_lat):
        ax.grid(True, alpha=0.3)
    # The legend sits above the panels, where it cannot cover data.
    fig.legend(loc="outside upper center", ncols=min(len(rs), 3), fontsize=8, frameon=False)
    if title:
        ax_iops.set_title(title, fontsize=11)
    return fig
