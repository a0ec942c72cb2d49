"""A target of a :class:`~ebssim.Simulation` that is several volumes: :class:`VolumeGroup`.

A striped set (:class:`ebssim.StripedSet`) runs one workload on several volumes, cut by its own
rule (the C++ core's ``stripe_split``), and reports its own figures. A Simulation given
``{"md0": striped_set, "log": volume}`` steps the set's members as volumes beside the plain
ones, all on the one instance, and hands each target its result. The Simulation knows a group
only through this class: ``stripes.py`` sits above ``simulation.py`` (``StripedSet.simulate``
runs a Simulation), so ``simulation.py`` cannot import it, and this class sits below both
(docs/design.md, "Where things go").
"""

from __future__ import annotations

import abc
from typing import Any, List, Tuple

from .results import RunResult
from .volumes import Volume
from .workloads import Workload

__all__ = ["VolumeGroup"]


class VolumeGroup(abc.ABC):
    """Several volumes that run one workload as one target of a :class:`~ebssim.Simulation`."""

    #: The volumes, stepped as volumes of the simulation (each with its own limits and bucket).
    members: Tuple[Volume, ...]

    @abc.abstractmethod
    def _member_workloads(self, workload: Any) -> List[Workload]:
        """The workload of each member for ``workload`` on the group (a ValueError naming the
        workload when the group cannot run it)."""

    @abc.abstractmethod
    def _group_result(self, workload: Any, run: RunResult) -> Any:
        """The group's result from its members' (``run``: one VolumeResult per member, and the
        instance's)."""
