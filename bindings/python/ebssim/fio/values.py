"""fio option values: sizes, counts, times, percentages, switches, ``read,write`` pairs and path lists,
parsed by fio 3.33's rules (``parse.c``: ``kb_base`` and its inverted IEC suffixes, 64-bit numbers of
at most 20 decimal or 16 hex digits) but strictly: where fio silently misreads a value (``bs=4q`` is 4
bytes, ``runtime=2sec`` is 2 microseconds, ``bs= 8k`` with a space after ``=`` is 8 bytes,
``runtime=1.5s`` is 1 s), these functions raise :class:`BadValue` saying why. Which option takes which
kind of value is in :mod:`ebssim.fio.options`; the caller adds where the value was written.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Optional, Tuple

__all__ = [
    "BadValue",
    "check_plain",
    "parse_count",
    "parse_pair",
    "parse_percent",
    "parse_size",
    "parse_switch",
    "parse_time",
    "split_paths",
]


class BadValue(Exception):
    """A value fio would refuse or misread; the message says why, the caller adds where."""


_NUM_RE = re.compile(r"^([0-9]+)([A-Za-z]*)$")
# fio keeps numbers in 64 bits: 20 decimal or 16 hex digits at most (leading zeros aside).
_MAX_DIGITS = {10: 20, 16: 16}
_U64_MAX = (1 << 64) - 1
_HEX_RE = re.compile(r"^0[xX][0-9a-fA-F]+$")
_DEC_RE = re.compile(r"^[0-9]*\.[0-9]+[A-Za-z%]*$")
_PCT_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)%$")

_SIZE_SUFFIX_HELP = (
    "a whole number of bytes, optionally with a suffix k, m, g, t or p (also kb/KiB forms; "
    "powers of kb_base, 1024 by default), e.g. 4k, 1m, 16KiB"
)
_TIME_UNITS_US: Mapping[str, int] = {
    "us": 1,
    "usec": 1,
    "ms": 1_000,
    "msec": 1_000,
    "s": 1_000_000,
    "m": 60_000_000,
    "h": 3_600_000_000,
    "d": 86_400_000_000,
}


def _size_multiplier(suffix: str, kb_base: int) -> Optional[int]:
    """Bytes per unit for a size suffix, as fio's ``__get_mult_bytes`` computes it.

    With the default ``kb_base=1024``, ``k``/``kb`` are powers of 1024 and the IEC forms ``KiB``
    are powers of 1000 (fio's compatibility mode: "inputs invert IEC and SI prefixes"); with
    ``kb_base=1000`` it is the other way round. Checked with fio 3.33: ``bs=4KiB`` issues
    4,000-byte I/Os, ``bs=4kB`` 4,096-byte ones (fio 3.33, run).
    """
    s = suffix.lower()
    if s in ("", "b"):
        return 1
    other = 1000 if kb_base == 1024 else 1024
    for power, letter in enumerate("kmgtp", start=1):
        if s in (letter, letter + "b"):
            return int(kb_base**power)
        if s == letter + "ib":
            return int(other**power)
    return None


def _int(digits: str, text: str, base: int = 10) -> int:
    """``int(digits, base)`` once the digits are known to fit fio's 64 bits (a 300-digit number is
    refused here, before Python's own limit on digit strings produces a message about itself)."""
    significant = len(digits.lstrip("0"))
    if significant > _MAX_DIGITS[base]:
        raise BadValue(
            f"{text[:24]!r}{'...' if len(text) > 24 else ''} has {significant} digits: fio reads 64-bit numbers "
            f"(at most {_MAX_DIGITS[base]} {'hex ' if base == 16 else ''}digits)"
        )
    value = int(digits, base)
    if value > _U64_MAX:
        raise BadValue(f"{text!r} is beyond fio's 64-bit range (at most {_U64_MAX})")
    return value


def _scaled(number: int, mult: int, text: str, unit: str) -> int:
    value = number * mult
    if value > _U64_MAX:
        raise BadValue(f"{text!r} is {value:,} {unit}, beyond fio's 64-bit range (at most {_U64_MAX:,})")
    return value


def _digits_and_suffix(text: str, fraction: str, expected: str) -> Tuple[str, str]:
    """``text`` as its digits and its suffix; a decimal number is refused with ``fraction``, anything
    else that is not digits and letters with ``expected``."""
    m = _NUM_RE.match(text)
    if m is None:
        raise BadValue(fraction if _DEC_RE.match(text) else expected)
    return m.group(1), m.group(2)


def check_plain(text: str) -> None:
    """Refuse what fio would misread or ebssim does not expand: spaces around the value, fio's
    arithmetic ``(...)``, and a ``$`` left once the job file's substitutions are done
    (:mod:`ebssim.fio.substitution`), which fio would take as it is."""
    if text != text.strip():
        raise BadValue(
            f"{text!r} has spaces around it; fio keeps a space after '=' and then misreads the value "
            f"(fio 3.33 runs 'bs= 8k' with 8-byte blocks): remove the space"
        )
    if text.startswith("("):
        raise BadValue(f"{text!r}: fio arithmetic expressions are not supported; write the value out")
    if "$" in text:
        raise BadValue(
            f"{text!r}: fio takes this '$' as it is: it substitutes only ${{NAME}} (with braces) and $pagesize, "
            f"$mb_memory, $ncpus, and only in job files (on a command line the shell expands $NAME); write "
            f"${{NAME}} in a job file, or the value itself"
        )


def parse_count(text: str, kb_base: int, what: str) -> int:
    """A non-negative integer; fio's integer options also take size suffixes (``1k`` = 1024).

    >>> parse_count("1k", 1024, "a count"), parse_count("0x10", 1024, "a count")
    (1024, 16)
    """
    check_plain(text)
    if _HEX_RE.match(text):
        return _int(text[2:], text, 16)
    digits, suffix = _digits_and_suffix(
        text,
        f"{text!r} is not a whole number: fio would silently drop the fraction; expected {what}",
        f"{text!r} is not a number: expected {what}",
    )
    mult = _size_multiplier(suffix, kb_base)
    if mult is None:
        raise BadValue(f"{text!r} has an unknown suffix {suffix!r}: expected {what}")
    return _scaled(_int(digits, text), mult, text, "")


def parse_size(text: str, kb_base: int) -> int:
    """Bytes from a fio size such as ``4k``, ``1m``, ``16KiB`` or ``4096``.

    fio inverts the IEC and SI prefixes of ``kb_base`` (see ``_size_multiplier``):

    >>> parse_size("4k", 1024), parse_size("4KiB", 1024), parse_size("4KiB", 1000)
    (4096, 4000, 4096)
    >>> parse_size("4q", 1024)
    Traceback (most recent call last):
    ...
    ebssim.fio.values.BadValue: '4q' has an unknown size suffix 'q' (fio would silently read 4 bytes): ...
    """
    check_plain(text)
    if _HEX_RE.match(text):
        return _int(text[2:], text, 16)
    digits, suffix = _digits_and_suffix(
        text,
        f"{text!r} is not a whole number: fio reads only whole numbers here (it would run "
        f"{text!r} as {text.split('.')[0] or '0'} units); expected {_SIZE_SUFFIX_HELP}",
        f"{text!r} is not a size: expected {_SIZE_SUFFIX_HELP}",
    )
    mult = _size_multiplier(suffix, kb_base)
    if mult is None:
        # fio matches suffixes by their first letters and ignores the rest; an unknown first
        # letter leaves plain bytes (fio 3.33, run: bs=4q issued 4-byte I/Os).
        silently = "" if suffix[0].lower() in "kmgtp" else f" (fio would silently read {digits} bytes)"
        raise BadValue(f"{text!r} has an unknown size suffix {suffix!r}{silently}: expected {_SIZE_SUFFIX_HELP}")
    return _scaled(_int(digits, text), mult, text, "bytes")


def parse_percent(text: str) -> Optional[float]:
    """The percentage of ``size=50%``-style values (more than 0, at most 100), or None when ``text``
    is not a percentage.

    >>> parse_percent("50%"), parse_percent("4k")
    (50.0, None)
    """
    m = _PCT_RE.match(text)
    if m is None:
        return None
    pct = float(m.group(1))
    if not 0 < pct <= 100:
        raise BadValue("a percentage must be more than 0 and at most 100")
    return pct


def parse_time(text: str, default_unit_us: int) -> float:
    """Seconds from a fio time: a whole number with an optional suffix us, ms, s, m, h, d.

    A number without a suffix is in the option's own unit: seconds for ``runtime`` and
    ``ramp_time``, microseconds for ``thinktime`` (fio's ``get_mult_time``; checked with fio 3.33:
    ``thinktime=200000`` and ``thinktime=200ms`` both give 4 x 256k reads in 0.8 s).

    >>> parse_time("1500ms", 1_000_000), parse_time("30", 1_000_000), parse_time("500", 1)
    (1.5, 30.0, 0.0005)
    """
    check_plain(text)
    digits, suffix = _digits_and_suffix(
        text,
        f"{text!r} is not a whole number: fio reads only the integer part (it runs 'runtime=1.5s' "
        f"for 1 s); use a smaller unit such as 1500ms",
        f"{text!r} is not a time: expected a whole number with an optional suffix us, ms, s, m, h or d",
    )
    if suffix == "":
        mult = default_unit_us
    elif suffix.lower() in _TIME_UNITS_US:
        mult = _TIME_UNITS_US[suffix.lower()]
    else:
        raise BadValue(
            f"{text!r} has an unknown time suffix {suffix!r} (fio 3.33 would silently read it as "
            f"microseconds: 'runtime=2sec' runs for 2 us): use us, ms, s, m, h or d"
        )
    return _scaled(_int(digits, text), mult, text, "microseconds") / 1e6


def parse_switch(text: str) -> bool:
    """fio's ``check_int``: an unsigned integer, non-zero meaning on."""
    check_plain(text)
    if _HEX_RE.match(text):
        return _int(text[2:], text, 16) != 0
    if not re.fullmatch(r"[0-9]+", text):
        raise BadValue(f"{text!r} is not 0 or 1")
    return _int(text, text) != 0


def parse_pair(value: str, prev: Tuple[int, int], parse_one: Callable[[str], int]) -> Tuple[int, int]:
    """fio's ``read,write[,trim]`` values (``handle_option`` in parse.c).

    One value applies to reads and writes; ``8k,32k`` gives reads 8k and writes 32k; an empty
    place keeps the value already set: ``,8k`` changes writes only, ``8k,`` reads only.
    A third (trim) value is checked and ignored.

    >>> size = lambda text: parse_size(text, 1024)
    >>> parse_pair("8k", (4096, 4096), size), parse_pair(",32k", (8192, 8192), size)
    ((8192, 8192), (8192, 32768))
    """
    pieces = value.split(",")
    if len(pieces) > 3:
        raise BadValue(f"{value!r} has more than three comma-separated values (read,write,trim)")
    parsed = [None if p == "" else parse_one(p) for p in pieces]
    if all(p is None for p in parsed):
        raise BadValue("no value given")
    if len(pieces) == 1:
        v = parsed[0]
        assert v is not None
        return v, v
    read, write = prev
    if parsed[0] is not None:
        read = parsed[0]
    if parsed[1] is not None:
        write = parsed[1]
    return read, write


def split_paths(value: Optional[str]) -> Tuple[str, ...]:
    """fio's ``filename``/``directory`` lists: ``:``-separated, ``\\:`` for a literal colon.

    >>> split_paths("/dev/a:/mnt/b\\\\:c")
    ('/dev/a', '/mnt/b:c')
    """
    if not value:
        return ()
    parts = re.split(r"(?<!\\):", value)
    return tuple(p.replace("\\:", ":") for p in parts if p)
