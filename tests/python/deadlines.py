"""A bound on how long a block of a test may run, for readers that must refuse a FIFO before they
would wait for a writer (a plain module beside the tests: pytest puts this folder on sys.path)."""

from __future__ import annotations

import contextlib
import signal
from typing import Any, Iterator


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: raise AssertionError once ``seconds`` have passed (SIGALRM)."""

    def expired(signum: int, frame: Any) -> None:
        raise AssertionError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
