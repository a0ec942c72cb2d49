"""fio's substitutions in job files: ``${VAR}`` from the environment, the reserved keywords
``$pagesize``, ``$mb_memory`` and ``$ncpus``, and the arithmetic fio hands to ``bc`` on a line whose
keywords were replaced.

fio 3.33 (``options.c``: ``option_dup_subs``, ``fio_keyword_replace``, ``bc_calc``; checked with the
fio binary, ``tests/data/fio_jobs/substitution``) applies them to every ``key=value`` line of a job
file, after comments are stripped and before the option is parsed:

1. Every ``${NAME}`` becomes the value of the environment variable ``NAME``. fio substitutes an
   empty string for a variable that is not set; ebssim refuses it (a :class:`FioJobError` naming
   the variable, the option and the line), since an empty ``filename=`` or ``rw=`` runs something
   else than what was meant. A ``$`` not followed by ``{...}`` stays as it is.
2. Then every ``$pagesize``, ``$mb_memory`` and ``$ncpus`` (in that order, anywhere in the line)
   becomes the machine's page size in bytes, its physical memory in MiB (rounded down) and its
   online CPUs.
3. When step 2 replaced something and the line holds ``+``, ``-``, ``*`` or ``/`` (and no ``'``),
   the value after ``=`` is computed by ``bc`` (integer arithmetic: ``/`` truncates, ``%``,
   ``^``, parentheses): ``numjobs=$ncpus/2`` on 8 CPUs is ``numjobs=4``. ebssim computes what
   ``bc`` would of whole numbers and refuses anything else: what ``bc`` cannot compute (a size
   suffix, a path, a division by zero), for which fio drops the job, and decimals, whose fraction
   fio would silently drop. Without ``+ - * /`` nothing is computed (fio reads ``2^$ncpus`` as 2,
   which ebssim refuses as not a number).

The keywords' values are this machine's (:func:`machine_keywords`: ``os.sysconf``, as fio reads
them) unless ``keywords=`` gives others, so a job file can be read for another machine;
``environ=`` replaces the process environment likewise. Command-line options are not substituted
(fio substitutes job files only; the shell expands ``$VAR`` on a command line).

>>> from ebssim.fio import parse_job_file
>>> text = "[j]\\nfilename=${DEV}\\nnumjobs=$ncpus/2\\n"
>>> [(j.filename, j.numjobs) for j in parse_job_file(text, environ={"DEV": "/dev/nvme1n1"}, keywords={"ncpus": 8})]
[('/dev/nvme1n1', 4)]
"""

from __future__ import annotations

import mmap
import os
import re
from typing import Dict, Mapping, Optional, Tuple

from .job import _Loc

__all__ = ["KEYWORDS", "machine_keywords", "substitute"]

#: fio's reserved keywords, in the order fio replaces them (``fio_keywords[]``).
KEYWORDS = ("pagesize", "mb_memory", "ncpus")
#: fio's longest option line (``OPT_LEN_MAX``), before and after substitution.
OPT_LEN_MAX = 8192
#: fio hands a value to bc only when the line is shorter than this and the value at most 100 characters.
_BC_LINE_MAX = 128
_BC_VALUE_MAX = 100
#: Largest number ebssim computes for bc (fio's options are 64-bit).
_BC_MAX = 1 << 64


def machine_keywords() -> Dict[str, int]:
    """This machine's values of fio's keywords, read as fio 3.33 reads them: ``$pagesize``
    (``sysconf(_SC_PAGESIZE)``), ``$mb_memory`` (physical pages x page size / 1 MiB, rounded down)
    and ``$ncpus`` (``sysconf(_SC_NPROCESSORS_ONLN)``, online CPUs).

    >>> sorted(machine_keywords())
    ['mb_memory', 'ncpus', 'pagesize']
    """
    page = _sysconf("SC_PAGESIZE") or mmap.PAGESIZE
    pages = _sysconf("SC_PHYS_PAGES")
    cpus = _sysconf("SC_NPROCESSORS_ONLN") or os.cpu_count() or 1
    out = {"pagesize": int(page), "ncpus": int(cpus)}
    if pages:
        out["mb_memory"] = int(pages) * int(page) // (1024 * 1024)
    return out


def _sysconf(name: str) -> Optional[int]:
    try:
        value = os.sysconf(name)
    except (AttributeError, ValueError, OSError):
        return None
    return int(value) if value > 0 else None


def _check_keywords(keywords: Mapping[str, int]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for k, v in keywords.items():
        if k not in KEYWORDS:
            raise ValueError(f"keywords={{{k!r}: ...}}: fio's keywords are {', '.join(KEYWORDS)} (without the '$')")
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"keywords[{k!r}]={v!r}: expected a whole number >= 0")
        out[k] = v
    return out


class Substitution:
    """The environment and keyword values one parse substitutes (:func:`substitute`)."""

    def __init__(self, environ: Optional[Mapping[str, str]] = None, keywords: Optional[Mapping[str, int]] = None):
        self.environ: Mapping[str, str] = os.environ if environ is None else dict(environ)
        self._given = _check_keywords(keywords or {})
        self._values: Optional[Dict[str, int]] = None

    def keyword(self, name: str, loc: _Loc, key: str) -> str:
        if name in self._given:
            return str(self._given[name])
        if self._values is None:
            self._values = machine_keywords()
        if name not in self._values:
            raise loc.error(
                f"option {key!r}: ${name} is not known on this machine (os.sysconf gives no value): pass "
                f"keywords={{{name!r}: N}}",
                key,
            )
        return str(self._values[name])


_VAR_RE = re.compile(r"\$\{([^}]*)\}")


def substitute(line: str, loc: _Loc, subs: Optional[Substitution] = None) -> str:
    """One ``key=value`` line of a job file with fio's substitutions done (module docstring).

    >>> from ebssim.fio.job import _Loc
    >>> substitute("size=8*$mb_memory", _Loc("job.fio", 3), Substitution(keywords={"mb_memory": 1024}))
    'size=8192'
    >>> substitute("rw=${MODE}", _Loc("job.fio", 4), Substitution(environ={}))
    Traceback (most recent call last):
    ...
    ebssim.fio.job.FioJobError: job.fio:4: option 'rw': ${MODE} is not set in the environment ...
    """
    if "$" not in line:
        return line
    subs = subs if subs is not None else Substitution()
    key = line.partition("=")[0].rstrip()
    if len(line) + 1 > OPT_LEN_MAX:
        raise loc.error(f"option {key!r}: the line is longer than fio's {OPT_LEN_MAX - 1} characters", key)

    def var(m: "re.Match[str]") -> str:
        name = m.group(1)
        if not name:
            raise loc.error(f"option {key!r}: '${{}}' names no variable; write ${{NAME}}", key)
        if name not in subs.environ:
            raise loc.error(
                f"option {key!r}: ${{{name}}} is not set in the environment (fio would substitute an empty "
                f"string): set {name}, or pass environ={{{name!r}: ...}}",
                key,
            )
        return subs.environ[name]

    text = _VAR_RE.sub(var, line)  # one pass, left to right: a value's own ${...} is not expanded again
    replaced = False
    for kw in KEYWORDS:
        word = "$" + kw
        if word in text:
            text = text.replace(word, subs.keyword(kw, loc, key))
            replaced = True
    if len(text) + 1 > OPT_LEN_MAX:
        raise loc.error(
            f"option {key!r}: {len(text):,} characters once substituted, more than fio's {OPT_LEN_MAX - 1}", key
        )
    if replaced and any(c in text for c in "+-*/") and "'" not in text:
        head, eq, value = text.partition("=")
        if eq and len(text) < _BC_LINE_MAX and len(value) <= _BC_VALUE_MAX:
            try:
                result = bc_integer(value)
            except ValueError as exc:
                raise loc.error(
                    f"option {key!r}: fio hands {value!r} to bc (a line whose $keywords it replaced, with + - * /): "
                    f"{exc}",
                    key,
                ) from None
            text = f"{head}={result}"
    return text


# --------------------------------------------------------------------------------------------
# bc's integer arithmetic (scale=0)
# --------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\s*(?:(\d+)|(.))")


def _tokens(text: str) -> Tuple[str, ...]:
    out = []
    for m in _TOKEN_RE.finditer(text):
        if m.group(1) is not None:
            out.append(m.group(1))
        elif m.group(2) is not None and not m.group(2).isspace():
            out.append(m.group(2))
    return tuple(out)


def bc_integer(text: str) -> int:
    """What ``bc`` prints for ``text`` at its default scale 0, for whole numbers with ``+ - * / % ^``
    and parentheses: ``/`` and ``%`` truncate toward zero, ``^`` is right-associative and binds
    tighter than ``* / %``, a unary minus tighter than ``^``. Anything else is a ValueError.

    >>> bc_integer("7/2"), bc_integer("-7/2"), bc_integer("-7%3"), bc_integer("2^3^2"), bc_integer("(1+2)*3")
    (3, -3, -1, 512, 9)
    """
    toks = _tokens(text)
    pos = 0

    def peek() -> Optional[str]:
        return toks[pos] if pos < len(toks) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(toks):
            raise ValueError(f"bc cannot compute {text!r}: it ends too early")
        pos += 1
        return toks[pos - 1]

    def check(v: int) -> int:
        if abs(v) >= _BC_MAX:
            raise ValueError(f"{text!r} is beyond fio's 64-bit numbers")
        return v

    def expr() -> int:
        v = term()
        while peek() in ("+", "-"):
            op = take()
            v = check(v + term() if op == "+" else v - term())
        return v

    def term() -> int:
        v = power()
        while peek() in ("*", "/", "%"):
            op = take()
            w = power()
            if op == "*":
                v = check(v * w)
                continue
            if w == 0:
                raise ValueError(f"bc stops at a division by zero in {text!r}")
            q = abs(v) // abs(w) * (1 if (v < 0) == (w < 0) else -1)
            v = q if op == "/" else v - q * w
        return v

    def power() -> int:
        base = unary()
        if peek() == "^":
            take()
            e = power()
            if e < 0:
                raise ValueError(f"{text!r} has a negative power, which bc computes as a fraction")
            if abs(base) > 1 and e > 64:
                raise ValueError(f"{text!r} is beyond fio's 64-bit numbers")
            return check(base**e)
        return base

    def unary() -> int:
        if peek() == "-":
            take()
            return -unary()
        return primary()

    def primary() -> int:
        t = take()
        if t == "(":
            v = expr()
            if take() != ")":
                raise ValueError(f"bc cannot compute {text!r}: a parenthesis is not closed")
            return v
        if t.isdigit():
            if peek() == ".":
                raise ValueError(
                    f"{text!r} has a decimal number: bc gives a fraction, of which fio silently keeps the whole part; "
                    "write whole numbers"
                )
            return check(int(t))
        raise ValueError(f"bc cannot compute {text!r}: {t!r} is not a number or an operator")

    if not toks:
        raise ValueError("bc is given nothing to compute")
    value = expr()
    if pos != len(toks):
        raise ValueError(f"bc cannot compute {text!r}: unexpected {toks[pos]!r}")
    return value
