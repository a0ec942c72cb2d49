"""Lazy package namespaces (PEP 562): a public name is imported when it is first used.

``import ebssim`` (and ``ebssim --help``) then costs no numpy, pandas or matplotlib: each
package lists which submodule defines each of its names, and its module ``__getattr__`` imports
that submodule on first access. The packages also import the same names under ``TYPE_CHECKING``,
so mypy and IDEs see them as before.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, Callable, Dict, Iterable, List, Mapping, Tuple


def attach(
    package: str, exports: Mapping[str, Iterable[str]], all_names: Iterable[str]
) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``.

    ``exports`` maps a submodule (``".burst"``) to the names the package takes from it; a name
    that is not there but is a submodule of the package (``ebssim.fio``) is that submodule.
    """
    where: Dict[str, str] = {name: module for module, names in exports.items() for name in names}
    listed = sorted(set(all_names))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, package), name)
        elif name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> List[str]:
        # Public names only: those of __all__, the public submodules imported so far
        # (ebssim.simulation) and the module's own dunders (__version__, __all__), not the helpers
        # the package's code imports (importlib, sys, TYPE_CHECKING, annotations) nor private names.
        names = set(listed)
        for name, value in vars(sys.modules[package]).items():
            if name.startswith("__") and name.endswith("__"):
                names.add(name)
            elif not name.startswith("_") and isinstance(value, ModuleType) and value.__name__ == f"{package}.{name}":
                names.add(name)
        return sorted(names)

    return __getattr__, __dir__
