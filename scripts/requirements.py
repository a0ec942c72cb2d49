"""Print the requirements named in pyproject.toml, one per line, for pip to install.

Usage: python scripts/requirements.py [build] [EXTRA ...]

``build`` prints [build-system].requires; each EXTRA prints that optional-dependency group
(``test``, ``lint``, ``fuzz``, ``bench``, ...). The Makefile uses it so that every requirement and its
version are written once, in pyproject.toml.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]


def main(argv: list[str]) -> int:
    doc = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    extras = doc["project"].get("optional-dependencies", {})
    out: list[str] = []
    for name in argv:
        if name == "build":
            out += doc["build-system"]["requires"]
        elif name == "runtime":
            out += doc["project"]["dependencies"]
        elif name in extras:
            out += extras[name]
        else:
            known = ", ".join(["build", "runtime", *extras])
            print(f"requirements.py: unknown group {name!r}; known: {known}", file=sys.stderr)
            return 2
    print("\n".join(dict.fromkeys(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
