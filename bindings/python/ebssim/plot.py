"""The cliff plot: IOPS (served next to offered), BurstBalance, latency, backlog and the
instance's balances against time, with every cliff marked and the binding limit shaded.

Long runs are drawn from a min/max envelope per pixel column, so a month of 1-second steps
draws in well under a second and still shows every spike. The figure shows itself in Jupyter
(it has a PNG repr; no ``%matplotlib inline`` needed) and is an ordinary matplotlib Figure
(``fig.savefig("cliff.png")``).

>>> import ebssim
>>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
>>> fig = ebssim.plot(r)
>>> [ax.get_ylabel() for ax in fig.axes]
['IOPS', 'BurstBalance %', 'mean latency (ms)', 'bound by']
>>> fig._repr_png_()[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._units import real
from .recording import BOUND_NAMES
from .results import InstanceResult, RunResult, VolumeResult

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot", "PANELS", "BOUND_COLORS"]

FloatArray = npt.NDArray[np.float64]

#: The panels :func:`plot` can draw, top to bottom.
PANELS = ("iops", "throughput", "balance", "latency", "backlog", "instance", "bound")

#: The colour that shades each limit in the ``bound`` panel (``demand``: not shaded).
BOUND_COLORS: Dict[str, str] = {
    "volume_iops": "#d62728",
    "volume_throughput": "#ff7f0e",
    "instance_iops": "#9467bd",
    "instance_throughput": "#8c564b",
    "max_in_flight": "#bcbd22",
}

_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_STYLES = ["-", "--", "-.", ":"]
_HEIGHTS = {"iops": 1.6, "throughput": 1.3, "balance": 1.1, "latency": 1.4, "backlog": 1.1, "instance": 1.1}

Plottable = Union[VolumeResult, InstanceResult, RunResult]


def _figure_class() -> Any:
    """matplotlib's Figure with a PNG repr, so that Jupyter shows it without ``%matplotlib inline``
    (made on first use: importing ebssim does not import matplotlib)."""
    global _FIGURE
    if _FIGURE is None:
        from matplotlib.figure import Figure

        class EbssimFigure(Figure):
            """A matplotlib Figure that Jupyter displays as a PNG (``savefig`` and the rest as usual)."""

            def _repr_png_(self) -> bytes:
                buf = io.BytesIO()
                self.savefig(buf, format="png")
                return buf.getvalue()

        _FIGURE = EbssimFigure
    return _FIGURE


_FIGURE: Any = None


# --------------------------------------------------------------------------------------------
# Time axis: seconds in a unit, or dates
# --------------------------------------------------------------------------------------------


class _Liner:
    """Draws one result's series, decimated alike: the x values are computed once."""

    def __init__(self, t: FloatArray, k: int, clock: "_Clock") -> None:
        self.t, self.k = t, k
        self.x = clock.x(_envelope(t, t, k)[0])

    def __call__(self, a: Any, y: npt.NDArray[np.floating[Any]], **kw: Any) -> Any:
        return a.plot(self.x, _envelope(self.t, y, self.k)[1], **kw)


@dataclass(frozen=True)
class _Clock:
    """Simulated seconds -> x values: a unit (s, min, h, d), or dates from a wall-clock start."""

    unit: str
    start: Optional[np.datetime64]  # wall-clock time of simulated time 0 (None: numbers)

    def x(self, t_s: npt.NDArray[np.floating[Any]]) -> Any:
        if self.start is None:
            return t_s / _UNITS[self.unit]
        from matplotlib import dates

        to_num: Any = dates.date2num  # untyped in matplotlib
        return to_num(self.start + (np.asarray(t_s) * 1e6).astype("timedelta64[us]"))

    def label(self, t_s: float) -> str:
        if self.start is None:
            return f"{t_s / _UNITS[self.unit]:.3g} {self.unit}"
        when = self.start + np.timedelta64(int(round(t_s * 1e6)), "us")
        text = str(np.datetime_as_string(when, unit="m")).replace("T", " ")
        return text[5:] if self.unit in ("h", "d") else text[11:]


def _as_datetime64(value: Any, field: str) -> np.datetime64:
    if isinstance(value, str):
        try:
            return np.datetime64(value, "us")
        except ValueError:
            raise ValueError(f"{field}={value!r} is not a date and time, e.g. '2025-06-02T00:00'") from None
    ts = getattr(value, "to_datetime64", None)  # pandas Timestamp
    if ts is not None:
        if getattr(value, "tzinfo", None) is not None:
            value = value.tz_convert("UTC").tz_localize(None)
        return np.datetime64(value.to_datetime64(), "us")
    if isinstance(value, np.datetime64):
        us: np.datetime64 = value.astype("datetime64[us]")
        return us
    import datetime

    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return np.datetime64(value, "us")
    raise ValueError(f"{field}={value!r} must be a datetime, pandas Timestamp, numpy datetime64 or ISO string")


def _result_start(r: Any) -> Optional[np.datetime64]:
    """The wall-clock time of simulated time 0, for results that carry one: a trace workload with
    a ``start`` (:meth:`OpenLoop.from_pandas`: the wall clock of the run's first step), a
    ``time_index`` (DatetimeIndex of the steps) or a ``t0`` Timestamp of the run's first step."""
    start = getattr(getattr(r, "workload", None), "start", None)
    if start is not None:
        return _as_datetime64(start, "workload.start") - np.timedelta64(int(round(r.t0_s * 1e6)), "us")
    index = getattr(r, "time_index", None)
    if index is not None and len(index) > 0 and hasattr(index[0], "to_datetime64"):
        return _as_datetime64(index[0], "time_index[0]") - np.timedelta64(int(round(r.t0_s * 1e6)), "us")
    t0 = getattr(r, "t0", None)
    if t0 is not None and not isinstance(t0, (int, float)):
        return _as_datetime64(t0, "t0") - np.timedelta64(int(round(r.t0_s * 1e6)), "us")
    return None


# --------------------------------------------------------------------------------------------
# Decimation: a min/max envelope per pixel column
# --------------------------------------------------------------------------------------------


def _bucket(n: int, columns: int) -> int:
    """Steps per envelope bucket: 1 (every step drawn) unless the run has more than two points
    per pixel column."""
    return 1 if n <= 2 * columns else int(math.ceil(n / columns))


def _envelope(
    t: FloatArray, y: npt.NDArray[np.floating[Any]], k: int
) -> Tuple[FloatArray, npt.NDArray[np.floating[Any]]]:
    """(t, y) with each run of k steps replaced by its minimum and maximum at the run's first
    time: what a line through every point would paint in one pixel column. NaN is skipped."""
    if k <= 1:
        return t, y
    n = y.shape[0]
    m = n // k * k
    lo = np.fmin.reduce(y[:m].reshape(-1, k), axis=1)
    hi = np.fmax.reduce(y[:m].reshape(-1, k), axis=1)
    tb = t[:m:k]
    if m < n:
        lo = np.append(lo, np.fmin.reduce(y[m:]))
        hi = np.append(hi, np.fmax.reduce(y[m:]))
        tb = np.append(tb, t[m])
    return np.repeat(tb, 2), np.column_stack([lo, hi]).ravel()


def _bound_runs(bound: npt.NDArray[np.uint8], k: int) -> Tuple[npt.NDArray[np.intp], npt.NDArray[np.uint8]]:
    """Runs of the binding limit, after taking per bucket of k steps the limit that bound in
    most of them (any limit over none): (start index of each run, its code)."""
    if k > 1:
        n = bound.shape[0]
        m = n // k * k
        blocks = [bound[:m].reshape(-1, k)] + ([bound[m:].reshape(1, -1)] if m < n else [])
        codes = []
        for b in blocks:
            counts = np.stack([(b == c).sum(axis=1) for c in range(1, len(BOUND_NAMES))])
            code = counts.argmax(axis=0) + 1
            codes.append(np.where(counts.max(axis=0) > 0, code, 0).astype(np.uint8))
        per = np.concatenate(codes)
        starts = np.arange(per.shape[0]) * k
    else:
        per = bound
        starts = np.arange(bound.shape[0])
    change = np.flatnonzero(np.diff(per.astype(np.int16), prepend=-1))
    return starts[change], per[change]


# --------------------------------------------------------------------------------------------
# What to draw
# --------------------------------------------------------------------------------------------


def _flatten(results: Any) -> Tuple[List[VolumeResult], List[InstanceResult], List[Optional[str]]]:
    """Volume results (with a position tag when they came from a RunResult) and the distinct
    instance results, passed directly or attached to the volumes."""
    if isinstance(results, (VolumeResult, InstanceResult, RunResult)):
        items: List[Any] = [results]
    elif isinstance(results, (str, bytes)) or not hasattr(results, "__iter__"):
        raise ValueError(f"results={results!r} must be a VolumeResult, InstanceResult, RunResult or a sequence of them")
    else:
        items = list(results)
    if not items:
        raise ValueError("results is empty: pass at least one VolumeResult")
    vols: List[VolumeResult] = []
    tags: List[Optional[str]] = []
    insts: List[InstanceResult] = []
    for i, r in enumerate(items):
        if isinstance(r, RunResult):
            for j, v in enumerate(r):
                vols.append(v)
                tags.append(f"[{j}]" if len(r) > 1 else None)
            if r.instance is not None:
                insts.append(r.instance)
        elif isinstance(r, VolumeResult):
            vols.append(r)
            tags.append(None)
        elif isinstance(r, InstanceResult):
            insts.append(r)
        else:
            raise ValueError(
                f"results[{i}]={r!r} must be a VolumeResult, InstanceResult or RunResult (e.g. simulate(...) or run[0])"
            )
    for v in vols:
        if v.instance is not None:
            insts.append(v.instance)
    unique: List[InstanceResult] = []
    for ir in insts:
        if not any(ir is u for u in unique):
            unique.append(ir)
    every: List[Union[VolumeResult, InstanceResult]] = [*vols, *unique]
    for r in every:
        if not r.recorded and r.n_steps > 0:
            raise ValueError("a result was run with record=False and has no per-step series to plot")
    return vols, unique, tags


def _default_labels(vols: List[VolumeResult], tags: List[Optional[str]]) -> List[str]:
    """Each volume as it prints; where two would read the same, their workloads, then their positions."""
    labels = [f"{t} {v.volume}" if t else str(v.volume) for v, t in zip(vols, tags)]
    for _ in range(2):
        seen: Dict[str, List[int]] = {}
        for i, lab in enumerate(labels):
            seen.setdefault(lab, []).append(i)
        dups = [idx for idx in seen.values() if len(idx) > 1]
        if not dups:
            return labels
        for idx in dups:
            workloads = {str(vols[i].workload) for i in idx}
            for n, i in enumerate(idx):
                labels[i] += f", {vols[i].workload}" if len(workloads) > 1 else f" #{n + 1}"
    return labels


def _choose_unit(span_s: float, time_unit: Optional[str]) -> str:
    if time_unit is not None:
        if time_unit not in _UNITS:
            raise ValueError(f"time_unit={time_unit!r} must be one of {', '.join(_UNITS)}")
        return time_unit
    if span_s <= 600:
        return "s"
    if span_s <= 3 * 3600:
        return "min"
    if span_s <= 3 * 86400:
        return "h"
    return "d"


def _check_figsize(figsize: Any) -> Tuple[float, float]:
    if not (isinstance(figsize, (tuple, list)) and len(figsize) == 2):
        raise ValueError(f"figsize={figsize!r} must be (width, height) in inches")
    out = []
    for name, v in zip(("width", "height"), figsize):
        inches = real(v, f"figsize {name}", "a number of inches")
        if not (math.isfinite(inches) and inches > 0):
            raise ValueError(f"figsize {name}={v!r} must be a positive, finite number of inches")
        out.append(inches)
    return out[0], out[1]


def plot(
    results: Union[Plottable, Sequence[Plottable]],
    labels: Optional[Sequence[str]] = None,
    *,
    title: Optional[str] = None,
    time_unit: Optional[str] = None,
    figsize: Optional[Tuple[float, float]] = None,
    panels: Optional[Sequence[str]] = None,
    ax: Optional["Axes"] = None,
    axes: Optional[Sequence["Axes"]] = None,
    start: Any = None,
    latency_scale: str = "auto",
) -> "Figure":
    """Draw IOPS, BurstBalance, latency (and the backlog, the instance's balances) against time,
    one line per volume, every cliff marked, the binding limit shaded.

    Parameters
    ----------
    results : VolumeResult, InstanceResult, RunResult, or a sequence of them
        Results on the same time axis, e.g. gp2 and gp3 under the same trace. A RunResult
        draws each of its volumes and its instance; a VolumeResult that ran on an instance
        brings the instance's balances along; ``plot(run.instance)`` draws the instance alone
        (its EBS IOPS and throughput against its baseline and maximum, and its balances).
    labels : sequence of str, optional
        Legend entries, one per volume result; default: each volume as it prints, made distinct
        by the workload or a number where two would read the same.
    title : str, optional
    time_unit : {"s", "min", "h", "d"}, optional
        Default: the unit that suits the run's length. Ignored when the axis shows dates.
    figsize : (width, height) in inches, optional
        Default: 10 inches wide, a height that suits the panels.
    panels : sequence of str, optional
        Which of :data:`PANELS` to draw, in that order. Default: ``iops``, ``balance`` (when a
        volume has a bucket), ``latency``, ``backlog`` (when I/O waited in a queue at the end of
        some step), ``instance`` (when there is one) and ``bound``; for an instance alone,
        ``iops``, ``throughput``, ``instance`` and ``bound``.
    ax, axes : matplotlib Axes, optional
        Draw into your own figure: ``ax`` for one panel (default ``iops``), ``axes`` with one
        Axes per panel. The figure they belong to is returned.
    start : datetime, pandas Timestamp, numpy datetime64 or ISO string, optional
        Wall-clock time of simulated time 0: the axis then shows dates. Results that carry
        their own (a ``time_index`` of dates, or a ``t0`` Timestamp, as traces with a
        DatetimeIndex give) are drawn against dates without it.
    latency_scale : {"auto", "log", "linear"}
        ``auto`` draws latency on a log axis when it spans more than a factor of 30 (a
        throttled queue next to unthrottled service times).

    Returns
    -------
    matplotlib.figure.Figure
        Stacked panels sharing the time axis. Served IOPS are solid; an open loop's offered
        I/O (its arrivals) is drawn thin and dashed in the same colour. Each cliff (a bucket
        running dry) is a dotted line, labelled with its time in the axis's units. The
        ``bound`` panel has one row per result, shaded by the limit that held it back
        (:data:`BOUND_COLORS`). Runs longer than two points per pixel column are drawn from
        the minimum and maximum of each column, so spikes stay visible.
    """
    vols, insts, tags = _flatten(results)
    if labels is None:
        names = _default_labels(vols, tags)
    else:
        if isinstance(labels, str) or len(labels) != len(vols):
            n = 1 if isinstance(labels, str) else len(labels)
            raise ValueError(f"labels has {n} entries for {len(vols)} results")
        names = [str(lab) for lab in labels]
    if latency_scale not in ("auto", "log", "linear"):
        raise ValueError(f"latency_scale={latency_scale!r} must be one of auto, log, linear")

    # The panels.
    if panels is None:
        if vols:
            chosen = ["iops"]
            if any(v.volume.has_bucket for v in vols):
                chosen.append("balance")
            chosen.append("latency")
            if any(v.backlog_ops.size and float(np.max(v.backlog_ops)) > 0 for v in vols):
                chosen.append("backlog")
        else:
            chosen = ["iops", "throughput"]
        if insts:
            chosen.append("instance")
        chosen.append("bound")
        if ax is not None:
            chosen = ["iops"]
    else:
        if isinstance(panels, str):
            raise ValueError(f"panels={panels!r} must be a sequence of panel names, e.g. ['iops', 'latency']")
        chosen = list(panels)
        for p in chosen:
            if p not in PANELS:
                raise ValueError(f"panel {p!r} is not one of {', '.join(PANELS)}")
        if not chosen:
            raise ValueError("panels is empty: name at least one of " + ", ".join(PANELS))
        if "instance" in chosen and not insts:
            raise ValueError("panel 'instance' needs an instance result: run the volumes on an instance")

    # The figure, or the user's axes.
    if ax is not None and axes is not None:
        raise ValueError("give ax= (one panel) or axes= (one per panel), not both")
    if ax is not None:
        if len(chosen) != 1:
            raise ValueError(f"ax= draws one panel, but panels={chosen}: pass axes= with {len(chosen)} Axes")
        user_axes: Optional[List[Any]] = [ax]
    elif axes is not None:
        user_axes = list(axes)
        if len(user_axes) != len(chosen):
            raise ValueError(f"axes has {len(user_axes)} Axes for the {len(chosen)} panels {chosen}")
    else:
        user_axes = None
    if user_axes is not None:
        if figsize is not None:
            _check_figsize(figsize)
        fig = user_axes[0].figure
        axs = user_axes
        width_px = max(100, int(user_axes[0].bbox.width))
    else:
        n_rows = len(vols) + len(insts)
        heights = [_HEIGHTS.get(p, 0.28 + 0.16 * n_rows) for p in chosen]
        w, h = _check_figsize(figsize) if figsize is not None else (10.0, 0.9 + sum(heights) * 1.25)
        fig = _figure_class()(figsize=(w, h), layout="constrained")
        axs = list(np.atleast_1d(fig.subplots(len(chosen), 1, sharex=True, height_ratios=heights)))
        width_px = int(w * fig.dpi * 0.85)
    panel = dict(zip(chosen, axs))

    # Time axis.
    every: List[Union[VolumeResult, InstanceResult]] = [*vols, *insts]
    t_lo = min(r.t0_s for r in every)
    t_hi = max(r.t0_s + r.n_steps * r.dt_s for r in every)
    if start is not None:
        wall: Optional[np.datetime64] = _as_datetime64(start, "start")
    else:
        starts = [s for s in (_result_start(r) for r in every) if s is not None]
        wall = starts[0] if starts else None
    clock = _Clock(_choose_unit(t_hi - t_lo, time_unit), wall)

    colors = [f"C{j % 10}" for j in range(len(vols))]
    drawn_demand: List[Any] = []
    from .workloads import OpenLoop, PiecewiseOpenLoop

    def demand_of(w: Any) -> Any:
        """What identifies a trace's demand (several volumes usually replay one): its ops array,
        or the piecewise workload itself; None for other workloads."""
        return w.ops if isinstance(w, OpenLoop) else w if isinstance(w, PiecewiseOpenLoop) else None

    cliff_label_x: Dict[int, List[float]] = {}

    def mark_cliffs(j: int, r: Union[VolumeResult, InstanceResult], color: str, where: List[Any]) -> None:
        """A dotted line at every cliff on the given axes, labelled on the first with its time
        (a label closer than 9 % of the axis to the previous one is counted in it: "(+2)")."""
        if not where:
            return
        span = max(t_hi - t_lo, 1e-9)
        labelled = cliff_label_x.setdefault(j, [])
        last_text = None
        merged = 0
        for c in r.cliffs:
            x = float(clock.x(np.array([c.start_s]))[0])
            for a in where:
                a.axvline(x, color=color, ls=":", lw=1.0, zorder=1)
            if labelled and (c.start_s - labelled[-1]) / span < 0.09 and last_text is not None:
                merged += 1
                last_text.set_text(last_text.get_text().split(" (+")[0] + f" (+{merged})")
                continue
            merged = 0
            labelled.append(c.start_s)
            last_text = where[0].annotate(
                f"cliff {clock.label(c.start_s)}",
                (x, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -10 - 11 * (j % 4)),
                textcoords="offset points",
                color=color,
                fontsize=7.5,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
                zorder=6,
                annotation_clip=False,
            )

    # Volume panels.
    for j, (r, name) in enumerate(zip(vols, names)):
        color = colors[j]
        # Distinct line styles keep identical series (e.g. two volumes before a cliff) visible.
        ls = _STYLES[j % len(_STYLES)]
        line = _Liner(r.time_s, _bucket(r.n_values, width_px), clock)

        if "iops" in panel:
            line(panel["iops"], r.iops, color=color, lw=1.3, ls=ls, label=name, zorder=3 - 0.01 * j)
            demand = demand_of(r.workload)
            if demand is not None and not any(demand is o for o in drawn_demand):
                # The offered I/O of a trace, once per trace (several volumes usually replay one).
                drawn_demand.append(demand)
                same = sum(1 for v in vols if demand_of(v.workload) is demand)
                who = "" if same == len(vols) else f" ({_short(name, 24)})"
                line(
                    panel["iops"],
                    r.offered_iops,
                    color="0.15",
                    lw=0.7,
                    ls=(0, (1.5, 1.5)),
                    alpha=0.8,
                    zorder=2,
                    label=f"offered{who}",
                )
        if "throughput" in panel:
            line(panel["throughput"], r.throughput_mib_s, color=color, lw=1.4, ls=ls)
        if "balance" in panel and r.volume.has_bucket:
            line(panel["balance"], r.burst_balance_pct, color=color, lw=1.4, ls=ls)
        if "latency" in panel:
            line(panel["latency"], r.latency_ms, color=color, lw=1.2, ls=ls)
        if "backlog" in panel:
            line(panel["backlog"], r.backlog_ops, color=color, lw=1.2, ls=ls)
        mark_cliffs(j, r, color, [panel[p] for p in ("iops", "balance", "latency") if p in panel])

    # Instance panels.
    inst_colors = ["#2ca02c", "#17becf", "#7f7f7f", "#e377c2"]
    for m, ir in enumerate(insts):
        color = inst_colors[m % len(inst_colors)]
        line = _Liner(ir.time_s, _bucket(ir.n_values, width_px), clock)
        name = ir.instance.name + (f" #{m + 1}" if sum(i.instance.name == ir.instance.name for i in insts) > 1 else "")
        where = []
        if "instance" in panel:
            a = panel["instance"]
            line(a, ir.io_balance_pct, color=color, lw=1.4, label=f"{name} EBSIOBalance%")
            line(a, ir.byte_balance_pct, color=color, lw=1.2, ls="--", label=f"{name} EBSByteBalance%")
            where.append(a)
        if not vols and "iops" in panel:
            a = panel["iops"]
            line(a, ir.iops, color=color, lw=1.4, label=f"{name} EBS IOPS")
            _limit_line(a, ir.instance.max_iops, "maximum", "--")
            _limit_line(a, ir.instance.baseline_iops, "baseline", ":")
            where = where or [a]
        if not vols and "throughput" in panel:
            a = panel["throughput"]
            line(a, ir.throughput_mb_s, color=color, lw=1.4)
            _limit_line(a, ir.instance.max_mb_s, "maximum", "--")
            _limit_line(a, ir.instance.baseline_mb_s, "baseline", ":")
        mark_cliffs(len(vols) + m, ir, color, where)

    # The binding limit: one row per result.
    bound_handles: List[Any] = []
    if "bound" in panel:
        a = panel["bound"]
        rows: List[Tuple[str, Union[VolumeResult, InstanceResult]]] = [(n, r) for n, r in zip(names, vols)]
        rows += [(f"{ir.instance.name} (instance)", ir) for ir in insts]
        seen_codes = set()
        for row, (_, rr) in enumerate(rows):
            # One value per step, or per interval of a Recording(every_s=...).
            k = _bucket(rr.n_values, width_px)
            first, codes = _bound_runs(rr.bound, k)
            ends = np.append(first[1:], rr.n_values)
            x0 = clock.x(rr.t0_s + first * rr.record_every_s)
            # The last interval ends with the run (it may be shorter than the others).
            x1 = clock.x(np.minimum(rr.t0_s + ends * rr.record_every_s, rr.t0_s + rr.n_steps * rr.dt_s))
            y = len(rows) - 1 - row
            for code in np.unique(codes):
                if code == 0:
                    continue
                sel = codes == code
                bname = BOUND_NAMES[int(code)]
                seen_codes.add(bname)
                a.broken_barh(
                    list(zip(x0[sel], (x1 - x0)[sel])), (y + 0.12, 0.76), facecolors=BOUND_COLORS[bname], lw=0
                )
        a.set_ylim(0, len(rows))
        a.set_yticks([len(rows) - 0.5 - i for i in range(len(rows))])
        a.set_yticklabels([_short(n) for n, _ in rows], fontsize=7)
        a.tick_params(axis="y", length=0)
        a.set_ylabel("bound by", fontsize=8)
        from matplotlib.patches import Patch

        bound_handles = [
            Patch(color=BOUND_COLORS[b], label=f"bound by {b}") for b in BOUND_NAMES[1:] if b in seen_codes
        ]
        if not bound_handles:
            a.text(
                0.5,
                0.5,
                "never held back by a limit",
                transform=a.transAxes,
                ha="center",
                va="center",
                fontsize=8,
                color="0.35",
            )

    # Axes, labels, scales.
    if "iops" in panel:
        a = panel["iops"]
        a.set_ylabel("IOPS" if vols else "instance EBS IOPS")
        # Room above the data for the cliff labels.
        a.set_ylim(0, max(a.get_ylim()[1], 1.0) * 1.15)
    if "throughput" in panel:
        panel["throughput"].set_ylabel("MiB/s" if vols else "instance MB/s")
        panel["throughput"].set_ylim(bottom=0)
    if "balance" in panel:
        a = panel["balance"]
        a.set_ylabel("BurstBalance %")
        a.set_ylim(-3, 103)
        no_bucket = [n for n, r in zip(names, vols) if not r.volume.has_bucket]
        if no_bucket:
            a.text(
                0.99,
                0.5,
                "no credit bucket: " + ", ".join(_short(n) for n in no_bucket),
                transform=a.transAxes,
                ha="right",
                va="center",
                fontsize=7,
                color="0.35",
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8},
            )
    if "latency" in panel:
        a = panel["latency"]
        a.set_ylabel("mean latency (ms)")
        lat = np.concatenate([v.latency_ms for v in vols]) if vols else np.zeros(0)
        pos = lat[np.isfinite(lat) & (lat > 0)]
        log = latency_scale == "log" or (
            latency_scale == "auto" and pos.size > 0 and float(pos.max()) > 30 * float(pos.min())
        )
        if log and pos.size:
            a.set_yscale("log")
            a.set_ylim(float(pos.min()) / 1.5, float(pos.max()) * 2.0)
        else:
            a.set_ylim(bottom=0)
    if "backlog" in panel:
        panel["backlog"].set_ylabel("waiting I/Os")
        panel["backlog"].set_ylim(bottom=0)
    if "instance" in panel:
        panel["instance"].set_ylabel("instance balance %")
        panel["instance"].set_ylim(-3, 103)
        panel["instance"].legend(loc="lower left", fontsize=7, frameon=False)

    for a in axs:
        a.grid(True, alpha=0.3)
    if "bound" in panel:
        panel["bound"].grid(False)
    bottom = axs[-1]
    x_lo, x_hi = clock.x(np.array([t_lo, t_hi]))
    bottom.set_xlim(float(x_lo), float(x_hi))
    if clock.start is None:
        bottom.set_xlabel(f"time ({clock.unit})")
    else:
        from matplotlib import dates

        make_locator: Any = dates.AutoDateLocator  # untyped in matplotlib
        make_formatter: Any = dates.ConciseDateFormatter
        locator = make_locator()
        for a in axs:
            a.xaxis.set_major_locator(locator)
            a.xaxis.set_major_formatter(make_formatter(locator))
    if user_axes is None:
        # The legend sits above the panels, where it cannot cover data: the volumes, the
        # offered I/O, and the colours of the limits shaded in the bound panel.
        lines = axs[0].get_legend_handles_labels()[0]
        handles = [h for h in lines if not str(h.get_label()).startswith("offered")]
        handles += [h for h in lines if str(h.get_label()).startswith("offered")] + bound_handles
        if handles:
            fig.legend(
                handles=handles,
                loc="outside upper center",
                ncols=2 if len(handles) > 1 else 1,
                fontsize=8,
                frameon=False,
            )
    if title:
        axs[0].set_title(title, fontsize=10)
    return fig  # type: ignore[no-any-return]


def _limit_line(a: Any, y: float, what: str, ls: str) -> None:
    """A horizontal line at one of the instance's limits, named at its right end (room kept above it)."""
    a.axhline(y, color="0.4", ls=ls, lw=0.8)
    a.set_ylim(0, max(a.get_ylim()[1], 1.12 * y))
    a.annotate(
        f"{what} {y:,.6g}",
        (1.0, y),
        xycoords=("axes fraction", "data"),
        xytext=(-3, 2),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=7,
        color="0.3",
    )


def _short(label: str, n: int = 36) -> str:
    """A label cut in the middle to fit the bound panel's row names (both ends tell volumes apart).

    >>> _short("gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s) #1")
    'gp2 100 GiB (300 IOPS…128 MiB/s) #1'
    """
    if len(label) <= n:
        return label
    tail = n // 3
    head = label[: n - tail - 1]
    head = head[: head.rfind(" ")] if " " in head else head
    start = label.rfind(" ", 0, len(label) - tail) + 1  # the tail starts at a word
    return head.rstrip() + "…" + label[max(start, len(label) - n + len(head)) :]
