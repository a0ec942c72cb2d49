"""A capacity plan read from YAML, its volumes and workload read through the package's readers,
run on the public API and checked with :mod:`ebssim.testing` (docs/check.md)."""

from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from .. import _repr
from ._schema import PlanError, Validator, key_lines, key_path, validate

if TYPE_CHECKING:
    import pandas as pd

    from ..results import VolumeResult
    from ..stripes import StripedResult, StripedSet
    from ..testing import Check, Plan, PlanReport
    from ..volumes import Volume

    Target = Union[Volume, StripedSet]

__all__ = ["CapacityPlan", "PlanOutcome", "read_plan", "parse_plan", "run", "MAX_PLAN_BYTES", "MAX_TRACE_BYTES"]

#: Largest plan file read (a plan is a page of YAML; read at each call).
MAX_PLAN_BYTES = 1 << 20
#: Largest trace file (CSV or parquet) a plan's ``workload.trace`` reads; read at each call.
MAX_TRACE_BYTES = 256 << 20

_WHAT = "a capacity plan (YAML: volumes, workload, criteria)"


@dataclass(frozen=True)
class CapacityPlan:
    """A capacity plan, read and checked: volumes, an instance, one workload and the criteria.

    Built by :func:`read_plan` (a file) or :func:`parse_plan` (text); :meth:`run` simulates the
    workload on the volumes and checks every criterion on every volume.
    """

    name: str
    """The plan's ``name``, else its file's name without the extension."""
    source: str
    """The plan file, or ``"<plan>"``."""
    volumes: Dict[str, "Target"]
    """The volumes by their name in the plan, in the plan's order: each a :class:`~ebssim.Volume`,
    or a :class:`~ebssim.StripedSet` (a ``raid0:`` SPEC, or an ``rds:`` SPEC's volumes)."""
    ids: Dict[str, str]
    """Each volume's id in its source (describe-volumes, manifests, metrics): its ``id``, else its name."""
    instance: Optional[str]
    criteria: "Plan"
    """The criteria as :class:`ebssim.testing.Plan`."""
    workload: Dict[str, Any]
    """The ``workload`` mapping as given (``kind`` added: ``fio``, ``trace``, ``metrics`` or ``prometheus``)."""
    inputs: Tuple[str, ...] = ()
    """Every file the plan was read from: the plan, and the files it names (and their includes)."""
    _load: Any = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        """One line: the workload and the instance."""
        w = self.workload
        if w["kind"] == "fio":
            what = f"fio {w['fio']}"
        elif w["kind"] == "trace":
            what = "traces " + ", ".join(f"{n}: {f}" for n, f in w["trace"].items())
        elif w["kind"] == "prometheus":
            what = "Prometheus metrics " + ", ".join(w["prometheus"])
        else:
            what = "CloudWatch metrics " + ", ".join(w["metrics"])
        on = f" on {self.instance}" if self.instance else ""
        return f"{what}{on}"

    def run(self) -> "PlanOutcome":
        """Simulate the workload on the volumes (and instance) and check every criterion.

        Raises
        ------
        PlanError
            The workload cannot run on these volumes (the message names the key of the plan).
        """
        t0 = time.perf_counter()
        results = self._load.run(self)
        report = self.criteria.check([results[n] for n in self.volumes])
        return PlanOutcome(self, results, report, time.perf_counter() - t0)


@dataclass(frozen=True)
class PlanOutcome:
    """What :meth:`CapacityPlan.run` found: the results and the report of every criterion."""

    plan: CapacityPlan
    results: Dict[str, Union["VolumeResult", "StripedResult"]]
    """Each volume's result, by its name in the plan (a striped set's: a :class:`~ebssim.StripedResult`)."""
    report: "PlanReport"
    """:class:`ebssim.testing.PlanReport`: every criterion on every volume."""
    elapsed_s: float
    """Wall-clock seconds the simulation and the checks took."""

    @property
    def ok(self) -> bool:
        """True when every criterion holds on every volume."""
        return self.report.ok

    @property
    def exit_status(self) -> int:
        """``ebssim check``'s: 0 when the plan is met, 1 when a criterion fails."""
        return 0 if self.ok else 1

    @property
    def checks(self) -> List[Tuple[str, "Check"]]:
        """(volume name, :class:`ebssim.testing.Check`) for every criterion on every volume."""
        names = list(self.plan.volumes)
        return [(names[i], c) for i, s in enumerate(self.report.subjects) for c in s.checks]

    def to_text(self) -> str:
        """The report ``ebssim check`` prints: a header, one line per criterion and volume (PASS or
        FAIL, the criterion with its bound, what the run did), under each failure why (indented),
        and the verdict."""
        checks = self.checks
        names = list(self.plan.volumes)
        nw = max(len(n) for n in names)
        cw = max(len(c.criterion) for _, c in checks)
        lines = [f"plan {self.plan.name} ({self.plan.source}): {self.plan.describe()}"]
        for n, s in zip(names, self.report.subjects):
            lines.append(f"  {n:<{nw}}  {s.name}")
        for n, c in checks:
            lines.append(f"{'PASS' if c.ok else 'FAIL'}  {n:<{nw}}  {c.criterion:<{cw}}  {c.got}")
            if not c.ok and c.detail:
                lines.extend(f"      {d}" for d in c.detail.split("\n"))
        bad = sum(not c.ok for _, c in checks)
        lines.append(
            f"plan met: {len(checks)} of {len(checks)} criteria pass"
            if bad == 0
            else f"plan not met: {bad} of {len(checks)} criteria fail"
        )
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        bad = sum(not c.ok for _, c in self.checks)
        state = "met" if bad == 0 else f"not met, {bad} of {len(self.checks)} criteria fail"
        return _repr.short_repr(
            "PlanOutcome",
            [f"plan {self.plan.name}", state, f"exit status {self.exit_status}", _repr.duration(self.elapsed_s)],
        )

    def _repr_html_(self) -> str:
        from ..testing import checks_html

        bad = sum(not c.ok for _, c in self.checks)
        head = f"plan {self.plan.name}: " + (
            "met" if bad == 0 else f"not met ({bad} of {len(self.checks)} criteria fail)"
        )
        return checks_html(f"PlanOutcome: {head}", "volume", self.checks)

    def to_junit(self) -> str:
        """The outcome as JUnit XML (one test suite, one test case per criterion and volume),
        as pytest's ``--junitxml`` writes it; see :func:`ebssim.check.junit_xml`."""
        from ._junit import junit_xml

        return junit_xml([self])


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def read_plan(path: Union[str, "os.PathLike[str]"]) -> CapacityPlan:
    """Read the capacity plan in the YAML file ``path``: its schema, then every file it names
    (paths relative to the plan's directory), before anything is simulated.

    Raises
    ------
    PlanError
        A ValueError naming the plan, the line, the key and what is allowed.
    """
    from .._files import read_text

    p = os.fspath(path)
    try:
        text = read_text(p, MAX_PLAN_BYTES, _WHAT, "ebssim.check.MAX_PLAN_BYTES")
    except ValueError as e:
        raise _located(str(e), p) from None
    except OSError as e:
        raise PlanError(f"cannot read the plan: {e.strerror or e}", source=p) from None
    stem = os.path.splitext(os.path.basename(p))[0]
    return _parse(text, os.path.dirname(p) or ".", p, stem, p)


def run(path: Union[str, "os.PathLike[str]"]) -> PlanOutcome:
    """:func:`read_plan` and :meth:`CapacityPlan.run`: the outcome of the plan in ``path``."""
    return read_plan(path).run()


def _located(message: str, source: str) -> PlanError:
    """A reader's error about the plan file as a PlanError: the file name it starts with, and
    the line when it gives one, become the PlanError's."""
    import re

    m = re.match(re.escape(source) + r"(?:, line (\d+)(?:, column \d+)?)?: (.*)$", message, flags=re.S)
    if m is None:
        return PlanError(message, source=source)
    return PlanError(m.group(2), source=source, line=int(m.group(1)) if m.group(1) else None)


def parse_plan(text: str, *, base_dir: Union[str, "os.PathLike[str]"] = ".", source: str = "<plan>") -> CapacityPlan:
    """A capacity plan from YAML text; files it names are relative to ``base_dir``; ``source``
    names the plan in messages (and is its name when it has no ``name``).

    Raises
    ------
    PlanError
        As :func:`read_plan`.
    """
    return _parse(text, os.fspath(base_dir), source, "plan" if source == "<plan>" else source, None)


def _parse(text: str, base: str, source: str, default_name: str, plan_file: Optional[str]) -> CapacityPlan:
    from .._files import load_yaml_all

    if not isinstance(text, str):
        raise PlanError(f"the plan must be YAML text, not {type(text).__name__}", source=source)
    try:
        docs = load_yaml_all(text, source, _WHAT)
    except ValueError as e:
        raise _located(str(e), source) from None
    if len(docs) != 1:
        raise PlanError(f"holds {len(docs)} YAML documents: a plan is one", source=source)
    lines, twice = key_lines(text)
    if twice:
        path, first, second = twice[0]
        raise PlanError(f"given twice, on lines {first} and {second}", source=source, key=key_path(path), line=second)
    doc = validate(docs[0], source, lines)
    return _build(doc, base, source, default_name, plan_file, lines)


class _Reader:
    """Errors of the package's readers, named by the plan's key."""

    def __init__(self, source: str, base: str, lines: Dict[Tuple[str, ...], int]) -> None:
        self.source = source
        self.base = base
        self.lines = lines
        self.inputs: List[str] = []

    def path(self, name: str) -> str:
        p = name if os.path.isabs(name) else os.path.join(self.base, name)
        self.inputs.append(p)
        return p

    def error(self, path: List[Any], reason: str) -> PlanError:
        return Validator(self.source, self.lines).error(path, " ".join(reason.split()))


def _build(
    doc: Dict[str, Any],
    base: str,
    source: str,
    default_name: str,
    plan_file: Optional[str],
    lines: Dict[Tuple[str, ...], int],
) -> CapacityPlan:
    from ..testing import Plan

    r = _Reader(source, base, lines)
    if plan_file is not None:
        r.inputs.append(plan_file)

    # Criteria first: they are the cheapest to check. Each alone, so that an error names its key.
    crit = doc["criteria"]
    for k, v in crit.items():
        try:
            Plan(**{k: v})
        except ValueError as e:
            if "has no criterion" not in str(e):  # no_cliff: false alone
                raise r.error(["criteria", k], str(e)) from None
    try:
        criteria = Plan(**crit)
    except ValueError as e:
        raise r.error(["criteria"], str(e)) from None

    volumes, ids = _volumes(doc["volumes"], r)
    instance = doc.get("instance")
    if isinstance(instance, str) and instance.startswith("db."):  # an RDS class: its EC2 type's limits
        from .._rds import db_instance

        try:
            instance = db_instance(instance).name
        except ValueError as e:
            raise r.error(["instance"], str(e)) from None
    if instance is not None:  # as the runs will take it: a type without EBS limits warns, and runs
        from ..simulation import Simulation

        try:
            Simulation(dict(volumes), instance=instance)
        except ValueError as e:
            raise r.error(["instance"], str(e)) from None
    kind = doc["workload"]["kind"]
    load: Any = {"fio": _Fio, "trace": _Trace, "metrics": _Metrics, "prometheus": _Prometheus}[kind](
        doc["workload"], volumes, ids, r
    )
    return CapacityPlan(
        name=doc.get("name", default_name),
        source=source,
        volumes=volumes,
        ids=ids,
        instance=instance,
        criteria=criteria,
        workload=doc["workload"],
        inputs=tuple(dict.fromkeys(r.inputs)),
        _load=load,
    )


def _volumes(entries: Dict[str, Any], r: _Reader) -> Tuple[Dict[str, "Target"], Dict[str, str]]:
    from .. import aws, k8s, rds_from_spec
    from ..stripes import target_from_spec

    volumes: Dict[str, Target] = {}
    ids: Dict[str, str] = {}
    files: Dict[Tuple[str, str], Dict[str, Volume]] = {}
    for name, entry in entries.items():
        path: List[Any] = ["volumes", name]
        if isinstance(entry, str):
            try:
                # A volume, a striped set (raid0:...) or an RDS instance's storage (rds:..., its volumes).
                volumes[name] = rds_from_spec(entry).volumes if entry.startswith("rds:") else target_from_spec(entry)
            except ValueError as e:
                raise r.error(path, str(e)) from None
            ids[name] = name
            continue
        kind = "describe_volumes" if "describe_volumes" in entry else "kubernetes"
        f = r.path(entry[kind])
        if (kind, f) not in files:
            try:
                if kind == "describe_volumes":
                    files[kind, f] = dict(aws.read_volumes(f))
                else:
                    files[kind, f] = {c.volume_id: c.volume for c in k8s.read_claims(f)}
            except (ValueError, OSError) as e:
                raise r.error([*path, kind], str(e)) from None
        found = files[kind, f]
        vid = entry.get("id", name)
        if vid not in found:
            import difflib

            close = difflib.get_close_matches(vid, list(found), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            held = ", ".join(found) or "none"
            where = [*path, "id"] if "id" in entry else path
            raise r.error(where, f"{vid!r} is not a volume of {entry[kind]}{hint} (it holds: {held})")
        volumes[name] = found[vid]
        ids[name] = vid
    seen: Dict[str, str] = {}
    for name, vid in ids.items():
        if vid in seen:
            raise r.error(["volumes", name], f"is volume {vid!r} again (as {seen[vid]!r}): give each volume once")
        seen[vid] = name
    return volumes, ids


# --------------------------------------------------------------------------------------------
# Workloads: each read when the plan is read, run by CapacityPlan.run
# --------------------------------------------------------------------------------------------


class _Fio:
    """``workload.fio``: the jobs of one fio phase, each a closed loop on its volume for the jobs'
    runtime: ``FioJob.offered_load`` (the one mapping from a fio job to the model's load) with its
    ``numjobs`` clones as one loop of their depths together (identical loops on one volume are one
    loop of the summed depth: the same offer, the same Little's law).

    One job per volume, without ``rate_iops``/``rate`` caps: the criteria are checked on each
    volume's result, whose latency is its loop's. Several jobs on one volume, or a capped job,
    run as :class:`ebssim.SharedClosedLoops`, whose volume result describes what the volume
    serves but not each job's latency (:meth:`ebssim.SharedClosedLoops.split` has that), so a
    plan refuses them rather than check a latency no job sees.

    A job on a striped set runs on the set as in ``ebssim fio``: the set's loop (its depth, the
    job's I/Os) is split into its members' by the set's rule (:meth:`ebssim.StripedSet.member_workload`)
    and the members run beside the plain volumes, on the one instance."""

    def __init__(self, w: Dict[str, Any], volumes: Dict[str, "Target"], ids: Dict[str, str], r: _Reader) -> None:
        import math

        from ..fio import parse_run

        key: List[Any] = ["workload", "fio"]
        run = w["fio"]
        try:
            js = parse_run(run, cwd=r.base)
        except (ValueError, OSError) as e:
            raise r.error(key, str(e)) from None
        r.inputs.extend(js.input_files)
        if len(js.phases()) > 1:
            raise r.error(key, f"{run}: its jobs run in {len(js.phases())} phases (stonewall): a plan runs one phase")
        self.dt = float(w.get("dt", 1.0))
        if not self.dt > 0:
            raise r.error(["workload", "dt"], f"dt={w['dt']!r} must be a positive number of seconds")
        durations = set()
        self.jobs: Dict[str, Tuple[Any, float]] = {}  # volume -> (job, its share of the job)
        for job in js.jobs:
            where = f"{job.source}:{job.line}: job {job.name!r}" if job.line else f"job {job.name!r}"
            if job.runtime is None or not job.time_based:
                raise r.error(
                    key,
                    f"{where} is not time_based with a runtime: a plan runs each job for its runtime "
                    "(add runtime= and time_based)",
                )
            if math.isfinite(job.rate_cap_iops):
                raise r.error(
                    key,
                    f"{where} caps its rate (rate_iops/rate): a plan checks each volume's latency, and a capped "
                    "job's own latency is not its volume's when a limit binds; pace it with thinktime instead, "
                    "or predict it with ebssim fio",
                )
            durations.add(job.ramp_time + job.runtime)
            if not job.targets:
                raise r.error(
                    key, f"{where} has no filename: give filename= one of the plan's volumes ({', '.join(volumes)})"
                )
            for t in job.targets:
                if t not in volumes:
                    raise r.error(
                        key, f"{where}: filename {t!r} is not one of the plan's volumes ({', '.join(volumes)})"
                    )
                if t in self.jobs:
                    other = self.jobs[t][0].name
                    raise r.error(
                        key,
                        f"{where} and job {other!r} both do I/O to {t}: a plan checks each volume's latency, one "
                        "job's; give each job its own volume, or merge them into one job (numjobs=)",
                    )
                self.jobs[t] = (job, 1.0 / len(job.targets))
        if len(durations) > 1:
            shown = ", ".join(f"{d:g} s" for d in sorted(durations))
            raise r.error(key, f"{run}: its jobs run for {shown} (ramp_time + runtime): a plan runs them for one time")
        self.duration_s = durations.pop()
        idle = [n for n in volumes if n not in self.jobs]
        if idle:
            raise r.error(["volumes", idle[0]], f"no job of {run} does I/O to it: give it a job or leave it out")

    def run(self, plan: CapacityPlan) -> Dict[str, Union["VolumeResult", "StripedResult"]]:
        import dataclasses

        from ..simulation import Simulation
        from ..stripes import StripedSet

        workloads = {}
        for n, t in plan.volumes.items():
            job, share = self.jobs[n]  # a job on several files: an equal share on each, as fio spreads it
            # On a set: the job's loop on the set (alike members: a member's service time and counting
            # rule for the job's I/Os), which the simulation splits into the members' by the set's rule.
            loop = job.offered_load(t.members[0] if isinstance(t, StripedSet) else t, share).loop
            workloads[n] = dataclasses.replace(loop, in_flight=loop.in_flight * job.numjobs)
        sim = Simulation(dict(plan.volumes), dt=self.dt, instance=plan.instance)
        res = sim.run(workloads, self.duration_s)
        return {n: res[n] for n in plan.volumes}


def _read_trace(path: str, shown: str) -> "pd.DataFrame":
    """A trace file: CSV (a ``time``/``timestamp`` column of times, or ``time_s`` of seconds) or
    parquet (the same columns, or an index of times)."""
    import pandas as pd

    from .._files import decode, read_bounded

    data = read_bounded(path, MAX_TRACE_BYTES, "a trace (CSV or parquet)", "ebssim.check.MAX_TRACE_BYTES")
    if path.endswith((".parquet", ".pq")):
        try:
            df = pd.read_parquet(io.BytesIO(data))
        except ImportError as e:
            raise ValueError(f"{shown}: reading parquet needs pyarrow (pip install pyarrow): {e}") from None
        except Exception as e:  # pyarrow's own errors for a file that is not parquet
            raise ValueError(f"{shown}: not a parquet file ({type(e).__name__}: {e})") from None
        if isinstance(df.index, (pd.DatetimeIndex, pd.TimedeltaIndex, pd.PeriodIndex)) or df.index.name == "time_s":
            return df
    elif path.endswith(".csv"):
        try:
            df = pd.read_csv(io.StringIO(decode(data, shown, "a CSV trace")))
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
            raise ValueError(f"{shown}: not a CSV trace ({' '.join(str(e).split())})") from None
    else:
        raise ValueError(f"{shown}: a trace is a .csv or .parquet file")
    cols = {str(c).lower(): c for c in df.columns}
    if "time_s" in cols:
        return df.set_index(cols["time_s"]).rename_axis("time_s")
    for name in ("time", "timestamp"):
        if name in cols:
            col = cols[name]
            try:
                idx = pd.to_datetime(df[col], utc=True)
            except (ValueError, TypeError) as e:
                raise ValueError(f"{shown}: column {col!r} does not hold times ({e})") from None
            return df.drop(columns=[col]).set_index(pd.DatetimeIndex(idx, name=col))
    raise ValueError(
        f"{shown}: no time column: give 'time' (or 'timestamp': dates and times) or 'time_s' (seconds); "
        f"columns: {', '.join(map(str, df.columns))}"
    )


class _Trace:
    """``workload.trace``: each volume's trace, read by :meth:`ebssim.OpenLoop.from_pandas` and
    replayed until its work is done (:meth:`ebssim.Simulation.replay`); a striped set's trace is
    the set's (an md device's I/O), split into its members' by the set's rule
    (:meth:`ebssim.StripedSet.member_workload`)."""

    def __init__(self, w: Dict[str, Any], volumes: Dict[str, "Target"], ids: Dict[str, str], r: _Reader) -> None:
        from ..workloads import OpenLoop

        opts = {k: w[k] for k in ("dt", "gaps", "max_in_flight", "io_size", "read_fraction") if k in w}
        self.traces: Dict[str, OpenLoop] = {}
        for name, f in w["trace"].items():
            key: List[Any] = ["workload", "trace", name]
            if name not in volumes:
                raise r.error(key, f"{name!r} is not one of the plan's volumes ({', '.join(volumes)})")
            try:
                df = _read_trace(r.path(f), f)
                self.traces[name] = OpenLoop.from_pandas(df, **opts)
            except (ValueError, OSError) as e:
                raise r.error(key, str(e)) from None
        idle = [n for n in volumes if n not in self.traces]
        if idle:
            raise r.error(["volumes", idle[0]], "has no trace in workload.trace: give it one or leave it out")
        steps = {n: t.dt for n, t in self.traces.items()}
        if len(set(steps.values())) > 1:
            shown = ", ".join(f"{n}: {s:g} s" for n, s in steps.items())
            raise r.error(
                ["workload", "trace"], f"the traces have different steps ({shown}): give dt, a step all divide"
            )

    def run(self, plan: CapacityPlan) -> Dict[str, Union["VolumeResult", "StripedResult"]]:
        from ..simulation import Simulation

        names = list(plan.volumes)
        dt = next(iter(self.traces.values())).dt
        assert dt is not None  # from_pandas gives every trace its step
        sim = Simulation(dict(plan.volumes), dt=dt, instance=plan.instance)
        res = sim.replay({n: self.traces[n] for n in names})
        return {n: res[n] for n in names}


class _Metrics:
    """``workload.metrics``: CloudWatch metrics read by :mod:`ebssim.aws` and replayed on the plan's
    volumes (:func:`ebssim.aws.replay`), matched by VolumeId (each volume's ``id``, else its name);
    metrics of volumes the plan does not list are left out.

    A striped set's demand is its members' metrics summed (``workload.members``: SET: [VolumeId,
    ...]) or its own counters under its name (an md device's), and each member replays its share
    (:meth:`ebssim.StripedSet.member_metrics`, as ``ebssim advise`` does), beside the plain
    volumes on the one instance; the set's result holds its members'."""

    kind = "metrics"

    def __init__(self, w: Dict[str, Any], volumes: Dict[str, "Target"], ids: Dict[str, str], r: _Reader) -> None:
        import pandas as pd

        from .. import aws
        from ..stripes import StripedSet

        sets = {n: t for n, t in volumes.items() if isinstance(t, StripedSet)}
        self.members: Dict[str, List[str]] = {}
        for name, given in w.get("members", {}).items():
            key: List[Any] = ["workload", "members", name]
            if name not in sets:
                what = "not one of the plan's volumes" if name not in volumes else "a volume, not a striped set"
                raise r.error(key, f"{name!r} is {what} (the plan's striped sets: {', '.join(sets) or 'none'})")
            try:
                self.members[name] = sets[name]._member_ids(given)
            except ValueError as e:
                raise r.error(key, str(e)) from None
        if sets and "max_in_flight" in w and w["max_in_flight"] not in ("measured", "peak"):
            raise r.error(
                ["workload", "max_in_flight"],
                f"the plan has the striped set {next(iter(sets))!r}, whose members replay shares of its demand: a "
                "number of outstanding I/Os is not split over a set's members; give max_in_flight: measured (each "
                "member's part of the measured VolumeQueueLength: the members' own, or the set's times its share), "
                "peak (the largest of those) or leave it out",
            )
        metrics = self.read(w, ids, r)
        have = set(metrics["volume_id"])
        for name, vid in ids.items():
            if name not in sets and vid not in have:
                listed = ", ".join(sorted(have)) or "none"
                raise r.error(
                    ["volumes", name], f"the metrics hold no datapoint of volume {vid!r} (they hold: {listed})"
                )
        # Each member of a set replays its share of the set's demand, as a volume of its own.
        self.by_id: Dict[str, Volume] = {}
        for vname, vid in ids.items():
            t = volumes[vname]
            if not isinstance(t, StripedSet):
                self.by_id[vid] = t
        self.member_ids: Dict[str, List[str]] = {}
        frames = [metrics[metrics["volume_id"].isin(list(self.by_id))]]
        for name, st in sets.items():
            given = self.members.get(name)
            try:
                one = st.member_metrics(metrics, ids[name], given)
            except ValueError as e:
                raise r.error(["workload", "members", name] if given else ["volumes", name], str(e)) from None
            self.member_ids[name] = [f"{ids[name]}[{k}]" for k in range(st.n)]
            for k, mid in enumerate(self.member_ids[name]):
                frames.append(one.assign(volume_id=mid))
                self.by_id[mid] = st.members[k]
        self.metrics = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
        self.options = {k: w[k] for k in ("dt", "gaps", "max_in_flight", "initial_burst_balance") if k in w}
        # Checked now, not after the plan's other errors: the traces are cheap to build.
        try:
            aws.traces(
                self.metrics,
                **{k: v for k, v in self.options.items() if k != "initial_burst_balance"},
                volumes=self.by_id,
            )
        except ValueError as e:
            raise r.error(["workload"], str(e)) from None

    def read(self, w: Dict[str, Any], ids: Dict[str, str], r: _Reader) -> "pd.DataFrame":
        """The metrics DataFrame of ``workload.metrics``: CloudWatch's, as ebssim.aws reads them."""
        import pandas as pd

        from .. import aws

        key: List[Any] = ["workload", "metrics"]
        queries = r.path(w["queries"]) if "queries" in w else None
        frames = []
        for i, f in enumerate(w["metrics"]):
            where = key if len(w["metrics"]) == 1 else [*key, i]
            p = r.path(f)
            try:
                frames.append(
                    aws.read_metrics_csv(p) if p.endswith(".csv") else aws.read_metric_data(p, queries=queries)
                )
            except (ValueError, OSError) as e:
                raise r.error(where, str(e)) from None
        try:
            return aws.check_metrics(pd.concat(frames, ignore_index=True)) if len(frames) > 1 else frames[0]
        except ValueError as e:
            raise r.error(key, str(e)) from None

    def run(self, plan: CapacityPlan) -> Dict[str, Union["VolumeResult", "StripedResult"]]:
        from .. import aws
        from ..results import RunResult
        from ..stripes import StripedResult, StripedSet

        attachments = None
        if plan.instance is not None:  # every volume (and every member of a set) on one instance of the plan's type
            attachments = {vid: aws.Attachment("plan", plan.instance) for vid in self.by_id}
        try:
            res = aws.replay(self.metrics, self.by_id, attachments, **self.options)
        except ValueError as e:
            raise PlanError(" ".join(str(e).split()), source=plan.source, key="workload") from None
        out: Dict[str, Union[VolumeResult, StripedResult]] = {}
        for n, t in plan.volumes.items():
            if isinstance(t, StripedSet):
                members = [res[mid] for mid in self.member_ids[n]]
                out[n] = StripedResult(t, None, None, RunResult(members, members[0].instance))
            else:
                out[n] = res[plan.ids[n]]
        return out


class _Prometheus(_Metrics):
    """``workload.prometheus``: node_exporter's disk counters from Prometheus's ``query_range``
    answers, read by :func:`ebssim.prometheus.read_metrics` with ``devices`` (each device named to a
    plan volume, by its name or id) and ``disk_info`` (by NVMe serial, the volume's id), and
    replayed as CloudWatch metrics are."""

    kind = "prometheus"

    def read(self, w: Dict[str, Any], ids: Dict[str, str], r: _Reader) -> "pd.DataFrame":
        from .. import prometheus

        key: List[Any] = ["workload", "prometheus"]
        by_ref = {**{vid: vid for vid in ids.values()}, **ids}  # a plan volume's name or id -> its id
        by_ref.update((m, m) for ms in self.members.values() for m in ms)  # a striped set's members, by VolumeId
        devices: Dict[Any, str] = {}

        def volume_of(ref: str, path: List[Any]) -> str:
            if ref not in by_ref:
                also = " nor a member named in workload.members" if self.members else ""
                raise r.error(path, f"{ref!r} is not one of the plan's volumes ({', '.join(ids)}){also}")
            return by_ref[ref]

        for dev, vol in w.get("devices", {}).items():
            if isinstance(vol, dict):
                for d, x in vol.items():
                    devices[(dev, d)] = volume_of(x, ["workload", "devices", dev, d])
            else:
                devices[dev] = volume_of(vol, ["workload", "devices", dev])
        disk_info = None
        if "disk_info" in w:
            disk_info = r.path(w["disk_info"])
            try:
                prometheus.device_volumes(disk_info)
            except (ValueError, OSError) as e:
                raise r.error(["workload", "disk_info"], str(e)) from None
        samples: List[Any] = []  # each answer read once, here, so that an error names its file
        for i, f in enumerate(w["prometheus"]):
            src = prometheus.source_of(f)  # a path, or (metric, path) for METRIC=FILE (a rate() answer)
            metric, path = src if isinstance(src, tuple) else (None, src)
            try:
                samples.append(prometheus.read_query_range(r.path(path), metric=metric))
            except (ValueError, OSError) as e:
                raise r.error(key if len(w["prometheus"]) == 1 else [*key, i], str(e)) from None
        try:
            return prometheus.read_metrics(*samples, devices=devices, disk_info=disk_info)
        except (ValueError, OSError) as e:
            raise r.error(key, str(e)) from None
