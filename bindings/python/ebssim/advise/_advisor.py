"""The migration advisor: gp2 -> gp3, io1/io2 -> gp3 where it serves (else io1 -> io2), checked by
replaying the load on each choice."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .. import _repr, aws
from .._units import real
from ..burst import burst_duration_s, closed_loop_rate, refill_time_s
from ..cost import Cost, RegionPrices, monthly_cost, prices
from ..instances import Instance
from ..recording import BOUND_NAMES
from ..results import LatencyPercentiles
from ..simulation import Simulation
from ..stripes import StripedSet, striped, target_spec
from ..volumes import Volume, volume_spec, volume_types
from ..workloads import ClosedLoop, OpenLoop
from ._alarms import BurstBalanceAlarm, burst_balance_alarm, warning_minutes_of
from ._words import agree, count

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LATENCY_PERCENTILES", "BatchJob", "Scenario", "VolumeAdvice", "FleetAdvice", "advise", "gp3_for"]

FloatArray = npt.NDArray[np.float64]

# How long a job may run on a choice before it counts as never finishing (a week).
_MAX_RUN_S = 7 * 86400.0
# The device latency percentiles each choice reports when the load's concurrency is known.
LATENCY_PERCENTILES: Tuple[float, ...] = (50.0, 99.0)
# The bounds that are a limit of the volume or the instance (not the demand, not the
# application's own bound on outstanding I/Os): what "throttled" counts.
_LIMITS = tuple(
    BOUND_NAMES.index(b) for b in ("volume_iops", "volume_throughput", "instance_iops", "instance_throughput")
)
# A stretch of the measured load is the "job" while its bytes per period stay above this share
# of the busiest period's.
_JOB_SHARE = 0.25


@dataclass(frozen=True)
class BatchJob:
    """The stated synthetic load used when a volume comes without CloudWatch metrics.

    A batch job that asks for I/Os of ``io_size`` as fast as the *current* volume serves them
    (its peak rate, with burst credits: :func:`ebssim.closed_loop_rate` of a deep queue) for
    ``minutes``: an open-loop demand, so on a slower volume the rest queues and the job takes
    longer. Every choice starts from a full bucket.

    ``max_in_flight``: the job's concurrency, the I/Os it keeps outstanding (None: not stated).
    With it, the job is the work the current volume does in ``minutes`` at that concurrency
    (:func:`ebssim.closed_loop_rate` of ``ClosedLoop(max_in_flight, ...)``), all of it ready at
    the start and at most ``max_in_flight`` I/Os of it at the device (a closed loop until it is
    done), so a slower choice slows the job down, and each choice reports the device latency
    percentiles of its I/Os. Without it, the job asks for I/Os at the current volume's peak rate
    (that of a deep queue, 4,096 I/Os) as an unbounded queue, and no latency is reported: from
    arrival it would be the hours a slower choice queues, not the device's.
    """

    minutes: float = 60.0
    io_size: Union[str, int, float] = "16k"
    read_fraction: float = 1.0
    pattern: str = "random"
    max_in_flight: Optional[float] = None

    def __post_init__(self) -> None:
        m = real(self.minutes, "BatchJob minutes", "a number of minutes")
        if not (math.isfinite(m) and m > 0):
            raise ValueError(f"BatchJob minutes={self.minutes!r} must be a positive number of minutes")
        if self.max_in_flight is not None:
            n = real(self.max_in_flight, "BatchJob max_in_flight", "a number of I/Os")
            if not (math.isfinite(n) and n > 0):
                raise ValueError(
                    f"BatchJob max_in_flight={self.max_in_flight!r} must be a positive number of I/Os (or None)"
                )
        # Validates io_size, read_fraction and pattern as a workload would.
        ClosedLoop(1, self.io_size, read_fraction=self.read_fraction, pattern=self.pattern)

    def describe(self) -> str:
        size = self.io_size if isinstance(self.io_size, str) else f"{self.io_size:g} B"
        reads = f"{self.read_fraction * 100:g}% reads"
        pace = (
            "at the current volume's peak rate (no concurrency stated: no device latency)"
            if self.max_in_flight is None
            else f"with {self.max_in_flight:g} I/Os in flight, the work the current volume does with them"
        )
        return f"a {self.minutes:g}-minute batch job of {size} {self.pattern} I/O ({reads}) {pace}"


@dataclass(frozen=True)
class Scenario:
    """One configuration of a volume, what it costs and how the load fares on it.

    ``throttled_minutes``: simulated minutes in which a limit (the volume's or the instance's)
    held the load back. ``job_minutes``: how long the job (the busiest stretch of the metrics,
    or the :class:`BatchJob`) takes from its start until its bytes are served; None when it had
    not finished after a week.
    """

    spec: str
    volume: Volume = field(repr=False)
    cost: Cost = field(repr=False)
    throttled_minutes: float
    job_minutes: Optional[float]
    stripe: Optional[StripedSet] = field(default=None, repr=False)  # a striped set: the set (volume: a member)
    latency_ms: Optional[LatencyPercentiles] = None
    """Device latency percentiles (:data:`LATENCY_PERCENTILES`, ms) of the load's I/Os on this
    choice, ``VolumeResult.latency_percentiles(at="device")`` of its replay: what the volume's own
    latency metrics and fio's clat would show, the wait in the application apart. None when the
    load's concurrency is not known (no measured VolumeQueueLength, no ``max_in_flight``). A
    striped set's: each member's (they are alike and evenly loaded)."""

    @property
    def monthly_usd(self) -> float:
        return self.cost.monthly_usd

    @property
    def p99_ms(self) -> Optional[float]:
        """The device latency's 99th percentile, ms (None: :attr:`latency_ms` is None)."""
        return None if self.latency_ms is None else self.latency_ms[99.0]

    def _words(self) -> List[str]:
        job = (
            "the job never finished (a week)"
            if self.job_minutes is None
            else f"job {_repr.duration(self.job_minutes * 60)}"
        )
        words = [
            f"{_repr.usd(self.monthly_usd)} a month",
            f"throttled {_repr.duration(self.throttled_minutes * 60)}",
            job,
        ]
        if self.latency_ms is not None:
            words.append("at the device " + ", ".join(f"p{p:g} {_repr.latency(v)}" for p, v in self.latency_ms.items()))
        return words

    def __repr__(self) -> str:
        return _repr.short_repr("Scenario", [self.spec, *self._words()])

    def _repr_html_(self) -> str:
        return _repr.html_table(f"Scenario: {self.spec}", [("", w) for w in self._words()])


@dataclass(frozen=True)
class VolumeAdvice:
    """The advice for one volume: its current configuration, gp3 with defaults, and the advice."""

    volume_id: str
    current: Scenario
    defaults: Scenario
    advice: Scenario
    reason: str
    load: str
    job_bytes: float
    alarm: Optional[BurstBalanceAlarm] = None

    @property
    def changes(self) -> bool:
        """True when the advice differs from the current configuration."""
        return self.advice.spec != self.current.spec

    def _rows(self) -> List[List[str]]:
        rows = []
        for name in ("current", "defaults", "advice"):
            s: Scenario = getattr(self, name)
            rows.append([name, s.spec, *s._words()])
        return rows

    def __repr__(self) -> str:
        move = f"{self.current.spec} -> {self.advice.spec}" if self.changes else f"keep {self.current.spec}"
        money = f"{_repr.usd(self.current.monthly_usd)} -> {_repr.usd(self.advice.monthly_usd)} a month"
        return _repr.short_repr("VolumeAdvice", [f"{self.volume_id}: {move}", money, self.reason])

    def _repr_html_(self) -> str:
        header = ["", "SPEC", "list price", "throttled", "job"]
        if self.current.latency_ms is not None:
            header.append("device latency")
        return _repr.html_grid(f"VolumeAdvice {self.volume_id}: {self.reason}", header, self._rows())

    @property
    def can_use_defaults(self) -> bool:
        """True when the volume moves and gp3 with its defaults is the advice."""
        return self.changes and self.advice.spec == self.defaults.spec

    @property
    def needs_provisioned(self) -> bool:
        """True when the volume moves to gp3 with IOPS or throughput above the defaults."""
        return self.changes and self.advice.volume.type == "gp3" and self.advice.spec != self.defaults.spec

    def to_dict(self) -> Dict[str, Any]:
        """This volume's entry of ``ebssim advise --output-format json``."""
        names = ("current", "defaults", "advice")
        scenarios = (self.current, self.defaults, self.advice)
        return {
            "volume_id": self.volume_id,
            "current": self.current.spec,
            "defaults": self.defaults.spec,
            "advice": self.advice.spec,
            "monthly_usd": {n: s.monthly_usd for n, s in zip(names, scenarios)},
            "breakdown_usd": {n: dict(s.cost.breakdown) for n, s in zip(names, scenarios)},
            "throttled_minutes": {n: round(s.throttled_minutes, 2) for n, s in zip(names, scenarios)},
            "job_minutes": {
                n: None if s.job_minutes is None else round(s.job_minutes, 2) for n, s in zip(names, scenarios)
            },
            "device_latency_ms": {
                n: None if s.latency_ms is None else {f"p{p:g}": round(v, 4) for p, v in s.latency_ms.items()}
                for n, s in zip(names, scenarios)
            },
            "job_bytes": self.job_bytes,
            "load": self.load,
            "can_use_defaults": self.can_use_defaults,
            "needs_provisioned": self.needs_provisioned,
            "reason": self.reason,
            "burst_balance_alarm": None
            if self.alarm is None
            else {
                "threshold_pct": self.alarm.threshold_pct,
                "warning_minutes": self.alarm.warning_minutes,
                "iops": self.alarm.iops,
                "command": self.alarm.command,
            },
        }


def _total(values: Sequence[float]) -> float:
    return round(sum(values), 2)


@dataclass(frozen=True)
class FleetAdvice:
    """The advice for a fleet: one :class:`VolumeAdvice` per volume and a summary."""

    region: str
    prices_as_of: str
    headroom_pct: float
    volumes: List[VolumeAdvice]
    p99_ms: Optional[float] = None  # the bound on the advice's device p99, ms, if one was given

    def __getitem__(self, volume_id: str) -> VolumeAdvice:
        for v in self.volumes:
            if v.volume_id == volume_id:
                return v
        raise KeyError(volume_id)

    @property
    def summary(self) -> Dict[str, Any]:
        """Counts and money: volumes that can use gp3's defaults, volumes that need provisioned
        performance, volumes left as they are, volumes whose job takes more than 1 % longer on gp3's
        defaults, the monthly totals and savings of migrating every volume with defaults versus
        with the advice, the throttled minutes of each choice over the fleet, and (with a bound
        ``p99_ms``) the volumes whose advice's device p99 stays above it."""
        current = _total([v.current.monthly_usd for v in self.volumes])
        defaults = _total([v.defaults.monthly_usd for v in self.volumes])
        advice = _total([v.advice.monthly_usd for v in self.volumes])

        def pct(saved: float) -> Optional[float]:
            return None if current == 0 else round(100.0 * saved / current, 1)

        slower = [
            v.volume_id
            for v in self.volumes
            if v.current.job_minutes is not None
            and (v.defaults.job_minutes is None or v.defaults.job_minutes > v.current.job_minutes * 1.01)
        ]
        return {
            "volumes": len(self.volumes),
            "can_use_defaults": [v.volume_id for v in self.volumes if v.can_use_defaults],
            "need_provisioned": [v.volume_id for v in self.volumes if v.needs_provisioned],
            "unchanged": [v.volume_id for v in self.volumes if not v.changes],
            "slower_with_defaults": slower,
            "monthly_usd": {"current": current, "defaults": defaults, "advice": advice},
            "savings_usd": {"defaults": round(current - defaults, 2), "advice": round(current - advice, 2)},
            "savings_pct": {"defaults": pct(current - defaults), "advice": pct(current - advice)},
            "throttled_minutes": {
                name: round(sum(getattr(v, name).throttled_minutes for v in self.volumes), 2)
                for name in ("current", "defaults", "advice")
            },
            "above_p99": []
            if self.p99_ms is None
            else [v.volume_id for v in self.volumes if v.advice.p99_ms is not None and v.advice.p99_ms > self.p99_ms],
        }

    def __repr__(self) -> str:
        s = self.summary
        n = s["volumes"]
        m, sav = s["monthly_usd"], s["savings_usd"]
        return _repr.short_repr(
            "FleetAdvice",
            [
                f"{n} volume{'s' * (n != 1)} in {self.region}, list prices of {self.prices_as_of}",
                f"{len(s['can_use_defaults'])} can use gp3's defaults, {len(s['need_provisioned'])} need provisioned "
                f"performance, {len(s['unchanged'])} unchanged",
                f"{_repr.usd(m['current'])} a month now, {_repr.usd(m['advice'])} with the advice "
                f"(saves {_repr.usd(sav['advice'])})",
            ],
            sep="; ",
        )

    def _repr_html_(self) -> str:
        header = ["volume", "current", "advice", "now", "advised", "throttled now", "throttled advised", "why"]
        rows = [
            [
                v.volume_id,
                v.current.spec,
                v.advice.spec if v.changes else "(unchanged)",
                _repr.usd(v.current.monthly_usd),
                _repr.usd(v.advice.monthly_usd),
                _repr.duration(v.current.throttled_minutes * 60),
                _repr.duration(v.advice.throttled_minutes * 60),
                v.reason,
            ]
            for v in self.volumes
        ]
        m = self.summary["monthly_usd"]
        rows.append(["all", "", "", _repr.usd(m["current"]), _repr.usd(m["advice"]), "", "", ""])
        n = len(self.volumes)
        title = f"FleetAdvice: {n} volume{'s' * (n != 1)} in {self.region} (USD a month, prices of {self.prices_as_of})"
        return _repr.html_grid(title, header, rows)

    def to_dict(self) -> Dict[str, Any]:
        """``ebssim advise --output-format json``: {region, prices_as_of, volumes, summary}."""
        return {
            "region": self.region,
            "prices_as_of": self.prices_as_of,
            "currency": "USD",
            "headroom_pct": self.headroom_pct,
            "p99_ms": self.p99_ms,
            "volumes": [v.to_dict() for v in self.volumes],
            "summary": self.summary,
        }

    def to_pandas(self) -> "pd.DataFrame":
        """One row per volume: the three SPECs, their monthly cost, throttled and job minutes, and
        device p99 in ms (None without a known concurrency)."""
        import pandas as pd

        rows = []
        for v in self.volumes:
            row: Dict[str, Any] = {"volume_id": v.volume_id}
            for name in ("current", "defaults", "advice"):
                s = getattr(v, name)
                row[name] = s.spec
                row[f"{name}_usd"] = s.monthly_usd
                row[f"{name}_throttled_min"] = round(s.throttled_minutes, 1)
                row[f"{name}_job_min"] = None if s.job_minutes is None else round(s.job_minutes, 1)
                row[f"{name}_p99_ms"] = s.p99_ms
            rows.append(row)
        return pd.DataFrame(rows).set_index("volume_id")

    def to_normal(self) -> str:
        """The human-readable report of ``ebssim advise``."""
        lines = [f"Region {self.region}, AWS list prices of {self.prices_as_of} (USD per month)", ""]
        for v in self.volumes:
            lines.append(f"{v.volume_id}: {v.current.spec} -> {v.advice.spec}")
            lat = v.current.latency_ms is not None
            head = f"  {'':9} {'SPEC':42} {'$/month':>9} {'throttled min':>14} {'job min':>9}"
            lines.append(head + (f" {'device p50 ms':>14} {'p99 ms':>9}" if lat else ""))
            for name in ("current", "defaults", "advice"):
                s = getattr(v, name)
                job = "never" if s.job_minutes is None else f"{s.job_minutes:.1f}"
                row = f"  {name:9} {s.spec:42} {s.monthly_usd:9.2f} {s.throttled_minutes:14.1f} {job:>9}"
                if s.latency_ms is not None:
                    row += f" {s.latency_ms[50.0]:14.3g} {s.latency_ms[99.0]:9.3g}"
                lines.append(row)
            lines.append(f"  load: {v.load}")
            lines.append(f"  why: {v.reason}")
            if v.alarm is not None:
                lines.append(f"  if it stays {v.current.volume.type}: {v.alarm.command}")
            lines.append("")
        s = self.summary
        n_prov = len(s["need_provisioned"])
        lines.append(
            f"Fleet: {count(s['volumes'], 'volume')}; {len(s['can_use_defaults'])} can use gp3's defaults, "
            f"{n_prov} {agree(n_prov, 'needs', 'need')} provisioned performance, {len(s['unchanged'])} unchanged"
        )
        m, sav = s["monthly_usd"], s["savings_usd"]
        lines.append(
            f"  monthly: current {m['current']:.2f}, gp3 defaults {m['defaults']:.2f} (saves {sav['defaults']:.2f}), "
            f"advice {m['advice']:.2f} (saves {sav['advice']:.2f})"
        )
        if s["slower_with_defaults"]:
            lines.append(f"  slower with defaults: {', '.join(s['slower_with_defaults'])}")
        if self.p99_ms is not None:
            above = s["above_p99"]
            lines.append(
                f"  device p99 bound {self.p99_ms:g} ms: "
                + (f"the advice stays above it for {', '.join(above)}" if above else "every advice within it")
            )
        return "\n".join(lines) + "\n"


# --- choosing gp3 settings within gp3's rules (the core is the judge of what is valid) ---


def _gp3_error(size: float, iops: float, tput: float) -> Optional[str]:
    try:
        Volume("gp3", size, iops=iops, throughput_mib_s=tput)
    except ValueError as e:
        return str(e)
    return None


def _largest(lo: int, hi: int, ok: Any) -> int:
    """The largest integer in [lo, hi] for which ok() holds (ok(lo) holds, ok is monotone)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _smallest(lo: int, hi: int, ok: Any) -> int:
    """The smallest integer in [lo, hi] for which ok() holds (ok(hi) holds, ok is monotone)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def gp3_for(size_gib: float, iops: float, throughput_mib_s: float) -> Tuple[Volume, List[str]]:
    """The gp3 volume closest to ``iops`` and ``throughput_mib_s`` (rounded up) that AWS allows.

    Never below gp3's included IOPS and throughput; IOPS raised when the throughput needs them
    (AWS's ratio of MiB/s to IOPS); both lowered to what the size allows. The rules are the
    core's (each attempt is a :class:`~ebssim.Volume`); the notes name each adjustment and the
    rule that forced it.

    >>> from ebssim.advise import gp3_for
    >>> vol, notes = gp3_for(2000, 6000, 250)
    >>> print(vol)
    gp3 2000 GiB (6000 IOPS, 250 MiB/s)
    >>> vol, notes = gp3_for(10, 8000, 125)
    >>> print(vol); print(notes[0])
    gp3 10 GiB (5000 IOPS, 125 MiB/s)
    IOPS lowered from 8000 to 5000: iops=8000 exceeds gp3's limit of 500 IOPS per GiB:
    size_gib=10 allows at most 5000 IOPS
    """
    for value, name, unit in ((iops, "iops", "IOPS"), (throughput_mib_s, "throughput_mib_s", "MiB/s")):
        x = real(value, name, f"a number ({unit})")
        if not (math.isfinite(x) and x >= 0):
            raise ValueError(f"{name}={value!r} must be a finite number of {unit} >= 0")
    info = volume_types()["gp3"]
    d_iops = int(info.default_iops or 0)
    d_tput = int(info.default_throughput_mib_s or 0)
    want_iops = max(d_iops, int(math.ceil(iops - 1e-9)))
    want_tput = max(d_tput, int(math.ceil(throughput_mib_s - 1e-9)))
    notes: List[str] = []
    if _gp3_error(size_gib, want_iops, want_tput) is None:
        return Volume("gp3", size_gib, iops=want_iops, throughput_mib_s=want_tput), notes
    first = _gp3_error(size_gib, want_iops, d_tput)
    i_max = _largest(d_iops, want_iops, lambda i: _gp3_error(size_gib, i, d_tput) is None)
    if i_max < want_iops:
        notes.append(f"IOPS lowered from {want_iops} to {i_max}: {first}")
    cap = max(i_max, _largest(i_max, 10**7, lambda i: _gp3_error(size_gib, i, d_tput) is None))
    i = min(want_iops, cap)
    if _gp3_error(size_gib, cap, want_tput) is None:
        i2 = _smallest(i, cap, lambda k: _gp3_error(size_gib, k, want_tput) is None)
        if i2 > i:
            why = _gp3_error(size_gib, i, want_tput)
            notes.append(f"IOPS raised from {i} to {i2} for {want_tput} MiB/s: {why}")
        return Volume("gp3", size_gib, iops=i2, throughput_mib_s=want_tput), notes
    why = _gp3_error(size_gib, cap, want_tput)
    t = _largest(d_tput, want_tput, lambda t: _gp3_error(size_gib, cap, t) is None)
    i2 = _smallest(i, cap, lambda k: _gp3_error(size_gib, k, t) is None)
    notes.append(f"throughput lowered from {want_tput} to {t} MiB/s: {why}")
    return Volume("gp3", size_gib, iops=i2, throughput_mib_s=t), notes


# --- the load: metrics replayed, or the stated batch job ---


@dataclass
class _Load:
    trace: OpenLoop
    dt: float
    job_start: int
    job_bytes: float
    description: str
    start_balance: Optional[float]  # measured BurstBalance at the start, percent

    @property
    def bounded(self) -> bool:
        """Whether the load's concurrency is known (the trace bounds its outstanding I/Os)."""
        return self.trace.max_in_flight is not None


def _job_stretch(nbytes: FloatArray) -> Tuple[int, float]:
    """(first step, bytes) of the busiest stretch: consecutive steps whose bytes stay at or
    above a quarter of the busiest step's."""
    if nbytes.size == 0 or float(nbytes.max()) <= 0:
        return 0, 0.0
    busy = nbytes >= _JOB_SHARE * float(nbytes.max())
    best = (0, 0.0)
    i = 0
    while i < busy.size:
        if busy[i]:
            j = i
            while j < busy.size and busy[j]:
                j += 1
            total = float(nbytes[i:j].sum())
            if total > best[1]:
                best = (i, total)
            i = j
        else:
            i += 1
    return best


def _metrics_load(trace: OpenLoop, metrics: "pd.DataFrame", vid: str, concurrency: str) -> _Load:
    dt = float(trace.dt or 60.0)
    start, nbytes = _job_stretch(np.asarray(trace.bytes, dtype=np.float64))
    balance: Optional[float] = None
    rows = metrics[(metrics["volume_id"] == vid) & (metrics["metric"] == "BurstBalance")]
    if len(rows) and trace.start is not None:
        first = rows[rows["timestamp"] == trace.start]
        if len(first):
            balance = float(first["value"].iloc[0])
    n = trace.n_steps
    desc = (
        f"metrics replayed ({count(n, 'period')} of {dt:g} s), {concurrency}; the job is the busiest stretch "
        f"({nbytes / 2**30:.1f} GiB from period {start})"
    )
    return _Load(trace, dt, start, nbytes, desc, balance)


def _job_load(current: Volume, job: BatchJob) -> _Load:
    depth = 4096.0 if job.max_in_flight is None else float(job.max_in_flight)
    loop = ClosedLoop(depth, job.io_size, read_fraction=job.read_fraction, pattern=job.pattern)
    rate = closed_loop_rate(current, loop, with_credits=True)
    if job.max_in_flight is None:  # asked for at that rate
        trace = OpenLoop.constant(
            rate.iops, job.io_size, job.minutes * 60.0, read_fraction=job.read_fraction, pattern=job.pattern
        )
    else:  # all of it ready at the start, at most max_in_flight at the device: the job's own closed loop
        ops = rate.iops * job.minutes * 60.0
        trace = OpenLoop(
            np.array([ops]),
            np.array([ops * loop.io_bytes]),
            read_fraction=job.read_fraction,
            pattern=job.pattern,
            dt=1.0,
            max_in_flight=float(job.max_in_flight),
        )
    nbytes = float(np.asarray(trace.bytes).sum())
    desc = (
        f"{job.describe()} ({rate.iops:g} IOPS, {rate.throughput_mib_s:g} MiB/s on {current.type}), from a full bucket"
    )
    return _Load(trace, 1.0, 0, nbytes, desc, None)


@dataclass
class _Outcome:
    throttled_minutes: float
    job_minutes: Optional[float]
    latency_ms: Optional[LatencyPercentiles] = None


def _play(volume: Volume, load: _Load, instance: Optional[Instance]) -> _Outcome:
    """Replay the load on a fresh ``volume`` until its work is done (at most a week from its
    start, :meth:`ebssim.Simulation.replay`); count the steps a limit of the volume or the
    instance held, time the job and, when the load's concurrency is known, take the device
    latency percentiles."""
    sim = Simulation([volume], dt=load.dt, instance=instance)
    run_on = max(_MAX_RUN_S - load.trace.n_steps * load.dt, 0.0)
    run = sim.replay([load.trace], max_run_on_s=run_on)[0]
    served = np.asarray(run.throughput_mib_s, dtype=np.float64) * 2**20 * load.dt
    throttled_steps = sum(run.totals.steps_bound[b] for b in _LIMITS)
    latency = run.latency_percentiles(LATENCY_PERCENTILES, at="device") if load.bounded else None
    job_minutes: Optional[float] = None
    if load.job_bytes > 0:
        cum = np.cumsum(served[load.job_start :])
        done = np.nonzero(cum >= load.job_bytes * (1 - 1e-9))[0]
        if done.size:
            job_minutes = (int(done[0]) + 1) * load.dt / 60.0
    else:
        job_minutes = 0.0
    return _Outcome(throttled_steps * load.dt / 60.0, job_minutes, latency)


# --- what to advise ---


def _within(out: _Outcome, bound_ms: float) -> bool:
    return out.latency_ms is not None and out.latency_ms[99.0] <= bound_ms


def _for_latency(
    advice: Volume, load: _Load, instance: Optional[Instance], bound_ms: float
) -> Tuple[Volume, List[str], bool]:
    """``advice`` (a gp3 volume) raised until the load's device p99 on it is within ``bound_ms``:
    IOPS first (the smallest that does, throughput kept), then, at the most IOPS the size allows,
    throughput. (The volume, notes on what was raised, whether the bound is met.) More IOPS or
    MiB/s never lengthen the device latency, so each search is a bisection."""
    size = advice.size_gib
    i0, t0 = int(advice.baseline_iops), int(advice.max_throughput_mib_s)
    played: Dict[Tuple[int, int], _Outcome] = {}

    def play(i: int, t: int) -> _Outcome:
        if (i, t) not in played:
            played[(i, t)] = _play(Volume("gp3", size, iops=i, throughput_mib_s=t), load, instance)
        return played[(i, t)]

    def p99(i: int, t: int) -> str:
        lat = play(i, t).latency_ms
        return "n/a" if lat is None else _repr.latency(lat[99.0])

    def fewest(lo: int, hi: int, at: Callable[[int], Tuple[int, int]]) -> Optional[int]:
        """The least x in [lo, hi] whose configuration at(x) meets the bound (None: not even hi)."""
        if not _within(play(*at(hi)), bound_ms):
            return None
        return _smallest(lo, hi, lambda x: _within(play(*at(x)), bound_ms))

    if _within(play(i0, t0), bound_ms):
        return advice, [], True
    i_max = _largest(i0, 10**7, lambda i: _gp3_error(size, i, t0) is None)
    i = fewest(i0, i_max, lambda i: (i, t0))
    if i is not None:
        note = (
            f"IOPS raised from {i0} to {i} for a device p99 within {bound_ms:g} ms ({p99(i, t0)}; "
            f"{p99(i0, t0)} at {i0})"
        )
        return Volume("gp3", size, iops=i, throughput_mib_s=t0), [note], True
    t_max = _largest(t0, 10**6, lambda t: _gp3_error(size, i_max, t) is None)
    t = fewest(t0, t_max, lambda t: (i_max, t))
    if t is not None:
        note = (
            f"IOPS raised from {i0} to {i_max} and throughput from {t0} to {t} MiB/s for a device p99 within "
            f"{bound_ms:g} ms ({p99(i_max, t)}; {p99(i0, t0)} before)"
        )
        return Volume("gp3", size, iops=i_max, throughput_mib_s=t), [note], True
    note = (
        f"no gp3 of {size:g} GiB keeps the device p99 within {bound_ms:g} ms: {p99(i_max, t_max)} at its most "
        f"({i_max} IOPS, {t_max} MiB/s), {p99(i0, t0)} as advised"
    )
    return advice, [note], False


def _observed(trace: OpenLoop, probe: Volume) -> Tuple[float, float]:
    """(p99 EBS-counted IOPS, p99 MiB/s) over the trace's periods, counted as ``probe`` counts."""
    dt = float(trace.dt or 1.0)
    ops = np.asarray(trace.ops, dtype=np.float64)
    nbytes = np.asarray(trace.bytes, dtype=np.float64)
    counted = np.zeros_like(ops)
    busy = ops > 0
    sizes = np.round(nbytes[busy] / ops[busy])
    per_io = {s: probe.counted_ops_per_io(max(float(s), 1.0), trace.pattern) for s in np.unique(sizes)}
    counted[busy] = ops[busy] * np.array([per_io[s] for s in sizes])
    return float(np.percentile(counted / dt, 99)), float(np.percentile(nbytes / dt / 2**20, 99))


def _describe_gp2(v: Volume) -> str:
    if v.max_iops <= v.baseline_iops:
        burst = "never bursts (its baseline is at least its burst rate)"
    else:
        full = burst_duration_s(v, v.max_iops, burst_balance_pct=100.0) / 60.0
        refill = refill_time_s(v, 0.0, burst_balance_pct=0.0) / 60.0
        burst = (
            f"bursts to {v.max_iops:g} IOPS for {full:.0f} min from a full bucket, then {v.baseline_iops:g} "
            f"(refills in {refill:.0f} min at rest)"
        )
    return f"gp2 {v.size_gib:g} GiB: {v.baseline_iops:g} IOPS baseline, {burst}, up to {v.max_throughput_mib_s:g} MiB/s"


def _compare(current: _Outcome, other: _Outcome, what: str) -> str:
    if other.job_minutes is None:
        return f"{what}: the job does not finish within a week"
    if current.job_minutes is None or current.job_minutes == 0:
        return f"{what}: the job takes {other.job_minutes:.0f} min, {other.throttled_minutes:.0f} throttled"
    ratio = other.job_minutes / current.job_minutes
    how = "as fast" if abs(ratio - 1) < 0.01 else f"{ratio:.2f}x the time"
    words = (
        f"{what}: the job takes {other.job_minutes:.0f} min against {current.job_minutes:.0f} ({how}), "
        f"{other.throttled_minutes:.0f} min throttled"
    )
    if other.latency_ms is not None and current.latency_ms is not None:
        words += (
            f", device latency p99 {_repr.latency(other.latency_ms[99.0])} against "
            f"{_repr.latency(current.latency_ms[99.0])}"
        )
    return words


def advise(
    volumes: Mapping[str, Union[Volume, StripedSet]],
    region: str,
    *,
    metrics: Optional["pd.DataFrame"] = None,
    instance: Union[Instance, str, None] = None,
    headroom_pct: float = 20.0,
    job: Optional[BatchJob] = None,
    alarm_minutes: float = 15.0,
    members: Optional[Mapping[str, Sequence[str]]] = None,
    max_in_flight: Union[str, float, None] = "auto",
    p99_ms: Optional[float] = None,
) -> FleetAdvice:
    """Advise gp2 -> gp3 and io1/io2 -> gp3 (or io1 -> io2) migrations, priced in ``region`` and
    checked by replay.

    For each gp2 volume the advice is gp3 at the settings that keep what the volume does:
    without metrics, everything it can do (its baseline or burst IOPS, whichever is higher, and
    its throughput tier); with metrics, the observed 99th percentile of EBS-counted IOPS and of
    MiB/s times ``1 + headroom_pct / 100``; never below gp3's included 3,000 IOPS and 125 MiB/s,
    and within gp3's rules (:func:`gp3_for`). An io1 or io2 volume moves to gp3 on the same
    criteria (without metrics: its provisioned IOPS and the throughput they give) when gp3 can
    provide them in full and costs less; otherwise io1 becomes io2 at its provisioned IOPS and
    io2 stays. Other types are left as they are.

    The load — the CloudWatch metrics replayed (:func:`ebssim.aws.traces`), or the stated
    :class:`BatchJob` — then runs on the current volume, on gp3 with its defaults and on the
    advice, each alone (on its own ``instance`` if one is given): throttled minutes, how long
    the job (the busiest stretch of the metrics, or the batch job) takes and, when the load's
    concurrency is known, the device latency percentiles of its I/Os (:attr:`Scenario.latency_ms`,
    the latency model of docs/model.md). The concurrency (``max_in_flight``) bounds the I/Os the
    application keeps outstanding, so on a slower choice the job takes longer instead of
    queueing at the volume (:meth:`ebssim.Simulation.replay`); without it the load is an
    unbounded queue, whose latency from arrival on a slower choice would be hours of queueing,
    and no latency is reported.

    A striped set (:class:`ebssim.StripedSet`, a ``raid0:`` SPEC) is advised as a whole: its
    members are alike, so each member is advised on these criteria with its share of the job
    (the set's I/Os split by the set's rule, :meth:`ebssim.StripedSet.split`: each member runs the
    job with I/Os of ``piece_bytes`` at its own peak rate), the number of members and the chunk are
    kept, and the set's scenarios are priced as the members' sums
    (:meth:`ebssim.StripedSet.monthly_cost`). With metrics, a set's demand is the sum of its
    members' metrics, period by period (``members`` names their VolumeIds: CloudWatch and
    Prometheus report each member), and each member replays an N-th of it (the set splits its
    I/Os evenly over alike members); or, when ``members`` does not name the set's, its own
    counters under its id (an md device's, from :func:`ebssim.prometheus.read_metrics` with
    ``devices={"md0": SET_ID}``), each period's set I/Os split by the set's rule
    (:meth:`ebssim.StripedSet.member_metrics`, the C++ core's ``stripe_member_trace``: at the
    period's mean I/O size, ``member_share`` times the I/Os, an N-th of the bytes). The advice's
    ``load`` says which.

    Parameters
    ----------
    volumes : dict of str to Volume or StripedSet
        By VolumeId (:func:`ebssim.aws.read_volumes`, :func:`ebssim.k8s.read_manifests`, SPECs).
    region : str
        Where the volumes are priced (:func:`ebssim.cost.prices`).
    metrics : pandas.DataFrame, optional
        CloudWatch metrics (:func:`ebssim.aws.read_metric_data`, ..., or
        :func:`ebssim.aws.metrics_from_wide` of a DataFrame with a column per metric). Every volume needs its
        demand metrics (ValueError naming those without); a gp2 volume starts from its measured
        BurstBalance when the metrics hold it.
    instance : str or Instance, optional
        Each volume runs on its own instance of this type (its EBS limits apply).
    headroom_pct : float
        Added to the observed p99 (default 20 %).
    job : BatchJob, optional
        The synthetic load when there are no metrics (default :class:`BatchJob()`).
    alarm_minutes : float
        Warning a gp2 volume's BurstBalance alarm gives, if it stays gp2: positive and finite
        (default 15 minutes).
    members : dict of str to list of str, optional
        ``{SET_ID: [member VolumeId, ...]}`` for striped sets among ``volumes``: whose metrics
        are the set's members' (one id per member).
    max_in_flight : "auto", "peak", "measured", float or None
        The application's concurrency. ``"auto"`` (default): with metrics, the largest
        ``VolumeQueueLength`` measured, for the volumes whose metrics hold it
        (``ebssim.aws.traces(..., max_in_flight="peak")``: the most the application was seen to
        keep outstanding, so that work a slower choice carries past the job drains at it), none
        for the others; without, the batch job's own (``BatchJob(max_in_flight=...)``).
        ``"peak"``: that, required for every volume (a ValueError names those without).
        ``"measured"``: each period's measured queue instead (carried work then drains at the
        later periods' queue, at least 1). A number: that many I/Os at most, for every volume (a
        striped set with metrics takes ``"auto"``, ``"peak"`` or ``"measured"``: its members'
        bounds differ period by period), or the batch job's. None: no bound (the metrics' load an
        unbounded queue; the batch job's own).
    p99_ms : float, optional
        A bound on the device latency's 99th percentile, ms, on the advice: a gp3 advice whose
        p99 is above it gets more IOPS (the fewest that bring it within), then, at the most IOPS
        its size allows, more throughput; an io1 or io2 volume moves to gp3 only if gp3 meets it
        too. Needs the load's concurrency (a ValueError names the volumes without one). Where
        gp3 cannot meet it, the reason says so, with the p99 at gp3's most.

    Examples
    --------
    The classic case: a 2,000 GiB gp2 database volume (6,000 IOPS, 250 MiB/s) and a 52-minute
    nightly job of 16 KiB reads at its full rate.

    >>> import ebssim
    >>> from ebssim.advise import advise, BatchJob
    >>> fleet = advise({"vol-db": ebssim.gp2(2000)}, "eu-west-1", job=BatchJob(minutes=52))
    >>> db = fleet["vol-db"]
    >>> db.defaults.spec, db.advice.spec
    ('gp3:size=2000,iops=3000,throughput=125', 'gp3:size=2000,iops=6000,throughput=250')
    >>> db.current.job_minutes, db.defaults.job_minutes, db.advice.job_minutes
    (52.0, 104.0, 52.0)
    >>> db.current.monthly_usd, db.defaults.monthly_usd, db.advice.monthly_usd
    (220.0, 176.0, 198.0)
    """
    if not isinstance(volumes, Mapping) or not volumes:
        raise ValueError("volumes must be a non-empty mapping of VolumeId to ebssim.Volume")
    for vid, vol in volumes.items():
        if not isinstance(vol, (Volume, StripedSet)):
            raise ValueError(f"volumes[{vid!r}]={vol!r} must be an ebssim.Volume or ebssim.StripedSet")
    p: RegionPrices = prices(region)
    h = float(headroom_pct) if isinstance(headroom_pct, (int, float)) and not isinstance(headroom_pct, bool) else -1.0
    if not (math.isfinite(h) and 0 <= h <= 1000):
        raise ValueError(f"headroom_pct={headroom_pct!r} must be a percentage between 0 and 1000")
    inst: Optional[Instance] = None
    if instance is not None:
        from ..instances import instance as lookup

        inst = instance if isinstance(instance, Instance) else lookup(instance)
    if job is not None and not isinstance(job, BatchJob):
        raise ValueError(
            f"job={job!r} must be an ebssim.advise.BatchJob (e.g. BatchJob(minutes=60, io_size='16k')), or None"
        )
    batch = job if job is not None else BatchJob()
    mif = _check_in_flight(max_in_flight)
    bound_ms: Optional[float] = None
    if p99_ms is not None:
        bound_ms = real(p99_ms, "p99_ms", "a number of milliseconds")
        if not (math.isfinite(bound_ms) and bound_ms > 0):
            raise ValueError(f"p99_ms={p99_ms!r} must be a positive number of milliseconds (or None)")
    if metrics is None:
        if mif in ("measured", "peak"):
            raise ValueError(
                f"max_in_flight={mif!r} takes the VolumeQueueLength of the metrics: give metrics, or the batch job's "
                "concurrency as a number"
            )
        if isinstance(mif, float):
            if batch.max_in_flight is not None and float(batch.max_in_flight) != mif:
                raise ValueError(
                    f"max_in_flight={max_in_flight!r} contradicts job=BatchJob(max_in_flight={batch.max_in_flight!r}): "
                    "give the job's concurrency once"
                )
            batch = dataclasses.replace(batch, max_in_flight=mif)
    # Checked for every fleet, before any work: not only where a gp2 volume needs an alarm, and
    # not turned into a note of the advice.
    warning = warning_minutes_of(alarm_minutes, "alarm_minutes")
    sets = {vid: v for vid, v in volumes.items() if isinstance(v, StripedSet)}
    named = _members_of(members, sets)
    if sets:
        singles = {vid: v for vid, v in volumes.items() if not isinstance(v, StripedSet)}
        set_loads: Dict[str, Tuple["pd.DataFrame", str]] = {}
        if metrics is not None:
            _check_metrics_frame(metrics)
            aws.check_metrics(metrics)
            for vid, st in sets.items():
                set_loads[vid] = _set_metrics(vid, st, metrics, named.get(vid))
        done: Dict[str, VolumeAdvice] = {}
        if singles:
            done.update(
                (a.volume_id, a)
                for a in advise(
                    singles,
                    p.region,
                    metrics=metrics,
                    instance=inst,
                    headroom_pct=h,
                    job=batch,
                    alarm_minutes=warning,
                    max_in_flight=mif,
                    p99_ms=bound_ms,
                ).volumes
            )
        for vid, st in sets.items():
            done[vid] = _advise_set(vid, st, p, inst, h, batch, warning, set_loads.get(vid), mif, bound_ms)
        return FleetAdvice(
            region=p.region,
            prices_as_of=p.prices_as_of,
            headroom_pct=h,
            volumes=[done[vid] for vid in volumes],
            p99_ms=bound_ms,
        )
    vols: Dict[str, Volume] = {vid: v for vid, v in volumes.items() if isinstance(v, Volume)}  # no sets here
    loads: Dict[str, _Load] = {}
    if metrics is not None:
        _check_metrics_frame(metrics)
        mine = metrics[metrics["volume_id"].isin(list(vols))]
        bounds = _bounds(mine, list(vols), mif)
        found: Dict[str, OpenLoop] = {}
        for bound in {b for b, _ in bounds.values()}:
            ids = [vid for vid, (b, _) in bounds.items() if b == bound]
            some = mine[mine["volume_id"].isin(ids)]
            if len(some):
                found.update(aws.traces(some, gaps="zero", volumes={i: vols[i] for i in ids}, max_in_flight=bound))
        missing = [vid for vid in vols if vid not in found]
        if missing:
            have = sorted(set(metrics["volume_id"])) if "volume_id" in metrics else []
            raise ValueError(
                f"the metrics do not cover {len(missing)} of the volumes: no VolumeReadOps/VolumeWriteOps/"
                f"VolumeReadBytes/VolumeWriteBytes Sum for {', '.join(missing)} (the metrics hold "
                f"{', '.join(have) or 'no volume'})"
            )
        loads = {vid: _metrics_load(found[vid], metrics, vid, bounds[vid][1]) for vid in vols}
    gp3_info = volume_types()["gp3"]
    out: List[VolumeAdvice] = []
    for vid, vol in vols.items():
        load = loads.get(vid) or _job_load(vol, batch)
        if bound_ms is not None and not load.bounded:
            raise ValueError(
                f"p99_ms={bound_ms:g} bounds the device latency, which needs the application's concurrency, and "
                f"{vid}'s load has none ({load.description}): give max_in_flight= (or BatchJob(max_in_flight=)), "
                "or metrics with VolumeQueueLength"
            )
        current = vol
        if load.start_balance is not None and vol.has_bucket:
            current = dataclasses.replace(vol, burst_balance_pct=load.start_balance)
        defaults = Volume("gp3", vol.size_gib)
        notes: List[str] = []
        if vol.type == "gp2":
            if metrics is not None:
                p99_iops, p99_mib = _observed(load.trace, defaults)
                k = 1 + h / 100.0
                basis = (
                    f"observed p99 {p99_iops:.0f} IOPS and {p99_mib:.1f} MiB/s, plus {h:g}% headroom: "
                    f"{p99_iops * k:.0f} IOPS, {p99_mib * k:.1f} MiB/s"
                )
                advice, notes = gp3_for(vol.size_gib, p99_iops * k, p99_mib * k)
            else:
                basis = "to keep all of it on gp3 without a bucket"
                advice, notes = gp3_for(vol.size_gib, max(vol.max_iops, vol.baseline_iops), vol.max_throughput_mib_s)
            if bound_ms is not None:
                advice, more, _ = _for_latency(advice, load, inst, bound_ms)
                notes = [*notes, *more]
            what = _describe_gp2(vol)
        elif vol.type in ("io1", "io2"):
            what = f"{vol.type} {vol.size_gib:g} GiB at {vol.baseline_iops:g} IOPS"
            if vol.type == "io1":
                kept = Volume("io2", vol.size_gib, iops=vol.baseline_iops)
                kept_basis = (
                    "io2 at the same IOPS: same storage price, IOPS priced in cheaper tiers above 32,000, "
                    "99.999% durability"
                )
            else:
                kept, kept_basis = vol, "io2 kept"
            # gp3 is a candidate too, on the criteria gp2's advice uses: what the volume does (the
            # metrics' p99 plus headroom) or, without metrics, everything it can do.
            if metrics is not None:
                p99_iops, p99_mib = _observed(load.trace, defaults)
                k = 1 + h / 100.0
                want = (p99_iops * k, p99_mib * k)
                need = (
                    f"observed p99 {p99_iops:.0f} IOPS and {p99_mib:.1f} MiB/s, plus {h:g}% headroom: "
                    f"{want[0]:.0f} IOPS, {want[1]:.1f} MiB/s"
                )
            else:
                want = (vol.baseline_iops, vol.max_throughput_mib_s)
                need = f"all it can do: {want[0]:g} IOPS, {want[1]:g} MiB/s"
            gp3, gp3_notes = gp3_for(vol.size_gib, *want)
            serves = gp3.baseline_iops >= want[0] - 1e-9 and gp3.max_throughput_mib_s >= want[1] - 1e-9
            if serves and bound_ms is not None:
                gp3, more, serves = _for_latency(gp3, load, inst, bound_ms)
                gp3_notes = [*gp3_notes, *more]
            gp3_usd = monthly_cost(gp3, p).monthly_usd
            kept_usd = monthly_cost(kept, p).monthly_usd
            if serves and gp3_usd < kept_usd:
                advice = gp3
                basis = (
                    f"gp3 serves it ({need}) at {gp3.baseline_iops:g} IOPS, {gp3.max_throughput_mib_s:g} MiB/s, "
                    f"for ${gp3_usd:.2f}/month against ${kept_usd:.2f} as {kept.type} at its IOPS"
                )
                given_up: List[str] = []
                g, c = gp3.service, vol.service
                if (g.read_latency_ms, g.write_latency_ms) != (c.read_latency_ms, c.write_latency_ms):
                    given_up.append(
                        f"unloaded latency {g.read_latency_ms:g} ms read, {g.write_latency_ms:g} ms write against "
                        f"{c.read_latency_ms:g} and {c.write_latency_ms:g}"
                    )
                if vol.type == "io2":
                    given_up.append("io2's 99.999% durability given up")
                if given_up:
                    basis += f" ({'; '.join(given_up)})"
                notes = gp3_notes
            else:
                advice = kept
                why_not = (
                    f"gp3 cannot serve {need}: {'; '.join(gp3_notes)}"
                    if not serves
                    else f"gp3 ({need}) would cost ${gp3_usd:.2f}/month, not less"
                )
                basis = f"{kept_basis}; {why_not}"
        else:
            advice = vol
            what = f"{vol.type} {vol.size_gib:g} GiB"
            basis = (
                "no migration rule for this type (the advisor moves gp2 to gp3, io1 and io2 to gp3 where it "
                "serves, else io1 to io2): kept"
            )
        outcomes = {
            "current": _play(current, load, inst),
            "defaults": _play(defaults, load, inst),
            "advice": _play(advice, load, inst),
        }
        scen = {}
        for name, v in (("current", vol), ("defaults", defaults), ("advice", advice)):
            spec = volume_spec(v)
            scen[name] = Scenario(
                spec=spec,
                volume=v,
                cost=monthly_cost(v, p, spec=spec),
                throttled_minutes=outcomes[name].throttled_minutes,
                job_minutes=outcomes[name].job_minutes,
                latency_ms=outcomes[name].latency_ms,
            )
        a = scen["advice"]
        words = [f"{what}; {basis}"]
        if vol.type == "gp2":
            words.append(f"advice {advice.baseline_iops:g} IOPS, {advice.max_throughput_mib_s:g} MiB/s")
        words.extend(notes)
        words.append(
            _compare(
                outcomes["current"],
                outcomes["defaults"],
                f"gp3 defaults ({gp3_info.default_iops:g} IOPS, {gp3_info.default_throughput_mib_s:g} MiB/s)",
            )
        )
        if a.spec != scen["defaults"].spec:
            words.append(_compare(outcomes["current"], outcomes["advice"], "the advice"))
        if bound_ms is not None and a.p99_ms is not None:
            within = "within" if a.p99_ms <= bound_ms else "above"
            words.append(f"the advice's device p99 {_repr.latency(a.p99_ms)}, {within} the bound of {bound_ms:g} ms")
        words.append(
            f"${a.monthly_usd:.2f}/month against ${scen['current'].monthly_usd:.2f} now "
            f"and ${scen['defaults'].monthly_usd:.2f} with defaults"
        )
        alarm = None
        if vol.type == "gp2":
            rate: Optional[float] = None
            if metrics is not None:
                rate = _observed(load.trace, vol)[0]
                rate = rate if rate > vol.baseline_iops else None
            try:
                alarm = burst_balance_alarm(vol, volume_id=vid, warning_minutes=warning, iops=rate)
            except ValueError as e:
                words.append(f"no BurstBalance alarm: {e}")
        out.append(
            VolumeAdvice(
                volume_id=vid,
                current=scen["current"],
                defaults=scen["defaults"],
                advice=a,
                reason="; ".join(words),
                load=load.description,
                job_bytes=load.job_bytes,
                alarm=alarm,
            )
        )
    return FleetAdvice(region=p.region, prices_as_of=p.prices_as_of, headroom_pct=h, volumes=out, p99_ms=bound_ms)


def _check_in_flight(max_in_flight: Any) -> Union[str, float, None]:
    """``advise``'s ``max_in_flight``, checked: "auto", "measured", a positive number, or None."""
    if max_in_flight is None or max_in_flight in ("auto", "measured", "peak"):
        return max_in_flight  # type: ignore[no-any-return]
    if isinstance(max_in_flight, str):
        raise ValueError(
            f"max_in_flight={max_in_flight!r} must be 'auto', 'peak' (the largest VolumeQueueLength measured), "
            "'measured' (each period's), a number of I/Os or None"
        )
    n = real(max_in_flight, "max_in_flight", "'auto', 'measured', a number of I/Os or None")
    if not (math.isfinite(n) and n > 0):
        raise ValueError(f"max_in_flight={max_in_flight!r} must be a positive number of I/Os")
    return n


def _bounds(
    metrics: "pd.DataFrame", vids: List[str], mif: Union[str, float, None]
) -> Dict[str, Tuple[Union[str, float, None], str]]:
    """Each volume's bound on outstanding I/Os for ``aws.traces``, and the words for it."""
    queued = set(metrics.loc[metrics["metric"] == "VolumeQueueLength", "volume_id"]) if len(metrics) else set()
    measured = "the application's concurrency each period's measured VolumeQueueLength"
    peak = "the application's concurrency the largest VolumeQueueLength measured"
    out: Dict[str, Tuple[Union[str, float, None], str]] = {}
    for vid in vids:
        if mif == "auto":
            out[vid] = (
                ("peak", peak)
                if vid in queued
                else (None, "an unbounded queue (no VolumeQueueLength in the metrics: no device latency)")
            )
        elif mif == "peak":
            out[vid] = ("peak", peak)
        elif mif == "measured":
            out[vid] = ("measured", measured)
        elif mif is None:
            out[vid] = (None, "an unbounded queue (max_in_flight=None: no device latency)")
        else:
            out[vid] = (mif, f"at most {mif:g} I/Os in flight (stated)")
    return out


def _check_metrics_frame(metrics: Any) -> None:
    if not hasattr(metrics, "columns") or "volume_id" not in metrics.columns:
        raise ValueError(
            "metrics must be a metrics DataFrame of ebssim.aws (columns: ebssim.aws.COLUMNS): from its readers, "
            "or ebssim.aws.metrics_from_wide(df, volume_id) of a DataFrame with a column per metric"
        )


def _members_of(members: Any, sets: Mapping[str, StripedSet]) -> Dict[str, List[str]]:
    """``members`` checked: each key a striped set of the volumes, each value one VolumeId per member."""
    if members is None:
        return {}
    if not isinstance(members, Mapping):
        raise ValueError(f"members={members!r} must be a mapping {{SET_ID: [member VolumeId, ...]}}")
    out: Dict[str, List[str]] = {}
    for sid, ids in members.items():
        if sid not in sets:
            raise ValueError(
                f"members[{sid!r}]: {sid!r} is not a striped set among the volumes "
                f"(the sets: {', '.join(map(repr, sets)) or 'none'})"
            )
        try:
            out[sid] = sets[sid]._member_ids(ids)
        except ValueError as e:
            raise ValueError(f"members[{sid!r}]={e}") from None
    return out


def _set_metrics(
    vid: str, st: StripedSet, metrics: "pd.DataFrame", member_ids: Optional[List[str]]
) -> Tuple["pd.DataFrame", str]:
    """One member's demand metrics, under the set's id, and what they came from: the members'
    metrics summed and divided by N, or the set's own counters split by the set's rule
    (:meth:`ebssim.StripedSet.member_metrics`)."""
    try:
        one = st.member_metrics(metrics, vid, member_ids)
    except ValueError as e:
        if member_ids is not None:
            raise ValueError(f"members[{vid!r}]: {e}") from None
        raise ValueError(f"volumes[{vid!r}] is a striped set and {e}") from None
    if member_ids is not None:
        what = (
            f"the set's demand: the sum of its {st.n} members' metrics ({', '.join(member_ids)}), an N-th of it on "
            f"each member"
        )
    else:
        what = (
            f"the set's own counters (under {vid}, e.g. its md device's), each period's I/Os split by the set's "
            f"rule ({st.chunk_kib:g} KiB chunks over {st.n} members)"
        )
    return one, what


def _advise_set(
    vid: str,
    st: StripedSet,
    p: RegionPrices,
    inst: Optional[Instance],
    h: float,
    batch: BatchJob,
    warning: float,
    measured: Optional[Tuple["pd.DataFrame", str]] = None,
    mif: Union[str, float, None] = "auto",
    bound_ms: Optional[float] = None,
) -> VolumeAdvice:
    """A striped set's advice: one member's (alike members, each with its share of the job or of
    the measured demand), the set's N and chunk kept, priced as the members' sums."""
    piece = st.split(batch.io_size).piece_bytes
    member_job = dataclasses.replace(batch, io_size=piece)
    if batch.max_in_flight is not None:  # each member's share of the job's I/Os in flight: the set's rule
        loop = ClosedLoop(batch.max_in_flight, batch.io_size, read_fraction=batch.read_fraction, pattern=batch.pattern)
        member_loop = st.member_workload(loop)
        assert isinstance(member_loop, ClosedLoop)  # a set's closed loop is a member's closed loop
        member_job = dataclasses.replace(member_job, max_in_flight=member_loop.in_flight)
    if measured is not None and isinstance(mif, float):
        raise ValueError(
            f"volumes[{vid!r}] is a striped set: max_in_flight={mif:g} cannot bound its members, whose share of the "
            "set's I/Os in flight changes with each period's I/O size; use 'auto', 'peak' or 'measured' (the "
            "members' VolumeQueueLength), or None"
        )
    one = advise(
        {vid: st.members[0]},
        p.region,
        metrics=None if measured is None else measured[0],
        instance=inst,
        headroom_pct=h,
        job=member_job,
        alarm_minutes=warning,
        max_in_flight="auto" if measured is None else mif,
        p99_ms=bound_ms,
    )[vid]

    def whole(sc: Scenario) -> Scenario:
        s = striped([sc.volume] * st.n, st.chunk_kib)
        spec = target_spec(s)
        return Scenario(
            spec=spec,
            volume=sc.volume,
            cost=s.monthly_cost(p, spec=spec),
            throttled_minutes=sc.throttled_minutes,
            job_minutes=sc.job_minutes,
            stripe=s,
            latency_ms=sc.latency_ms,
        )

    current, defaults, adv = whole(one.current), whole(one.defaults), whole(one.advice)
    share = (
        f"each member runs its share of the job, {piece:g}-byte pieces"
        if measured is None
        else "each member runs its share of the measured demand"
    )
    reason = (
        f"RAID-0 of {st.n} members, {st.chunk_kib:g} KiB chunks, advised as its members ({st.n} and the chunk kept; "
        f"{share}): each member: {one.reason}; the set: "
        f"${adv.monthly_usd:.2f}/month against ${current.monthly_usd:.2f} now and ${defaults.monthly_usd:.2f} with "
        f"defaults"
    )
    load = (
        f"{batch.describe()} on the set; each member: {one.load}"
        if measured is None
        else f"{measured[1]}; each member: {one.load}"
    )
    return VolumeAdvice(
        volume_id=vid,
        current=current,
        defaults=defaults,
        advice=adv,
        reason=reason,
        load=load,
        job_bytes=one.job_bytes * st.n,
        alarm=one.alarm,
    )
