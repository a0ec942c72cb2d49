"""fio command lines: an argv (or a shell-split string starting with ``fio``) turned into jobs as fio
3.33 reads it, with ``--name`` starting jobs and options before it global, fio's own options
(``--output``, ``--section``, ``--readonly``, ...) recorded or enforced and the options that make fio
do something other than run refused, positional job files parsed after the command-line jobs, and
every error naming the argument; plus :func:`parse_run`, one ``RUN`` of ``ebssim fio``: a command line
or a job file.
"""

from __future__ import annotations

import os
import shlex
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._files import PathLike
from .job import FioJobError, FioJobSet, _Loc
from .jobfile import (
    _Builder,
    _looks_like_text,
    _new_budget,
    _raw_global_options,
    _read_text,
    _run_sections,
    _split_sections,
    parse_job_file,
)
from .options import (
    _BOOL_OPTIONS,
    _CMD_ACCEPTED,
    _CMD_NOT_A_RUN,
    _FLAG_OPTIONS,
    _JOB_OPTIONS,
    _apply,
    _canonical,
    _Draft,
    _Entry,
    _unknown_option,
)
from .substitution import Substitution

__all__ = ["parse_command_line", "parse_run"]

_CMDLINE = "fio command line"


def _is_fio(word: str) -> bool:
    return os.path.basename(word) == "fio"


def _take_value(argv: Sequence[str], i: int, value: Optional[str], loc: _Loc, name: str) -> Tuple[str, int]:
    """The value of ``--name=value``, or of ``--name value`` (then the next argument is used up).

    fio's getopt would take the next argument even when it is another option; ebssim refuses that
    (``--write_iops_log --bs=4k`` would name a log "--bs=4k" and drop the block size).
    """
    if value is not None:
        return value, i
    if i < len(argv) and not (argv[i].startswith("-") and len(argv[i]) > 1):
        return argv[i], i + 1
    example = "1" if _canonical(name) in _BOOL_OPTIONS else "VALUE"
    raise loc.error(f"--{name} needs a value: write --{name}={example}", name)


def parse_command_line(
    cmd: Union[str, Sequence[str]],
    *,
    cwd: Optional[PathLike] = None,
    environ: Optional[Mapping[str, str]] = None,
    keywords: Optional[Mapping[str, int]] = None,
) -> FioJobSet:
    """Parse a fio command line.

    Parameters
    ----------
    cmd : str or sequence of str
        ``"fio --name=a --rw=randread ... [jobfile ...]"`` (split like a shell would), or an
        argv list with or without ``"fio"`` first.
    cwd : str or os.PathLike, optional
        Directory that relative job file paths are relative to; default: the current directory.
    environ, keywords : mapping, optional
        For the job files it names, as :func:`~ebssim.fio.parse_job_file` takes them (fio
        substitutes ``${VAR}`` and ``$ncpus``-like keywords in job files, not in command-line
        options).

    Returns
    -------
    FioJobSet

    Raises
    ------
    FioJobError
        The message names the argument, the option and what was expected.

    Notes
    -----
    As fio 3.33 does (checked by running it):

    * ``--name=X`` starts job X; options before the first ``--name`` are global, and
      ``--name=global`` returns to the globals. Options after ``--name=X`` belong to X, even when
      a job file comes between them.
    * ``--opt=value`` or ``--opt value``; flags such as ``--time_based`` take no separate value
      (``--time_based=1`` works). A single dash (``-name=x``) works too.
    * Positional arguments are job files. Command-line jobs run first, then the job files' jobs
      in order; the first job file sees the command-line globals, later ones start from fio's
      defaults, and each later file's first job has an implicit stonewall.
    * fio's own options (``--output``, ``--output-format``, ``--eta``, ``--status-interval``,
      ``--minimal``, ...) are recorded in :attr:`FioJobSet.fio_options`. ``--section`` selects
      sections of the first job file, ``--readonly`` refuses jobs that write.

    Examples
    --------
    >>> jobs = parse_command_line("fio --ioengine=libaio --name=a --iodepth=8 --name=b --numjobs=2")
    >>> [(j.name, j.ioengine, j.effective_depth, j.numjobs) for j in jobs]
    [('a', 'libaio', 8, 1), ('b', 'libaio', 1, 2)]
    """
    if isinstance(cmd, str):
        text = cmd
        try:
            argv = shlex.split(cmd)
        except ValueError as exc:
            raise FioJobError(f"cannot split the command line: {exc}", source=_CMDLINE) from None
        if not argv or not _is_fio(argv[0]):
            first = argv[0] if argv else ""
            raise FioJobError(
                f"a fio command line must begin with 'fio', not {first!r}: expected e.g. "
                f"'fio --name=job --rw=randread --bs=4k --filename=/dev/nvme1n1'",
                source=_CMDLINE,
            )
        argv = argv[1:]
    else:
        argv = [str(a) for a in cmd]
        if argv and _is_fio(argv[0]):
            argv = argv[1:]
        text = " ".join(shlex.quote(a) for a in ["fio", *argv])
    base = os.fspath(cwd) if cwd is not None else None

    globals_ = _Draft()
    current: Optional[_Draft] = None
    builder_jobs: List[_Draft] = []
    files: List[Tuple[str, _Loc]] = []
    fio_options: Dict[str, Optional[str]] = {}
    sections_only: List[str] = []
    global_raw: Dict[str, Optional[str]] = {}

    i = 0
    only_positional = False
    while i < len(argv):
        arg = argv[i]
        index = i + 1
        loc = _Loc(_CMDLINE, argument=arg, index=index)
        i += 1
        if only_positional or arg == "-" or not arg.startswith("-"):
            if arg == "-":
                raise loc.error("reading a job file from standard input ('-') is not supported")
            files.append((arg, loc))
            continue
        if arg == "--":
            only_positional = True
            continue
        body = arg[2:] if arg.startswith("--") else arg[1:]
        key, eq, value_part = body.partition("=")
        value: Optional[str] = value_part if eq else None
        if not key:
            raise loc.error(f"expected --option or --option=value, got {arg!r}")

        if key in _CMD_NOT_A_RUN:
            raise loc.error(f"--{key} {_CMD_NOT_A_RUN[key]}; it is not a run ebssim can simulate", key)
        if key in _CMD_ACCEPTED:
            if _CMD_ACCEPTED[key]:
                v: Optional[str]
                v, i = _take_value(argv, i, value, loc, key)
            else:
                if value is not None:
                    raise loc.error(f"--{key} takes no value", key)
                v = None
            if key == "section":
                assert v is not None
                sections_only.append(v)
            fio_options[key] = v
            continue

        canon = _canonical(key)
        if canon == "name":
            name, i = _take_value(argv, i, value, loc, "name")
            if not name:
                raise loc.error("--name needs a job name: write --name=JOB", "name")
            if current is not None:
                builder_jobs.append(current)
                current = None
            if name.startswith("global"):
                continue  # `--name=global`: what follows is global again
            current = globals_.for_job(name)
            current.job_options["name"] = name
            continue
        if canon in _FLAG_OPTIONS:
            # fio's getopt table: flags never consume the next argument.
            entry_value: Optional[str] = value
        elif canon in _JOB_OPTIONS:
            entry_value, i = _take_value(argv, i, value, loc, key)
        else:
            raise _unknown_option(key, loc)
        entry = _Entry(key=key, value=entry_value, loc=loc)
        if current is not None:
            _apply(current, entry, in_global=False)
        else:
            _apply(globals_, entry, in_global=True)
            global_raw[key] = entry_value
    if current is not None:
        builder_jobs.append(current)

    builder = _Builder(readonly="readonly" in fio_options)
    for state in builder_jobs:
        builder.add(state, _CMDLINE, None)
    job_files: List[str] = []
    read: List[str] = []
    budget = _new_budget()
    subs = Substitution(environ, keywords)
    for n, (path, floc) in enumerate(files):
        full = path if base is None or os.path.isabs(path) else os.path.join(base, path)
        file_text = _read_text(full, floc, budget)
        read.append(full)
        sections = _split_sections(file_text, path, os.path.dirname(full) or ".", budget=budget, read=read, subs=subs)
        # fio resets the globals before every job file after the first (parse_options ->
        # fill_def_thread), and --section only filters the first file (fio 3.33, run).
        start = globals_ if n == 0 else _Draft()
        _run_sections(
            sections,
            start,
            builder,
            stonewall_first=n > 0,
            only=sections_only if n == 0 else None,
        )
        global_raw = _raw_global_options(sections, global_raw if n == 0 else {})
        job_files.append(path)
    if not builder.jobs:
        raise FioJobError(
            "no jobs defined: give --name=JOB (options before the first --name are global) or a job file",
            source=_CMDLINE,
        )
    return FioJobSet(
        jobs=tuple(builder.jobs),
        source=text,
        job_files=tuple(job_files),
        input_files=tuple(read),
        fio_options=fio_options,
        global_options=global_raw,
    )


def parse_run(
    run: Union[str, PathLike],
    *,
    cwd: Optional[PathLike] = None,
    environ: Optional[Mapping[str, str]] = None,
    keywords: Optional[Mapping[str, int]] = None,
) -> FioJobSet:
    """Parse one ``RUN`` of ``ebssim fio``: a command line starting with ``fio`` or a job file.

    Parameters
    ----------
    run : str or os.PathLike
        ``"fio --name=..."`` or the path of a job file.
    cwd : str or os.PathLike, optional
        Directory for relative paths; default: the current directory.
    environ, keywords : mapping, optional
        What job files substitute for ``${VAR}`` and fio's keywords (:func:`~ebssim.fio.parse_job_file`).

    Returns
    -------
    FioJobSet
    """
    if isinstance(run, str):
        stripped = run.strip()
        if stripped == "fio" or stripped.startswith(("fio ", "fio\t")):
            return parse_command_line(stripped, cwd=cwd, environ=environ, keywords=keywords)
        if cwd is not None and not os.path.isabs(run) and not _looks_like_text(run):
            return parse_job_file(os.path.join(os.fspath(cwd), run), source=run, environ=environ, keywords=keywords)
    return parse_job_file(run, environ=environ, keywords=keywords)
