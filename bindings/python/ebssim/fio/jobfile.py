"""fio job files: splitting the text into sections and ``key=value`` lines (comments, ``include``
files, with ``path:line`` kept for every error), running the sections in order with ``[global]``
inheritance (each job starts from a copy of the globals so far), and collecting the finished jobs the
way fio's ``add_job`` does (thread numbers, ``stonewall`` phases, reporting groups, the checks a job
must pass to be simulated); :func:`parse_job_file` is the entry point, and
:mod:`ebssim.fio.cmdline` uses the rest for the job files a command line names.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._files import PathLike, read_bounded
from .job import FioJob, FioJobError, FioJobSet, _Loc
from .options import _TRIM_KINDS, ASYNC_ENGINES, MAX_JOBS, SYNC_ENGINES, _apply, _Draft, _Entry, _order_for_file
from .substitution import Substitution, substitute

__all__ = ["MAX_JOB_FILE_BYTES", "parse_job_file"]

#: Bytes of job text one RUN may read, its includes counted: job files are a few KiB, and a
#: device such as /dev/zero or a huge download must not be read without end.
MAX_JOB_FILE_BYTES = 1 << 20

# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


@dataclass
class _Section:
    name: str
    is_global: bool
    loc: _Loc
    entries: List[_Entry] = field(default_factory=list)


_MAX_INCLUDE_DEPTH = 8


def _split_sections(
    text: str,
    source: str,
    base_dir: str,
    *,
    depth: int = 0,
    into: Optional[_Section] = None,
    budget: Optional[List[int]] = None,
    read: Optional[List[str]] = None,
    subs: Optional[Substitution] = None,
) -> List[_Section]:
    """fio's ``__parse_jobs_ini``: sections, ``key=value`` lines, comments, ``include``.

    A line whose first non-blank character is ``;`` or ``#`` is a comment; elsewhere ``;`` and
    ``#`` end the line (fio's ``strip_blank_end``). Leading and trailing blanks of a line are
    dropped, blanks before ``=`` too, but not blanks after it (fio keeps them: see
    :func:`ebssim.fio.values.check_plain`).
    Any section whose name starts with ``global`` is a global section, as in fio.
    ``budget`` (a one-element list) holds the bytes that includes may still read; the path of
    every included file read is appended to ``read``. Each ``key=value`` line gets fio's
    ``${VAR}`` and ``$keyword`` substitutions (:mod:`ebssim.fio.substitution`, with ``subs``);
    section headers and ``include`` lines do not, as in fio.

    A file that starts with a UTF-8 byte-order mark is refused, as fio refuses it: fio reads the
    mark's three bytes as part of the first line, which is then neither a comment nor a section
    header (``option <...> outside of [] job section``).
    """
    if budget is None:
        budget = _new_budget(len(text))
    if text.startswith("\ufeff"):
        raise _Loc(source, 1).error(
            "the file starts with a UTF-8 byte-order mark (U+FEFF), which fio refuses (it reads the mark as part "
            "of the first line); save the file as UTF-8 without a byte-order mark"
        )
    sections: List[_Section] = []
    current = into
    for lineno, raw in enumerate(text.splitlines(), start=1):
        loc = _Loc(source, lineno)
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        line = re.split(r"[;#]", line, maxsplit=1)[0].rstrip()
        if line.startswith("["):
            if into is not None:
                raise loc.error(f"an included file cannot start a section: {line!r}")
            if not line.endswith("]"):
                raise loc.error(f"a section header must look like [jobname]: {line!r}")
            name = line[1:-1]
            if not name.strip():
                raise loc.error("a job section needs a name: '[]'; write [jobname]")
            current = _Section(name=name, is_global=name.startswith("global"), loc=loc)
            sections.append(current)
            continue
        if line.startswith("include") and (len(line) == 7 or line[7] in " \t"):
            if current is None:
                raise loc.error(f"option <{line}> outside of a [section]")
            target = line[7:].strip()
            if not target:
                raise loc.error("include needs a file name: include other.fio")
            if depth >= _MAX_INCLUDE_DEPTH:
                raise loc.error(f"include nested more than {_MAX_INCLUDE_DEPTH} deep (an include loop?)")
            # fio tries the name as given, then relative to the including file's directory.
            path = target
            if not os.path.exists(path) and not os.path.isabs(target):
                path = os.path.join(base_dir, target)
            try:
                inc_text = _read_job_text(path, budget)
            except UnicodeDecodeError:
                raise loc.error(f"included job file {target!r} is not UTF-8 text") from None
            except (OSError, ValueError) as exc:  # ValueError: not a regular file, too large, NUL in the name
                why = exc.strerror if isinstance(exc, OSError) else str(exc)
                raise loc.error(f"cannot read included job file {target!r}: {why}") from None
            if read is not None:
                read.append(path)
            _split_sections(
                inc_text,
                path,
                os.path.dirname(path) or ".",
                depth=depth + 1,
                into=current,
                budget=budget,
                read=read,
                subs=subs,
            )
            continue
        if current is None:
            raise loc.error(f"option <{line}> outside of a [section]: job files start with [global] or [jobname]")
        line = substitute(line, loc, subs)
        key, sep, value = line.partition("=")
        key = key.rstrip()
        if not key:
            raise loc.error(f"expected option=value, got {line!r}")
        current.entries.append(_Entry(key=key, value=value if sep else None, loc=loc))
    return sections


def _new_budget(used: int = 0) -> List[int]:
    """The bytes one RUN may still read (a one-element list that reads use up)."""
    return [MAX_JOB_FILE_BYTES - used]


def _read_job_text(path: str, budget: Optional[List[int]]) -> str:
    """Raises OSError, ValueError (not a regular file, too large) or UnicodeDecodeError."""
    left = MAX_JOB_FILE_BYTES if budget is None else max(0, budget[0])
    data = read_bounded(path, left, "fio job files (with their includes)", f"{__name__}.MAX_JOB_FILE_BYTES")
    if budget is not None:
        budget[0] -= len(data)
    return data.decode("utf-8")


def _read_text(path: str, loc: Optional[_Loc], budget: Optional[List[int]] = None) -> str:
    """A job file's text; ``budget`` holds the bytes that the RUN may still read (includes too)."""
    try:
        return _read_job_text(path, budget)
    except OSError as exc:
        reason = f"cannot read job file {path!r}: {exc.strerror}"
    except UnicodeDecodeError:
        reason = f"job file {path!r} is not UTF-8 text"
    except ValueError as exc:  # not a regular file, too large, or a NUL byte in the name
        reason = f"cannot read job file {path!r}: {exc}"
    if loc is not None:
        raise loc.error(reason)
    raise FioJobError(reason, source=path)


def _raw_global_options(sections: Sequence[_Section], start: Dict[str, Optional[str]]) -> Dict[str, Optional[str]]:
    out = dict(start)
    for sec in sections:
        if sec.is_global:
            for e in sec.entries:
                out[e.key] = e.value
    return out


def _looks_like_text(s: str) -> bool:
    return "\n" in s or s.lstrip().startswith("[")


# --------------------------------------------------------------------------------------------
# Building the job set
# --------------------------------------------------------------------------------------------


class _Builder:
    """Collects finished jobs, numbering them, their phases and groups as fio's add_job does."""

    def __init__(self, readonly: bool) -> None:
        self.jobs: List[FioJob] = []
        self.readonly = readonly
        self._thread = 1
        self._phase = 0
        self._groupid = 0
        self._jobs_in_group = 0

    def add(self, draft: _Draft, source: str, line: Optional[int]) -> None:
        job = self._finish(draft, source, line)
        clones = self._thread - 1 + job.numjobs
        if clones > MAX_JOBS:
            loc = draft.locs.get("numjobs", _Loc(source, line))
            raise loc.error(
                f"job {job.name!r}: {clones:,} job clones in this run (numjobs summed over its jobs) is more "
                f"than {MAX_JOBS:,}, the most jobs fio runs (its --max-jobs default)",
                "numjobs",
            )
        if job.stonewall and self.jobs:
            self._phase += 1
        if (job.stonewall or job.new_group) and self._jobs_in_group:
            self._groupid += 1
            self._jobs_in_group = 0
        self._jobs_in_group += job.numjobs
        job = dataclasses.replace(
            job, index=len(self.jobs), thread_number=self._thread, phase=self._phase, groupid=self._groupid
        )
        self._thread += job.numjobs
        self.jobs.append(job)

    def _finish(self, draft: _Draft, source: str, line: Optional[int]) -> FioJob:
        s = draft.job()

        def err(option: str, reason: str) -> FioJobError:
            loc = draft.locs.get(option)
            if loc is None:
                loc = _Loc(source, line)
            return loc.error(f"job {s.name!r}: {reason}", option)

        if s.rw in _TRIM_KINDS:
            raise err("rw", f"rw={s.rw}: trim workloads are not supported by the simulator (reads and writes only)")
        if s.ioengine not in SYNC_ENGINES and s.ioengine not in ASYNC_ENGINES:
            raise err(
                "ioengine",
                f"ioengine={s.ioengine} does not issue block I/O the simulator models; use a synchronous "
                f"engine ({', '.join(SYNC_ENGINES)}) or an asynchronous one ({', '.join(ASYNC_ENGINES)})",
            )
        io_size = s.io_size
        if draft.io_size_percent is not None:
            # fio's HOWTO: "io_size=N%" multiplies size.
            if s.size is None:
                raise err(
                    "io_size",
                    f"io_size={draft.io_size_percent:g}% is a percentage of size, which is not known in bytes "
                    f"here; give size in bytes or io_size in bytes",
                )
            io_size = int(s.size * draft.io_size_percent / 100.0)
        if s.time_based and s.runtime is None:
            raise err(
                "time_based",
                "time_based is set but runtime is not: fio would run until stopped; set runtime",
            )
        if self.readonly and s.rw not in ("read", "randread"):
            raise err("rw", f"rw={s.rw} writes, but the command line has --readonly (fio refuses this job too)")
        bare_logs: Dict[str, Any] = {option: s.name for option in draft.bare_logs}
        return dataclasses.replace(
            s,
            sync_engine=s.ioengine in SYNC_ENGINES,
            io_size=io_size,
            options=dict(draft.options),
            job_options=dict(draft.job_options),
            unmodelled=tuple(draft.unmodelled),
            source=source,
            line=line,
            **bare_logs,
        )


def _run_sections(
    sections: Sequence[_Section],
    globals_: _Draft,
    builder: _Builder,
    *,
    stonewall_first: bool,
    only: Optional[Sequence[str]] = None,
) -> _Draft:
    """Jobs of one job file, added to ``builder``; returns the global state at the end."""
    for sec in sections:
        if only and not sec.is_global and sec.name not in only:
            continue
        if sec.is_global:
            for e in _order_for_file(sec.entries):
                _apply(globals_, e, in_global=True)
            continue
        job = globals_.for_job(sec.name)
        if stonewall_first:
            # fio: "Separate multiple job files by a stonewall" (init.c __parse_jobs_ini).
            job.set(stonewall=True)
            stonewall_first = False
        for e in _order_for_file(sec.entries):
            _apply(job, e, in_global=False)
        builder.add(job, sec.loc.source, sec.loc.line)
    return globals_


def parse_job_file(
    path_or_text: PathLike,
    *,
    source: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
    keywords: Optional[Mapping[str, int]] = None,
) -> FioJobSet:
    """Parse a fio job file.

    Parameters
    ----------
    path_or_text : str or os.PathLike
        A path to a job file, or the text of one (a string containing a newline or starting
        with ``[``).
    source : str, optional
        Name used in messages and in :attr:`FioJob.source`; default: the path, or
        ``"<job file>"`` for text.
    environ : mapping of str to str, optional
        The environment ``${VAR}`` is read from (default: this process's, ``os.environ``).
    keywords : mapping of str to int, optional
        Values of fio's ``$pagesize``, ``$mb_memory`` and ``$ncpus`` (keys without the ``$``;
        those not given are this machine's, :func:`ebssim.fio.substitution.machine_keywords`), to
        read a job file as another machine's fio would.

    Returns
    -------
    FioJobSet

    Raises
    ------
    FioJobError
        For anything fio would reject or the simulator cannot represent; the message names the
        file, the line, the option and what was expected.

    Notes
    -----
    Follows fio 3.33: ``[global]`` sections (any section whose name starts with ``global``) set
    defaults for the jobs after them, and a later ``[global]`` changes them for later jobs only;
    ``key=value`` lines, bare flags (``time_based``), ``;`` and ``#`` comments, ``include FILE``,
    ``${VAR}`` and the keywords ``$pagesize``, ``$mb_memory``, ``$ncpus`` with their ``bc``
    arithmetic (:mod:`ebssim.fio.substitution`; a variable that is not set is an error).

    Examples
    --------
    >>> jobs = parse_job_file("[global]\\nbs=16k\\n[a]\\nrw=randread\\n[b]\\nstonewall\\nrw=write\\n")
    >>> [(j.name, j.rw, j.bs, j.phase) for j in jobs]
    [('a', 'randread', 16384, 0), ('b', 'write', 16384, 1)]
    """
    budget = _new_budget()
    if isinstance(path_or_text, str) and _looks_like_text(path_or_text):
        text = path_or_text
        budget[0] -= len(text)
        name = source or "<job file>"
        base_dir = "."
        files: Tuple[str, ...] = ()
    else:
        path = os.fspath(path_or_text)
        name = source or path
        text = _read_text(path, None, budget)
        base_dir = os.path.dirname(path) or "."
        files = (path,)
    read = list(files)
    subs = Substitution(environ, keywords)
    sections = _split_sections(text, name, base_dir, budget=budget, read=read, subs=subs)
    builder = _Builder(readonly=False)
    _run_sections(sections, _Draft(), builder, stonewall_first=False)
    if not builder.jobs:
        raise FioJobError("no jobs defined: a job file needs at least one [jobname] section", source=name)
    return FioJobSet(
        jobs=tuple(builder.jobs),
        source=name,
        job_files=files,
        input_files=tuple(read),
        global_options=_raw_global_options(sections, {}),
    )
