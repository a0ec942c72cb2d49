"""The ``ebssim`` command line.

ebssim fio [--volume TARGET=SPEC]... [--instance TYPE] [--output-format normal|json]
           [--output FILE] [--dt SECONDS] RUN [RUN ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, List, Optional


def _clean(x: Any) -> Any:
    """JSON has no NaN or infinity: write them as null, as fio tooling expects numbers or nothing."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _fio(args: argparse.Namespace) -> int:
    from .fio.simulate import parse_volume_spec, predict

    volumes = {}
    for v in args.volume:
        target, vol = parse_volume_spec(v)
        if target in volumes:
            raise ValueError(f"--volume {v!r}: TARGET {target!r} is given twice")
        volumes[target] = vol
    pred = predict(args.runs, volumes, instance=args.instance, dt=args.dt)
    if args.output_format == "json":
        text = json.dumps(_clean(pred.to_json()), indent=2) + "\n"
    else:
        text = pred.to_normal()
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="ebssim", description="Simulate Amazon EBS volume performance.")
    sub = ap.add_subparsers(dest="command", required=True)
    fio = sub.add_parser(
        "fio",
        help="predict fio's report for job files and fio command lines on simulated volumes",
        description="Simulate fio RUNs (job files, or fio command lines in quotes beginning with 'fio ') back "
        "to back on simulated EBS volumes, and print what fio would report.",
    )
    fio.add_argument(
        "--volume",
        action="append",
        default=[],
        metavar="TARGET=SPEC",
        help="attach a simulated volume: SPEC is TYPE[:key=value,...], TYPE one of gp2 gp3 io1 io2 st1 sc1 "
        "standard, keys size (GiB), iops, throughput (MiB/s), burst_balance (%%), latency_ms",
    )
    fio.add_argument("--instance", metavar="TYPE", help="apply this EC2 instance type's EBS limits")
    fio.add_argument("--output-format", choices=["normal", "json"], default="normal")
    fio.add_argument("--output", metavar="FILE", help="write the report here instead of standard output")
    fio.add_argument("--dt", type=float, help="simulation step in seconds (default: from the shortest job)")
    fio.add_argument("runs", nargs="+", metavar="RUN", help="a fio job file, or 'fio ...' command line")
    args = ap.parse_args(argv)
    try:
        return _fio(args)
    except (ValueError, OSError) as e:
        print(f"ebssim: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
