"""fio's tables of comma-separated integers (its logs and histogram logs), read fast by pandas or,
where that refuses, line by line so that the message names the offending line; and the package's
bounded file reader (:mod:`ebssim._files`: a size limit, devices, FIFOs and directories refused),
which the fio readers take from here.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections import Counter
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .._files import PathLike as PathLike
from .._files import read_bounded as read_bounded
from .._files import read_text as read_text

_INT_FIELD_RE = re.compile(r"[+-]?[0-9]{1,19}")
_HEX_FIELD_RE = re.compile(r"0[xX][0-9a-fA-F]{1,16}")
_INT64_MAX = 2**63 - 1


def _parse_int_field(text: str, allow_hex: bool) -> int:
    """One field, strictly: decimal digits (64-bit), or ``0x...`` where the column is hex."""
    s = text.strip(" \t")
    if allow_hex and _HEX_FIELD_RE.fullmatch(s):
        value = int(s, 16)
    elif _INT_FIELD_RE.fullmatch(s):
        value = int(s)
    else:
        raise ValueError(s)
    if abs(value) > _INT64_MAX:
        raise ValueError(s)
    return value


def _slow_table(
    path: str, lines: List[Tuple[int, str]], allowed: Sequence[int], what: str
) -> Tuple[List[np.ndarray], np.ndarray, List[bool]]:
    """Parse the table line by line: either the columns or an error naming the line and its text.

    Used when pandas' fast parser refused the text, so that every refusal names file:line.
    """
    counts = [ln.count(",") + 1 for _, ln in lines]
    n = Counter(counts).most_common(1)[0][0]
    if n not in allowed:
        no, ln = lines[0]
        raise ValueError(f"{path}, line {no}: {n} comma-separated fields per line, expected {what}: {ln[:120]!r}")
    for (no, ln), k in zip(lines, counts):
        if k != n:
            raise ValueError(
                f"{path}, line {no}: expected {n} comma-separated fields like the other lines ({what}), "
                f"got {k}: {ln[:120]!r}"
            )
    hex_cols = [f.strip()[:2].lower() == "0x" for f in lines[0][1].split(",")]
    rows: List[List[int]] = []
    for no, ln in lines:
        row = []
        for j, f in enumerate(ln.split(",")):
            try:
                row.append(_parse_int_field(f, hex_cols[j]))
            except ValueError:
                raise ValueError(
                    f"{path}, line {no}: field {j + 1} is {f.strip()[:40]!r}: expected an integer of at most "
                    f"64 bits ({what}): {ln[:120]!r}"
                ) from None
        rows.append(row)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), n)
    line_nos = np.array([no for no, _ in lines], dtype=np.int64)
    return [table[:, j].copy() for j in range(n)], line_nos, hex_cols


# Anything but digits, hex, signs, commas and blanks (a lone CR, a NUL, a non-ASCII digit).
_BAD_CHAR_RE = re.compile(r"[^0-9a-fA-FxX,+\- \t\n]")


def _line_text(body: str, no: int) -> str:
    return body.split("\n", no)[no - 1]


def _hex_int(s: str) -> int:
    return _parse_int_field(s, True)


def read_int_table(
    path: str, text: str, allowed: Sequence[int], what: str
) -> Tuple[List[np.ndarray], np.ndarray, List[bool]]:
    """Parse fio's ``", "``-separated integer lines (fast path: pandas' C parser).

    Returns (one int64 array per field, 1-based line number of each row, hex flag per field).
    Anything the fast path refuses is parsed again line by line, which either reads it or names
    the offending line; every field must be >= 0 (fio logs no negative time, value or count).
    """
    import pandas as pd

    body = text.rstrip().replace("\r\n", "\n")
    if not body:
        return [], np.zeros(0, dtype=np.int64), []
    bad = _BAD_CHAR_RE.search(body)
    if bad is not None:
        no = body.count("\n", 0, bad.start()) + 1
        col = bad.start() - (body.rfind("\n", 0, bad.start()) + 1) + 1
        raise ValueError(
            f"{path}, line {no}: character {bad.group()!r} at column {col}: expected {what}: "
            f"{_line_text(body, no)[:120]!r}"
        )
    if body[:1].isspace() or any(t in body for t in ("\n\n", "\n ", "\n\t")):
        # possibly blank lines inside (fio writes none): number the non-blank rows the slow way
        line_nos = np.array([no for no, ln in enumerate(body.split("\n"), start=1) if ln.strip()], dtype=np.int64)
    else:
        line_nos = np.arange(1, body.count("\n") + 2, dtype=np.int64)
    first = body.lstrip().split("\n", 1)[0]
    n = first.count(",") + 1
    columns: Optional[List[np.ndarray]] = None
    hex_cols = [f.strip()[:2].lower() == "0x" for f in first.split(",")]
    if n in allowed:
        converters = {i: _hex_int for i, h in enumerate(hex_cols) if h}
        dtypes = {i: np.int64 for i in range(n) if not hex_cols[i]}
        try:
            with warnings.catch_warnings():
                # pandas warns (and goes on) where a number does not fit int64: the slow path
                # names the line instead.
                warnings.simplefilter("error")
                df = pd.read_csv(
                    io.StringIO(body),
                    header=None,
                    names=list(range(n)),
                    sep=",",
                    skipinitialspace=True,
                    dtype=dtypes,
                    converters=converters,
                    engine="c",
                    quoting=csv.QUOTE_NONE,
                )
            if len(df) == len(line_nos):
                columns = [df[i].to_numpy(dtype=np.int64) for i in range(n)]
        except (ValueError, TypeError, OverflowError, pd.errors.ParserError, Warning):
            columns = None
    if columns is None:
        lines = [(no, ln) for no, ln in enumerate(body.split("\n"), start=1) if ln.strip()]
        columns, line_nos, hex_cols = _slow_table(path, lines, allowed, what)
    for j, values in enumerate(columns):
        if values.size and int(values.min()) < 0:
            r = int(np.argmax(values < 0))
            ln = _line_text(body, int(line_nos[r]))
            raise ValueError(
                f"{path}, line {line_nos[r]}: field {j + 1} is {values[r]}: expected a whole number >= 0 ({what}): "
                f"{ln[:120]!r}"
            )
    return columns, line_nos, hex_cols
