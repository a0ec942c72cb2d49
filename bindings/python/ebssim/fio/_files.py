"""fio's tables of comma-separated integers (its logs and histogram logs), read fast by pandas or,
where that refuses, line by line so that the message names the offending line; and the package's
bounded file reader (:mod:`ebssim._files`: a size limit, devices, FIFOs and directories refused),
which the fio readers take from here.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from .._files import PathLike as PathLike
from .._files import decode, head_bounded
from .._files import read_bounded as read_bounded
from .._files import read_text as read_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

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


# Anything but digits, hex, signs, commas and blanks (a NUL, a non-ASCII digit), once CR LF and
# CR line ends are LF.
_BAD_CHAR_RE = re.compile(r"[^0-9a-fA-FxX,+\- \t\n]")
# The bytes of a table that the fast path reads as they are: those _BAD_CHAR_RE allows, and CR
# (of CR LF or CR line ends, read as LF).
_TABLE_BYTES = b"0123456789abcdefABCDEFxX,+- \t\n\r"
_LEADING_BLANKS_RE = re.compile(rb"\s*")
_TRAILING_BLANKS = b" \t\n\r\x0b\x0c"  # what bytes.rstrip() strips


def _non_blank_lines(body: bytes) -> np.ndarray:
    """The 1-based numbers of the lines of ``body`` that hold more than blanks."""
    return np.array([no for no, ln in enumerate(body.split(b"\n"), start=1) if ln.strip()], dtype=np.int64)


def read_table_file(path: str, limit: int, what: str, limit_name: str) -> Union[bytes, str]:
    """A table file for :func:`read_int_table`, read as :func:`ebssim._files.read_bounded` reads
    it: its bytes when they are all ones a table holds (ASCII digits, hex, signs, commas, blanks
    and line ends, checked at C speed), else its UTF-8 text (a ValueError naming the line and
    the first byte that is not UTF-8), whose first character that is not a table's
    :func:`read_int_table` names."""
    data = read_bounded(path, limit, what, limit_name)
    if not data.translate(None, _TABLE_BYTES):
        return data
    return decode(data, path, what)


def _line_text(body: str, no: int) -> str:
    return body.split("\n", no)[no - 1]


def _hex_int(s: str) -> int:
    return _parse_int_field(s, True)


def _hex_column(values: "pd.Series") -> np.ndarray:
    """A column of ``0x...`` (or decimal) integer fields, read as categories or as text, as int64:
    each distinct field parsed once (fio's prio column holds a few classes in millions of rows;
    one, as a rule: a column of text equal to its first field is one comparison, cheaper than
    categories); ValueError for a missing field or one that is not such an integer."""
    import pandas as pd

    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        fields = list(values.cat.categories)
    else:
        first = values.iloc[0] if len(values) else None
        if isinstance(first, str) and bool((values == first).all()):
            return np.full(len(values), _hex_int(first), dtype=np.int64)
        codes, uniques = pd.factorize(values)
        fields = list(uniques)
    if codes.size and int(codes.min()) < 0:
        raise ValueError("a missing field")
    parsed = np.array([_hex_int(str(u)) for u in fields], dtype=np.int64)
    if len(parsed) == 1:  # one class in the whole log, as usual
        return np.full(len(codes), parsed[0], dtype=np.int64)
    out: np.ndarray = parsed[codes.astype(np.intp)]  # a take by int8 codes is 2x slower
    return out


def _as_lf(body: bytes) -> bytes:
    """``body`` with CR LF and lone CR line ends as LF, as pandas' parser and Python's universal
    newlines read them (``body`` itself when it has no CR)."""
    return body.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in body else body


def read_int_table(
    path: str, text: Union[str, bytes], allowed: Sequence[int], what: str, *, from_file: bool = False
) -> Tuple[List[np.ndarray], np.ndarray, List[bool]]:
    """Parse fio's ``", "``-separated integer lines (fast path: pandas' C parser).

    ``text`` is the file's text, or its bytes when they are all ASCII characters a table holds
    (:func:`read_table_file`). Returns (one int64 array per field, 1-based line number of each
    row, hex flag per field). Anything the fast path refuses is parsed again line by line, which
    either reads it or names the offending line; every field must be >= 0 (fio logs no negative
    time, value or count). ``from_file``: ``text`` is ``path``'s bytes as
    :func:`read_table_file` read them; the C parser then reads the file itself (from the page
    cache), which pandas does about 1.7x faster than the same bytes from memory (bench/bench_fio_logs.py).
    """
    import pandas as pd

    if isinstance(text, str):
        body_text = text.rstrip().replace("\r\n", "\n").replace("\r", "\n")
        if not body_text:
            return [], np.zeros(0, dtype=np.int64), []
        bad = _BAD_CHAR_RE.search(body_text)
        if bad is not None:
            no = body_text.count("\n", 0, bad.start()) + 1
            col = bad.start() - (body_text.rfind("\n", 0, bad.start()) + 1) + 1
            raise ValueError(
                f"{path}, line {no}: character {bad.group()!r} at column {col}: expected {what}: "
                f"{_line_text(body_text, no)[:120]!r}"
            )
        body = body_text.encode("ascii")  # every character left is ASCII
    elif b"\r" in text:
        body = _as_lf(text.rstrip())
    else:
        body = text  # not stripped (a copy of the whole file): the blanks at its end are skipped below
    # The file itself where these are its bytes, unchanged (the same size: not rewritten since).
    source: Any = path if from_file and body is text and os.stat(path).st_size == len(body) else None
    end = len(body)
    while end and body[end - 1] in _TRAILING_BLANKS:
        end -= 1
    if not end:
        return [], np.zeros(0, dtype=np.int64), []
    lead = _LEADING_BLANKS_RE.match(body)
    skip = 0 if lead is None else lead.end()
    n_lines = body.count(b"\n", 0, end) + 1
    first_end = body.find(b"\n", skip, end)
    first = body[skip : first_end if first_end >= 0 else end].decode("ascii")
    n = first.count(",") + 1
    columns: Optional[List[np.ndarray]] = None
    line_nos: Optional[np.ndarray] = None
    hex_cols = [f.strip()[:2].lower() == "0x" for f in first.split(",")]
    if n in allowed:
        # Hex fields as categories (parsed once per value). No skipinitialspace: pandas' integer
        # parser skips the blank after each comma itself, and the option costs a third of the time.
        dtypes = {i: ("category" if hex_cols[i] else np.int64) for i in range(n)}
        try:
            with warnings.catch_warnings():
                # pandas warns (and goes on) where a number does not fit int64: the slow path
                # names the line instead.
                warnings.simplefilter("error")
                df = pd.read_csv(
                    io.BytesIO(body) if source is None else source,
                    header=None,
                    names=list(range(n)),
                    sep=",",
                    dtype=dtypes,
                    engine="c",
                    quoting=csv.QUOTE_NONE,
                )
                if skip == 0 and len(df) == n_lines:  # a row for every line: line k is row k
                    line_nos = np.arange(1, n_lines + 1, dtype=np.int64)
                else:  # blank lines (fio writes none): the rows are the lines that are not blank
                    line_nos = _non_blank_lines(body[:end])
                if len(df) == len(line_nos):
                    columns = [_hex_column(df[i]) if hex_cols[i] else df[i].to_numpy(dtype=np.int64) for i in range(n)]
        except (ValueError, TypeError, OverflowError, pd.errors.ParserError, Warning):
            columns = None
    if columns is None or line_nos is None:
        lines = [(no, ln) for no, ln in enumerate(body[:end].decode("ascii").split("\n"), start=1) if ln.strip()]
        columns, line_nos, hex_cols = _slow_table(path, lines, allowed, what)
    for j, values in enumerate(columns):
        if values.size and int(values.min()) < 0:
            r = int(np.argmax(values < 0))
            ln = _line_text(body[:end].decode("ascii"), int(line_nos[r]))
            raise ValueError(
                f"{path}, line {line_nos[r]}: field {j + 1} is {values[r]}: expected a whole number >= 0 ({what}): "
                f"{ln[:120]!r}"
            )
    return columns, line_nos, hex_cols


class LineNumbers:
    """The 1-based line number of each row of a table that pandas read from the file itself,
    worked out from the file's bytes only when a message asks for one (reading the table never
    needs them): row k is line k unless the file holds blank lines, which pandas skips."""

    def __init__(self, path: str, rows: int, limit: int, what: str, limit_name: str) -> None:
        self._path, self._rows, self._limit, self._what, self._limit_name = path, rows, limit, what, limit_name
        self._numbers: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return self._rows

    def __getitem__(self, row: int) -> int:
        if self._numbers is None:
            body = _as_lf(read_bounded(self._path, self._limit, self._what, self._limit_name).rstrip())
            lines = body.count(b"\n") + 1
            if lines == self._rows and not body[:1].isspace():
                self._numbers = np.arange(1, lines + 1, dtype=np.int64)
            else:
                self._numbers = _non_blank_lines(body)
            if len(self._numbers) != self._rows:  # the file changed since pandas read it
                raise ValueError(f"{self._path}: changed while it was read ({self._what}); read it again")
        return int(self._numbers[row])


# The most of a file read to find its first line (a histogram log's line is ~4-15 KB).
_HEAD_BYTES = 1 << 16


def read_int_file(
    path: str, limit: int, file_what: str, limit_name: str, allowed: Sequence[int], what: str
) -> Tuple[List[np.ndarray], Union[np.ndarray, LineNumbers], List[bool]]:
    """:func:`read_table_file` and :func:`read_int_table` of ``path``, fast (:func:`_read_int_file`)."""
    columns, line_nos, hex_cols = _read_int_file(path, limit, file_what, limit_name, allowed, what, matrix=False)
    assert isinstance(columns, list)
    return columns, line_nos, hex_cols


def read_int_matrix(
    path: str, limit: int, file_what: str, limit_name: str, allowed: Sequence[int], what: str
) -> Tuple[np.ndarray, Union[np.ndarray, LineNumbers]]:
    """:func:`read_int_file` of a table without hex fields as one 2-D int64 array (rows x fields;
    0 x 0 for an empty file) and the rows' line numbers: a histogram log's 1,859 columns are not
    split into arrays to be stacked again."""
    table, line_nos, _ = _read_int_file(path, limit, file_what, limit_name, allowed, what, matrix=True)
    assert isinstance(table, np.ndarray)
    return table, line_nos


def _read_int_file(
    path: str,
    limit: int,
    file_what: str,
    limit_name: str,
    allowed: Sequence[int],
    what: str,
    *,
    matrix: bool,
) -> Tuple[Union[List[np.ndarray], np.ndarray], Union[np.ndarray, LineNumbers], List[bool]]:
    """:func:`read_table_file` and :func:`read_int_table` of ``path``, its fast path without
    reading the file into memory first: its first line gives the field count, and the C parser
    reads the file itself, every field an int64 (hex fields parsed once per distinct value).
    Line ends are LF, CR LF or CR, as the parser (and Python's universal newlines) take them.
    Whatever that path does not take (leading blanks, a field that is no int64, a negative one,
    lines of another length) is read by :func:`read_int_table`, which reads it or names the line.
    Same returns, but the line numbers are a :class:`LineNumbers`, worked out when asked for;
    ``matrix``: one 2-D int64 array (rows x fields) instead of a list of columns, for a table
    without hex fields (a histogram log's 1,859 columns)."""
    fast: Optional[Tuple[Union[List[np.ndarray], np.ndarray], LineNumbers, List[bool]]] = None
    head = head_bounded(path, limit, file_what, limit_name, _HEAD_BYTES)
    end = head.find(b"\n")
    first = head[: end if end >= 0 else len(head)].rstrip(b"\r")
    if head[:1] not in b" \t\r\n" and (end >= 0 or len(head) < _HEAD_BYTES) and first.isascii():
        fields = first.decode("ascii").split(",")
        hex_cols = [f.strip()[:2].lower() == "0x" for f in fields]
        n = len(fields)
        if n in allowed and not (matrix and any(hex_cols)):
            fast = _pandas_table(path, n, hex_cols, matrix, limit, file_what, limit_name)
    if fast is not None:
        return fast
    text = read_table_file(path, limit, file_what, limit_name)
    columns, line_nos, hex_cols = read_int_table(path, text, allowed, what, from_file=isinstance(text, bytes))
    if matrix:
        return (np.column_stack(columns) if columns else np.zeros((0, 0), dtype=np.int64)), line_nos, hex_cols
    return columns, line_nos, hex_cols


def _pandas_table(
    path: str, n: int, hex_cols: List[bool], matrix: bool, limit: int, file_what: str, limit_name: str
) -> Optional[Tuple[Union[List[np.ndarray], np.ndarray], LineNumbers, List[bool]]]:
    """The file ``path`` of ``n`` fields a line read by a C parser: pandas' for columns, numpy's
    ``loadtxt`` for a ``matrix`` (one array: no column objects to make, 1.7x faster than pandas on
    a histogram log's 1,859 columns). None where the parser refuses, a number does not fit int64
    (pandas warns and goes on: None instead) or a field is negative."""
    import pandas as pd

    out: Union[List[np.ndarray], np.ndarray]
    try:
        if matrix:
            table = np.loadtxt(path, delimiter=",", dtype=np.int64, comments=None, ndmin=2, encoding="ascii")
            if table.shape[1] != n or (table.size and int(table.min()) < 0):
                return None
            out, rows = table, len(table)
        else:
            # Every column as pandas infers it (faster than asking for int64, or for categories in a
            # hex column: _hex_column): a decimal column that is not int64 (a field that is no
            # integer, one past int64) is refused below.
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                df = pd.read_csv(path, header=None, names=list(range(n)), sep=",", engine="c", quoting=csv.QUOTE_NONE)
                if any(df[i].dtype != np.int64 for i in range(n) if not hex_cols[i]):
                    return None
                out = [_hex_column(df[i]) if hex_cols[i] else df[i].to_numpy() for i in range(n)]
            if any(c.size and int(c.min()) < 0 for c in out):
                return None
            rows = len(df)
    except (ValueError, TypeError, OverflowError, UnicodeError, pd.errors.ParserError, Warning):
        return None
    return out, LineNumbers(path, rows, limit, file_what, limit_name), hex_cols
