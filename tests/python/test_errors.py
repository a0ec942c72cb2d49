"""Every bad input is a ValueError whose message names the field and the value."""

from __future__ import annotations

import dataclasses
import math
import re

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, Simulation, Volume, gp2, gp3, simulate

NAN = float("nan")
INF = float("inf")


def raises(pattern: str):
    return pytest.raises(ValueError, match=pattern)


# --------------------------------------------------------------------------------------------
# Volumes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [gp2, gp3], ids=["gp2", "gp3"])
@pytest.mark.parametrize(
    "size, shown",
    [(0, "0"), (-1, "-1"), (-100.5, "-100.5"), (0.5, "0.5"), (NAN, "nan"), (INF, "inf"), (-INF, "-inf")],
)
def test_bad_size(make, size, shown):
    with raises(rf"size_gib={re.escape(shown)}\b"):
        make(size)


@pytest.mark.parametrize("size", [16385, 20000, 65536])
def test_gp2_size_above_16tib(size):
    with raises(rf"size_gib={size}\b.*16384"):
        gp2(size)


@pytest.mark.parametrize("size", [65537, 100000])
def test_gp3_size_above_64tib(size):
    with raises(rf"size_gib={size}\b.*65536"):
        gp3(size)


def test_size_limits_are_inclusive():
    assert gp2(1).size_gib == 1 and gp2(16384).size_gib == 16384
    assert gp3(1).size_gib == 1 and gp3(65536).size_gib == 65536


def test_gp3_iops_above_500_per_gib():
    # 10 GiB x 500 = 5,000 IOPS allowed; 5,001 is not.
    assert gp3(10, iops=5000).max_iops == 5000
    with raises(r"iops=5001\b.*500 IOPS per GiB"):
        gp3(10, iops=5001)
    # 159 GiB x 500 = 79,500 < 80,000; 160 GiB reaches 80,000.
    with raises(r"iops=80000\b.*500 IOPS per GiB"):
        gp3(159, iops=80000)
    assert gp3(160, iops=80000).max_iops == 80000


def test_gp3_included_3000_iops_on_tiny_volume_is_fine():
    # The 3,000 included IOPS apply regardless of size (1 GiB x 500 = 500 < 3,000).
    assert gp3(1).max_iops == 3000
    assert gp3(1, iops=3000).max_iops == 3000
    with raises(r"iops=3001\b.*500 IOPS per GiB"):
        gp3(6, iops=3001)  # 6 x 500 = 3,000


def test_gp3_throughput_above_quarter_mib_per_iops():
    # 3,000 IOPS x 0.25 = 750 MiB/s
    assert gp3(100, iops=3000, throughput_mib_s=750).max_throughput_mib_s == 750
    with raises(r"throughput_mib_s=751\b.*0\.25 MiB/s per provisioned IOPS"):
        gp3(100, iops=3000, throughput_mib_s=751)
    # default iops 3,000 applies too
    with raises(r"throughput_mib_s=1000\b"):
        gp3(100, throughput_mib_s=1000)
    # 8,000 IOPS x 0.25 = 2,000 MiB/s
    assert gp3(16, iops=8000, throughput_mib_s=2000).max_throughput_mib_s == 2000


@pytest.mark.parametrize("iops, shown", [(2999, "2999"), (0, "0"), (-5, "-5"), (80001, "80001"), (1e6, "1000000")])
def test_gp3_iops_outside_3000_80000(iops, shown):
    with raises(rf"iops={shown}\b.*3000 to 80000"):
        gp3(1000, iops=iops)


@pytest.mark.parametrize("tput", [124, 0, 2001])
def test_gp3_throughput_outside_125_2000(tput):
    with raises(rf"throughput_mib_s={tput}\b.*125 to 2000"):
        gp3(1000, iops=16000, throughput_mib_s=tput)


def test_gp3_infinite_settings():
    with raises(r"iops=inf\b"):
        gp3(1000, iops=INF)
    with raises(r"throughput_mib_s=inf\b"):
        gp3(1000, throughput_mib_s=INF)


def test_gp2_given_iops_or_throughput():
    with raises(r"iops=3000\b.*gp2"):
        Volume("gp2", 100, iops=3000)
    with raises(r"throughput_mib_s=200\b.*gp2"):
        Volume("gp2", 100, throughput_mib_s=200)


def test_gp3_given_burst_balance():
    with raises(r"burst_balance_pct=50\b.*gp3"):
        Volume("gp3", 100, burst_balance_pct=50)


@pytest.mark.parametrize("pct", [-1, 100.5, INF])
def test_gp2_burst_balance_out_of_range(pct):
    with raises(rf"burst_balance_pct={re.escape(f'{pct:g}')}"):
        gp2(100, burst_balance_pct=pct)


@pytest.mark.parametrize("latency", [0, -1, INF])
def test_bad_latency(latency):
    with raises(rf"latency_ms={re.escape(f'{latency:g}')}"):
        gp2(100, latency_ms=latency)


@pytest.mark.parametrize("name", ["io3", "st2", "GP2", "", "gp4"])
def test_unknown_volume_type(name):
    with raises(rf"type={re.escape(repr(name))}.*gp2, gp3"):
        Volume(name, 100)


# An explicit NaN for an optional setting is an error, not "use the default".
@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: gp3(1000, iops=NAN), "iops"),
        (lambda: gp3(1000, throughput_mib_s=NAN), "throughput_mib_s"),
        (lambda: gp2(100, burst_balance_pct=NAN), "burst_balance_pct"),
        (lambda: gp2(100, latency_ms=NAN), "latency_ms"),
    ],
    ids=["gp3-iops", "gp3-throughput", "gp2-burst-balance", "latency"],
)
def test_explicit_nan_setting_is_rejected(make, field):
    with raises(rf"{field}=nan"):
        make()


# --------------------------------------------------------------------------------------------
# Steps and durations
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt, shown", [(0, "0"), (-1, "-1"), (-0.001, "-0.001"), (NAN, "nan"), (INF, "inf")])
def test_bad_dt(dt, shown):
    with raises(rf"dt={re.escape(shown)}\b"):
        Simulation([gp2(100)], dt=dt)
    with raises(rf"dt={re.escape(shown)}\b"):
        simulate(gp2(100), Idle(), duration_s=10, dt=dt)


@pytest.mark.parametrize(
    "duration, dt",
    [(10.5, 1.0), (1.0005, 0.001), (0.75, 0.5), (2.0, 3.0)],
)
def test_duration_not_a_multiple_of_dt(duration, dt):
    with raises(rf"duration_s={re.escape(repr(duration))}.*dt={re.escape(repr(dt))}"):
        simulate(gp2(100), ClosedLoop(1, "4k"), duration_s=duration, dt=dt)


def test_duration_whole_multiple_of_fine_dt_is_accepted():
    # 0.3 / 0.1 is 2.9999999999999996 in floating point; it is still 3 steps.
    assert simulate(gp2(100), Idle(), duration_s=0.3, dt=0.1).n_steps == 3
    assert simulate(gp2(100), Idle(), duration_s=1.234, dt=0.001).n_steps == 1234


@pytest.mark.parametrize("duration, shown", [(0, "0"), (-5, "-5"), (NAN, "nan"), (INF, "inf")])
def test_bad_duration(duration, shown):
    with raises(rf"duration_s={re.escape(shown)}\b"):
        simulate(gp2(100), ClosedLoop(1, "4k"), duration_s=duration)


def test_duration_required_without_trace():
    with raises(r"duration_s is required"):
        simulate(gp2(100), ClosedLoop(1, "4k"))
    with raises(r"duration_s is required"):
        Simulation([gp2(100)]).rest(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Open-loop traces
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ops, nbytes, pattern",
    [
        ([1.0, NAN, 1.0], [4096.0] * 3, r"ops\[1\]=nan"),
        ([1.0, 1.0, INF], [4096.0] * 3, r"ops\[2\]=inf"),
        ([-1.0, 1.0, 1.0], [4096.0] * 3, r"ops\[0\]=-1\b"),
        ([1.0] * 3, [4096.0, NAN, 4096.0], r"bytes\[1\]=nan"),
        ([1.0] * 3, [4096.0, 4096.0, INF], r"bytes\[2\]=inf"),
        ([1.0] * 3, [4096.0, -4096.0, 4096.0], r"bytes\[1\]=-4096\b"),
        ([1.0] * 3, [4096.0, 4096.0, -INF], r"bytes\[2\]=-inf"),
    ],
)
def test_bad_trace_values(ops, nbytes, pattern):
    with raises(pattern):
        simulate(gp2(100), OpenLoop(ops, nbytes))


def test_bytes_without_ops():
    with raises(r"bytes\[1\]=4096.*ops\[1\]=0"):
        simulate(gp2(100), OpenLoop([1.0, 0.0], [4096.0, 4096.0]))


def test_mismatched_ops_bytes_lengths():
    with raises(r"ops has 3 steps but bytes has 2"):
        simulate(gp2(100), OpenLoop([1.0, 1.0, 1.0], [4096.0, 4096.0]))


def test_trace_not_1d_or_not_numbers():
    with raises(r"ops must be 1-D"):
        OpenLoop(np.ones((2, 2)), np.ones((2, 2)))
    with raises(r"bytes must be 1-D"):
        OpenLoop(np.ones(2), np.ones((2, 1)))
    with raises(r"ops must be a 1-D array of numbers"):
        OpenLoop(["x", "y"], [1.0, 2.0])


def test_trace_length_differs_from_duration():
    w = OpenLoop([1.0, 1.0], [4096.0, 4096.0])
    with raises(r"duration_s=3\b.*3 steps.*trace has 2 steps"):
        simulate(gp2(100), w, duration_s=3)
    # 2 s at dt = 0.5 is 4 steps, not 2.
    with raises(r"duration_s=2\b.*4 steps.*trace has 2 steps"):
        simulate(gp2(100), w, duration_s=2, dt=0.5)
    # The trace's own length is accepted.
    assert simulate(gp2(100), w, duration_s=1, dt=0.5).n_steps == 2


def test_traces_of_different_lengths_in_one_run():
    sim = Simulation([gp2(100), gp3(100)])
    with raises(r"different lengths \[1, 2\]"):
        sim.run([OpenLoop([1.0], [1.0]), OpenLoop([1.0, 1.0], [1.0, 1.0])])


# --------------------------------------------------------------------------------------------
# Workload parameters
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["4q", "-4k", "", "k", "4 kk", "1e3", "four"])
def test_bad_io_size_string(size):
    with raises(rf"io_size={re.escape(repr(size))} is not a size"):
        ClosedLoop(1, size)


@pytest.mark.parametrize("size, shown", [(0, "0"), (-4096, "-4096"), (NAN, "nan"), (INF, "inf"), ("0k", "'0k'")])
def test_io_size_not_positive_finite(size, shown):
    with raises(rf"io_size={re.escape(shown)}.*positive, finite"):
        ClosedLoop(1, size)


@pytest.mark.parametrize("size", [None, True, [4096]])
def test_io_size_wrong_type(size):
    with raises(rf"io_size={re.escape(repr(size))}"):
        ClosedLoop(1, size)


def test_io_size_above_one_gib():
    with raises(r"io_bytes=2147483648\b.*1 GiB"):
        simulate(gp2(100), ClosedLoop(1, "2g"), duration_s=1)


@pytest.mark.parametrize("pattern", ["seq", "Random", "randread", ""])
def test_bad_pattern(pattern):
    with raises(rf"pattern={re.escape(repr(pattern))}.*random, sequential"):
        ClosedLoop(1, "4k", pattern=pattern)
    with raises(rf"pattern={re.escape(repr(pattern))}"):
        OpenLoop([1.0], [4096.0], pattern=pattern)


@pytest.mark.parametrize("rf, shown", [(1.5, "1.5"), (-0.1, "-0.1"), (NAN, "nan"), (INF, "inf")])
def test_read_fraction_outside_0_1(rf, shown):
    with raises(rf"read_fraction={re.escape(shown)}\b"):
        simulate(gp2(100), ClosedLoop(1, "4k", read_fraction=rf), duration_s=1)
    with raises(rf"read_fraction={re.escape(shown)}\b"):
        simulate(gp2(100), OpenLoop([1.0], [4096.0], read_fraction=rf))


@pytest.mark.parametrize("n, shown", [(0, "0"), (-1, "-1"), (-0.5, "-0.5"), (NAN, "nan"), (INF, "inf")])
def test_in_flight_not_positive(n, shown):
    with raises(rf"in_flight={re.escape(shown)}\b"):
        simulate(gp2(100), ClosedLoop(n, "4k"), duration_s=1)


@pytest.mark.parametrize("st, shown", [(0, "0"), (-1, "-1"), (NAN, "nan"), (INF, "inf")])
def test_bad_service_time(st, shown):
    with raises(rf"service_time_ms={re.escape(shown)}\b"):
        ClosedLoop(1, "4k", service_time_ms=st)
    with raises(rf"service_time_ms={re.escape(shown)}\b"):
        OpenLoop([1.0], [4096.0], service_time_ms=st)


def test_bad_workload_is_rejected_when_built():
    with raises(r"in_flight=0\b"):
        ClosedLoop(0, "4k")


def test_error_in_second_workload_names_it():
    sim = Simulation([gp2(100), gp2(100)])
    with raises(r"workloads\[1\]=.*randread.*ClosedLoop, OpenLoop, PiecewiseOpenLoop, PhasedClosedLoop or Idle"):
        sim.run([Idle(), "randread"], duration_s=1)
    # Nothing ran: the clock did not move and credits are untouched.
    assert sim.time_s == 0.0
    assert sim.credits(0) == 5.4e6


# --------------------------------------------------------------------------------------------
# Simulations
# --------------------------------------------------------------------------------------------


def test_workloads_count_mismatch():
    sim = Simulation([gp2(100), gp3(100)])
    with raises(r"workloads has 1 entries but the simulation has 2 volumes"):
        sim.run([Idle()], duration_s=1)
    with raises(r"workloads has 3 entries but the simulation has 2 volumes"):
        sim.run([Idle(), Idle(), Idle()], duration_s=1)


def test_no_volumes_or_not_volumes():
    with raises(r"volumes is empty"):
        Simulation([])
    with raises(r"volumes\[1\] must be an ebssim.Volume, got str"):
        Simulation([gp2(100), "gp3"])  # type: ignore[list-item]


# --------------------------------------------------------------------------------------------
# Closed forms and plot arguments
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pct, shown", [(101, "101"), (-1, "-1"), (NAN, "nan")])
def test_closed_form_burst_balance_out_of_range(pct, shown):
    with raises(rf"burst_balance_pct={re.escape(shown)}\b"):
        ebssim.burst_duration_s(gp2(100), burst_balance_pct=pct)
    with raises(rf"burst_balance_pct={re.escape(shown)}\b"):
        ebssim.refill_time_s(gp2(100), burst_balance_pct=pct)


@pytest.mark.parametrize("iops, shown", [(-1, "-1"), (NAN, "nan"), (INF, "inf")])
def test_closed_form_bad_iops(iops, shown):
    # The message names the argument the caller passed (iops), not the core's counted_iops.
    with raises(rf"^iops={re.escape(shown)}\b"):
        ebssim.burst_duration_s(gp2(100), iops)
    with raises(rf"^iops={re.escape(shown)}\b"):
        ebssim.refill_time_s(gp2(100), iops)


def test_plot_argument_errors():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10)
    with raises(r"results is empty"):
        ebssim.plot([])
    with raises(r"time_unit='week'"):
        ebssim.plot(r, time_unit="week")
    with raises(r"labels has 1 entries for 2 results"):
        ebssim.plot([r, r], labels=["one"])
    nr = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10, record=False)
    with raises(r"record=False"):
        ebssim.plot(nr)


def test_valid_boundaries_do_not_raise():
    # The edges of every range are accepted (guards against off-by-one validation).
    assert gp3(1000, iops=3000).max_iops == 3000
    assert gp3(1000, iops=80000).max_iops == 80000
    assert gp3(1000, iops=16000, throughput_mib_s=125).max_throughput_mib_s == 125
    assert gp3(1000, iops=16000, throughput_mib_s=2000).max_throughput_mib_s == 2000
    assert gp2(100, burst_balance_pct=0).initial_credits == 0
    assert gp2(100, burst_balance_pct=100).initial_credits == 5.4e6
    r = simulate(gp2(100), ClosedLoop(1, "4k", read_fraction=0.0), duration_s=1)
    assert r.n_steps == 1
    r = simulate(gp2(100), ClosedLoop(1, "4k", read_fraction=1.0), duration_s=1)
    assert not math.isnan(r.mean_iops)
    r = simulate(gp2(100), OpenLoop([0.0, 5.0], [0.0, 0.0]))  # I/Os without bytes are allowed
    assert r.totals["served_ops"] == pytest.approx(5.0)


# --------------------------------------------------------------------------------------------
# Wrong types: bools, strings and None are not numbers (numpy scalars are)
# --------------------------------------------------------------------------------------------


def _gp2_run(**kw):
    return simulate(gp2(100), ClosedLoop(1, "4k"), **{"duration_s": 2, **kw})


@pytest.mark.parametrize(
    "make, field, shown",
    [
        (lambda: gp2(True), "size_gib", "True"),
        (lambda: gp2(np.True_), "size_gib", "np.True_"),
        (lambda: gp2("100"), "size_gib", "'100'"),
        (lambda: gp2(None), "size_gib", "None"),
        (lambda: gp3(100, iops="4000"), "iops", "'4000'"),
        (lambda: gp3(100, throughput_mib_s=True), "throughput_mib_s", "True"),
        (lambda: gp2(100, burst_balance_pct="50"), "burst_balance_pct", "'50'"),
        (lambda: gp2(100, latency_ms=False), "latency_ms", "False"),
        (lambda: ClosedLoop("4"), "in_flight", "'4'"),
        (lambda: ClosedLoop(True), "in_flight", "True"),
        (lambda: ClosedLoop(4, read_fraction=True), "read_fraction", "True"),
        (lambda: ClosedLoop(4, service_time_ms="1"), "service_time_ms", "'1'"),
        (lambda: ClosedLoop(4, think_time_ms=None), "think_time_ms", "None"),
        (lambda: OpenLoop([1.0], [4096.0], read_fraction="1"), "read_fraction", "'1'"),
        (lambda: OpenLoop.constant(True, "4k", 10), "iops", "True"),
        (lambda: OpenLoop.constant(100, "4k", "10"), "duration_s", "'10'"),
        (lambda: _gp2_run(duration_s=True), "duration_s", "True"),
        (lambda: _gp2_run(duration_s="2"), "duration_s", "'2'"),
        (lambda: Simulation([gp2(100)], dt=None), "dt", "None"),  # simulate(dt=None): the trace's or 1 s
        (lambda: _gp2_run(dt=True), "dt", "True"),
        (lambda: _gp2_run(record="no"), "record", "'no'"),
        (lambda: Simulation([gp2(100)], dt="1"), "dt", "'1'"),
        (lambda: ebssim.burst_duration_s(gp2(100), None), "iops", "None"),
        (lambda: ebssim.burst_duration_s(gp2(100), "3000"), "iops", "'3000'"),
        (lambda: ebssim.refill_time_s(gp2(100), True), "iops", "True"),
        (lambda: ebssim.burst_duration_s(gp2(100), burst_balance_pct="5"), "burst_balance_pct", "'5'"),
        (lambda: ebssim.instance("m5.large", burst_s="900"), "burst_s", "'900'"),
        (lambda: ebssim.instance("m5.large", max_iops=True), "max_iops", "True"),
        (lambda: ebssim.instance("m5.large", nitro="yes"), "nitro", "'yes'"),
    ],
)
def test_bools_strings_and_none_are_not_numbers(make, field, shown):
    with raises(rf"^{field}={re.escape(shown)} must be"):
        make()


def test_numpy_scalars_are_numbers():
    assert gp2(np.int64(100)).baseline_iops == 300  # 3 x 100
    v = gp3(np.float32(100), iops=np.int32(4000), throughput_mib_s=np.float64(250))
    assert (v.max_iops, v.max_throughput_mib_s) == (4000, 250)
    assert str(v) == "gp3 100 GiB (4000 IOPS, 250 MiB/s)"
    r = simulate(gp2(100), ClosedLoop(np.int64(32), "4k"), duration_s=np.float64(10), dt=np.float64(1))
    assert r.n_steps == 10 and r.iops[0] == pytest.approx(3000.0)
    # 5.4e6 / (3,000 - 300) = 2,000 s
    assert ebssim.burst_duration_s(gp2(100), np.float64(3000)) == pytest.approx(2000.0)


def test_str_of_a_volume_never_raises():
    # gp2("100") used to build and then fail in str(); now it cannot be built.
    with raises(r"size_gib='100'"):
        gp2("100")
    assert str(gp2(np.int16(100))).startswith("gp2 100 GiB")


# --------------------------------------------------------------------------------------------
# Steps that do not fit, indices, shapes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "duration, dt, shown",
    [(1, 1e-300, r"duration_s=1 at dt=1e-300 is 1e\+300 steps"), (1e19, 1.0, r"duration_s=1e\+19 at dt=1.0")],
)
def test_more_steps_than_can_be_counted(duration, dt, shown):
    # Beyond 2^53 steps a float duration cannot tell n from n + 1 steps (was pybind11's TypeError).
    with raises(rf"{shown}.*2\^53.*coarser dt"):
        simulate(gp2(100), ClosedLoop(1, "4k"), duration_s=duration, dt=dt)


def test_credits_index_out_of_range():
    sim = Simulation([gp2(100), gp3(100)])
    assert sim.credits(0) == 5.4e6
    assert sim.credits(1) == 0.0  # gp3 has no bucket
    assert sim.credits(-2) == 5.4e6  # from the end, as for a list
    for i in (2, 5, -3):
        with pytest.raises(IndexError, match=rf"^volume index {i} is out of range: the simulation has 2 volumes$"):
            sim.credits(i)
    with pytest.raises(IndexError, match=r"has 1 volume$"):
        Simulation([gp2(100)]).credits(5)
    for bad in (1.0, True, "0"):
        with raises(rf"^i={re.escape(repr(bad))} must be a volume index"):
            sim.credits(bad)


def test_latency_spread_below_the_bound():
    r = simulate(gp3(100), ClosedLoop(32, "4k"), duration_s=10)
    with raises(r"^service_cv=1e-06 must be between 0.001 and 10"):
        dataclasses.replace(r.latency_model, service_cv=1e-6)
    with raises(r"^wait_cv=True must be a number"):
        dataclasses.replace(r.latency_model, wait_cv=True)
    with raises(r"^percentiles\[1\]='99' must be a number"):
        r.latency_percentiles([50, "99"])
    with raises(r"^percentiles=50 must be a sequence"):
        r.latency_percentiles(50)  # type: ignore[arg-type]
    # At the bound the service time is all but constant and with wait_cv 0 every I/O takes the
    # mean latency of its step, 32 / 3,000 s (Little's law, 3,000 IOPS cap) = 10.667 ms, to 0.1 %.
    p = r.latency_percentiles([50], model=dataclasses.replace(r.latency_model, service_cv=1e-3, wait_cv=0))
    assert p[50] == pytest.approx(32 / 3000 * 1e3, rel=1e-3)


# --------------------------------------------------------------------------------------------
# Values that used to give NaN or inf instead of an error
# --------------------------------------------------------------------------------------------


def test_in_flight_beyond_the_per_step_demand_bound():
    # 1e308 I/Os / 0.5038 ms is infinite: the totals were NaN.
    with raises(r"^in_flight=1e\+308 offers inf I/Os per step.*1e\+15 per step.*max_demand_per_step"):
        simulate(gp2(100), ClosedLoop(1e308, "4k"), duration_s=2)
    # With a 1 s service time and 1 s steps a loop offers in_flight I/Os per step: 1e15 is the
    # bound itself (accepted, finite totals), 2e15 is above it.
    r = simulate(gp3(100), ClosedLoop(1e15, "4k", service_time_ms=1000), duration_s=2)
    assert r.totals["served_ops"] == pytest.approx(6000.0)  # gp3's 3,000 IOPS for 2 s
    assert math.isfinite(r.totals["demanded_ops"]) and math.isfinite(r.mean_latency_ms)
    with raises(r"^in_flight=2000000000000000 offers 2e\+15 I/Os per step"):
        simulate(gp3(100), ClosedLoop(2e15, "4k", service_time_ms=1000), duration_s=2)


@pytest.mark.parametrize(
    "ops, pattern",
    [
        (np.array([1.0 + 1.0j, 2.0]), r"^ops must be a 1-D array of numbers .*complex128"),
        (np.array([True, False]), r"^ops must be a 1-D array of numbers .*bool"),
        (np.array(["1", "2"]), r"^ops must be a 1-D array of numbers .*<U1"),
        (np.array([1.0, None], dtype=object), r"^ops must be a 1-D array of numbers .*object"),
        (np.ma.masked_array([1.0, 2.0], mask=[False, True]), r"^ops is a masked array with 1 masked values"),
        (np.array([]), r"^ops is empty: a trace needs at least one step"),
        ([], r"^ops is empty"),
    ],
    ids=["complex", "bool", "str", "object", "masked", "empty-array", "empty-list"],
)
def test_trace_arrays_that_would_lose_information(ops, pattern):
    with raises(pattern):
        OpenLoop(ops, [4096.0] * len(ops))


def test_masked_array_without_masked_values_is_its_data():
    plain = simulate(gp2(100), OpenLoop([1000.0, 4000.0], [4096e3, 4096 * 4000.0]))
    masked = simulate(
        gp2(100), OpenLoop(np.ma.masked_array([1000.0, 4000.0]), np.ma.masked_array([4096e3, 4096 * 4000.0]))
    )
    np.testing.assert_array_equal(plain.iops, masked.iops)


@pytest.mark.parametrize("iops, shown", [(NAN, "nan"), (-5, "-5"), (INF, "inf")])
def test_closed_forms_reject_bad_iops_even_without_a_bucket(iops, shown):
    # gp3 has no bucket, so the answer was inf whatever the demand.
    with raises(rf"^iops={shown} must be a finite number"):
        ebssim.burst_duration_s(gp3(100), iops)
    with raises(rf"^iops={shown} must be a finite number"):
        ebssim.refill_time_s(gp3(100), iops)
    assert ebssim.burst_duration_s(gp3(100), 3000) == INF  # a good demand still gives inf
    with raises(r"^burst_balance_pct=nan"):
        ebssim.burst_duration_s(gp3(100), 3000, burst_balance_pct=NAN)
    with raises(r"^volume='gp2' must be an ebssim.Volume"):
        ebssim.burst_duration_s("gp2", 3000)  # type: ignore[arg-type]


def test_window_bounds():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10)
    span = r"\(the run spans 0 to 10 s in steps of 1 s\)"
    with raises(rf"^start_s=nan, end_s=5: both must be finite.*{span}"):
        r.window(NAN, 5)
    with raises(rf"^start_s=0, end_s=inf: both must be finite.*{span}"):
        r.window(0, INF)
    with raises(rf"^start_s=8 is after end_s=2 {span}"):
        r.window(8, 2)
    with raises(r"^start_s='0' must be a time in seconds"):
        r.window("0", 5)
    # In order and finite: steps 0..4 at 3,000 IOPS (the burst cap).
    assert r.window(0, 5)["iops"] == pytest.approx(3000.0)


# --------------------------------------------------------------------------------------------
# Messages that named the wrong thing
# --------------------------------------------------------------------------------------------


def test_missing_size_is_named_as_none_not_nan():
    with raises(r"^size_gib=None must be a size in GiB"):
        Volume("gp2", None)  # type: ignore[arg-type]


def test_instance_override_nan_names_the_field():
    # Was "max_iops is missing: the instance is not EBS-optimized".
    with raises(r"^max_iops=nan must be a finite number$"):
        ebssim.instance("m5.large", max_iops=NAN)
    with raises(r"^baseline_mb_s=nan"):
        ebssim.Instance("x", 1000, 2000, NAN, 100)


def test_sequences_of_volumes_and_workloads():
    with raises(r"^volumes=.*must be a sequence of ebssim.Volume"):
        Simulation(gp2(100))  # type: ignore[arg-type]
    sim = Simulation([gp2(100)])
    with raises(r"^workloads=.*must be a sequence with one workload per volume"):
        sim.run(ClosedLoop(1, "4k"), 1)  # type: ignore[arg-type]
    with raises(r"^figsize=\(9,\) must be \(width, height\)"):
        ebssim.plot(simulate(gp2(100), Idle(), duration_s=2), figsize=(9,))  # type: ignore[arg-type]
    with raises(r"^figsize height='7' must be a number of inches"):
        ebssim.plot(simulate(gp2(100), Idle(), duration_s=2), figsize=(9, "7"))  # type: ignore[arg-type]


def test_service_time_takes_a_number_of_bytes():
    # 0.5 ms + 4,096 / 2^30 s
    assert gp2(100).service_time_s(4096) == pytest.approx(0.5e-3 + 4096 / 2**30)
    with raises(r"^io_bytes='4096' must be a number of bytes"):
        gp2(100).service_time_s("4096")  # type: ignore[arg-type]
