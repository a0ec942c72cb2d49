"""Text and HTML renderings shared by the results, workloads and volumes: durations that read
well ("5.78 h", not "20808.0"), latencies in ms or, from a second on, as durations ("46.9 min",
not "2813093.69 ms"), one-line reprs of at most :data:`MAX_REPR` characters, and small HTML
tables for Jupyter's ``_repr_html_``. Every public result type renders through these (one home:
``tests/python/test_reprs.py`` checks each)."""

from __future__ import annotations

import html
import math
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

__all__ = ["MAX_REPR", "duration", "when", "number", "latency", "usd", "short_repr", "html_table", "html_grid"]

#: Longest plain ``repr`` of a public result: one line that says what it is, not its arrays.
MAX_REPR = 400


def duration(seconds: float) -> str:
    """A duration in the unit that reads best: seconds up to 2 minutes, minutes up to 2 hours,
    hours up to 2 days, then days; three significant digits.

    >>> duration(45), duration(2000), duration(20808), duration(604800)
    ('45 s', '33.3 min', '5.78 h', '7 d')
    """
    s = float(seconds)
    if math.isnan(s):
        return "n/a"
    if math.isinf(s):
        return "forever"
    a = abs(s)
    if a < 120:
        return f"{s:.3g} s"
    if a < 7200:
        return f"{s / 60:.3g} min"
    if a < 172800:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} d"


def when(t_s: float) -> str:
    """A simulated time: seconds, and the same in a larger unit when that reads better.

    >>> when(30), when(8000)
    ('30 s', '8,000 s (2.22 h)')
    """
    t = float(t_s)
    if abs(t) < 120:
        return f"{t:.3g} s"
    return f"{t:,.0f} s ({duration(t)})"


def number(x: Optional[float], unit: str = "") -> str:
    """A number as people compare them: thousands separators from 1,000, else three significant
    digits; None and NaN read "n/a".

    >>> number(36.198431810100715, "ms"), number(18750.0, "IOPS"), number(0.50390625, "ms"), number(None)
    ('36.2 ms', '18,750 IOPS', '0.504 ms', 'n/a')
    """
    if x is None or math.isnan(x):
        return "n/a"
    v = float(x)
    text = "inf" if math.isinf(v) else f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"
    return f"{text} {unit}".strip()


def latency(ms: Optional[float]) -> str:
    """A latency in ms, or as a duration once it reaches a second (queues can wait minutes).

    >>> latency(10.666), latency(106.7), latency(291024.9)
    ('10.7 ms', '107 ms', '4.85 min')
    """
    if ms is None or math.isnan(ms) or abs(ms) < 1000:
        return number(ms, "ms")
    return duration(ms / 1e3)


def latency_s(seconds: Optional[float]) -> str:
    """:func:`latency` of a time in seconds (fio's and the per-step series' unit).

    >>> latency_s(0.000504), latency_s(2813.09369)
    ('0.504 ms', '46.9 min')
    """
    return latency(None if seconds is None else float(seconds) * 1e3)


def usd(x: Optional[float]) -> str:
    """An amount in US dollars, to the cent.

    >>> usd(3727.1), usd(0.32)
    ('$3,727.10', '$0.32')
    """
    return "n/a" if x is None or math.isnan(x) else f"${x:,.2f}"


def short_repr(name: str, parts: Iterable[str], limit: int = MAX_REPR, sep: str = ", ") -> str:
    """``name(part, part, ...)`` in at most ``limit`` characters: the first part that does not
    fit is cut ("...") and the rest dropped (", ..."), or, with too little room left to be
    worth reading, dropped too.

    >>> short_repr("Cliff", ["BurstBalance empty", "", "300 IOPS"])
    'Cliff(BurstBalance empty, 300 IOPS)'
    >>> short_repr("X", ["a" * 20, "b" * 40, "c"], limit=50)
    'X(aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbb..., ...)'
    >>> short_repr("X", ["a" * 20, "b" * 20, "c"], limit=30), len(short_repr("X", ["a" * 500]))
    ('X(aaaaaaaaaaaaaaaaaaaa, ...)', 400)
    """
    kept = [p for p in parts if p]
    text = f"{name}({sep.join(kept)})"
    if len(text) <= limit:
        return text
    for i in range(len(kept), 0, -1):
        head = f"{name}({sep.join(kept[:i])}"
        more = sep + "..." if i < len(kept) else ""
        if len(head) + len(more) + 1 <= limit:
            room = limit - len(head) - len(sep) - len(more) - 4  # ", " + part + "..." + more + ")"
            if i < len(kept) and room >= 15:
                return f"{head}{sep}{kept[i][:room]}...{more})"
            return f"{head}{more})"
    return text[: limit - 4] + "...)"


def html_table(title: str, rows: Iterable[Tuple[str, str]], note: Optional[str] = None) -> str:
    """A two-column table (name, value) with a caption, escaped, for ``_repr_html_``.

    >>> html_table("gp2", [("IOPS", "300")]).count("<tr>")
    1
    """
    cells = "".join(
        f'<tr><th style="text-align:left;padding:1px 8px 1px 0;font-weight:normal;color:#555">{html.escape(k)}</th>'
        f'<td style="text-align:left;padding:1px 0">{html.escape(v)}</td></tr>'
        for k, v in rows
    )
    foot = (
        f'<tr><td colspan="2" style="text-align:left;color:#777;padding-top:3px">{html.escape(note)}</td></tr>'
        if note
        else ""
    )
    return (
        '<table style="border-collapse:collapse;font-size:90%">'
        f'<caption style="text-align:left;font-weight:bold;padding-bottom:3px">{html.escape(title)}</caption>'
        f"{cells}{foot}</table>"
    )


def html_grid(title: str, header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table with a header row, escaped, for ``_repr_html_`` of collections.

    >>> html_grid("runs", ["volume", "IOPS"], [["gp2", "300"]]).count("<tr>")
    2
    """
    th = "".join(f'<th style="text-align:left;padding:1px 10px 1px 0">{html.escape(h)}</th>' for h in header)
    td = '<td style="text-align:left;padding:1px 10px 1px 0">{}</td>'
    body = "".join("<tr>" + "".join(td.format(html.escape(c)) for c in r) + "</tr>" for r in rows)
    return (
        '<table style="border-collapse:collapse;font-size:90%">'
        f'<caption style="text-align:left;font-weight:bold;padding-bottom:3px">{html.escape(title)}</caption>'
        f"<tr>{th}</tr>{body}</table>"
    )


# --------------------------------------------------------------------------------------------
# Summaries of the public objects (their _repr_html_ and OpenLoop's repr call these)
# --------------------------------------------------------------------------------------------

_MAX_CLIFFS_SHOWN = 6


def size(nbytes: float) -> str:
    """Bytes as KiB, MiB, GiB or TiB.

    >>> size(4096), size(1.5 * 2**20), size(512), size(6030000 * 4096)
    ('4 KiB', '1.5 MiB', '512 B', '23 GiB')
    """
    b = float(nbytes)
    if b >= 2**40:
        return f"{b / 2**40:.3g} TiB"
    if b >= 2**30:
        return f"{b / 2**30:.3g} GiB"
    if b >= 2**20:
        return f"{b / 2**20:.3g} MiB"
    if b >= 1024:
        return f"{b / 1024:.3g} KiB"
    return f"{b:.3g} B"


def steps(n_steps: int, dt_s: float) -> str:
    """A run's length: its steps, and the time they span.

    >>> steps(2700, 1.0), steps(10080, 60.0)
    ('2,700 steps of 1 s (45 min)', '10,080 steps of 60 s (7 d)')
    """
    return f"{n_steps:,} steps of {dt_s:g} s ({duration(n_steps * dt_s)})"


def _span_of_run(n_steps: int, dt_s: float, t0_s: float) -> str:
    return f"{steps(n_steps, dt_s)} from t = {when(t0_s)}"


def _held_back(bound_s: Dict[str, float]) -> str:
    total = sum(bound_s.values())
    held = [(k, v) for k, v in bound_s.items() if k != "demand" and v > 0]
    if not held or total <= 0:
        return "never"
    return ", ".join(f"{k} {duration(v)} ({v / total:.0%})" for k, v in held)


def _cliff_rows(cliffs: Sequence[Any]) -> List[Tuple[str, str]]:
    rows = []
    for i, c in enumerate(cliffs[:_MAX_CLIFFS_SHOWN]):
        end = "still empty at the end" if c.end_s is None else f"for {duration(c.duration_s)}"
        at = f" at {number(c.iops, 'IOPS')}" if not math.isnan(c.iops) else ""
        rows.append((f"cliff {i + 1}", f"{c.bucket} empty from {when(c.start_s)} {end}, {c.limit}{at}"))
    if len(cliffs) > _MAX_CLIFFS_SHOWN:
        rows.append(("", f"... and {len(cliffs) - _MAX_CLIFFS_SHOWN} more (.cliffs lists them all)"))
    return rows


def volume_result_html(r: Any) -> str:
    """The HTML summary of a :class:`~ebssim.VolumeResult` (no arrays)."""
    rows = [
        ("workload", str(r.workload)),
        ("run", _span_of_run(r.n_steps, r.dt_s, r.t0_s)),
        ("served", f"{number(r.mean_iops, 'IOPS')} mean, {latency(r.mean_latency_ms)} mean latency"),
    ]
    cliffs = r.cliffs
    if not r.volume.has_bucket:
        rows.append(("cliffs", "none (no credit bucket)"))
    elif not cliffs:
        rows.append(("cliffs", "none: the bucket never ran dry"))
    else:
        rows += _cliff_rows(cliffs)
    if r.burst_balance_end_pct is not None:
        rows.append(("BurstBalance at end", f"{r.burst_balance_end_pct:.1f} %"))
    rows.append(("held back by", _held_back(r.bound_s)))
    if r.instance is not None:
        run = r.n_steps * r.dt_s
        held = r.instance_bound_s
        text = f"{r.instance.instance.name}: bound {duration(held)}" + (f" ({held / run:.0%})" if run > 0 else "")
        if r.instance.cliff_time_s is not None:
            text += f", a balance ran dry at {when(r.instance.cliff_time_s)}"
        rows.append(("instance", text))
    s = r.summary()
    if s.bounded and s.mean_device_latency_ms is not None:
        wait = max(s.mean_latency_ms - s.mean_device_latency_ms, 0.0)
        rows.append(
            ("at the device", f"{latency(s.mean_device_latency_ms)} mean; {latency(wait)} mean wait in the application")
        )
    if s.replay:
        if s.overrun_s is None:
            rows.append(("trace's work", "not done by the end of the run"))
        elif s.overrun_s > 0:
            rows.append(
                (
                    "trace's work",
                    f"done {duration(s.overrun_s)} after its last I/O arrived: slowdown {s.slowdown:.4g}",
                )
            )
        else:
            rows.append(("trace's work", "done in the trace's time"))
    if r.totals.backlog_ops > 0:
        rows.append(("queued at end", f"{number(r.totals.backlog_ops)} I/Os"))
    from .recording import DEFAULT_VOLUME_SERIES

    note = None
    if not r.recorded and r.n_steps > 0:
        note = "run with record=False: totals only"
    elif r.record_every > 1 or tuple(r.recorded) != DEFAULT_VOLUME_SERIES:
        what = "the default series" if tuple(r.recorded) == DEFAULT_VOLUME_SERIES else ", ".join(r.recorded)
        note = f"recorded: {what}, one value every {r.record_every} step{'s' * (r.record_every != 1)}"
    return html_table(f"VolumeResult: {r.volume}", rows, note)


def instance_result_html(r: Any) -> str:
    """The HTML summary of an :class:`~ebssim.InstanceResult`."""
    rows = [
        ("run", _span_of_run(r.n_steps, r.dt_s, r.t0_s)),
        ("EBSIOBalance at end", f"{r.io_balance_end_pct:.1f} %"),
        ("EBSByteBalance at end", f"{r.byte_balance_end_pct:.1f} %"),
        ("binding", _held_back(r.bound_s)),
    ]
    cliffs = r.cliffs
    rows += _cliff_rows(cliffs) if cliffs else [("cliffs", "none: the balances never ran dry")]
    return html_table(f"InstanceResult: {r.instance}", rows)


def run_result_html(run: Any) -> str:
    """The HTML summary of a :class:`~ebssim.RunResult`: a row per volume, and the instance's."""
    header = ["#", "volume", "workload", "IOPS", "latency", "cliffs", "held back by"]
    rows = []
    labels = [str(i) for i in range(len(run))]
    if run.targets is not None:  # named targets: a row per striped set (in set I/Os), volumes by name
        for name, r in run.targets.items():
            if hasattr(r, "members"):
                cliffs = "none" if r.cliff_time_s is None else f"first member's at {when(r.cliff_time_s)}"
                row = [name, str(r.set), str(r.workload), number(r.mean_iops), latency(r.mean_latency_ms), cliffs, ""]
                rows.append(row)
        labels = [name if k is None else f"{name}[{k}]" for name, k in run._volume_targets()]
    for i, r in enumerate(run):
        first = f", first at {when(r.cliff_time_s)}" if r.cliff_time_s is not None else ""
        rows.append(
            [
                labels[i],
                str(r.volume),
                str(r.workload),
                number(r.mean_iops),
                latency(r.mean_latency_ms),
                f"{r._cliff_count()}{first}",
                _held_back(r.bound_s),
            ]
        )
    if run.instance is not None:
        ir = run.instance
        first = f", first at {when(ir.cliff_time_s)}" if ir.cliff_time_s is not None else ""
        rows.append(["", str(ir.instance), "all volumes", "", "", f"{len(ir.cliffs)}{first}", _held_back(ir.bound_s)])
    return html_grid(f"RunResult: {len(run)} volume{'s' * (len(run) != 1)}", header, rows)


def run_result_repr(run: Any) -> str:
    """RunResult's plain repr: the run, then a few words per volume (as many as fit)."""
    n = len(run)
    on = "" if run.instance is None else f" on {run.instance.instance.name}"
    head = f"{n} volume{'s' * (n != 1)}{on}"
    if n:
        head += f", {steps(run[0].n_steps, run[0].dt_s)}"
    parts = [head]
    if run.targets is not None:  # named targets: a few words per target, a striped set as one
        for name, r in run.targets.items():
            if hasattr(r, "members"):
                v = r.set.members[0]
                what = f"RAID-0 of {r.set.n} x {v.type} {v.size_gib:g} GiB"
                cliff = "no cliff" if r.cliff_time_s is None else f"first member cliff at {when(r.cliff_time_s)}"
            else:
                v = r.volume
                what, cliff = f"{v.type} {v.size_gib:g} GiB", r._cliff_text()
            parts.append(f"[{name!r}] {what}: {number(r.mean_iops, 'IOPS')}, {latency(r.mean_latency_ms)}, {cliff}")
    for i, r in enumerate(run if run.targets is None else []):
        v = r.volume
        parts.append(
            f"[{i}] {v.type} {v.size_gib:g} GiB: {number(r.mean_iops, 'IOPS')}, {latency(r.mean_latency_ms)}, "
            f"{r._cliff_text()}"
        )
    if run.instance is not None and run.instance.cliff_time_s is not None:
        parts.insert(1, f"instance balance ran dry at {when(run.instance.cliff_time_s)}")
    return short_repr("RunResult", parts, sep="; ")


def _core_field(name: str, value: Any) -> str:
    """One field of a compiled record, in units that read: its name says the unit."""
    if hasattr(value, "dtype") and hasattr(value, "size"):  # a series: its length and type, not its data
        return f"<{value.size:,} {value.dtype}>"
    if name.endswith("cliffs"):
        n = len(value)
        if n == 0:
            return "none"
        return f"{n:,} episode{'s' * (n != 1)}, the first from {when(value[0].start_s)}"
    if name == "steps_bound":
        from .recording import BOUND_NAMES

        if len(value) != len(BOUND_NAMES):
            return repr(value)
        held = [f"{b}: {k:,}" for b, k in zip(BOUND_NAMES, value) if k]
        return "{" + ", ".join(held) + "}"
    if not isinstance(value, float):
        return repr(value)
    if name.endswith("_s") and name != "latency_ops_s":
        return ("never" if name.endswith("time_s") else "none") if math.isnan(value) else when(value)
    if name.endswith("_bytes") or name.startswith("bytes_"):  # bytes, or an instance's byte credits
        return size(value) if value > 0 else "0 B"
    if name.endswith("_ops") or name == "served_counted":
        return number(value, "EBS I/Os" if name == "served_counted" else "I/Os")
    return number(value, "s" if name.endswith("_s") else "")


def _core_fields(obj: Any) -> List[Tuple[str, str]]:
    """A compiled record's read-only fields (its properties, in the order bound) and their values."""
    names = [k for k, v in vars(type(obj)).items() if isinstance(v, property)]
    return [(k, _core_field(k, getattr(obj, k))) for k in names]


def core_record_repr(obj: Any) -> str:
    """The repr of the compiled core's records (:class:`~ebssim.VolumeTotals`, ``InstanceTotals``,
    ``CliffEpisode``, ``VolumeSeries``, ``InstanceSeries``): each field by name, in its unit; a
    series by its length and type, the cliff episodes by their count and the first."""
    return short_repr(type(obj).__name__, [f"{k}={v}" for k, v in _core_fields(obj)])


def core_record_html(obj: Any) -> str:
    """The HTML table of a compiled record's fields (see :func:`core_record_repr`)."""
    return html_table(type(obj).__name__, _core_fields(obj))


def volume_html(v: Any) -> str:
    """The HTML summary of a :class:`~ebssim.Volume`."""
    rows = [("type", v.type), ("size", f"{v.size_gib:g} GiB")]
    if v.has_bucket:
        rows += [
            ("baseline", f"{number(v.baseline_iops, 'IOPS')}, {number(v.baseline_throughput_mib_s, 'MiB/s')}"),
            ("burst", f"{number(v.max_iops, 'IOPS')}, {number(v.max_throughput_mib_s, 'MiB/s')} while credits last"),
            ("bucket", f"{number(v.credit_capacity)} credits, {v.initial_credits / v.credit_capacity:.0%} full"),
        ]
    else:
        rows.append(("limits", f"{number(v.max_iops, 'IOPS')}, {number(v.max_throughput_mib_s, 'MiB/s')}"))
    read_ms, write_ms = (number(v.service_time_s(4096, rf) * 1e3, "ms") for rf in (1.0, 0.0))
    rows.append(("service time (4 KiB)", f"{read_ms} read, {write_ms} write"))
    return html_table(f"Volume: {v}", rows)


def closed_loop_html(w: Any) -> str:
    """The HTML summary of a :class:`~ebssim.ClosedLoop`."""
    rows = [
        ("in flight", f"{w.in_flight:g} I/Os"),
        ("I/O size", size(w.io_bytes)),
        ("reads", f"{w.read_fraction:.0%}"),
        ("pattern", w.pattern),
        ("think time", f"{w.think_time_ms:g} ms"),
        ("service time", "the volume's model" if w.service_time_ms is None else f"{w.service_time_ms:g} ms"),
    ]
    return html_table(f"ClosedLoop: {w}", rows)


def open_loop_summary(w: Any) -> Dict[str, str]:
    """What an :class:`~ebssim.OpenLoop` trace holds, in a few words (not its arrays)."""
    ops = w.ops
    total = float(ops.sum())
    mean_size = float(w.bytes.sum()) / total if total > 0 else math.nan
    out = {"steps": f"{w.n_steps:,}" if w.dt is None else steps(w.n_steps, w.dt)}
    if w.start is not None:
        out["from"] = w.start.isoformat()
    if w.resolution_s is not None and w.resolution_s != w.dt:
        out["measured"] = f"per {w.resolution_s:g} s, spread evenly"
    # With its step, a trace's demand in IOPS; without, the simulation's step decides it.
    rate = (
        {"per step": f"{number(float(ops.mean()))} mean, {number(float(ops.max()))} peak"}
        if w.dt is None
        else {"IOPS": f"{number(float(ops.mean()) / w.dt)} mean, {number(float(ops.max()) / w.dt)} peak"}
    )
    out.update(
        {
            "I/Os": number(total),
            **rate,
            "I/O size": size(mean_size) + " mean" if total > 0 else "n/a",
            "reads": f"{w.read_fraction:.0%}",
            "pattern": w.pattern,
        }
    )
    if w.max_in_flight is not None:
        b = w.in_flight_bounds()
        lo, hi = float(b.min()), float(b.max())
        out["max in flight"] = f"{lo:g} I/Os" if lo == hi else f"{lo:g} to {hi:g} I/Os (per step)"
    return out


def open_loop_repr(w: Any) -> str:
    """OpenLoop's plain repr: a summary, not the arrays.

    >>> import numpy as np, ebssim
    >>> ebssim.OpenLoop(np.array([100.0, 300.0]), np.array([100.0, 300.0]) * 4096)
    OpenLoop(2 steps, 400 I/Os, 200 per step mean, 300 peak, 4 KiB mean, 100% reads, random)

    With its step (and a wall-clock start), the demand reads in IOPS: 6,000 I/Os a minute are 100 IOPS.

    >>> import pandas as pd
    >>> ebssim.OpenLoop(np.array([6000.0, 18000.0]), np.array([6000.0, 18000.0]) * 4096, dt=60,
    ...                 start=pd.Timestamp("2025-06-02"))
    OpenLoop(2 steps of 60 s (2 min) from 2025-06-02T00:00:00, 24,000 I/Os, 200 IOPS mean, 300 peak,
             4 KiB mean, 100% reads, random)
    """
    s = open_loop_summary(w)
    parts = [
        (f"{s['steps']} steps" if w.dt is None else s["steps"]) + (f" from {s['from']}" if "from" in s else ""),
        f"{s['I/Os']} I/Os",
        s["per step"].replace(" mean,", " per step mean,")
        if "per step" in s
        else s["IOPS"].replace(" mean,", " IOPS mean,"),
        s["I/O size"],
        f"{s['reads']} reads",
        s["pattern"],
    ]
    if "max in flight" in s:
        parts.append("max_in_flight=" + s["max in flight"].replace(" I/Os", ""))
    return short_repr("OpenLoop", parts)


def open_loop_html(w: Any) -> str:
    """The HTML summary of an :class:`~ebssim.OpenLoop` (not its arrays)."""
    return html_table("OpenLoop trace", list(open_loop_summary(w).items()))
