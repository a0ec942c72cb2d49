"""CloudWatch metrics into traces, replayed on described volumes, and compared with what was measured."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from .. import _repr
from .._frames import CLOUDWATCH_COLUMNS
from .._units import real
from ..instances import Catalog
from ..latency import latency_moments
from ..recording import BOUND_NAMES
from ..results import VolumeResult
from ..simulation import Simulation
from ..trace import from_pandas
from ..volumes import Volume
from ..workloads import OpenLoop
from ._cloudwatch import check_instance_metrics, check_metrics
from ._ec2 import Attachment

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["DEMAND_METRICS", "traces", "replay", "compare", "Comparison"]

#: The metrics a trace is built from (statistic ``Sum``: I/Os and bytes in each period), and
#: the trace column each is read as: :func:`ebssim.trace.from_pandas` takes either name.
DEMAND_METRICS = CLOUDWATCH_COLUMNS


def traces(
    metrics: "pd.DataFrame",
    *,
    dt: Optional[float] = None,
    gaps: str = "error",
    volumes: Optional[Mapping[str, Volume]] = None,
    pattern: str = "random",
    service_time_ms: Optional[float] = None,
    max_in_flight: Union[str, float, None] = None,
    min_in_flight: float = 1.0,
) -> Dict[str, OpenLoop]:
    """One :class:`~ebssim.OpenLoop` trace per volume from CloudWatch metrics.

    Parameters
    ----------
    metrics : pandas.DataFrame
        From :func:`read_metric_data`, :func:`read_metric_statistics` or
        :func:`read_metrics_csv` (or several joined with ``pandas.concat``). Every volume with
        demand needs the ``Sum`` of all four of ``VolumeReadOps``, ``VolumeWriteOps``,
        ``VolumeReadBytes`` and ``VolumeWriteBytes``; other metrics are left for :func:`compare`.
    dt : float, optional
        Step of the trace: default the metrics' period (each period one step), or a finer step
        that divides it (each period's I/Os spread evenly over its steps); see
        :func:`ebssim.trace.from_pandas`.
    gaps : {"error", "zero", "interpolate"}
        Periods without a datapoint (CloudWatch leaves out periods with nothing reported):
        refuse them (default), take them as no I/O, or interpolate between the neighbours.
    volumes : dict of str to Volume, optional
        The described volumes (:func:`read_volumes`): metrics of a volume not among them are an
        error.
    pattern, service_time_ms
        As for :class:`~ebssim.OpenLoop` (CloudWatch does not say whether I/O was sequential).
    max_in_flight : "measured", "peak", float or None
        The application's bound on outstanding I/Os (:class:`~ebssim.OpenLoop`): ``None``
        (default) none, every arrival queues at the device; a number, that bound throughout;
        ``"measured"``, each period's ``VolumeQueueLength`` (its Average, or the statistic
        present: the I/Os outstanding at the device on average, as the application kept them),
        at least ``min_in_flight``, and ``min_in_flight`` in periods without a datapoint;
        ``"peak"``, the largest of those, throughout (the most the application was seen to keep
        outstanding: work a slower volume carries into a quiet period then drains at that
        concurrency, not at the quiet period's). With a bound, demand a slower volume cannot
        carry waits in the application and is served later, instead of queueing at the device
        (docs/replay.md, "Applications").
    min_in_flight : float
        The least bound of a period with ``max_in_flight="measured"`` or ``"peak"`` (default 1: an application
        with work waiting has at least one I/O outstanding; a period measured at 0.05 would
        otherwise hold its backlog at 0.05 I/Os in flight).

    Returns
    -------
    dict of str to OpenLoop
        By VolumeId. The traces share one time axis, from the first to the last period in
        ``metrics`` (so that they run together in one Simulation), and their ``start``, so
        results are on the wall clock. Reads and writes are kept apart per step.

    CloudWatch counts completed I/Os: in a period in which the real volume was throttled, what
    it measured is what was served, not what the application asked for; the replay takes it as
    demand.
    """
    import pandas as pd

    check_metrics(metrics)
    demand = metrics[metrics["metric"].isin(list(DEMAND_METRICS))]
    if demand.shape[0] == 0:
        raise ValueError(
            f"metrics hold none of {', '.join(DEMAND_METRICS)}: a trace needs the Sum of all four per volume"
        )
    sums = demand[demand["stat"] == "Sum"]
    for (vid, m), g in demand.groupby(["volume_id", "metric"], sort=False):
        if not (g["stat"] == "Sum").any():
            raise ValueError(
                f"{vid} {m} has the statistic(s) {sorted(g['stat'].unique())} but not Sum: a trace needs the "
                f"I/Os and bytes of each period, its Sum"
            )
    vids = list(dict.fromkeys(sums["volume_id"]))
    if volumes is not None:
        unknown = [v for v in vids if v not in volumes]
        if unknown:
            raise ValueError(
                f"metrics of {', '.join(unknown)}, which the described volumes do not list "
                f"({', '.join(volumes) or 'none'}): describe them too, or drop their metrics, e.g. "
                f"metrics[metrics.volume_id != {unknown[0]!r}]"
            )
    for vid in vids:
        have = set(sums.loc[sums["volume_id"] == vid, "metric"])
        lack = [m for m in DEMAND_METRICS if m not in have]
        if lack:
            raise ValueError(f"{vid} has no {', '.join(lack)} (Sum): a trace needs all of {', '.join(DEMAND_METRICS)}")
    period = float(sums["period_s"].iloc[0])
    step = pd.Timedelta(seconds=period)
    t0, t1 = sums["timestamp"].min(), sums["timestamp"].max()
    off = (sums["timestamp"] - t0) % step != pd.Timedelta(0)
    if off.any():
        row = sums[off].iloc[0]
        raise ValueError(
            f"{row.volume_id} {row.metric} at {row.timestamp} is not a whole number of periods of {period:g} s "
            f"after the first datapoint ({t0}): the metrics must share one grid of periods"
        )
    grid = pd.date_range(t0, t1, freq=step)
    measured = _check_in_flight(max_in_flight, min_in_flight)
    out: Dict[str, OpenLoop] = {}
    for vid in vids:
        bound: Any = max_in_flight
        if measured:
            bound = _measured_in_flight(metrics, vid, grid, period, float(min_in_flight), str(max_in_flight))
            if max_in_flight == "peak":
                bound = float(bound.max())
        # CloudWatch's own names: from_pandas reads each Sum as the I/Os or bytes of its period.
        wide = (
            sums[sums["volume_id"] == vid]
            .pivot(index="timestamp", columns="metric", values="value")
            .reindex(grid)[list(DEMAND_METRICS)]
        )
        wide.columns.name = None
        try:
            out[vid] = from_pandas(
                wide,
                period=period,
                dt=dt,
                gaps=gaps,
                pattern=pattern,
                service_time_ms=service_time_ms,
                max_in_flight=bound,
            )
        except ValueError as e:
            raise ValueError(f"{vid}: {e}") from None
    return out


def _check_in_flight(max_in_flight: Union[str, float, None], min_in_flight: float) -> bool:
    """Check ``max_in_flight=`` and ``min_in_flight=`` of :func:`traces`; whether the bound is measured."""
    floor = real(min_in_flight, "min_in_flight", "a number of I/Os")
    if not (floor > 0 and math.isfinite(floor)):
        raise ValueError(f"min_in_flight={min_in_flight!r} must be a positive, finite number of I/Os")
    if isinstance(max_in_flight, str):
        if max_in_flight not in ("measured", "peak"):
            raise ValueError(
                f"max_in_flight={max_in_flight!r} must be 'measured' (each period's VolumeQueueLength), 'peak' (the "
                f"largest), a number of I/Os or None"
            )
        return True
    if max_in_flight is not None:
        m = real(max_in_flight, "max_in_flight", "'measured', 'peak', a number of I/Os or None")
        if not m > 0:
            raise ValueError(f"max_in_flight={max_in_flight!r} must be a positive number of I/Os")
    return False


def _measured_in_flight(
    metrics: "pd.DataFrame", vid: str, grid: "pd.DatetimeIndex", period: float, floor: float, how: str = "measured"
) -> np.ndarray:
    """Each period's bound on outstanding I/Os from ``VolumeQueueLength`` (its Average, else the
    statistic present), at least ``floor``, and ``floor`` where it has no datapoint."""
    ql = metrics[(metrics["volume_id"] == vid) & (metrics["metric"] == "VolumeQueueLength")]
    if ql.shape[0] == 0:
        raise ValueError(
            f"{vid}: max_in_flight={how!r} takes each period's VolumeQueueLength, and the metrics hold none for "
            f"it: fetch VolumeQueueLength (Average), or give max_in_flight= a number"
        )
    rows = ql[ql["stat"] == _preferred(ql)]
    if float(rows["period_s"].iloc[0]) != period:
        raise ValueError(
            f"{vid}: VolumeQueueLength is per {float(rows['period_s'].iloc[0]):g} s but the demand per {period:g} s: "
            f"fetch them at one period"
        )
    values = rows.set_index("timestamp")["value"].reindex(grid).to_numpy(dtype=float)
    return np.where(np.isnan(values), floor, np.maximum(values, floor))


def _first_balance(metrics: "pd.DataFrame", vid: str, start: "pd.Timestamp") -> Optional[float]:
    bb = metrics[(metrics["volume_id"] == vid) & (metrics["metric"] == "BurstBalance")]
    if bb.shape[0] == 0:
        return None
    stat = _preferred(bb)
    at = bb[(bb["stat"] == stat) & (bb["timestamp"] == start)]
    if at.shape[0] == 0:
        raise ValueError(
            f"{vid}: BurstBalance ({stat}) has no datapoint at the trace's start, {start}, to start the volume "
            f"from: pass initial_burst_balance= a percentage, or 'full'"
        )
    return float(at["value"].iloc[0])


def _preferred(rows: "pd.DataFrame", prefer: str = "Average") -> str:
    stats = sorted(rows["stat"].unique())
    return prefer if prefer in stats else stats[0]


def replay(
    metrics: "pd.DataFrame",
    volumes: Mapping[str, Volume],
    attachments: Optional[Mapping[str, Attachment]] = None,
    *,
    dt: Optional[float] = None,
    gaps: str = "error",
    initial_burst_balance: Union[str, float] = "measured",
    catalog: Optional[Catalog] = None,
    pattern: str = "random",
    service_time_ms: Optional[float] = None,
    max_in_flight: Union[str, float, None] = None,
    min_in_flight: float = 1.0,
    run_on: bool = True,
    max_run_on_s: Optional[float] = None,
) -> Dict[str, VolumeResult]:
    """Replay measured CloudWatch demand on the described volumes, attached as described.

    Parameters
    ----------
    metrics : pandas.DataFrame
        CloudWatch metrics (:func:`read_metric_data`, ...); every volume with demand is replayed.
    volumes : dict of str to Volume
        By VolumeId (:func:`read_volumes`), or your what-if configurations (e.g. the same ids as
        gp3). A volume with metrics but no configuration is an error.
    attachments : dict of str to Attachment, optional
        By VolumeId (:func:`read_instances`): volumes on one instance are simulated together and
        share its EBS budget. Without it, or for volumes it does not list, each volume runs alone.
    dt, gaps, pattern, service_time_ms, max_in_flight, min_in_flight
        As for :func:`traces`: ``max_in_flight="measured"`` replays the application with the
        concurrency CloudWatch measured (``VolumeQueueLength``), so that a slower volume slows
        it down instead of queueing its demand without bound.
    run_on : bool
        Go on after the trace, with no new I/O, until its work is done (default), so that each
        result says when: :attr:`VolumeResult.finish_s`, :attr:`~VolumeResult.overrun_s`,
        :attr:`~VolumeResult.slowdown` (:meth:`Simulation.replay`; volumes on one instance go
        on together). False: the run is the trace's length.
    max_run_on_s : float, optional
        How long to go on at most (default: nine times the trace's length).
    initial_burst_balance : "measured", "full" or float
        Start of the bucket of gp2, st1, sc1 and standard volumes: ``"measured"`` (default) takes
        the ``BurstBalance`` datapoint at the trace's first period (its Average if there are
        several statistics; the volume's own setting, a full bucket unless given, when the
        metrics hold no BurstBalance for it); ``"full"`` the volume's own setting; a number, that
        percentage for every such volume.
    catalog : Catalog, optional
        Where instance types are looked up (default: the shipped catalog; e.g.
        ``Catalog.from_describe_instance_types(path)`` for your own).

    Returns
    -------
    dict of str to VolumeResult
        By VolumeId; ``to_pandas()`` is indexed by the wall clock. Compare each with what was
        measured with :func:`compare`.
    """
    if isinstance(initial_burst_balance, str):
        if initial_burst_balance not in ("measured", "full"):
            raise ValueError(
                f"initial_burst_balance={initial_burst_balance!r} must be 'measured', 'full' or a percentage"
            )
    else:
        pct = real(initial_burst_balance, "initial_burst_balance", "'measured', 'full' or a percentage")
        if not 0 <= pct <= 100:
            raise ValueError(f"initial_burst_balance={initial_burst_balance!r} must be between 0 and 100 percent")
    loops = traces(
        metrics,
        dt=dt,
        gaps=gaps,
        volumes=volumes,
        pattern=pattern,
        service_time_ms=service_time_ms,
        max_in_flight=max_in_flight,
        min_in_flight=min_in_flight,
    )

    def start_volume(vid: str) -> Volume:
        vol = volumes[vid]
        if not vol.has_bucket or initial_burst_balance == "full":
            return vol
        if initial_burst_balance == "measured":
            start = loops[vid].start
            assert start is not None
            first = _first_balance(metrics, vid, start)
            return vol if first is None else dataclasses.replace(vol, burst_balance_pct=first)
        return dataclasses.replace(vol, burst_balance_pct=float(initial_burst_balance))

    groups: Dict[Tuple[Optional[str], str], List[str]] = {}
    for vid in loops:
        att = None if attachments is None else attachments.get(vid)
        key = (att.instance_type, att.instance_id) if att is not None else (None, vid)
        groups.setdefault(key, []).append(vid)
    out: Dict[str, VolumeResult] = {}
    for (itype, _), vids in groups.items():
        inst = None if itype is None else (catalog.instance(itype) if catalog is not None else itype)
        sim = Simulation([start_volume(v) for v in vids], dt=loops[vids[0]].dt or 1.0, instance=inst)
        if run_on:
            run = sim.replay([loops[v] for v in vids], max_run_on_s=max_run_on_s)
        else:
            run = sim.run([loops[v] for v in vids])
        out.update(zip(vids, run))
    return {vid: out[vid] for vid in loops}


#: The quantities :func:`compare` sets measured against simulated, in the order of its ``errors``.
QUANTITIES = (
    "burst_balance_pct",
    "iops",
    "queue_length",
    "read_latency_ms",
    "write_latency_ms",
    "avg_read_latency_ms",
    "avg_write_latency_ms",
)

#: The exceeded checks :func:`compare` sets against the limit the model was bound by
#: (:data:`ebssim.BOUND_NAMES`), by the name of their columns and rows in :class:`Comparison`.
CHECKS = {
    "iops_exceeded": ("VolumeIOPSExceededCheck", "volume_iops"),
    "throughput_exceeded": ("VolumeThroughputExceededCheck", "volume_throughput"),
    "instance_iops_exceeded": ("InstanceEBSIOPSExceededCheck", "instance_iops"),
    "instance_throughput_exceeded": ("InstanceEBSThroughputExceededCheck", "instance_throughput"),
}


@dataclass(frozen=True)
class Comparison:
    """Measured CloudWatch metrics of one volume beside the simulation's, period by period.

    ``frame`` has one row per period of the metrics (a DatetimeIndex named ``time``) and, for
    each quantity measured, ``measured_<q>`` and ``simulated_<q>`` columns:

    ========================  ==============================================  ===================================
    quantity                  measured                                        simulated, over the period's steps
    ========================  ==============================================  ===================================
    ``burst_balance_pct``     ``BurstBalance`` at the period's start          the balance at each step's start,
                              (Average, or the statistic present)             averaged (min/max for Minimum/Maximum)
    ``iops``                  (``VolumeReadOps`` + ``VolumeWriteOps``) Sum    mean served IOPS
                              / period
    ``queue_length``          ``VolumeQueueLength`` (Average, ...)            mean I/Os outstanding (Little's law)
    ``read_latency_ms``       ``VolumeTotalReadTime`` / ``VolumeReadOps``     the mean latency at the device
                              (Sums), ms                                      (``device_latency_s``), weighted by
                                                                              the I/Os of the period's steps
    ``write_latency_ms``      ``VolumeTotalWriteTime`` / ``VolumeWriteOps``   the same (the model has one queue
                                                                              for reads and writes)
    ``avg_read_latency_ms``   ``VolumeAvgReadLatency`` (Average, ...), ms     the mean device latency of the
                                                                              period's reads: each step's wait
                                                                              plus the read service time,
                                                                              weighted by the step's I/Os
                                                                              (:func:`ebssim.latency_moments`,
                                                                              ``direction="read"``)
    ``avg_write_latency_ms``  ``VolumeAvgWriteLatency``, ms                   the same for writes
    ``stalled_io``            ``VolumeStalledIOCheck`` (0 or 1)               (none: the model does not stall)
    ``idle_time_s``           ``VolumeIdleTime`` Sum                          (none: the model has no idle time
                                                                              inside a step)
    ``carried_ops``           (none)                                          I/Os waiting at the period's end
                                                                              (only when some period has any)
    ========================  ==============================================  ===================================

    ``queue_length`` and the latencies are the device's (CloudWatch measures the volume): with an
    application's bound on outstanding I/Os (``max_in_flight``), what waits in the application
    is in neither. A replay that ran on after its trace (:meth:`~ebssim.Simulation.replay`) is
    compared over the trace's periods.

    ``errors`` has a row per quantity with both columns: ``rmse`` (root mean square of simulated
    minus measured, over the periods that have both), ``bias`` (their mean), ``max_abs_error``
    and ``periods``. For BurstBalance the unit is percentage points.

    The exceeded checks (:data:`CHECKS`) are set against the model's bound series: for
    ``iops_exceeded`` the measured column is 1 in a period whose ``VolumeIOPSExceededCheck``
    (Maximum, or the statistic present) is above 0, and the simulated column 1 in a period in
    at least half of whose steps the model was bound by ``volume_iops``; likewise
    ``throughput_exceeded`` (``VolumeThroughputExceededCheck``, ``volume_throughput``) and, from
    ``instance_metrics``, ``instance_iops_exceeded`` and ``instance_throughput_exceeded``
    (``instance_iops``, ``instance_throughput``: the volume held back by its instance's budget).
    ``agreement`` has a row per check measured: ``periods`` (with both), ``measured`` (periods
    AWS says exceeded), ``simulated`` (periods the model was bound), ``both``, ``agreement``
    (the share of periods where the two agree), ``precision`` (``both / simulated``) and
    ``recall`` (``both / measured``), NaN where the share has no periods.
    """

    volume_id: str
    frame: "pd.DataFrame"
    errors: "pd.DataFrame"
    agreement: Optional["pd.DataFrame"] = None

    @property
    def burst_balance_rmse_pp(self) -> Optional[float]:
        """RMSE of BurstBalance, percentage points (None when it was not measured)."""
        if "burst_balance_pct" not in self.errors.index:
            return None
        value: Any = self.errors.loc["burst_balance_pct", "rmse"]
        return float(value)

    def plot(self, *, figsize: Optional[Tuple[float, float]] = None) -> "Figure":
        """Measured (solid) and simulated (dashed) against time, one panel per quantity (a 0/1
        check in a lower panel); the figure grows with the panels unless ``figsize`` is given. It
        shows once in Jupyter, as :func:`ebssim.plot`'s does (:func:`ebssim.plot.figure`)."""
        from ..plot import figure

        names = [q for q in QUANTITIES if f"measured_{q}" in self.frame]
        names += [c for c in CHECKS if f"measured_{c}" in self.frame]
        if not names:
            raise ValueError(
                f"{self.volume_id}: nothing to plot: the metrics hold no BurstBalance, I/Os, queue length or latency"
            )
        ratios = [0.55 if q in CHECKS else 1.0 for q in names]
        if figsize is None:
            figsize = (8.0, 1.0 + 1.5 * sum(ratios))
        fig = figure(figsize=figsize, layout="constrained")
        axes = fig.subplots(len(names), 1, sharex=True, squeeze=False, height_ratios=ratios)[:, 0]
        labels = {
            "burst_balance_pct": "BurstBalance %",
            "iops": "IOPS",
            "queue_length": "queue length",
            "read_latency_ms": "read latency, ms",
            "write_latency_ms": "write latency, ms",
            "avg_read_latency_ms": "avg read, ms",
            "avg_write_latency_ms": "avg write, ms",
            "iops_exceeded": "IOPS exceeded",
            "throughput_exceeded": "throughput exceeded",
            "instance_iops_exceeded": "instance IOPS exceeded",
            "instance_throughput_exceeded": "instance tput exceeded",
        }
        t = self.frame.index
        for ax, q in zip(axes, names):
            if q in CHECKS:  # 0/1 per period: steps, the simulated one drawn a little lower to show both
                ax.step(t, self.frame[f"measured_{q}"], where="post", lw=1.6, label="measured")
                ax.step(
                    t, self.frame[f"simulated_{q}"] * 0.9, where="post", lw=1.6, ls="--", label="simulated (ebssim)"
                )
                ax.set_ylabel(
                    labels[q].replace(" exceeded", "\nexceeded"), fontsize=7, rotation=0, ha="right", va="center"
                )
                ax.set_yticks([0, 1])
                ax.set_ylim(-0.15, 1.25)
                ax.grid(True, alpha=0.3)
                if self.agreement is not None and q in self.agreement.index:
                    a: Any = self.agreement.loc[q, "agreement"]
                    ax.set_title(f"agreement {float(a):.3g}", fontsize=8, loc="right")
                continue
            measured, simulated, label = self.frame[f"measured_{q}"], self.frame[f"simulated_{q}"], labels[q]
            if q.endswith("_latency_ms") and max(measured.max(), simulated.max()) > 10_000:  # human units: s
                measured, simulated, label = measured / 1e3, simulated / 1e3, label.replace(", ms", ", s")
            ax.plot(t, measured, lw=1.6, label="measured")
            ax.plot(t, simulated, lw=1.6, ls="--", label="simulated (ebssim)")
            ax.set_ylabel(label, fontsize=8)
            ax.grid(True, alpha=0.3)
            if q in self.errors.index:
                unit = " pp" if q == "burst_balance_pct" else ""
                rmse: Any = self.errors.loc[q, "rmse"]
                text = _repr.latency(float(rmse)) if q.endswith("_latency_ms") else f"{float(rmse):.3g}{unit}"
                ax.set_title(f"RMSE {text}", fontsize=8, loc="right")
        handles, legend_labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, legend_labels, loc="outside upper right", fontsize=8, frameon=False, ncols=2)
        axes[-1].set_xlabel("time (UTC)" if getattr(t, "tz", None) is not None else "time")
        fig.suptitle(self.volume_id, fontsize=10, x=0.02, ha="left")
        return fig

    def _error_rows(self) -> List[List[str]]:
        """Each quantity's errors in its unit: percentage points, IOPS, I/Os, and ms or longer."""

        def unit(q: str, x: float) -> str:
            if q == "burst_balance_pct":
                return f"{x:.3g} pp"
            if q.endswith("_latency_ms"):
                return ("-" if x < 0 else "") + _repr.latency(abs(x))
            return _repr.number(x, "IOPS" if q == "iops" else "")

        return [
            [
                str(q),
                unit(str(q), float(r.rmse)),
                unit(str(q), float(r.bias)),
                unit(str(q), float(r.max_abs_error)),
                f"{int(r.periods):,}",
            ]
            for q, r in self.errors.iterrows()
        ]

    def _agreement_rows(self) -> List[List[str]]:
        def share(x: float) -> str:
            return "-" if math.isnan(x) else f"{x:.3g}"

        if self.agreement is None:
            return []
        return [
            [
                str(c),
                f"{int(r.periods):,}",
                f"{int(r.measured):,}",
                f"{int(r.simulated):,}",
                share(float(r.agreement)),
                share(float(r.precision)),
                share(float(r.recall)),
            ]
            for c, r in self.agreement.iterrows()
        ]

    def _span(self) -> str:
        n = self.frame.shape[0]
        return f"{n:,} period{'s' * (n != 1)}" + (f" from {self.frame.index[0]}" if n else "")

    def __repr__(self) -> str:
        errs = [f"{row[0]} RMSE {row[1]}" for row in self._error_rows()]
        errs += [f"{row[0]} agreement {row[4]}" for row in self._agreement_rows()]
        return _repr.short_repr(
            "Comparison", [f"{self.volume_id}: {self._span()}", *(errs or ["nothing to compare"])], sep="; "
        )

    def _repr_html_(self) -> str:
        out = _repr.html_grid(
            f"Comparison {self.volume_id}: {self._span()}, simulated minus measured (.frame has every period)",
            ["quantity", "RMSE", "bias", "largest error", "periods"],
            self._error_rows(),
        )
        rows = self._agreement_rows()
        if rows:
            out += _repr.html_grid(
                "exceeded (AWS) vs bound (ebssim), periods",
                ["check", "periods", "AWS exceeded", "model bound", "agreement", "precision", "recall"],
                rows,
            )
        return out


def compare(
    result: VolumeResult,
    metrics: "pd.DataFrame",
    volume_id: Optional[str] = None,
    *,
    instance_metrics: Optional["pd.DataFrame"] = None,
    instance_id: Optional[str] = None,
) -> Comparison:
    """Measured vs simulated, period by period, with error figures: see :class:`Comparison`.

    Parameters
    ----------
    result : VolumeResult
        A replay of a trace with wall-clock time (:func:`replay`, :func:`traces`,
        :meth:`OpenLoop.from_pandas <ebssim.OpenLoop.from_pandas>`), at a step that divides the
        metrics' period.
    metrics : pandas.DataFrame
        CloudWatch metrics holding the volume's.
    volume_id : str, optional
        Which volume of ``metrics``; optional when they hold one.
    instance_metrics : pandas.DataFrame, optional
        The instance's EBS checks (:func:`read_instance_metric_data`, ...): set against the
        steps in which the model held this volume back for its instance's budget.
    instance_id : str, optional
        Which instance of ``instance_metrics``; optional when they hold one.

    A measured datapoint stamped ``T`` covers the period from ``T``; BurstBalance is taken as
    the balance at ``T`` (AWS does not say when in the period it samples), so the simulated
    balance compared is the one at the start of the steps. Periods outside the simulated run
    are left out.
    """
    import pandas as pd

    check_metrics(metrics)
    inst_rows = None
    if instance_metrics is not None:
        check_instance_metrics(instance_metrics)
        if instance_id is None:
            iids = list(dict.fromkeys(instance_metrics["instance_id"]))
            if len(iids) != 1:
                raise ValueError(
                    f"instance_metrics hold {len(iids)} instances ({', '.join(iids[:5])}): pass instance_id="
                )
            instance_id = iids[0]
        inst_rows = instance_metrics[instance_metrics["instance_id"] == instance_id].rename(
            columns={"instance_id": "volume_id"}
        )
        if inst_rows.shape[0] == 0:
            raise ValueError(f"instance_metrics hold nothing for {instance_id!r}")
        if float(inst_rows["period_s"].iloc[0]) != float(metrics["period_s"].iloc[0]):
            raise ValueError(
                f"instance_metrics are per {float(inst_rows['period_s'].iloc[0]):g} s but metrics per "
                f"{float(metrics['period_s'].iloc[0]):g} s: fetch them at one period"
            )
    elif instance_id is not None:
        raise ValueError(f"instance_id={instance_id!r} without instance_metrics=")
    if volume_id is None:
        ids = list(dict.fromkeys(metrics["volume_id"]))
        if len(ids) != 1:
            raise ValueError(f"metrics hold {len(ids)} volumes ({', '.join(ids[:5])}): pass volume_id=")
        volume_id = ids[0]
    mine = metrics[metrics["volume_id"] == volume_id]
    if mine.shape[0] == 0:
        raise ValueError(f"metrics hold nothing for {volume_id!r}")
    if not isinstance(result, VolumeResult):
        raise ValueError(f"result must be a VolumeResult, not {type(result).__name__}")
    start = getattr(result.workload, "start", None)
    if start is None:
        raise ValueError(
            "result has no wall-clock time to line up with the metrics: replay a trace built by "
            "ebssim.aws.traces or OpenLoop.from_pandas with a DatetimeIndex"
        )
    if not result.recorded and result.n_steps > 0:
        raise ValueError("result was run with record=False and has no per-step series to compare")
    from ..recording import _need_per_step

    _need_per_step(result, "comparing with CloudWatch", "iops", "credits", "latency_s")
    period = float(mine["period_s"].iloc[0])
    dt = result.dt_s
    k = period / dt
    if k < 1 - 1e-9 or abs(k - round(k)) > 1e-9 * k:
        raise ValueError(f"the result's step dt={dt:g} s does not divide the metrics' period of {period:g} s")
    per = int(round(k))
    # The trace's periods (a replay that ran on after the trace has no measurements after it).
    n = (result.n_steps if result.trace_steps is None else result.trace_steps) // per
    if n == 0:
        raise ValueError(f"the result ({result.n_steps} steps of {dt:g} s) is shorter than one period of {period:g} s")

    def by_period(x: np.ndarray, how: str = "mean") -> np.ndarray:
        blocks = x[: n * per].reshape(n, per)
        if how == "Minimum":
            return blocks.min(axis=1)  # type: ignore[no-any-return]
        if how == "Maximum":
            return blocks.max(axis=1)  # type: ignore[no-any-return]
        return blocks.mean(axis=1)  # type: ignore[no-any-return]

    index = pd.DatetimeIndex(start + pd.to_timedelta(np.arange(n) * period, unit="s"), name="time")
    step = pd.Timedelta(seconds=period)

    def measured(metric: str, stat: str, frame: Optional["pd.DataFrame"] = None) -> np.ndarray:
        src = mine if frame is None else frame
        rows = src[(src["metric"] == metric) & (src["stat"] == stat)]
        off = (rows["timestamp"] - start) % step != pd.Timedelta(0)
        if off.any():
            raise ValueError(
                f"{volume_id} {metric} at {rows[off]['timestamp'].iloc[0]} is not on the result's grid of "
                f"{period:g} s periods from {start}"
            )
        out = np.full(n, np.nan)
        pos = ((rows["timestamp"] - start) // step).to_numpy(dtype=np.int64)
        inside = (pos >= 0) & (pos < n)
        out[pos[inside]] = rows["value"].to_numpy(dtype=float)[inside]
        return out

    cols: Dict[str, np.ndarray] = {}
    present = set(mine["metric"])
    if "BurstBalance" in present and result.volume.has_bucket:
        stat = _preferred(mine[mine["metric"] == "BurstBalance"])
        pct = result.burst_balance_pct
        first = result.volume.initial_credits / result.volume.credit_capacity * 100 if result.t0_s == 0 else math.nan
        at_start = np.concatenate([[first], pct[:-1]])
        cols["measured_burst_balance_pct"] = measured("BurstBalance", stat)
        cols["simulated_burst_balance_pct"] = by_period(at_start, stat)
    if {"VolumeReadOps", "VolumeWriteOps"} <= present:
        cols["measured_iops"] = (measured("VolumeReadOps", "Sum") + measured("VolumeWriteOps", "Sum")) / period
        cols["simulated_iops"] = by_period(result.iops)
    if "VolumeQueueLength" in present:
        stat = _preferred(mine[mine["metric"] == "VolumeQueueLength"])
        cols["measured_queue_length"] = measured("VolumeQueueLength", stat)
        # At the device: an application's bound holds the rest of its backlog back (the same
        # as queue_length without one).
        cols["simulated_queue_length"] = by_period(result.device_queue_length, stat)
    ops = np.asarray(result.iops, dtype=np.float64)[: n * per].reshape(n, per)
    device = np.asarray(result.device_latency_s, dtype=np.float64)[: n * per].reshape(n, per)
    done = ops.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # The I/O-weighted mean of the period's steps (as CloudWatch's total time over its I/Os).
        per_io = np.where(done > 0, np.where(ops > 0, device * ops, 0.0).sum(axis=1) / done, np.nan) * 1e3
    for direction in ("Read", "Write"):
        time_m, ops_m = f"VolumeTotal{direction}Time", f"Volume{direction}Ops"
        if {time_m, ops_m} <= present and (mine.loc[mine["metric"] == time_m, "stat"] == "Sum").any():
            with np.errstate(invalid="ignore", divide="ignore"):
                count = measured(ops_m, "Sum")
                lat = np.where(count > 0, measured(time_m, "Sum") / count * 1e3, np.nan)
            q = f"{direction.lower()}_latency_ms"
            cols[f"measured_{q}"] = lat
            cols[f"simulated_{q}"] = per_io
    for direction in ("read", "write"):
        avg_m = f"VolumeAvg{direction.title()}Latency"
        if avg_m in present:
            stat = _preferred(mine[mine["metric"] == avg_m])
            cols[f"measured_avg_{direction}_latency_ms"] = measured(avg_m, stat)
            cols[f"simulated_avg_{direction}_latency_ms"] = _direction_latency_ms(result, n, per, direction)
    if "VolumeStalledIOCheck" in present:
        stalled = measured(
            "VolumeStalledIOCheck", _preferred(mine[mine["metric"] == "VolumeStalledIOCheck"], "Maximum")
        )
        cols["measured_stalled_io"] = np.where(np.isnan(stalled), np.nan, stalled > 0).astype(float)
    checks: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}
    for name, (metric_name, limit) in CHECKS.items():
        src = mine if metric_name.startswith("Volume") else inst_rows
        if src is None or metric_name not in set(src["metric"]):
            continue
        if "bound" not in result.recorded:
            raise ValueError(
                f"{volume_id}: comparing {metric_name} needs the per-step series 'bound', which the result did "
                f"not record"
            )
        value = measured(metric_name, _preferred(src[src["metric"] == metric_name], "Maximum"), src)
        aws_says = np.where(np.isnan(value), np.nan, value > 0).astype(float)
        held = np.asarray(result.bound)[: n * per].reshape(n, per) == BOUND_NAMES.index(limit)
        model_says = (held.mean(axis=1) >= 0.5).astype(float)
        cols[f"measured_{name}"] = aws_says
        cols[f"simulated_{name}"] = model_says
        checks[name] = (aws_says, model_says)
    if "VolumeIdleTime" in present and (mine.loc[mine["metric"] == "VolumeIdleTime", "stat"] == "Sum").any():
        cols["measured_idle_time_s"] = measured("VolumeIdleTime", "Sum")
    carried = np.asarray(result.backlog_ops, dtype=np.float64)[per - 1 : n * per : per]
    if (carried > 0).any():
        cols["simulated_carried_ops"] = carried  # demand carried past each period's end
    frame = pd.DataFrame(cols, index=index)
    rows = []
    for q in QUANTITIES:
        if f"simulated_{q}" not in frame:
            continue
        diff = (frame[f"simulated_{q}"] - frame[f"measured_{q}"]).to_numpy(dtype=float)
        diff = diff[~np.isnan(diff)]
        if diff.size == 0:
            continue
        rows.append(
            {
                "quantity": q,
                "rmse": float(np.sqrt(np.mean(diff**2))),
                "bias": float(diff.mean()),
                "max_abs_error": float(np.abs(diff).max()),
                "periods": int(diff.size),
            }
        )
    errors = pd.DataFrame(rows, columns=["quantity", "rmse", "bias", "max_abs_error", "periods"]).set_index("quantity")
    return Comparison(volume_id, frame, errors, _agreement(checks))


def _agreement(checks: Mapping[str, Tuple[np.ndarray, np.ndarray]]) -> "pd.DataFrame":
    """Per check: the periods with both, those AWS says exceeded, those the model was bound,
    both, and the share that agree, precision and recall (NaN where a share has no periods)."""
    import pandas as pd

    rows = []
    for name, (aws_says, model_says) in checks.items():
        have = ~np.isnan(aws_says)
        a, m = aws_says[have] > 0, model_says[have] > 0
        both = int((a & m).sum())
        periods, measured_n, simulated_n = int(have.sum()), int(a.sum()), int(m.sum())
        rows.append(
            {
                "check": name,
                "periods": periods,
                "measured": measured_n,
                "simulated": simulated_n,
                "both": both,
                "agreement": float((a == m).sum()) / periods if periods else math.nan,
                "precision": both / simulated_n if simulated_n else math.nan,
                "recall": both / measured_n if measured_n else math.nan,
            }
        )
    columns = ["check", "periods", "measured", "simulated", "both", "agreement", "precision", "recall"]
    return pd.DataFrame(rows, columns=columns).set_index("check")


def _direction_latency_ms(result: VolumeResult, n: int, per: int, direction: str) -> np.ndarray:
    """The mean device latency of the reads (or writes) completed in each period, ms: each step's
    mean wait plus the direction's service time, weighted by the step's I/Os
    (:func:`ebssim.latency_moments`); NaN where the period completed none."""
    device = np.asarray(result.device_latency_s, dtype=np.float64)
    done = np.asarray(result.iops, dtype=np.float64) * result.dt_s
    bound = np.asarray(result.bound) if "bound" in result.recorded else None
    model = result.latency_model
    out = np.full(n, np.nan)
    for j in range(n):
        sl = slice(j * per, (j + 1) * per)
        if not (done[sl] > 0).any():
            continue
        mean, _ = latency_moments(
            np.nan_to_num(device[sl]), done[sl], model, bound=None if bound is None else bound[sl], direction=direction
        )
        out[j] = mean * 1e3
    return out
