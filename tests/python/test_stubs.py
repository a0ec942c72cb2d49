"""_core.pyi's signatures agree with the compiled module's.

``make lint`` runs ``python -m mypy.stubtest ebssim._core``, which checks names, classes,
read-only fields and module constants, but cannot read the signature of a pybind11 function
(``inspect.signature`` fails on them). pybind11 writes each signature into the function's
docstring instead; this test compares those with the stub: parameter names, order, which have
defaults, and the simple types (float, int, bool, str, the module's own classes).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import ebssim
import pytest
from ebssim import _core

STUB = Path(ebssim.__file__).parent / "_core.pyi"

# (name, annotation or None, has a default); the return annotation last.
Param = Tuple[str, Optional[str], bool]
Signature = Tuple[Tuple[Param, ...], Optional[str]]

# pybind11's spelling of a C++ double, int64 and of the module's classes, as a stub spells them.
_SIMPLE = {
    "typing.SupportsFloat | typing.SupportsIndex": "float",
    "typing.SupportsInt | typing.SupportsIndex": "int",
    "float": "float",
    "int": "int",
    "bool": "bool",
    "str": "str",
    "None": "None",
}


def _simple(annotation: str) -> Optional[str]:
    """The annotation as a stub writes it, when it is simple enough to compare; else None."""
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    m = re.fullmatch(r"ebssim\._core\.(\w+)", annotation)
    return m.group(1) if m else None


def _split_top_level(text: str) -> List[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def runtime_signatures(func: object, name: str) -> List[Signature]:
    """The signatures pybind11 wrote into a function's docstring (one per overload)."""
    doc = getattr(func, "__doc__", None) or ""
    sigs = []
    for m in re.finditer(rf"^(?:\d+\. )?{re.escape(name)}\((.*)\) -> (.*)$", doc, flags=re.M):
        params = []
        for p in _split_top_level(m.group(1)):
            if p in ("*args", "**kwargs"):
                break  # the overload dispatcher's own line
            if p == "*":  # keyword-only parameters follow
                params.append(("*", None, False))
                continue
            head, _, default = p.partition(" = ")
            pname, _, annotation = head.partition(": ")
            if pname != "self":
                params.append((pname, _simple(annotation), bool(default)))
        else:
            sigs.append((tuple(params), _simple(m.group(2))))
    return sigs


def stub_signature(f: ast.FunctionDef) -> Signature:
    args = f.args
    positional = args.posonlyargs + args.args
    n_defaults = len(args.defaults)
    params = []
    for i, a in enumerate(positional):
        if a.arg == "self":
            continue
        annotation = ast.unparse(a.annotation) if a.annotation else None
        params.append((a.arg, annotation, i >= len(positional) - n_defaults))
    if args.kwonlyargs:
        params.append(("*", None, False))
        for a, default in zip(args.kwonlyargs, args.kw_defaults):
            annotation = ast.unparse(a.annotation) if a.annotation else None
            params.append((a.arg, annotation, default is not None))
    returns = ast.unparse(f.returns) if f.returns else None
    return tuple(params), returns


def _is_property(f: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list)


def stub_functions() -> Dict[str, List[ast.FunctionDef]]:
    """Every function and method of the stub that pybind11 gives a docstring signature, by
    qualified name (overloads together)."""
    tree = ast.parse(STUB.read_text())
    out: Dict[str, List[ast.FunctionDef]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not _is_property(item):
                    out.setdefault(f"{node.name}.{item.name}", []).append(item)
    return out


FUNCTIONS = stub_functions()


def test_the_stub_has_functions_and_methods():
    assert {"make_volume", "volume_types", "Simulation.run", "Simulation.__init__", "VolumeTotals.__getitem__"} <= set(
        FUNCTIONS
    )


@pytest.mark.parametrize("qualname", sorted(FUNCTIONS))
def test_signature_matches(qualname: str):
    owner: object = _core
    for part in qualname.split("."):
        owner = getattr(owner, part)
    name = qualname.rsplit(".", 1)[-1]
    runtime = runtime_signatures(owner, name)
    assert runtime, f"no pybind11 signature in the docstring of {qualname}"
    stub = [stub_signature(f) for f in FUNCTIONS[qualname]]
    assert len(stub) == len(runtime), f"{qualname}: {len(stub)} signatures in the stub, {len(runtime)} at run time"
    for (s_params, s_ret), (r_params, r_ret) in zip(stub, runtime):
        assert [(n, d) for n, _, d in s_params] == [(n, d) for n, _, d in r_params], (
            f"{qualname}: parameter names or defaults differ"
        )
        for (n, s_ann, _), (_, r_ann, _) in zip(s_params, r_params):
            if r_ann is not None:
                assert s_ann == r_ann, f"{qualname}: parameter {n} is {r_ann} at run time, {s_ann} in the stub"
        if r_ret is not None:
            assert s_ret == r_ret, f"{qualname}: returns {r_ret} at run time, {s_ret} in the stub"
