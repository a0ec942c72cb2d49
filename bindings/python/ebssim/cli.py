"""The ``ebssim`` command line.

ebssim fio [--volume TARGET=SPEC]... [--instance TYPE] [--output-format normal|json]
           [--output FILE] [--dt SECONDS] [--log-dir DIR | --no-logs]
           [--allow-outside-log-paths] RUN [RUN ...]
ebssim fit [--type TYPE] [--size GIB] [--instance TYPE] [--output-format normal|json] INPUT [INPUT ...]
ebssim cost --region REGION [--output-format normal|json] SPEC [SPEC ...]
ebssim advise --region REGION [--metrics FILE]... [--device DEVICE=ID]... [--disk-info FILE]
              [--members SET_ID=ID,ID...]... [--instance TYPE] [--headroom PCT]
              [--output-format normal|json] INPUT [INPUT ...]
ebssim check [--junit FILE] PLAN [PLAN ...]

``ebssim check`` exits 1 when a plan's criterion fails. Every problem ends the command with one
``ebssim: error: ...`` line on standard error and exit status 2 (130 when interrupted); Python
warnings raised during a run appear as one ``ebssim: warning: ...`` line each. ``EBSSIM_DEBUG=1``
adds the traceback of an internal error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
import warnings
from typing import Any, List, NoReturn, Optional, Set, TextIO, Tuple, Type, Union

_ISSUES = "please report it with the command line and the job files (set EBSSIM_DEBUG=1 for the traceback)"


def _clean(x: Any) -> Any:
    """JSON has no NaN or infinity: write them as null, as fio tooling expects numbers or nothing."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fio(args: argparse.Namespace) -> int:
    from ._outputs import check_output, check_stdout
    from .fio.prediction import _input_files, _parse_runs, _predict, parse_volume_spec

    volumes = {}
    for v in args.volume:
        target, vol = parse_volume_spec(v)
        if target in volumes:
            raise ValueError(f"--volume {v!r}: TARGET {target!r} is given twice")
        volumes[target] = vol
    if args.dt is not None and not (math.isfinite(args.dt) and args.dt > 0):
        raise ValueError(f"--dt {args.dt!r}: expected a positive, finite number of seconds")
    log_dir = None if args.no_logs else ("." if args.log_dir is None else args.log_dir)
    if log_dir is not None and not os.path.isdir(log_dir):
        raise ValueError(f"--log-dir {log_dir!r}: not a directory")
    jobsets, labels = _parse_runs(args.runs)
    if args.output:  # before anything is written: the logs are written by the simulation
        check_output("--output", args.output, _input_files(jobsets))
    pred = _predict(jobsets, labels, volumes, args.instance, args.dt, log_dir, args.allow_outside_log_paths)
    if args.output_format == "json":
        text = json.dumps(_clean(pred.to_json()), indent=2) + "\n"
    else:
        text = pred.to_normal()
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        check_stdout()
        sys.stdout.write(text)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line, like every other ebssim error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"ebssim: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    from .volumes import VOLUME_TYPES

    ap = _Parser(prog="ebssim", description="Simulate Amazon EBS volume performance.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
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
        help=f"attach a simulated volume: SPEC is TYPE[:key=value,...], TYPE one of {' '.join(VOLUME_TYPES)}, "
        "keys size (GiB), iops, throughput (MiB/s), burst_balance (%%), latency_ms (or read_latency_ms and "
        "write_latency_ms), latency_cv, wait_cv; a RAID-0 raid0[:chunk=KIB,members=N]+SPEC[+SPEC...]; RDS "
        "storage rds:engine=ENGINE,type=TYPE,size=GIB[,iops=,throughput=]",
    )
    fio.add_argument("--instance", metavar="TYPE", help="apply this EC2 instance type's EBS limits")
    fio.add_argument("--output-format", choices=["normal", "json"], default="normal")
    fio.add_argument("--output", metavar="FILE", help="write the report here instead of standard output")
    fio.add_argument("--dt", type=float, help="simulation step in seconds (default: from the shortest job)")
    logs = fio.add_mutually_exclusive_group()
    logs.add_argument(
        "--log-dir",
        # None, not ".": argparse tells exclusive options apart from their defaults by identity,
        # and "--log-dir ." passes the interned "." itself, so "--log-dir . --no-logs" went through.
        default=None,
        metavar="DIR",
        help="write the jobs' write_iops_log/write_bw_log/write_lat_log files under DIR (default: the "
        "working directory); a log name that is absolute or leaves DIR ('..') is refused",
    )
    logs.add_argument("--no-logs", action="store_true", help="write none of the jobs' logs")
    fio.add_argument(
        "--allow-outside-log-paths",
        action="store_true",
        help="write logs whose names are absolute or leave --log-dir where they point, as fio would "
        "(only for job files you trust)",
    )
    fio.add_argument("runs", nargs="+", metavar="RUN", help="a fio job file, or 'fio ...' command line")
    from .fit._cli import add_parser as add_fit_parser

    add_fit_parser(sub)
    from .advise._cli import add_parsers as add_advise_parsers

    add_advise_parsers(sub)
    from .check._cli import add_parser as add_check_parser

    add_check_parser(sub)
    return ap


class _Warnings:
    """Shows each distinct warning of a run once, as one ``ebssim: warning: ...`` line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.seen: Set[Tuple[Type[Warning], str]] = set()

    def show(
        self,
        message: Union[Warning, str],
        category: Type[Warning],
        filename: str,
        lineno: int,
        file: Optional[TextIO] = None,
        line: Optional[str] = None,
    ) -> None:
        text = _one_line(str(message))
        if (category, text) not in self.seen:
            self.seen.add((category, text))
            print(f"ebssim: warning: {text}", file=self.stream)


def main(argv: Optional[List[str]] = None) -> int:
    from . import _files
    from ._outputs import check_stdout

    args = _parser().parse_args(argv)
    shown = _Warnings(sys.stderr)
    try:
        # The files read are noted, so that no report goes to standard output over one of them.
        with warnings.catch_warnings(), _files.tracking():
            # Every warning is shown (once, by _Warnings), whatever filters the caller had set.
            warnings.simplefilter("always")
            warnings.showwarning = shown.show
            if args.command == "fit":
                from .fit._cli import run as run_fit

                return run_fit(args)
            if args.command == "check":
                from .check._cli import run as run_check

                return run_check(args)
            if args.command in ("cost", "advise"):
                from .advise._cli import run_advise, run_cost

                text, status = (run_cost if args.command == "cost" else run_advise)(args)
                check_stdout()
                sys.stdout.write(text)
                return status
            return _fio(args)
    except KeyboardInterrupt:
        print("ebssim: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as e:
        print(f"ebssim: error: {_one_line(str(e)) or type(e).__name__}", file=sys.stderr)
        return 2
    except Exception as e:  # a bug: still one line, unless asked for the traceback
        if os.environ.get("EBSSIM_DEBUG", "") not in ("", "0"):
            traceback.print_exc(file=sys.stderr)
        what = _one_line(f"{type(e).__name__}: {e}")
        print(f"ebssim: error: internal error ({what}); this is a bug in ebssim, {_ISSUES}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
