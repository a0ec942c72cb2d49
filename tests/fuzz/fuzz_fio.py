"""atheris fuzz targets for ebssim's fio front end: job files, command lines, the readers, predict.

Usage (``make fuzz`` runs every target through tests/fuzz/run.py)::

    python tests/fuzz/fuzz_fio.py TARGET [libFuzzer options] [CORPUS_DIR ...]

A target fails only when the code under test raises something other than ValueError or OSError
(FioJobError is a ValueError), or emits a warning other than the documented
:class:`ebssim.fio.FioLogOrderWarning`: every other warning is turned into an error, so that a
numpy overflow or a pandas deprecation shows up as a finding too. Hangs are found by libFuzzer's
``-timeout``, runaway memory by ``-rss_limit_mb``.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Callable, Dict, List

import atheris
import harness

with atheris.instrument_imports(include=["ebssim"]):
    import ebssim
    import ebssim.fio.cost as fio_cost
    from ebssim.fio import (
        FioLogOrderWarning,
        parse_command_line,
        parse_job_file,
        parse_volume_spec,
        predict,
        read_hist_log,
        read_json,
        read_log,
        read_normal,
    )

EXPECTED = (ValueError, OSError)

# Inputs are written to files (the readers' real entry point) in one private directory.
WORKDIR = tempfile.mkdtemp(prefix="ebssim-fuzz-")


def _file(name: str, data: bytes) -> str:
    path = os.path.join(WORKDIR, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _call(fn: Callable[[], object]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", FioLogOrderWarning)
        try:
            fn()
        except EXPECTED:
            pass


def fuzz_jobfile(data: bytes) -> None:
    path = _file("job.fio", data)
    _call(lambda: parse_job_file(path))


def fuzz_cmdline(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    form = fdp.ConsumeIntInRange(0, 2)
    if form == 0:  # one string, split like a shell would
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
        _call(lambda: parse_command_line("fio " + text, cwd=WORKDIR))
    elif form == 1:  # an argv list
        argv: List[str] = []
        while fdp.remaining_bytes() and len(argv) < 16:
            argv.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 64)))
        _call(lambda: parse_command_line(argv, cwd=WORKDIR))
    else:  # ebssim fio's --volume TARGET=SPEC
        spec = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
        _call(lambda: parse_volume_spec(spec))


def fuzz_json(data: bytes) -> None:
    path = _file("out.json", data)
    _call(lambda: read_json(path))


def fuzz_normal(data: bytes) -> None:
    path = _file("out.txt", data)
    _call(lambda: read_normal(path))


def fuzz_log(data: bytes) -> None:
    path = _file("f_lat.1.log", data)
    _call(lambda: read_log(path))


def fuzz_hist(data: bytes) -> None:
    path = _file("f_clat_hist.1.log", data)
    _call(lambda: read_hist_log(path))


# predict: a small work limit keeps each input fast; what it refuses is a ValueError too.
fio_cost.MAX_JOB_STEPS = 20_000
fio_cost.MAX_VOLUME_STEPS = 200_000
fio_cost.MAX_JOB_EVENTS = 5_000
VOLUMES = {"/": ebssim.gp3(100), "/dev/nvme1n1": ebssim.gp2(100)}


def fuzz_predict(data: bytes) -> None:
    path = _file("run.fio", data)
    _call(lambda: predict([path], VOLUMES, log_dir=None))


TARGETS: Dict[str, Callable[[bytes], None]] = {
    "jobfile": fuzz_jobfile,
    "cmdline": fuzz_cmdline,
    "json": fuzz_json,
    "normal": fuzz_normal,
    "log": fuzz_log,
    "hist": fuzz_hist,
    "predict": fuzz_predict,
}


if __name__ == "__main__":
    harness.main(TARGETS)
