"""Capacity plans as JUnit XML, for CI systems (Jenkins, GitLab, GitHub's test reporters).

The shape is pytest's ``--junitxml`` (its default ``xunit2`` family): ``<testsuites name=>`` holding one
``<testsuite>`` per plan with ``name``, ``errors``, ``failures``, ``skipped``, ``tests``,
``time``, ``timestamp`` and ``hostname``, and in it one ``<testcase classname= name= time=>``
per criterion and volume; a failed criterion holds ``<failure message=...>`` with why as its
text, a plan that cannot be read one ``<error message=...>``. tests/python/test_check.py runs
pytest itself and compares the two shapes. Written with the standard library's ElementTree.
"""

from __future__ import annotations

import datetime
import os
import socket
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Iterable, Sequence, Tuple

if TYPE_CHECKING:
    from ._plan import PlanOutcome

__all__ = ["junit_xml"]


def _classname(name: str) -> str:
    # CI systems split a classname at its last dot into package and class: keep the plan whole.
    return name.replace(".", "_")


def _suite(root: ET.Element, name: str, tests: int, failures: int, errors: int, time_s: float) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        {
            "name": name,
            "errors": str(errors),
            "failures": str(failures),
            "skipped": "0",
            "tests": str(tests),
            "time": f"{time_s:.3f}",
            "timestamp": datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(),
            "hostname": socket.gethostname(),
        },
    )


def junit_xml(outcomes: Sequence["PlanOutcome"], errors: Iterable[Tuple[str, str]] = ()) -> str:
    """JUnit XML of plans checked (:class:`PlanOutcome`) and of plans that could not be read.

    Parameters
    ----------
    outcomes : sequence of PlanOutcome
        One test suite each, named by the plan; a test case per criterion and volume, named
        ``VOLUME: CRITERION`` (``/dev/nvme1n1: p99 latency <= 5 ms``), failed with the figure the
        run got (``message``) and why (the text).
    errors : iterable of (plan file, message)
        Plans that could not be read or run: a test suite each with one test case ``plan`` in
        error.
    """
    root = ET.Element("testsuites", {"name": "ebssim check"})
    for o in outcomes:
        checks = o.checks
        bad = [c for _, c in checks if not c.ok]
        suite = _suite(root, o.plan.name, len(checks), len(bad), 0, o.elapsed_s)
        for volume, c in checks:
            case = ET.SubElement(
                suite,
                "testcase",
                {"classname": _classname(o.plan.name), "name": f"{volume}: {c.criterion}", "time": "0.000"},
            )
            if not c.ok:
                failure = ET.SubElement(case, "failure", {"message": f"{c.criterion}: {c.got}"})
                failure.text = "\n".join(x for x in (f"{volume}: {c.criterion}: {c.got}", c.detail) if x)
    for source, message in errors:
        name = os.path.splitext(os.path.basename(source))[0] or source
        suite = _suite(root, name, 1, 0, 1, 0.0)
        case = ET.SubElement(suite, "testcase", {"classname": _classname(name), "name": "plan", "time": "0.000"})
        err = ET.SubElement(case, "error", {"message": message})
        err.text = message
    return '<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(root, encoding="unicode") + "\n"
