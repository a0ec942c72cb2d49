"""The advice as ``aws ec2 modify-volume`` commands: type, IOPS and throughput batched into one
modification per volume, checked against AWS's limit on modifications per volume."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .. import _repr
from ..volumes import Volume
from ._words import count

if TYPE_CHECKING:
    from ._advisor import FleetAdvice

__all__ = ["MAX_MODIFICATIONS_PER_24H", "MODIFICATION_RULE", "ModifyPlan", "modify_volume_plan"]

#: Elastic Volumes modifications AWS allows per volume in a rolling 24-hour window.
MAX_MODIFICATIONS_PER_24H = 4
#: The rule and where it is stated.
MODIFICATION_RULE = (
    "AWS allows up to 4 Elastic Volumes modifications per EBS volume in a rolling 24-hour window, each "
    "starting once the previous one has completed (AWS What's New of 2026-01-15, "
    "aws.amazon.com/about-aws/whats-new/2026/01/amazon-ebs-up-to-four-volume-modifications/; until then the "
    "ModifyVolume API reference required a 6-hour wait between modifications of a volume)"
)


@dataclass(frozen=True)
class ModifyPlan:
    """``aws ec2 modify-volume`` calls (``arguments`` after ``aws``), and warnings."""

    arguments: List[List[str]]
    warnings: List[str]

    @property
    def commands(self) -> List[str]:
        """Each call as one shell line."""
        return ["aws " + " ".join(shlex.quote(a) for a in args) for args in self.arguments]

    def __repr__(self) -> str:
        n, w = len(self.arguments), len(self.warnings)
        head = f"{n} modify-volume call{'s' * (n != 1)}, {w} warning{'s' * (w != 1)}"
        return _repr.short_repr("ModifyPlan", [head, *self.commands, *self.warnings], sep="; ")

    def _repr_html_(self) -> str:
        rows = [("call", c) for c in self.commands] + [("warning", w) for w in self.warnings]
        return _repr.html_table(
            f"ModifyPlan: {len(self.arguments)} modify-volume calls", rows or [("", "nothing to change")]
        )


def _arguments(volume_id: str, current: Volume, target: Volume) -> List[str]:
    args = ["ec2", "modify-volume", "--volume-id", volume_id]
    if target.size_gib != current.size_gib:
        args += ["--size", f"{target.size_gib:g}"]
    if target.type != current.type:
        args += ["--volume-type", target.type]
    if target.type in ("gp3", "io1", "io2"):
        if target.type != current.type or target.baseline_iops != current.baseline_iops:
            args += ["--iops", f"{target.baseline_iops:g}"]
    if target.type == "gp3":
        if target.type != current.type or target.max_throughput_mib_s != current.max_throughput_mib_s:
            args += ["--throughput", f"{target.max_throughput_mib_s:g}"]
    return args


def check_recent_modifications(
    recent: Mapping[str, Any], known: Sequence[str], field: str = "recent_modifications"
) -> Dict[str, int]:
    """``recent`` as modifications by volume: each a whole number >= 0 of one of the ``known``
    volumes (a count for a volume the plan does not hold would be ignored: a typo in an id would
    hide the warning it was given for)."""
    for vid, n in recent.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"{field}[{vid!r}]={n!r} must be a whole number of modifications >= 0")
    unknown = sorted(str(v) for v in recent if v not in known)
    if unknown:
        which = "which are" if len(unknown) > 1 else "which is"
        raise ValueError(
            f"{field} names {', '.join(unknown)}, {which} not among the volumes ({', '.join(known) or 'none'})"
        )
    return dict(recent)


def modify_volume_plan(
    changes: Union["FleetAdvice", Iterable[Tuple[str, Volume, Volume]]],
    *,
    recent_modifications: Optional[Mapping[str, int]] = None,
) -> ModifyPlan:
    """One ``aws ec2 modify-volume`` per volume that changes, with every change in that one call.

    Parameters
    ----------
    changes : FleetAdvice or iterable of (volume_id, current, target)
        The advice (volumes whose advice is their current configuration are left out), or pairs
        of configurations.
    recent_modifications : dict of str to int, optional
        Modifications each volume already had in the last 24 hours: a plan that would take a
        volume past :data:`MAX_MODIFICATIONS_PER_24H` is warned about (:data:`MODIFICATION_RULE`).
        Each must be a volume of ``changes`` (of the fleet, changed or not): another id is a
        ValueError naming it and the known ones.

    Examples
    --------
    >>> import ebssim
    >>> from ebssim.advise import modify_volume_plan
    >>> plan = modify_volume_plan([("vol-0db", ebssim.gp2(2000), ebssim.gp3(2000, iops=6000, throughput_mib_s=250))])
    >>> print(plan.commands[0])
    aws ec2 modify-volume --volume-id vol-0db --volume-type gp3 --iops 6000 --throughput 250
    >>> plan = modify_volume_plan(
    ...     [("vol-0db", ebssim.gp2(2000), ebssim.gp3(2000))], recent_modifications={"vol-0db": 4})
    >>> print(plan.warnings[0])
    vol-0db: 4 modifications in the last 24 hours plus 1 planned is 5, more than 4: ...
    """
    from ._advisor import FleetAdvice

    if isinstance(changes, FleetAdvice):
        items = [(v.volume_id, v.current.volume, v.advice.volume) for v in changes.volumes if v.changes]
    else:
        items = list(changes)
    known = [v.volume_id for v in changes.volumes] if isinstance(changes, FleetAdvice) else [vid for vid, *_ in items]
    recent = check_recent_modifications(recent_modifications or {}, known)
    planned: dict[str, int] = {}
    arguments: List[List[str]] = []
    for vid, current, target in items:
        if not (isinstance(current, Volume) and isinstance(target, Volume)):
            raise ValueError(f"{vid}: current and target must be ebssim.Volume configurations")
        if target.size_gib < current.size_gib:
            raise ValueError(
                f"{vid}: size {target.size_gib:g} GiB is below the current {current.size_gib:g} GiB: EBS volumes "
                f"cannot shrink"
            )
        args = _arguments(vid, current, target)
        if len(args) == 4:
            continue  # nothing changes
        planned[vid] = planned.get(vid, 0) + 1
        arguments.append(args)
    warnings: List[str] = []
    if isinstance(changes, FleetAdvice):
        for v in changes.volumes:
            st = v.advice.stripe
            if st is not None and v.volume_id in planned:
                warnings.append(
                    f"{v.volume_id} is a striped set: run its command once per member, with each of its {st.n} "
                    f"members' volume ids in place of {v.volume_id}"
                )
    for vid, n in planned.items():
        total = recent.get(vid, 0) + n
        if total > MAX_MODIFICATIONS_PER_24H:
            warnings.append(
                f"{vid}: {count(recent.get(vid, 0), 'modification')} in the last 24 hours plus {n} planned is "
                f"{total}, more than {MAX_MODIFICATIONS_PER_24H}: {MODIFICATION_RULE}"
            )
    return ModifyPlan(arguments=arguments, warnings=warnings)
