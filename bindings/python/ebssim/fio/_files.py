"""Reading input files with a size limit, refusing devices, FIFOs and directories.

Job files and fio outputs come from users and from the internet: ``/dev/zero`` would be read
forever and a FIFO would block ``open`` until a writer appears, so both are refused before a
byte is read, and a regular file is read only up to its limit.
"""

from __future__ import annotations

import os
import stat


def read_bounded(path: str, limit: int, what: str, limit_name: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises
    ------
    ValueError
        ``path`` is not a regular file, or holds more than ``limit`` bytes; the message names the
        file, its size and the limit (``limit_name``, the public constant that holds it).
    OSError
        The file cannot be opened or read.
    """
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
            raise ValueError(f"{path}: is {kind}, not a regular file: expected {what}")
        too_big = (
            f"{path}: holds more than {limit:,} bytes, the limit for {what} ({limit_name}); "
            f"split the file, or raise {limit_name} if it really is that large"
        )
        if st.st_size > limit:
            raise ValueError(too_big)
        chunks = []
        left = limit + 1  # the file may have grown since fstat
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ValueError(too_big)
    return data
