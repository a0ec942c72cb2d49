"""The latency model's parameters (docs/model.md, "Latency percentiles") from fio's latency figures.

- *Service time per direction* and its spread ``latency_cv`` from the jobs no limit held back: the
  mean clat of each direction is its service time (no wait); the spread is a gamma's cv, by
  maximum likelihood over json+ bins (the core's ``fit_gamma``, standard error from the observed
  information) or, from printed percentiles, by least squares on the log quantiles of a gamma
  with the measured mean (standard error: jackknife over the percentile points), else the printed
  standard deviation over the mean. Several jobs: inverse-variance mean, its standard error at
  least their scatter over the square root of their number.
- *Wait spread* ``wait_cv`` from the jobs a volume's limit held back: the cv for which the model's
  quantiles (``ebssim.latency_quantiles`` on the job's mean clat, with the fitted service part)
  match the printed percentiles (least squares on their logs; jackknife over the points), or the
  json+ bins' quantiles. Several jobs: as above. A run whose mean is less than ``1 + MIN_WAIT``
  service times shows no wait and is not used.
- *The instance's wait spread* ``instance_wait_cv`` (the instance's ``wait_cv``), the same way
  from the jobs the instance's limits held back (the fit's forward model runs the volume on the
  instance; its ``bound`` says which limit held each phase).

Where a job's latency comes from (``_inputs``): a per-I/O clat (else lat) log gives every I/O (the
cv is the sample's standard deviation over its mean, its error batch means over consecutive
blocks and the distance to the gamma's maximum-likelihood cv on the sample counted in fio's
buckets; the mean's error batch means; quantiles are the sample's); else the report's percentiles
or json+ bins; else a clat_hist log's bins (gamma maximum likelihood); else the report's mean and
standard deviation; else an averaged log's window means (the mean only: the spread is not
determined from it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from ..instances import Instance
from ..latency import LatencyModel, latency_quantiles
from ..volumes import Volume
from . import _native
from ._inputs import DirLatency, JobData
from ._result import Parameter

FloatArray = npt.NDArray[np.float64]

#: Percentiles the service time's spread is fitted to (fio's p1 and p5 sit on the clock's
#: granularity; p99.99 on a handful of I/Os).
FIT_PERCENTILES = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9)
#: Percentiles the wait's spread is fitted to: the upper half, where the wait shows (the method of
#: docs/model.md's per-run fits of data set 05).
WAIT_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.5, 99.9)
#: Quantiles taken from json+ bins when a report prints none.
BIN_PERCENTILES = (10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9)
#: Least mean wait, as a share of the service time, whose spread a held run shows (below it the
#: model's quantiles hardly depend on the wait's cv).
MIN_WAIT = 0.1
#: Range searched for a coefficient of variation.
CV_RANGE = (0.001, 5.0)


@dataclass
class Estimate:
    value: float
    se: float
    how: str


def _combine(ests: Sequence[Estimate]) -> Tuple[float, float]:
    """Inverse-variance mean; standard error at least the scatter of the estimates / sqrt(n)."""
    v = np.array([e.value for e in ests], dtype=float)
    s = np.array([e.se for e in ests], dtype=float)
    ok = np.isfinite(s) & (s > 0)
    if ok.all():
        w = 1 / s**2
        mean = float(np.sum(v * w) / np.sum(w))
        se = float(1 / math.sqrt(float(np.sum(w))))
    else:
        mean, se = float(np.mean(v)), math.nan
    if v.size > 1:
        scatter = float(np.std(v, ddof=1)) / math.sqrt(v.size)
        se = scatter if not math.isfinite(se) else max(se, scatter)
    return mean, se


def _points(d: DirLatency, which: Sequence[float] = FIT_PERCENTILES) -> Tuple[FloatArray, FloatArray]:
    """(quantiles 0..1, latency s) to fit: a per-I/O log's sample quantiles, else the printed
    percentiles, else the json+ or clat_hist bins' quantiles."""
    if d.sample is not None and d.sample.size:
        qs: FloatArray = np.array(which, dtype=float) / 100
        return qs, np.asarray(np.quantile(d.sample, qs), dtype=float)
    if d.percentiles:
        pts = [p for p in which if p in d.percentiles]
        return np.array(pts) / 100, np.array([d.percentiles[p] for p in pts])
    if d.bins is not None:
        lo, hi, n = d.bins
        order = np.argsort(lo)
        lo, hi, n = lo[order], hi[order], n[order]
        cum = np.cumsum(n) / np.sum(n)
        at: FloatArray = np.array([p for p in BIN_PERCENTILES if p >= min(which)]) / 100
        idx = np.minimum(np.searchsorted(cum, at), lo.size - 1)
        return at, (lo[idx] + hi[idx]) / 2
    return np.zeros(0), np.zeros(0)


def _best_cv(
    qs: FloatArray, lat: FloatArray, model_q: Callable[[float, FloatArray], FloatArray], sel: npt.NDArray[np.bool_]
) -> float:
    """The cv minimising the squared log-quantile misfit over the points ``sel``."""
    from scipy.optimize import minimize_scalar

    def cost(cv: float) -> float:
        return float(np.sum((np.log(model_q(cv, qs[sel])) - np.log(lat[sel])) ** 2))

    r = minimize_scalar(cost, bounds=CV_RANGE, method="bounded", options={"xatol": 1e-5})
    return float(r.x)


def _fit_cv(qs: FloatArray, lat: FloatArray, model_q: Callable[[float, FloatArray], FloatArray]) -> Estimate:
    """The cv minimising the squared log-quantile misfit, and its jackknife standard error."""

    def best(sel: npt.NDArray[np.bool_]) -> float:
        return _best_cv(qs, lat, model_q, sel)

    n = qs.size
    full = best(np.ones(n, dtype=bool))
    if n < 3:
        return Estimate(full, math.nan, "log-quantile least squares")
    loo = np.array([best(np.arange(n) != i) for i in range(n)])
    se = math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))
    return Estimate(full, se, "log-quantile least squares, jackknife over the percentiles")


def _gamma_ppf(mean: float) -> Callable[[float, FloatArray], FloatArray]:
    from scipy.stats import gamma

    def q(cv: float, qs: FloatArray) -> FloatArray:
        k = 1 / cv**2
        out: FloatArray = np.maximum(np.asarray(gamma.ppf(qs, k, scale=mean / k), dtype=float), 1e-15)
        return out

    return q


#: Consecutive blocks a per-I/O sample is cut into for standard errors (batch means: blocks in
#: completion order, so that latencies correlated over less than a block count once).
BATCHES = 20
#: Fewest I/Os per block.
MIN_BATCH = 30


def batch_se(x: FloatArray, stat: Callable[[FloatArray], float]) -> float:
    """Standard error of ``stat`` over a sample in completion order, by batch means (NaN: too few I/Os)."""
    b = min(BATCHES, x.size // MIN_BATCH)
    if b < 2:
        return math.nan
    vals = np.array([stat(part) for part in np.array_split(x, b)], dtype=float)
    return float(np.std(vals, ddof=1) / math.sqrt(b))


def _cv(x: FloatArray) -> float:
    return float(np.std(x, ddof=1) / np.mean(x))


def sample_bins(x: FloatArray) -> Tuple[FloatArray, FloatArray, FloatArray]:
    """A per-I/O sample (s) counted in fio's latency buckets (as json+ bins and clat_hist logs are)."""
    from ..fio import hist_buckets

    b = hist_buckets(0)
    lower = b["lower_ns"].to_numpy(dtype=float)
    upper = b["upper_ns"].to_numpy(dtype=float)
    idx = np.clip(np.searchsorted(lower, np.floor(x * 1e9 + 0.5), side="right") - 1, 0, lower.size - 1)
    n = np.bincount(idx, minlength=lower.size).astype(float)
    keep = n > 0
    return lower[keep] / 1e9, upper[keep] / 1e9, n[keep]


def _ml_cv(bins: Tuple[FloatArray, FloatArray, FloatArray]) -> Optional[Tuple[float, float]]:
    """(cv, se) of the gamma fitted by maximum likelihood to bins (the core's ``fit_gamma``)."""
    lo, hi, n = bins
    try:
        g = _native.fit_gamma(lo, hi, n)
    except ValueError:
        return None
    k, sk = float(g.shape.value), float(g.shape.se)
    if not (math.isfinite(k) and k > 0):
        return None
    return 1 / math.sqrt(k), 0.5 * k**-1.5 * sk


def service_cv(d: DirLatency) -> Optional[Estimate]:
    """The service time's cv of one job's direction (no wait)."""
    if d.sample is not None and d.sample.size >= 2:
        # Every I/O's latency: the cv is the sample's (what fio's stdev / mean of the same I/Os
        # gives). Its error: batch means, and the distance to the gamma's maximum-likelihood cv on
        # the sample counted in fio's buckets (how far the data are from a gamma).
        cv = _cv(d.sample)
        se_b = batch_se(d.sample, _cv)
        ml = _ml_cv(sample_bins(d.sample))
        dist = abs(cv - ml[0]) if ml is not None else math.nan
        parts = [x for x in (se_b, dist) if math.isfinite(x)]
        se = math.sqrt(sum(x * x for x in parts)) if parts else math.nan
        return Estimate(
            cv, se, f"{d.source}: standard deviation / mean; error: batch means and the distance to the gamma ML fit"
        )
    if d.bins is not None and not d.percentiles:
        lo, hi, n = d.bins
        try:
            g = _native.fit_gamma(lo, hi, n)
        except ValueError:
            g = None
        if g is not None:
            k, sk = float(g.shape.value), float(g.shape.se)
            what = "json+ bins" if d.source == "report" else d.source
            return Estimate(1 / math.sqrt(k), 0.5 * k**-1.5 * sk, f"gamma maximum likelihood over {what}")
    qs, lat = _points(d)
    by_q = _fit_cv(qs, lat, _gamma_ppf(d.mean_s)) if qs.size >= 2 else None
    if math.isfinite(d.std_s) and d.std_s > 0 and d.mean_s > 0:
        # The moments of all the run's I/Os: their sampling error is negligible; what is uncertain
        # is the gamma's shape, so the standard error is the distance to the percentiles' fit.
        cv = d.std_s / d.mean_s
        if by_q is None:
            return Estimate(cv, math.nan, "standard deviation / mean")
        return Estimate(cv, abs(cv - by_q.value), "standard deviation / mean, error: distance to the percentiles' fit")
    return by_q


def wait_cv(d: DirLatency, direction: str, model: LatencyModel) -> Optional[Estimate]:
    """The wait's cv of one job's direction held back by a limit, through the model's quantiles.

    A per-I/O sample's error adds, to the jackknife over the percentiles, the batch means of the
    cvs fitted to consecutive blocks of it (each at its own mean)."""
    qs, lat = _points(d, WAIT_PERCENTILES)
    if qs.size < 2:
        return None

    def model_q(mean_s: float, n: float) -> Callable[[float, FloatArray], FloatArray]:
        def q(cv: float, at: FloatArray) -> FloatArray:
            m = LatencyModel(model.read_service_s, model.write_service_s, model.read_fraction, model.service_cv, cv, cv)
            out = np.asarray(latency_quantiles([mean_s], [n], at, m, direction=direction), dtype=float)
            res: FloatArray = np.maximum(out, 1e-15)
            return res

        return q

    est = _fit_cv(qs, lat, model_q(d.mean_s, d.n))
    x = d.sample
    b = 0 if x is None else min(BATCHES, x.size // (MIN_BATCH * 10))
    if x is None or b < 2:
        return est
    vals = []
    for part in np.array_split(x, b):
        pq = np.asarray(np.quantile(part, qs), dtype=float)
        vals.append(_best_cv(qs, pq, model_q(float(np.mean(part)), float(part.size)), np.ones(qs.size, dtype=bool)))
    se_b = float(np.std(vals, ddof=1) / math.sqrt(b))
    se = math.sqrt(se_b**2 + (est.se**2 if math.isfinite(est.se) else 0.0))
    return Estimate(est.value, se, est.how + "; batch means over the per-I/O sample")


def fit_latency(
    parameters: List[Parameter],
    notes: List[str],
    base: Volume,
    free: Sequence[JobData],
    held: Sequence[JobData],
    *,
    instance: Optional[Instance] = None,
    by_instance: Sequence[JobData] = (),
) -> Dict[str, float]:
    """Estimate read/write service times, latency_cv, wait_cv and (with an instance) the
    instance's wait cv; append Parameters; return Volume kwargs.

    ``free``: jobs no limit held back (demand-bound); ``held``: jobs a volume limit held back;
    ``by_instance``: jobs the instance's limits held back.
    """
    kw: Dict[str, float] = {}
    per_dir: Dict[str, List[Tuple[float, float, float, float]]] = {"read": [], "write": []}  # service_s, n, bytes, se
    cvs: List[Estimate] = []
    mean_only = sorted(
        {lat.source for j in [*free, *held, *by_instance] for lat in j.latency.values() if lat.mean_only}
    )
    for j in free:
        for d, lat in j.latency.items():
            if d not in per_dir or lat.n <= 0:
                continue
            own_se = lat.mean_se
            if not math.isfinite(own_se) and lat.sample is not None:
                own_se = batch_se(lat.sample, lambda x: float(np.mean(x)))
            per_dir[d].append((lat.mean_s, lat.n, j.io_bytes, own_se))
            e = service_cv(lat)
            if e is not None:
                cvs.append(e)
    service: Dict[str, Optional[float]] = {}
    for d, pts in per_dir.items():
        name = f"{d}_latency_ms"
        if not pts:
            parameters.append(
                Parameter(name, None, None, None, None, "ms", f"not determined: no {d} ran below every limit")
            )
            service[d] = None
            continue
        # The volume's latency is the 0-byte intercept: each run's transfer term (the core's service
        # time of its size less that of 0 bytes) comes off.
        rf = 1.0 if d == "read" else 0.0
        zero = base.service_time_s(0, rf)
        vals = np.array([s - (base.service_time_s(b, rf) - zero) for s, _, b, _ in pts])
        n = np.array([p[1] for p in pts])
        own = np.array([p[3] for p in pts])  # each run's own standard error (per-I/O or averaged logs)
        mean = float(np.sum(vals * n) / np.sum(n))
        se: Optional[float] = None
        how = " (one run: no standard error)"
        if np.isfinite(own).all():
            se = float(math.sqrt(float(np.sum((n / np.sum(n)) ** 2 * own**2))))
            how = " (standard error: the logs' batch means)"
        if vals.size > 1:
            scatter = float(np.std(vals, ddof=1) / math.sqrt(vals.size))
            se = scatter if se is None else max(se, scatter)
            how = (
                " (standard error: their scatter, at least the logs' own)"
                if np.isfinite(own).all()
                else (" (standard error: their scatter)")
            )
        parameters.append(
            Parameter(
                name,
                mean * 1e3,
                None if se is None else se * 1e3,
                None,
                None,
                "ms",
                f"mean clat of {len(pts)} unthrottled {d} run(s) less the transfer term" + how,
            )
        )
        service[d] = mean
        if mean > 0:
            kw[name] = mean * 1e3
    if base.latency_ms is not None and not (service["read"] and service["write"]):
        # One direction: the service-time line's intercept (fitted over the I/O sizes) already holds it
        # and applies to both; the volume keeps that single latency_ms.
        kw.pop("read_latency_ms", None)
        kw.pop("write_latency_ms", None)
    if cvs:
        cv, cse = _combine(cvs)
        hows = sorted({e.how for e in cvs})
        parameters.append(
            Parameter("latency_cv", cv, _num(cse), None, None, "", f"{len(cvs)} run(s): {'; '.join(hows)}")
        )
        kw["latency_cv"] = cv
    else:
        parameters.append(
            Parameter(
                "latency_cv",
                None,
                None,
                None,
                None,
                "",
                "not determined: no unthrottled run reports its latency"
                + ("'s spread" + _from_means() if mean_only else ""),
            )
        )
    # The wait, through the model with the fitted service part (the volume's defaults where not fitted).
    fitted = with_latency(base, kw)
    w = _wait_parameter("wait_cv", "a volume limit", held, fitted, None, bool(service["read"] or service["write"]))
    parameters.append(w)
    if w.value is not None:
        kw["wait_cv"] = w.value
    else:
        notes.append(f"wait_cv not estimated: {w.note.removeprefix('not determined: ')}; the volume keeps the default")
    if instance is not None:
        iw = _wait_parameter(
            "instance_wait_cv",
            "the instance's limits",
            by_instance,
            fitted,
            instance,
            bool(service["read"] or service["write"]),
        )
        parameters.append(iw)
        if iw.value is None:
            notes.append(
                f"instance_wait_cv not estimated: {iw.note.removeprefix('not determined: ')}; the instance keeps "
                "its default"
            )
    if mean_only:
        notes.append(f"latency from {', '.join(mean_only)}s: the mean only{_from_means()}")
    return kw


def _from_means() -> str:
    return " (averaged logs, log_avg_msec > 0, give each window's mean: the spread is not determined from them)"


def _wait_parameter(
    name: str, what: str, jobs: Sequence[JobData], fitted: Volume, instance: Optional[Instance], service_fitted: bool
) -> Parameter:
    """The wait's cv under ``what`` from ``jobs`` it held back, through the model's quantiles."""
    waits: List[Estimate] = []
    edge = 0  # runs whose best cv is at an end of CV_RANGE: their percentiles fit no gamma wait
    means = 0  # runs whose latency is a mean only
    nowait = 0  # runs whose mean latency is hardly above the service time
    for j in jobs:
        for d, lat in j.latency.items():
            if d not in ("read", "write") or lat.n <= 0:
                continue
            if lat.mean_only:
                means += 1
                continue
            model = LatencyModel.of(fitted, j.io_bytes, j.read_fraction, instance=instance)
            if lat.mean_s < (1 + MIN_WAIT) * model.mean_service_s:
                nowait += 1  # the wait is too small to show its spread: any cv fits alike
                continue
            e = wait_cv(lat, d, model)
            if e is not None and not CV_RANGE[0] * 1.01 < e.value < CV_RANGE[1] * 0.99:
                edge += 1
            elif e is not None:
                waits.append(e)
    if waits:
        wcv, wse = _combine(waits)
        srcs = sorted({lat.source for j in jobs for lat in j.latency.values() if not lat.mean_only})
        note = (
            f"{len(waits)} run(s) held back by {what}: model quantiles (ebssim.latency_quantiles) fitted to the "
            f"percentiles ({', '.join(srcs)})"
        )
        if not service_fitted:
            note += "; service part: the type's defaults (no unthrottled run)"
        return Parameter(name, wcv, _num(wse), None, None, "", note)
    if edge:
        why = (
            f"not determined: the percentiles of {edge} run(s) held back by {what} fit no gamma-spread wait "
            f"(the best cv is at an end of {CV_RANGE[0]:g}..{CV_RANGE[1]:g})"
        )
    elif nowait:
        why = (
            f"not determined: the mean latency of the {nowait} run(s) held back by {what} is less than "
            f"{1 + MIN_WAIT:g} x the service time (the volume's, fitted or the type's): no wait shows its spread"
        )
    elif means:
        why = f"not determined: the {means} run(s) held back by {what} give their mean latency only" + _from_means()
    else:
        why = f"not determined: no run held back by {what} reports its latency percentiles"
    return Parameter(name, None, None, None, None, "", why)


def with_latency(v: Volume, kw: Dict[str, float]) -> Volume:
    """``v`` with these latency parameters (read/write latencies replace a single ``latency_ms``)."""
    if not kw:
        return v
    if "read_latency_ms" in kw or "write_latency_ms" in kw:
        rl = kw.get("read_latency_ms", v.service.read_latency_ms)
        wl = kw.get("write_latency_ms", v.service.write_latency_ms)
        both: Dict[str, Any] = {**kw, "read_latency_ms": rl, "write_latency_ms": wl, "latency_ms": None}
        return dataclasses.replace(v, **both)
    same: Dict[str, Any] = dict(kw)
    return dataclasses.replace(v, **same)


def _num(x: float) -> Optional[float]:
    return x if math.isfinite(x) else None
