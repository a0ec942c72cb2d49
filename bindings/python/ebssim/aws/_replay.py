"""CloudWatch metrics into traces, replayed on described volumes, and compared with what was measured."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from .._units import real
from ..instances import Catalog
from ..results import VolumeResult
from ..simulation import Simulation
from ..trace import from_pandas
from ..volumes import Volume
from ..workloads import OpenLoop
from ._cloudwatch import check_metrics
from ._ec2 import Attachment

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["DEMAND_METRICS", "traces", "replay", "compare", "Comparison"]

#: The metrics a trace is built from (statistic ``Sum``: I/Os and bytes in each period), and
#: the trace column each becomes (:func:`ebssim.trace.from_pandas`).
DEMAND_METRICS = {
    "VolumeReadOps": "read_ops",
    "VolumeWriteOps": "write_ops",
    "VolumeReadBytes": "read_bytes",
    "VolumeWriteBytes": "write_bytes",
}


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
    max_in_flight : "measured", float or None
        The application's bound on outstanding I/Os (:class:`~ebssim.OpenLoop`): ``None``
        (default) none, every arrival queues at the device; a number, that bound throughout;
        ``"measured"``, each period's ``VolumeQueueLength`` (its Average, or the statistic
        present: the I/Os outstanding at the device on average, as the application kept them),
        at least ``min_in_flight``, and ``min_in_flight`` in periods without a datapoint. With a
        bound, demand a slower volume cannot carry waits in the application and is served later,
        instead of queueing at the device (docs/replay.md, "Applications").
    min_in_flight : float
        The least bound of a period with ``max_in_flight="measured"`` (default 1: an application
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
            bound = _measured_in_flight(metrics, vid, grid, period, float(min_in_flight))
        wide = (
            sums[sums["volume_id"] == vid]
            .pivot(index="timestamp", columns="metric", values="value")
            .rename(columns=DEMAND_METRICS)
            .reindex(grid)[list(DEMAND_METRICS.values())]
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
            raise ValueError(f"{vid}: {e} ({', '.join(f'{c} is {m}' for m, c in DEMAND_METRICS.items())})") from None
    return out


def _check_in_flight(max_in_flight: Union[str, float, None], min_in_flight: float) -> bool:
    """Check ``max_in_flight=`` and ``min_in_flight=`` of :func:`traces`; whether the bound is measured."""
    floor = real(min_in_flight, "min_in_flight", "a number of I/Os")
    if not (floor > 0 and math.isfinite(floor)):
        raise ValueError(f"min_in_flight={min_in_flight!r} must be a positive, finite number of I/Os")
    if isinstance(max_in_flight, str):
        if max_in_flight != "measured":
            raise ValueError(
                f"max_in_flight={max_in_flight!r} must be 'measured' (each period's VolumeQueueLength), a number "
                f"of I/Os or None"
            )
        return True
    if max_in_flight is not None:
        m = real(max_in_flight, "max_in_flight", "'measured', a number of I/Os or None")
        if not m > 0:
            raise ValueError(f"max_in_flight={max_in_flight!r} must be a positive number of I/Os")
    return False


def _measured_in_flight(
    metrics: "pd.DataFrame", vid: str, grid: "pd.DatetimeIndex", period: float, floor: float
) -> np.ndarray:
    """Each period's bound on outstanding I/Os from ``VolumeQueueLength`` (its Average, else the
    statistic present), at least ``floor``, and ``floor`` where it has no datapoint."""
    ql = metrics[(metrics["volume_id"] == vid) & (metrics["metric"] == "VolumeQueueLength")]
    if ql.shape[0] == 0:
        raise ValueError(
            f"{vid}: max_in_flight='measured' takes each period's VolumeQueueLength, and the metrics hold none for "
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
QUANTITIES = ("burst_balance_pct", "iops", "queue_length", "read_latency_ms", "write_latency_ms")


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
    """

    volume_id: str
    frame: "pd.DataFrame"
    errors: "pd.DataFrame"

    @property
    def burst_balance_rmse_pp(self) -> Optional[float]:
        """RMSE of BurstBalance, percentage points (None when it was not measured)."""
        if "burst_balance_pct" not in self.errors.index:
            return None
        value: Any = self.errors.loc["burst_balance_pct", "rmse"]
        return float(value)

    def plot(self, *, figsize: Tuple[float, float] = (8.0, 5.5)) -> "Figure":
        """Measured (solid) and simulated (dashed) against time, one panel per quantity. The
        figure shows once in Jupyter, as :func:`ebssim.plot`'s does (:func:`ebssim.plot.figure`)."""
        from ..plot import figure

        names = [q for q in QUANTITIES if f"measured_{q}" in self.frame]
        if not names:
            raise ValueError(
                f"{self.volume_id}: nothing to plot: the metrics hold no BurstBalance, I/Os, queue length or latency"
            )
        fig = figure(figsize=figsize, layout="constrained")
        axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
        labels = {
            "burst_balance_pct": "BurstBalance %",
            "iops": "IOPS",
            "queue_length": "queue length",
            "read_latency_ms": "read latency, ms",
            "write_latency_ms": "write latency, ms",
        }
        t = self.frame.index
        for ax, q in zip(axes, names):
            ax.plot(t, self.frame[f"measured_{q}"], lw=1.6, label="measured (CloudWatch)")
            ax.plot(t, self.frame[f"simulated_{q}"], lw=1.6, ls="--", label="simulated (ebssim)")
            ax.set_ylabel(labels[q])
            ax.grid(True, alpha=0.3)
            if q in self.errors.index:
                unit = " pp" if q == "burst_balance_pct" else ""
                rmse: Any = self.errors.loc[q, "rmse"]
                ax.set_title(f"RMSE {float(rmse):.3g}{unit}", fontsize=8, loc="right")
        axes[0].legend(fontsize=8, frameon=False)
        axes[-1].set_xlabel("time (UTC)" if getattr(t, "tz", None) is not None else "time")
        fig.suptitle(self.volume_id, fontsize=10)
        return fig

    def __repr__(self) -> str:
        errs = ", ".join(f"{q} RMSE {r.rmse:.3g}" for q, r in self.errors.iterrows())
        return f"<Comparison {self.volume_id}: {self.frame.shape[0]} periods; {errs or 'nothing to compare'}>"


def compare(result: VolumeResult, metrics: "pd.DataFrame", volume_id: Optional[str] = None) -> Comparison:
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

    A measured datapoint stamped ``T`` covers the period from ``T``; BurstBalance is taken as
    the balance at ``T`` (AWS does not say when in the period it samples), so the simulated
    balance compared is the one at the start of the steps. Periods outside the simulated run
    are left out.
    """
    import pandas as pd

    check_metrics(metrics)
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

    def measured(metric: str, stat: str) -> np.ndarray:
        rows = mine[(mine["metric"] == metric) & (mine["stat"] == stat)]
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
    return Comparison(volume_id, frame, errors)
