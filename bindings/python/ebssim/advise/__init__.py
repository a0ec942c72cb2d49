"""Migration advice: gp2 -> gp3, io1/io2 -> gp3 where it serves (else io1 -> io2), priced and
checked by replay (docs/advise.md).

- :func:`advise` — per volume, the gp3 (or io2) settings that keep its performance, the monthly
  cost of the current volume, of gp3 with its defaults and of the advice, and how the load (the
  CloudWatch metrics replayed, or a stated :class:`BatchJob`) fares on each: throttled minutes
  and how long the job takes and, when the load's concurrency is known (the measured
  VolumeQueueLength, or ``max_in_flight``), the device latency percentiles of its I/Os; with a
  fleet summary (:class:`FleetAdvice`).
- :func:`gp3_for` — the closest gp3 configuration AWS allows.
- :func:`burst_balance_alarm` — for a gp2 volume that stays: the BurstBalance threshold that
  gives N minutes of warning, as ``aws cloudwatch put-metric-alarm`` arguments.
- :func:`modify_volume_plan` — the advice as ``aws ec2 modify-volume`` commands, one
  modification per volume, checked against AWS's limit on modifications per volume.

>>> import ebssim
>>> from ebssim.advise import advise
>>> fleet = advise({"vol-1": ebssim.gp2(100)}, "us-east-1")
>>> fleet["vol-1"].advice.spec
'gp3:size=100,iops=3000,throughput=128'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:  # imported on first use (ebssim._lazy); these are what mypy and IDEs see
    from ._advisor import LATENCY_PERCENTILES, BatchJob, FleetAdvice, Scenario, VolumeAdvice, advise, gp3_for
    from ._alarms import BurstBalanceAlarm, burst_balance_alarm
    from ._plan import MAX_MODIFICATIONS_PER_24H, MODIFICATION_RULE, ModifyPlan, modify_volume_plan

__all__ = [
    "LATENCY_PERCENTILES",
    "MAX_MODIFICATIONS_PER_24H",
    "MODIFICATION_RULE",
    "BatchJob",
    "BurstBalanceAlarm",
    "FleetAdvice",
    "ModifyPlan",
    "Scenario",
    "VolumeAdvice",
    "advise",
    "burst_balance_alarm",
    "gp3_for",
    "modify_volume_plan",
]

_EXPORTS = {
    "._advisor": ("LATENCY_PERCENTILES", "BatchJob", "FleetAdvice", "Scenario", "VolumeAdvice", "advise", "gp3_for"),
    "._alarms": ("BurstBalanceAlarm", "burst_balance_alarm"),
    "._plan": ("MAX_MODIFICATIONS_PER_24H", "MODIFICATION_RULE", "ModifyPlan", "modify_volume_plan"),
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy.attach(__name__, _EXPORTS, __all__)
