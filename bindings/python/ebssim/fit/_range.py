"""The volumes a capture fits when its levels are the jobs' own rate caps.

A job held at its own fio ``rate_iops``/``rate`` shows what it asked for, not what the volume
allows: such a capture fits every volume whose limits do not bind below the caps. Which ones is
the engine's answer (the fitter's forward model, ``_native.simulate_windows``): a volume *serves*
the capture when every phase gets its demand at every step (so no bucket runs dry while a phase
asks for more than the baseline). Every limit is monotone in
the size (bucket types, at a given BurstBalance) and in the provisioned IOPS and throughput, so the
least of each is a bisection over the values the core accepts (``volume_types()``, ``_rules``);
none of AWS's numbers is written here.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from ..volumes import Volume, volume_types
from . import _native, _rules

#: A phase is served when the engine serves at least this fraction of its demand on average: it
#: serves an offered rate below every limit exactly (the margin is rounding only), and one step
#: held back in a phase of MAX_FIT_STEPS steps already falls short by more.
SERVED_FRACTION = 1 - 1e-9
#: The least BurstBalance is bisected to this width (percent).
BALANCE_RESOLUTION_PCT = 1e-4

PhasesFor = Callable[[Volume], List[_native.PhaseTuple]]


def serves(volume: Volume, phases: List[_native.PhaseTuple], dt: float) -> bool:
    """True when ``volume`` gives every phase its demand at every step (a bucket that runs dry
    while a phase asks for more than the baseline holds it back)."""
    if not phases or not all(math.isfinite(p[5]) for p in phases):
        return False
    t0 = np.array([phases[0][0]], dtype=float)
    t1 = np.array([max(p[1] for p in phases)], dtype=float)
    sim = _native.simulate_windows(volume, phases, t0, t1, dt)
    served = np.asarray(sim.phase_iops, dtype=float)
    demand = np.array([p[5] for p in phases], dtype=float)
    return bool(np.all(served >= SERVED_FRACTION * demand))


def volume_range(vtype: str, phases_for: PhasesFor, dt: float, *, balance: bool = True) -> Optional[Dict[str, Any]]:
    """The volumes of ``vtype`` that serve the capture (``phases_for(volume)`` builds its phases on
    a volume); None when none does. ``balance``: also bisect the least BurstBalance at the least
    size (bucket types)."""
    if volume_types()[vtype].has_bucket:
        return _bucket_range(vtype, phases_for, dt, balance)
    return _provisioned_range(vtype, phases_for, dt)


def _empty(vtype: str) -> Dict[str, Any]:
    return {
        "type": vtype,
        "size_gib": None,
        "min_size_gib": None,
        "max_size_gib": None,
        "min_burst_balance_pct": None,
        "no_credits_from_gib": None,
        "min_iops": None,
        "max_iops": None,
        "min_throughput_mib_s": None,
        "max_throughput_mib_s": None,
        "iops_with_min_throughput": None,
        "why": "",
    }


def _bucket_range(vtype: str, phases_for: PhasesFor, dt: float, balance: bool) -> Optional[Dict[str, Any]]:
    info = volume_types()[vtype]
    lo, hi = int(info.min_size_gib), int(info.max_size_gib)

    def ok(size: float, bal: float) -> bool:
        v = Volume(vtype, float(size), burst_balance_pct=bal)
        return serves(v, phases_for(v), dt)

    if not ok(hi, 100.0):
        return None
    matters = _rules.size_matters(vtype)
    least = lo if not matters or ok(lo, 100.0) else _rules._least(lambda n: ok(n, 100.0), lo, hi)
    free: Optional[int] = None
    if ok(hi, 0.0):
        free = lo if not matters or ok(lo, 0.0) else _rules._least(lambda n: ok(n, 0.0), lo, hi)
    out = _empty(vtype)
    out.update(min_size_gib=float(least), max_size_gib=float(hi))
    out["no_credits_from_gib"] = None if free is None else float(free)
    sizes = (
        f"any size from {least:,} to {hi:,} GiB (its performance does not depend on the size)"
        if not matters
        else f"any size from {least:,} to {hi:,} GiB"
    )
    parts = [sizes]
    if balance:
        if free is not None and free <= least:
            bal = 0.0
        else:
            b_lo, b_hi = 0.0, 100.0
            while b_hi - b_lo > BALANCE_RESOLUTION_PCT:
                mid = (b_lo + b_hi) / 2
                if ok(least, mid):
                    b_hi = mid
                else:
                    b_lo = mid
            bal = b_hi
        out["min_burst_balance_pct"] = bal
        if bal > 0:
            where = f" at {least:,} GiB, less on larger volumes" if matters else ""
            parts.append(f"BurstBalance at the start at least {bal:.4g} %{where}")
    if free is not None and free > least:
        parts.append(f"no credits needed from {free:,} GiB (its baseline serves the caps)")
    elif free is None:
        parts.append("every size needs burst credits")
    out["why"] = "; ".join(parts)
    return out


def _provisioned_range(vtype: str, phases_for: PhasesFor, dt: float) -> Optional[Dict[str, Any]]:
    info = volume_types()[vtype]
    size = info.max_size_gib  # where no IOPS-per-GiB ratio binds
    rng = _rules.iops_range(vtype)
    assert rng is not None  # gp3, io1, io2 provision their IOPS
    i_lo, i_hi = int(rng[0]), int(rng[1])

    def most_tput(iops: int) -> Optional[float]:
        tr = _rules.throughput_range(vtype, iops)
        return None if tr is None else tr[1]

    def ok(iops: int, tput: Optional[float]) -> bool:
        v = Volume(vtype, size, iops=float(iops), throughput_mib_s=tput)
        return serves(v, phases_for(v), dt)

    if not ok(i_hi, most_tput(i_hi)):
        return None
    least_iops = i_lo if ok(i_lo, most_tput(i_lo)) else _rules._least(lambda n: ok(n, most_tput(n)), i_lo, i_hi)
    out = _empty(vtype)
    out.update(min_iops=float(least_iops), max_iops=float(i_hi))
    iops = least_iops
    tr_hi = _rules.throughput_range(vtype, i_hi)
    parts = [f"provisioned IOPS from {least_iops:,} to {i_hi:,}"]
    if tr_hi is not None:
        t_lo, t_hi = int(tr_hi[0]), int(tr_hi[1])
        least_t = t_lo if ok(i_hi, t_lo) else _rules._least(lambda n: ok(i_hi, n), t_lo, t_hi)
        out.update(min_throughput_mib_s=float(least_t), max_throughput_mib_s=float(t_hi))
        parts.append(f"throughput from {least_t:,} to {t_hi:,} MiB/s")
        # The least configuration the core accepts with both: more IOPS where the throughput needs them.
        if not _rules.accepts(vtype, size, iops=iops, throughput_mib_s=least_t):
            iops = _rules._least(lambda n: _rules.accepts(vtype, size, iops=n, throughput_mib_s=least_t), iops, i_hi)
            parts.append(f"{least_t:,} MiB/s needs at least {iops:,} IOPS")
    least_size = _rules.min_size(vtype, float(iops))
    out.update(min_size_gib=float(least_size), max_size_gib=float(info.max_size_gib))
    per_gib = f" (the least for {iops:,} IOPS)" if least_size > info.min_size_gib else ""
    parts.append(f"any size from {least_size:g} GiB{per_gib} to {info.max_size_gib:,g} GiB")
    if out["min_throughput_mib_s"] is not None:
        out["iops_with_min_throughput"] = float(iops)
    out["why"] = "; ".join(parts)
    return out
