"""What a run records: which series, at which interval, in which precision, into whose buffers.

``record=`` of :func:`ebssim.simulate` and :meth:`ebssim.Simulation.run` takes ``True`` (every
series, every step, float64: the default), ``False`` (totals only) or a :class:`Recording`.
The engine aggregates per interval of ``every_s`` (a multiple of the step ``dt``), each series
as its row of the engine's series table says (the one list of series: docs/model.md, "What a run
records", shows it):

- a rate: the mean over the interval's steps;
- a latency: the mean weighted by the I/Os completed in each step, so that Little's law holds per
  interval (mean outstanding I/Os = ``latency_s`` x ``iops``); NaN when none completed;
- a level: the value at the end of the interval;
- the bound: the bound that held in most of the interval's steps (a tie goes to the first in
  :data:`ebssim.BOUND_NAMES`);
- an extreme (the maximum or minimum of another series over the interval's steps, as
  CloudWatch's Maximum and Minimum statistics per period): recorded only when named in
  ``series`` (or ``instance_series``), not in the default recording
  (:data:`DEFAULT_VOLUME_SERIES`). A maximum of a latency is over the steps that completed I/O.

Recorded every step, each equals its series (``iops_max`` is ``iops``, ...).

Value ``j`` belongs to the interval that starts at ``t0_s + j * every_s`` (``time_s`` of the
result); the last interval is shorter when ``every_s`` does not divide the run. Totals
(``r.totals``, ``mean_iops``, ``cliffs``, ``bound_s``, ...) never depend on the recording.

A 100 GiB gp2 volume at queue depth 32 bursts at 3,000 IOPS for 2,000 s, then holds 300 IOPS.
Recorded every minute, the interval from 1,980 s holds 20 s at 3,000 and 40 s at 300 IOPS:

>>> import ebssim
>>> r = ebssim.simulate(ebssim.gp2(100), ebssim.ClosedLoop(32, "4k"), duration_s=2700,
...                     record=ebssim.Recording(series=("iops", "credits"), every_s=60))
>>> print(r.iops.shape, r.time_s[33], r.iops[33])   # (20 x 3,000 + 40 x 300) / 60
(45,) 1980.0 1200.0
>>> print(r.credits[32])   # at the end of the interval before, 1,980 s: 5.4e6 - 1,980 x 2,700
54000.0
>>> r.latency_s      # not recorded
Traceback (most recent call last):
...
ValueError: latency_s was not recorded: this result records iops, credits (Recording(series=...))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._units import flag, real

if TYPE_CHECKING:  # pragma: no cover
    from .results import InstanceResult, VolumeResult

__all__ = [
    "Recording",
    "BOUND_NAMES",
    "VOLUME_SERIES",
    "INSTANCE_SERIES",
    "DEFAULT_VOLUME_SERIES",
    "DEFAULT_INSTANCE_SERIES",
]

#: The series a volume can record, in the engine's order.
VOLUME_SERIES: Tuple[str, ...] = tuple(_core.VOLUME_SERIES)
#: The series an instance can record.
INSTANCE_SERIES: Tuple[str, ...] = tuple(_core.INSTANCE_SERIES)
#: The volume series of the default recording: all but the extremes (``iops_max``, ...).
DEFAULT_VOLUME_SERIES: Tuple[str, ...] = tuple(_core.DEFAULT_VOLUME_SERIES)
#: The instance series of the default recording: all but the extremes.
DEFAULT_INSTANCE_SERIES: Tuple[str, ...] = tuple(_core.DEFAULT_INSTANCE_SERIES)

#: What held a volume back in a step, indexed by the ``bound`` codes of the series (from the C++ ``Bound``).
BOUND_NAMES: Tuple[str, ...] = tuple(_core.BOUND_NAMES)

_DTYPES = ("float64", "float32")


def _names(value: Optional[Sequence[str]], known: Tuple[str, ...], field: str) -> Optional[Tuple[str, ...]]:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"{field}={value!r} must be a sequence of series names, e.g. ('iops', 'credits')")
    out = []
    for i, name in enumerate(value):
        if not isinstance(name, str) or name not in known:
            raise ValueError(f"{field}[{i}]={name!r} is not a series; the series are {', '.join(known)}")
        if name not in out:
            out.append(name)
    return tuple(n for n in known if n in out)  # the engine's order


def _buffers(value: Optional[Mapping[str, Any]], field: str) -> Optional[Dict[str, npt.NDArray[Any]]]:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"{field} must be a mapping of series name to numpy array, got {type(value).__name__}")
    out = {}
    for k, a in value.items():
        if not isinstance(a, np.ndarray):
            raise ValueError(f"{field}[{k!r}] must be a numpy array, got {type(a).__name__}")
        out[str(k)] = a
    return out


def _separate(buffers: Mapping[str, Optional[Mapping[str, npt.NDArray[Any]]]]) -> None:
    """Refuse two series written into one piece of memory (the same array, overlapping slices,
    views of the same rows): the engine would write both into it, and each would read back as
    the one written last. ``buffers`` maps the field (``out``, ``instance_out``) to its buffers."""
    named = [(f"{field}[{name!r}]", a) for field, given in buffers.items() if given for name, a in given.items()]
    for i, (what, a) in enumerate(named):
        for other, b in named[i + 1 :]:
            # A bounds check first (cheap); the exact test only where the bounds overlap.
            if np.may_share_memory(a, b) and np.shares_memory(a, b):
                raise ValueError(
                    f"{what} and {other} share memory: each series needs its own buffer (the engine "
                    f"writes every series into its buffer, so the one written last would overwrite the other)"
                )


@dataclass(frozen=True, eq=False)
class Recording:
    """What a recorded run keeps (``record=Recording(...)``); see the module's docstring.

    Parameters
    ----------
    series : sequence of str, optional
        The volume series to record, from :data:`VOLUME_SERIES` (default:
        :data:`DEFAULT_VOLUME_SERIES`, all but the extremes).
    every_s : float, optional
        One value per interval of ``every_s`` seconds, a whole multiple of the run's ``dt``
        (default: every step).
    dtype : {"float64", "float32"}
        Storage of the floating-point series (``bound`` is always uint8). float32 keeps about 7
        significant digits at half the memory.
    out : mapping of str to numpy array, optional
        Caller buffers the engine writes into instead of allocating: for each chosen series, a
        writeable C-contiguous array of ``dtype`` (uint8 for ``bound``), of one value per
        interval, 1-D for one volume or 2-D (volumes, intervals) for a
        :class:`~ebssim.Simulation` with several; no two series (here or in ``instance_out``)
        may share memory. The result's arrays are read-only views of these buffers (or of their
        rows); the buffers themselves stay writeable, so the next run can reuse them (its
        result's views then show the new values). Series without a buffer are allocated as usual.
    instance_series : sequence of str, optional
        The instance's series to record, from :data:`INSTANCE_SERIES` (default:
        :data:`DEFAULT_INSTANCE_SERIES`, all but the extremes). Only for a run on an instance:
        given for a run without one, it is a ValueError.
    instance_out : mapping of str to numpy array, optional
        Caller buffers of the instance's series, 1-D, as ``out``.

    >>> Recording(every_s=0)
    Traceback (most recent call last):
    ...
    ValueError: every_s=0 must be a positive, finite number of seconds (a multiple of dt)
    >>> Recording(series=("iops", "latency"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: series[1]='latency' is not a series; the series are iops, ebs_iops, ..., backlog_max
    """

    series: Optional[Sequence[str]] = None
    every_s: Optional[float] = None
    dtype: str = "float64"
    out: Optional[Mapping[str, npt.NDArray[Any]]] = None
    instance_series: Optional[Sequence[str]] = None
    instance_out: Optional[Mapping[str, npt.NDArray[Any]]] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "series", _names(self.series, VOLUME_SERIES, "series"))
        object.__setattr__(self, "instance_series", _names(self.instance_series, INSTANCE_SERIES, "instance_series"))
        if self.every_s is not None:
            e = real(self.every_s, "every_s", "a number of seconds")
            if not (math.isfinite(e) and e > 0):
                raise ValueError(
                    f"every_s={self.every_s!r} must be a positive, finite number of seconds (a multiple of dt)"
                )
            object.__setattr__(self, "every_s", e)
        try:
            name = np.dtype(self.dtype).name
        except TypeError:
            name = ""
        if name not in _DTYPES:
            raise ValueError(f"dtype={self.dtype!r} must be 'float64' or 'float32'")
        object.__setattr__(self, "dtype", name)
        object.__setattr__(self, "out", _buffers(self.out, "out"))
        object.__setattr__(self, "instance_out", _buffers(self.instance_out, "instance_out"))
        _separate({"out": self.out, "instance_out": self.instance_out})

    def every_steps(self, dt: float) -> int:
        """Steps per recorded value at step ``dt``: ``every_s / dt``, which must be whole."""
        if self.every_s is None:
            return 1
        k = round(self.every_s / dt)
        if k < 1 or abs(k * dt - self.every_s) > 1e-9 * max(self.every_s, dt):
            raise ValueError(
                f"every_s={self.every_s:g} must be a whole multiple of dt={dt:g} s "
                f"(e.g. {max(1, k) * dt:g}): each recorded value aggregates whole steps"
            )
        return int(k)

    def __repr__(self) -> str:
        parts = []
        if self.series is not None:
            parts.append(f"series={self.series!r}")
        if self.every_s is not None:
            parts.append(f"every_s={self.every_s:g}")
        if self.dtype != "float64":
            parts.append(f"dtype={self.dtype!r}")
        if self.out is not None:
            parts.append(f"out=<{', '.join(self.out)}>")
        if self.instance_series is not None:
            parts.append(f"instance_series={self.instance_series!r}")
        if self.instance_out is not None:
            parts.append(f"instance_out=<{', '.join(self.instance_out)}>")
        return f"Recording({', '.join(parts)})"


def resolve(record: Union[bool, Recording, Any]) -> Optional[Recording]:
    """``record=`` as a Recording (True: the default one), or None (False: totals only)."""
    if isinstance(record, Recording):
        return record
    try:
        on = flag(record, "record")
    except ValueError:
        raise ValueError(f"record={record!r} must be True, False or an ebssim.Recording") from None
    return Recording() if on else None


def _need_per_step(r: Union["VolumeResult", "InstanceResult"], what: str, *names: str) -> None:
    """Raise a ValueError naming what is missing unless ``names`` were recorded at every step."""
    if r.n_steps == 0:
        return
    if not r.recorded:
        raise ValueError(f"{what} needs the per-step series, and this result was run with record=False")
    missing = [n for n in names if n not in r.recorded]
    if missing:
        raise ValueError(
            f"{what} needs the series {', '.join(missing)}, which this result did not record "
            f"(it records {', '.join(r.recorded)}): add them to Recording(series=...)"
        )
    if r.record_every != 1:
        raise ValueError(
            f"{what} needs per-step series, and this result was recorded every {r.record_every} steps "
            f"({r.record_every * r.dt_s:g} s): record every step (Recording(every_s=None))"
        )
