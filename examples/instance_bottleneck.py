"""The instance is the bottleneck: two fast gp3 volumes on an m5.large.

Two gp3 volumes provisioned at 16,000 IOPS and 1,000 MiB/s each could serve 32,000 IOPS of
16 KiB random reads together. Attached to an m5.large they share its EBS budget: at most
18,750 IOPS and 593.75 MB/s, held for 30 minutes from a full burst bucket, then 3,600 IOPS and
81.25 MB/s. The bucket holds (18,750 - 3,600) x 1,800 s of I/Os above the baseline and drains
at 18,750 - 3,600 per second while the volumes ask for more than the maximum, so the instance's
EBSIOBalance% reaches 0 after exactly 1,800 s. Each volume gets half of what the instance allows:
9,375 IOPS before, 1,800 after; with 64 I/Os in flight its mean latency goes from
64 / 9,375 = 6.8 ms to 64 / 1,800 = 35.6 ms (Little's law), where alone it would be
64 / 16,000 = 4.0 ms.

This script simulates the two volumes alone and on the m5.large, prints the figures next to
the ones worked out from the rules, compares larger instance types from ebssim's catalog, and
saves a plot of per-volume IOPS, the instance's balances and latency:

    python examples/instance_bottleneck.py [--output out/instance_bottleneck.png] [--duration 7200]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Dict, List, Optional

import ebssim
import numpy as np
from matplotlib.figure import Figure

INSTANCE = "m5.large"
N_VOLUMES = 2
QUEUE_DEPTH = 64
IO_SIZE = "16k"
# Larger types to compare, from ebssim's catalog: their limits are looked up, not typed in.
ALTERNATIVES = ["m5.4xlarge", "m5.8xlarge", "m5.12xlarge", "m6i.4xlarge", "m6i.8xlarge"]


def make_volume() -> ebssim.Volume:
    return ebssim.gp3(1000, iops=16000, throughput_mib_s=1000)


def counted_per_io(volume: ebssim.Volume, io_bytes: float) -> float:
    """EBS operations per random I/O: one per started 256 KiB (a 16 KiB read counts one)."""
    return max(1.0, math.ceil(io_bytes / volume.io_unit_bytes))


def instance_allows(inst: ebssim.Instance, io_bytes: float, per_io: float) -> tuple[float, float]:
    """Application IOPS the instance lets through at its maximum and at its baseline: whichever
    of its IOPS and (decimal MB/s) throughput limits binds first at this I/O size."""
    mx = min(inst.max_iops / per_io, inst.max_mb_s * 1e6 / io_bytes)
    base = min(inst.baseline_iops / per_io, inst.baseline_mb_s * 1e6 / io_bytes)
    return mx, base


def closed_form_cliff_s(inst: ebssim.Instance, demand_counted: float) -> Optional[float]:
    """When EBSIOBalance% reaches 0 from a full bucket: capacity / (rate served - baseline)."""
    capacity = (inst.max_iops - inst.baseline_iops) * inst.burst_s * inst.io_balance_pct / 100.0
    spend = min(demand_counted, inst.max_iops) - inst.baseline_iops
    return capacity / spend if spend > 0 and capacity > 0 else None


def run(
    volumes: List[ebssim.Volume], workload: ebssim.ClosedLoop, duration_s: float, instance: Optional[ebssim.Instance]
) -> ebssim.RunResult:
    sim = ebssim.Simulation(volumes, dt=1.0, instance=instance)
    return sim.run([workload] * len(volumes), duration_s)


def latency_ms(workload: ebssim.ClosedLoop, volume: ebssim.Volume, iops: float) -> float:
    """Little's law: I/Os in flight / IOPS, never below the unloaded service time."""
    return max(workload.in_flight / iops, volume.service_time_s(workload.io_bytes)) * 1e3


def together(r: ebssim.RunResult, start_s: float, end_s: float) -> float:
    return sum(v.window(start_s, end_s)["iops"] for v in r)


def print_phase(
    name: str, r: ebssim.RunResult, start_s: float, end_s: float, per_volume: float, workload: ebssim.ClosedLoop
) -> None:
    total = together(r, start_s, end_s)
    print(f"  {name} ({start_s:.0f}-{end_s:.0f} s): together {total:,.0f} IOPS  (predicted {per_volume * len(r):,.0f})")
    for i, v in enumerate(r, start=1):
        w = v.window(start_s, end_s)
        print(
            f"    volume {i}: {w['iops']:6,.0f} IOPS, {w['latency_ms']:5.1f} ms mean latency  "
            f"(predicted {per_volume:,.0f} IOPS, {latency_ms(workload, v.volume, per_volume):.1f} ms)"
        )


def compare_instances(
    volumes: List[ebssim.Volume], workload: ebssim.ClosedLoop, duration_s: float, names: List[str]
) -> List[Dict[str, Any]]:
    """The same volumes and load on each instance type: IOPS together before and after its
    EBSIOBalance% (or EBSByteBalance%) reaches 0, and the worst mean latency after."""
    rows = []
    for name in names:
        inst = ebssim.instance(name)
        r = run(volumes, workload, duration_s, inst)
        assert r.instance is not None
        cliff = r.instance.cliff_time_s
        split = cliff if cliff is not None else duration_s
        rows.append(
            {
                "name": name,
                "inst": inst,
                "cliff_s": cliff,
                "before": together(r, 0, split),
                "after": together(r, split, duration_s) if cliff is not None else together(r, 0, duration_s),
                "latency_ms": max(v.window(split if cliff is not None else 0, duration_s)["latency_ms"] for v in r),
            }
        )
    return rows


def limits(inst: ebssim.Instance) -> str:
    if inst.burstable:
        return f"max {inst.max_iops:,.0f}, baseline {inst.baseline_iops:,.0f} IOPS"
    return f"{inst.max_iops:,.0f} IOPS sustained"


def plot(
    r: ebssim.RunResult, alone: ebssim.RunResult, inst: ebssim.Instance, cliff_s: Optional[float], title: str
) -> Figure:
    """Per-volume IOPS, the instance's EBSIOBalance% and EBSByteBalance%, and mean latency."""
    ir = r.instance
    assert ir is not None
    t = ir.time_s / 60.0
    fig = Figure(figsize=(9.5, 8.0), layout="constrained")
    ax_iops, ax_bal, ax_lat = fig.subplots(3, 1, sharex=True, height_ratios=[1.4, 1.0, 1.0])
    styles = ["-", "--", ":", "-."]
    colors = ["tab:blue", "tab:orange", "tab:purple", "tab:brown"]

    total = np.sum([v.iops for v in r], axis=0)
    ax_iops.plot(t, total, color="tab:green", lw=2.2, label="both volumes together (the instance's EBS IOPS)")
    for i, v in enumerate(r):
        c, ls = colors[i % len(colors)], styles[i % len(styles)]
        ax_iops.plot(t, v.iops, color=c, ls=ls, lw=1.6, label=f"volume {i + 1}")
        ax_lat.plot(t, v.latency_ms, color=c, ls=ls, lw=1.6)
    own = sum(v.mean_iops for v in alone)
    refs = [
        (own, f"volumes' own limits together: {own:,.0f}"),
        (inst.max_iops, f"{inst.name} maximum: {inst.max_iops:,.0f}"),
        (inst.baseline_iops, f"{inst.name} baseline: {inst.baseline_iops:,.0f}"),
    ]
    for y, text in refs:
        ax_iops.axhline(y, color="0.45", ls=(0, (4, 3)), lw=0.9, zorder=1)
        ax_iops.annotate(
            text,
            (t[-1], y),
            xytext=(-4, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=8,
            color="0.3",
        )
    ax_iops.set_ylabel("IOPS")
    ax_iops.set_ylim(0, 1.12 * own)
    ax_iops.yaxis.set_major_formatter(lambda y, _: f"{y:,.0f}")

    ax_bal.plot(t, ir.io_balance_pct, color="tab:red", lw=1.8, label=f"{inst.name} EBSIOBalance%")
    ax_bal.plot(t, ir.byte_balance_pct, color="tab:gray", lw=1.6, ls="--", label=f"{inst.name} EBSByteBalance%")
    ax_bal.set_ylabel("instance balance %")
    ax_bal.set_ylim(-3, 103)

    lat_alone = float(np.mean([v.mean_latency_ms for v in alone]))
    ax_lat.axhline(lat_alone, color="0.45", ls=(0, (4, 3)), lw=0.9)
    ax_lat.annotate(
        f"volumes alone: {lat_alone:.1f} ms",
        (t[-1], lat_alone),
        xytext=(-4, 3),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=8,
        color="0.3",
    )
    ax_lat.set_ylabel("mean latency (ms)")
    ax_lat.set_ylim(0, 1.15 * max(float(np.nanmax(v.latency_ms)) for v in r))
    ax_lat.set_xlabel("time (min)")

    # Label each phase with what every volume got (the two volumes' lines coincide).
    end_s = float(ir.time_s[-1] + ir.dt_s)
    phases = [(0.0, cliff_s), (cliff_s, end_s)] if cliff_s is not None else [(0.0, end_s)]
    box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85}
    for a, b in phases:
        w = [v.window(a, b) for v in r]
        each = float(np.mean([x["iops"] for x in w]))
        lat = float(np.mean([x["latency_ms"] for x in w]))
        xm = (a + b) / 2 / 60.0
        tot = each * len(w)
        kw = dict(xytext=(0, 5), textcoords="offset points", ha="center", va="bottom", fontsize=8, bbox=box, zorder=5)
        if tot - each > 0.12 * own:  # room for a label on each line
            ax_iops.annotate(f"together {tot:,.0f}", (xm, tot), **kw)
            ax_iops.annotate(f"each volume {each:,.0f}", (xm, each), **kw)
        else:
            ax_iops.annotate(f"together {tot:,.0f}, each volume {each:,.0f}", (xm, tot), **kw)
        ax_lat.annotate(
            f"{lat:.1f} ms",
            (xm, lat),
            xytext=(0, 5),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
            bbox=box,
            zorder=5,
        )

    if cliff_s is not None:
        for ax in (ax_iops, ax_bal, ax_lat):
            ax.axvline(cliff_s / 60.0, color="tab:red", ls=":", lw=1)
        ax_bal.annotate(
            f"EBSIOBalance% reaches 0 at {cliff_s:,.0f} s",
            (cliff_s / 60.0, 20),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
            color="tab:red",
        )
    for ax in (ax_iops, ax_bal, ax_lat):
        ax.grid(True, alpha=0.3)
    ax_iops.set_xlim(t[0], t[-1] + (t[1] - t[0] if len(t) > 1 else 1))
    ax_bal.legend(loc="best", fontsize=8, framealpha=0.9)
    # The legend sits above the panels, where it cannot cover data.
    handles, labels = ax_iops.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=3, fontsize=8, frameon=False)
    ax_iops.set_title(title, fontsize=11)
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description="Two fast gp3 volumes held back by an m5.large's EBS budget.")
    parser.add_argument("--output", type=Path, default=Path("out/instance_bottleneck.png"), help="PNG to write")
    parser.add_argument("--duration", type=float, default=7200.0, help="simulated seconds (default 7200)")
    args = parser.parse_args()
    duration = args.duration

    workload = ebssim.ClosedLoop(in_flight=QUEUE_DEPTH, io_size=IO_SIZE)
    volumes = [make_volume() for _ in range(N_VOLUMES)]
    inst = ebssim.instance(INSTANCE)
    vol = volumes[0]
    io_bytes = workload.io_bytes
    per_io = counted_per_io(vol, io_bytes)

    print(f"Workload: {workload} on each of {N_VOLUMES} volumes, {duration:g} s in 1 s steps")
    print(f"Volumes:  {N_VOLUMES} x {vol}\n")

    alone = run(volumes, workload, duration, None)
    own = sum(v.mean_iops for v in alone)
    print(
        f"Alone (no instance limit): each volume {alone[0].mean_iops:,.0f} IOPS at "
        f"{alone[0].mean_latency_ms:.1f} ms mean latency; together {own:,.0f} IOPS"
    )

    mx, base = instance_allows(inst, io_bytes, per_io)
    print(f"Instance: {inst}")
    which = "IOPS limit binds before its MB/s limit" if mx * per_io >= inst.max_iops else "MB/s limit binds first"
    print(
        f"  allows {mx:,.0f} IOPS while its burst lasts, {base:,.0f} IOPS after "
        f"(at {io_bytes / 1024:g} KiB its {which})"
    )
    capacity = (inst.max_iops - inst.baseline_iops) * inst.burst_s
    drain = min(own * per_io, inst.max_iops) - inst.baseline_iops
    print(
        f"  burst bucket: ({inst.max_iops:,.0f} - {inst.baseline_iops:,.0f}) x {inst.burst_s:,.0f} s = "
        f"{capacity:,.0f} I/Os above the baseline, drained at {drain:,.0f} per second\n"
    )

    r = run(volumes, workload, duration, inst)
    ir = r.instance
    assert ir is not None
    forecast = closed_form_cliff_s(inst, own * per_io)
    io_cliff = ir.totals["io_cliff_time_s"]
    cliff = None if math.isnan(io_cliff) else float(io_cliff)
    fc = f"{forecast:.0f} s" if forecast is not None else "never"
    # Proportional sharing: every volume keeps the same fraction of what it asks, so equal
    # volumes under equal load get equal shares.
    share_max = min(mx, own) / len(volumes)
    share_base = min(base, own) / len(volumes)
    if cliff is not None:
        print(f"The {inst.name} instance's EBSIOBalance% reaches 0 at {cliff:.0f} s  (closed form: {fc})")
        print_phase("before", r, 0, cliff, share_max, workload)
        print_phase("after", r, cliff, duration, share_base, workload)
    else:
        print(f"The {inst.name} instance's EBSIOBalance% does not reach 0 within {duration:g} s  (closed form: {fc})")
        print_phase("whole run", r, 0, duration, share_max, workload)
    print(
        f"  EBSIOBalance% at the end: {ir.io_balance_end_pct:.1f}%, "
        f"EBSByteBalance% at the end: {ir.byte_balance_end_pct:.1f}%\n"
    )

    rows = compare_instances(volumes, workload, duration, [INSTANCE] + ALTERNATIVES)
    print("Same volumes and load on other instance types from the catalog (IOPS of both volumes together):")
    print(
        f"  {'instance':<12} {'EBS limits':<34} {'balance at 0':>12} {'before':>8} {'after':>8} {'latency after':>14}"
    )
    for row in rows:
        if row["cliff_s"] is not None:
            c = f"{row['cliff_s']:,.0f} s"
        else:
            c = f"> {duration:,.0f} s" if row["inst"].burstable else "never"
        print(
            f"  {row['name']:<12} {limits(row['inst']):<34} {c:>12} {row['before']:>8,.0f} {row['after']:>8,.0f} "
            f"{row['latency_ms']:>11.1f} ms"
        )

    print()
    if cliff is not None:
        after = together(r, cliff, duration)
        lat_after = max(v.window(cliff, duration)["latency_ms"] for v in r)
        print(
            f"Takeaway: on an {inst.name} the volumes get {together(r, 0, cliff):,.0f} of their {own:,.0f} IOPS "
            f"for {cliff / 60:.0f} min, then {after:,.0f} ({after / own:.0%}) at "
            f"{lat_after / alone[0].mean_latency_ms:.1f}x the latency they would have alone."
        )
    else:
        print(
            f"Takeaway: within {duration:g} s the {inst.name}'s burst hides the limit; run past "
            f"{fc} (--duration 7200) to see the fall."
        )
    full = [row for row in rows if min(row["before"], row["after"]) >= 0.999 * own]
    if full:
        names = ", ".join(f"{row['name']} ({limits(row['inst'])})" for row in full)
        print(f"  {names}: the volumes get their full {own:,.0f} IOPS for the whole run.")
    else:
        print(f"  None of the types compared gives them their full {own:,.0f} IOPS: look further in the catalog.")
    tricky = [row for row in rows if row["cliff_s"] is not None and row["before"] >= 0.999 * own]
    for row in tricky:
        print(
            f"  Beware of short tests: {row['name']} gives the full {own:,.0f} IOPS for "
            f"{row['cliff_s'] / 60:.0f} min, then {row['after']:,.0f}."
        )
    print(
        f"  Keeping the {inst.name}, each volume uses {share_base:,.0f} of its {vol.max_iops:,.0f} provisioned IOPS "
        f"once the balance is gone ({share_max:,.0f} while it lasts): the rest is paid for and never used."
    )

    fig = plot(r, alone, inst, cliff, title=f"{N_VOLUMES} x gp3 16,000 IOPS on an {inst.name}: {workload} each")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=120)
    print(f"Plot: {args.output}")


if __name__ == "__main__":
    main()
