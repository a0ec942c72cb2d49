"""BurstBalance alarms for gp2 (and st1, sc1, standard) volumes that stay: the threshold that
leaves N minutes of warning at a burst rate, and the CloudWatch alarm that fires on it."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from typing import Any, List, Optional

from .. import _repr
from .._units import real
from ..burst import burst_duration_s
from ..volumes import Volume

__all__ = ["BurstBalanceAlarm", "burst_balance_alarm"]


def warning_minutes_of(value: Any, field: str = "warning_minutes") -> float:
    """``value`` as the minutes of warning an alarm gives: a positive, finite number (``field``
    names it in the ValueError: ``alarm_minutes`` of :func:`ebssim.advise.advise`, the CLI's
    ``--alarm-minutes``)."""
    m = real(value, field, "a number of minutes")
    if not (math.isfinite(m) and m > 0):
        raise ValueError(f"{field}={value!r} must be a positive, finite number of minutes")
    return m


@dataclass(frozen=True)
class BurstBalanceAlarm:
    """A BurstBalance threshold and the ``aws cloudwatch put-metric-alarm`` call that sets it.

    ``threshold_pct`` leaves ``warning_minutes`` of burst at ``iops`` (EBS-counted operations
    per second: the rate asked for, or the volume's burst ceiling if that is lower, the rate the
    bucket drains at) before the bucket is empty; ``full_bucket_minutes`` is how long a full bucket
    lasts at that rate. ``arguments`` are the CLI's arguments after ``aws``; ``command`` is the
    same as one shell line.
    """

    volume_id: str
    threshold_pct: float
    warning_minutes: float
    iops: float
    full_bucket_minutes: float
    arguments: List[str]

    @property
    def command(self) -> str:
        return "aws " + " ".join(shlex.quote(a) for a in self.arguments)

    def _words(self) -> str:
        return (
            f"BurstBalance below {self.threshold_pct:g} % warns {_repr.duration(self.warning_minutes * 60)} before "
            f"the bucket is empty at {_repr.number(self.iops, 'IOPS')} (a full bucket lasts "
            f"{_repr.duration(self.full_bucket_minutes * 60)})"
        )

    def __repr__(self) -> str:
        return _repr.short_repr("BurstBalanceAlarm", [f"{self.volume_id}: {self._words()}"])

    def _repr_html_(self) -> str:
        return _repr.html_table(
            f"BurstBalanceAlarm: {self.volume_id}", [("alarm", self._words()), ("command", self.command)]
        )


def burst_balance_alarm(
    volume: Volume,
    *,
    volume_id: str = "vol-0123456789abcdef0",
    warning_minutes: float = 15.0,
    iops: Optional[float] = None,
    alarm_name: Optional[str] = None,
) -> Optional[BurstBalanceAlarm]:
    """The BurstBalance alarm that warns ``warning_minutes`` before ``volume``'s bucket is empty.

    The time a bucket lasts is linear in its balance, so the threshold is
    ``100 % x warning / (time a full bucket lasts at iops)``, the time from
    :func:`ebssim.burst_duration_s` (AWS's burst table for gp2).

    Parameters
    ----------
    volume : Volume
        A volume with a burst bucket (gp2, st1, sc1, standard).
    volume_id : str
        The VolumeId the alarm watches.
    warning_minutes : float
        Minutes of burst left when the alarm fires.
    iops : float, optional
        The burst rate in EBS-counted operations per second (e.g. what CloudWatch showed while
        the balance fell); default: the volume's burst ceiling (gp2: 3,000). A rate above the
        ceiling drains the bucket at the ceiling: the alarm is worked out, and described, at it.
    alarm_name : str, optional
        Default ``ebs-burstbalance-<volume_id>``.

    Returns
    -------
    BurstBalanceAlarm or None
        None when the rate never drains the bucket (at or below the baseline, e.g. any gp2 of
        1,000 GiB or more, whose BurstBalance AWS does not even report on Nitro).

    Examples
    --------
    A 100 GiB gp2 at 3,000 IOPS spends its 5.4 M credits in 2,000 s (5.4e6 / 2,700): 5 minutes
    of warning is 300 / 2,000 = 15 % of the bucket.

    >>> import ebssim
    >>> from ebssim.advise import burst_balance_alarm
    >>> a = burst_balance_alarm(ebssim.gp2(100), volume_id="vol-0abc", warning_minutes=5)
    >>> a.threshold_pct, round(a.full_bucket_minutes, 1)
    (15.0, 33.3)
    >>> print(a.command)
    aws cloudwatch put-metric-alarm --alarm-name ebs-burstbalance-vol-0abc
    --alarm-description 'BurstBalance of vol-0abc below 15%: about 5 min of burst left at 3000 IOPS'
    --namespace AWS/EBS --metric-name BurstBalance --dimensions Name=VolumeId,Value=vol-0abc
    --statistic Minimum --period 60 --evaluation-periods 1 --threshold 15
    --comparison-operator LessThanOrEqualToThreshold --treat-missing-data missing
    >>> burst_balance_alarm(ebssim.gp2(2000)) is None      # 6,000 IOPS baseline: never bursts
    True
    """
    if not isinstance(volume, Volume):
        raise ValueError(f"volume={volume!r} must be an ebssim.Volume")
    if not volume.has_bucket:
        raise ValueError(f"a {volume.type} volume has no burst bucket: BurstBalance alarms are for gp2, st1, sc1")
    warning_minutes = warning_minutes_of(warning_minutes)
    asked = volume.max_iops if iops is None else iops
    full_s = burst_duration_s(volume, asked, burst_balance_pct=100.0)
    if math.isinf(full_s):
        return None
    # The bucket drains at the rate served, which the burst ceiling caps (burst_duration_s): the
    # alarm is worked out at that rate, and says so.
    rate = min(float(asked), volume.max_iops)
    at = f"{rate:g} IOPS" if rate == asked else f"{rate:g} IOPS, the volume's burst ceiling ({asked:g} IOPS asked)"
    warning_s = warning_minutes * 60.0
    if warning_s > full_s:
        raise ValueError(
            f"warning_minutes={warning_minutes:g}: a full bucket lasts only {full_s / 60:.1f} min at {at} "
            f"on {volume}; no BurstBalance threshold gives that much warning"
        )
    # Rounded up to 0.1 %: never less warning than asked.
    threshold = math.ceil(round(1000.0 * warning_s / full_s, 6)) / 10.0
    name = alarm_name or f"ebs-burstbalance-{volume_id}"
    args = [
        "cloudwatch",
        "put-metric-alarm",
        "--alarm-name",
        name,
        "--alarm-description",
        f"BurstBalance of {volume_id} below {threshold:g}%: about {warning_minutes:g} min of burst left at {at}",
        "--namespace",
        "AWS/EBS",
        "--metric-name",
        "BurstBalance",
        "--dimensions",
        f"Name=VolumeId,Value={volume_id}",
        "--statistic",
        "Minimum",
        "--period",
        "60",
        "--evaluation-periods",
        "1",
        "--threshold",
        f"{threshold:g}",
        "--comparison-operator",
        "LessThanOrEqualToThreshold",
        "--treat-missing-data",
        "missing",
    ]
    return BurstBalanceAlarm(
        volume_id=volume_id,
        threshold_pct=threshold,
        warning_minutes=float(warning_minutes),
        iops=rate,
        full_bucket_minutes=full_s / 60.0,
        arguments=args,
    )
