"""Counts in the advisor's sentences: "1 volume", "2 volumes"."""

from __future__ import annotations

from typing import Optional


def count(n: int, noun: str, plural: Optional[str] = None) -> str:
    """``n`` and ``noun``, the noun in the plural unless ``n`` is 1.

    >>> count(1, "volume"), count(2, "volume"), count(0, "modification")
    ('1 volume', '2 volumes', '0 modifications')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def agree(n: int, one: str, many: str) -> str:
    """The verb that agrees with a count of ``n``: ``agree(1, "needs", "need")`` is "needs"."""
    return one if n == 1 else many
