"""Calibration: fit the model to what fio measured on a real volume, then predict other runs.

>>> import ebssim.fit
>>> sorted(ebssim.fit.__all__)
['CliffPrediction', 'Fit', 'Parameter', 'Phase', 'RATE_LIMITS', 'fit', 'predict_cliff']

:func:`fit` reads fio job files, JSON/json+ reports, iops/bw logs and clat/lat/clat_hist latency
logs (or the frames of :func:`ebssim.fio.read_log` and :func:`ebssim.fio.read_hist_log`), places
the jobs on one clock, finds the levels and the times they change, and, for a declared volume
type, the volume's parameters (and, with an instance, its wait spread) with their uncertainties,
with the engine as forward model. docs/fit.md has the model, the method and the measured accuracy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:  # imported on first use (ebssim._lazy); these are what mypy and IDEs see
    from ._fit import RATE_LIMITS, fit
    from ._predict import CliffPrediction, predict_cliff
    from ._result import Fit, Parameter, Phase

__all__ = ["RATE_LIMITS", "CliffPrediction", "Fit", "Parameter", "Phase", "fit", "predict_cliff"]

_EXPORTS = {
    "._fit": ("RATE_LIMITS", "fit"),
    "._predict": ("CliffPrediction", "predict_cliff"),
    "._result": ("Fit", "Parameter", "Phase"),
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy.attach(__name__, _EXPORTS, __all__)
