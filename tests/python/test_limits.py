"""Long runs are bounded and interruptible: work and memory are refused up front with the figure
and the way out, and Ctrl-C stops a run in the compiled loop, leaving the Simulation as it was.

Recorded bytes per step (docs/model.md, "Limits"): 49 per volume (6 doubles and a bound code),
33 for the instance (4 doubles and a code).
"""

from __future__ import annotations

import _thread
import re
import threading
import time
from pathlib import Path

import ebssim
import pytest
from ebssim import ClosedLoop, Idle, LimitError, Limits, OpenLoop, Simulation, gp2, gp3, simulate


def test_limit_error_is_a_value_error():
    assert issubclass(LimitError, ValueError)
    assert {"LimitError", "Limits", "limits"} <= set(ebssim.__all__)


def test_defaults():
    assert repr(ebssim.limits) == "Limits(max_volume_steps=10000000000, max_memory_bytes=4294967296)"
    assert Limits().max_volume_steps == 10**10
    assert Limits().max_memory_bytes == 4 * 2**30


# --------------------------------------------------------------------------------------------
# Work: volume-steps per run
# --------------------------------------------------------------------------------------------


def test_a_run_of_hours_is_refused_at_once():
    # 1e12 steps of 1 s: hours of CPU; refused before a single step.
    t0 = time.perf_counter()
    with pytest.raises(LimitError) as e:
        simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=1e12, record=False)
    assert time.perf_counter() - t0 < 1.0
    msg = str(e.value)
    assert msg.startswith("duration_s=1000000000000.0 at dt=1: n_steps=1000000000000 x 1 volume = 1e+12 volume-steps")
    assert "max_volume_steps=1e+10" in msg
    # The figure: 1e12 volume-steps at 50-100 M per second is 1e4 to 2e4 s.
    assert "1e+04 to 2e+04 s of CPU" in msg
    assert "shorter runs" in msg and "coarser dt" in msg and "ebssim.limits" in msg


def test_a_fine_step_over_an_hour_is_refused():
    # 3,600 s / 1e-9 s = 3.6e12 steps.
    with pytest.raises(LimitError, match=r"^duration_s=3600 at dt=1e-09: n_steps=3600000000000 x 1 volume"):
        simulate(gp2(100), Idle(), duration_s=3600, dt=1e-9, record=False)


def test_work_counts_every_volume():
    sim = Simulation([gp2(100)] * 4)
    # 4 volumes x 6 steps = 24 > 20; 4 x 5 = 20 is at the limit.
    assert sim.rest(5, max_volume_steps=20).instance is None
    with pytest.raises(LimitError, match=r"n_steps=6 x 4 volumes = 24 volume-steps exceeds max_volume_steps=20"):
        sim.rest(6, max_volume_steps=20)
    assert sim.time_s == 5.0  # the refused run did not move the clock


def test_session_limit_and_keyword(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ebssim.limits, "max_volume_steps", 10)
    assert simulate(gp2(100), Idle(), duration_s=10).n_steps == 10
    with pytest.raises(LimitError, match=r"max_volume_steps=10\b"):
        simulate(gp2(100), Idle(), duration_s=11)
    # The keyword wins over the session's setting, in both directions.
    assert simulate(gp2(100), Idle(), duration_s=11, max_volume_steps=11).n_steps == 11
    with pytest.raises(LimitError, match=r"max_volume_steps=5\b"):
        Simulation([gp2(100)]).run([Idle()], 6, max_volume_steps=5)


def test_trace_run_names_its_length():
    trace = OpenLoop([1.0] * 3, [4096.0] * 3)
    with pytest.raises(LimitError, match=r"^the trace's 3 steps: n_steps=3 x 1 volume = 3 volume-steps"):
        simulate(gp2(100), trace, max_volume_steps=2)


@pytest.mark.parametrize(
    "value, shown",
    [(-1, "-1"), (1.5, "1.5"), (float("inf"), "inf"), (float("nan"), "nan"), (2.0**63, "9.223372036854776e+18")],
)
def test_bad_limit_values(value, shown):
    with pytest.raises(ValueError, match=rf"^max_volume_steps={re.escape(shown)} must be a whole number >= 0"):
        ebssim.limits.max_volume_steps = value
    with pytest.raises(ValueError, match=rf"^max_memory_bytes={re.escape(shown)} must be a whole number >= 0"):
        simulate(gp2(100), Idle(), duration_s=1, max_memory_bytes=value)
    assert ebssim.limits.max_volume_steps == 10**10  # unchanged


@pytest.mark.parametrize("value", [True, "1e11", None])
def test_limit_values_of_the_wrong_type(value):
    with pytest.raises(ValueError, match=rf"^max_volume_steps={re.escape(repr(value))} must be a whole number"):
        Limits(max_volume_steps=value)


def test_whole_floats_are_accepted_as_limits():
    assert Limits(max_volume_steps=2e10).max_volume_steps == 20_000_000_000


# --------------------------------------------------------------------------------------------
# Memory: the recorded series of the whole run, and OpenLoop.constant's arrays
# --------------------------------------------------------------------------------------------


def test_recorded_memory_is_summed_over_volumes():
    # 3 gp2 volumes x 49 bytes = 147 bytes per step. 30,000,000 steps are 4.41e9 bytes, above
    # 4 GiB = 4.295e9, although each volume's series (1.47e9 bytes, 30 M steps) is far below the
    # old per-volume cap of 2e8 steps.
    sim = Simulation([gp2(100)] * 3)
    with pytest.raises(LimitError) as e:
        sim.rest(30_000_000)
    msg = str(e.value)
    assert "recording n_steps=30000000 for 3 volumes takes 4.41e+09 bytes (147 per step)" in msg
    assert "max_memory_bytes=4.295e+09" in msg
    assert "record=False" in msg
    # Totals only: 9e7 volume-steps, nothing recorded.
    assert sim.rest(30_000_000, record=False)[0].n_steps == 30_000_000


def test_recorded_memory_includes_the_instance():
    # 2 volumes x 49 + 33 for the instance = 131 bytes per step: 10 steps = 1,310 bytes.
    sim = Simulation([gp3(100), gp3(100)], instance="m5.large")
    w = [ClosedLoop(8, "16k")] * 2
    assert sim.run(w, 10, max_memory_bytes=1310).instance is not None
    with pytest.raises(LimitError, match=r"2 volumes and the instance takes 1441 bytes \(131 per step\)"):
        sim.run(w, 11, max_memory_bytes=1310)


def test_open_loop_constant_refuses_a_huge_trace():
    # 1e9 steps x 2 arrays x 8 bytes = 1.6e10 bytes (it used to allocate them).
    t0 = time.perf_counter()
    with pytest.raises(LimitError) as e:
        OpenLoop.constant(100, "4k", 1e9)
    assert time.perf_counter() - t0 < 1.0
    msg = str(e.value)
    assert msg.startswith("duration_s=1000000000.0 at dt=1.0 is 1,000,000,000 steps")
    assert "1.6e+10 bytes (16 per step), above max_memory_bytes=4.295e+09" in msg
    # 10 steps are 160 bytes.
    assert OpenLoop.constant(100, "4k", 10, max_memory_bytes=160).n_steps == 10
    with pytest.raises(LimitError, match=r"176 bytes"):
        OpenLoop.constant(100, "4k", 11, max_memory_bytes=160)


@pytest.mark.parametrize("iops, shown", [(-1, "-1"), (float("nan"), "nan"), (float("inf"), "inf")])
def test_open_loop_constant_rate(iops, shown):
    with pytest.raises(ValueError, match=rf"^iops={shown} must be a finite number of I/Os per second >= 0"):
        OpenLoop.constant(iops, "4k", 10)


# --------------------------------------------------------------------------------------------
# Ctrl-C
# --------------------------------------------------------------------------------------------

SIMULATION_PY = Path(ebssim.simulation.__file__).resolve()


def _interrupted_run(sim: Simulation, workloads, after_s: float = 0.3) -> float:
    """Run for up to 5e9 steps (a minute or more) with SIGINT arriving after `after_s`; returns
    how long the KeyboardInterrupt took to arrive after it. Stepped (jump=False): a constant
    closed loop would otherwise be jumped over in closed form in a few ms."""
    timer = threading.Timer(after_s, _thread.interrupt_main)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            sim.run(workloads, 5e9 * sim.dt / len(sim.volumes), record=False, jump=False)
    finally:
        timer.cancel()
        timer.join()
    # Raised from inside the compiled run, not before it started.
    assert Path(e.traceback[-1].path).resolve() == SIMULATION_PY
    return time.perf_counter() - t0 - after_s


def test_ctrl_c_stops_a_long_run_and_leaves_the_state():
    sim = Simulation([gp2(100)])
    sim.run([ClosedLoop(32, "4k")], 10)
    # 10 s at 3,000 IOPS against 300 earned: 5.4e6 - 10 x 2,700.
    assert sim.credits(0) == 5_373_000.0
    late = _interrupted_run(sim, [ClosedLoop(32, "4k")])
    assert late < 2.0  # polled every 50 ms; generous for a loaded machine
    assert sim.time_s == 10.0
    assert sim.credits(0) == 5_373_000.0
    # The simulation carries on as if the interrupted run never happened: 1,990 more seconds of
    # burst empty the bucket at 10 + 5,373,000 / 2,700 = 2,000 s.
    r = sim.run([ClosedLoop(32, "4k")], 2000)
    assert r[0].cliff_time_s == pytest.approx(2000.0)


def test_ctrl_c_stops_volumes_sharing_an_instance():
    w = [ClosedLoop(64, "16k")] * 2
    interrupted = Simulation([gp3(1000, iops=16000, throughput_mib_s=1000)] * 2, instance="m5.large")
    twin = Simulation([gp3(1000, iops=16000, throughput_mib_s=1000)] * 2, instance="m5.large")
    interrupted.run(w, 100)
    twin.run(w, 100)
    assert _interrupted_run(interrupted, w) < 2.0
    # Same state as the twin that never ran it: the next 2,000 s are identical, instance included.
    a = interrupted.run(w, 2000)
    b = twin.run(w, 2000)
    assert a.instance.cliff_time_s == b.instance.cliff_time_s
    assert a.instance.cliff_time_s is not None
    assert list(a.instance.iops) == list(b.instance.iops)
    assert [r.totals["served_ops"] for r in a] == [r.totals["served_ops"] for r in b]


def test_ctrl_c_stops_independent_volumes_on_two_threads():
    w = [ClosedLoop(32, "4k")] * 4
    interrupted = Simulation([gp2(100), gp2(200), gp2(300), gp3(100)])
    interrupted.run(w, 10, threads=2)
    assert _interrupted_run(interrupted, w) < 2.0  # every core (two threads here), each polled via the caller
    twin = Simulation([gp2(100), gp2(200), gp2(300), gp3(100)])
    twin.run(w, 10, threads=1)
    assert interrupted.time_s == 10.0
    assert [interrupted.credits(i) for i in range(4)] == [twin.credits(i) for i in range(4)]
    # 100 GiB gp2: 5.4e6 - 10 x 2,700, as above.
    assert interrupted.credits(0) == 5_373_000.0
