"""``ebssim fit``: the command line of ebssim.fit (added to ebssim.cli by two calls)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from .._outputs import check_stdout
from ..volumes import VOLUME_TYPES


def add_parser(sub: Any) -> None:
    """Add the ``fit`` sub-command to ``ebssim``'s sub-parsers."""
    p = sub.add_parser(
        "fit",
        help="fit the model to fio output captured on a real volume",
        description="Fit ebssim's model to what fio measured: the levels and the times they change, and for a "
        "declared volume type the volume behind them (size, starting BurstBalance, provisioned IOPS/throughput, "
        "service time per direction, the spreads of the service time and of the waits under the volume's and the "
        "instance's limits), with uncertainties. INPUT is a fio JSON/json+ report, an iops/bw log, a clat/lat log "
        "(per-I/O: every I/O's latency; averaged, log_avg_msec > 0: the mean only) or clat histogram log "
        "(write_hist_log), a job file (its logs are found next to it by fio's names) or a directory holding these. "
        "Example: ebssim fit --type gp3 --size 100 --iops 3000 tests/data/fit/06_latency_logs/latency.fio",
    )
    p.add_argument("--type", choices=VOLUME_TYPES, help="the volume's type (without it: levels and change points only)")
    p.add_argument("--size", type=float, metavar="GIB", help="the volume's size when known")
    p.add_argument("--iops", type=float, help="the provisioned IOPS of a gp3, io1 or io2 when known")
    p.add_argument(
        "--members",
        type=int,
        metavar="N",
        help="the capture is of a striped set (md/LVM RAID-0) of N alike volumes of --type: the levels are split "
        "into each member's by the set's rule, and the result is the set (a raid0: SPEC)",
    )
    p.add_argument("--chunk", type=float, metavar="KIB", help="the striped set's chunk in KiB (default 512)")
    p.add_argument(
        "--instance",
        metavar="TYPE",
        help="the EC2 instance type: its EBS limits join the forward model, jobs they held back give the "
        "instance's wait spread (instance_wait_cv), and predictions use it",
    )
    p.add_argument("--output-format", choices=["normal", "json"], default="normal")
    p.add_argument(
        "--rate-limits",
        choices=["workload", "volume"],
        default="workload",
        help="fio's rate_iops/rate cap the jobs' demand (workload, default), or stand in for the volume's limits "
        "(volume: captures that imitate EBS with fio's throttles)",
    )
    p.add_argument("--bin", type=float, metavar="SECONDS", help="bin width for per-I/O logs (default 0.1)")
    p.add_argument("inputs", nargs="+", metavar="INPUT")


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def run(args: argparse.Namespace) -> int:
    """Run ``ebssim fit``; errors propagate as ValueError (one ``ebssim: error:`` line, exit 2)."""
    from ._fit import fit

    if args.size is not None and not (math.isfinite(args.size) and args.size > 0):
        raise ValueError(f"--size {args.size!r}: expected a positive number of GiB")
    if args.bin is not None and not (math.isfinite(args.bin) and args.bin > 0):
        raise ValueError(f"--bin {args.bin!r}: expected a positive number of seconds")
    if args.chunk is not None and args.members is None:
        raise ValueError(f"--chunk {args.chunk:g} is for a striped set: give --members N too")
    result = fit(
        args.inputs,
        type=args.type,
        size_gib=args.size,
        instance=args.instance,
        rate_limits=args.rate_limits,
        bin_s=args.bin,
        iops=args.iops,
        members=args.members,
        chunk_kib=args.chunk,
    )
    check_stdout()
    if args.output_format == "json":
        sys.stdout.write(json.dumps(_clean(result.to_dict()), indent=2) + "\n")
    else:
        sys.stdout.write(str(result))
    return 0
