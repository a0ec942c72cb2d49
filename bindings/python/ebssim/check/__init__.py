"""Capacity plans as files, checked from the command line: ``ebssim check PLAN.yaml`` (docs/check.md).

A plan names volumes (SPECs, ``aws ec2 describe-volumes`` output or Kubernetes manifests), an
instance type, one workload (a fio job file, traces, or CloudWatch metrics) and criteria, which
are :class:`ebssim.testing.Plan`'s. Reading it checks its schema and reads every file it names;
running it simulates the workload and checks every criterion on every volume.

- :func:`read_plan`, :func:`parse_plan`: a plan from a file or text (:class:`CapacityPlan`); a
  plan that cannot be read is a :class:`PlanError` naming the file, the line and the key.
- :meth:`CapacityPlan.run`, :func:`run`: the outcome (:class:`PlanOutcome`): every criterion's
  check, one line each (:meth:`PlanOutcome.to_text`), JUnit XML (:func:`junit_xml`).
- :data:`SCHEMA`, :data:`CRITERIA`: the keys a plan may have.

>>> from ebssim.check import parse_plan
>>> plan = parse_plan('''
... volumes: {/dev/nvme1n1: "gp2:size=100"}
... workload:
...   fio: fio --name=rr --filename=/dev/nvme1n1 --rw=randread --bs=4k --ioengine=libaio
...        --iodepth=32 --runtime=2700 --time_based
... criteria: {no_cliff_within_h: 0.5, min_burst_balance_pct: 20}
... ''')
>>> outcome = plan.run()      # the cliff at 5.4e6 / (3,000 - 300) = 2,000 s, after 30 min;
>>> outcome.exit_status       # BurstBalance at 20 % after 0.8 x 2,000 s
1
>>> [(c.criterion, c.ok) for _, c in outcome.checks]
[('no cliff within 0.5 h', True), ('BurstBalance >= 20 %', False)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:  # imported on first use (ebssim._lazy); these are what mypy and IDEs see
    from ._junit import junit_xml
    from ._plan import MAX_PLAN_BYTES, MAX_TRACE_BYTES, CapacityPlan, PlanOutcome, parse_plan, read_plan, run
    from ._schema import CRITERIA, SCHEMA, WORKLOAD_KINDS, Key, PlanError

__all__ = [
    "CRITERIA",
    "MAX_PLAN_BYTES",
    "MAX_TRACE_BYTES",
    "SCHEMA",
    "WORKLOAD_KINDS",
    "CapacityPlan",
    "Key",
    "PlanError",
    "PlanOutcome",
    "junit_xml",
    "parse_plan",
    "read_plan",
    "run",
]

_EXPORTS = {
    "._junit": ("junit_xml",),
    "._plan": ("MAX_PLAN_BYTES", "MAX_TRACE_BYTES", "CapacityPlan", "PlanOutcome", "parse_plan", "read_plan", "run"),
    "._schema": ("CRITERIA", "SCHEMA", "WORKLOAD_KINDS", "Key", "PlanError"),
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy.attach(__name__, _EXPORTS, __all__)
