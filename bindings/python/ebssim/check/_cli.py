"""``ebssim check`` (wired into :mod:`ebssim.cli`).

ebssim check [--junit FILE] PLAN [PLAN ...]

Each PLAN is read (its schema, then every file it names) before any is run. Standard output gets
one line per criterion and volume; the exit status is 0 when every plan is met, 1 when a
criterion fails, 2 when a plan cannot be read or run (one ``ebssim: error: ...`` line each on
standard error; the other plans are still checked).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, List, Tuple

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add the ``check`` sub-command to the ``ebssim`` parser."""
    c = sub.add_parser(
        "check",
        help="check capacity plans (YAML: volumes, workload, criteria); exit status 1 when one fails",
        description="Simulate each capacity PLAN's workload on its volumes and check its criteria: one line per "
        "criterion and volume, exit status 0 when every plan is met, 1 when a criterion fails, 2 when a plan cannot "
        "be read. The schema: docs/check.md.",
    )
    c.add_argument("--junit", metavar="FILE", help="also write the outcome as JUnit XML (one test case per criterion)")
    c.add_argument("plans", nargs="+", metavar="PLAN", help="a capacity plan (YAML)")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def run(args: argparse.Namespace) -> int:
    """Check the plans; print the reports; write the JUnit file; the exit status."""
    from .._outputs import check_output, check_stdout
    from ._junit import junit_xml
    from ._plan import read_plan
    from ._schema import PlanError

    status = 0
    errors: List[Tuple[str, str]] = []
    plans = []
    for p in args.plans:  # every plan read before any runs: a typo in the last costs no simulation
        try:
            plans.append(read_plan(p))
        except (ValueError, OSError) as e:
            message = _one_line(str(e)) or type(e).__name__
            print(f"ebssim: error: {message}", file=sys.stderr)
            errors.append((p, message))
            status = 2
    if args.junit:
        check_output("--junit", args.junit, [f for plan in plans for f in plan.inputs] + list(args.plans))
    outcomes = []
    for plan in plans:
        try:
            outcome = plan.run()
        except ValueError as e:
            message = _one_line(str(e) if isinstance(e, PlanError) else f"{plan.source}: {e}")
            print(f"ebssim: error: {message}", file=sys.stderr)
            errors.append((plan.source, message))
            status = 2
            continue
        outcomes.append(outcome)
        check_stdout()
        sys.stdout.write(outcome.to_text())
        sys.stdout.flush()
        if not outcome.ok and status == 0:
            status = 1
    if args.junit:
        with open(args.junit, "w", encoding="utf-8") as f:
            f.write(junit_xml(outcomes, errors))
    return status
