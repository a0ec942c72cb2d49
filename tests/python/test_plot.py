"""plot(): panels, lines, every cliff marked in the axis's units, the binding limit shaded,
offered I/O next to served, log latency, dates, ax=/axes=, instance panels, distinct labels,
decimation of long runs, and the PNG repr Jupyter shows without %matplotlib inline."""

from __future__ import annotations

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, OpenLoop, Simulation, gp2, gp3, simulate
from matplotlib.figure import Figure

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def cliff_pair():
    w = ClosedLoop(32, "4k")
    # 1 % of the bucket = 54,000 credits; 54,000 / 2,700 = 20 s to the cliff.
    return simulate(gp2(100, burst_balance_pct=1), w, duration_s=60), simulate(gp3(100), w, duration_s=60)


@pytest.fixture(scope="module")
def two_cliffs():
    # 100 GiB gp2 at 0.1 % (5,400 credits), 4 KiB arrivals per second (test_replay.py works it
    # out step by step): dry at 5,400 / (3,000 - 300) = 2.0 s, credits again from 4 s (100
    # arrivals, 300 earned), dry again at 5 + 200 / 2,700 s, still dry at the end (7 s).
    ops = np.array([3000.0, 3000.0, 300.0, 300.0, 100.0, 3000.0, 300.0])
    return simulate(gp2(100, burst_balance_pct=0.1), OpenLoop(ops, ops * 4096))


def data_lines(ax, n):
    """Lines that plot a per-step series of n points."""
    return [ln for ln in ax.lines if len(ln.get_xdata()) == n]


def vertical_lines(ax):
    """Vertical marker lines (axvline): two points at the same x."""
    out = []
    for ln in ax.lines:
        x = np.asarray(ln.get_xdata(), dtype=float)
        if x.shape == (2,) and x[0] == x[1]:
            out.append(float(x[0]))
    return out


def panel(fig, ylabel):
    (ax,) = [a for a in fig.axes if a.get_ylabel() == ylabel]
    return ax


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_one_result(cliff_pair, tmp_path):
    r, _ = cliff_pair
    fig = ebssim.plot(r)
    assert isinstance(fig, Figure)
    ax_iops, ax_bb, ax_lat, ax_bound = fig.axes
    assert [a.get_ylabel() for a in fig.axes] == ["IOPS", "BurstBalance %", "mean latency (ms)", "bound by"]
    (iops_line,) = data_lines(ax_iops, 60)
    np.testing.assert_array_equal(iops_line.get_xdata(), r.time_s)  # 60 s: the axis is in seconds
    np.testing.assert_array_equal(iops_line.get_ydata(), r.iops)
    (bb_line,) = data_lines(ax_bb, 60)
    np.testing.assert_allclose(bb_line.get_ydata(), r.burst_balance_pct)
    (lat_line,) = data_lines(ax_lat, 60)
    np.testing.assert_allclose(lat_line.get_ydata(), r.latency_ms)
    # The cliff (20 s) is marked on the three data panels and labelled above the top one with its
    # time and how long it lasted: to the end of the run.
    for ax in (ax_iops, ax_bb, ax_lat):
        assert vertical_lines(ax) == [pytest.approx(20.0)]
    assert texts(ax_iops) == ["cliff 20 s, to the end"]
    # 32 / 3,000 = 10.7 ms before, 32 / 300 = 107 ms after: a factor of 10, linear axis.
    assert ax_lat.get_yscale() == "linear"
    out = tmp_path / "cliff.png"
    fig.savefig(out)
    assert out.read_bytes()[:8] == PNG


def test_several_results_and_labels(cliff_pair, tmp_path):
    g2, g3 = cliff_pair
    fig = ebssim.plot([g2, g3], labels=["gp2", "gp3"], title="gp2 vs gp3", time_unit="min")
    ax_iops, ax_bb, ax_lat, ax_bound = fig.axes
    lines = data_lines(ax_iops, 60)
    assert [ln.get_label() for ln in lines] == ["gp2", "gp3"]
    np.testing.assert_array_equal(lines[1].get_ydata(), g3.iops)
    # Minutes: the last step starts at 59 s = 0.9833 min; the cliff at 20 s = 1/3 min, labelled
    # in the unit that reads best, not the axis's ("0.333 min").
    assert lines[0].get_xdata()[-1] == pytest.approx(59 / 60)
    assert vertical_lines(ax_iops) == [pytest.approx(20 / 60)]  # gp3 has no cliff
    assert texts(ax_iops) == ["cliff 20 s, to the end"]
    assert len(data_lines(ax_bb, 60)) == 1  # gp3 has no BurstBalance
    assert ax_bb.get_title(loc="right") == "no credit bucket: gp3"  # above the panel: it covers no data
    assert len(data_lines(ax_lat, 60)) == 2
    assert ax_iops.get_title() == "gp2 vs gp3"
    assert ax_bound.get_xlabel() == "time (min)"
    fig.savefig(tmp_path / "pair.png", dpi=50)


def test_default_labels_are_distinct(cliff_pair):
    g2, g3 = cliff_pair
    fig = ebssim.plot([g2, g3])
    assert [ln.get_label() for ln in data_lines(fig.axes[0], 60)] == [str(g2.volume), str(g3.volume)]
    # The same volume twice: numbered; under different workloads: the workloads tell them apart.
    fig = ebssim.plot([g2, g2])
    labels = [ln.get_label() for ln in data_lines(fig.axes[0], 60)]
    assert labels == [f"{g2.volume} #1", f"{g2.volume} #2"]
    other = simulate(gp2(100, burst_balance_pct=1), ClosedLoop(8, "4k"), duration_s=60)
    labels = [ln.get_label() for ln in data_lines(ebssim.plot([g2, other]).axes[0], 60)]
    assert labels == [f"{g2.volume}, {g2.workload}", f"{g2.volume}, {other.workload}"]
    # The bound panel's rows name each in full, on two lines.
    rows = [t.get_text() for t in ebssim.plot([g2, g2]).axes[-1].get_yticklabels()]
    assert rows == [f"gp2 100 GiB (300 IOPS baseline,\nburst 3000, 128 MiB/s) #{i}" for i in (1, 2)]


def test_every_cliff_is_marked(two_cliffs):
    # Two episodes 1.07 s apart: one cliff (docs/model.md, "Cliffs"), from 2 s to the end.
    fig = ebssim.plot(two_cliffs)
    for ax in fig.axes[:3]:
        assert vertical_lines(ax) == [pytest.approx(2.0)]
    assert texts(fig.axes[0]) == ["cliff 2 s, to the end"]
    # Two cliffs 430 s apart (tests/python/test_testing.py): dry at 2 s for 70 s, dry again at
    # 472 + 80,000 / 2,700 = 501.63 s (8.4 min) to the end, 532 s. Each: a line on the data
    # panels, its stretch shaded on the balance panel, a label each (far apart).
    ops = np.concatenate([np.full(2, 3000.0), np.full(70, 300.0), np.full(400, 100.0), np.full(60, 3000.0)])
    r = simulate(gp2(100, burst_balance_pct=0.1), OpenLoop(ops, ops * 4096))
    fig = ebssim.plot(r)
    for ax in fig.axes[:3]:
        assert vertical_lines(ax) == [pytest.approx(2.0), pytest.approx(472 + 80000 / 2700)]
    spans = [p.get_extents() for p in fig.axes[1].patches]
    shaded = [(b.x0, b.x1) for b in (fig.axes[1].transData.inverted().transform_bbox(e) for e in spans)]
    assert shaded == [
        (pytest.approx(2.0), pytest.approx(72.0)),
        (pytest.approx(472 + 80000 / 2700), pytest.approx(532.0)),
    ]
    assert texts(fig.axes[0]) == ["cliff 2 s, 70 s", "cliff 8.4 min, to the end"]


def test_bound_panel_shades_the_binding_limit():
    # gp3 (3,000 IOPS), arrivals 6,000, 0, 0, 6,000, 0: steps 0 and 3 are held by the IOPS cap
    # (3,000 served, 3,000 queued); steps 1 and 4 serve the 3,000 queued exactly (not held).
    ops = np.array([6000.0, 0.0, 0.0, 6000.0, 0.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    fig = ebssim.plot(r)
    (bars,) = fig.axes[-1].collections
    extents = [(p.get_extents().x0, p.get_extents().x1) for p in bars.get_paths()]
    assert extents == [(0.0, 1.0), (3.0, 4.0)]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-1] == "bound by volume_iops"
    # Never held back: no bars, and the panel says so.
    calm = simulate(gp3(100), OpenLoop(ops / 10, ops / 10 * 4096))
    ax = ebssim.plot(calm).axes[-1]
    assert len(ax.collections) == 0 and texts(ax) == ["never held back by a limit"]


def test_offered_next_to_served():
    # gp3 serves 3,000 of 6,000 arrivals per second: the offered I/O is drawn once, a grey area
    # under the lines (what arrived above them was not served).
    ops = np.array([6000.0, 6000.0, 0.0, 0.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    fig = ebssim.plot([r, r], labels=["a", "b"])
    lines = data_lines(fig.axes[0], 4)
    assert [ln.get_label() for ln in lines] == ["a", "b"]
    (area,) = [c for c in fig.axes[0].collections if c.get_label() == "offered"]
    top = {(float(x), float(y)) for x, y in area.get_paths()[0].vertices if y > 0}
    assert top == {(0.0, 6000.0), (1.0, 6000.0)}
    assert [t.get_text() for t in fig.legends[0].get_texts()][:3] == ["a", "b", "offered"]
    # Both volumes were held back alike: the first given is drawn under the second, wider.
    assert lines[0].get_linewidth() > lines[1].get_linewidth()
    assert lines[0].get_zorder() < lines[1].get_zorder()
    # Something waited: the backlog panel is drawn: 3,000, 6,000, 3,000, 0 I/Os.
    assert "waiting I/Os" in [a.get_ylabel() for a in fig.axes]
    (bl,) = data_lines(panel(fig, "waiting I/Os"), 4)[:1]
    np.testing.assert_allclose(bl.get_ydata(), [3000.0, 6000.0, 3000.0, 0.0], atol=1e-6)


def test_latency_on_a_log_axis_when_it_spans_decades():
    ops = np.array([6000.0, 6000.0, 0.0, 0.0, 100.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    # 0.5 ms unthrottled, 1.5 s with 6,000 queued: more than a factor of 30; ticks in the
    # durations one reads, within 0.5 / 1.5 to 1.5 x 2 s.
    ax = panel(ebssim.plot(r), "mean latency")
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1 ms", "10 ms", "100 ms", "1 s"]
    assert panel(ebssim.plot(r, latency_scale="linear"), "mean latency (ms)").get_yscale() == "linear"


def test_dates_on_the_axis():
    pd = pytest.importorskip("pandas")
    from matplotlib.dates import num2date

    r = simulate(gp2(100, burst_balance_pct=1), ClosedLoop(32, "4k"), duration_s=60)
    fig = ebssim.plot(r, start=pd.Timestamp("2025-06-02 09:00"))
    (line,) = data_lines(fig.axes[0], 60)
    assert num2date(line.get_xdata()[0]).replace(tzinfo=None) == pd.Timestamp("2025-06-02 09:00").to_pydatetime()
    # The cliff at 20 s is labelled with its time of day.
    assert texts(fig.axes[0]) == ["cliff 09:00, to the end"]
    assert fig.axes[-1].get_xlabel() == ""
    with pytest.raises(ValueError, match=r"start='monday' is not a date and time"):
        ebssim.plot(r, start="monday")


def test_draw_into_your_own_axes(cliff_pair):
    from matplotlib.figure import Figure as MplFigure

    g2, g3 = cliff_pair
    mine = MplFigure()
    ax = mine.subplots()
    assert ebssim.plot([g2, g3], ax=ax) is mine
    assert [ln.get_label() for ln in data_lines(ax, 60)] == [str(g2.volume), str(g3.volume)]
    mine = MplFigure()
    a1, a2 = mine.subplots(2, 1)
    assert ebssim.plot(g2, panels=["latency", "bound"], axes=[a1, a2]) is mine
    assert a1.get_ylabel() == "mean latency (ms)" and a2.get_ylabel() == "bound by"
    with pytest.raises(ValueError, match=r"axes has 1 Axes for the 2 panels"):
        ebssim.plot(g2, panels=["latency", "bound"], axes=[a1])
    with pytest.raises(ValueError, match=r"ax= draws one panel"):
        ebssim.plot(g2, panels=["latency", "bound"], ax=a1)


def test_instance_panels():
    # dt = 3 s: 1,200 steps, few enough to be drawn one point each.
    sim = Simulation([gp3(1000, iops=16000, throughput_mib_s=1000)] * 2, dt=3, instance="m5.large")
    run = sim.run([ClosedLoop(64, "16k")] * 2, duration_s=3600)
    fig = ebssim.plot(run)
    labels = [a.get_ylabel() for a in fig.axes]
    assert labels == ["IOPS", "mean latency (ms)", "instance balance %", "bound by"]
    inst = fig.axes[2]
    io, by = data_lines(inst, 1200)
    np.testing.assert_allclose(io.get_ydata(), run.instance.io_balance_pct)
    # EBSIOBalance% empties at 1,800 s = 30 min.
    assert vertical_lines(inst) == [pytest.approx(30.0)]
    rows = [t.get_text() for t in fig.axes[-1].get_yticklabels()]
    assert rows[-1] == "m5.large (instance)" and rows[0].startswith("[0] gp3")

    # The instance alone: its EBS IOPS against its limits, its throughput, its balances.
    fig = ebssim.plot(run.instance)
    labels = [a.get_ylabel() for a in fig.axes]
    assert labels == ["instance EBS IOPS", "instance MB/s", "instance balance %", "bound by"]
    (iops,) = data_lines(fig.axes[0], 1200)
    assert iops.get_ydata()[0] == pytest.approx(18750.0) and iops.get_ydata()[-1] == pytest.approx(3600.0)
    assert "maximum 18,750" in texts(fig.axes[0]) and "baseline 3,600" in texts(fig.axes[0])

    # A volume that ran on an instance brings its balances along (simulate(..., instance=)).
    r = simulate(gp3(1000, iops=16000, throughput_mib_s=1000), ClosedLoop(64, "16k"), 600, instance="m5.large")
    assert "instance balance %" in [a.get_ylabel() for a in ebssim.plot(r).axes]


def test_a_month_of_seconds_is_decimated():
    # What keeps the plot quick is checked (a few thousand points drawn, not 2.6 M); its time is a
    # measurement (docs/analysis.md), not a unit test's bound, which failed under load.
    n = 30 * 86400
    rng = np.random.default_rng(0)
    ops = rng.uniform(0, 4000, n)
    r = simulate(gp2(500), OpenLoop(ops, ops * 16384), record=True)
    fig = ebssim.plot(r)
    fig._repr_png_()
    (line,) = [ln for ln in fig.axes[0].lines if ln.get_label() == str(r.volume)]
    x, y = line.get_xdata(), line.get_ydata()
    # About two points (min, max) per pixel column, not 2.6 M.
    assert len(x) < 4000
    # The envelope keeps the extremes: the largest and smallest IOPS of the run are drawn.
    assert float(np.max(y)) == float(np.max(r.iops)) and float(np.min(y)) == float(np.min(r.iops))


def test_png_repr_for_jupyter(cliff_pair):
    fig = ebssim.plot(cliff_pair[0])
    png = fig._repr_png_()
    assert png[:8] == PNG and len(png) > 10_000
    assert isinstance(fig, Figure)  # still a matplotlib Figure: savefig and friends work


def test_argument_errors(cliff_pair):
    r = cliff_pair[0]
    with pytest.raises(ValueError, match=r"results is empty"):
        ebssim.plot([])
    with pytest.raises(ValueError, match=r"time_unit='week' must be one of s, min, h, d"):
        ebssim.plot(r, time_unit="week")
    with pytest.raises(ValueError, match=r"labels has 1 entries for 2 results"):
        ebssim.plot([r, r], labels=["one"])
    with pytest.raises(ValueError, match=r"panel 'cpu' is not one of iops, throughput"):
        ebssim.plot(r, panels=["cpu"])
    with pytest.raises(ValueError, match=r"panel 'instance' needs an instance result"):
        ebssim.plot(r, panels=["instance"])
    with pytest.raises(ValueError, match=r"latency_scale='ln' must be one of auto, log, linear"):
        ebssim.plot(r, latency_scale="ln")
    with pytest.raises(ValueError, match=r"results\[0\]=3 must be a VolumeResult, InstanceResult or RunResult"):
        ebssim.plot([3])  # type: ignore[list-item]
    nr = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10, record=False)
    with pytest.raises(ValueError, match=r"record=False"):
        ebssim.plot(nr)


def test_results_that_carry_their_own_dates():
    # A result with a time_index of dates (traces with a DatetimeIndex) or a t0 Timestamp: simulated
    # time 0 is its first step's date minus its t0_s (here 60 s into the Simulation).
    pd = pytest.importorskip("pandas")
    import types

    from ebssim.plot import _result_start

    idx = pd.date_range("2025-06-02 00:01", periods=3, freq="1s")
    dated = types.SimpleNamespace(time_index=idx, t0_s=60.0)
    assert _result_start(dated) == np.datetime64("2025-06-02T00:00:00", "us")
    stamped = types.SimpleNamespace(t0=pd.Timestamp("2025-06-02 00:01", tz="UTC"), t0_s=60.0)
    assert _result_start(stamped) == np.datetime64("2025-06-02T00:00:00", "us")
    assert _result_start(types.SimpleNamespace(t0_s=0.0)) is None


def test_a_pandas_trace_puts_its_dates_on_the_axis():
    # OpenLoop.from_pandas keeps the trace's start; the plot's x axis then shows wall-clock time.
    pd = pytest.importorskip("pandas")
    from matplotlib.dates import num2date

    idx = pd.date_range("2026-11-02 09:00", periods=120, freq="60s")
    df = pd.DataFrame({"ops": np.full(120, 60.0), "bytes": np.full(120, 60.0 * 4096)}, index=idx)
    r = simulate(gp3(100), OpenLoop.from_pandas(df))
    fig = ebssim.plot(r)
    lines = data_lines(fig.axes[0], 120)  # served and offered
    assert lines
    for line in lines:
        assert num2date(line.get_xdata()[0]).replace(tzinfo=None) == pd.Timestamp("2026-11-02 09:00").to_pydatetime()
    assert fig.axes[-1].get_xlabel() == ""  # dates, not "time (s)"


# --------------------------------------------------------------------------------------------
# A week and a month of CloudWatch minutes on three volumes: every line seen, no text cut or
# overlapping, the cliffs marked outside the data
# --------------------------------------------------------------------------------------------


def _cloudwatch_minutes(days: int):
    """The notebook's demand (notebooks/04_replay.ipynb): a diurnal load, lighter at weekends,
    and a nightly batch on weekdays, as 1-minute sums from Monday 2 June 2025."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)
    index = pd.date_range("2025-06-02", periods=days * 24 * 60, freq="1min")
    hour = index.hour + index.minute / 60
    weekday = index.day_of_week < 5
    daytime = 200 + 1100 * np.clip(np.sin((hour - 7) / 14 * np.pi), 0, None) * np.where(weekday, 1.0, 0.6)
    batch = np.where(weekday & (hour >= 1) & (hour < 2.5), 3400, 0)
    ops = (daytime + batch) * rng.lognormal(0, 0.1, len(index)) * 60
    return index[0], OpenLoop(ops, ops * 16384, read_fraction=0.7)


@pytest.fixture(scope="module", params=[7, 30], ids=["week", "month"])
def long_replay(request):
    start, trace = _cloudwatch_minutes(request.param)
    volumes = (gp2(500), gp3(500), gp3(500, iops=6000))
    return start, [simulate(v, trace, dt=60) for v in volumes]


def _texts(fig):
    """Every text drawn: annotations, titles, labels, legends, and the tick labels in view."""
    from matplotlib.text import Text

    ticks, out = set(), []
    for ax in fig.axes:
        for axis, (lo, hi), i in ((ax.xaxis, ax.get_xlim(), 0), (ax.yaxis, ax.get_ylim(), 1)):
            for minor in (False, True):
                for t in axis.get_ticklabels(minor=minor):
                    ticks.add(id(t))
                    if t.get_visible() and t.get_text().strip() and min(lo, hi) <= t.get_position()[i] <= max(lo, hi):
                        out.append(t)
            ticks |= {id(t.label2) for t in axis.get_major_ticks() + axis.get_minor_ticks()}
            ticks |= {id(t.label1) for t in axis.get_major_ticks() + axis.get_minor_ticks()}
    for t in fig.findobj(Text):
        if id(t) not in ticks and t.get_visible() and t.get_text().strip():
            out.append(t)
    return out


def _rendered(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def test_long_replays_read_well(long_replay):
    start, runs = long_replay
    fig = ebssim.plot(runs, start=start)
    before = _rendered(fig)
    renderer = fig.canvas.get_renderer()
    texts_drawn = _texts(fig)
    words = " ".join(t.get_text().replace("\n", " ") for t in texts_drawn)
    # Labels are never cut: each volume is named in full, in the legend and the bound panel.
    assert "…" not in words and "..." not in words
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    rows = [t.get_text().replace("\n", " ") for t in fig.axes[-1].get_yticklabels()]
    for r in runs:
        assert str(r.volume) in legend and str(r.volume) in rows
    # No two texts overlap (1 px of slack for antialiasing).
    boxes = [(t, t.get_window_extent(renderer).expanded(1.0, 1.0).padded(-1)) for t in texts_drawn]
    for i, (t, b) in enumerate(boxes):
        for u, c in boxes[i + 1 :]:
            assert not b.overlaps(c), f"{t.get_text()!r} overlaps {u.get_text()!r}"
    # The cliff labels sit outside every panel: they hide no data.
    cliff_labels = [t for t in fig.axes[0].texts if t.get_text().startswith("cliff ")]
    assert cliff_labels
    for t in cliff_labels:
        b = t.get_window_extent(renderer)
        for ax in fig.axes:
            assert not b.overlaps(ax.get_window_extent(renderer)), t.get_text()
    # Every line of the IOPS panel can be seen along the run: hiding it changes the colour (by more
    # than antialiasing does, 40 of 255) in 90 % of the panel's pixel columns. (Hidden under the
    # others but where they part, in the nightly batches, it changed 26-74 % of them.) The offered
    # I/O is an area under the lines: seen in half of them (not at night, where all serve it).
    iops_panel = fig.axes[0]
    names = {str(r.volume) for r in runs} | {"offered"}
    drawn = [a for a in iops_panel.lines + iops_panel.collections if a.get_label() in names]
    assert len(drawn) == 4
    box = iops_panel.get_window_extent(renderer)
    rows = slice(int(before.shape[0] - box.y1) + 1, int(before.shape[0] - box.y0) - 1)
    cols = slice(int(box.x0) + 1, int(box.x1) - 1)
    for artist in drawn:
        artist.set_visible(False)
        after = _rendered(fig)[rows, cols].astype(np.int16)
        artist.set_visible(True)
        seen = float(np.any(np.abs(after - before[rows, cols]) > 40, axis=(0, 2)).mean())
        need = 0.5 if artist.get_label() == "offered" else 0.9
        assert seen >= need, f"{artist.get_label()} is seen in {seen:.0%} of the panel's width"
