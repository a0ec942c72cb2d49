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

__all__ = ["plot", "figure", "PANELS", "BOUND_COLORS"]

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
# Line widths from the top of the stack down: a volume drawn under another is wider, so that
# where their series coincide (gp3 serving what gp2 served before its cliff) both show.
_WIDTHS = (1.0, 3.0, 5.0, 7.0)
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


def figure(**kwargs: Any) -> "Figure":
    """A new matplotlib Figure that Jupyter shows once, with or without ``%matplotlib inline``:
    every figure ebssim draws is one (:func:`plot`, ``aws.Comparison.plot``, ``fit``'s
    ``plot``). It has a PNG repr (shown without pyplot's inline backend) and is not one of
    pyplot's figures (which the inline backend would show again at the end of the cell); keyword
    arguments are ``matplotlib.figure.Figure``'s.

    >>> fig = figure(figsize=(4, 3))
    >>> fig._repr_png_()[:4]
    b'\\x89PNG'
    """
    return _figure_class()(**kwargs)  # type: ignore[no-any-return]


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

    def area(self, a: Any, y: npt.NDArray[np.floating[Any]], **kw: Any) -> Any:
        """The series as an area down to 0 (its envelope's top)."""
        return a.fill_between(self.x, _envelope(self.t, y, self.k)[1], 0.0, **kw)


@dataclass(frozen=True)
class _Clock:
    """Simulated seconds -> x values: a unit (s, min, h, d), or dates from a wall-clock start."""

    unit: str
    start: Optional[np.datetime64]  # wall-clock time of simulated time 0 (None: numbers)
    span_s: float = 0.0  # the axis's length

    def x(self, t_s: npt.NDArray[np.floating[Any]]) -> Any:
        if self.start is None:
            return t_s / _UNITS[self.unit]
        from matplotlib import dates

        to_num: Any = dates.date2num  # untyped in matplotlib
        return to_num(self.start + (np.asarray(t_s) * 1e6).astype("timedelta64[us]"))

    def label(self, t_s: float) -> str:
        """A time as one reads it: "53 min" or "5.8 h" since the start ("4 d 02:00" on an axis in
        days), or the wall clock: "02:00" within a day, "Tue 02:00" within two weeks, "06-03
        02:00" beyond."""
        if self.start is None:
            if self.unit != "d":
                return _human(t_s)
            minutes = int(round(t_s / 60.0))  # days into the run and the time of day: "4 d 02:00"
            return f"{minutes // 1440} d {minutes % 1440 // 60:02d}:{minutes % 60:02d}"
        when = self.start + np.timedelta64(int(round(t_s * 1e6)), "us")
        text = str(np.datetime_as_string(when, unit="m")).replace("T", " ")
        if self.unit in ("s", "min"):
            return text[11:]
        if self.unit == "h" or self.span_s <= 14 * 86400:
            days = int(when.astype("datetime64[D]").view("int64"))  # 1970-01-01 was a Thursday
            day = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[(days + 3) % 7]
            return f"{day} {text[11:]}"
        return text[5:]


def _human(seconds: float) -> str:
    """A duration, or a time since the start, in the unit that reads best, to two or three
    digits: seconds below 2 minutes, then minutes, hours below 2 days, then days.

    >>> _human(5.07), _human(20), _human(3175), _human(2000), _human(20808), _human(604800)
    ('5.07 s', '20 s', '53 min', '33 min', '5.8 h', '7 d')
    """
    s = float(seconds)
    a = abs(s)
    if a < 120:
        return f"{s:.3g} s"
    if a < 7200:
        return f"{s / 60:.0f} min" if a >= 600 else f"{s / 60:.2g} min"
    if a < 172800:
        return f"{s / 3600:.2g} h" if a < 36000 else f"{s / 3600:.0f} h"
    return f"{s / 86400:.2g} d" if a < 864000 else f"{s / 86400:.0f} d"


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
        # The bound panel's rows fit their names, wrapped.
        name_lines = [_wrap(n).count("\n") + 1 for n in names] + [1] * len(insts)
        bound_h = 0.28 + sum(max(0.16, 0.12 * n) for n in name_lines)
        heights = [_HEIGHTS.get(p, bound_h) for p in chosen]
        # Room above the panels for the cliff labels, when some result has a bucket.
        strip = 0.35 if any(v.volume.has_bucket for v in vols) or insts else 0.0
        w, h = _check_figsize(figsize) if figsize is not None else (10.0, 0.9 + strip + sum(heights) * 1.25)
        fig = figure(figsize=(w, h), layout="constrained")
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
    clock = _Clock(_choose_unit(t_hi - t_lo, time_unit), wall, t_hi - t_lo)

    colors = [f"C{j % 10}" for j in range(len(vols))]
    drawn_demand: List[Any] = []
    from .workloads import OpenLoop, PiecewiseOpenLoop

    def demand_of(w: Any) -> Any:
        """What identifies a trace's demand (several volumes usually replay one): its ops array,
        or the piecewise workload itself; None for other workloads."""
        return w.ops if isinstance(w, OpenLoop) else w if isinstance(w, PiecewiseOpenLoop) else None

    # Cliffs, marked once the panels are drawn: (row, result, colour, the panel to shade).
    cliff_rows: List[Tuple[Union[VolumeResult, InstanceResult], str, Any]] = []

    # The stack: the volume held back the least at the bottom, widest (it is the one the others
    # coincide with until a limit holds them back), the one held back the most on top, thinnest.
    # The order given breaks ties.
    held = [sum(s for b, s in v.bound_s.items() if b != "demand") for v in vols]
    stack = sorted(range(len(vols)), key=lambda j: (held[j], j))

    def widths(drawn: List[int]) -> Dict[int, Dict[str, Any]]:
        """Line width and zorder of each of the volumes drawn on a panel, by their place in the stack."""
        order = [j for j in stack if j in drawn]
        out = {}
        for pos, j in enumerate(order):
            depth = len(order) - 1 - pos  # 0: on top
            out[j] = {"lw": _WIDTHS[min(depth, len(_WIDTHS) - 1)], "zorder": 3 + 0.01 * pos}
        return out

    every_volume = widths(list(range(len(vols))))
    with_bucket = widths([j for j, v in enumerate(vols) if v.volume.has_bucket])

    # Volume panels.
    for j, (r, name) in enumerate(zip(vols, names)):
        color = colors[j]
        style = {"color": color, "solid_capstyle": "butt", **every_volume[j]}
        line = _Liner(r.time_s, _bucket(r.n_values, width_px), clock)

        if "iops" in panel:
            line(panel["iops"], r.iops, label=name, **style)
            demand = demand_of(r.workload)
            if demand is not None and not any(demand is o for o in drawn_demand):
                # The offered I/O of a trace, once per trace (several volumes usually replay one),
                # as a grey area under the lines: it shows where they coincide with it and, above
                # them, what arrived and was not served.
                drawn_demand.append(demand)
                same = sum(1 for v in vols if demand_of(v.workload) is demand)
                who = "" if same == len(vols) else f" ({name})"
                # Grey when all replay one trace; each in its volume's colour when they differ.
                shade = ("0.55", 0.4) if same == len(vols) else (color, 0.2)
                line.area(
                    panel["iops"], r.offered_iops, color=shade[0], alpha=shade[1], lw=0, zorder=2, label=f"offered{who}"
                )
        if "throughput" in panel:
            line(panel["throughput"], r.throughput_mib_s, **style)
        if "balance" in panel and r.volume.has_bucket:
            line(panel["balance"], r.burst_balance_pct, **{**style, **with_bucket[j]})
        if "latency" in panel:
            line(panel["latency"], r.latency_ms, **style)
        if "backlog" in panel:
            line(panel["backlog"], r.backlog_ops, **style)
        on = panel.get("balance") if r.volume.has_bucket else None
        cliff_rows.append((r, color, on if on is not None else axs[0]))

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
        cliff_rows.append((ir, color, where[0] if where else axs[0]))

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
        a.set_yticklabels([_wrap(n) for n, _ in rows], fontsize=7, linespacing=1.0)
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
        a.set_ylim(0, max(a.get_ylim()[1], 1.0) * 1.04)
    if "throughput" in panel:
        panel["throughput"].set_ylabel("MiB/s" if vols else "instance MB/s")
        panel["throughput"].set_ylim(bottom=0)
    if "balance" in panel:
        a = panel["balance"]
        a.set_ylabel("BurstBalance %")
        a.set_ylim(-3, 103)
        no_bucket = [n for n, r in zip(names, vols) if not r.volume.has_bucket]
        if no_bucket:
            # Above the panel, right: it covers no data (and the cliff labels are above the top one).
            a.set_title(_wrap("no credit bucket: " + "; ".join(no_bucket), 110), loc="right", fontsize=7, color="0.35")
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
            lo, hi = float(pos.min()) / 1.5, float(pos.max()) * 2.0
            a.set_ylim(lo, hi)
            if _latency_ticks(a, lo, hi):
                a.set_ylabel("mean latency")  # the ticks carry their units
        else:
            a.set_ylim(bottom=0)
    if "backlog" in panel:
        from matplotlib.ticker import EngFormatter

        panel["backlog"].set_ylabel("waiting I/Os")
        panel["backlog"].set_ylim(bottom=0)
        panel["backlog"].yaxis.set_major_formatter(EngFormatter(sep=" "))
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
        _time_ticks(bottom, clock.unit, float(x_hi) - float(x_lo))
    else:
        from matplotlib import dates

        make_locator: Any = dates.AutoDateLocator  # untyped in matplotlib
        make_formatter: Any = dates.ConciseDateFormatter
        locator = make_locator()
        for a in axs:
            a.xaxis.set_major_locator(locator)
            a.xaxis.set_major_formatter(make_formatter(locator))
    if user_axes is None:
        axis_pt = w * 72.0 * 0.72  # less than the panels' width: labels then never overlap
    else:
        axis_pt = float(user_axes[0].bbox.width) * 72.0 / float(fig.dpi)
    label_rows = _mark_cliffs(
        axs[0],
        cliff_rows,
        [panel[p] for p in ("iops", "balance", "latency", "instance") if p in panel],
        clock,
        float(x_lo),
        float(x_hi),
        axis_pt,
    )
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
    # The top panel's titles go above the cliff labels (a pad is shared by an axes' titles).
    pad = 6.0 + (10.0 + _CLIFF_ROW * label_rows if label_rows else 0.0)
    if title:
        axs[0].set_title(title, fontsize=10, pad=pad)
    elif label_rows and axs[0].get_title("right"):
        axs[0].set_title(axs[0].get_title("right"), loc="right", fontsize=7, color="0.35", pad=pad)
    return fig  # type: ignore[no-any-return]


_CLIFF_FONT = 7.5  # points
_CLIFF_ROW = 11.0  # points between rows of cliff labels


_MEASURE: Any = None


def _text_width_pt(text: str, size: float) -> float:
    """The width of ``text`` in points, in matplotlib's default font (the font's metrics: a
    renderer at 72 dpi, where a pixel is a point)."""
    global _MEASURE
    from matplotlib.font_manager import FontProperties

    if _MEASURE is None:
        from matplotlib.backends.backend_agg import RendererAgg

        make: Any = RendererAgg  # untyped in matplotlib
        _MEASURE = make(8, 8, 72)
    width, _, _ = _MEASURE.get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
    return float(width)


def _mark_cliffs(
    top: Any,
    rows: List[Tuple[Union[VolumeResult, InstanceResult], str, Any]],
    lines_on: List[Any],
    clock: _Clock,
    x_lo: float,
    x_hi: float,
    axis_pt: float,
) -> int:
    """Every cliff: its stretch shaded on its result's panel (the balance), a dotted line at its
    start on ``lines_on``, a marker above the top panel and a label above that: "cliff Tue
    02:00, 53 min". The labels sit outside the panels (they cover no data), up to two rows per
    result; one that would overlap the labels before it is counted in the last of them
    ("(+2)"). Returns the rows of labels."""
    from matplotlib import transforms

    marker_at = transforms.offset_copy(top.get_xaxis_transform(), fig=top.figure, y=3.5, units="points")
    span = max(x_hi - x_lo, 1e-300)
    row = 0
    for r, color, shade in rows:
        cliffs = r.cliffs
        if not cliffs:
            continue
        run_end = r.t0_s + r.n_steps * r.dt_s
        starts = clock.x(np.array([c.start_s for c in cliffs], dtype=np.float64))
        ends = clock.x(np.array([run_end if c.end_s is None else c.end_s for c in cliffs], dtype=np.float64))
        for x0, x1 in zip(starts, ends):
            shade.axvspan(float(x0), float(x1), color=color, alpha=0.13, lw=0, zorder=0.5)
            for a in lines_on:
                a.axvline(float(x0), color=color, ls=":", lw=0.9, zorder=1)
        top.plot(
            starts,
            np.ones(len(starts)),
            ls="none",
            marker="v",
            ms=5,
            color=color,
            transform=marker_at,
            clip_on=False,
            zorder=6,
        )
        right = [-math.inf, -math.inf]  # the right end of each row's last label, points
        last: List[Any] = []  # [annotation, its text, its left end, its row, merged]
        for c, x in zip(cliffs, starts):
            text = f"cliff {clock.label(c.start_s)}, " + ("to the end" if c.end_s is None else _human(c.duration_s))
            width = _text_width_pt(text, _CLIFF_FONT) + 4.0
            left = (float(x) - x_lo) / span * axis_pt
            shift = min(0.0, axis_pt - (left + width))  # kept inside the panel's width
            k = next((k for k in range(2) if left + shift >= right[k] + 3.0), None)
            if k is None and last:
                ann, base, at, k_last, merged = last
                merged += 1
                ann.set_text(f"{base} (+{merged})")
                right[k_last] = at + _text_width_pt(ann.get_text(), _CLIFF_FONT) + 4.0
                last[4] = merged
                continue
            k = 0 if k is None else k
            ann = top.annotate(
                text,
                (float(x), 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(shift, 10.0 + _CLIFF_ROW * (row + k)),
                textcoords="offset points",
                color=color,
                fontsize=_CLIFF_FONT,
                va="bottom",
                annotation_clip=False,
            )
            right[k] = left + shift + width
            last = [ann, text, left + shift, k, 0]
        row += 2 if right[1] > -math.inf else 1
    return row


# Latency ticks on a log axis, in ms: the durations one reads (1 ms, 1 s, 1 min, 1 h, 1 d).
_LATENCY_TICKS = (
    (1e-3, "1 µs"), (1e-2, "10 µs"), (0.1, "100 µs"), (1.0, "1 ms"), (10.0, "10 ms"), (100.0, "100 ms"),
    (1e3, "1 s"), (1e4, "10 s"), (6e4, "1 min"), (6e5, "10 min"), (3.6e6, "1 h"), (3.6e7, "10 h"),
    (8.64e7, "1 d"), (8.64e8, "10 d"),
)  # fmt: skip


def _latency_ticks(a: Any, lo: float, hi: float) -> bool:
    """Ticks in human units on a log latency axis in ms, fewer when there are many; False (and
    matplotlib's ticks) when fewer than two fall in [lo, hi]."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ticks = [(v, t) for v, t in _LATENCY_TICKS if lo <= v <= hi]
    if len(ticks) > 6:
        ticks = ticks[:: math.ceil(len(ticks) / 6)]
    if len(ticks) < 2:
        return False
    a.yaxis.set_major_locator(FixedLocator([v for v, _ in ticks]))
    a.yaxis.set_major_formatter(lambda v, pos: dict(ticks).get(v, ""))
    a.yaxis.set_minor_locator(NullLocator())
    return True


def _time_ticks(a: Any, unit: str, span: float) -> None:
    """Whole hours and days on long runs: hours in steps of 15 or 30 minutes, 1, 2, 3, 6 or 12
    hours; days up to two weeks, then weeks."""
    from matplotlib.ticker import MultipleLocator

    if unit == "h":
        step = next((h for h in (0.25, 0.5, 1, 2, 3, 6, 12) if span / h <= 12), 24)
        a.xaxis.set_major_locator(MultipleLocator(step))
    elif unit == "d":
        # (No minor ticks: shared by every panel, a tick per day costs more than the lines.)
        if span <= 14:
            a.xaxis.set_major_locator(MultipleLocator(1))
        elif span <= 70:
            a.xaxis.set_major_locator(MultipleLocator(7))


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


def _wrap(label: str, width: int = 36) -> str:
    """A label on as many lines as it needs, broken between words, never cut.

    >>> print(_wrap("gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s) #1"))
    gp2 100 GiB (300 IOPS baseline,
    burst 3000, 128 MiB/s) #1
    """
    import textwrap

    return "\n".join(textwrap.wrap(label, width, break_long_words=False, break_on_hyphens=False)) or label
