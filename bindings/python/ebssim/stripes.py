"""Striped sets: a RAID-0 (Linux md, LVM striping, the storage behind an RDS instance) of alike
volumes as one target, with a chunk size.

The rule for what each member receives from the set's I/O is the C++ core's (``stripe_split``,
``stripe_member_loop``, ``stripe_member_trace`` in ``libebssim/include/ebssim/stripe.hpp``;
docs/model.md, "Striped sets"): an I/O splits at every chunk boundary it crosses, each piece is an
I/O of the member holding it (counted by that member's rule), random I/O spreads evenly over the
members, a closed loop on the set puts ``in_flight x pieces / members`` I/Os in flight on each
member, and a trace gives each member, step by step, ``pieces / members`` I/Os per set I/O at the
step's mean size and an N-th of the bytes. The members run as volumes of one
:class:`~ebssim.Simulation`, sharing the instance.

>>> import ebssim
>>> md0 = ebssim.striped([ebssim.gp3(202, iops=4000, throughput_mib_s=1000)] * 2, chunk_kib=512)
>>> print(md0)
RAID-0 of 2 x gp3 202 GiB (4000 IOPS, 1000 MiB/s), 512 KiB chunks
>>> md0.max_iops, md0.max_throughput_mib_s      # the members' sums
(8000.0, 2000.0)
>>> r = md0.simulate(ebssim.ClosedLoop(256, "4k", read_fraction=0), duration_s=10)
>>> r.members[0].workload.in_flight              # 256 x 1 piece / 2 members
128.0
>>> float(r.iops[0])                             # each member at its 4,000 IOPS: 2 x 4,000
8000.0
>>> round(float(r.latency_ms[0]), 1)             # Little's law on a member: 128 / 4,000 s
32.0
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    import pandas as pd

import numpy as np
import numpy.typing as npt

from . import _core, _repr
from ._targets import VolumeGroup
from ._units import SizeLike, parse_size, real
from .cost import Cost, RegionPrices, monthly_cost
from .instances import Instance
from .results import RunResult, VolumeResult, WindowStats
from .simulation import Simulation
from .volumes import Volume, _from_spec, volume_spec
from .workloads import ClosedLoop, Idle, OpenLoop, PiecewiseOpenLoop, Workload

__all__ = ["StripedSet", "StripedResult", "striped", "target_from_spec", "target_spec", "STRIPE_SPEC_FORM"]

FloatArray = npt.NDArray[np.float64]

#: mdadm's default chunk when it creates an array, KiB (mdadm(8), ``--chunk``), from the C++ core.
DEFAULT_CHUNK_KIB = _core.DEFAULT_STRIPE_CHUNK_BYTES / 1024


SetWorkload = Union[ClosedLoop, OpenLoop, PiecewiseOpenLoop, Idle]


def _bound(member: FloatArray, unbounded: bool) -> Union[float, FloatArray, None]:
    """A member trace's max_in_flight from the core's: None (no bound), one value, or one per step."""
    if unbounded:
        return None
    return float(member[0]) if member.shape[0] == 1 else member


def _split(io_bytes: float, chunk_bytes: float, members: int, align_bytes: float = 0.0) -> _core.StripeSplit:
    return _core.stripe_split(io_bytes, chunk_bytes, members, align_bytes)


@dataclass(frozen=True, eq=True)
class StripedSet(VolumeGroup):
    """A RAID-0 of alike volumes with chunks of ``chunk_kib`` KiB: one target for a workload.

    ``members`` are :class:`~ebssim.Volume` objects of one configuration (type, size, IOPS,
    throughput, starting BurstBalance, latency parameters): md and LVM stripe the same amount of
    each member, and the model's closed loop spreads the set's I/Os evenly (docs/model.md,
    "Striped sets"); members that differ are a ValueError naming the first difference. The chunk
    is a positive multiple of 4 KiB (mdadm's rule for RAID-0; LVM's power-of-2 stripe sizes are
    among them). Prices, limits and sizes are the members' sums (:attr:`max_iops`, ...).

    A set is also a target of a :class:`~ebssim.Simulation` beside plain volumes, by name
    (``Simulation({"md0": md0, "log": ebssim.gp3(50)}, instance=...)``): its members and the
    volumes share the instance in one run, and the run gives the set a :class:`StripedResult`.
    """

    members: Tuple[Volume, ...]
    chunk_kib: float = DEFAULT_CHUNK_KIB
    _chunk_bytes: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.members, (Volume, str)) or not isinstance(self.members, (list, tuple)):
            raise ValueError(f"members={self.members!r} must be a list of ebssim.Volume, e.g. [ebssim.gp3(100)] * 2")
        vols = tuple(self.members)
        if not vols:
            raise ValueError("members is empty: a striped set needs at least one volume")
        for i, v in enumerate(vols):
            if not isinstance(v, Volume):
                raise ValueError(f"members[{i}] must be an ebssim.Volume, got {type(v).__name__}")
        first = volume_spec(vols[0])
        for i, v in enumerate(vols[1:], start=1):
            # Alike: the same SPEC (type, size, provisioned figures, BurstBalance, latency keys) and transfer rate.
            if volume_spec(v) != first or v.transfer_mib_s != vols[0].transfer_mib_s:
                raise ValueError(
                    f"members[{i}]={volume_spec(v)!r} differs from members[0]={first!r}: a striped set's members "
                    f"must be alike (md and LVM stripe the same share of each; the model spreads the set's I/Os "
                    f"evenly over them)"
                )
        chunk = real(self.chunk_kib, "chunk_kib", "a chunk size in KiB")
        try:
            _split(4096.0, chunk * 1024, len(vols))
        except ValueError as e:
            raise ValueError(f"chunk_kib={self.chunk_kib!r}: {e}") from None
        object.__setattr__(self, "members", vols)
        object.__setattr__(self, "chunk_kib", chunk)
        object.__setattr__(self, "_chunk_bytes", chunk * 1024)

    @property
    def n(self) -> int:
        """Number of members."""
        return len(self.members)

    @property
    def chunk_bytes(self) -> float:
        return self._chunk_bytes

    @property
    def size_gib(self) -> float:
        """Capacity: the members' sizes summed."""
        return float(sum(v.size_gib for v in self.members))

    @property
    def baseline_iops(self) -> float:
        """The members' baseline IOPS summed (counted I/Os)."""
        return float(sum(v.baseline_iops for v in self.members))

    @property
    def max_iops(self) -> float:
        """The members' maximum IOPS summed (burst for gp2)."""
        return float(sum(v.max_iops for v in self.members))

    @property
    def max_throughput_mib_s(self) -> float:
        """The members' throughput caps summed, MiB/s."""
        return float(sum(v.max_throughput_mib_s for v in self.members))

    @property
    def baseline_throughput_mib_s(self) -> float:
        """The members' baseline throughput summed, MiB/s."""
        return float(sum(v.baseline_throughput_mib_s for v in self.members))

    def split(self, io_size: SizeLike, align: Optional[SizeLike] = None) -> _core.StripeSplit:
        """What one set I/O of ``io_size`` becomes on the members (the C++ core's ``stripe_split``):
        ``pieces_per_io`` (member I/Os per set I/O), ``piece_bytes`` and ``member_share``
        (``pieces_per_io / n``: each member's share of the set's I/Os in flight).

        Offsets are multiples of ``align`` (default: the I/O size, as fio's ``blockalign``).

        >>> import ebssim
        >>> s = ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=256).split("1m")
        >>> s.pieces_per_io, s.piece_bytes, s.member_share   # 4 chunks of 256 KiB, 2 on each member
        (4.0, 262144.0, 2.0)
        """
        b = parse_size(io_size)
        a = 0.0 if align is None else parse_size(align, "align")
        return _split(b, self._chunk_bytes, self.n, a)

    def member_workload(self, workload: SetWorkload) -> SetWorkload:
        """The workload each member runs for ``workload`` on the set: for a :class:`ClosedLoop`
        (the C++ core's ``stripe_member_loop``), a closed loop with ``in_flight x member_share``
        I/Os of ``piece_bytes``; for a trace (:class:`OpenLoop`, :class:`PiecewiseOpenLoop`; the
        core's ``stripe_member_trace``), in each step ``ops x member_share`` I/Os at the step's
        mean I/O size and an N-th of the bytes, reads and writes each at their own size when the
        trace has ``read_ops``, and a bound ``max_in_flight x member_share`` on outstanding I/Os;
        :class:`Idle` stays Idle. Phased and shared loops on a set are a ValueError.

        >>> import ebssim
        >>> md0 = ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=256)
        >>> one = md0.member_workload(ebssim.OpenLoop.constant(1000, "1m", 2, max_in_flight=16))
        >>> one.ops.tolist(), one.bytes.tolist(), one.max_in_flight   # 4 pieces, 2 on each: 1,000 x 2
        ([2000.0, 2000.0], [524288000.0, 524288000.0], 32.0)
        """
        if isinstance(workload, Idle):
            return workload
        if isinstance(workload, OpenLoop):
            return self._member_trace(workload)
        if isinstance(workload, PiecewiseOpenLoop):
            return self._member_piecewise(workload)
        if not isinstance(workload, ClosedLoop):
            raise ValueError(
                f"workload={type(workload).__name__}: a striped set runs a ClosedLoop, an OpenLoop or "
                f"PiecewiseOpenLoop trace, or Idle (phased and shared loops on a striped set are not modelled yet)"
            )
        m = _core.stripe_member_loop(workload._native, self._chunk_bytes, self.n)
        return ClosedLoop(
            in_flight=m.in_flight,
            io_size=m.io_bytes,
            read_fraction=m.read_fraction,
            pattern=workload.pattern,
            service_time_ms=workload.service_time_ms,
            think_time_ms=workload.think_time_ms,
            counted_per_io=None if math.isnan(m.counted_per_io) else m.counted_per_io,
        )

    def _split_trace(self, w: OpenLoop) -> _core.StripeMemberTrace:
        bound = None if w.max_in_flight is None else np.atleast_1d(np.asarray(w.max_in_flight, dtype=np.float64))
        return _core.stripe_member_trace(
            w.ops, w.bytes, self._chunk_bytes, self.n, max_in_flight=bound, read_ops=w.read_ops, read_bytes=w.read_bytes
        )

    def _member_trace(self, w: OpenLoop) -> OpenLoop:
        t = self._split_trace(w)
        kwargs = {f.name: getattr(w, f.name) for f in dataclasses.fields(w) if f.init}
        kwargs.update(ops=t.ops, bytes=t.bytes, max_in_flight=_bound(t.max_in_flight, w.max_in_flight is None))
        if w.read_ops is not None:
            kwargs.update(read_ops=t.read_ops, read_bytes=t.read_bytes, read_fraction=1.0)
        return OpenLoop(**kwargs)

    def _member_piecewise(self, w: PiecewiseOpenLoop) -> PiecewiseOpenLoop:
        bound = None if w.max_in_flight is None else [float(w.max_in_flight)]
        t = _core.stripe_member_trace(w.iops, w.bytes_per_s, self._chunk_bytes, self.n, max_in_flight=bound)
        if t.max_in_flight.shape[0] > 1:
            raise ValueError(
                f"max_in_flight={w.max_in_flight!r} on a striped set with segments of I/O sizes that split "
                f"differently: each member's bound would change from segment to segment (max_in_flight x "
                f"member_share), which a PiecewiseOpenLoop cannot hold; give the trace as an OpenLoop (a bound per "
                f"step)"
            )
        return PiecewiseOpenLoop(
            w.change_s,
            t.ops,
            bytes_per_s=t.bytes,
            duration_s=w.duration_s,
            read_fraction=w.read_fraction,
            pattern=w.pattern,
            service_time_ms=w.service_time_ms,
            max_in_flight=None if w.max_in_flight is None else float(t.max_in_flight[0]),
        )

    def simulate(
        self,
        workload: SetWorkload,
        duration_s: Optional[float] = None,
        *,
        dt: Optional[float] = None,
        instance: Union[Instance, str, None] = None,
        record: bool = True,
    ) -> "StripedResult":
        """Run ``workload`` on the set from a fresh state: its members as the volumes of one
        :class:`~ebssim.Simulation` (sharing ``instance``'s EBS budget), each running
        :meth:`member_workload`. Returns a :class:`StripedResult` (per member and for the set).
        ``dt`` defaults to an :class:`OpenLoop` trace's own step, else 1 s; ``duration_s`` may be
        left out for an OpenLoop (its length)."""
        if not isinstance(workload, OpenLoop):
            self.member_workload(workload)  # a workload the set cannot run, named as the set's
        step = dt if dt is not None else (workload.dt if isinstance(workload, OpenLoop) and workload.dt else 1.0)
        sim = Simulation({"set": self}, dt=step, instance=instance)
        out = sim.run({"set": workload}, duration_s, record=record)["set"]
        assert isinstance(out, StripedResult)
        return out

    def _member_workloads(self, workload: Any) -> List[Workload]:
        return [self.member_workload(workload)] * self.n

    def _group_result(self, workload: Any, run: RunResult) -> "StripedResult":
        split = self.split(workload.io_bytes) if isinstance(workload, ClosedLoop) else None
        return StripedResult(self, workload, split, run)

    def _member_ids(self, ids: Any) -> List[str]:
        """``ids`` checked as the VolumeIds of the set's members: a list of non-empty strings, one
        per member, each once (a ValueError beginning with ``ids`` shown, for the caller to
        prefix with where they came from)."""
        if isinstance(ids, str) or not isinstance(ids, Sequence) or not all(isinstance(i, str) and i for i in ids):
            raise ValueError(f"{ids!r} must be a list of the members' VolumeIds")
        if len(ids) != self.n or len(set(ids)) != self.n:
            raise ValueError(
                f"{list(ids)!r} must name each of the set's {self.n} members once ({len(set(ids))} distinct ids given)"
            )
        return list(ids)

    def member_metrics(
        self, metrics: "pd.DataFrame", set_id: str, members: Optional[Sequence[str]] = None
    ) -> "pd.DataFrame":
        """One member's demand, as CloudWatch metrics under ``set_id``, from measured metrics
        (:mod:`ebssim.aws`'s frame; :func:`ebssim.prometheus.read_metrics` gives the same).

        With ``members`` (each member's VolumeId, once): the set's demand is its members'
        VolumeReadOps/WriteOps/ReadBytes/WriteBytes Sums added period by period, and each member
        takes an N-th of it (the set spreads its I/Os evenly over alike members); BurstBalance is
        the emptiest member's. Without: the set's own counters under ``set_id`` (an md device's),
        each period's I/Os split by the set's rule (:meth:`split` of the period's mean I/O size:
        ``member_share`` times the I/Os, an N-th of the bytes). A ValueError names what the
        metrics lack.

        ``VolumeQueueLength``, where the metrics have it, follows: the members' mean, or the set's
        own times the period's share of its I/Os on a member (the core's bound on a member,
        ``stripe_member_trace``), so that ``ebssim.aws.replay(..., max_in_flight="measured")``
        bounds each member by its part of the application's outstanding I/Os.

        >>> import pandas as pd, ebssim
        >>> md0 = ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=256)
        >>> idx = pd.date_range("2024-05-01", periods=2, freq="1min", tz="UTC")  # the set's own counters
        >>> wide = pd.DataFrame({"VolumeReadOps": 600.0, "VolumeReadBytes": 600.0 * 2**20,
        ...                      "VolumeWriteOps": 0.0, "VolumeWriteBytes": 0.0}, index=idx)
        >>> vid = "vol-0123456789abcdef0"
        >>> one = md0.member_metrics(ebssim.aws.metrics_from_wide(wide, vid), vid)
        >>> minute = one[one.timestamp == idx[0]].set_index("metric")["value"]
        >>> float(minute["VolumeReadOps"])          # 1 MiB I/Os: 4 chunks, 2 on each member: 600 x 2
        1200.0
        >>> float(minute["VolumeReadBytes"]) / 2**20  # 600 MiB / 2
        300.0
        """
        import pandas as pd

        from . import aws

        demand = list(aws.DEMAND_METRICS)
        sums = metrics[metrics["metric"].isin(demand) & (metrics["stat"] == "Sum")]
        keys = ["timestamp", "metric", "stat", "period_s", "unit"]
        if members is not None:
            try:
                ids = self._member_ids(members)
            except ValueError as e:
                raise ValueError(f"members={e}") from None
            mine = sums[sums["volume_id"].isin(ids)]
            lack = [m for m in ids if not (mine["volume_id"] == m).any()]
            if lack:
                have = sorted(set(metrics["volume_id"]))
                raise ValueError(
                    f"the metrics hold no VolumeReadOps/VolumeWriteOps/VolumeReadBytes/VolumeWriteBytes Sum of "
                    f"{', '.join(lack)} (they hold {', '.join(have) or 'no volume'})"
                )
            # The set's demand is the members' sum; alike members each take an N-th of it.
            one = mine.groupby(keys, as_index=False)["value"].sum().assign(volume_id=set_id)
            one["value"] = one["value"] / self.n
            balance = metrics[metrics["volume_id"].isin(ids) & (metrics["metric"] == "BurstBalance")]
            if len(balance):  # the emptiest member's bucket
                one = pd.concat(
                    [one, balance.groupby(keys, as_index=False)["value"].min().assign(volume_id=set_id)],
                    ignore_index=True,
                )
            queue = metrics[metrics["volume_id"].isin(ids) & (metrics["metric"] == "VolumeQueueLength")]
            if len(queue):  # alike members: each one's outstanding I/Os, the members' mean
                one = pd.concat(
                    [one, queue.groupby(keys, as_index=False)["value"].mean().assign(volume_id=set_id)],
                    ignore_index=True,
                )
            return aws.check_metrics(one[list(aws.COLUMNS)])
        own = sums[sums["volume_id"] == set_id]
        if own.shape[0] == 0:
            raise ValueError(
                f"the metrics hold neither its members' (name them: members=[VolumeId, ...]) nor its own under "
                f"{set_id!r} (e.g. its md device's from ebssim.prometheus, devices={{'md0': {set_id!r}}})"
            )
        wide = own.pivot(index="timestamp", columns="metric", values="value").reindex(columns=demand).fillna(0.0)
        period = float(own["period_s"].iloc[0])
        parts = []
        for ops_m, bytes_m in (("VolumeReadOps", "VolumeReadBytes"), ("VolumeWriteOps", "VolumeWriteBytes")):
            # Each period's I/Os at its mean size, by the core's rule (stripe_member_trace).
            try:
                t = _core.stripe_member_trace(
                    wide[ops_m].to_numpy(np.float64), wide[bytes_m].to_numpy(np.float64), self._chunk_bytes, self.n
                )
            except ValueError as e:
                raise ValueError(f"the metrics of {set_id!r}, {ops_m} and {bytes_m} per period: {e}") from None
            for metric, values, unit in ((ops_m, t.ops, "Count"), (bytes_m, t.bytes, "Bytes")):
                parts.append(
                    pd.DataFrame(
                        {
                            "timestamp": wide.index,
                            "volume_id": set_id,
                            "metric": metric,
                            "stat": "Sum",
                            "period_s": period,
                            "unit": unit,
                            "value": values,
                        }
                    )
                )
        queue = metrics[(metrics["volume_id"] == set_id) & (metrics["metric"] == "VolumeQueueLength")]
        for (qstat, qperiod, qunit), rows in queue.groupby(["stat", "period_s", "unit"]):
            # The set's outstanding I/Os on one member: the core's bound of a set's trace on a member.
            qs = rows.set_index("timestamp")["value"].reindex(wide.index).to_numpy(np.float64)
            have = ~np.isnan(qs)
            try:
                t = _core.stripe_member_trace(
                    (wide["VolumeReadOps"] + wide["VolumeWriteOps"]).to_numpy(np.float64)[have],
                    (wide["VolumeReadBytes"] + wide["VolumeWriteBytes"]).to_numpy(np.float64)[have],
                    self._chunk_bytes,
                    self.n,
                    max_in_flight=np.maximum(qs[have], 1e-300),  # a bound > 0; an empty queue stays 0 below
                    read_ops=wide["VolumeReadOps"].to_numpy(np.float64)[have],
                    read_bytes=wide["VolumeReadBytes"].to_numpy(np.float64)[have],
                )
            except ValueError as e:
                raise ValueError(f"the metrics of {set_id!r}, VolumeQueueLength per period: {e}") from None
            per = np.broadcast_to(np.asarray(t.max_in_flight, dtype=np.float64), (int(have.sum()),))
            parts.append(
                pd.DataFrame(
                    {
                        "timestamp": wide.index[have],
                        "volume_id": set_id,
                        "metric": "VolumeQueueLength",
                        "stat": qstat,
                        "period_s": qperiod,
                        "unit": qunit,
                        "value": np.where(qs[have] > 0, per, 0.0),
                    }
                )
            )
        out = pd.concat(parts, ignore_index=True).sort_values("timestamp", kind="stable", ignore_index=True)
        return aws.check_metrics(out[list(aws.COLUMNS)])

    def monthly_cost(self, region: Union[str, RegionPrices], *, spec: Optional[str] = None) -> Cost:
        """Monthly list price of the set: the sum of its members' (:func:`ebssim.cost.monthly_cost`).

        >>> import ebssim
        >>> md0 = ebssim.striped([ebssim.gp3(202, iops=4000, throughput_mib_s=1000)] * 2)
        >>> md0.monthly_cost("us-east-1").monthly_usd   # 2 x (202 x 0.08 + 1,000 x 0.005 + 875 x 0.04)
        112.32
        """
        one = monthly_cost(self.members[0], region)
        return Cost(
            region=one.region,
            spec=target_spec(self) if spec is None else spec,
            monthly_usd=float(Decimal(repr(one.monthly_usd)) * self.n),
            breakdown={k: float(Decimal(repr(v)) * self.n) for k, v in one.breakdown.items()},
            prices_as_of=one.prices_as_of,
        )

    def __str__(self) -> str:
        v = self.members[0]
        return f"RAID-0 of {self.n} x {v}, {self.chunk_kib:g} KiB chunks"


def striped(members: Sequence[Volume], chunk_kib: float = DEFAULT_CHUNK_KIB) -> StripedSet:
    """A :class:`StripedSet`: a RAID-0 (md or LVM) of alike ``members`` with ``chunk_kib`` KiB
    chunks (default 512, mdadm's default).

    >>> import ebssim
    >>> print(ebssim.striped([ebssim.gp2(500)] * 4, chunk_kib=64))
    RAID-0 of 4 x gp2 500 GiB (1500 IOPS baseline, burst 3000, 250 MiB/s), 64 KiB chunks
    >>> ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=6)
    Traceback (most recent call last):
      ...
    ValueError: chunk_kib=6: chunk_bytes=6144 must be a multiple of 4 KiB (4096 bytes): mdadm's rule ...
    """
    vols: Any = tuple(members) if isinstance(members, (list, tuple)) else members  # anything else: a named error
    return StripedSet(vols, chunk_kib)


class StripedResult:
    """A run on a :class:`StripedSet`: each member's :class:`~ebssim.VolumeResult` and the set's figures.

    A set I/O completes when its slowest piece does: per step the set completes
    ``min(member IOPS) / member_share`` I/Os (the slowest member in chunk terms), moves that
    times the I/O size, and its latency is the slowest member's (with alike members, a member's).
    For a trace (:class:`OpenLoop`, :class:`PiecewiseOpenLoop`) ``member_share`` is that of the
    step's arrivals (of the last step with arrivals where none arrive: the backlog served is
    theirs; exact for a trace of one I/O size), and the set moves N times the slowest member's bytes.
    """

    def __init__(self, stripe: StripedSet, workload: Any, split: Optional[_core.StripeSplit], run: RunResult) -> None:
        self.set = stripe
        self.workload = workload
        self.split = split
        self.run = run
        self.members: Tuple[VolumeResult, ...] = tuple(run[i] for i in range(stripe.n))
        self.instance = run.instance
        self._trace: Optional[Tuple[FloatArray, float]] = None

    def _is_trace(self) -> bool:
        return isinstance(self.workload, (OpenLoop, PiecewiseOpenLoop))

    def _trace_shares(self) -> Tuple[FloatArray, float]:
        """For a trace on the set: the member I/Os per set I/O of each recorded value (the
        arrivals' within it, the core's ``stripe_member_trace``; where none arrived, the last
        ones', whose backlog is then served) and over the run (the arrivals' of the whole run)."""
        if self._trace is None:
            m0 = self.members[0]
            n, every = m0.n_steps, m0.record_every
            # the recorded intervals' first steps, the run's end (no interval when not recorded)
            bounds = np.append(np.minimum(np.arange(m0.n_values, dtype=np.int64) * every, n), n)
            w = self.workload
            if isinstance(w, OpenLoop):
                t = self.set._split_trace(w)
                cs = np.concatenate([[0.0], np.cumsum(w.ops)])
                cm = np.concatenate([[0.0], np.cumsum(t.ops)])
                k = np.minimum(bounds, cs.shape[0] - 1)
                at_s, at_m = cs[k], cm[k]
            else:
                t = _core.stripe_member_trace(w.iops, w.bytes_per_s, self.set.chunk_bytes, self.set.n)
                knots = np.append(np.minimum(w.change_steps(m0.dt_s), n), n).astype(np.float64)
                steps = np.diff(knots) * m0.dt_s  # seconds of each segment within the run
                at_s = np.interp(bounds, knots, np.concatenate([[0.0], np.cumsum(w.iops * steps)]))
                at_m = np.interp(bounds, knots, np.concatenate([[0.0], np.cumsum(t.ops * steps)]))
            ds, dm = np.diff(at_s), np.diff(at_m)
            if m0.n_values == 0:
                ds, dm = ds[:0], dm[:0]
            share = np.full(ds.shape[0], np.nan)
            np.divide(dm, ds, out=share, where=ds > 0)
            # where none arrived, the last arrivals' share (the first one's before them): the core's rule
            share = np.asarray(_core.carried_member_shares(share, self.set.n), dtype=np.float64)
            total = float(at_m[-1] / at_s[-1]) if at_s[-1] > 0 else 1.0 / self.set.n
            self._trace = (share, total)
        return self._trace

    @property
    def time_s(self) -> FloatArray:
        return self.members[0].time_s

    @property
    def iops(self) -> FloatArray:
        """Set I/Os completed per second, per step. When the members ran workloads of their own
        (a replay of their metrics) how many set I/Os they make up is not known: NaN in the steps
        where a member completed any (0 where none did, as in a rest)."""
        each = np.vstack([np.asarray(m.iops, dtype=np.float64) for m in self.members])
        if self._is_trace():
            traced: FloatArray = np.min(each, axis=0) / self._trace_shares()[0]
            return traced
        if self.split is None:
            return np.where((each == 0).all(axis=0), 0.0, np.nan)
        slowest = np.min(each, axis=0)
        out: FloatArray = slowest / self.split.member_share
        return out

    @property
    def throughput_mib_s(self) -> FloatArray:
        """Set throughput, MiB/s, per step (for a trace: the slowest member's times N, each
        member moving an N-th of the set's bytes)."""
        if self._is_trace():
            each = np.vstack([np.asarray(m.throughput_mib_s, dtype=np.float64) for m in self.members])
            out: FloatArray = np.min(each, axis=0) * self.set.n
            return out
        size = self.workload.io_bytes if isinstance(self.workload, ClosedLoop) else 0.0
        return self.iops * size / 2**20

    @property
    def latency_s(self) -> FloatArray:
        """Mean latency of the set's I/Os per step: the slowest member's, seconds."""
        out: FloatArray = np.max(np.vstack([np.asarray(m.latency_s, dtype=np.float64) for m in self.members]), axis=0)
        return out

    @property
    def latency_ms(self) -> FloatArray:
        return self.latency_s * 1e3

    @property
    def mean_iops(self) -> float:
        """Set I/Os completed per second over the run, from the members' totals (no series needed):
        the slowest member's mean IOPS over ``member_share`` (for a trace, the run's: its member
        I/Os over its set I/Os); NaN (or 0) as for :attr:`iops`."""
        if self._is_trace():
            return min(m.mean_iops for m in self.members) / self._trace_shares()[1]
        if self.split is None:
            return 0.0 if all(m.mean_iops == 0 for m in self.members) else math.nan
        return min(m.mean_iops for m in self.members) / self.split.member_share

    @property
    def mean_latency_ms(self) -> float:
        """Mean latency over the run, ms: the slowest member's (NaN when a member completed nothing)."""
        ms = [m.mean_latency_ms for m in self.members]
        return math.nan if any(math.isnan(x) for x in ms) else max(ms)

    @property
    def cliff_time_s(self) -> Optional[float]:
        """When the first member's bucket ran dry (None: none did)."""
        times: List[float] = [m.cliff_time_s for m in self.members if m.cliff_time_s is not None]
        return min(times) if times else None

    def window(self, start_s: float, end_s: float) -> WindowStats:
        """The set's mean IOPS, throughput and I/O-weighted latency over steps starting in [start_s, end_s)."""
        self.members[0].window(start_s, end_s)  # the same checks (recorded, a step in the window) and errors
        t = self.time_s
        k = (t >= start_s) & (t < end_s)
        ops = self.iops[k]
        lat = self.latency_s[k]
        served = float(ops.sum())
        done = ops > 0  # a step that completed nothing has no latency (NaN), and weighs nothing
        latency = float((lat[done] * ops[done]).sum() / served) * 1e3 if served > 0 else math.nan
        return WindowStats(
            iops=float(ops.mean()), throughput_mib_s=float(self.throughput_mib_s[k].mean()), latency_ms=latency
        )

    def _figures(self) -> List[Tuple[str, str]]:
        t = self.time_s
        dt = float(t[1] - t[0]) if len(t) > 1 else float("nan")
        ops = self.iops
        served = float(ops.sum())
        done = ops > 0  # a step that completed nothing has no latency (NaN), and weighs nothing
        mean_ms = float((self.latency_s[done] * ops[done]).sum() / served) * 1e3 if served > 0 else math.nan
        cliff = self.cliff_time_s
        return [
            ("set", f"{self.set.n} x {self.set.members[0]} in RAID-0, {self.set.chunk_kib:g} KiB chunks"),
            ("run", _repr.steps(len(t), dt) if len(t) > 1 else f"{len(t)} step"),
            ("IOPS", f"{_repr.number(float(ops.mean()))} mean"),
            ("throughput", f"{_repr.number(float(self.throughput_mib_s.mean()))} MiB/s mean"),
            ("latency", f"{_repr.latency(mean_ms)} mean"),
            ("first member cliff", "none" if cliff is None else _repr.duration(cliff)),
        ]

    def __repr__(self) -> str:
        return _repr.short_repr("StripedResult", [f"{k} {v}" for k, v in self._figures()])

    def _repr_html_(self) -> str:
        return _repr.html_table("StripedResult", self._figures())


# --------------------------------------------------------------------------------------------
# SPEC: a striped target for `ebssim fio --volume TARGET=SPEC`
# --------------------------------------------------------------------------------------------

#: The striped SPEC form (next to the volume SPEC ``TYPE[:key=value,...]``).
STRIPE_SPEC_FORM = "raid0[:chunk=KIB,members=N]+SPEC[+SPEC...], e.g. raid0:chunk=512+gp3:size=200+gp3:size=200"
_STRIPE_KEYS = {"chunk": "KiB", "members": ""}
_NUMBER = re.compile(r"([0-9]+(?:\.[0-9]+)?)(.*)", re.ASCII | re.DOTALL)


def target_from_spec(spec: str) -> Union[Volume, StripedSet]:
    """A volume (``TYPE[:key=value,...]``, :func:`ebssim.volumes.volume_from_spec`) or a striped
    set: ``raid0[:chunk=KIB,members=N]+SPEC[+SPEC...]``.

    A striped set names its members, each a volume SPEC after a ``+``; ``members=N`` with one
    SPEC is N copies of it. ``chunk`` is in KiB (``chunk=512`` or ``chunk=512KiB``; default
    512, mdadm's). The members must be alike (:class:`StripedSet`).

    >>> from ebssim.stripes import target_from_spec
    >>> gp3 = "gp3:size=202,iops=4000,throughput=1000"
    >>> print(target_from_spec(f"raid0:chunk=512+{gp3}+{gp3}"))
    RAID-0 of 2 x gp3 202 GiB (4000 IOPS, 1000 MiB/s), 512 KiB chunks
    >>> print(target_from_spec("raid0:members=4+gp2:size=500"))
    RAID-0 of 4 x gp2 500 GiB (1500 IOPS baseline, burst 3000, 250 MiB/s), 512 KiB chunks
    >>> target_from_spec("raid0:members=3+gp3+gp3")
    Traceback (most recent call last):
      ...
    ValueError: SPEC 'raid0:members=3+gp3+gp3': members=3 but 2 member SPECs are given: give one SPEC (N copies) or N
    """
    if not isinstance(spec, str):
        raise ValueError(f"SPEC {spec!r}: expected a string TYPE[:key=value,...] or {STRIPE_SPEC_FORM}")
    return _target(spec, f"SPEC {spec!r}")


def _target(spec: str, label: str) -> Union[Volume, StripedSet]:
    head, plus, rest = spec.partition("+")
    kind, colon, options = head.partition(":")
    if kind != "raid0":  # a volume SPEC (whose grammar refuses a '+' in a value, naming it)
        return _from_spec(spec, label)
    if not plus or not rest:
        raise ValueError(f"{label}: a striped set names its members after '+': expected {STRIPE_SPEC_FORM}")
    values = {}
    for item in options.split(",") if colon else []:
        key, eq, value = item.partition("=")
        if not item or not eq or key not in _STRIPE_KEYS:
            raise ValueError(f"{label}: {item[:64]!r} is not one of chunk=KIB, members=N: expected {STRIPE_SPEC_FORM}")
        if key in values:
            raise ValueError(f"{label}: key {key!r} is given twice; give each key once")
        m = _NUMBER.fullmatch(value)
        number = float(m.group(1)) if m and m.group(2) in ("", _STRIPE_KEYS[key]) and len(m.group(1)) <= 64 else None
        if number is None:
            raise ValueError(f"{label}: {key}={value[:64]!r} is not a number of ASCII digits, e.g. {key}=2")
        values[key] = number
    members = [_from_spec(s, f"{label}, member {i}") for i, s in enumerate(rest.split("+"))]
    if "members" in values:
        n = values["members"]
        if n != int(n) or n < 1:
            raise ValueError(f"{label}: members={n:g} must be a whole number >= 1")
        if len(members) == 1:
            members = members * int(n)
        elif len(members) != n:
            raise ValueError(
                f"{label}: members={n:g} but {len(members)} member SPECs are given: give one SPEC (N copies) or N"
            )
    try:
        return StripedSet(tuple(members), values.get("chunk", DEFAULT_CHUNK_KIB))
    except ValueError as e:
        raise ValueError(f"{label}: {e}") from None


def target_spec(target: Union[Volume, StripedSet]) -> str:
    """The SPEC :func:`target_from_spec` reads back as ``target`` (a striped set as members=N).

    >>> import ebssim
    >>> from ebssim.stripes import target_spec
    >>> target_spec(ebssim.striped([ebssim.gp3(100)] * 2, chunk_kib=64))
    'raid0:chunk=64,members=2+gp3:size=100,iops=3000,throughput=125'
    """
    if isinstance(target, StripedSet):
        return f"raid0:chunk={target.chunk_kib:g},members={target.n}+{volume_spec(target.members[0])}"
    return volume_spec(target)
