"""fio in ebssim: parse job files and command lines, read real fio output into pandas, and
predict what fio would report on simulated EBS volumes.

- :func:`parse_run`, :func:`parse_job_file`, :func:`parse_command_line`: fio jobs as
  :class:`FioJob` objects with fio's defaults and semantics resolved.
- :func:`read_json`, :func:`read_normal`, :func:`read_log`, :func:`read_logs`, :func:`read_hist_log`:
  fio's JSON/JSON+, its normal (text) output of fio 2.x and 3.x (every run pasted in a text),
  iops/bw/lat/clat/slat logs and clat histogram logs, with units normalised and named.
- :func:`predict`: fio runs simulated back to back on :class:`ebssim.Volume` objects, as a
  :class:`FioPrediction` (fio's JSON shape, its normal report, or the columns of
  ``read_json(...).jobs``); :func:`parse_volume_spec` reads ``ebssim fio``'s ``--volume`` specs.

The modules, one job each: :mod:`~ebssim.fio.options` (the options fio accepts, their kinds and
how each is applied), :mod:`~ebssim.fio.values` (sizes, times, percentages, ...),
:mod:`~ebssim.fio.job` (:class:`FioJob`, whose fields declare every job field and its default once),
:mod:`~ebssim.fio.jobfile` and :mod:`~ebssim.fio.cmdline` (job files and command lines),
:mod:`~ebssim.fio.substitution` (fio's ``${VAR}`` and ``$ncpus``-like keywords in job files),
:mod:`~ebssim.fio.report` (fio's JSON report, read and written), :mod:`~ebssim.fio.normal` (fio's
normal output, read into the JSON's shape), :mod:`~ebssim.fio.logs` (fio's
logs, read and written), :mod:`~ebssim.fio.histograms` (latency buckets, percentiles, histogram
logs), :mod:`~ebssim.fio.prediction` (the simulation of jobs on volumes) and
:mod:`~ebssim.fio.cost` (what a prediction may cost).

>>> import ebssim
>>> from ebssim.fio import predict
>>> run = "fio --name=r --filename=/dev/x --rw=randread --ioengine=libaio --iodepth=16 --runtime=60"
>>> job = predict([run], {"/dev/x": ebssim.gp3(100)}, log_dir=None).jobs[0]
>>> round(job.iops), job.bound
(3000, 'volume_iops')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:  # imported on first use (ebssim._lazy); these are what mypy and IDEs see
    from ..volumes import volume_from_spec, volume_spec
    from .cmdline import parse_command_line, parse_run
    from .histograms import (
        FIO_PERCENTILES,
        hist_buckets,
        hist_percentiles,
        plat_idx_to_val,
        plat_val_to_idx,
        read_hist_log,
    )
    from .job import FioJob, FioJobError, FioJobSet, FioLoad
    from .jobfile import parse_job_file
    from .logs import FioLogOrderWarning, read_log, read_logs
    from .normal import read_normal
    from .prediction import FioPrediction, JobPrediction, parse_volume_spec, predict
    from .report import FioResult, parse_json, read_json

__all__ = [
    "FIO_PERCENTILES",
    "FioJob",
    "FioJobError",
    "FioJobSet",
    "FioLoad",
    "FioLogOrderWarning",
    "FioPrediction",
    "FioResult",
    "JobPrediction",
    "hist_buckets",
    "hist_percentiles",
    "parse_command_line",
    "parse_job_file",
    "parse_json",
    "parse_run",
    "parse_volume_spec",
    "volume_from_spec",
    "volume_spec",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "predict",
    "read_hist_log",
    "read_json",
    "read_log",
    "read_logs",
    "read_normal",
]

_EXPORTS = {
    ".cmdline": ("parse_command_line", "parse_run"),
    ".histograms": (
        "FIO_PERCENTILES",
        "hist_buckets",
        "hist_percentiles",
        "plat_idx_to_val",
        "plat_val_to_idx",
        "read_hist_log",
    ),
    ".job": ("FioJob", "FioJobError", "FioJobSet", "FioLoad"),
    ".jobfile": ("parse_job_file",),
    ".logs": ("FioLogOrderWarning", "read_log", "read_logs"),
    ".normal": ("read_normal",),
    ".prediction": (
        "FioPrediction",
        "JobPrediction",
        "parse_volume_spec",
        "predict",
    ),
    ".report": ("FioResult", "parse_json", "read_json"),
    # The SPEC grammar is the volumes' (ebssim.volumes); fio's --volume reads it.
    "..volumes": ("volume_from_spec", "volume_spec"),
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy.attach(__name__, _EXPORTS, __all__)
