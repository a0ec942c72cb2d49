"""Every bad input is a ValueError whose message names the field and the value."""

from __future__ import annotations

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
    with raises(r"workloads\[1\]=.*randread.*ClosedLoop, OpenLoop or Idle"):
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
    with raises(rf"counted_iops={re.escape(shown)}\b"):
        ebssim.burst_duration_s(gp2(100), iops)
    with raises(rf"counted_iops={re.escape(shown)}\b"):
        ebssim.refill_time_s(gp2(100), iops)


def test_plot_argument_errors():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10)
    with raises(r"results is empty"):
        ebssim.plot([])
    with raises(r"time_unit='d'"):
        ebssim.plot(r, time_unit="d")
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
