"""Reading the package's input files: bounded, and nesting-limited where they are JSON or YAML.

Every file the package reads (fio's job files, outputs and logs; AWS CLI JSON and CSV; Kubernetes
manifests; instance catalogs) comes from users and from the internet. So, in one place:

- :func:`read_bounded` refuses devices, FIFOs and directories before a byte is read
  (``/dev/zero`` would be read forever, and opening a FIFO would block until a writer appears),
  and reads a regular file only up to its limit, named in the message by the public constant
  that holds it, with the way out;
- :func:`read_text` decodes it as UTF-8, or names the file and the first byte that is not;
- :func:`load_json` and :func:`load_yaml_all` refuse documents nested more than
  :data:`MAX_NESTING` levels deep (the decoders recurse once per level, so a file of 100,000
  ``[`` would exhaust the stack), and turn every error of the decoders into a ValueError naming
  the file, the line and what is wrong;
- :func:`tracking` notes the files read while a command line runs, so that its report is never
  written over one of them (``ebssim._outputs``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from typing import Any, Iterator, List, Optional, Set, Tuple, Union

#: A file name, as the readers take it.
PathLike = Union[str, "os.PathLike[str]"]

#: Deepest nesting of arrays and objects (JSON) or of sequences and mappings (YAML) any reader
#: accepts. AWS CLI output nests at most about 8 levels and Kubernetes manifests about 10; the
#: decoders recurse once per level, so without a limit a deep enough file exhausts the stack.
MAX_NESTING = 100

_NESTING_NAME = f"{__name__}.MAX_NESTING"


def shown(value: Any) -> str:
    """``repr(value)`` for a message, cut to 40 characters (a fuzzed number may have thousands of
    digits, and Python refuses to print an integer of more than 4,300)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**40:
        return f"an integer of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4,000'} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# The files a command line has read (device, inode), while tracking() is on: the command refuses
# to write its report to standard output when that is one of them (_outputs.check_stdout).
_read_files: Optional[Set[Tuple[int, int]]] = None


@contextlib.contextmanager
def tracking() -> Iterator[Set[Tuple[int, int]]]:
    """Note every file the readers open (device and inode) until the block ends.

    The command line runs each command inside it, so that a report is never written over an
    input through standard output (``ebssim fit run.json >> run.json``). Off otherwise: a
    notebook that reads a million files keeps no list of them.
    """
    global _read_files
    outer, _read_files = _read_files, set()
    try:
        yield _read_files
    finally:
        _read_files = outer


def files_read() -> Set[Tuple[int, int]]:
    """The files noted by the innermost :func:`tracking` block (empty outside one)."""
    return set() if _read_files is None else set(_read_files)


def _open_regular(path: str, what: str) -> Tuple[int, os.stat_result]:
    """A descriptor of the regular file ``path`` and its status; a ValueError for anything else.

    Opened without blocking: opening a FIFO for reading would otherwise wait for a writer, and
    ``/dev/zero`` would be read forever, so both are refused before a byte is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except ValueError:  # os.open's own message names neither the file nor the input
        raise ValueError(f"{path!r}: a file name cannot hold a NUL byte (expected {what})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
            raise ValueError(f"{path}: is {kind}, not a regular file: expected {what}")
    except BaseException:
        os.close(fd)
        raise
    if _read_files is not None:
        _read_files.add((st.st_dev, st.st_ino))
    return fd, st


def _read_up_to(fd: int, n: int, size: int = 0) -> bytes:
    """At most ``n`` bytes of ``fd``: the first read asks for the ``size`` the file is said to
    have and one byte more, so that a file read whole is one bytes object (no copy to join)."""
    chunks = []
    left = n
    want = max(size + 1, 1 << 20)
    while left > 0:
        chunk = os.read(fd, min(left, want))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        want = 1 << 20
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_bounded(path: str, limit: int, what: str, limit_name: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises
    ------
    ValueError
        ``path`` is not a regular file, or holds more than ``limit`` bytes; the message names the
        file, its size and the limit (``limit_name``, the public constant that holds it). Also a
        file name holding a NUL byte.
    OSError
        The file cannot be opened or read.
    """
    fd, st = _open_regular(path, what)
    try:
        if st.st_size > limit:
            raise ValueError(_too_big(path, limit, what, limit_name))
        data = _read_up_to(fd, limit + 1, st.st_size)  # the file may have grown since fstat
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(_too_big(path, limit, what, limit_name))
    return data


def _too_big(path: str, limit: int, what: str, limit_name: str) -> str:
    """The message for a file of more than ``limit`` bytes (:func:`read_bounded`, :func:`head_bounded`)."""
    return (
        f"{path}: holds more than {limit:,} bytes, the limit for {what} ({limit_name}); "
        f"split the file, or raise {limit_name} if it really is that large"
    )


def head_bounded(path: str, limit: int, what: str, limit_name: str, n: int) -> bytes:
    """The first ``n`` bytes (or fewer) of the regular file ``path``, refused as
    :func:`read_bounded` refuses it (not a regular file, more than ``limit`` bytes): for readers
    that hand the file itself to a parser and look only at its first line."""
    fd, st = _open_regular(path, what)
    try:
        if st.st_size > limit:
            raise ValueError(_too_big(path, limit, what, limit_name))
        return _read_up_to(fd, n)
    finally:
        os.close(fd)


def read_head(path: str, n: int, what: str) -> bytes:
    """The first ``n`` bytes (or fewer) of the regular file ``path``, to tell what kind of file
    it is; refused as :func:`read_bounded` refuses anything but a regular file."""
    fd, _ = _open_regular(path, what)
    try:
        return _read_up_to(fd, n)
    finally:
        os.close(fd)


def decode(data: bytes, where: str, what: str) -> str:
    """``data`` as UTF-8 text, or a ValueError naming ``where``, the line and the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise ValueError(
                f"{where}: is UTF-16 text (as PowerShell's > writes it), not UTF-8: expected {what}; "
                f"convert it to UTF-8 (e.g. Out-File -Encoding utf8)"
            ) from None
        line = data.count(b"\n", 0, e.start) + 1
        raise ValueError(
            f"{where}, line {line}: byte 0x{data[e.start]:02x} is not UTF-8 text: expected {what}"
        ) from None


def read_text(path: str, limit: int, what: str, limit_name: str) -> str:
    """The UTF-8 text of the regular file ``path`` (see :func:`read_bounded`).

    Raises
    ------
    ValueError
        As :func:`read_bounded`, or the file is not UTF-8 text.
    """
    return decode(read_bounded(path, limit, what, limit_name), path, what)


# --- JSON --------------------------------------------------------------------------------------

# What the nesting check keeps of a JSON text: quotes and brackets (bytes.translate is C speed;
# none of these bytes occurs inside a multi-byte UTF-8 sequence).
_DROP = bytes(b for b in range(256) if b not in b'"[]{}')
_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _json_depth_exceeded(data: bytes) -> bool:
    """Whether the brackets outside strings of a JSON text nest more than MAX_NESTING deep.

    A few C-speed passes over the bytes and, only for a text with more brackets than the limit,
    numpy passes over its quotes and brackets (a tenth of the time json.loads takes).
    """
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return False
    import numpy as np

    # Escapes go first, left to right as JSON reads them (an escaped backslash, then an escaped
    # quote), so that every quote left opens or closes a string; the other backslashes are
    # inside strings and change nothing.
    skeleton = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP)
    level, parity = 0, 0
    step = 1 << 24  # bounded memory, however large the text
    for start in range(0, len(skeleton), step):
        s = np.frombuffer(skeleton, dtype=np.uint8, count=min(step, len(skeleton) - start), offset=start)
        quote = s == ord('"')
        # quotes so far, mod 2 (the uint8 sum wraps, which keeps its parity): odd inside a string
        inside = (np.cumsum(quote, dtype=np.uint8) + parity) & 1
        parity = int(inside[-1])
        b = s[(inside == 0) & ~quote]
        if b.size:
            depth = level + np.cumsum(np.where((b == ord("[")) | (b == ord("{")), 1, -1), dtype=np.int64)
            if int(depth.max()) > MAX_NESTING:
                return True
            level = int(depth[-1])
    return False


def _nesting_error(text: str, where: str, what: str) -> ValueError:
    """The error for a JSON text nested too deep, with the line and column where it goes past the
    limit (a slower scan, made only once the document is known to be too deep)."""
    level, pos = 0, 0
    for m in _TOKEN_RE.finditer(text):
        c = m.group()
        if c in "[{":
            level += 1
            if level > MAX_NESTING:
                pos = m.start()
                break
        elif c in "]}":
            level -= 1
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return ValueError(
        f"{where}, line {line}, column {column}: arrays and objects nested more than {MAX_NESTING} levels deep, "
        f"the limit ({_NESTING_NAME}); {what} nests far less"
    )


def load_json(text: Union[str, bytes], where: str, what: str) -> Any:
    """The JSON document ``text``, nested at most :data:`MAX_NESTING` deep.

    ``where`` names the file in messages and ``what`` the input expected ("the output of aws ec2
    describe-volumes"). Bytes are decoded as UTF-8 first; a leading byte order mark is skipped.

    Raises
    ------
    ValueError
        Not JSON (the message names ``where``, the line and column and the decoder's reason),
        nested too deep, or (bytes) not UTF-8.

    >>> load_json('{"Volumes": []}', "v.json", "describe-volumes output")
    {'Volumes': []}
    >>> load_json('{"Volumes": ' + "[" * 1000, "v.json", "describe-volumes output")
    Traceback (most recent call last):
    ...
    ValueError: v.json, line 1, column 112: ... more than 100 levels deep, the limit (ebssim._files.MAX_NESTING); ...
    """
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    s = decode(text, where, what) if isinstance(text, bytes) else text
    s = s[1:] if s.startswith("\ufeff") else s
    if _json_depth_exceeded(data):
        raise _nesting_error(s, where, what)
    try:
        return json.loads(s)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{where}: not valid JSON at line {e.lineno}, column {e.colno} ({e.msg}); expected {what}"
        ) from None
    except RecursionError:  # not reached when the check above is right; a ValueError all the same
        raise _nesting_error(s, where, what) from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        raise ValueError(f"{where}: not valid JSON ({e}); expected {what}") from None


def read_json(path: str, limit: int, what: str, limit_name: str) -> Any:
    """The JSON document in the regular file ``path`` (:func:`read_bounded`, :func:`load_json`)."""
    return load_json(read_bounded(path, limit, what, limit_name), path, what)


# --- YAML --------------------------------------------------------------------------------------


class _TooDeep(Exception):
    """Raised by the loader's composer past MAX_NESTING, with where it happened."""

    def __init__(self, mark: Any) -> None:
        super().__init__()
        self.mark = mark


def _yaml_loader() -> Any:
    """The loader class: PyYAML's safe constructor and resolver on libyaml's parser (PyYAML's
    own parser where it was built without libyaml), with PyYAML's Python composer counting depth.

    The composer is the only part of loading that recurses once per level of nesting (libyaml's
    own composer recurses without a limit, hence PyYAML's), so counting there bounds the whole
    load; libyaml's parser keeps its speed (about four times PyYAML's).
    """
    from yaml.composer import Composer
    from yaml.constructor import SafeConstructor
    from yaml.events import AliasEvent, ScalarEvent
    from yaml.resolver import Resolver

    parser: Any
    try:
        from yaml._yaml import CParser as parser
    except ImportError:  # pragma: no cover - PyYAML without libyaml
        from yaml.parser import Parser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        class parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
            def __init__(self, stream: str) -> None:
                Reader.__init__(self, stream)
                Scanner.__init__(self)
                Parser.__init__(self)

    class Loader(Composer, parser, SafeConstructor, Resolver):  # type: ignore[misc]
        depth = 0
        node: Any = None  # the node being constructed, for messages

        def __init__(self, stream: str) -> None:
            parser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            try:
                # Levels of collections, as load_json counts brackets: a scalar inside the 100th is fine.
                if self.depth > MAX_NESTING and not self.check_event(ScalarEvent, AliasEvent):
                    raise _TooDeep(self.peek_event().start_mark)
                return Composer.compose_node(self, parent, index)
            finally:
                self.depth -= 1

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            self.node = node
            return SafeConstructor.construct_object(self, node, deep)

    return Loader


_LOADER: Optional[Any] = None


def _at(mark: Any) -> str:
    return f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _too_deep(where: str, mark: Any, what: str) -> ValueError:
    return ValueError(
        f"{where}{_at(mark)}: sequences and mappings nested more than {MAX_NESTING} levels deep, the limit "
        f"({_NESTING_NAME}); {what} nest far less"
    )


def _short_tag(tag: Any) -> str:
    t = str(tag)
    return "!!" + t[len("tag:yaml.org,2002:") :] if t.startswith("tag:yaml.org,2002:") else t


def load_yaml_all(text: str, where: str, what: str) -> List[Any]:
    """Every document of the YAML text, with YAML's safe types, nested at most :data:`MAX_NESTING`.

    ``where`` names the file in messages, ``what`` the input expected ("Kubernetes manifests").

    Raises
    ------
    ValueError
        Not YAML, a value its tag does not fit (``!!int x``, ``!!timestamp x``, a date such as
        2024-13-01), or nested too deep; the message names ``where``, the line and column, and
        what is wrong.
    """
    import yaml

    global _LOADER
    if _LOADER is None:
        _LOADER = _yaml_loader()
    try:
        loader = _LOADER(text)
    except ValueError as e:  # libyaml encodes the text: a lone surrogate in a str
        raise ValueError(f"{where}: not YAML text ({e}); expected {what}") from None
    docs: List[Any] = []
    try:
        while loader.check_data():
            docs.append(loader.get_data())
    except _TooDeep as e:
        raise _too_deep(where, e.mark, what) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        if "maximum nesting depth" in str(e.problem):  # libyaml's own limit (1,000), past ours
            raise _too_deep(where, mark, what) from None
        reason = "; ".join(str(x) for x in (e.context, e.problem) if x)
        raise ValueError(f"{where}{_at(mark)}: not valid YAML ({' '.join(reason.split())}); expected {what}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{where}: not valid YAML ({' '.join(str(e).split())}); expected {what}") from None
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, OverflowError) as e:
        # A scalar its tag's constructor cannot read: PyYAML lets int(), datetime() and its own
        # regular expressions fail as they may (IndexError for "!!int", AttributeError for
        # "!!timestamp x"). Name the value, its tag and where it is.
        node = loader.node
        if node is None:
            raise ValueError(f"{where}: not valid YAML ({e}); expected {what}") from None
        value = node.value if isinstance(node.value, str) else None
        shown = "an empty value" if value == "" else repr(value[:80]) if value is not None else "a value"
        detail = f" ({e})" if isinstance(e, ValueError) else ""
        raise ValueError(
            f"{where}{_at(node.start_mark)}: {shown} is not a valid {_short_tag(node.tag)}{detail}; expected {what}"
        ) from None
    finally:
        loader.dispose()
    return docs


def read_yaml_all(path: str, limit: int, what: str, limit_name: str) -> List[Any]:
    """Every YAML document in the regular file ``path`` (:func:`read_text`, :func:`load_yaml_all`)."""
    return load_yaml_all(read_text(path, limit, what, limit_name), path, what)
