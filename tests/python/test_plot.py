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
    # The cliff (20 s) is marked on the three data panels and labelled in seconds.
    for ax in (ax_iops, ax_bb, ax_lat):
        assert vertical_lines(ax) == [pytest.approx(20.0)]
    assert texts(ax_iops) == ["cliff 20 s"]
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
    # Minutes: the last step starts at 59 s = 0.9833 min; the cliff at 20 s = 1/3 min.
    assert lines[0].get_xdata()[-1] == pytest.approx(59 / 60)
    assert vertical_lines(ax_iops) == [pytest.approx(20 / 60)]  # gp3 has no cliff
    assert texts(ax_iops) == ["cliff 0.333 min"]
    assert len(data_lines(ax_bb, 60)) == 1  # gp3 has no BurstBalance
    assert any("no credit bucket: gp3" in t for t in texts(ax_bb))
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
    # The bound panel's rows keep both ends of a long name.
    rows = [t.get_text() for t in ebssim.plot([g2, g2]).axes[-1].get_yticklabels()]
    assert rows == ["gp2 100 GiB (300 IOPS…128 MiB/s) #1", "gp2 100 GiB (300 IOPS…128 MiB/s) #2"]


def test_every_cliff_is_marked(two_cliffs):
    fig = ebssim.plot(two_cliffs)
    # 2.0 s and 5 + 200 / 2,700 = 5.074 s, on each data panel; two labels, 3 s (44 % of the
    # axis) apart, so each keeps its own.
    for ax in fig.axes[:3]:
        assert vertical_lines(ax) == [pytest.approx(2.0), pytest.approx(5 + 200 / 2700)]
    assert texts(fig.axes[0]) == ["cliff 2 s", "cliff 5.07 s"]


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
    # gp3 serves 3,000 of 6,000 arrivals per second: the offered line is drawn once, dotted.
    ops = np.array([6000.0, 6000.0, 0.0, 0.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    fig = ebssim.plot([r, r], labels=["a", "b"])
    lines = data_lines(fig.axes[0], 4)
    assert [ln.get_label() for ln in lines] == ["a", "offered", "b"]
    np.testing.assert_array_equal(lines[1].get_ydata(), [6000.0, 6000.0, 0.0, 0.0])
    assert [t.get_text() for t in fig.legends[0].get_texts()][:3] == ["a", "b", "offered"]
    # Something waited: the backlog panel is drawn: 3,000, 6,000, 3,000, 0 I/Os.
    assert "waiting I/Os" in [a.get_ylabel() for a in fig.axes]
    (bl,) = data_lines(panel(fig, "waiting I/Os"), 4)[:1]
    np.testing.assert_allclose(bl.get_ydata(), [3000.0, 6000.0, 3000.0, 0.0], atol=1e-6)


def test_latency_on_a_log_axis_when_it_spans_decades():
    ops = np.array([6000.0, 6000.0, 0.0, 0.0, 100.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    # 0.5 ms unthrottled, 1.5 s with 6,000 queued: more than a factor of 30.
    assert panel(ebssim.plot(r), "mean latency (ms)").get_yscale() == "log"
    assert panel(ebssim.plot(r, latency_scale="linear"), "mean latency (ms)").get_yscale() == "linear"


def test_dates_on_the_axis():
    pd = pytest.importorskip("pandas")
    from matplotlib.dates import num2date

    r = simulate(gp2(100, burst_balance_pct=1), ClosedLoop(32, "4k"), duration_s=60)
    fig = ebssim.plot(r, start=pd.Timestamp("2025-06-02 09:00"))
    (line,) = data_lines(fig.axes[0], 60)
    assert num2date(line.get_xdata()[0]).replace(tzinfo=None) == pd.Timestamp("2025-06-02 09:00").to_pydatetime()
    # The cliff at 20 s is labelled with its time of day.
    assert texts(fig.axes[0]) == ["cliff 09:00"]
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
