"""Bounds on the work and memory of one call, so that a mistyped duration or step is a clear
error instead of hours of CPU or an exhausted machine."""

from __future__ import annotations

import math
from typing import Any, Optional

from . import _core
from ._units import real

__all__ = ["Limits", "limits", "LimitError"]

#: Raised when a run or a trace would exceed :data:`limits`; a ValueError.
LimitError = _core.LimitError

# The engine takes its limits as signed 64-bit integers.
_INT64_MAX = 2**63 - 1


def _check(value: Any, field: str) -> int:
    v = real(value, field, "a whole number")
    if not (math.isfinite(v) and v >= 0 and v == math.floor(v) and v <= _INT64_MAX):
        raise ValueError(f"{field}={value!r} must be a whole number >= 0 (at most 2^63 - 1)")
    return int(v)


class Limits:
    """Bounds on one call, checked before anything runs or is allocated.

    Parameters
    ----------
    max_volume_steps : int
        Most volume-steps (steps x volumes) in one run. Default 1e10: 100-200 s of one core at
        the engine's 50-100 M volume-steps per second.
    max_memory_bytes : int
        Most bytes one call allocates for per-step arrays: a recorded run's series, all volumes
        and the instance together (49 bytes per volume-step, 33 per step of the instance by
        default; what a :class:`~ebssim.Recording` chooses, per interval and in its precision,
        otherwise, not counting caller buffers), or the two arrays of :meth:`OpenLoop.constant`
        (16 bytes per step). Default 4 GiB.

    The module-level :data:`ebssim.limits` holds the bounds for the session (assign to its
    fields, e.g. ``ebssim.limits.max_volume_steps = 5e10``); ``Simulation.run``, ``rest`` and
    ``simulate`` take ``max_volume_steps=`` and ``max_memory_bytes=`` for one call, and
    ``OpenLoop.constant`` takes ``max_memory_bytes=``. Values are whole numbers >= 0; a whole
    float such as ``2e10`` is accepted.

    >>> import ebssim
    >>> ebssim.limits
    Limits(max_volume_steps=10000000000, max_memory_bytes=4294967296)
    >>> Limits(max_volume_steps=2e10).max_volume_steps
    20000000000
    """

    __slots__ = ("_max_volume_steps", "_max_memory_bytes")

    def __init__(
        self,
        max_volume_steps: float = _core.default_max_volume_steps,
        max_memory_bytes: float = _core.default_max_memory_bytes,
    ) -> None:
        self.max_volume_steps = max_volume_steps
        self.max_memory_bytes = max_memory_bytes

    @property
    def max_volume_steps(self) -> int:
        return self._max_volume_steps

    @max_volume_steps.setter
    def max_volume_steps(self, value: float) -> None:
        self._max_volume_steps = _check(value, "max_volume_steps")

    @property
    def max_memory_bytes(self) -> int:
        return self._max_memory_bytes

    @max_memory_bytes.setter
    def max_memory_bytes(self, value: float) -> None:
        self._max_memory_bytes = _check(value, "max_memory_bytes")

    def __repr__(self) -> str:
        return f"Limits(max_volume_steps={self.max_volume_steps}, max_memory_bytes={self.max_memory_bytes})"


#: The session's limits; assign to its fields to change them.
limits = Limits()


def max_volume_steps(override: Optional[float]) -> int:
    """The work bound for one call: its keyword if given, else the session's."""
    return limits.max_volume_steps if override is None else _check(override, "max_volume_steps")


def max_memory_bytes(override: Optional[float]) -> int:
    """The memory bound for one call: its keyword if given, else the session's."""
    return limits.max_memory_bytes if override is None else _check(override, "max_memory_bytes")
