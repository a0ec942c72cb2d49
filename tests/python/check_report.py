"""Reading the report ``ebssim check`` prints, for the tests of plans (test_check*.py,
test_prometheus_front_ends.py)."""

from __future__ import annotations

import re
from typing import Dict


def criterion_lines(out: str) -> Dict[str, str]:
    """The criterion lines of a report, by criterion: 'PASS'/'FAIL' and the rest."""
    found = {}
    for line in out.splitlines():
        m = re.match(r"^(PASS|FAIL)  (\S+)\s+(.*?)\s{2,}(.*)$", line)
        if m:
            found[m.group(3)] = f"{m.group(1)} {m.group(4)}"
    return found
