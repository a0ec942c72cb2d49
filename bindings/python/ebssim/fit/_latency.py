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
  json+ bins' quantiles. Several jobs: as above.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

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
    """(quantiles 0..1, latency s) to fit: printed percentiles, else the json+ bins' quantiles."""
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


def _fit_cv(qs: FloatArray, lat: FloatArray, model_q: Callable[[float, FloatArray], FloatArray]) -> Estimate:
    """The cv minimising the squared log-quantile misfit, and its jackknife standard error."""
    from scipy.optimize import minimize_scalar

    def best(sel: npt.NDArray[np.bool_]) -> float:
        def cost(cv: float) -> float:
            return float(np.sum((np.log(model_q(cv, qs[sel])) - np.log(lat[sel])) ** 2))

        r = minimize_scalar(cost, bounds=CV_RANGE, method="bounded", options={"xatol": 1e-5})
        return float(r.x)

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


def service_cv(d: DirLatency) -> Optional[Estimate]:
    """The service time's cv of one job's direction (no wait)."""
    if d.bins is not None and not d.percentiles:
        lo, hi, n = d.bins
        try:
            g = _native.fit_gamma(lo, hi, n)
        except ValueError:
            g = None
        if g is not None:
            k, sk = float(g.shape.value), float(g.shape.se)
            return Estimate(1 / math.sqrt(k), 0.5 * k**-1.5 * sk, "gamma maximum likelihood over json+ bins")
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
    """The wait's cv of one job's direction held back by a volume limit, through the model's quantiles."""
    qs, lat = _points(d, WAIT_PERCENTILES)
    if qs.size < 2:
        return None

    def q(cv: float, at: FloatArray) -> FloatArray:
        m = LatencyModel(model.read_service_s, model.write_service_s, model.read_fraction, model.service_cv, cv, cv)
        out = np.asarray(latency_quantiles([d.mean_s], [d.n], at, m, direction=direction), dtype=float)
        res: FloatArray = np.maximum(out, 1e-15)
        return res

    return _fit_cv(qs, lat, q)


def fit_latency(
    parameters: List[Parameter], notes: List[str], base: Volume, free: Sequence[JobData], held: Sequence[JobData]
) -> Dict[str, float]:
    """Estimate read/write service times, latency_cv and wait_cv; append Parameters; return Volume kwargs.

    ``free``: jobs no limit held back (demand-bound); ``held``: jobs a volume limit held back.
    """
    kw: Dict[str, float] = {}
    per_dir: Dict[str, List[Tuple[float, float, float]]] = {"read": [], "write": []}  # (service_s, n, io_bytes)
    cvs: List[Estimate] = []
    for j in free:
        for d, lat in j.latency.items():
            if d not in per_dir or lat.n <= 0:
                continue
            per_dir[d].append((lat.mean_s, lat.n, j.io_bytes))
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
        vals = np.array([s - (base.service_time_s(b, rf) - zero) for s, _, b in pts])
        n = np.array([p[1] for p in pts])
        mean = float(np.sum(vals * n) / np.sum(n))
        se = float(np.std(vals, ddof=1) / math.sqrt(vals.size)) if vals.size > 1 else None
        parameters.append(
            Parameter(
                name,
                mean * 1e3,
                None if se is None else se * 1e3,
                None,
                None,
                "ms",
                f"mean clat of {len(pts)} unthrottled {d} run(s) less the transfer term"
                + (" (standard error: their scatter)" if se is not None else " (one run: no standard error)"),
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
        cv, se = _combine(cvs)
        hows = sorted({e.how for e in cvs})
        parameters.append(
            Parameter("latency_cv", cv, _num(se), None, None, "", f"{len(cvs)} run(s): {'; '.join(hows)}")
        )
        kw["latency_cv"] = cv
    else:
        parameters.append(
            Parameter(
                "latency_cv", None, None, None, None, "", "not determined: no unthrottled run reports its latency"
            )
        )
    # The wait, through the model with the fitted service part (the volume's defaults where not fitted).
    fitted = with_latency(base, kw)
    waits: List[Estimate] = []
    edge = 0  # runs whose best cv is at an end of CV_RANGE: their percentiles fit no gamma wait
    for j in held:
        for d, lat in j.latency.items():
            if d not in ("read", "write") or lat.n <= 0:
                continue
            model = LatencyModel.of(fitted, j.io_bytes, j.read_fraction)
            e = wait_cv(lat, d, model)
            if e is not None and not CV_RANGE[0] * 1.01 < e.value < CV_RANGE[1] * 0.99:
                edge += 1
            elif e is not None:
                waits.append(e)
    if waits:
        wcv, wse = _combine(waits)
        note = f"{len(waits)} throttled run(s): model quantiles (ebssim.latency_quantiles) fitted to the percentiles"
        if not (service["read"] or service["write"]):
            note += "; service part: the type's defaults (no unthrottled run)"
        parameters.append(Parameter("wait_cv", wcv, _num(wse), None, None, "", note))
        kw["wait_cv"] = wcv
    else:
        parameters.append(
            Parameter(
                "wait_cv",
                None,
                None,
                None,
                None,
                "",
                (
                    f"not determined: the percentiles of {edge} throttled run(s) fit no gamma-spread wait "
                    f"(the best cv is at an end of {CV_RANGE[0]:g}..{CV_RANGE[1]:g})"
                    if edge
                    else "not determined: no run held back by a volume limit reports its latency percentiles"
                ),
            )
        )
        notes.append(
            "wait_cv not estimated: "
            + (
                "no throttled run's percentiles fit a gamma-spread wait"
                if edge
                else "no throttled run with latency percentiles"
            )
            + "; the volume keeps the default"
        )
    return kw


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
