"""Running simulations: :class:`Simulation` and :func:`simulate`. The results they return are
in :mod:`ebssim.results` (and exported here too).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
from collections.abc import Iterable
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _core, _limits
from ._core import CliffEpisode, InstanceSeries, InstanceTotals, VolumeSeries, VolumeTotals
from ._targets import VolumeGroup
from ._units import flag, integer, real
from .instances import Instance, _resolve_instance
from .recording import (
    BOUND_NAMES,
    DEFAULT_INSTANCE_SERIES,
    DEFAULT_VOLUME_SERIES,
    INSTANCE_SERIES,
    VOLUME_SERIES,
    Recording,
    resolve,
)
from .results import InstanceResult, RunResult, VolumeResult, VolumeSummary, WindowStats
from .trace import idle_tail, run_on_trace
from .volumes import Volume
from .workloads import (
    ClosedLoop,
    Idle,
    OpenLoop,
    PhasedClosedLoop,
    PiecewiseOpenLoop,
    SharedClosedLoops,
    Workload,
    _dt,
    _steps,
)

__all__ = [
    "simulate",
    "Simulation",
    "VolumeResult",
    "RunResult",
    "InstanceResult",
    "BOUND_NAMES",
    "VolumeTotals",
    "InstanceTotals",
    "VolumeSeries",
    "InstanceSeries",
    "CliffEpisode",
    "WindowStats",
    "VolumeSummary",
]


def _freeze_series(series: Any, names: Tuple[str, ...]) -> None:
    """Make every array of a compiled run's series read-only, in place. The engine's own buffers
    are the result's alone; a caller's buffer (``Recording(out=...)``) was handed to the engine
    as a view (:meth:`Simulation.run`), so only that view is frozen and the caller's array stays
    writeable (to stream the next chunk into)."""
    for name in names:
        getattr(series, name).flags.writeable = False


class Simulation:
    """Volumes stepped together with a fixed step ``dt``. State (credits, backlog, clock) carries
    from one :meth:`run` to the next, so phases and rests are consecutive runs.

    ``instance`` attaches the volumes to an instance type (an :class:`Instance`, or a name from
    the shipped catalog) whose EBS budget they share. A type for which AWS publishes no EBS
    limits (not EBS-optimized, e.g. ``"t2.micro"``) simulates the volumes alone and emits a
    :class:`NoEbsLimitsWarning`.

    A 100 GiB gp2 volume bursts at 3,000 IOPS for 5.4e6 / (3,000 - 300) = 2,000 s, then holds
    its 300 IOPS baseline with an empty bucket; resting earns 300 credits per second:

    >>> from ebssim import ClosedLoop, Simulation, gp2
    >>> sim = Simulation([gp2(100)])
    >>> burst = sim.run([ClosedLoop(32, "4k")], duration_s=2700)
    >>> burst[0].cliff_time_s
    2000.0
    >>> rest = sim.rest(600)
    >>> sim.credits(0)   # 600 x 300
    180000.0
    >>> sim.time_s
    3300.0

    ``volumes`` may name its targets, and a target may then be a striped set
    (:func:`ebssim.striped`): ``Simulation({"md0": md0, "log": ebssim.gp3(50)}, instance=...)``
    steps the set's members and the plain volumes together on the one instance; :meth:`run` takes
    the workloads by name and its result gives each target's by name (docs/model.md, "Striped
    sets"). :attr:`volumes` is then every volume stepped, a set's members in turn.

    A Simulation is state, and one object serialises its runs: two threads that call
    :meth:`run` (or :meth:`rest`) on it at once get one run after the other, the second from the
    state the first left (credits spent once, the clock advanced by both), in the order they
    took the object; which thread goes first is not defined. :attr:`time_s` and :meth:`credits`
    read the state between runs: called during another thread's run, they wait for it to end.
    For runs in parallel, use one Simulation per thread (or :func:`ebssim.fleet.simulate_fleet`).
    A run interrupted with Ctrl-C, or refused, leaves the state as it was and lets the next run
    in; Ctrl-C while waiting for another thread's run raises KeyboardInterrupt before this one
    starts.
    """

    def __init__(
        self,
        volumes: Union[Sequence[Volume], Mapping[str, Union[Volume, VolumeGroup]]],
        dt: float = 1.0,
        *,
        instance: Union[Instance, str, None] = None,
    ) -> None:
        names: Optional[Dict[str, Union[Volume, VolumeGroup]]] = None
        if isinstance(volumes, Mapping):
            names = _named_targets(volumes)
            vols: List[Volume] = [v for t in names.values() for v in (t.members if isinstance(t, VolumeGroup) else [t])]
        else:
            if isinstance(volumes, (Volume, VolumeGroup, str)) or not isinstance(volumes, Iterable):
                raise ValueError(
                    f"volumes={volumes!r} must be a sequence of ebssim.Volume, e.g. [ebssim.gp3(100)], or a mapping "
                    f"of names to volumes and striped sets, e.g. {{'md0': ebssim.striped(...), 'log': ebssim.gp3(50)}}"
                )
            vols = list(volumes)
            if not vols:
                raise ValueError("volumes is empty: a simulation needs at least one volume")
            for i, v in enumerate(vols):
                if isinstance(v, VolumeGroup):
                    raise ValueError(
                        f"volumes[{i}] is a {type(v).__name__}: give the targets by name, e.g. "
                        f"Simulation({{'md0': md0, 'log': ebssim.gp3(50)}}), so that the run can give the set its "
                        f"result beside the volumes'"
                    )
                if not isinstance(v, Volume):
                    raise ValueError(f"volumes[{i}] must be an ebssim.Volume, got {type(v).__name__}")
        #: Every volume stepped, in order: a plain target, or each member of a striped set.
        self.volumes = vols
        #: The targets by name (``Simulation({...})``), or None (a list of volumes).
        self.targets = names
        self.dt = _dt(dt)
        instance = _resolve_instance(instance, stacklevel=2)
        self.instance: Optional[Instance] = instance
        specs = [v._spec() for v in vols]
        if instance is None:
            self._sim = _core.Simulation(specs, self.dt)
        else:
            self._sim = _core.Simulation(specs, instance._spec(), self.dt)
        # Held by a run for its whole length (the compiled loop runs without the GIL) and by every
        # read of the state: runs on one object are serialised, reads never see a run half done.
        # Re-entrant: a signal handler in the running thread may read the state (repr, time_s).
        self._lock = threading.RLock()

    @property
    def time_s(self) -> float:
        """Simulated time so far (waits for a run in progress in another thread)."""
        with self._state():
            return float(self._sim.time_s)

    @overload
    def credits(self, i: int = 0) -> float: ...
    @overload
    def credits(self, i: str) -> Union[float, Tuple[float, ...]]: ...
    def credits(self, i: Union[int, str] = 0) -> Union[float, Tuple[float, ...]]:
        """Credits in volume ``i``'s bucket now (I/O credits; MiB on st1 and sc1; 0 without one;
        waits for a run in progress in another thread).

        ``i`` indexes :attr:`volumes` (negative from the end); outside them is an IndexError. In a
        simulation of named targets ``i`` may also be a target's name: a plain volume's credits,
        or a striped set's members' as a tuple, one per member (a name it does not have is a
        KeyError; in a simulation of a list of volumes, a name is a ValueError).

        >>> import ebssim
        >>> sim = ebssim.Simulation({"md0": ebssim.striped([ebssim.gp2(100)] * 2), "log": ebssim.gp2(50)})
        >>> sim.credits("md0"), sim.credits("log"), sim.credits(2)   # full buckets: 5.4 M I/O credits each
        ((5400000.0, 5400000.0), 5400000.0, 5400000.0)
        """
        if isinstance(i, str) and self.targets is not None:
            if i not in self.targets:
                names = ", ".join(map(repr, self.targets))
                raise KeyError(f"{i!r} is not a target of the simulation: its targets are {names}")
            span = self._spans()[i]
            with self._state():
                got = tuple(float(self._sim.credits(k)) for k in range(span.start, span.stop))
            return got if isinstance(self.targets[i], VolumeGroup) else got[0]
        k = self._volume_index(i, "a volume index" if self.targets is None else "a volume index or a target's name")
        with self._state():
            return float(self._sim.credits(k))

    def _volume_index(self, i: Any, what: str) -> int:
        """``i`` as an index of :attr:`volumes` from 0 (negative counts from the end); ``what`` is
        what ``i`` may be, for the ValueError; outside the volumes an IndexError."""
        n = len(self.volumes)
        k = integer(i, "i", what)
        if not -n <= k < n:
            raise IndexError(f"volume index {k} is out of range: the simulation has {n} volume{'s' * (n != 1)}")
        return k % n

    def overshoot_saved_s(self, i: int = 0) -> Tuple[float, float]:
        """Seconds of volume ``i``'s IOPS limit and of its throughput limit saved for overshoot
        now (``overshoot_s``, docs/model.md "Overshoot"; ``(0.0, 0.0)`` for a volume without it).

        ``i`` indexes :attr:`volumes` (negative from the end); outside them is an IndexError.

        >>> import ebssim
        >>> sim = ebssim.Simulation([ebssim.gp3(100, overshoot_s=1)], dt=0.25)
        >>> sim.overshoot_saved_s()      # none saved at the start, by default
        (0.0, 0.0)
        >>> _ = sim.run([ebssim.Idle()], 0.5, record=False)
        >>> sim.overshoot_saved_s()      # half a second idle saves half a second of each limit
        (0.5, 0.5)
        """
        k = self._volume_index(i, "a volume index")
        with self._state():
            iops_s, bytes_s = self._sim.overshoot_saved_s(k)
        return float(iops_s), float(bytes_s)

    @contextlib.contextmanager
    def _state(self) -> Iterator[None]:
        """Hold the state (runs and reads, serialised). The wait is in slices of 50 ms: a Python
        signal handler runs only between bytecodes, so Ctrl-C (KeyboardInterrupt) ends a wait
        for another thread's run at once, before this run starts."""
        while not self._lock.acquire(timeout=0.05):
            pass
        try:
            yield
        finally:
            self._lock.release()

    def run(
        self,
        workloads: Union[Sequence[Union[Workload, SharedClosedLoops]], Mapping[str, Any]],
        duration_s: Optional[float] = None,
        *,
        record: Union[bool, Recording] = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
        lockstep: bool = True,
    ) -> RunResult:
        """Advance the simulation with one workload per volume.

        A simulation of named targets (``Simulation({"md0": md0, "log": ebssim.gp3(50)})``) takes
        one workload per target by name (``{"md0": ClosedLoop(...), "log": ClosedLoop(...)}``; a
        list in the targets' order when none is a striped set). A striped set's workload is split
        into its members' by the set's rule (:meth:`StripedSet.member_workload`), the members and
        the plain volumes are stepped together, sharing the instance, and the result gives each
        target's result by name: ``run["md0"]`` (a :class:`~ebssim.StripedResult`),
        ``run["log"]`` (a :class:`VolumeResult`); ``run[i]`` is still the i-th volume stepped
        (:attr:`volumes`: each member of a set in turn).

        A :class:`SharedClosedLoops` runs as its sum on its volume (:meth:`SharedClosedLoops.on`:
        the volume's result has that loop as its ``workload``); :meth:`SharedClosedLoops.split`
        gives each loop's figures.

        ``duration_s`` may be omitted when an :class:`OpenLoop` trace sets the length.
        ``record`` keeps every series but the extremes per interval at every step (True, the
        default), only the totals (False), or what an :class:`~ebssim.Recording` chooses: some
        series, one value every ``every_s``, the interval's extremes, float32, into caller
        buffers (:mod:`ebssim.recording`).

        The compiled loop runs with the GIL released. Run from the main thread, it honours
        Ctrl-C within about 0.1 s: KeyboardInterrupt, with the simulation as it was before the
        call. Runs on one Simulation from several threads are serialised: each starts from the
        state the one before left (the class's docstring). A run is refused up front
        (``LimitError``, a ValueError) when it would take more than ``max_volume_steps``
        volume-steps, or, recorded, more than ``max_memory_bytes`` of per-step arrays; both
        default to :data:`ebssim.limits` (1e10 volume-steps, 4 GiB). Split a longer run into
        consecutive runs, use a coarser ``dt``, pass ``record=False``, or raise the limits.

        Volumes without an instance are independent: ``threads`` C++ threads step them in
        parallel (default None, or 0: every core; 1: the calling thread only). Each volume is
        stepped whole by one thread (with up to seven others in lockstep, below), so the results
        are the same, to the last bit, for any ``threads``.
        Volumes on an instance are coupled in every step and run in one thread; to use every
        core for many instances, see :func:`ebssim.fleet.simulate_fleet`.

        ``jump`` (default True) lets the core jump over constant stretches in closed form:
        where a volume's demand is constant (a closed loop, a rest, equal values in a row of a
        trace, a :class:`PiecewiseOpenLoop` segment) and its step steady, or an open loop's
        backlog grows or drains at the volume's cap (in a run that records no series, also a
        backlog of another I/O size than its arrivals), it advances the steps that keep every
        branch of the step the same at once. Volumes on an instance are jumped together, with the
        instance's buckets, where every one of them is steady. Results equal stepping's, bit for
        bit at fixed points (full or empty bucket, no bucket) and otherwise to rounding (relative
        1e-9; docs/model.md, "Jumps over constant stretches"). ``jump=False`` steps every step.
        ``max_volume_steps`` counts every step of the run, jumped or not.

        Volumes without an instance that replay a noisy :class:`OpenLoop` trace with
        ``record=False`` (a fleet's totals) are stepped several at a time, one per lane of the
        CPU's vector registers (AVX2 or AVX-512), with results identical to the last bit to
        stepping each alone; a trace made mostly of runs of equal values is jumped instead.
        ``lockstep=False`` steps (or jumps) them one at a time: for checking and benchmarking.
        """
        given: Optional[Dict[str, Any]] = None
        labels: Optional[List[str]] = None
        if self.targets is not None:
            given = self._by_name(workloads)
            workloads, labels = self._expand(given)
        elif isinstance(workloads, Mapping):
            raise ValueError(
                "workloads is a mapping but the simulation's volumes are a list: give one workload per volume in a "
                "list, or name the targets (Simulation({'data': ..., 'log': ...}))"
            )
        out = self._run_volumes(
            workloads,
            duration_s,
            labels,
            record=record,
            max_volume_steps=max_volume_steps,
            max_memory_bytes=max_memory_bytes,
            threads=threads,
            jump=jump,
            lockstep=lockstep,
        )
        return out if given is None else self._named(given, out)

    def _run_volumes(
        self,
        workloads: Sequence[Union[Workload, SharedClosedLoops]],
        duration_s: Optional[float],
        labels: Optional[List[str]],
        *,
        record: Union[bool, Recording] = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
        lockstep: bool = True,
    ) -> RunResult:
        """:meth:`run` with one workload per volume stepped (a striped set's members' already
        split), ``labels`` naming each in errors; the result per volume, without targets."""
        ws, n = self._prepare(workloads, duration_s, labels)
        rec = resolve(record)
        every = rec.every_steps(self.dt) if rec is not None else 1
        jump = flag(jump, "jump")
        n_threads = _threads(threads)
        lockstep = flag(lockstep, "lockstep")
        if rec is not None and rec.instance_series is not None and self.instance is None:
            raise ValueError(
                f"Recording(instance_series={rec.instance_series!r}) is given but the simulation has no instance: "
                f"attach one (instance=) or leave instance_series out"
            )
        natives = self._natives(ws, n)
        with self._state():
            try:
                raw = self._sim.run(
                    natives,
                    n,
                    rec is not None,
                    max_volume_steps=_limits.max_volume_steps(max_volume_steps),
                    max_memory_bytes=_limits.max_memory_bytes(max_memory_bytes),
                    threads=n_threads,
                    jump=jump,
                    lockstep=lockstep,
                    series=None if rec is None else rec.series,
                    instance_series=None if rec is None else rec.instance_series,
                    every=every,
                    dtype="float64" if rec is None else rec.dtype,
                    out=None if rec is None else _views(rec.out),
                    instance_out=None if rec is None else _views(rec.instance_out),
                )
            except _limits.LimitError as err:
                what = (
                    f"the trace's {n:,} steps" if duration_s is None else f"duration_s={duration_s!r} at dt={self.dt:g}"
                )
                raise _limits.LimitError(
                    f"{what}: {err} (keywords max_volume_steps= and max_memory_bytes=, or ebssim.limits)"
                ) from None
        return self._result(ws, raw, recorded=rec is not None)

    def _by_name(self, workloads: Any) -> Dict[str, Any]:
        """A named simulation's workloads by target name: a mapping with every target's name and
        no other, or (no striped set among the targets) a list in the targets' order."""
        assert self.targets is not None
        names = list(self.targets)
        if isinstance(workloads, Mapping):
            for k in workloads:
                if k not in self.targets:
                    raise ValueError(
                        f"workloads names {k!r}, which is not a target of the simulation: its targets are "
                        f"{', '.join(map(repr, names))}"
                    )
            missing = [k for k in names if k not in workloads]
            if missing:
                raise ValueError(
                    f"workloads has no workload for {', '.join(map(repr, missing))}: give each target one "
                    f"(ebssim.Idle() for an idle one)"
                )
            return {k: workloads[k] for k in names}
        groups = [k for k, t in self.targets.items() if isinstance(t, VolumeGroup)]
        if groups:
            raise ValueError(
                f"workloads must be a mapping of target names to workloads: the simulation has the striped set "
                f"{groups[0]!r} (e.g. {{{', '.join(f'{k!r}: ...' for k in names)}}})"
            )
        if isinstance(workloads, (ClosedLoop, OpenLoop, PhasedClosedLoop, Idle, SharedClosedLoops, str)) or not (
            isinstance(workloads, Iterable)
        ):
            raise ValueError(f"workloads={workloads!r} must be a mapping with one workload per target, by name")
        seq = list(workloads)
        if len(seq) != len(names):
            raise ValueError(f"workloads has {len(seq)} entries but the simulation has {len(names)} targets")
        return dict(zip(names, seq))

    def _expand(self, given: Mapping[str, Any]) -> Tuple[List[Any], List[str]]:
        """The workload of each volume stepped (a striped set's split into its members' by the
        set's rule) and how an error names each."""
        assert self.targets is not None
        ws: List[Any] = []
        labels: List[str] = []
        for name, t in self.targets.items():
            w = given[name]
            if isinstance(t, VolumeGroup):
                try:
                    parts = t._member_workloads(w)
                except ValueError as e:
                    raise ValueError(f"workloads[{name!r}]: {e}") from None
                ws.extend(parts)
                labels.extend(f"workloads[{name!r}] (member {k})" for k in range(len(parts)))
            else:
                ws.append(w)
                labels.append(f"workloads[{name!r}]")
        return ws, labels

    def _spans(self) -> Dict[str, slice]:
        """Each target's volumes among :attr:`volumes`: a plain volume's one, a set's members."""
        assert self.targets is not None
        out: Dict[str, slice] = {}
        first = 0
        for name, t in self.targets.items():
            n = len(t.members) if isinstance(t, VolumeGroup) else 1
            out[name] = slice(first, first + n)
            first += n
        return out

    def _named(self, given: Mapping[str, Any], run: RunResult) -> RunResult:
        """``run`` (one result per volume stepped) with each target's result by name."""
        assert self.targets is not None
        out: Dict[str, Any] = {}
        for (name, t), span in zip(self.targets.items(), self._spans().values()):
            if isinstance(t, VolumeGroup):
                out[name] = t._group_result(given[name], RunResult(list(run[span]), run.instance))
            else:
                out[name] = run[span.start]
        return RunResult(list(run), run.instance, targets=out)

    def replay(
        self,
        traces: Union[Sequence[OpenLoop], Mapping[str, OpenLoop]],
        *,
        max_run_on_s: Optional[float] = None,
        record: Union[bool, Recording] = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
    ) -> RunResult:
        """Run :class:`OpenLoop` traces, one per volume, and go on after them, with no new I/O,
        until the work they brought is done: a replay that tells how much longer the trace's
        work took than the trace (an application that bounds its outstanding I/Os,
        ``max_in_flight``, is slowed down by a slower volume instead of queueing at it).

        Each result covers the trace and the steps after it (its workload is the trace followed
        by steps without I/O, at the trace's last bound on outstanding I/Os), with
        :attr:`VolumeResult.trace_steps` the trace's length; :attr:`VolumeResult.finish_s`,
        :attr:`~VolumeResult.overrun_s` and :attr:`~VolumeResult.slowdown` say when its work was
        done. The run goes on until every volume's backlog is gone (volumes on an instance go on
        together), at most ``max_run_on_s`` after the trace (default: nine times the trace's
        length, a slowdown of ten); a backlog left then is reported
        (:attr:`VolumeResult.overrun_s` None, ``totals.backlog_ops``). It is found by running on
        in chunks, and the run is then made again from the state before it, with the steps it
        needs (deterministic: the same steps, the same results). Other keywords as for
        :meth:`run`.

        >>> import ebssim
        >>> trace = ebssim.OpenLoop.constant(5000, "4k", 60, max_in_flight=64)  # 5,000 IOPS for a minute
        >>> r = ebssim.Simulation([ebssim.gp3(100)]).replay([trace])[0]         # 3,000 IOPS
        >>> r.trace_steps, r.n_steps, r.finish_s, round(r.slowdown, 4)    # 300,000 I/Os / 3,000 IOPS
        (60, 101, 100.0, 1.6667)
        """
        names: Optional[List[str]] = None
        by_name: Optional[Dict[str, Any]] = None
        labels: Optional[List[str]] = None
        if self.targets is not None:
            names = list(self.targets)
            by_name = self._by_name(traces)
            given = list(by_name.values())
        elif isinstance(traces, Mapping):
            raise ValueError("traces is a mapping but the simulation's volumes are a list: give one trace per volume")
        else:
            given = list(traces)
        for i, w in enumerate(given):
            if not isinstance(w, OpenLoop):
                at = i if names is None else names[i]
                raise ValueError(
                    f"traces[{at!r}]={w!r} must be an OpenLoop: a replay goes on after a trace until its work is done"
                )
        if by_name is not None:  # a striped set's trace split into its members' (StripedSet.member_workload)
            given, labels = self._expand(by_name)
        ws, n = self._prepare(given, None, labels)
        traces_ = [w for w in ws if isinstance(w, OpenLoop)]
        if max_run_on_s is None:
            limit = 9 * n
        else:
            limit_s = real(max_run_on_s, "max_run_on_s", "a number of seconds")
            if not (limit_s >= 0 and math.isfinite(limit_s)):
                raise ValueError(f"max_run_on_s={max_run_on_s!r} must be a finite number of seconds >= 0")
            limit = int(limit_s // self.dt)
        kw: Dict[str, Any] = dict(
            max_volume_steps=max_volume_steps, max_memory_bytes=max_memory_bytes, threads=threads, jump=jump
        )
        with self._state():
            before = self._sim.copy()
            try:
                first = self._run_volumes(traces_, None, labels, record=record, **kw)
                extra = self._steps_to_drain(traces_, first, limit, kw)
                if extra > 0:
                    self._sim = before  # and again, with the steps it needs
                    run = self._run_volumes(
                        [run_on_trace(w, extra) for w in traces_], None, labels, record=record, **kw
                    )
                else:
                    run = first
            except BaseException:
                self._sim = before
                raise
        out = [dataclasses.replace(r, trace_steps=n) for r in run]
        return RunResult(out, run.instance) if by_name is None else self._named(by_name, RunResult(out, run.instance))

    def _steps_to_drain(self, traces: List[OpenLoop], first: RunResult, limit: int, kw: Dict[str, Any]) -> int:
        """Steps after the traces (run on this simulation, which they left in ``first``'s state)
        until every backlog is gone, plus one (a margin for the rounding of the jumps); at most
        ``limit``: found by running on, without new I/O, in chunks that double."""
        left = [i for i, r in enumerate(first) if r.totals.backlog_ops > 0]
        if not left or limit <= 0:
            return 0
        done = 0
        chunk = max(first[0].n_steps, 16)
        while done < limit:
            c = min(chunk, limit - done)
            run = self._run_volumes(
                [idle_tail(w, c) for w in traces], None, None, record=Recording(series=("backlog_ops",)), **kw
            )
            ends = []
            for i in left:
                clear = np.flatnonzero(np.asarray(run[i].backlog_ops) <= 0)
                ends.append(int(clear[0]) + 1 if clear.size else -1)
            if min(ends) >= 0:
                return min(done + max(ends) + 1, limit)
            done += c
            chunk *= 2
        return limit

    def _natives(self, ws: List[Workload], n: int) -> List[Any]:
        """The core's workloads for a run of ``n`` steps (a piecewise loop's change steps depend
        on this simulation's ``dt`` and the run's length)."""
        return [w._native_for(self.dt, n) if isinstance(w, PiecewiseOpenLoop) else w._native for w in ws]

    def _prepare(
        self,
        workloads: Sequence[Union[Workload, SharedClosedLoops]],
        duration_s: Optional[float],
        labels: Optional[List[str]] = None,
    ) -> Tuple[List[Workload], int]:
        """The workloads of :meth:`run`, checked against the volumes (shared loops as the one loop
        each volume runs), and the run's steps. ``labels`` name each workload in errors (default
        ``workloads[i]``)."""
        if isinstance(
            workloads, (ClosedLoop, OpenLoop, PhasedClosedLoop, Idle, SharedClosedLoops, str)
        ) or not isinstance(workloads, Iterable):
            raise ValueError(f"workloads={workloads!r} must be a sequence with one workload per volume")
        given = list(workloads)
        if len(given) != len(self.volumes):
            raise ValueError(f"workloads has {len(given)} entries but the simulation has {len(self.volumes)} volumes")
        ws: List[Workload] = []
        for i, (w, v) in enumerate(zip(given, self.volumes)):
            label = f"workloads[{i}]" if labels is None else labels[i]
            if isinstance(w, SharedClosedLoops):
                ws.append(w.on(v))
                continue
            if not isinstance(w, (ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop, Idle)):
                raise ValueError(
                    f"{label}={w!r} must be a ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop or Idle "
                    f"(or SharedClosedLoops, several closed loops on the volume)"
                )
            ws.append(w)
            if isinstance(w, OpenLoop) and w.dt is not None and w.dt != self.dt:
                raise ValueError(_dt_mismatch(label, w.dt, self.dt, "Simulation(..., dt=)"))
        return ws, self._n_steps(ws, duration_s)

    def _result(self, ws: List[Workload], raw: _core.RunResult, recorded: bool = True) -> RunResult:
        """The public results of a compiled run of ``ws`` on this simulation (``recorded``: with
        series; a totals-only run has none, which spares a fleet a look at each volume's)."""
        n_values = -(-raw.n_steps // raw.record_every) if recorded else 0  # values per recorded series
        for series in raw.series:
            _freeze_series(series, VOLUME_SERIES)
        inst = None
        if self.instance is not None:
            assert raw.instance_series is not None and raw.instance_totals is not None  # the core ran it attached
            _freeze_series(raw.instance_series, INSTANCE_SERIES)
            inst = InstanceResult(
                instance=self.instance,
                t0_s=raw.t0_s,
                dt_s=raw.dt_s,
                n_steps=raw.n_steps,
                series=raw.instance_series,
                totals=raw.instance_totals,
                record_every=raw.record_every,
                recorded=_recorded(raw.instance_series, INSTANCE_SERIES, DEFAULT_INSTANCE_SERIES, n_values)
                if recorded
                else (),
            )
        out = [
            VolumeResult(
                volume=v,
                workload=w,
                t0_s=raw.t0_s,
                dt_s=raw.dt_s,
                n_steps=raw.n_steps,
                series=series,
                totals=totals,
                instance=inst,
                record_every=raw.record_every,
                recorded=_recorded(series, VOLUME_SERIES, DEFAULT_VOLUME_SERIES, n_values) if recorded else (),
            )
            for v, w, series, totals in zip(self.volumes, ws, raw.series, raw.totals)
        ]
        return RunResult(out, inst)

    def rest(
        self,
        duration_s: float,
        *,
        record: Union[bool, Recording] = True,
        max_volume_steps: Optional[float] = None,
        max_memory_bytes: Optional[float] = None,
        threads: Optional[int] = None,
        jump: bool = True,
    ) -> RunResult:
        """Let every volume idle for ``duration_s`` (gp2 earns credits); keywords as for :meth:`run`."""
        idle: Any = [Idle() for _ in self.volumes] if self.targets is None else {k: Idle() for k in self.targets}
        return self.run(
            idle,
            duration_s,
            record=record,
            max_volume_steps=max_volume_steps,
            max_memory_bytes=max_memory_bytes,
            threads=threads,
            jump=jump,
        )

    def _n_steps(self, ws: List[Workload], duration_s: Optional[float]) -> int:
        trace_steps = {w.n_steps for w in ws if isinstance(w, (OpenLoop, PhasedClosedLoop))}
        for w in ws:
            if isinstance(w, PiecewiseOpenLoop):
                own = w.n_steps(self.dt)
                if own is not None:
                    trace_steps.add(own)
        if len(trace_steps) > 1:
            raise ValueError(
                f"per-step workloads (OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop with duration_s) have different "
                f"lengths {sorted(trace_steps)}: they must match"
            )
        if duration_s is None:
            if not trace_steps:
                raise ValueError(
                    "duration_s is required unless an OpenLoop, PhasedClosedLoop or PiecewiseOpenLoop with "
                    "duration_s sets the length"
                )
            return trace_steps.pop()
        n = _steps(duration_s, self.dt)
        if trace_steps and n != next(iter(trace_steps)):
            raise ValueError(
                f"duration_s={duration_s!r} is {n} steps of dt={self.dt:g} but the trace has "
                f"{next(iter(trace_steps))} steps"
            )
        return n

    def __repr__(self) -> str:
        if self.targets is None:
            vols = ", ".join(str(v) for v in self.volumes)
        else:
            vols = ", ".join(f"{k}: {t}" for k, t in self.targets.items())
        on = f" on {self.instance}" if self.instance is not None else ""
        # Never waits: a repr (a debugger's, a log line's) during another thread's run says so.
        if not self._lock.acquire(blocking=False):
            return f"<Simulation running, dt={self.dt:g} s: {vols}{on}>"
        try:
            return f"<Simulation t={self._sim.time_s:g} s, dt={self.dt:g} s: {vols}{on}>"
        finally:
            self._lock.release()


def _named_targets(volumes: Mapping[Any, Any]) -> Dict[str, Union[Volume, VolumeGroup]]:
    """The targets of ``Simulation({name: target})``, checked: names are non-empty strings, each
    target a Volume or a striped set."""
    if not volumes:
        raise ValueError("volumes is empty: a simulation needs at least one volume")
    out: Dict[str, Union[Volume, VolumeGroup]] = {}
    for name, t in volumes.items():
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"volumes: the name {name!r} must be a non-empty string (run[name] gives its result; run[i] is the "
                f"i-th volume stepped)"
            )
        if not isinstance(t, (Volume, VolumeGroup)):
            raise ValueError(
                f"volumes[{name!r}] must be an ebssim.Volume or a striped set (ebssim.striped), got {type(t).__name__}"
            )
        out[name] = t
    return out


def _recorded(series: Any, names: Tuple[str, ...], default: Tuple[str, ...], n_values: int) -> Tuple[str, ...]:
    """The series a compiled run recorded: those with a value per interval (none with record=False).
    A run without steps has no values to tell them apart: it reads as the default recording."""
    if n_values == 0:
        return default
    return tuple(n for n in names if getattr(series, n).shape[0] == n_values)


def _views(buffers: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """Caller buffers (``Recording(out=...)``) as new views of the same memory: the engine writes
    through them and the result hands them out frozen (read-only), which leaves the caller's own
    arrays writeable."""
    return None if buffers is None else {k: a.view() for k, a in buffers.items()}


def _threads(threads: Optional[int]) -> int:
    """The engine's thread count for ``threads=``: None and 0 are every core, as in the core."""
    if threads is None:
        return 0
    n = integer(threads, "threads", "a number of threads")
    if n < 0:
        raise ValueError(
            f"threads={threads!r} must be >= 1, or 0 or None for every core ({_core.hardware_threads} here)"
        )
    return n


def _dt_mismatch(what: str, trace_dt: float, dt: float, where: str) -> str:
    return (
        f"{what} is a trace in steps of {trace_dt:g} s but {where} is {dt:g} s: a trace's step is part of "
        f"its demand (ops per step), so simulate it at dt={trace_dt:g}, or build it at dt={dt:g} "
        f"(OpenLoop.from_pandas(..., dt={dt:g}) spreads each period evenly over finer steps)"
    )


def simulate(
    volume: Volume,
    workload: Union[Workload, SharedClosedLoops],
    duration_s: Optional[float] = None,
    *,
    dt: Optional[float] = None,
    record: Union[bool, Recording] = True,
    instance: Union[Instance, str, None] = None,
    max_volume_steps: Optional[float] = None,
    max_memory_bytes: Optional[float] = None,
    threads: Optional[int] = None,
    jump: bool = True,
    run_on: bool = False,
    max_run_on_s: Optional[float] = None,
) -> VolumeResult:
    """Run one workload on one fresh volume and return its per-step results.

    Parameters
    ----------
    volume : Volume
        For example ``ebssim.gp2(100)``.
    workload : ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop, SharedClosedLoops or Idle
    duration_s : float, optional
        Length of the run; optional for an OpenLoop trace (its length sets it).
    dt : float, optional
        Step in seconds (default 1; finer steps such as 0.001 resolve sub-second behaviour). A
        trace that knows its step (``OpenLoop.dt``, e.g. from :meth:`OpenLoop.from_pandas`)
        sets the default, and another ``dt`` is an error.
    record : bool or Recording
        Keep per-step arrays (default). ``False`` keeps only the totals, for speed. A
        :class:`~ebssim.Recording` chooses the series, an interval (``every_s``), float32 and
        caller buffers (:mod:`ebssim.recording`).
    instance : Instance or str, optional
        Attach the volume to an instance type (e.g. ``"m5.large"``) whose EBS limits then apply.
        A type without published EBS limits (e.g. ``"t2.micro"``) simulates the volume alone,
        with a :class:`NoEbsLimitsWarning`.
    max_volume_steps, max_memory_bytes : int, optional
        Bounds on this run's work and recorded memory (default :data:`ebssim.limits`; see
        :meth:`Simulation.run`).
    threads : int, optional
        As for :meth:`Simulation.run`: one volume is stepped by one thread, whatever the count
        (kept for symmetry with it; many volumes in one call: :func:`ebssim.fleet.simulate_fleet`).
    jump : bool
        Jump over constant stretches in closed form (default); ``False`` steps every step
        (:meth:`Simulation.run`).
    run_on, max_run_on_s
        For an :class:`OpenLoop` trace: go on after it, with no new I/O, until its work is done
        (at most ``max_run_on_s``), and say when (:meth:`Simulation.replay`). Default False: the
        run is the trace's length, and what is left is ``totals.backlog_ops``.

    Examples
    --------
    A 100 GiB gp2 volume at queue depth 32 bursts at 3,000 IOPS until its 5.4 M credits run
    out: 5.4e6 / (3,000 - 300) = 2,000 s.

    >>> import ebssim
    >>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
    >>> print(r.cliff_time_s, r.iops[0], r.iops[-1])
    2000.0 3000.0 300.0
    """
    if isinstance(volume, VolumeGroup):
        raise ValueError(
            f"volume is a {type(volume).__name__}: simulate() runs one volume; run a striped set with its "
            f".simulate(workload, duration_s, ...), or beside volumes with Simulation({{'md0': set, 'log': volume}})"
        )
    trace_dt = workload.dt if isinstance(workload, OpenLoop) else None
    if dt is None:
        dt = 1.0 if trace_dt is None else trace_dt
    elif trace_dt is not None and _dt(dt) != trace_dt:
        raise ValueError(_dt_mismatch("workload", trace_dt, dt, "dt"))
    inst = _resolve_instance(instance, stacklevel=2)
    if flag(run_on, "run_on"):
        if not isinstance(workload, OpenLoop) or duration_s is not None:
            raise ValueError(
                "run_on=True goes on after an OpenLoop trace until its work is done: it takes a trace, without "
                f"duration_s (got {type(workload).__name__}" + (f", duration_s={duration_s!r})" if duration_s else ")")
            )
        return Simulation([volume], dt=dt, instance=inst).replay(
            [workload],
            max_run_on_s=max_run_on_s,
            record=record,
            max_volume_steps=max_volume_steps,
            max_memory_bytes=max_memory_bytes,
            threads=threads,
            jump=jump,
        )[0]
    return Simulation([volume], dt=dt, instance=inst).run(
        [workload],
        duration_s,
        record=record,
        max_volume_steps=max_volume_steps,
        max_memory_bytes=max_memory_bytes,
        threads=threads,
        jump=jump,
    )[0]
