"""Pickling of the validated dataclasses (volumes, workloads) that hold a compiled object.

The compiled part (``_params``, ``_native``) does not pickle; it is rebuilt from the
constructor's fields, validated again, when the object is unpickled (by multiprocessing, or a
Dask worker: :mod:`ebssim.fleet`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Tuple, Type, TypeVar

_T = TypeVar("_T")


def rebuild(cls: Type[_T], kwargs: Dict[str, Any]) -> _T:
    """The object ``cls(**kwargs)``: what :func:`reduce` makes pickle call."""
    return cls(**kwargs)


def init_fields(obj: Any) -> Dict[str, Any]:
    """The fields of a dataclass instance that its constructor takes, by name."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}


def reduce(obj: Any, kwargs: Dict[str, Any]) -> Tuple[Any, Tuple[Any, ...]]:
    """``__reduce__`` of ``obj``: rebuilt as ``type(obj)(**kwargs)``."""
    return rebuild, (type(obj), kwargs)
