"""Start-up: `import ebssim` and `ebssim --help` import no numpy or pandas; every public name resolves.

The package namespaces are lazy (ebssim._lazy); these tests check what is imported, in a fresh
interpreter, not how long it takes (times are measured by hand, docs/performance.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Dict

import ebssim
import pytest

HEAVY = ("numpy", "pandas", "matplotlib", "scipy", "ruptures", "yaml")


def _imported(code: str) -> Dict[str, bool]:
    """Which of HEAVY a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import ebssim",
        "import ebssim.cli; ebssim.cli._parser()",
        "import ebssim.cli, contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        ebssim.cli.main(['fio', '--help'])\n    except SystemExit:\n        pass",
        "import ebssim; ebssim.VOLUME_TYPES; ebssim.gp3(100); ebssim.fio; ebssim.fit; ebssim.advise; ebssim.aws",
    ],
)
def test_light_paths_import_no_numpy_or_pandas(code: str) -> None:
    assert _imported(code) == {m: False for m in HEAVY}


def test_help_lists_the_volume_types_of_the_core() -> None:
    from ebssim.cli import _parser

    text = _parser()._subparsers._group_actions[0].choices["fio"].format_help()  # type: ignore[union-attr]
    assert " ".join(ebssim.VOLUME_TYPES) in " ".join(text.split())


def test_every_public_name_resolves_in_a_fresh_interpreter() -> None:
    code = (
        "import ebssim, ebssim.fio, ebssim.fit, ebssim.advise, ebssim.aws\n"
        "for m in (ebssim, ebssim.fio, ebssim.fit, ebssim.advise, ebssim.aws):\n"
        "    for n in m.__all__:\n"
        "        getattr(m, n)\n"
        "    assert set(m.__all__) <= set(dir(m)), m\n"
        "from ebssim import *"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


_HELPERS = {"TYPE_CHECKING", "annotations", "importlib", "sys"}


def test_dir_lists_only_public_names() -> None:
    # In a fresh interpreter: dir() of each package is its __all__, the public submodules imported
    # and its dunders; one imported since (ebssim.volumes, by gp3) joins it, a private one
    # (ebssim._core, ebssim._units) does not.
    code = (
        "import json, ebssim, ebssim.fio, ebssim.fit, ebssim.advise, ebssim.aws\n"
        "mods = (ebssim, ebssim.fio, ebssim.fit, ebssim.advise, ebssim.aws)\n"
        "before = {m.__name__: dir(m) for m in mods}\n"
        "ebssim.gp3(100)\n"
        "print(json.dumps({'before': before, 'after': dir(ebssim), 'all': {m.__name__: m.__all__ for m in mods}}))"
    )
    out = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    for name, names in out["before"].items():
        assert not _HELPERS & set(names), name
        public = [n for n in names if not (n.startswith("__") and n.endswith("__"))]
        # ebssim.fio and ebssim.fit, not in ebssim.__all__, were imported by the first line.
        imported = {"fio", "fit"} if name == "ebssim" else set()
        assert public == sorted(set(out["all"][name]) | imported), name
        assert "__version__" in names if name == "ebssim" else "__all__" in names
    after = set(out["after"]) - set(out["before"]["ebssim"])
    assert after == {"volumes"}, after


@pytest.mark.parametrize("name", ebssim.__all__)
def test_from_ebssim_import(name: str) -> None:
    exec(f"from ebssim import {name}", {})
    assert getattr(ebssim, name) is not None


def test_attributes_are_the_same_objects_as_in_the_submodules() -> None:
    from ebssim import advise, simulation, volumes

    assert ebssim.simulate is simulation.simulate
    assert ebssim.Volume is volumes.Volume
    assert ebssim.advise is advise and callable(ebssim.advise.advise)
    assert ebssim.fio.predict is ebssim.fio.prediction.predict
    assert ebssim.fit.fit is ebssim.fit._fit.fit


def test_plot_stays_the_function_when_its_module_is_imported_first() -> None:
    code = (
        "import ebssim.plot as m, ebssim\n"
        "assert callable(ebssim.plot) and ebssim.plot.__module__ == 'ebssim.plot', ebssim.plot"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        ebssim.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError):
        ebssim.fio.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(ebssim, "__wrapped__")
