"""Output paths that must not be inputs: one rule for every command that writes files.

A report written over the job file it was made from, or a log written over its own job file,
loses the user's data. Paths are compared as the files they name (device and inode), so that a
symbolic link, a hard link or another spelling of an input is caught; a path that does not exist
yet cannot be an input.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any, Iterable, Optional, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["check_output", "check_stdout", "input_at"]


def _identity(path: PathLike) -> Optional[Tuple[int, int]]:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # no such file (yet), or a name no file can have (NUL)
        return None
    return st.st_dev, st.st_ino


def input_at(path: PathLike, inputs: Iterable[PathLike]) -> Optional[str]:
    """The input that ``path`` names (same device and inode), or None.

    Parameters
    ----------
    path : str or os.PathLike
        A file about to be written.
    inputs : iterable of str or os.PathLike
        The files read.
    """
    ident = _identity(path)
    if ident is None:
        return None
    for p in inputs:
        if _identity(p) == ident:
            return os.fspath(p)
    return None


def check_output(option: str, path: PathLike, inputs: Iterable[PathLike]) -> None:
    """Refuse to write ``path`` (given as ``option``) when it is one of ``inputs``.

    Call it before anything is written.

    Raises
    ------
    ValueError
        ``path`` is an input; the message names the option, the path and the input.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> job = pathlib.Path(tempfile.mkdtemp()) / "job.fio"
    >>> _ = job.write_text("[a]\\n")
    >>> os.symlink(job, job.with_name("report.txt"))
    >>> check_output("--output", job.with_name("report.txt"), [job])
    Traceback (most recent call last):
    ...
    ValueError: --output '.../report.txt' is the input '.../job.fio' (the same file): writing it would overwrite it; ...
    >>> check_output("--output", job.with_name("new.txt"), [job])  # does not exist yet: fine
    """
    found = input_at(path, inputs)
    if found is not None:
        same = "" if os.fspath(path) == found else " (the same file)"
        raise ValueError(
            f"{option} {os.fspath(path)!r} is the input {found!r}{same}: writing it would overwrite it; "
            f"choose another path"
        )


def check_stdout(stream: Any = None) -> None:
    """Refuse to write a report to standard output when it is a file the command has read.

    ``ebssim fit run.json >> run.json`` would append the report to its own input, as
    ``cat x >> x`` would ("input file is output"). Standard output is compared (device and
    inode) with the files the readers noted inside :func:`ebssim._files.tracking`, which the
    command line turns on. A terminal, a pipe or a new file is never an input. (With ``>``
    the shell has emptied the file before ebssim starts; the job then reads an empty input.)

    Raises
    ------
    ValueError
        Standard output is a regular file that the command read.
    """
    from ._files import files_read

    stream = sys.stdout if stream is None else stream
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):  # not a file descriptor (a notebook, StringIO)
        return
    if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) in files_read():
        raise ValueError(
            "standard output is one of the input files: writing the report would append it to that input; "
            "redirect the output to another file"
        )
