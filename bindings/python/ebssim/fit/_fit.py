"""The fit: levels, then (for a declared type) the volume's parameters, the service time and its spread."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
import numpy.typing as npt

from ..instances import Instance
from ..instances import instance as _instance
from ..stripes import StripedSet, striped
from ..volumes import VOLUME_TYPES, Volume, volume_types
from . import _native, _range, _rules
from ._inputs import Capture, JobData, Source, load
from ._latency import fit_latency, with_latency
from ._levels import MIN_RELATIVE_CHANGE, Level, first_drop, fit_levels, overshoot_transients, window_weights
from ._result import Fit, Parameter, Phase

FloatArray = npt.NDArray[np.float64]

#: What :func:`fit` accepts for ``rate_limits``.
RATE_LIMITS = ("workload", "volume")
#: Most engine steps one forward run takes (the step grows for long captures).
MAX_FIT_STEPS = 200_000


def _vol(vtype: str, size: float, **kw: Any) -> Volume:
    return Volume(vtype, size, **kw)


def _counted(vol: Volume, job: JobData) -> float:
    return vol.counted_ops_per_io(job.io_bytes, "sequential" if job.sequential else "random")


def _phase_tuples(
    capture: Capture, rate_limits: str, volume: Volume
) -> Tuple[List[_native.PhaseTuple], List[List[JobData]]]:
    """One engine phase per fio phase (concurrent jobs together), each asking ``volume`` for its
    jobs' demand (:meth:`JobData.demand_iops`)."""
    groups: Dict[Tuple[int, int], List[JobData]] = {}
    for j in capture.jobs:
        groups.setdefault((j.invocation, j.phase), []).append(j)
    phases: List[_native.PhaseTuple] = []
    members: List[List[JobData]] = []
    for key in sorted(groups, key=lambda k: min(j.start_s for j in groups[k])):
        js = groups[key]
        asks = [j.demand_iops(volume) for j in js]
        demand = sum(asks) if rate_limits == "workload" else math.inf
        # The phase's mean I/O: weighted by what each job asks for when every one is known (its
        # bytes per second are then the jobs' sum), else alike.
        known = rate_limits == "workload" and all(math.isfinite(a) and a > 0 for a in asks)
        weights = asks if known else [1.0 for _ in js]
        io_bytes = float(np.average([j.io_bytes for j in js], weights=weights))
        rf = float(np.average([j.read_fraction for j in js], weights=weights))
        phases.append(
            (min(j.start_s for j in js), max(j.end_s for j in js), io_bytes, rf, all(j.sequential for j in js), demand)
        )
        members.append(js)
    return phases, members


def _observed(capture: Capture, members: List[List[JobData]], weights: List[FloatArray]) -> Tuple[FloatArray, ...]:
    """Windows of the volume's total rate: each phase on its first job's windows."""
    wmap = {id(j): w for j, w in zip(capture.jobs, weights)}
    t0s, t1s, vs, ws = [], [], [], []
    for js in members:
        first = js[0]
        total = first.iops.copy()
        for other in js[1:]:
            edges = np.concatenate([[other.t0[0]], other.t1])
            cum = np.concatenate([[0.0], np.cumsum(other.iops * (other.t1 - other.t0))])
            total += (np.interp(first.t1, edges, cum) - np.interp(first.t0, edges, cum)) / (first.t1 - first.t0)
        t0s.append(first.t0)
        t1s.append(first.t1)
        vs.append(total)
        ws.append(wmap[id(first)])
    return np.concatenate(t0s), np.concatenate(t1s), np.concatenate(vs), np.concatenate(ws)


def _dt(capture: Capture) -> float:
    shortest = min(float(np.min(j.t1 - j.t0)) for j in capture.jobs)
    return float(min(1.0, max(1e-3, shortest / 10, capture.end_s / MAX_FIT_STEPS)))


def fit(
    inputs: Sequence[Source],
    *,
    type: Optional[str] = None,
    size_gib: Optional[float] = None,
    instance: Optional[str] = None,
    rate_limits: str = "workload",
    bin_s: Optional[float] = None,
    iops: Optional[float] = None,
    members: Optional[int] = None,
    chunk_kib: Optional[float] = None,
) -> Fit:
    """Fit the model to what fio wrote.

    Parameters
    ----------
    inputs : paths, directories, :class:`ebssim.fio.FioResult`, :class:`ebssim.fio.FioJobSet` or read_log frames
        fio job files, JSON/json+ reports and iops/bw logs (windowed or per-I/O), or directories
        holding them (docs/fit.md, *Inputs*).
    type : str, optional
        The volume's type (gp2, gp3, io1, io2, st1, sc1, standard). Without it, the fit reports
        the levels and change points only, and which types and sizes they are consistent with.
    size_gib : float, optional
        The volume's size when known (it is then not fitted).
    instance : str, optional
        The EC2 instance type, for :meth:`Fit.predict` (its limits are not fitted).
    rate_limits : {"workload", "volume"}
        What fio's ``rate_iops``/``rate`` options are. ``"workload"`` (default, a real capture):
        they cap the jobs' demand. ``"volume"``: they stand in for the volume's limits (ebssim's
        validation, which imitates EBS with fio's throttles), so every job asks for more.
    bin_s : float, optional
        Width of the bins per-I/O logs are counted in (default 0.1 s).
    iops : float, optional
        The provisioned IOPS of a gp3, io1 or io2 when known (it is then not fitted, and a job
        measured more than 3 % below it, and below the throughput, is taken to be demand-bound).
        On a striped set, a member's.
    members : int, optional
        The capture is of a striped set (md or LVM RAID-0) of ``members`` alike volumes of
        ``type``: each job's I/Os are split into the members' I/Os by the set's rule
        (:meth:`ebssim.StripedSet.split`), so the levels are fitted as each member's and the
        fitted volume is a member; :attr:`Fit.stripe` is the set (docs/fit.md, *Striped sets*).
    chunk_kib : float, optional
        The set's chunk in KiB (default 512, mdadm's); only with ``members``.

    Returns
    -------
    Fit

    Raises
    ------
    ValueError
        Input that cannot be fitted (too short, NaN or negative values, times going back, logs
        of several jobs in one file, a log whose units cannot be told), naming the file and the
        rule.
    """
    if type is not None and type not in VOLUME_TYPES:
        raise ValueError(f"type={type!r} is not an EBS volume type; expected one of {', '.join(VOLUME_TYPES)}")
    if rate_limits not in RATE_LIMITS:
        raise ValueError(f"rate_limits={rate_limits!r} must be one of {', '.join(RATE_LIMITS)}")
    if size_gib is not None and not (isinstance(size_gib, (int, float)) and math.isfinite(size_gib) and size_gib > 0):
        raise ValueError(f"size_gib={size_gib!r} must be a positive, finite number of GiB")
    if bin_s is not None and not (isinstance(bin_s, (int, float)) and math.isfinite(bin_s) and bin_s > 0):
        raise ValueError(f"bin_s={bin_s!r} must be a positive, finite number of seconds")
    if instance is not None:
        _instance(instance)  # a clear error for an unknown name, now rather than at predict()
    if iops is not None and not (isinstance(iops, (int, float)) and math.isfinite(iops) and iops > 0):
        raise ValueError(f"iops={iops!r} must be a positive, finite number of IOPS")
    if iops is not None and (type is None or volume_types()[type].has_bucket):
        raise ValueError(f"iops={iops!r} is for gp3, io1 or io2 (got type={type!r})")
    probe = _stripe_probe(type, members, chunk_kib)
    capture = load(inputs, bin_s=bin_s)
    if probe is not None:
        _to_members(capture, probe)
    summary = [j for j in capture.jobs if j.summary]
    if summary and len(summary) < len(capture.jobs):
        raise ValueError(
            f"job {summary[0].name!r} ({summary[0].source}) has no rate log while others have one: give every "
            "job's iops/bw log, or none (a fit of the reports' summaries)"
        )
    if summary:
        # Reports only: each job one level at its mean IOPS (no change points can be seen).
        levels = [Level(j, j.start_s, j.end_s, float(j.iops[0]), math.nan, math.nan, math.nan, 1) for j in summary]
        lssr, ldof = 0.0, 0
        capture.notes.append("no rate logs: each job is one level at its report's mean IOPS")
    else:
        levels, lssr, ldof = fit_levels(capture)
    weights = window_weights(capture, levels)
    result = Fit(
        capture=capture,
        levels=levels,
        volume_type=type,
        instance=instance,
        rate_limits=rate_limits,
        levels_ssr=lssr,
        levels_dof=ldof,
    )
    result.notes.extend(capture.notes)
    result.phases = [
        Phase(lv.job.name, lv.start_s, lv.end_s, lv.iops, lv.throughput_mib_s, None, lv.iops_se) for lv in levels
    ]
    result.levels_are_caps = rate_limits == "workload" and all(_at_own_cap(lv) for lv in levels)
    if type is None:
        result.consistent = _consistent_caps(capture) if result.levels_are_caps else _consistent(levels, rate_limits)
        _service_time(result, capture, None, [j for j in capture.jobs if _demand_bound_by_fio(j, levels)])
        return result
    if result.levels_are_caps and iops is None and (size_gib is None or not volume_types()[type].has_bucket):
        _fit_caps(result, capture, levels, weights, type, size_gib)
    elif volume_types()[type].has_bucket:
        _fit_bucket(result, capture, levels, weights, type, size_gib, rate_limits)
    else:
        _fit_provisioned(result, capture, levels, weights, type, size_gib, rate_limits, iops)
    if probe is not None and result.volume is not None:
        result.stripe = striped([result.volume] * probe.n, probe.chunk_kib)
    return result


def _stripe_probe(vtype: Optional[str], members: Optional[int], chunk_kib: Optional[float]) -> Optional[StripedSet]:
    """The striped set the capture was taken on, of probe members (only its N and chunk are used)."""
    if members is None:
        if chunk_kib is not None:
            raise ValueError(f"chunk_kib={chunk_kib!r} is for a striped set: give members=N too")
        return None
    if isinstance(members, bool) or not isinstance(members, int) or members < 1:
        raise ValueError(f"members={members!r} must be a whole number >= 1 (the striped set's volumes)")
    if vtype is None:
        raise ValueError(f"members={members!r}: a striped set's fit needs its members' type=")
    # Only the set's N and chunk are used (the split does not depend on the members' type): a gp3
    # with its defaults stands in for the members, whatever their type (io1/io2 need IOPS to exist).
    probe = Volume("gp3", volume_types()["gp3"].min_size_gib)
    if chunk_kib is None:
        return striped([probe] * members)
    return striped([probe] * members, chunk_kib)


def _to_members(capture: Capture, stripe: StripedSet) -> None:
    """Each job as one member sees it: the set's I/Os split by the set's rule (``StripedSet.split``,
    the C++ core's ``stripe_split``; offsets aligned to the I/O size, fio's ``blockalign``), each
    member serving ``member_share`` pieces of ``piece_bytes`` per set I/O. Latencies stay: a set
    I/O's pieces run in parallel on alike members (Little's law: in flight and IOPS scale alike)."""
    for job in capture.jobs:
        fj = job.fio_job
        if fj is not None and fj.thinktime > 0:
            raise ValueError(
                f"job {job.name!r} ({job.source}) has thinktime: a striped set's fit reads jobs that ask for more "
                "than the set gives (a closed loop with think time on a set is not modelled by the fit yet)"
            )
        s = stripe.split(job.io_bytes)
        job.iops = job.iops * s.member_share
        job.rate_iops = job.rate_iops * s.member_share
        job.io_bytes = s.piece_bytes
    capture.notes.append(
        f"striped set of {stripe.n} members, {stripe.chunk_kib:g} KiB chunks: levels and phases are each member's "
        "(the set's I/Os split by the set's rule)"
    )


#: A level within this fraction of its job's rate cap is at the cap.
CAP_TOLERANCE = 0.02


def _at_own_cap(lv: Level) -> bool:
    """The level is its job's own fio rate cap (``rate_iops``/``rate``)."""
    cap = lv.job.rate_iops
    return math.isfinite(cap) and abs(lv.iops - cap) <= CAP_TOLERANCE * cap


def _demand_bound_by_fio(job: JobData, levels: List[Level]) -> bool:
    """A job held by its own rate cap: every level of it at the cap. Its completion latency is its
    service time: with ``rate_limits="workload"`` nothing else held it back, and with ``"volume"``
    fio's throttle holds its I/Os before they are submitted (the latency holds no wait)."""
    mine = [lv for lv in levels if lv.job is job]
    return bool(mine) and all(_at_own_cap(lv) for lv in mine)


def _unqueued(capture: Capture, levels: List[Level], rate_limits: str) -> List[JobData]:
    """With ``rate_limits="volume"``, the jobs held at their own caps: the caps stand for the volume's
    limits, but their latency is the service time alone (:func:`_demand_bound_by_fio`), so the
    service time and its spread are fitted from them, and no wait."""
    if rate_limits != "volume":
        return []
    return [j for j in capture.jobs if _demand_bound_by_fio(j, levels)]


def _consistent_caps(capture: Capture) -> List[Dict[str, Any]]:
    """Every level is its job's own cap (no type declared): per type, the volumes that serve the caps."""
    dt = _dt(capture)
    out: List[Dict[str, Any]] = []
    for t in VOLUME_TYPES:
        rng = _range.volume_range(t, lambda v: _phase_tuples(capture, "workload", v)[0], dt, balance=False)
        if rng is not None:
            out.append(rng)
    return out


def _fit_caps(
    result: Fit,
    capture: Capture,
    levels: List[Level],
    weights: List[FloatArray],
    vtype: str,
    size_gib: Optional[float],
) -> None:
    """Every level is its job's own rate cap: not one volume but the range of ``vtype``'s volumes
    whose limits do not bind below the caps (``_range``). A type with a bucket: the size is not
    determined (``Fit.volume`` None unless the size is given, when the ordinary fit runs); gp3,
    io1, io2: ``Fit.volume`` is the least configuration that serves the caps."""
    dt = _dt(capture)
    info = volume_types()[vtype]
    rng = _range.volume_range(vtype, lambda v: _phase_tuples(capture, "workload", v)[0], dt)
    if rng is None:
        result.notes.append(
            f"no {vtype} serves the jobs' caps: the capture reached rates that no {vtype} gives (another type?)"
        )
        result.parameters.append(
            Parameter("size_gib", None, None, None, None, "GiB", f"not determined: no {vtype} fits")
        )
        return
    result.volume_range = rng
    for p in result.phases:
        p.bound = "demand"
    every_job = list(capture.jobs)
    why = "not determined: the levels are the jobs' own rate caps"
    if info.has_bucket:
        bal = rng["min_burst_balance_pct"]
        result.parameters.append(
            Parameter(
                "size_gib",
                None,
                None,
                rng["min_size_gib"],
                rng["max_size_gib"],
                "GiB",
                f"{why}: every size from {rng['min_size_gib']:,g} to {rng['max_size_gib']:,g} GiB serves them",
            )
        )
        result.parameters.append(
            Parameter(
                "burst_balance_pct",
                None,
                None,
                bal,
                100.0,
                "%",
                f"{why}: at least {bal:.4g} %"
                + (
                    f" on a {rng['min_size_gib']:g} GiB volume, less on larger ones"
                    if _rules.size_matters(vtype)
                    else ""
                ),
            )
        )
        result.notes.append(
            f"the levels are the jobs' own rate caps: no {vtype} size is determined; give the size (--size) to fit "
            "the starting balance"
        )
        _service_time(result, capture, vtype, every_job)
        return
    iops_p = Parameter(
        "iops",
        None,
        None,
        rng["min_iops"],
        rng["max_iops"],
        "IOPS",
        f"{why}: provisioned IOPS from {rng['min_iops']:,g}",
    )
    result.parameters.append(iops_p)
    kw: Dict[str, Any] = {"iops": rng["iops_with_min_throughput"] or rng["min_iops"]}
    if rng["min_throughput_mib_s"] is not None:
        result.parameters.append(
            Parameter(
                "throughput_mib_s",
                None,
                None,
                rng["min_throughput_mib_s"],
                rng["max_throughput_mib_s"],
                "MiB/s",
                f"{why}: provisioned throughput from {rng['min_throughput_mib_s']:,g} MiB/s",
            )
        )
        kw["throughput_mib_s"] = rng["min_throughput_mib_s"]
    if size_gib is None:
        size = float(rng["min_size_gib"])
        result.parameters.append(
            Parameter(
                "size_gib",
                None,
                None,
                size,
                rng["max_size_gib"],
                "GiB",
                f"not determined (performance does not depend on it): at least {size:g} GiB; the volume uses it",
            )
        )
    else:
        size = float(size_gib)
        result.parameters.append(Parameter("size_gib", size, None, None, None, "GiB", "given"))
    result.notes.append(
        f"the levels are the jobs' own rate caps: the volume is the least {vtype} that serves them "
        f"({', '.join(f'{k}={v:g}' for k, v in kw.items())})"
    )
    st = _service_time(result, capture, vtype, every_job)
    try:
        result.volume = _vol(vtype, size, **kw, **st)
    except ValueError as exc:
        raise ValueError(
            f"size_gib={size_gib:g}: the jobs' caps need {vtype} with at least {kw['iops']:g} IOPS "
            f"({rng['min_size_gib']:g} GiB or more): {exc}"
        ) from None
    phases, members = _phase_tuples(capture, "workload", result.volume)
    t0, t1, value, w = _observed(capture, members, weights)
    sim = _native.simulate_windows(result.volume, phases, t0, t1, dt)
    pred = np.asarray(sim.predicted, dtype=float)
    result.predicted = (t0, t1, value, pred)
    result.ssr = float(np.sum(w * (pred - value) ** 2))
    result.dof = int(value.size)
    result.dt_s = dt
    result.engine_phases = phases
    _latency_step(result, capture, members, ["demand"] * len(members))


def _consistent(levels: List[Level], rate_limits: str) -> List[Dict[str, Any]]:
    """Which EBS types and sizes the levels are consistent with (no type declared).

    Every rate and range is the core's: a bucket type's burst and baseline at a candidate size,
    its baseline per GiB, its size range."""
    out: List[Dict[str, Any]] = []
    drop = first_drop(levels)
    top = max(levels, key=lambda lv: lv.iops)
    gp2v = _rules.at("gp2")
    burst = _rules.at("gp2", volume_types()["gp2"].min_size_gib).max_iops  # a gp2 that bursts
    if drop is not None:
        hi, lo = drop
        for t in _rules.bucket_types():
            out.extend(_consistent_bucket(t, hi, lo))
        out.append({"type": "gp3", "size_gib": None, "why": "no: gp3, io1 and io2 have no burst bucket, the rate fell"})
    else:
        c = top.iops * _counted(gp2v, top.job)
        if c <= burst * 1.03:
            why = f"no cliff in the capture: any gp2 whose bucket lasted it ({c:.0f} IOPS)"
        else:
            least = _rules.smallest_size_with_baseline("gp2", c)
            why = (
                f"{c:.0f} IOPS: a gp2 of at least {least:.0f} GiB (no burst)"
                if least is not None
                else f"no: {c:.0f} IOPS is above every gp2's baseline"
                f" ({_rules.at('gp2', volume_types()['gp2'].max_size_gib).baseline_iops:,.0f})"
            )
        out.append({"type": "gp2", "size_gib": None, "why": why})
        gp3_least = _rules.iops_range("gp3")
        if gp3_least is not None and c >= gp3_least[0] * 0.97:
            out.append(
                {"type": "gp3", "size_gib": None, "why": f"provisioned {c:.0f} IOPS (or more, if demand held it)"}
            )
    del rate_limits
    return out


def _consistent_bucket(vtype: str, hi: Level, lo: Level) -> List[Dict[str, Any]]:
    """A bucket type the fall from ``hi`` to ``lo`` fits: its burst then its baseline, in the unit
    its bucket counts (operations for I/O credits, MiB/s for throughput credits)."""
    info = volume_types()[vtype]
    if info.bucket == "throughput_credits":
        mib_hi, mib_lo = hi.throughput_mib_s, lo.throughput_mib_s
        size = _rules.size_for_baseline(vtype, mib_lo, throughput=True)
        if size is None or not info.min_size_gib <= size <= info.max_size_gib:
            return []
        at_size = _rules.at(vtype, float(round(size)))
        if abs(at_size.max_throughput_mib_s - mib_hi) > 0.05 * mib_hi:
            return []
        return [{"type": vtype, "size_gib": round(size), "why": f"{mib_hi:.1f} then {mib_lo:.1f} MiB/s"}]
    probe = _rules.at(vtype)
    c_hi, c_lo = hi.iops * _counted(probe, hi.job), lo.iops * _counted(probe, lo.job)
    if not _rules.size_matters(vtype):
        # Every size performs alike (standard): the burst and the baseline, not the size, are seen.
        base, burst = probe.baseline_iops, probe.max_iops
        if abs(c_hi - burst) > 0.03 * burst or abs(c_lo - base) > 0.03 * base:
            return []
        return [
            {
                "type": vtype,
                "size_gib": None,
                "why": f"bursts at {c_hi:.0f} ~ {burst:,.0f} IOPS, then {c_lo:.0f} ~ {base:,.0f} IOPS: any size "
                f"from {info.min_size_gib:g} to {info.max_size_gib:g} GiB",
            }
        ]
    smallest = _rules.at(vtype, info.min_size_gib)
    floor, burst = smallest.baseline_iops, smallest.max_iops
    per_gib = _rules.per_gib(vtype)
    if per_gib is None or abs(c_hi - burst) > 0.03 * burst or not floor <= c_lo < burst:
        return []
    size = _rules.size_for_baseline(vtype, c_lo)
    above = c_lo > floor * 1.02
    return [
        {
            "type": vtype,
            "size_gib": round(size) if above and size is not None else None,
            "why": f"bursts at {c_hi:.0f} ~ {burst:,.0f} IOPS, then {c_lo:.0f} IOPS = {per_gib:g} IOPS/GiB x size"
            + (
                ""
                if above
                else f" (the {floor:.0f} IOPS floor: any size up to {_rules.largest_size_at_floor(vtype):g} GiB)"
            ),
        }
    ]


def _fit_bucket(
    result: Fit,
    capture: Capture,
    levels: List[Level],
    weights: List[FloatArray],
    vtype: str,
    size_gib: Optional[float],
    rate_limits: str,
) -> None:
    probe = _rules.at(vtype, size_gib)
    phases, members = _phase_tuples(capture, rate_limits, probe)
    t0, t1, value, w = _observed(capture, members, weights)
    info = volume_types()[vtype]
    # A type whose every size performs alike (standard: a flat baseline and burst) cannot show its
    # size: the fit runs at the console's size and reports the type's whole range.
    unseen = size_gib is None and not _rules.size_matters(vtype)
    known = info.default_size_gib if unseen else size_gib
    drop = first_drop(levels)
    size_guess: Optional[float] = known
    bal_guess = 100.0
    if drop is not None:
        hi, lo = drop
        if size_guess is None:
            # The baseline in the bucket's counted operations (1 MiB ones on HDD) gives the size.
            by_baseline = _rules.size_for_baseline(vtype, lo.iops * _counted(probe, lo.job))
            size_guess = max(info.min_size_gib, by_baseline if by_baseline is not None else info.default_size_gib)
        sv = _rules.at(vtype, float(round(size_guess)))
        drain = hi.iops * _counted(sv, hi.job) - sv.baseline_iops
        if drain > 0 and sv.credit_capacity > 0:
            # The earliest cliff the data allow: the end of the last window at the high level.
            mid = (hi.job.t0 + hi.job.t1) / 2
            last = float(np.max(hi.job.t1[(mid >= hi.start_s) & (mid <= hi.end_s)], initial=hi.start_s))
            bal_guess = min(100.0, max(0.0, 100 * drain * last / sv.credit_capacity))
    elif known is None:
        result.notes.append(
            "no cliff in the capture: the baseline (and so the size) is not observed; pass the size (--size) to fit "
            "the starting balance"
        )
    if size_guess is None:
        result.parameters.append(Parameter("size_gib", None, None, None, None, "GiB", "not determined: no cliff"))
        result.parameters.append(
            Parameter("burst_balance_pct", None, None, None, None, "%", "not determined without the size")
        )
        _service_time(result, capture, vtype, [])
        return
    dt = _dt(capture)
    r = _native.fit_bucket_volume(
        vtype, known, size_guess, bal_guess, phases, t0, t1, value, w, dt, _instance_of(result)
    )
    size = r.size_gib
    bal = r.balance_pct
    cliff = r.cliff_time_s
    used_size = float(r.size_used_gib)
    used_bal = float(r.balance_used_pct)
    if size_gib is not None:
        result.parameters.append(Parameter("size_gib", float(size_gib), None, None, None, "GiB", "given"))
    elif unseen:
        lo_s, hi_s = info.min_size_gib, info.max_size_gib
        result.parameters.append(
            Parameter(
                "size_gib",
                None,
                None,
                lo_s,
                hi_s,
                "GiB",
                f"not determined (performance does not depend on it): every size from {lo_s:g} to {hi_s:g} GiB "
                "fits alike",
            )
        )
        result.notes.append(f"the size is not determined; the volume uses {used_size:g} GiB")
    elif size.determined:
        result.parameters.append(
            Parameter("size_gib", size.value, _f(size.se), None, None, "GiB", "whole GiB, profiled")
        )
    else:
        result.parameters.append(
            Parameter(
                "size_gib",
                None,
                None,
                size.lower,
                size.upper,
                "GiB",
                f"not determined: every size from {size.lower:g} to {size.upper:g} GiB fits alike",
            )
        )
        result.notes.append(f"the size is not determined; the volume uses {used_size:g} GiB")
    if bal.determined:
        interval = bal.lower != bal.upper
        result.parameters.append(
            Parameter(
                "burst_balance_pct",
                bal.value,
                _f(bal.se),
                bal.lower if interval else None,
                bal.upper if interval else None,
                "%",
                "BurstBalance at the start: the cliff lies in a stretch without data; the middle is taken"
                if interval
                else "BurstBalance at the start",
            )
        )
    else:
        lo_b, hi_b = bal.lower, bal.upper
        note = (
            f"not determined: at least {lo_b:.4g} % (no cliff in the capture)"
            if hi_b >= 100
            else f"not determined: at most {hi_b:.4g} % (the capture starts after the cliff)"
        )
        result.parameters.append(Parameter("burst_balance_pct", None, None, lo_b, hi_b, "%", note))
        result.notes.append(f"{note}; the volume uses {used_bal:.4g} %")
    result.cliff = Parameter(
        "cliff_time_s",
        _f(cliff.value),
        _f(cliff.se),
        _f(cliff.lower) if cliff.lower != cliff.upper else None,
        _f(cliff.upper) if cliff.lower != cliff.upper else None,
        "s",
        "from the start of the first job's log",
    )
    result.parameters.append(result.cliff)
    names = _native.bound_names()
    for ph, js, b in zip(phases, members, r.phase_bound):
        for p in result.phases:
            if any(p.job == j.name for j in js) and ph[0] - 1e-9 <= p.start_s <= ph[1] + 1e-9:
                p.bound = names[int(b)]
    result.predicted = (t0, t1, value, np.asarray(r.predicted, dtype=float))
    result.ssr = float(r.ssr)
    result.dof = int(r.dof)
    result.profile = [tuple(x) for x in r.profile]
    result.engine_runs = int(r.engine_runs)
    result.dt_s = dt
    result.engine_phases = phases
    unqueued = _unqueued(capture, levels, rate_limits)
    demand_jobs = [j for js, b in zip(members, r.phase_bound) if names[int(b)] == "demand" for j in js]
    demand_jobs += [j for j in unqueued if id(j) not in {id(d) for d in demand_jobs}]
    st = _service_time(result, capture, vtype, demand_jobs)
    result.volume = _vol(vtype, used_size, burst_balance_pct=round(used_bal, 6), **st)
    _latency_step(result, capture, members, [names[int(b)] for b in r.phase_bound], unqueued)


def _fit_provisioned(
    result: Fit,
    capture: Capture,
    levels: List[Level],
    weights: List[FloatArray],
    vtype: str,
    size_gib: Optional[float],
    rate_limits: str,
    given_iops: Optional[float] = None,
) -> None:
    """gp3, io1, io2: constant caps, read from the levels of the jobs that ask for more than they get."""
    probe = _rules.at(vtype, size_gib)
    if given_iops is not None:
        # Jobs measured below the given cap asked for what they got (unless the instance held them).
        at_instance = _held_by_instance(result, capture, levels, probe, given_iops)
        for lv in levels:
            if (
                lv.iops * _counted(probe, lv.job) < (1 - MIN_RELATIVE_CHANGE) * given_iops
                and id(lv.job) not in at_instance
            ):
                lv.job.measured_demand_iops = lv.iops
    iops_range = _rules.iops_range(vtype)
    assert iops_range is not None  # gp3, io1, io2 provision their IOPS
    least_iops, most_iops = iops_range
    transient = overshoot_transients(levels)
    sat = [
        lv
        for lv in levels
        if (lv.iops < (1 - MIN_RELATIVE_CHANGE) * lv.job.demand_iops(probe) or rate_limits == "volume")
        and id(lv) not in transient
    ]
    held = [lv.job for lv in levels if lv not in sat]  # held by their own rate caps or think time: demand-bound
    if not sat:
        sat = list(levels)
        if given_iops is None:
            result.notes.append("every job was held by its own rate cap: the caps are only bounded below")
    counted = [(lv, lv.iops * _counted(probe, lv.job), lv.iops * lv.job.io_bytes / 2**20) for lv in sat]
    iops_lv, iops, _ = max(counted, key=lambda c: c[1])
    tput_lv, _, tput = max(counted, key=lambda c: c[2])
    cpi = _counted(probe, iops_lv.job)
    iops_se = iops_lv.iops_se * cpi
    if given_iops is not None:
        iops, iops_se = float(given_iops), math.nan
    tput_se = tput_lv.iops_se * tput_lv.job.io_bytes / 2**20
    # The throughput cap binds where the IOPS cap does not: with small I/O only, it is a lower bound.
    tput_bound = tput_lv.iops * _counted(probe, tput_lv.job) < (1 - MIN_RELATIVE_CHANGE) * iops
    prov_iops = float(round(iops))
    kw: Dict[str, Any] = {}
    if vtype == "gp3":
        prov_tput = float(round(tput)) if tput_bound else None
        result.parameters.append(
            Parameter(
                "iops", iops, _f(iops_se), None, None, "IOPS", "given" if given_iops is not None else "provisioned IOPS"
            )
        )
        if prov_tput is not None:
            result.parameters.append(
                Parameter("throughput_mib_s", tput, tput_se, None, None, "MiB/s", "provisioned throughput")
            )
        else:
            result.parameters.append(
                Parameter(
                    "throughput_mib_s",
                    None,
                    None,
                    tput,
                    None,
                    "MiB/s",
                    f"not determined: at least {tput:.1f} MiB/s (no job was throughput-bound)",
                )
            )
        prov_iops = min(max(prov_iops, least_iops), most_iops)
        kw = {"iops": prov_iops}
        tput_range = _rules.throughput_range(vtype, prov_iops)
        if tput_range is not None:
            # Only bounded below: the volume takes the least throughput the data allow.
            at_least = prov_tput if prov_tput is not None else float(math.ceil(tput))
            kw["throughput_mib_s"] = min(max(at_least, tput_range[0]), tput_range[1])
        if iops < least_iops * 0.97:
            result.notes.append(
                f"{iops:.0f} IOPS is below gp3's {least_iops:,.0f}: not a gp3 at its limit (demand-bound?)"
            )
    else:
        result.parameters.append(
            Parameter(
                "iops", iops, _f(iops_se), None, None, "IOPS", "given" if given_iops is not None else "provisioned IOPS"
            )
        )
        prov_iops = min(max(prov_iops, least_iops), most_iops)
        kw = {"iops": prov_iops}
    min_size = _rules.min_size(vtype, prov_iops)
    size = float(size_gib) if size_gib is not None else float(min_size)
    if size_gib is None:
        result.parameters.append(
            Parameter(
                "size_gib",
                None,
                None,
                min_size,
                None,
                "GiB",
                f"not determined (performance does not depend on it): at least {min_size:g} GiB; the volume uses it",
            )
        )
    else:
        result.parameters.append(Parameter("size_gib", float(size_gib), None, None, None, "GiB", "given"))
    unqueued = _unqueued(capture, levels, rate_limits)
    unique = list({id(j): j for j in held + unqueued}.values())
    st = _service_time(result, capture, vtype, unique)
    result.volume = _vol(vtype, size, **kw, **st)
    # The jobs' demand on the fitted volume: a thinktime job's offer depends on its service time.
    phases, members = _phase_tuples(capture, rate_limits, result.volume)
    t0, t1, value, w = _observed(capture, members, weights)
    dt = _dt(capture)
    sim = _native.simulate_windows(result.volume, phases, t0, t1, dt, _instance_of(result))
    pred = np.asarray(sim.predicted, dtype=float)
    result.predicted = (t0, t1, value, pred)
    result.ssr = float(np.sum(w * (pred - value) ** 2))
    result.dof = int(value.size - len([p for p in result.parameters if p.value is not None and p.note != "given"]))
    result.dt_s = dt
    result.engine_phases = phases
    names = _native.bound_names()
    for ph, js, b in zip(phases, members, sim.phase_bound):
        for p in result.phases:
            if any(p.job == j.name for j in js) and ph[0] - 1e-9 <= p.start_s <= ph[1] + 1e-9:
                p.bound = names[int(b)]
    _latency_step(result, capture, members, [names[int(b)] for b in sim.phase_bound], unqueued)


def _latency_step(
    result: Fit,
    capture: Capture,
    members: List[List[JobData]],
    bounds: List[str],
    unqueued: Sequence[JobData] = (),
) -> None:
    """The latency model's parameters (``_latency``): service part from the phases the fitted volume
    did not hold back and from ``unqueued`` jobs (:func:`_unqueued`), the wait's spread from those
    a volume limit held back, and (with an instance) the instance's wait spread from those the
    instance's limits held back."""
    if result.volume is None:
        return
    free = [j for js, b in zip(members, bounds) if b == "demand" for j in js]
    free += [j for j in unqueued if id(j) not in {id(f) for f in free}]
    skip = {id(j) for j in unqueued}
    # The wait is fitted on one mean latency per job: a job whose rate changed (a cliff) mixes waits.
    one_level = {id(j) for j in capture.jobs if sum(lv.job is j for lv in result.levels) == 1}

    def held_by(kind: str) -> List[JobData]:
        return [
            j
            for js, b in zip(members, bounds)
            if b.startswith(kind)
            for j in js
            if id(j) in one_level and id(j) not in skip
        ]

    held, by_instance = held_by("volume"), held_by("instance")
    kw = fit_latency(
        result.parameters,
        result.notes,
        result.volume,
        free,
        held,
        instance=_instance_of(result),
        by_instance=by_instance,
    )
    result.volume = with_latency(result.volume, kw)
    if unqueued and not held:
        for i, p in enumerate(result.parameters):
            if p.name == "wait_cv" and p.value is None:
                result.parameters[i] = dataclasses.replace(
                    p,
                    note="not determined: the jobs were held by fio's own rate caps (rate_limits='volume'), which hold "
                    "the I/Os back before they are submitted: no wait shows in their latency",
                )


def _instance_of(result: Fit) -> Optional[Instance]:
    """The fit's instance (its limits join the forward model), or None."""
    return None if result.instance is None else _instance(result.instance)


def _held_by_instance(result: Fit, capture: Capture, levels: List[Level], probe: Volume, iops: float) -> Set[int]:
    """Jobs (ids) whose measured rate is what ``probe`` provisioned at ``iops`` serves them on the
    fit's instance at unbounded demand, held by the instance's limits (the engine's bound), not
    by their own demand."""
    inst = _instance_of(result)
    if inst is None:
        return set()
    try:
        volume = dataclasses.replace(probe, iops=iops)
    except ValueError:  # the probe's size is too small for these IOPS: the smallest that allows them
        volume = dataclasses.replace(probe, size_gib=float(_rules.min_size(probe.type, iops)), iops=iops)
    phases, members = _phase_tuples(capture, "volume", volume)  # every job asks for more than it gets
    t0, t1, _, _ = _observed(capture, members, window_weights(capture, levels))
    sim = _native.simulate_windows(volume, phases, t0, t1, _dt(capture), inst)
    names = _native.bound_names()
    out: Set[int] = set()
    for js, b, served in zip(members, sim.phase_bound, sim.phase_iops):
        measured = sum(float(np.mean([lv.iops for lv in levels if lv.job is j] or [0.0])) for j in js)
        if names[int(b)].startswith("instance") and measured >= (1 - MIN_RELATIVE_CHANGE) * float(served):
            out.update(id(j) for j in js)
    return out


def _f(x: Any) -> Optional[float]:
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


def _service_time(result: Fit, capture: Capture, vtype: Optional[str], jobs: List[JobData]) -> Dict[str, float]:
    """s(b) = intercept + b x per_byte from the mean completion latency of jobs the volume did not hold
    back; and the gamma shape of their latency bins. Returns Volume keyword arguments."""
    vol = _rules.at(vtype or "gp2")
    default_per_byte = vol.service_time_s(2**20, 1.0) - vol.service_time_s(0, 1.0)
    default_per_byte /= 2**20
    pts = [(j.io_bytes, j.clat_mean_s, j.clat_n) for j in jobs if j.clat_mean_s and j.clat_n > 0]
    kw: Dict[str, float] = {}
    if not pts:
        result.service_time = {"intercept_ms": None, "per_mib_ms": None}
        result.notes.append(
            "service time not fitted: no job was shown to run below the volume's limits with its latency reported"
        )
        return kw
    b = np.array([p[0] for p in pts], dtype=float)
    lat = np.array([p[1] for p in pts], dtype=float)
    wts = np.array([p[2] for p in pts], dtype=float)
    r = _native.fit_service_time(b, lat, wts / wts.mean(), default_per_byte)
    a, k = r.intercept_s, r.per_byte_s
    inter_ms = float(a.value) * 1e3
    result.parameters.append(
        Parameter(
            "service_intercept_ms",
            inter_ms,
            _f(float(a.se) * 1e3),
            None,
            None,
            "ms",
            "unloaded service time of a 0-byte I/O (volume latency_ms)",
        )
    )
    if k.determined:
        per_mib = float(k.value) * 2**20 * 1e3
        result.parameters.append(
            Parameter(
                "service_per_mib_ms",
                per_mib,
                _f(float(k.se) * 2**20 * 1e3),
                None,
                None,
                "ms/MiB",
                f"transfer term, from {r.distinct_sizes} I/O sizes",
            )
        )
    else:
        per_mib = default_per_byte * 2**20 * 1e3
        result.parameters.append(
            Parameter(
                "service_per_mib_ms",
                None,
                None,
                None,
                None,
                "ms/MiB",
                f"not determined from one I/O size: the model's default {per_mib:.4g} ms/MiB is used",
            )
        )
    result.service_time = {"intercept_ms": inter_ms, "per_mib_ms": per_mib if k.determined else None}
    if inter_ms > 0:
        kw["latency_ms"] = inter_ms
    else:
        result.notes.append(f"fitted service-time intercept {inter_ms:.4g} ms is not positive: the default is kept")
    if k.determined and per_mib > 0:
        kw["transfer_mib_s"] = 1e3 / per_mib
    _latency_shape(result, jobs)
    return kw


def _latency_shape(result: Fit, jobs: List[JobData]) -> None:
    """Gamma shape of the completion latency of jobs that ran below the limits (json+ bins)."""
    fits = []
    for j in jobs:
        if j.clat_bins is None:
            continue
        lo, hi, n = j.clat_bins
        try:
            g = _native.fit_gamma(lo, hi, n)
        except ValueError:
            continue
        fits.append((j, g))
    if not fits:
        return
    ks = np.array([g.shape.value for _, g in fits], dtype=float)
    ses = np.array([g.shape.se for _, g in fits], dtype=float)
    ok = np.isfinite(ses) & (ses > 0)
    if ok.any():
        wts = 1 / ses[ok] ** 2
        k = float(np.sum(ks[ok] * wts) / np.sum(wts))
        se = float(1 / math.sqrt(np.sum(wts)))
        spread = float(np.std(ks[ok])) if ok.sum() > 1 else 0.0
        se = max(se, spread / math.sqrt(max(1, int(ok.sum()))))
    else:
        k, se = float(np.mean(ks)), math.nan
    result.latency_fits = [(j.name, float(g.shape.value), float(g.mean_s.value) * 1e3) for j, g in fits]
    result.parameters.append(
        Parameter(
            "latency_shape",
            k,
            _f(se),
            None,
            None,
            "",
            f"gamma shape of the service time, maximum likelihood over json+ bins of {len(fits)} job(s)",
        )
    )
