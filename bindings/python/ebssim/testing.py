"""Capacity plans as tests: assert what a run must sustain, and read why it did not.

:func:`assert_plan` checks a result against a plan and raises an ``AssertionError`` whose message
puts the numbers next to the plan and says which limit bound, when, for how long and by how
much; :func:`check_plan` returns the same report without raising. Plain pytest runs them (no
plugin needed): a test is a simulation and one call.

>>> import ebssim
>>> from ebssim.testing import assert_plan
>>> w = ebssim.ClosedLoop(32, "4k")
>>> gp3 = ebssim.simulate(ebssim.gp3(100), w, duration_s=2700)
>>> report = assert_plan(gp3, p99_ms=40, no_cliff=True)     # mean 32 / 3,000 IOPS = 10.7 ms; the
>>> report.ok                                               # waits under the cap spread: p99 31.9 ms
True
>>> gp2 = ebssim.simulate(ebssim.gp2(100), w, duration_s=2700)
>>> assert_plan(gp2, p99_ms=20, no_cliff_within_h=1, min_burst_balance_pct=20)
Traceback (most recent call last):
  ...
AssertionError: capacity plan not met (3 of 3 criteria fail)
gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s) under 4 KiB random reads at queue depth 32,
2,700 s (45 min) from t = 0 s
  FAIL  p99 latency <= 20 ms             got 130 ms (6.52 x the plan)
        latency above 20 ms for 11.7 min (26% of the run), from 2,000 s (33.3 min) to the end of the run,
        bound by volume_iops (BurstBalance empty)
  FAIL  no cliff within 1 h              BurstBalance ran dry at 2,000 s (33.3 min), 26.7 min early
        bound by volume_iops at 300 IOPS for 11.7 min, until the end of the run
  FAIL  BurstBalance >= 20 %             got 0 % (lowest)
        below 20 % from 1,600 s (26.7 min) to the end of the run, 18.3 min
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _repr
from ._units import flag, real
from .analysis import Span, _spans, bound_spans, spans_above_latency
from .latency import check_latency_at
from .recording import BOUND_NAMES
from .results import InstanceResult, RunResult, VolumeResult
from .workloads import OpenLoop, PiecewiseOpenLoop

if TYPE_CHECKING:
    from .stripes import StripedResult

__all__ = ["Plan", "PlanReport", "Check", "assert_plan", "check_plan"]

Result = Union[VolumeResult, "StripedResult", RunResult, Sequence[Union[VolumeResult, "StripedResult"]]]


@dataclass(frozen=True)
class Check:
    """One criterion of a plan, checked against one result."""

    criterion: str
    """What the plan asks, e.g. ``p99 latency <= 20 ms``."""
    ok: bool
    got: str
    """What the run did, next to the plan, e.g. ``36.2 ms (1.81 x the plan)``."""
    detail: str = ""
    """When it failed: which limit bound, when, for how long (empty when it passed)."""

    def __repr__(self) -> str:
        first = self.detail.split("\n", 1)[0] if self.detail and not self.ok else ""
        return _repr.short_repr("Check", [f"{'ok' if self.ok else 'FAIL'}: {self.criterion}", self.got, first])

    def _repr_html_(self) -> str:
        rows = [("criterion", self.criterion), ("outcome", "ok" if self.ok else "FAIL"), ("got", self.got)]
        if self.detail and not self.ok:
            rows += [("", line) for line in self.detail.split("\n")]
        return _repr.html_table("Check", rows)


@dataclass(frozen=True)
class _Subject:
    """One result a report covers: a volume's run, or the instance's."""

    name: str
    checks: Tuple[Check, ...]


def checks_html(title: str, subject: str, checks: Sequence[Tuple[str, Check]]) -> str:
    """A table of ``checks`` (each with the name of what it was checked on, in a column headed
    ``subject``) for Jupyter: ok or FAIL, the criterion, what the run did, and why a failure
    failed (:class:`PlanReport`'s and ``ebssim check``'s PlanOutcome's)."""
    rows = [
        [
            name,
            "ok" if c.ok else "FAIL",
            c.criterion,
            c.got,
            c.detail.replace("\n", "; ") if c.detail and not c.ok else "",
        ]
        for name, c in checks
    ]
    return _repr.html_grid(title, [subject, "", "criterion", "got", "why"], rows)


@dataclass(frozen=True)
class PlanReport:
    """The outcome of :func:`check_plan`: every criterion against every result; ``str()`` is the
    message :func:`assert_plan` raises with."""

    subjects: Tuple[_Subject, ...]

    @property
    def checks(self) -> List[Check]:
        """Every check, in order, over all the results."""
        return [c for s in self.subjects for c in s.checks]

    @property
    def ok(self) -> bool:
        """True when every criterion holds for every result."""
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> List[Check]:
        return [c for c in self.checks if not c.ok]

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        n, bad = len(self.checks), len(self.failures)
        state = "met" if bad == 0 else f"not met, {bad} of {n} criteria fail"
        return f"<PlanReport: {state} ({n} checks over {len(self.subjects)} result{'s' * (len(self.subjects) != 1)})>"

    def _repr_html_(self) -> str:
        n, bad = len(self.checks), len(self.failures)
        head = "capacity plan met" if bad == 0 else f"capacity plan not met ({bad} of {n} criteria fail)"
        return checks_html(f"PlanReport: {head}", "result", [(s.name, c) for s in self.subjects for c in s.checks])

    def __str__(self) -> str:
        n, bad = len(self.checks), len(self.failures)
        head = "capacity plan met" if bad == 0 else f"capacity plan not met ({bad} of {n} criteria fail)"
        lines = [head]
        width = max((len(c.criterion) for c in self.checks), default=0) + 2
        width = max(width, 32)
        for s in self.subjects:
            lines.append(s.name)
            for c in s.checks:
                lines.append(f"  {'ok  ' if c.ok else 'FAIL'}  {c.criterion:<{width}} {c.got}")
                if c.detail and not c.ok:
                    lines.extend(f"        {d}" for d in c.detail.split("\n"))
        return "\n".join(lines)


@dataclass(frozen=True)
class Plan:
    """What a run must sustain. Every criterion is optional; those left at None are not checked.

    Parameters
    ----------
    p99_ms : float, optional
        The 99th percentile of latency over the run (the model of
        :meth:`~ebssim.VolumeResult.latency_percentiles`) at most this, ms.
    percentiles_ms : mapping of float to float, optional
        Other percentiles, e.g. ``{50: 2, 99.9: 100}``.
    max_latency_ms : float, optional
        The mean latency of every step at most this, ms.
    no_cliff : bool
        No credit bucket runs dry: the volume's BurstBalance nor the instance's balances.
    no_cliff_within_h : float, optional
        No bucket runs dry within this many hours of the start of the run.
    min_burst_balance_pct : float, optional
        BurstBalance never below this, percent (volumes without a bucket pass).
    min_instance_balance_pct : float, optional
        EBSIOBalance% and EBSByteBalance% never below this (results without an instance pass).
    instance_bound_s : float, optional
        Seconds the instance's budget may hold a volume back at most (0: never).
    throttled_s : float, optional
        Seconds any limit (volume, instance, ``max_in_flight``) may hold a volume back at most.
    max_backlog_ops : float, optional
        I/Os waiting (queued or held in the application) never above this.
    latency_at : {"arrival", "device"}
        Where the latency criteria (``p99_ms``, ``percentiles_ms``, ``max_latency_ms``) count
        from: each I/O's arrival (default: what the work waited in all) or its submission to the
        device (``VolumeResult.device_latency_s``: what the volume's own latency metrics show).
        They differ only for an open loop bounded by ``max_in_flight``, whose work above the
        bound waits in the application. Not a criterion itself.
    """

    p99_ms: Optional[float] = None
    percentiles_ms: Optional[Mapping[float, float]] = None
    max_latency_ms: Optional[float] = None
    no_cliff: bool = False
    no_cliff_within_h: Optional[float] = None
    min_burst_balance_pct: Optional[float] = None
    min_instance_balance_pct: Optional[float] = None
    instance_bound_s: Optional[float] = None
    throttled_s: Optional[float] = None
    max_backlog_ops: Optional[float] = None
    latency_at: str = "arrival"
    _percentiles: Dict[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_latency_at(self.latency_at, "latency_at")
        for f in fields(self):
            if f.name in ("percentiles_ms", "no_cliff", "_percentiles", "latency_at"):
                continue
            v = getattr(self, f.name)
            if v is None:
                continue
            x = real(v, f.name)
            if not (math.isfinite(x) and x >= 0):
                raise ValueError(f"{f.name}={v!r} must be a finite number >= 0")
        flag(self.no_cliff, "no_cliff")
        for name in ("min_burst_balance_pct", "min_instance_balance_pct"):
            v = getattr(self, name)
            if v is not None and float(v) > 100:
                raise ValueError(f"{name}={v!r} must be a percentage between 0 and 100")
        pct: Dict[float, float] = {}
        if self.p99_ms is not None:
            pct[99.0] = float(self.p99_ms)
        if self.percentiles_ms is not None:
            if not isinstance(self.percentiles_ms, Mapping):
                raise ValueError(
                    f"percentiles_ms={self.percentiles_ms!r} must map percentiles to ms, e.g. {{99.9: 50}}"
                )
            for p, ms in self.percentiles_ms.items():
                q = real(p, "percentiles_ms key", "a percentile")
                if not 0 <= q <= 100:
                    raise ValueError(f"percentiles_ms key {p!r} must be a percentile between 0 and 100")
                v = real(ms, f"percentiles_ms[{p!r}]", "a latency in ms")
                if not (math.isfinite(v) and v >= 0):
                    raise ValueError(f"percentiles_ms[{p!r}]={ms!r} must be a finite latency in ms >= 0")
                if q in pct and pct[q] != v:
                    raise ValueError(f"percentile {q:g} is given twice: p99_ms={self.p99_ms!r} and {ms!r}")
                pct[q] = v
        object.__setattr__(self, "_percentiles", dict(sorted(pct.items())))
        if not self._criteria():
            raise ValueError("the plan has no criterion: give at least one, e.g. p99_ms=20 or no_cliff=True")

    def _criteria(self) -> List[str]:
        return [
            f.name
            for f in fields(self)
            # `is not`: a bound of 0 (throttled_s=0: never) is a criterion, though 0 == False
            if f.name not in ("_percentiles", "percentiles_ms", "p99_ms", "latency_at")
            and getattr(self, f.name) is not None
            and getattr(self, f.name) is not False
        ] + (["percentiles"] if self._percentiles else [])

    def check(self, result: Result) -> PlanReport:
        """Every criterion against ``result`` (a VolumeResult, a RunResult: each volume and the
        instance, or a sequence of VolumeResults).

        A striped set's result (:class:`~ebssim.StripedResult`, alone or in the sequence) is one
        subject: each criterion is checked on every member and holds for the set when it holds
        on each (the set's latency is its slowest member's, its BurstBalance its emptiest
        member's, and a member held back holds the set back); the set's line shows the first
        member where it fails and how many fail, else the members' figures (one, when they
        agree, as alike members under one workload do)."""
        subjects = []
        for r in _volume_results(result):
            if isinstance(r, VolumeResult):
                subjects.append(_Subject(_subject_name(r), tuple(self._check_volume(r))))
            else:
                subjects.append(_Subject(_set_subject_name(r), tuple(self._check_set(r))))
        return PlanReport(tuple(subjects))

    def _check_set(self, r: "StripedResult") -> List[Check]:
        per_member = [self._check_volume(m) for m in r.members]
        out = []
        for k, c0 in enumerate(per_member[0]):
            cs = [checks[k] for checks in per_member]
            bad = [i for i, c in enumerate(cs) if not c.ok]
            i = bad[0] if bad else 0
            c = cs[i]
            if len(cs) == 1:
                out.append(c)
                continue
            if not bad:  # alike members under one workload agree; where they do not, each one's figures
                gots = [m.got for m in cs]
                got = c.got if len(set(gots)) == 1 else "; ".join(f"member {j}: {g}" for j, g in enumerate(gots))
                out.append(Check(c0.criterion, True, got, c.detail))
                continue
            which = f"all {len(cs)} members" if len(bad) == len(cs) else f"member {i}; {len(bad)} of {len(cs)} members"
            out.append(Check(c0.criterion, False, f"{c.got} ({which})", c.detail))
        return out

    def assert_met(self, result: Result) -> PlanReport:
        """:meth:`check`, raising AssertionError with the report when a criterion fails."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        report = self.check(result)
        if not report.ok:
            raise AssertionError(str(report))
        return report

    # ----------------------------------------------------------------------------------------

    def _check_volume(self, r: VolumeResult) -> List[Check]:
        out: List[Check] = []
        needs_series = (
            self._percentiles
            or self.max_latency_ms is not None
            or self.min_burst_balance_pct is not None
            or self.min_instance_balance_pct is not None
            or self.max_backlog_ops is not None
        )
        if needs_series and not r.recorded and r.n_steps > 0:
            raise ValueError(
                "the plan checks latency, balances or the backlog, which need the per-step series, and this "
                "result was run with record=False: simulate with record=True"
            )
        if needs_series:
            from .recording import _need_per_step

            names = []
            if self._percentiles or self.max_latency_ms is not None:
                names += ["iops", "latency_s"]
            if self.min_burst_balance_pct is not None:
                names.append("credits")
            if self.max_backlog_ops is not None:
                names.append("backlog_ops")
            _need_per_step(r, "the plan's latency, balance and backlog checks", *names)
            if self.min_instance_balance_pct is not None and r.instance is not None:
                _need_per_step(r.instance, "min_instance_balance_pct", "io_balance_pct", "byte_balance_pct")
        what = _latency_word(self.latency_at)
        if self._percentiles:
            got = r.latency_percentiles(list(self._percentiles), at=self.latency_at)
            for p, limit in self._percentiles.items():
                out.append(_latency_check(r, f"p{p:g} {what} <= {limit:g} ms", got[p], limit, self.latency_at))
        if self.max_latency_ms is not None:
            out.append(_max_latency_check(r, self.max_latency_ms, self.latency_at))
        if self.no_cliff:
            out.append(_cliff_check(r, None))
        if self.no_cliff_within_h is not None:
            out.append(_cliff_check(r, float(self.no_cliff_within_h)))
        if self.min_burst_balance_pct is not None:
            out.append(_burst_balance_check(r, float(self.min_burst_balance_pct)))
        if self.min_instance_balance_pct is not None:
            out.append(_instance_balance_check(r, float(self.min_instance_balance_pct)))
        if self.instance_bound_s is not None:
            out.append(_bound_check(r, float(self.instance_bound_s), ("instance_iops", "instance_throughput")))
        if self.throttled_s is not None:
            out.append(_bound_check(r, float(self.throttled_s), BOUND_NAMES[1:]))
        if self.max_backlog_ops is not None:
            out.append(_backlog_check(r, float(self.max_backlog_ops)))
        return out


def check_plan(result: Result, **criteria: object) -> PlanReport:
    """Check ``result`` against the plan ``Plan(**criteria)`` without raising; see :class:`Plan`.

    >>> import ebssim
    >>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700)
    >>> report = check_plan(r, no_cliff_within_h=0.5)          # the cliff comes at 33.3 min
    >>> report.ok, report.failures
    (True, [])
    """
    return Plan(**criteria).check(result)  # type: ignore[arg-type]


def assert_plan(result: Result, **criteria: object) -> PlanReport:
    """Assert that ``result`` meets the plan ``Plan(**criteria)`` (see :class:`Plan` for the
    criteria): an AssertionError whose message lists every criterion with what the run did,
    and for each failure which limit bound, when, for how long and by how much. Returns the
    :class:`PlanReport` when the plan holds.

    ``result`` is a VolumeResult (with its instance, if it ran on one), a RunResult (every
    volume and the instance) or a sequence of VolumeResults.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    return Plan(**criteria).assert_met(result)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------------


def _volume_results(result: Result) -> List[Union[VolumeResult, "StripedResult"]]:
    from .stripes import StripedResult

    if isinstance(result, (VolumeResult, StripedResult)):
        return [result]
    if isinstance(result, (RunResult, Sequence)) and not isinstance(result, (str, bytes)):
        rs = list(result)
        for i, r in enumerate(rs):
            if not isinstance(r, (VolumeResult, StripedResult)):
                raise ValueError(f"result[{i}]={r!r} must be a VolumeResult (or a striped set's StripedResult)")
        if rs:
            return rs
    raise ValueError(
        f"result={result!r} must be a VolumeResult, a RunResult or a sequence of VolumeResults (or a striped set's "
        f"StripedResult)"
    )


def _subject_name(r: VolumeResult) -> str:
    on = f" on {r.instance.instance.name}" if r.instance is not None else ""
    span = f"{_repr.when(r.n_steps * r.dt_s)} from t = {_repr.when(r.t0_s)}"
    return f"{r.volume}{on} under {r.workload}, {span}"


def _set_subject_name(r: "StripedResult") -> str:
    m = r.members[0]
    on = f" on {m.instance.instance.name}" if m.instance is not None else ""
    span = f"{_repr.when(m.n_steps * m.dt_s)} from t = {_repr.when(m.t0_s)}"
    what = f"{r.workload}" if r.split is not None else f"{m.workload} on each member"
    return f"{r.set}{on} under {what}, {span}"


def _run_end(r: Union[VolumeResult, InstanceResult]) -> float:
    return r.t0_s + r.n_steps * r.dt_s


def _end_text(r: Union[VolumeResult, InstanceResult], end: float) -> str:
    return "the end of the run" if end >= _run_end(r) - 1e-9 * max(1.0, abs(end)) else _repr.when(end)


def _bound_in(r: Union[VolumeResult, InstanceResult], span: Span) -> str:
    """The limit that held the I/O back most in ``span`` (``demand``: none did)."""
    i0 = int(round((span.start_s - r.t0_s) / r.dt_s))
    i1 = int(round((span.end_s - r.t0_s) / r.dt_s))
    counts = np.bincount(r.series.bound[i0 : max(i1, i0 + 1)], minlength=len(BOUND_NAMES))
    counts[0] = 0
    return BOUND_NAMES[int(counts.argmax())] if counts.any() else "demand"


def _why(r: VolumeResult, span: Span) -> str:
    """Which limit bound in a span, and the empty bucket behind it if there was one."""
    limit = _bound_in(r, span)
    if limit == "demand":
        return "no limit bound (the demand itself, or a backlog from before)"
    why = f"bound by {limit}"
    if limit.startswith("volume_") and any(
        c.start_s < span.end_s and (c.end_s is None or c.end_s > span.start_s) for c in r.cliffs
    ):
        why += " (BurstBalance empty)"
    elif limit.startswith("instance_") and r.instance is not None:
        empty = [
            c.bucket
            for c in r.instance.cliffs
            if c.start_s < span.end_s and (c.end_s is None or c.end_s > span.start_s)
        ]
        if empty:
            why += f" ({', '.join(sorted(set(empty)))} empty)"
    return why


def _spans_text(r: VolumeResult, spans: List[Span], what: str) -> str:
    """``what`` for 5.2 h in 5 spans; the longest ... from ... to ..., bound by ..."""
    total = sum(s.duration_s for s in spans)
    run = r.n_steps * r.dt_s
    share = f" ({total / run:.0%} of the run)" if run > 0 else ""
    longest = max(spans, key=lambda s: s.duration_s)
    where = f"from {_repr.when(longest.start_s)} to {_end_text(r, longest.end_s)}"
    if len(spans) == 1:
        return f"{what} for {_repr.duration(total)}{share}, {where}, {_why(r, longest)}"
    return (
        f"{what} for {_repr.duration(total)}{share} in {len(spans)} spans; the longest, "
        f"{_repr.duration(longest.duration_s)} {where}, {_why(r, longest)}"
    )


def _latency_word(at: str) -> str:
    """What a latency criterion counting from ``at`` is called in the report."""
    return "device latency" if at == "device" else "latency"


def _latency_check(r: VolumeResult, criterion: str, got_ms: float, limit_ms: float, at: str = "arrival") -> Check:
    ok = got_ms <= limit_ms
    ratio = f" ({got_ms / limit_ms:.3g} x the plan)" if limit_ms > 0 and not ok else ""
    got = f"got {_repr.latency(got_ms)}{ratio}"
    if ok:
        return Check(criterion, True, got)
    spans = spans_above_latency(r, limit_ms, at=at)
    if spans:
        detail = _spans_text(r, spans, f"{_latency_word(at)} above {limit_ms:g} ms")
    else:
        detail = (
            f"no step's mean latency is above {limit_ms:g} ms: the spread of waits under a limit and of "
            f"service times puts the percentile there (the latency model, docs/model.md)"
        )
    return Check(criterion, False, got, detail)


def _max_latency_check(r: VolumeResult, limit_ms: float, at: str = "arrival") -> Check:
    what = _latency_word(at)
    criterion = f"{what} <= {limit_ms:g} ms in every step"
    lat = r.latency_ms if at == "arrival" else r.device_latency_ms
    done = ~np.isnan(lat)
    if not done.any():
        return Check(criterion, True, "no I/O completed")
    k = int(np.nanargmax(lat))
    worst = float(lat[k])
    got = f"got {_repr.latency(worst)} at most, at {_repr.when(r.time_s[k])}"
    if worst <= limit_ms:
        return Check(criterion, True, got)
    spans = spans_above_latency(r, limit_ms, at=at)
    return Check(criterion, False, got, _spans_text(r, spans, f"{what} above {limit_ms:g} ms"))


def _cliff_check(r: VolumeResult, within_h: Optional[float]) -> Check:
    criterion = "no cliff" if within_h is None else f"no cliff within {within_h:g} h"
    cliffs = list(r.cliffs) + (list(r.instance.cliffs) if r.instance is not None else [])
    cliffs.sort(key=lambda c: c.start_s)
    if within_h is not None:
        horizon = r.t0_s + within_h * 3600.0
        bad = [c for c in cliffs if c.start_s < horizon]
    else:
        bad = cliffs
    if not bad:
        if not cliffs:
            touched = bool(r.totals.cliffs) or (
                r.instance is not None and bool(r.instance.totals.io_cliffs or r.instance.totals.bytes_cliffs)
            )
            if touched:  # episodes too brief to be a cliff (docs/model.md, "Cliffs")
                got = "no cliff: a bucket touched empty only briefly"
            else:
                got = "no bucket ran dry" if (r.volume.has_bucket or r.instance is not None) else "no bucket to run dry"
        else:
            got = f"first at {_repr.when(cliffs[0].start_s)}"
        return Check(criterion, True, got)
    c = bad[0]
    early = ""
    if within_h is not None:
        early = f", {_repr.duration(r.t0_s + within_h * 3600.0 - c.start_s)} early"
    got = f"{c.bucket} ran dry at {_repr.when(c.start_s)}{early}"
    how = "no limit bound" if c.limit == "demand" else f"bound by {c.limit}"
    if not math.isnan(c.iops):
        how += f" at {_repr.number(c.iops, 'IOPS')}"
        if not math.isnan(c.offered_iops):
            how += f" ({_repr.number(c.offered_iops)} arriving)"
    until = "until the end of the run" if c.end_s is None else f"until {_repr.when(c.end_s)}"
    detail = f"{how} for {_repr.duration(c.duration_s)}, {until}"
    if len(cliffs) > 1:
        detail += f"\n{len(cliffs)} cliffs in the run: " + ", ".join(
            f"{_repr.when(x.start_s)} for {_repr.duration(x.duration_s)}" for x in cliffs[:5]
        )
        if len(cliffs) > 5:
            detail += ", ..."
    return Check(criterion, False, got, detail)


def _below_text(r: Union[VolumeResult, InstanceResult], series: np.ndarray, limit: float, what: str) -> str:
    spans = _spans(series < limit, r.t0_s, r.dt_s)
    total = sum(s.duration_s for s in spans)
    first = spans[0]
    text = f"below {limit:g} % from {_repr.when(first.start_s)} to {_end_text(r, first.end_s)}"
    if len(spans) > 1:
        text += f"; {len(spans)} times, {_repr.duration(total)} in all"
    else:
        text += f", {_repr.duration(total)}"
    return text if not what else f"{what} {text}"


def _burst_balance_check(r: VolumeResult, limit: float) -> Check:
    criterion = f"BurstBalance >= {limit:g} %"
    if not r.volume.has_bucket:
        return Check(criterion, True, "no credit bucket")
    bb = r.burst_balance_pct
    if bb.size == 0:
        return Check(criterion, True, "no steps")
    k = int(np.argmin(bb))
    low = float(bb[k])
    got = f"got {low:.3g} % (lowest)" if low < limit else f"got {low:.3g} % (lowest, at {_repr.when(r.time_s[k])})"
    if low >= limit:
        return Check(criterion, True, got)
    return Check(criterion, False, got, _below_text(r, bb, limit, ""))


def _instance_balance_check(r: VolumeResult, limit: float) -> Check:
    criterion = f"instance balances >= {limit:g} %"
    ir = r.instance
    if ir is None:
        return Check(criterion, True, "no instance")
    lows = {"EBSIOBalance": ir.io_balance_pct, "EBSByteBalance": ir.byte_balance_pct}
    name, series = min(lows.items(), key=lambda kv: float(kv[1].min()) if kv[1].size else math.inf)
    if series.size == 0:
        return Check(criterion, True, "no steps")
    low = float(series.min())
    got = f"{name} {low:.3g} % (lowest)"
    if low >= limit:
        return Check(criterion, True, got)
    detail = _below_text(ir, series, limit, name)
    spans = _spans(series < limit, ir.t0_s, ir.dt_s)
    held = _bound_in(ir, spans[0])
    if held != "demand":
        detail += f"; the instance bound ({held}) for {_repr.duration(_seconds_bound(ir, held))} in the run"
    return Check(criterion, False, got, detail)


def _seconds_bound(r: Union[VolumeResult, InstanceResult], *limits: str) -> float:
    b = r.bound_s
    return sum(b[name] for name in limits)


def _bound_check(r: VolumeResult, limit_s: float, limits: Sequence[str]) -> Check:
    instance = limits[0].startswith("instance")
    criterion = (
        ("never bound by the instance" if instance else "never throttled")
        if limit_s == 0
        else f"{'instance-bound' if instance else 'throttled'} <= {_repr.duration(limit_s)}"
    )
    held = _seconds_bound(r, *limits)
    run = r.n_steps * r.dt_s
    share = f" ({held / run:.0%} of the run)" if run > 0 else ""
    got = f"bound {_repr.duration(held)}{share}" if held > 0 else "never bound"
    if held <= limit_s:
        return Check(criterion, True, got)
    b = r.bound_s
    by = ", ".join(f"{name} {_repr.duration(b[name])}" for name in limits if b[name] > 0)
    detail = f"by {by}"
    if r.recorded and r.record_every == 1 and {"bound", "iops"} <= set(r.recorded):
        spans = bound_spans(r, *limits)
        first = spans[0]
        detail += (
            f"; {len(spans)} span{'s' * (len(spans) != 1)}, the first from {_repr.when(first.start_s)} "
            f"for {_repr.duration(first.duration_s)}"
        )
        i0 = int(round((first.start_s - r.t0_s) / r.dt_s))
        i1 = int(round((first.end_s - r.t0_s) / r.dt_s))
        served = float(r.iops[i0:i1].mean())
        detail += f", serving {_repr.number(served, 'IOPS')}"
        if isinstance(r.workload, (OpenLoop, PiecewiseOpenLoop)):
            offered = float(r.offered_iops[i0:i1].mean())
            detail += f" of {_repr.number(offered)} arriving"
    if instance and r.instance is not None and r.instance.cliff_time_s is not None:
        detail += f"; the instance's balance ran dry at {_repr.when(r.instance.cliff_time_s)}"
    return Check(criterion, False, got, detail)


def _backlog_check(r: VolumeResult, limit: float) -> Check:
    criterion = f"backlog <= {_repr.number(limit)} I/Os"
    b = r.backlog_ops
    if b.size == 0:
        return Check(criterion, True, "no steps")
    k = int(np.argmax(b))
    worst = float(b[k])
    got = f"got {_repr.number(worst)} I/Os at most, at {_repr.when(r.time_s[k])}"
    if worst <= limit:
        return Check(criterion, True, got)
    spans = _spans(b > limit, r.t0_s, r.dt_s)
    return Check(criterion, False, got, _spans_text(r, spans, f"backlog above {_repr.number(limit)} I/Os"))
