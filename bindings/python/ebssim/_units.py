"""Argument checks shared by the public API: numbers, flags, indices and sizes (``"4k"``, ``4096``)."""

from __future__ import annotations

import math
import numbers
import re
import sys
from typing import Any, Union

SizeLike = Union[int, float, str]


def real(value: Any, field: str, what: str = "a number") -> float:
    """``value`` as a float, for a numeric field of the public API.

    Python and numpy integers and floats are numbers; ``True``, ``"100"``, ``None``, complex
    numbers and arrays are not, and are a ValueError naming the field: a bool would silently be
    0 or 1 (``gp2(True)`` a 1 GiB volume), a string parsed here would hide a typo. NaN and
    infinities pass: each field checks its own range.

    >>> real(3, "iops")
    3.0
    >>> real("3", "iops")
    Traceback (most recent call last):
    ...
    ValueError: iops='3' must be a number, not str
    """
    # numbers.Real covers int, float, Fraction and numpy's integer and float scalars; bool is an
    # int subclass, so it is excluded by name (numpy's bool_ is not a numbers.Real).
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{field}={value!r} must be {what}, not {type(value).__name__}")
    return float(value)


def flag(value: Any, field: str) -> bool:
    """``value`` as a bool; only ``True`` and ``False`` (Python's or numpy's) are flags."""
    # numpy's bool_ without importing numpy: a numpy bool exists only once numpy is imported.
    np = sys.modules.get("numpy")
    if not (isinstance(value, bool) or (np is not None and isinstance(value, np.bool_))):
        raise ValueError(f"{field}={value!r} must be True or False")
    return bool(value)


def real_array(value: Any, field: str) -> Any:
    """``value`` as a float64 numpy array, for an array field of the public API (per-step
    series, rates): lists, tuples and arrays of Python or numpy integers and floats. Strings,
    bools, None and mixed objects are a ValueError naming the field (numpy would make ``True``
    a 1.0, and a string fails without naming the field). Like :func:`real`, the values' range is
    the field's own check.

    >>> real_array([1, 2.5], "iops")
    array([1. , 2.5])
    >>> real_array([True, False], "iops")
    Traceback (most recent call last):
    ...
    ValueError: iops must hold numbers (integers or floats), got an array of bool
    """
    import numpy as np

    shown = f"={value!r}" if isinstance(value, (str, bytes)) or value is None else ""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        raise ValueError(f"{field} must be an array of numbers, got {type(value).__name__}") from None
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{field}{shown} must hold numbers (integers or floats), got an array of {a.dtype}")
    return a.astype(np.float64, copy=False)


def integer(value: Any, field: str, what: str = "an integer") -> int:
    """``value`` as an int: Python and numpy integers, not bools or floats."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{field}={value!r} must be {what}, not {type(value).__name__}")
    return int(value)


KiB = 1024
MiB = 1024**2
GiB = 1024**3

_SUFFIX = {
    "": 1,
    "b": 1,
    "k": KiB,
    "kb": KiB,
    "kib": KiB,
    "m": MiB,
    "mb": MiB,
    "mib": MiB,
    "g": GiB,
    "gb": GiB,
    "gib": GiB,
}
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$")


def parse_size(value: SizeLike, field: str = "io_size") -> float:
    """Bytes from a number of bytes or a string with a binary suffix, as fio reads ``bs``.

    ``"4k"``, ``"4KiB"`` and ``4096`` are all 4,096 bytes (k, m, g are powers of 1,024).
    """
    if isinstance(value, bool):
        raise ValueError(f"{field}={value!r} must be a size in bytes or a string like '4k'")
    if isinstance(value, numbers.Real):  # int, float and numpy scalars
        size = float(value)
    elif isinstance(value, str):
        m = _SIZE_RE.match(value)
        if m is None or m.group(2).lower() not in _SUFFIX:
            raise ValueError(
                f"{field}={value!r} is not a size: expected bytes or a number with a suffix "
                f"k, m, g (KiB, MiB, GiB), e.g. '4k' or '1MiB'"
            )
        size = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    else:
        raise ValueError(f"{field}={value!r} must be a size in bytes or a string like '4k'")
    if not math.isfinite(size) or size <= 0:
        raise ValueError(f"{field}={value!r} must be a positive, finite size")
    return size


def a_an(word: str) -> str:
    """``word`` after its indefinite article, for messages: "an OpenLoop", "a PiecewiseOpenLoop",
    "an int", "an st1" (the volume types and acronyms whose letters are spoken: "ess-tee-one").

    >>> a_an("OpenLoop"), a_an("PiecewiseOpenLoop"), a_an("io2"), a_an("sc1"), a_an("gp3"), a_an("HDD")
    ('an OpenLoop', 'a PiecewiseOpenLoop', 'an io2', 'an sc1', 'a gp3', 'an HDD')
    """
    w = str(word)
    first = w[:1]
    spoken = len(w) > 1 and first.lower() in "fhlmnrsx" and (w[:2].isupper() or w.lower() in ("st1", "sc1"))
    return f"{'an' if first.lower() in 'aeiou' or spoken else 'a'} {w}"
