"""The result of a fit: parameters with uncertainties, the fitted volume, plots, predictions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .. import _repr
from ..volumes import Volume

if TYPE_CHECKING:  # pragma: no cover
    from ..fio import FioPrediction
    from ..stripes import StripedSet
    from ._inputs import Capture
    from ._levels import Level

FloatArray = npt.NDArray[np.float64]

#: What a fit says when every level is its job's own rate cap (:attr:`Fit.levels_are_caps`).
CAPS_NOTE = (
    "every level is its job's own fio rate cap (rate_iops/rate): the capture shows what the jobs asked "
    "for, not the volume's limits; it fits every volume whose limits do not bind below the caps"
)


@dataclass
class Parameter:
    """One fitted parameter. ``value`` is None when the data do not determine it; ``lower`` and
    ``upper`` then say what they do allow (None: no bound from the data)."""

    name: str
    value: Optional[float]
    stderr: Optional[float]
    lower: Optional[float]
    upper: Optional[float]
    unit: str
    note: str

    def _text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        text = f"{self.name} undetermined"
        if self.value is not None:
            text = f"{self.name} = {_fmt(self.value, self.stderr)}{unit}"
        if self.lower is not None or self.upper is not None:
            text += f" (data allow {_fmt(self.lower)} to {_fmt(self.upper)})"
        return text

    def __repr__(self) -> str:
        return _repr.short_repr("Parameter", [self._text(), self.note])

    def _repr_html_(self) -> str:
        return _repr.html_table(f"Parameter: {self.name}", _parameter_rows(self))

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "stderr": self.stderr,
            "lower": self.lower,
            "upper": self.upper,
            "unit": self.unit,
            "note": self.note,
        }


@dataclass
class Phase:
    """A stretch of one job at a constant rate, on the capture's clock."""

    job: str
    start_s: float
    end_s: float
    iops: float
    throughput_mib_s: float
    bound: Optional[str]  # which limit held it (a declared type only): demand, volume_iops, ...
    iops_stderr: float = math.nan

    def _cells(self) -> List[str]:
        return [
            self.job,
            _repr.when(self.start_s),
            _repr.when(self.end_s),
            _fmt(self.iops, self.iops_stderr),
            f"{self.throughput_mib_s:.4g}",
            self.bound or "",
        ]

    def __repr__(self) -> str:
        job, start, end, iops, mib, bound = self._cells()
        held = f"held by {bound}" if bound else ""
        return _repr.short_repr("Phase", [f"{job}: {start} to {end}", f"{iops} IOPS", f"{mib} MiB/s", held])

    def _repr_html_(self) -> str:
        return _repr.html_table(f"Phase: {self.job}", list(zip(_PHASE_COLUMNS, self._cells())))

    def to_dict(self) -> Dict[str, Any]:
        return {
            "job": self.job,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "iops": self.iops,
            "iops_stderr": _num(self.iops_stderr),
            "throughput_mib_s": self.throughput_mib_s,
            "bound": self.bound,
        }


_PHASE_COLUMNS = ["job", "start", "end", "IOPS", "MiB/s", "held by"]
_PARAMETER_COLUMNS = ["parameter", "value", "stderr", "lower", "upper", "unit", "note"]


def _parameter_cells(q: Parameter) -> List[str]:
    return [q.name, _fmt(q.value), _fmt(q.stderr), _fmt(q.lower), _fmt(q.upper), q.unit, q.note]


def _parameter_rows(q: Parameter) -> List[Tuple[str, str]]:
    return list(zip(_PARAMETER_COLUMNS, _parameter_cells(q)))


def _num(x: Optional[float]) -> Optional[float]:
    if x is None or not math.isfinite(x):
        return None
    return float(x)


def _fmt(x: Optional[float], se: Optional[float] = None) -> str:
    if x is None:
        return "-"
    if se is None or not math.isfinite(se) or se == 0:
        return f"{x:.6g}"
    digits = max(0, 1 - int(math.floor(math.log10(abs(se))))) if se > 0 else 3
    return f"{x:.{digits}f} ± {se:.2g}"


@dataclass(eq=False)
class Fit:
    """A fitted model of the volume behind a fio capture (see :func:`ebssim.fit.fit`).

    Attributes
    ----------
    volume : Volume or None
        The fitted volume, an ordinary :class:`ebssim.Volume` (None without a declared type, or
        when its size could not be determined).
    volume_type : str or None
    phases : list of Phase
        Every stretch of constant rate: job, start and end (s, from the start of the first job's
        log), IOPS, MiB/s and, with a type, the limit that held it.
    parameters : list of Parameter
        Value, standard error and the bounds the data allow.
    cliff_time_s : float or None
        When the bucket ran dry, on the capture's clock (None: not in the capture, or no type).
    residuals : numpy.ndarray
        Measured minus fitted IOPS per window.
    notes : list of str
        What could not be determined, and why.
    levels_are_caps : bool
        Every level is its job's own fio rate cap (``rate_iops``/``rate``, with
        ``rate_limits="workload"``): the capture shows what the jobs asked for, not the volume's
        limits, so it pins down no one volume.
    volume_range : dict or None
        With ``levels_are_caps`` and a type: the volumes of that type whose limits do not bind
        below the caps (the least size, IOPS and throughput, the least BurstBalance at the least
        size, the size from which no credits are needed; :func:`ebssim.fit.fit`). Without a type,
        :attr:`consistent` holds one such range per type that serves the capture.
    """

    capture: "Capture"
    levels: List["Level"]
    volume_type: Optional[str]
    instance: Optional[str]
    rate_limits: str
    levels_ssr: float
    levels_dof: int
    volume: Optional[Volume] = None
    phases: List[Phase] = field(default_factory=list)
    parameters: List[Parameter] = field(default_factory=list)
    cliff: Optional[Parameter] = None
    service_time: Dict[str, Optional[float]] = field(default_factory=lambda: {"intercept_ms": None, "per_mib_ms": None})
    consistent: List[Dict[str, Any]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    predicted: Optional[Tuple[FloatArray, FloatArray, FloatArray, FloatArray]] = None  # t0, t1, measured, fitted
    ssr: Optional[float] = None
    dof: Optional[int] = None
    profile: List[Tuple[float, ...]] = field(default_factory=list)
    engine_runs: int = 0
    dt_s: Optional[float] = None
    engine_phases: List[Tuple[float, float, float, float, bool, float]] = field(default_factory=list)
    latency_fits: List[Tuple[str, float, float]] = field(default_factory=list)
    levels_are_caps: bool = False
    volume_range: Optional[Dict[str, Any]] = None
    stripe: Optional["StripedSet"] = None

    # ---- values -------------------------------------------------------------------------

    @property
    def cliff_time_s(self) -> Optional[float]:
        return self.cliff.value if self.cliff is not None else None

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name`` (KeyError naming the known ones)."""
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(f"no parameter {name!r}; fitted: {', '.join(p.name for p in self.parameters)}")

    def _value(self, name: str) -> Optional[float]:
        try:
            return self.parameter(name).value
        except KeyError:
            return None

    @property
    def residuals(self) -> FloatArray:
        """Measured minus fitted mean IOPS per window (the volume's total, in time order)."""
        if self.predicted is None:
            t0s = [j.t0 for j in self.capture.jobs]
            meas = np.concatenate([j.iops for j in self.capture.jobs])
            fitted = np.concatenate([self._level_at(j, (j.t0 + j.t1) / 2) for j in self.capture.jobs])
            del t0s
            out: FloatArray = meas - fitted
            return out
        return self.predicted[2] - self.predicted[3]

    def _level_at(self, job: Any, t: FloatArray) -> FloatArray:
        out = np.full(t.shape, np.nan)
        for lv in self.levels:
            if lv.job is job:
                out[(t >= lv.start_s - 1e-9) & (t <= lv.end_s + 1e-9)] = lv.iops
        return out

    @property
    def goodness(self) -> Dict[str, Optional[float]]:
        """Goodness of fit: RMS and largest residual (IOPS), relative RMS, and the weighted sum of squares per dof."""
        r = self.residuals
        meas = self.predicted[2] if self.predicted is not None else np.concatenate([j.iops for j in self.capture.jobs])
        ok = np.isfinite(r)
        rms = float(np.sqrt(np.mean(r[ok] ** 2))) if ok.any() else math.nan
        return {
            "windows": float(r.size),
            "rms_residual_iops": _num(rms),
            "max_abs_residual_iops": _num(float(np.max(np.abs(r[ok]))) if ok.any() else math.nan),
            "relative_rms": _num(rms / float(np.mean(meas)) if meas.size and np.mean(meas) > 0 else math.nan),
            "reduced_chi2": _num(self.ssr / self.dof if self.ssr is not None and self.dof else math.nan),
        }

    def spec(self) -> Optional[str]:
        """The fitted volume as an ``ebssim fio --volume TARGET=SPEC`` SPEC (None without a volume).

        SPEC has no key for the service time's transfer term: ``latency_ms`` is the fitted intercept,
        and ``ebssim fio`` adds the model's default transfer time (use :attr:`volume` from Python)."""
        v = self.volume
        if v is None:
            return None
        if self.stripe is not None:
            from ..stripes import target_spec

            head = target_spec(self.stripe).partition("+")[0]  # raid0:chunk=...,members=N
            return f"{head}+{self._volume_spec(v)}"
        return self._volume_spec(v)

    @staticmethod
    def _volume_spec(v: Volume) -> str:
        parts = [f"size={v.size_gib:g}"]
        if v.iops is not None:
            parts.append(f"iops={v.iops:g}")
        if v.throughput_mib_s is not None:
            parts.append(f"throughput={v.throughput_mib_s:g}")
        if v.burst_balance_pct is not None:
            parts.append(f"burst_balance={v.burst_balance_pct:.6g}")
        if v.latency_ms is not None:
            parts.append(f"latency_ms={v.latency_ms:.6g}")
        for key in ("read_latency_ms", "write_latency_ms", "latency_cv", "wait_cv"):
            x = getattr(v, key)
            if x is not None:
                parts.append(f"{key}={x:.6g}")
        return f"{v.type}:" + ",".join(parts)

    def to_dict(self) -> Dict[str, Any]:
        """The fit as one JSON-ready document (the ``ebssim fit --output-format json`` contract)."""
        v = self.volume
        bucket = v is not None and v.has_bucket and v.max_iops > v.baseline_iops
        bal = self._value("burst_balance_pct")
        size = self._value("size_gib")
        return {
            "volume": self.spec(),
            "volume_type": self.volume_type,
            "members": self.stripe.n if self.stripe is not None else None,
            "chunk_kib": self.stripe.chunk_kib if self.stripe is not None else None,
            "size_gib": size,
            "baseline_iops": v.baseline_iops if v is not None else None,
            "burst_iops": v.max_iops if bucket and v is not None else None,
            "baseline_throughput_mib_s": v.baseline_throughput_mib_s if v is not None else None,
            "burst_throughput_mib_s": v.max_throughput_mib_s if bucket and v is not None else None,
            "cliff_time_s": self.cliff_time_s,
            "initial_burst_balance_pct": bal,
            "service_time": dict(self.service_time),
            "phases": [p.to_dict() for p in self.phases],
            "parameters": [p.to_dict() for p in self.parameters],
            "goodness_of_fit": self.goodness,
            "consistent_with": list(self.consistent),
            "notes": list(self.notes),
            "levels_are_caps": self.levels_are_caps,
            "volume_range": dict(self.volume_range) if self.volume_range is not None else None,
            "rate_limits": self.rate_limits,
            "inputs": list(self.capture.sources),
            "fio_version": self.capture.fio_version,
        }

    # ---- text and HTML -----------------------------------------------------------------

    def __repr__(self) -> str:
        what = str(self.volume) if self.volume is not None else (self.volume_type or "levels only")
        cliff = "" if self.cliff_time_s is None else f", cliff at {_repr.when(self.cliff_time_s)}"
        return f"<ebssim.fit.Fit: {what}{cliff}; {len(self.phases)} phase(s), {len(self.parameters)} parameter(s)>"

    def __str__(self) -> str:
        lines = [f"ebssim fit: {len(self.capture.jobs)} job(s) from {', '.join(self.capture.sources)}"]
        if self.levels_are_caps:
            lines.append(f"levels: {CAPS_NOTE}")
        if self.volume_range is not None:
            lines.append(f"fits: {self.volume_range['type']}: {self.volume_range['why']}")
        if self.volume is not None:
            least = " (the least that fits)" if self.volume_range is not None else ""
            what = self.volume if self.stripe is None else self.stripe
            lines.append(f"volume: {what}{least}  (--volume TARGET={self.spec()})")
        elif self.volume_type:
            lines.append(f"volume: {self.volume_type}, not fully determined")
        lines.append("phases:")
        for p in self.phases:
            lines.append(
                f"  {p.job:<16} {p.start_s:9.3f} .. {p.end_s:9.3f} s  {_fmt(p.iops, p.iops_stderr):>18} IOPS  "
                f"{p.throughput_mib_s:9.3f} MiB/s" + (f"  {p.bound}" if p.bound else "")
            )
        if self.parameters:
            lines.append("parameters:")
            for q in self.parameters:
                rng = ""
                if q.lower is not None or q.upper is not None:
                    rng = f"  [{_fmt(q.lower)} .. {_fmt(q.upper)}]"
                lines.append(f"  {q.name:<22} {_fmt(q.value, q.stderr):>22} {q.unit:<7}{rng}  {q.note}")
        for c in self.consistent:
            size = f" {c['size_gib']} GiB" if c.get("size_gib") else ""
            lines.append(f"consistent with: {c['type']}{size}: {c['why']}")
        g = self.goodness
        if g["rms_residual_iops"] is not None:
            lines.append(
                f"goodness of fit: RMS residual {g['rms_residual_iops']:.4g} IOPS over {int(g['windows'] or 0)} windows"
            )
        for n in self.notes:
            lines.append(f"note: {n}")
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        g = self.goodness
        head = (
            str(self.stripe or self.volume)
            if self.volume is not None
            else (self.volume_type or "levels only (no type)")
        )
        good = (
            f"RMS residual {g['rms_residual_iops']:.4g} IOPS ({100 * (g['relative_rms'] or 0):.2f} %), "
            f"{int(g['windows'] or 0)} windows"
            if g["rms_residual_iops"] is not None
            else ""
        )
        parts = [
            _repr.html_grid(f"ebssim fit: {head}", _PARAMETER_COLUMNS, [_parameter_cells(q) for q in self.parameters]),
            _repr.html_grid("phases", _PHASE_COLUMNS, [p._cells() for p in self.phases]),
        ]
        notes = [("goodness of fit", good)] if good else []
        if self.levels_are_caps:
            notes.append(("levels", CAPS_NOTE))
        if self.volume_range is not None:
            notes.append(("fits", f"{self.volume_range['type']}: {self.volume_range['why']}"))
        for c in self.consistent:
            size = f" {c['size_gib']} GiB" if c.get("size_gib") else ""
            notes.append(("consistent with", f"{c['type']}{size}: {c['why']}"))
        notes += [("note", n) for n in self.notes]
        if notes:
            parts.append(_repr.html_table("", notes))
        return "<div>" + "".join(parts) + "</div>"

    # ---- plots and predictions ----------------------------------------------------------

    def plot(self, ax: Any = None) -> Any:
        """Measured against fitted IOPS over time, with a residual panel and the cliff marked.

        Returns the matplotlib Figure (``ax``: an existing pair of Axes, rate and residual), which
        shows once in Jupyter, as :func:`ebssim.plot`'s does (:func:`ebssim.plot.figure`)."""
        from ..plot import _human, figure

        if ax is None:
            fig = figure(figsize=(9, 5.5), layout="constrained")
            a1, a2 = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
        else:
            a1, a2 = ax
            fig = a1.figure
        for j in self.capture.jobs:
            mid = (j.t0 + j.t1) / 2
            a1.plot(mid, j.iops, ".", ms=3, label=f"measured: {j.name}")
        if self.predicted is not None:
            t0, t1, meas, fit = self.predicted
            order = np.argsort(t0)
            xs = np.ravel(np.column_stack([t0[order], t1[order]]))
            ys = np.repeat(fit[order], 2)
            a1.plot(xs, ys, "-", color="k", lw=1.2, label="fitted (engine)")
            a2.plot((t0 + t1) / 2, meas - fit, ".", ms=3, color="C3")
        else:
            for lv in self.levels:
                a1.plot([lv.start_s, lv.end_s], [lv.iops, lv.iops], "-", color="k", lw=1.2)
            a1.plot([], [], "-", color="k", label="fitted levels")
            for j in self.capture.jobs:
                a2.plot((j.t0 + j.t1) / 2, j.iops - self._level_at(j, (j.t0 + j.t1) / 2), ".", ms=3, color="C3")
        c = self.cliff_time_s
        if c is not None:
            for a in (a1, a2):
                a.axvline(c, color="C1", ls="--", lw=1)
            a1.annotate(f"cliff at {_human(c)}", (c, a1.get_ylim()[1] * 0.95), color="C1", ha="left", va="top")
        a2.axhline(0, color="k", lw=0.8)
        a1.set_ylabel("IOPS")
        a2.set_ylabel("measured − fitted")
        a2.set_xlabel("time since the first job's start (s)")
        title = str(self.volume) if self.volume is not None else "levels (no volume type)"
        a1.set_title(f"ebssim fit: {title}")
        a1.legend(loc="best", fontsize="small")
        return fig

    def predict(
        self,
        job: Union[str, Sequence[str]],
        *,
        target: Optional[str] = None,
        log_dir: Optional[str] = None,
    ) -> "FioPrediction":
        """fio's report of another job (a job file or ``"fio ..."`` command line) on the fitted
        volume, through :func:`ebssim.fio.predict`. The job's filename must match ``target``
        (default: the job's own filename). With an instance, its fitted ``instance_wait_cv`` (if
        determined) is the instance's ``wait_cv``."""
        from .. import fio
        from ..instances import instance as _instance

        if self.volume is None:
            raise ValueError("this fit has no volume (no type declared, or its size was not determined)")
        runs = [job] if isinstance(job, str) else list(job)
        if target is None:
            js = fio.parse_run(runs[0])
            names = [t for j in js.jobs for t in j.targets]
            if not names:
                raise ValueError(f"{runs[0]!r}: its jobs name no filename: pass target=")
            target = names[0]
        inst: Any = self.instance
        w = self._value("instance_wait_cv")
        if inst is not None and w is not None:
            inst = _instance(inst, wait_cv=w)
        vol: Any = self.volume if self.stripe is None else self.stripe
        return fio.predict(runs, {target: vol}, instance=inst, log_dir=log_dir)
