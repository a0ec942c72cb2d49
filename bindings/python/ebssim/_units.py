"""Size parsing shared by the public API (``"4k"``, ``"1MiB"``, ``4096``)."""

from __future__ import annotations

import math
import numbers
import re
from typing import Union

SizeLike = Union[int, float, str]

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
