"""The cliff plot: IOPS, BurstBalance and latency against time, for one or several results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

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
    for r, label in zip(rs, labels):
        t = r.time_s / scale[time_unit]
        (line,) = ax_iops.plot(t, r.iops, label=label, lw=1.5)
        color = line.get_color()
        bb = r.burst_balance_pct
        if not np.all(np.isnan(bb)):
            ax_bb.plot(t, bb, color=color, lw=1.5, label=label)
        ax_lat.plot(t, r.latency_ms, color=color, lw=1.5, label=label)
        cliff = r.cliff_time_s
        if cliff is not None:
            for ax in (ax_iops, ax_bb, ax_lat):
                ax.axvline(cliff / scale[time_unit], color=color, ls=":", lw=1)
            ax_iops.annotate(
                f"cliff {cliff:.0f} s",
                (cliff / scale[time_unit], float(np.nanmax(r.iops))),
                xytext=(4, -12),
                textcoords="offset points",
                color=color,
                fontsize=8,
            )
    ax_iops.set_ylabel("IOPS")
    ax_iops.set_ylim(bottom=0)
    ax_iops.legend(loc="upper right", fontsize=8)
    ax_bb.set_ylabel("BurstBalance %")
    ax_bb.set_ylim(-3, 103)
    ax_lat.set_ylabel("mean latency (ms)")
    ax_lat.set_ylim(bottom=0)
    ax_lat.set_xlabel(f"time ({time_unit})")
    for ax in (ax_iops, ax_bb, ax_lat):
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig
