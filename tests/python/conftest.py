"""Fixtures shared by the test modules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
from ebssim.cli import main


@dataclass
class CliRun:
    """What one in-process ``ebssim ...`` call did."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """``cli("cost", "--region", ...)`` runs ``ebssim.cli.main`` in-process and captures its output.

    Modules with their own ``cli`` fixture (the fio tests) override this one.
    """

    def run(*args: str) -> CliRun:
        rc = main(list(args))
        out, err = capsys.readouterr()
        return CliRun(rc, out, err)

    return run
