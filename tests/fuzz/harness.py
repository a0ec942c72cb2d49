"""The command line every fuzz harness shares: ``python tests/fuzz/fuzz_X.py TARGET [libFuzzer
options] [CORPUS_DIR ...]`` runs one of the harness's targets under atheris."""

from __future__ import annotations

import sys
from typing import Callable, Mapping

import atheris


def main(targets: Mapping[str, Callable[[bytes], None]]) -> None:
    """Run the target named by the first argument; the other arguments go to libFuzzer."""
    if len(sys.argv) < 2 or sys.argv[1] not in targets:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(targets)}}} [libFuzzer options] [CORPUS_DIR ...]")
    atheris.Setup([sys.argv[0], *sys.argv[2:]], targets[sys.argv[1]])
    atheris.Fuzz()
