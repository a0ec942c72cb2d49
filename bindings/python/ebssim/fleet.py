"""Fleets: many volumes, each with its own trace, configuration and instance, in one call.

:func:`simulate_fleet` replays a fleet on every core of this machine and returns one summary
row per volume (:data:`SUMMARY_COLUMNS`); :func:`simulate_fleet_dask` replays the same fleet on a
Dask cluster (``dask.distributed``) and returns the same rows. docs/fleet.md tells the whole
story.

- Volumes are given by id (``{"vol-1": ebssim.gp2(100), ...}``, like
  :func:`ebssim.aws.read_volumes`), their demand as workloads by id, or as one long pandas
  DataFrame with a volume id column (each volume's rows a trace, read by
  :func:`ebssim.trace.from_pandas`).
- Volumes attached to one instance (``attachments``: :class:`ebssim.aws.Attachment` by volume
  id, like :func:`ebssim.aws.read_instances`) share its EBS budget and are simulated together;
  every other volume alone.
- Each volume (or each instance) is simulated exactly as :func:`ebssim.simulate` (or a
  :class:`~ebssim.Simulation` of the instance's volumes) would, in C++ threads: its row is the
  same, to the last bit, whatever ``threads`` and ``batch_size``.
- A volume whose trace or configuration is refused gets a row with its ``error`` and no
  numbers; the others are kept (``errors="raise"`` raises instead).

>>> import numpy as np, ebssim
>>> from ebssim.fleet import simulate_fleet
>>> volumes = {"a": ebssim.gp2(100), "b": ebssim.gp3(100)}
>>> demand = np.full(3600, 1200.0)                 # 1,200 IOPS of 4 KiB for an hour
>>> loads = {v: ebssim.OpenLoop(demand, demand * 4096) for v in volumes}
>>> fleet = simulate_fleet(volumes, loads)
>>> fleet.summary[["type", "served_iops", "cliff_time_s", "burst_balance_end_pct"]]
          type  served_iops  cliff_time_s  burst_balance_end_pct
volume_id
a          gp2       1200.0           NaN                   40.0
b          gp3       1200.0           NaN                    NaN
"""

from __future__ import annotations

import math
import pickle
import uuid
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, cast

import numpy as np

from . import _core, _limits, _repr
from ._targets import VolumeGroup
from ._units import a_an, flag, integer, real
from .instances import Catalog, Instance, NoEbsLimitsWarning, _resolve_instance
from .recording import BOUND_NAMES
from .results import VolumeResult
from .simulation import Simulation, _threads
from .volumes import Volume
from .workloads import OpenLoop, Workload

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .aws import Attachment

__all__ = ["simulate_fleet", "simulate_fleet_dask", "FleetResult", "FleetVolume", "SUMMARY_COLUMNS", "ERRORS"]

#: What to do with a volume whose run is refused: keep its ``error`` and warn (default), keep it
#: without a warning, or raise a ValueError naming the volume.
ERRORS = ("warn", "ignore", "raise")

_MiB = float(2**20)

#: The columns of :attr:`FleetResult.summary`, one row per volume (indexed by ``volume_id``).
SUMMARY_COLUMNS: Tuple[str, ...] = (
    "type",  # the volume type
    "size_gib",
    "baseline_iops",  # the volume's IOPS limit without burst
    "instance_id",  # None: the volume runs alone
    "instance_type",
    "duration_s",  # simulated seconds
    "demanded_iops",  # I/Os that arrived (or a closed loop issued), per second of the run
    "served_iops",  # I/Os completed per second of the run
    "demanded_mib_s",
    "served_mib_s",
    "mean_latency_ms",  # weighted by the I/Os completed (NaN: none)
    *(f"{b}_s" for b in BOUND_NAMES),  # simulated seconds held back by each bound (demand: not held)
    "cliff_time_s",  # when the first cliff started (NaN: none; VolumeResult.cliff_time_s)
    "cliff_count",  # cliffs (VolumeResult.cliffs: episodes with the bucket empty, short refills merged)
    "bucket_empty_s",  # seconds with the bucket empty
    "credits_end",  # credits left (I/O credits; MiB on st1 and sc1)
    "burst_balance_end_pct",  # NaN for types without a bucket
    "backlog_ops_end",  # I/Os still queued at the end
    "instance_cliff_time_s",  # first time an instance balance ran dry (NaN: never, or no instance)
    "error",  # None, or why the volume was not simulated (its numbers are then NaN)
)
_TEXT = ("type", "instance_id", "instance_type", "error")


@dataclass(frozen=True)
class FleetVolume:
    """One volume of a fleet as one item (a Dask bag holds these): its id, configuration,
    workload and, optionally, where it is attached."""

    volume_id: Hashable
    volume: Volume
    workload: Workload
    attachment: Optional["Attachment"] = None


@dataclass(frozen=True)
class FleetResult:
    """What :func:`simulate_fleet` returns."""

    summary: "pd.DataFrame"
    """One row per volume (:data:`SUMMARY_COLUMNS`), indexed by ``volume_id``, in the order of ``volumes``."""
    errors: Dict[Hashable, str] = field(default_factory=dict)
    """Why each volume that was not simulated was refused, by volume id."""
    timelines: Dict[Hashable, "pd.DataFrame"] = field(default_factory=dict)
    """Per-step (or per ``timeline_step``) DataFrames of the volumes asked for with ``timelines=``."""

    @staticmethod
    def _described(g: "pd.DataFrame") -> Tuple[str, str]:
        """The cliffs (how many, the first) and the worst mean latency (in its unit) of some rows."""
        cliffs = g["cliff_time_s"].dropna()
        lat = g["mean_latency_ms"].dropna()
        first = f", the first at {_repr.when(float(cliffs.min()))} ({cliffs.idxmin()})" if len(cliffs) else ""
        worst = f"{_repr.latency(float(lat.max()))} ({lat.idxmax()})" if len(lat) else "n/a"
        return f"{len(cliffs):,} with a cliff{first}", worst

    def __repr__(self) -> str:
        s = self.summary
        n = len(s)
        kinds = s["type"].where(s["type"].notna(), "(no configuration)").value_counts(sort=False)
        cliffs, worst = self._described(s)
        parts = [
            f"{n:,} volume{'s' * (n != 1)}: " + ", ".join(f"{c:,} {t}" for t, c in kinds.items()),
            cliffs,
            f"worst mean latency {worst}",
            f"{len(self.errors):,} refused" if self.errors else "",
            f"timelines of {len(self.timelines):,}" if self.timelines else "",
        ]
        return _repr.short_repr("FleetResult", parts, sep="; ")

    def _repr_html_(self) -> str:
        """A row per volume type (and one for all): volumes, refused, served IOPS, cliffs, worst latency."""
        s = self.summary
        kinds = s["type"].where(s["type"].notna(), "(no configuration)")
        groups = [(str(t), s[kinds == t]) for t in dict.fromkeys(kinds)]
        if len(groups) > 1:
            groups.append(("all", s))
        rows = [
            [
                name,
                f"{len(g):,}",
                f"{int(g['error'].notna().sum()):,}",
                _repr.number(float(g["served_iops"].sum())),
                *self._described(g),
            ]
            for name, g in groups
        ]
        header = ["type", "volumes", "refused", "served IOPS (sum)", "cliffs", "worst mean latency"]
        return _repr.html_grid(f"FleetResult: {len(s):,} volumes (.summary has a row each)", header, rows)


def simulate_fleet(
    volumes: Mapping[Hashable, Volume],
    workloads: "Union[Mapping[Hashable, Workload], pd.DataFrame]",
    attachments: Optional[Mapping[Hashable, "Attachment"]] = None,
    *,
    duration_s: Optional[float] = None,
    dt: Optional[float] = None,
    id_column: str = "volume_id",
    time_column: str = "time",
    period: Union[float, str, "pd.Timedelta", None] = None,
    gaps: str = "error",
    io_size: Optional[Any] = None,
    read_fraction: float = 1.0,
    pattern: str = "random",
    catalog: Optional["Catalog"] = None,
    threads: Optional[int] = None,
    jump: bool = True,
    batch_size: int = 256,
    timelines: Union[bool, Iterable[Hashable]] = False,
    timeline_step: Optional[float] = None,
    errors: str = "warn",
    progress: bool = False,
    max_volume_steps: Optional[float] = None,
    max_memory_bytes: Optional[float] = None,
) -> FleetResult:
    """Simulate every volume of a fleet and summarise each in one row.

    Parameters
    ----------
    volumes : mapping of volume id to Volume
        The configurations, e.g. from :func:`ebssim.aws.read_volumes`. Their order is the
        summary's.
    workloads : mapping of volume id to workload, or pandas.DataFrame
        One workload per volume (:class:`~ebssim.OpenLoop`, :class:`~ebssim.ClosedLoop`, ...),
        or a long DataFrame: a volume id column (or index level) ``id_column``, the time in the
        index or in a column ``time_column``, and trace columns as :func:`ebssim.trace.from_pandas`
        reads them (``read_ops``, ``write_bytes``, ``iops``, ...), each volume's rows its trace
        (a column without any value in a volume's rows is left out for that volume).
        ``period``, ``gaps``, ``io_size``, ``read_fraction`` and ``pattern`` are passed to
        ``from_pandas`` for every volume.
    attachments : mapping of volume id to Attachment, optional
        Where volumes are attached (:func:`ebssim.aws.read_instances`): the volumes with one
        ``instance_id`` share the EBS budget of its ``instance_type`` (looked up in ``catalog``,
        default the shipped one), and need traces of one length and step. Other volumes run alone.
    duration_s, dt
        As for :func:`ebssim.simulate`, for every volume (a trace that knows its step sets ``dt``).
    catalog : Catalog, optional
        Where the ``instance_type`` of ``attachments`` is looked up (an :class:`ebssim.Catalog`;
        default the shipped one).
    threads : int, optional
        C++ threads (default None, or 0: every core). The rows are the same for any count.
    jump : bool
        Jump over constant stretches in closed form (default; :meth:`Simulation.run`);
        ``False`` steps every step.
    batch_size : int
        Volumes per batch (default 256): traces are built, simulated and summarised a batch at a
        time, so that only one batch's traces and results are in memory besides the summary (256
        traces of 30 days at one-minute steps: 177 MB).
    timelines : bool or iterable of volume ids
        Also keep the per-step results (``VolumeResult.to_pandas()``) of every volume (True) or of
        the volumes listed, in :attr:`FleetResult.timelines`. Only those volumes are recorded.
    timeline_step : float, optional
        Seconds per timeline row: a multiple of the step; the engine records each row as
        ``Recording(every_s=timeline_step)`` does (rates the mean of the row's steps, latency their
        I/O-weighted mean, credits and backlog at the row's end; the ``bound`` column is left out:
        the summary has the seconds in each bound).
    errors : {"warn", "ignore", "raise"}
        A volume whose run is refused (a bad trace, a configuration AWS refuses, a workload of
        the wrong length, ...) gets a row with only its configuration and ``error``, and the
        others are simulated: with one :class:`UserWarning` naming them (``"warn"``), silently
        (``"ignore"``), or the first raises a ValueError naming the volume (``"raise"``). On an
        instance, every volume of it shares the error.
    progress : bool
        Show a progress bar (tqdm: in a terminal or in Jupyter), updated after each batch
        (``True`` or ``False``; default False). tqdm is imported only for a bar; in Jupyter it is
        a widget when ipywidgets is installed, else the text bar, without a warning.
    max_volume_steps, max_memory_bytes
        Bounds on each instance's or volume's run (default :data:`ebssim.limits`).

    Examples
    --------
    Two volumes on one m5.large share its 18,750 IOPS budget; a third runs alone; the fourth
    trace has a negative value and is reported, not simulated:

    >>> import numpy as np, ebssim
    >>> from ebssim.aws import Attachment
    >>> vols = {f"v{i}": ebssim.gp3(100, iops=16000) for i in range(4)}
    >>> ops = np.full(60, 16000.0)
    >>> bad = ops.copy(); bad[7] = -1.0
    >>> loads = {"v0": ebssim.OpenLoop(ops, ops * 4096), "v1": ebssim.OpenLoop(ops, ops * 4096),
    ...          "v2": ebssim.OpenLoop(ops, ops * 4096), "v3": ebssim.OpenLoop(bad, bad.clip(0) * 4096)}
    >>> on_m5 = {v: Attachment("i-1", "m5.large") for v in ("v0", "v1")}
    >>> fleet = simulate_fleet(vols, loads, on_m5, errors="ignore")
    >>> fleet.summary[["instance_id", "served_iops", "instance_iops_s"]]
              instance_id  served_iops  instance_iops_s
    volume_id
    v0                i-1       9375.0             60.0
    v1                i-1       9375.0             60.0
    v2               None      16000.0              0.0
    v3               None          NaN              NaN
    >>> fleet.errors["v3"]
    'ops[7]=-1 must be finite, >= 0 and <= 1e+15 per step'
    """
    if catalog is not None and not isinstance(catalog, Catalog):
        raise ValueError(
            f"catalog={catalog!r} must be an ebssim.Catalog (Catalog.from_csv(...), "
            f"Catalog.from_describe_instance_types(...)), or None for the shipped one"
        )
    show = flag(progress, "progress")
    options = _Options(
        duration_s=duration_s,
        dt=dt,
        id_column=id_column,
        time_column=time_column,
        trace=dict(period=period, gaps=gaps, io_size=io_size, read_fraction=read_fraction, pattern=pattern),
        catalog=catalog,
        threads=_threads(threads),
        jump=flag(jump, "jump"),
        max_volume_steps=_limits.max_volume_steps(max_volume_steps),
        max_memory_bytes=_limits.max_memory_bytes(max_memory_bytes),
    )
    vols = _check_volumes(volumes)
    if errors not in ERRORS:
        raise ValueError(f"errors={errors!r} must be one of {', '.join(map(repr, ERRORS))}")
    batch = integer(batch_size, "batch_size", "a number of volumes")
    if batch < 1:
        raise ValueError(f"batch_size={batch_size!r} must be >= 1")
    step = None if timeline_step is None else real(timeline_step, "timeline_step", "seconds")
    if step is not None and not (math.isfinite(step) and step > 0):
        raise ValueError(f"timeline_step={timeline_step!r} must be a positive number of seconds")
    if isinstance(timelines, bool):
        wanted: Optional[set[Hashable]] = set(vols) if timelines else set()
    elif isinstance(timelines, Iterable) and not isinstance(timelines, str):
        wanted = set(timelines)
        unknown = sorted(map(str, wanted - set(vols)))
        if unknown:
            raise ValueError(f"timelines names volumes that are not in volumes: {', '.join(unknown[:5])}")
    else:
        raise ValueError(f"timelines={timelines!r} must be True, False or a list of volume ids")
    traces = _Traces(workloads, options)
    rows: Dict[Hashable, Dict[str, Any]] = {}
    errs: Dict[Hashable, str] = {}
    lines: Dict[Hashable, "pd.DataFrame"] = {}
    extra = [v for v in traces.ids() if v not in vols]
    for vid in extra:  # a trace for a volume that has no configuration
        rows[vid] = _error_row(None, None, "no configuration in volumes for this trace")
        errs[vid] = rows[vid]["error"]
        if errors == "raise":
            raise ValueError(f"volume {vid!r}: {errs[vid]}")
    groups = _groups(vols, attachments)
    bar = _progress_bar(len(vols)) if show else None
    try:
        for chunk in _batches(groups, batch):
            done = _run_batch(chunk, vols, traces, options, wanted, step)
            for vid, (row, result) in done.items():
                rows[vid] = row
                if row["error"] is not None:
                    errs[vid] = row["error"]
                    if errors == "raise":
                        raise ValueError(f"volume {vid!r}: {row['error']}")
                if result is not None:
                    lines[vid] = result
            if bar is not None:
                bar.update(sum(len(g.vids) for g in chunk))
    finally:
        if bar is not None:
            bar.close()
    if errs and errors == "warn":
        _warn_refused(errs, len(rows), stacklevel=2)
    order = list(vols) + extra
    return FleetResult(_frame([rows[v] for v in order], order), errs, lines)


def _progress_bar(total: int) -> Any:
    """The progress bar of ``progress=True``, imported only then: tqdm's widget in Jupyter when
    ipywidgets is installed, else (a terminal, or Jupyter without ipywidgets) its text bar, quietly
    (``tqdm.auto`` would warn "IProgress not found" before falling back to the same text bar)."""
    import importlib.util

    if importlib.util.find_spec("ipywidgets") is None:
        from tqdm.std import tqdm
    else:
        from tqdm.auto import tqdm
    return tqdm(total=total, unit="volume", desc="ebssim fleet")


# ---------------------------------------------------------------------------------------------
# The pieces: options, traces by volume, groups (an instance or a lone volume), batches, rows.


@dataclass(frozen=True)
class _Options:
    duration_s: Optional[float]
    dt: Optional[float]
    id_column: str
    time_column: str
    trace: Dict[str, Any]
    catalog: Optional["Catalog"]
    threads: int
    jump: bool
    max_volume_steps: int
    max_memory_bytes: int


@dataclass(frozen=True)
class _Group:
    vids: List[Hashable]
    instance_id: Optional[str]
    instance_type: Union[str, Instance, None]


def _check_volumes(volumes: Any) -> Dict[Hashable, Volume]:
    if not isinstance(volumes, Mapping):
        raise ValueError(
            f"volumes must be a mapping of volume id to ebssim.Volume (e.g. ebssim.aws.read_volumes(...)), "
            f"got {type(volumes).__name__}"
        )
    for vid, v in volumes.items():
        if isinstance(v, VolumeGroup):
            raise ValueError(
                f"volumes[{vid!r}] is a {type(v).__name__}: a fleet takes EBS volumes, each with its own trace, and "
                f"a striped set is not supported (a member's own metrics already hold its share of the set's I/O): "
                f"give the members as volumes attached to one instance, or run the set's trace beside other volumes "
                f"with ebssim.Simulation({{'md0': set, 'log': volume}})"
            )
        if not isinstance(v, Volume):
            raise ValueError(f"volumes[{vid!r}] must be an ebssim.Volume, got {type(v).__name__}")
    return dict(volumes)


def _groups(vols: Mapping[Hashable, Volume], attachments: Optional[Mapping[Hashable, Any]]) -> List[_Group]:
    """The fleet's independent runs, in the order of their first volume: an instance's volumes together."""
    if attachments is not None and not isinstance(attachments, Mapping):
        raise ValueError(
            f"attachments must be a mapping of volume id to ebssim.aws.Attachment, got {type(attachments).__name__}"
        )
    out: List[_Group] = []
    by_instance: Dict[str, _Group] = {}
    for vid in vols:
        att = None if attachments is None else attachments.get(vid)
        if att is None:
            out.append(_Group([vid], None, None))
            continue
        iid, itype = getattr(att, "instance_id", None), getattr(att, "instance_type", None)
        if not isinstance(iid, str) or not isinstance(itype, (str, Instance)):
            raise ValueError(
                f"attachments[{vid!r}]={att!r} must be an ebssim.aws.Attachment(instance_id, instance_type)"
            )
        g = by_instance.get(iid)
        if g is None:
            g = by_instance[iid] = _Group([], iid, itype)
            out.append(g)
        elif g.instance_type != itype:
            raise ValueError(
                f"attachments: instance {iid!r} is of type {g.instance_type!r} for volume {g.vids[0]!r} "
                f"but {itype!r} for volume {vid!r}"
            )
        g.vids.append(vid)
    return out


def _batches(groups: List[_Group], size: int) -> Iterator[List[_Group]]:
    chunk: List[_Group] = []
    n = 0
    for g in groups:
        chunk.append(g)
        n += len(g.vids)
        if n >= size:
            yield chunk
            chunk, n = [], 0
    if chunk:
        yield chunk


class _Traces:
    """Workloads by volume id, from a mapping or built on demand from a long DataFrame."""

    def __init__(self, workloads: Any, options: _Options) -> None:
        self.options = options
        self.mapping: Optional[Mapping[Hashable, Any]] = None
        self.long: Optional[_LongFrame] = None
        if isinstance(workloads, Mapping):
            self.mapping = workloads
            return
        import pandas as pd

        if not isinstance(workloads, pd.DataFrame):
            raise ValueError(
                f"workloads must be a mapping of volume id to workload or a long pandas DataFrame with a "
                f"{options.id_column!r} column, got {type(workloads).__name__}"
            )
        col = options.id_column
        if col not in workloads.columns and col not in (workloads.index.names or []):
            raise ValueError(
                f"the DataFrame has no {col!r} column or index level (id_column=): columns "
                f"{', '.join(map(str, workloads.columns))}"
            )
        self.long = _LongFrame(workloads, options)

    def ids(self) -> List[Hashable]:
        if self.mapping is not None:
            return list(self.mapping)
        assert self.long is not None
        return list(self.long.ids)

    def prepare(self, vids: List[Hashable]) -> None:
        """Read the traces of a batch's volumes ahead, together where they can be."""
        if self.long is not None:
            self.long.prepare(vids)

    def get(self, vid: Hashable) -> Workload:
        """The workload of ``vid``; a ValueError says why there is none."""
        if self.mapping is not None:
            try:  # not `vid in mapping`: a Mapping's __contains__ calls __getitem__, which may build the trace
                return cast(Workload, self.mapping[vid])
            except KeyError:
                raise ValueError("no workload in workloads for this volume") from None
        assert self.long is not None
        return self.long.trace(vid)


class _LongFrame:
    """The volumes of a long DataFrame, grouped once: each volume's rows are one stretch of the
    rows sorted by volume (stably: in their order within the volume).

    A batch's traces are read together (:meth:`prepare`): the volumes whose rows are plain
    numbers on a grid of periods (one period apart, or with missing periods under
    ``gaps="zero"``) and whose columns are alike are read as one trace by the reader of
    :func:`ebssim.trace.from_pandas` (``ebssim._frames.columns_fields``), which is then cut
    into theirs (``OpenLoop._pieces``): the same arrays, to the bit, without a DataFrame or a
    check per volume. Any other volume (a column of text with a value in its rows, an index that
    is not plain times, a gap to refuse or interpolate, a value or a mix of columns that is
    refused) is read the general way, :func:`_trace` on its rows, which gives its trace or names
    what is wrong.
    """

    def __init__(self, frame: "pd.DataFrame", options: _Options) -> None:
        import pandas as pd

        from ._frames import GAPS, _period_seconds

        self.options = options
        col = options.id_column
        if col in frame.columns:
            ids: Any = frame[col]
            data = frame.drop(columns=[col])
        else:
            ids = frame.index.get_level_values(col)
            data = frame.reset_index(level=col, drop=True)
        if options.time_column in data.columns:
            data = data.set_index(options.time_column)
        self.data = data
        self.order: Optional[np.ndarray] = None  # rows in volume order, unless they are already
        runs = _runs(ids)
        cycle = None if runs is not None else _cycle(ids)
        if runs is not None:  # each volume's rows together: no sort
            first, uniques = runs
            self.bounds = np.stack([first, np.append(first[1:], len(ids))], axis=1)
        elif cycle is not None:  # rows by time, the volumes in one order at every time: no sort
            uniques = cycle
            n, k = len(ids), len(cycle)
            self.order = np.arange(n, dtype=np.int64).reshape(-1, k).T.ravel()  # volume i: rows i, i + k, ...
            ends = np.arange(1, k + 1, dtype=np.int64) * (n // k)
            self.bounds = np.stack([ends - n // k, ends], axis=1)
        else:
            codes, uniques = pd.factorize(ids, sort=False)  # in order of first appearance; NaN: -1, left out
            codes = np.asarray(codes, dtype=np.int64)
            missing = int(np.count_nonzero(codes < 0))
            if missing or (codes.size > 1 and bool((codes[1:] < codes[:-1]).any())):
                # numpy sorts 16-bit keys by radix: a fleet of fewer than 32,767 volumes in linear time
                small = len(uniques) < 2**15 - 1
                self.order = np.argsort(codes.astype(np.int16) if small else codes, kind="stable")
            counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
            ends = missing + np.cumsum(counts)
            self.bounds = np.stack([ends - counts, ends], axis=1)
        self.ids: List[Hashable] = list(uniques)
        self.where: Dict[Hashable, int] = {vid: i for i, vid in enumerate(self.ids)}
        self.ready: Dict[Hashable, OpenLoop] = {}
        self.ns: Optional[np.ndarray] = None
        self.given_s: Optional[float] = None
        self.is_datetime = isinstance(data.index, pd.DatetimeIndex)
        ns = self._times(data.index)
        if ns is None or options.trace["gaps"] not in GAPS:
            return  # each volume is read the general way, which names what is wrong
        if data.columns.has_duplicates or not all(isinstance(c, str) for c in data.columns):
            return
        try:
            self.given_s = None if options.trace["period"] is None else _period_seconds(options.trace["period"])
        except ValueError:
            return
        self.ns = ns

    @staticmethod
    def _times(index: "pd.Index") -> Optional[np.ndarray]:
        """The times of ``index`` in nanoseconds when it holds plain times (as ``_grid`` reads them:
        a DatetimeIndex or TimedeltaIndex without freq or NaT, or seconds named ``time_s``); else None."""
        import pandas as pd

        from ._frames import _ns

        if isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)):
            return None if index.freq is not None or index.hasnans else _ns(index)
        if isinstance(index, pd.MultiIndex) or index.name != "time_s" or index.dtype.kind not in "iuf":
            return None
        secs = np.asarray(index, dtype=np.float64)
        return np.round(secs * 1e9).astype(np.int64) if np.isfinite(secs).all() else None

    def prepare(self, vids: Iterable[Hashable]) -> None:
        """Read the traces of the volumes ``vids`` (a batch) that can be read together."""
        from ._frames import check_names, columns_fields

        self.ready = {}
        picked = list(dict.fromkeys(self.where[v] for v in vids if v in self.where))
        if self.ns is None or not picked:
            return
        o = self.options
        vol = np.array(picked, dtype=np.int64)
        first_row, counts = self.bounds[vol, 0], self.bounds[vol, 1] - self.bounds[vol, 0]
        starts = np.cumsum(counts) - counts  # of each volume in this batch's rows
        rows: Any  # the batch's rows of the frame: a slice where they are one stretch of it (no gather)
        if self.order is None and bool(np.all(first_row[1:] == first_row[:-1] + counts[:-1])):
            rows = slice(int(first_row[0]), int(first_row[0] + counts.sum()))
        else:
            rows = _stretches(first_row, counts)
            if self.order is not None:
                rows = self.order[rows]
        ns = self.ns[rows]
        ok = np.ones(vol.size, dtype=bool)
        everywhere = np.ones(vol.size, dtype=bool)
        values: Dict[str, np.ndarray] = {}
        present: Dict[str, np.ndarray] = {}
        for name in self.data.columns:
            series = self.data[name]
            dtype = series.dtype
            if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
                # As floats, as from_pandas reads a column; a value that is not a finite number >= 0
                # sends its volume the general way, which names it.
                v = np.asarray(series.to_numpy()[rows], dtype=np.float64)
                values[name] = v
                nan = np.isnan(v)
                gaps = bool(nan.any())
                low, high = (np.nanmin(v), np.nanmax(v)) if gaps else (v.min(), v.max())
                if not (low >= 0 and high < np.inf):  # some value refused: which volumes hold one
                    ok &= ~np.logical_or.reduceat(~nan & ~(np.isfinite(v) & (v >= 0)), starts)
                present[name] = np.logical_or.reduceat(~nan, starts) if gaps else everywhere
            else:
                # Text or other objects: read the general way by the volumes that have a value in it
                # (another volume's text must cost that volume only); left out for the others.
                present[name] = np.logical_or.reduceat(series.notna().to_numpy(dtype=bool)[rows], starts)
                ok &= ~present[name]
        # Each volume's grid of periods: its rows one period apart (its first two rows' spacing,
        # or period=), or, with period= and gaps="zero", on that grid with periods missing.
        first = ns[starts]
        if self.given_s is None:
            step = np.where(counts > 1, ns[np.minimum(starts + 1, ns.size - 1)] - first, 0)
            period_s = step / 1e9
        else:
            p_ns = round(self.given_s * 1e9)
            exact = abs(p_ns - self.given_s * 1e9) <= 1e-3
            step = np.full(vol.size, p_ns if exact else 0, dtype=np.int64)
            period_s = np.full(vol.size, self.given_s)
        ok &= step > 0
        pos = np.arange(ns.size, dtype=np.int64) - np.repeat(starts, counts)  # row k in period k
        on_grid = np.logical_and.reduceat(ns == np.repeat(first, counts) + pos * np.repeat(step, counts), starts)
        if self.given_s is not None and o.trace["gaps"] == "zero" and not on_grid[ok].all():
            rel = ns - np.repeat(first, counts)
            safe = np.repeat(np.where(step > 0, step, 1), counts)
            pos = rel // safe
            d = np.diff(pos, prepend=-1)
            d[starts] = 1  # each volume's first row is its period 0
            on_grid = np.logical_and.reduceat((rel % safe == 0) & (d > 0), starts)
        ok &= on_grid
        periods = np.where(ok, pos[starts + counts - 1] + 1, 0)  # each volume's periods
        groups: Dict[Tuple[Tuple[str, ...], float], List[int]] = {}
        for w in np.flatnonzero(ok).tolist():
            given = tuple(c for c in self.data.columns if present[c][w])
            groups.setdefault((given, float(period_s[w])), []).append(int(w))
        for (given, p), members in groups.items():
            m = np.array(members, dtype=np.int64)
            every = m.size == vol.size  # the batch's rows, in order: no gather
            mine = slice(None) if every else _stretches(starts[m], counts[m])
            offset = np.cumsum(periods[m]) - periods[m]
            positions = pos[mine] + np.repeat(offset, counts[m])
            try:
                check_names(list(given))
                fields = columns_fields(
                    {c: values[c][mine] for c in given},
                    p,
                    positions,
                    None,
                    None,
                    checked=True,
                    gaps=o.trace["gaps"],
                    dt=o.dt,
                    io_size=o.trace["io_size"],
                    read_fraction=o.trace["read_fraction"],
                    pattern=o.trace["pattern"],
                    service_time_ms=None,
                    max_memory_bytes=None,
                )
                whole = OpenLoop(**fields)
            except ValueError:
                continue  # each of these volumes the general way, which says which is refused and why
            k = int(round(p / float(fields["dt"])))
            cut = np.cumsum(periods[m]) * k
            start_times: List[Any] = [None] * m.size
            if self.is_datetime:
                at = starts[m] + rows.start if isinstance(rows, slice) else rows[starts[m]]
                start_times = list(self.data.index[at])
            pieces = whole._pieces(list(zip((cut - periods[m] * k).tolist(), cut.tolist())), start_times)
            for j, piece in zip(members, pieces):
                self.ready[self.ids[int(vol[j])]] = piece

    def trace(self, vid: Hashable) -> OpenLoop:
        """The trace of volume ``vid``; a ValueError says why there is none."""
        ready = self.ready.pop(vid, None)
        if ready is not None:
            return ready
        i = self.where.get(vid)
        if i is None:
            raise ValueError(f"no rows with {self.options.id_column}={vid!r} in the DataFrame")
        s, e = (int(x) for x in self.bounds[i])
        rows = np.arange(s, e) if self.order is None else self.order[s:e]
        return _trace(self.data.iloc[rows], self.options)


def _runs(ids: Any) -> Optional[Tuple[np.ndarray, List[Hashable]]]:
    """(the first row of each volume, its id) when every volume's rows are together and no id is
    missing (one comparison of neighbours, cheaper than hashing every id); else None."""
    values = ids.array
    if len(values) == 0 or bool(ids.isna().any()):
        return None
    try:
        head = np.asarray(values[1:1025] != values[:1024], dtype=bool)
        if 2 * int(head.sum()) > head.size:
            return None  # mostly changes, e.g. rows sorted by time: hashing is the cheaper way
        change = np.asarray(values[1:] != values[:-1], dtype=bool)
    except (TypeError, ValueError):
        return None
    first = np.concatenate([[0], np.flatnonzero(change) + 1]).astype(np.int64)
    if 2 * first.size > len(values) > 1:
        return None  # mostly changes, e.g. rows sorted by time: hashing is the cheaper way
    uniques = list(values.take(first))
    try:
        if len(set(uniques)) != len(uniques):
            return None  # a volume's rows in more than one stretch
    except TypeError:
        return None
    return first, uniques


def _cycle(ids: Any) -> Optional[List[Hashable]]:
    """The ids of one cycle when the rows go round the same volumes in the same order (rows sorted
    by time, each time holding every volume once, in one order: an export's usual layout), found
    by comparing the ids with themselves one cycle on (cheaper than hashing every id, and the
    rows then sort by a transpose); else None."""
    values = ids.array
    n = len(values)
    if n < 2 or bool(ids.isna().any()):
        return None
    try:
        again = np.flatnonzero(np.asarray(values[1 : min(n, 1 << 17)] == values[0], dtype=bool))
        if not again.size:
            return None
        k = int(again[0]) + 1
        if n % k or k == 1 or bool(np.asarray(values[k:] != values[:-k], dtype=bool).any()):
            return None
        uniques = list(values[:k])
        if len(set(uniques)) != k:
            return None
    except (TypeError, ValueError):
        return None
    return uniques


def _stretches(first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The indices ``first[i], first[i] + 1, ..., first[i] + counts[i] - 1`` of every ``i``, in order."""
    total = int(counts.sum())
    out: np.ndarray = np.arange(total, dtype=np.int64) + np.repeat(first - (np.cumsum(counts) - counts), counts)
    return out


def _trace(rows: "pd.DataFrame", options: _Options) -> OpenLoop:
    """One volume's rows of the long DataFrame (its id and time columns made the index) as a
    trace (ebssim.trace.from_pandas)."""
    from .trace import from_pandas

    # A column with no value for this volume is one it does not have (pandas.concat of frames with
    # different columns fills them with NaN), not a gap. A column is typed by this volume's rows:
    # another volume's text cell makes the whole column object, which must cost that volume only.
    return from_pandas(rows.dropna(axis=1, how="all").infer_objects(), dt=options.dt, **options.trace)


def _message(workload: int, err: str, vids: Sequence[Hashable]) -> str:
    """A run's error, named by volume id on an instance: ``workload`` is the engine's index of the
    volume the error is about (-1: about none)."""
    if workload < 0 or len(vids) == 1:
        return err
    return f"volume {vids[workload]!r}: {err}"


def _run_batch(
    groups: List[_Group],
    vols: Mapping[Hashable, Volume],
    traces: _Traces,
    options: _Options,
    wanted: Optional[set[Hashable]],
    step: Optional[float],
) -> Dict[Hashable, Tuple[Dict[str, Any], Optional["pd.DataFrame"]]]:
    out: Dict[Hashable, Tuple[Dict[str, Any], Optional["pd.DataFrame"]]] = {}
    runs: List[Tuple[_Group, Simulation, List[Workload], int, bool]] = []

    def refuse(g: _Group, err: str) -> None:
        for vid in g.vids:
            out[vid] = (_error_row(vols[vid], g, err), None)

    traces.prepare([vid for g in groups for vid in g.vids])
    for g in groups:
        try:
            ws = []
            for vid in g.vids:
                try:
                    ws.append(traces.get(vid))
                except ValueError as e:
                    raise ValueError(f"volume {vid!r}: {e}" if len(g.vids) > 1 else str(e)) from None
            sim = _simulation(g, [vols[v] for v in g.vids], ws, options)
            checked, n = sim._prepare(ws, options.duration_s)
        except ValueError as e:
            refuse(g, str(e))
            continue
        record = wanted is not None and any(v in wanted for v in g.vids)
        if record and step is not None:
            _every(step, sim.dt)  # a step that is not a whole number of steps is the caller's error
        runs.append((g, sim, checked, n, record))
    # run_many steps the lone volumes of one step and length together in the lockstep kernel.
    raws = _core.run_many(
        [
            (sim._sim, sim._natives(ws, n), n, record, 1 if step is None or not record else _every(step, sim.dt))
            for _, sim, ws, n, record in runs
        ],
        max_volume_steps=options.max_volume_steps,
        max_memory_bytes=options.max_memory_bytes,
        threads=options.threads,
        jump=options.jump,
    )
    for (g, sim, ws, _, _), raw in zip(runs, raws):
        if isinstance(raw, tuple):
            refuse(g, _message(*raw, g.vids))
            continue
        for vid, r in zip(g.vids, sim._result(ws, raw)):
            line = r.to_pandas() if wanted is not None and vid in wanted else None
            if line is not None and step is not None:
                line = line.drop(columns=["bound"])
            out[vid] = (_row(r, g), line)
    return out


def _simulation(g: _Group, vols: List[Volume], ws: List[Workload], options: _Options) -> Simulation:
    """The Simulation of one group, with the step simulate() would take."""
    dts = {w.dt for w in ws if isinstance(w, OpenLoop) and w.dt is not None}
    dt = options.dt
    if dt is None:
        if len(dts) > 1:
            raise ValueError(f"the traces of instance {g.instance_id!r} have different steps {sorted(dts)}")
        dt = dts.pop() if dts else 1.0
    inst: Union[str, Instance, None] = g.instance_type
    if inst is None:
        return Simulation(vols, dt=dt)
    if isinstance(inst, str) and options.catalog is not None:
        inst = options.catalog.instance(inst)
    with warnings.catch_warnings():
        # A type without EBS limits runs its volumes alone, as simulate() does, without a warning per
        # instance: the summary's instance_type shows it.
        warnings.simplefilter("ignore", category=NoEbsLimitsWarning)
        return Simulation(vols, dt=dt, instance=_resolve_instance(inst))


def _config(volume: Optional[Volume], g: Optional[_Group]) -> Dict[str, Any]:
    itype = None if g is None else g.instance_type
    return {
        "type": None if volume is None else volume.type,
        "size_gib": math.nan if volume is None else float(volume.size_gib),
        "baseline_iops": math.nan if volume is None else volume.baseline_iops,
        "instance_id": None if g is None else g.instance_id,
        "instance_type": itype.name if isinstance(itype, Instance) else itype,
    }


def _error_row(volume: Optional[Volume], g: Optional[_Group], error: str) -> Dict[str, Any]:
    row: Dict[str, Any] = {c: math.nan for c in SUMMARY_COLUMNS}
    row.update(_config(volume, g))
    row["error"] = error
    return row


def _none_nan(x: Optional[float]) -> float:
    return math.nan if x is None else float(x)


def _row(r: VolumeResult, g: _Group) -> Dict[str, Any]:
    """One volume's summary row, from its result's totals (no per-step series needed)."""
    seconds = r.n_steps * r.dt_s
    per_s = 1.0 / seconds if seconds > 0 else math.nan
    row = _config(r.volume, g)
    row.update(
        duration_s=seconds,
        demanded_iops=r.totals.demanded_ops * per_s,
        served_iops=r.mean_iops,
        demanded_mib_s=r.totals.demanded_bytes * per_s / _MiB,
        served_mib_s=r.totals.served_bytes * per_s / _MiB,
        mean_latency_ms=r.mean_latency_ms,
        cliff_time_s=_none_nan(r.cliff_time_s),
        cliff_count=float(r._cliff_count()),
        bucket_empty_s=r._bucket_empty_s(),
        credits_end=r.totals.credits_end,
        burst_balance_end_pct=_none_nan(r.burst_balance_end_pct),
        backlog_ops_end=r.totals.backlog_ops,
        instance_cliff_time_s=math.nan if r.instance is None else _none_nan(r.instance.cliff_time_s),
        error=None,
    )
    row.update({f"{b}_s": v for b, v in r.bound_s.items()})
    return row


def _frame(rows: List[Dict[str, Any]], ids: List[Hashable]) -> "pd.DataFrame":
    """The summary DataFrame: SUMMARY_COLUMNS, text as object and numbers as float64."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS), index=pd.Index(ids, name="volume_id", dtype=object))
    df = df.astype({c: object if c in _TEXT else "float64" for c in SUMMARY_COLUMNS})
    for c in _TEXT:  # None, not NaN, where there is no text
        df[c] = df[c].where(df[c].notna(), None)
    return df


def _warn_refused(errs: Mapping[Hashable, str], total: int, stacklevel: int) -> None:
    """The one UserWarning of ``errors="warn"``: how many volumes were refused, and the first
    (``stacklevel`` as the caller's own ``warnings.warn`` would take it)."""
    first = next(iter(errs))
    warnings.warn(
        f"{len(errs)} of {total} volumes were not simulated (their row has the error), e.g. {first!r}: {errs[first]}",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


def _every(step: float, dt: float) -> int:
    """Steps per timeline row: ``step`` seconds, a whole number of steps of ``dt``."""
    k = step / dt
    m = int(round(k))
    if m < 1 or abs(k - m) > 1e-9 * k:
        raise ValueError(f"timeline_step={step:g} must be a whole multiple of the step dt={dt:g}")
    return m


# ---------------------------------------------------------------------------------------------
# Dask


def simulate_fleet_dask(
    volumes: Mapping[Hashable, Volume],
    workloads: Any,
    attachments: Optional[Mapping[Hashable, "Attachment"]] = None,
    *,
    threads: Optional[int] = 1,
    errors: str = "warn",
    **options: Any,
) -> FleetResult:
    """:func:`simulate_fleet` on a Dask cluster: the same rows, computed on its workers.

    Parameters
    ----------
    volumes, attachments
        As for :func:`simulate_fleet` (sent to every task: configurations are small).
    workloads : dask.dataframe.DataFrame or dask.bag.Bag
        A long dask DataFrame as :func:`simulate_fleet` reads a pandas one, partitioned by volume:
        each volume's rows in one partition, and the volumes of one instance in one partition
        (e.g. ``ddf.set_index("volume_id")``, or ``ddf.shuffle("instance_id")``). Or a bag of
        :class:`FleetVolume` (each item's ``attachment`` is used; ``attachments`` then adds to it).
    threads : int, optional
        C++ threads per task (default 1: a worker's threads run tasks side by side). None (or
        0): every core of the worker.
    errors : {"warn", "ignore", "raise"}
        As for :func:`simulate_fleet`, once all the rows are back.
    **options
        The keywords of :func:`simulate_fleet` that shape the run (``dt``, ``duration_s``,
        ``id_column``, ``time_column``, ``period``, ``gaps``, ``io_size``, ``read_fraction``,
        ``pattern``, ``catalog``, ``batch_size``, ``max_volume_steps``, ``max_memory_bytes``).
        Timelines stay local: use :func:`simulate_fleet` for them.

    The tasks run on whichever cluster the current ``dask.distributed.Client`` points at
    (``Client("tcp://scheduler:8786")``, or a ``LocalCluster``); ebssim must be installed on the
    workers. The summary is gathered as one pandas DataFrame, in the order of ``volumes``, equal
    to :func:`simulate_fleet`'s.
    """
    if errors not in ERRORS:
        raise ValueError(f"errors={errors!r} must be one of {', '.join(map(repr, ERRORS))}")
    for key in ("timelines", "timeline_step", "progress"):
        if key in options:
            raise ValueError(f"{key}= is not available on Dask: use simulate_fleet for timelines and progress")
    vols = _check_volumes(volumes)
    _threads(threads)  # checked here, not in every task
    kwargs = dict(options, threads=threads, errors="ignore")
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd

    if isinstance(workloads, dd.DataFrame):
        id_column = str(options.get("id_column", "volume_id"))
        # Pickled once here: Dask then ships (and hashes) bytes, not the compiled objects inside Volume.
        payload = pickle.dumps((vols, attachments, kwargs))
        parts = cast(Any, workloads).map_partitions(
            _frame_partition, payload, id_column, meta=_frame([], []).assign(_partition="")
        )
        got = parts.compute()
        return _gather(vols, attachments, got, errors)
    if isinstance(workloads, db.Bag):
        rows = cast(Any, workloads).map_partitions(_bag_partition, pickle.dumps((attachments, kwargs))).compute()
        got = pd.concat([_frame([], []).assign(_partition=""), *rows])
        return _gather(vols, attachments, got, errors)
    raise ValueError(
        f"workloads must be a dask DataFrame (long format, partitioned by volume) or a dask bag of "
        f"FleetVolume, got {type(workloads).__name__}"
    )


def _frame_partition(
    part: "pd.DataFrame", payload: bytes, id_column: str, partition_info: Optional[Dict[str, Any]] = None
) -> "pd.DataFrame":
    """One partition's volumes through simulate_fleet; a Dask task."""
    vols, attachments, kwargs = pickle.loads(payload)
    ids = part.index.unique() if part.index.name == id_column else part[id_column].unique()
    here = {v: vols[v] for v in ids if v in vols}  # ids without a configuration get their error row
    res = simulate_fleet(here, part, attachments, **kwargs)
    number = "?" if partition_info is None else str(partition_info.get("number", "?"))
    return res.summary.assign(_partition=number)


def _bag_partition(items: Iterable[FleetVolume], payload: bytes) -> List["pd.DataFrame"]:
    attachments, kwargs = pickle.loads(payload)
    items = list(items)
    if not items:
        return []
    for it in items:
        if not isinstance(it, FleetVolume):
            raise ValueError(f"the bag holds {a_an(type(it).__name__)}: it must hold ebssim.fleet.FleetVolume items")
    att = dict(attachments or {})
    att.update({it.volume_id: it.attachment for it in items if it.attachment is not None})
    res = simulate_fleet(
        {it.volume_id: it.volume for it in items}, {it.volume_id: it.workload for it in items}, att, **kwargs
    )
    return [res.summary.assign(_partition=uuid.uuid4().hex)]


def _gather(
    vols: Mapping[Hashable, Volume],
    attachments: Optional[Mapping[Hashable, Any]],
    got: "pd.DataFrame",
    errors: str,
) -> FleetResult:
    """The tasks' rows in the order of ``volumes``; an instance split over partitions is an error."""
    groups = _groups(vols, attachments)
    twice = set(got.index[got.index.duplicated()])
    got = got[~got.index.duplicated()]
    where: Dict[Hashable, str] = dict(zip(got.index, got["_partition"]))
    done = cast(Dict[Hashable, Dict[str, Any]], got.drop(columns="_partition").to_dict(orient="index"))
    rows: Dict[Hashable, Dict[str, Any]] = {}
    for g in groups:
        present = [v for v in g.vids if v in where]
        split = g.instance_id is not None and (len(present) < len(g.vids) or len({where[v] for v in present}) > 1)
        for vid in g.vids:
            if vid in twice:
                rows[vid] = _error_row(
                    vols[vid],
                    g,
                    "the volume's rows are in more than one partition: partition the data by volume "
                    "(e.g. ddf.set_index('volume_id'))",
                )
            elif split:
                rows[vid] = _error_row(
                    vols[vid],
                    g,
                    f"the volumes of instance {g.instance_id!r} are not in one partition: partition the data so "
                    f"that each instance's volumes are together (e.g. shuffle on an instance id column)",
                )
            elif vid in where:
                rows[vid] = done[vid]
            else:
                rows[vid] = _error_row(vols[vid], g, "no workload for this volume in any partition")
    extra = [v for v in where if v not in vols]
    for vid in extra:
        rows[vid] = done[vid]
    order = list(vols) + extra
    frame = _frame([rows[v] for v in order], order)
    errs = {v: str(e) for v, e in frame["error"].items() if e is not None}
    if errs and errors == "raise":
        first = next(iter(errs))
        raise ValueError(f"volume {first!r}: {errs[first]}")
    if errs and errors == "warn":
        _warn_refused(errs, len(frame), stacklevel=3)
    return FleetResult(frame, errs)
