"""What the core says about a volume type, as the fit needs it.

Every limit, range and rate here is read off the compiled core (``volume_types()`` and the
volumes ``make_volume`` builds), never written down again: an inverse (which size gives this
baseline, which IOPS a type accepts) is a search over the core's own answers.

>>> from ebssim.fit import _rules
>>> _rules.iops_range("io1"), _rules.per_gib("gp2"), _rules.min_size("gp3", 6000)
((100.0, 64000.0), 3.0, 12.0)
>>> _rules.size_matters("gp2"), _rules.size_matters("standard")  # standard: 100 IOPS at every size
(True, False)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Optional, Tuple

from ..volumes import Volume, volume_types

#: A size at which the fit reads a type's baseline per GiB (any size inside every bucket type's range).
_PER_GIB_AT = 1024.0


def bucket_types() -> Tuple[str, ...]:
    """The types with a burst bucket, in the core's order."""
    return tuple(name for name, t in volume_types().items() if t.has_bucket)


def accepts(
    vtype: str, size_gib: float, iops: Optional[float] = None, throughput_mib_s: Optional[float] = None
) -> bool:
    """True when the core builds this volume (AWS's rules allow it)."""
    try:
        Volume(vtype, size_gib, iops=iops, throughput_mib_s=throughput_mib_s)
    except ValueError:
        return False
    return True


def _least(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """The least whole n in (lo, hi] with ok(n), for ok false at lo and true at hi and monotone."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _most(ok: Callable[[int], bool], lo: int) -> int:
    """The greatest whole n >= lo with ok(n), for ok true at lo and monotone (false beyond some n)."""
    hi = max(1, 2 * lo)
    while ok(hi):
        lo, hi = hi, 2 * hi
    return _least(lambda n: not ok(n), lo, hi) - 1


@lru_cache(maxsize=None)
def iops_range(vtype: str) -> Optional[Tuple[float, float]]:
    """The provisioned IOPS the type accepts (at its largest size, where no per-GiB ratio binds);
    None where IOPS are not provisioned."""
    t = volume_types()[vtype]
    if t.default_iops is None:
        return None
    size, start = t.max_size_gib, int(t.default_iops)

    def ok(n: int) -> bool:
        return accepts(vtype, size, iops=n)

    return float(_least(ok, 0, start)), float(_most(ok, start))


@lru_cache(maxsize=None)
def throughput_range(vtype: str, iops: float) -> Optional[Tuple[float, float]]:
    """The provisioned throughput (MiB/s) the type accepts with ``iops`` provisioned; None where
    throughput is not provisioned."""
    t = volume_types()[vtype]
    if t.default_throughput_mib_s is None:
        return None
    size, start = t.max_size_gib, int(t.default_throughput_mib_s)

    def ok(n: int) -> bool:
        return accepts(vtype, size, iops=iops, throughput_mib_s=n)

    return float(_least(ok, 0, start)), float(_most(ok, start))


def min_size(vtype: str, iops: Optional[float] = None) -> float:
    """The smallest whole size the core accepts for the type with ``iops`` provisioned."""
    t = volume_types()[vtype]
    lo, hi = int(t.min_size_gib), int(t.max_size_gib)
    if accepts(vtype, lo, iops=iops):
        return float(lo)
    return float(_least(lambda n: accepts(vtype, n, iops=iops), lo, hi))


def at(vtype: str, size_gib: Optional[float] = None) -> Volume:
    """A volume of the type at ``size_gib`` (default: the EC2 console's size) with the least IOPS
    the type accepts where IOPS are provisioned (allowed at every size). Its counting rule and
    service-time defaults do not depend on the size; an invalid size is the core's ValueError."""
    r = iops_range(vtype)
    size = volume_types()[vtype].default_size_gib if size_gib is None else size_gib
    return Volume(vtype, size, iops=None if r is None else r[0])


@lru_cache(maxsize=None)
def size_matters(vtype: str) -> bool:
    """True when the type's limits follow its size (gp2, st1, sc1); False for a type whose every
    size performs alike (standard, and the provisioned types)."""
    t = volume_types()[vtype]

    def limits(v: Volume) -> Tuple[float, ...]:
        return (v.baseline_iops, v.max_iops, v.credit_capacity, v.baseline_throughput_mib_s, v.max_throughput_mib_s)

    return limits(at(vtype, t.min_size_gib)) != limits(at(vtype, t.max_size_gib))


def _per_gib(rate: Callable[[Volume], float], vtype: str) -> Optional[float]:
    """The rate at _PER_GIB_AT GiB, when the core makes it proportional to the size there (twice
    the rate at half the size); else None."""
    full, half = rate(at(vtype, _PER_GIB_AT)), rate(at(vtype, _PER_GIB_AT / 2))
    return full if full > 0 and full == 2 * half else None


def size_for_baseline(vtype: str, rate: float, *, throughput: bool = False) -> Optional[float]:
    """The size (GiB, not rounded) whose baseline is ``rate`` (counted IOPS, or MiB/s with
    ``throughput``), from the core's baseline per GiB; None when the baseline does not follow the
    size. Read at 1 TiB and scaled by a power of two, the quotient is the exact one."""
    per_tib = _per_gib((lambda v: v.baseline_throughput_mib_s) if throughput else (lambda v: v.baseline_iops), vtype)
    if per_tib is None:
        return None
    return rate * _PER_GIB_AT / per_tib


def per_gib(vtype: str) -> Optional[float]:
    """Baseline counted IOPS per GiB, as the core gives it (gp2: 3); None when not proportional."""
    r = _per_gib(lambda v: v.baseline_iops, vtype)
    return None if r is None else r / _PER_GIB_AT


def smallest_size_with_baseline(vtype: str, rate: float) -> Optional[float]:
    """The smallest whole size whose baseline IOPS is at least ``rate``; None when none is."""
    t = volume_types()[vtype]
    lo, hi = int(t.min_size_gib), int(t.max_size_gib)

    def ok(n: int) -> bool:
        return at(vtype, n).baseline_iops >= rate

    if not ok(hi):
        return None
    return float(lo) if ok(lo) else float(_least(ok, lo, hi))


def largest_size_at_floor(vtype: str) -> float:
    """The largest whole size whose baseline IOPS is the smallest size's (gp2's floor)."""
    t = volume_types()[vtype]
    lo, hi = int(t.min_size_gib), int(t.max_size_gib)
    floor = at(vtype, lo).baseline_iops
    return float(_least(lambda n: at(vtype, n).baseline_iops > floor, lo, hi) - 1)
