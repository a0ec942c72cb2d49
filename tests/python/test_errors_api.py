"""Issue 19, the public API's part: nothing lost, nothing accepted silently. Every bad input is a
ValueError naming the field, the value and the limit (on the command line: one ``ebssim: error:``
line and exit status 2); a result's arrays cannot be written into; a bad cell costs only its
volume's row; a Simulation shared by two threads runs once after the other."""

from __future__ import annotations

import math
import re
import threading
import warnings

import ebssim
import numpy as np
import pandas as pd
import pytest
from ebssim import ClosedLoop, Recording, Simulation, gp2, gp3, simulate
from ebssim.advise import BatchJob, advise, burst_balance_alarm, gp3_for, modify_volume_plan
from ebssim.burst import closed_loop_rate, counted_iops
from ebssim.cost import monthly_cost
from ebssim.fleet import simulate_fleet
from ebssim.latency import closed_loop_latency_s, latency_moments, latency_quantiles

NAN = float("nan")
INF = float("inf")
#: The stated limit on requests in a month (ebssim.cost.MAX_IO_REQUESTS_PER_MONTH).
MAX_IO_REQUESTS_PER_MONTH = 1e15


def raises(pattern: str):
    return pytest.raises(ValueError, match=pattern)


def one_error_line(r, *words: str) -> None:
    """The CLI's answer to bad input: nothing on stdout, one ``ebssim: error:`` line, exit 2."""
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ebssim: error: "), r.stderr
    assert "internal error" not in lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])


# --------------------------------------------------------------------------------------------
# Recording(out=...): one buffer per series; instance series need an instance
# --------------------------------------------------------------------------------------------


def _shared_buffers():
    b = np.zeros(100)
    yield "the same array", {"iops": b, "credits": b}, ("iops", "credits")
    big = np.zeros(150)
    yield "overlapping slices", {"iops": big[:100], "credits": big[50:]}, ("iops", "credits")
    two = np.zeros((2, 100))
    yield "a view of the same rows", {"iops": two[0], "latency_s": two.reshape(2, 100)[0]}, ("iops", "latency_s")


@pytest.mark.parametrize("what, out, names", list(_shared_buffers()), ids=lambda x: x if isinstance(x, str) else "")
def test_recording_refuses_series_sharing_a_buffer(what, out, names):
    with raises(rf"out\['{names[0]}'\] and out\['{names[1]}'\] share memory"):
        Recording(series=("iops", "credits", "latency_s"), out=out)


def test_recording_refuses_a_volume_and_an_instance_series_sharing_a_buffer():
    b = np.zeros(10)
    with raises(r"out\['iops'\] and instance_out\['iops'\] share memory"):
        Recording(series=("iops",), out={"iops": b}, instance_series=("iops",), instance_out={"iops": b})


def test_recording_keeps_separate_buffers_of_one_array():
    # Two rows of one array do not overlap: each series gets its own, and both hold their numbers.
    two = np.zeros((2, 100))
    r = simulate(
        gp2(100),
        ClosedLoop(32, "4k"),
        100,
        record=Recording(series=("iops", "credits"), out={"iops": two[0], "credits": two[1]}),
    )
    assert r.iops[0] == 3000.0 and r.credits[0] == 5.4e6 - 2700  # burst 3,000 IOPS, 300 earned a second
    assert two[0, 99] == 3000.0 and two[1, 99] == 5.4e6 - 100 * 2700


def test_instance_series_without_an_instance_is_refused():
    rec = Recording(series=("iops",), instance_series=("iops", "io_balance_pct"))
    with raises(r"instance_series=\('iops', 'io_balance_pct'\).*no instance"):
        simulate(gp2(100), ClosedLoop(4, "4k"), 10, record=rec)
    with raises(r"instance_series.*no instance"):
        Simulation([gp2(100), gp3(100)]).run([ClosedLoop(4, "4k")] * 2, 10, record=rec)
    # With an instance it records them.
    r = simulate(gp2(100), ClosedLoop(4, "4k"), 10, record=rec, instance="m5.large")
    assert r.instance is not None and r.instance.recorded == ("iops", "io_balance_pct")


# --------------------------------------------------------------------------------------------
# simulate_fleet: a bad cell in a long DataFrame costs its volume only; argument types
# --------------------------------------------------------------------------------------------


def _long_frame_with_a_bad_cell() -> pd.DataFrame:
    t = pd.date_range("2026-01-01", periods=10, freq="60s")
    frames = [
        pd.DataFrame(
            {"volume_id": v, "time": t, "read_ops": np.full(10, 6000.0), "read_bytes": np.full(10, 6000.0 * 4096)}
        )
        for v in ("a", "b", "c")
    ]
    df = pd.concat(frames, ignore_index=True)
    df["read_ops"] = df["read_ops"].astype(object)
    df.loc[13, "read_ops"] = "n/a"  # volume b's fourth period
    return df


@pytest.mark.parametrize("errors", ["ignore", "warn"])
def test_fleet_bad_cell_costs_only_its_volume(errors):
    vols = {v: gp2(100) for v in ("a", "b", "c")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fleet = simulate_fleet(vols, _long_frame_with_a_bad_cell(), errors=errors)
    s = fleet.summary
    # 6,000 reads in each 60 s period: 100 IOPS, below the 300 baseline, served in full.
    assert s.loc["a", "served_iops"] == 100.0 and s.loc["c", "served_iops"] == 100.0
    assert s.loc["a", "error"] is None and s.loc["c", "error"] is None
    assert list(fleet.errors) == ["b"]
    assert "read_ops" in fleet.errors["b"] and math.isnan(s.loc["b", "served_iops"])
    refused = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(refused) == (1 if errors == "warn" else 0)
    if refused:
        assert "1 of 3 volumes" in str(refused[0].message) and "'b'" in str(refused[0].message)


def test_fleet_bad_cell_raises_naming_its_volume():
    vols = {v: gp2(100) for v in ("a", "b", "c")}
    with raises(r"volume 'b': read_ops"):
        simulate_fleet(vols, _long_frame_with_a_bad_cell(), errors="raise")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"catalog": "x"}, r"catalog='x' must be an ebssim.Catalog"),
        ({"catalog": {"m5.large": {}}}, r"catalog=.* must be an ebssim.Catalog"),
        ({"progress": "yes"}, r"progress='yes' must be True or False"),
        ({"progress": 1}, r"progress=1 must be True or False"),
    ],
)
def test_fleet_argument_types(kwargs, message):
    from ebssim.aws import Attachment

    with raises(message):
        simulate_fleet(
            {"a": gp2(100)}, {"a": ClosedLoop(4, "4k")}, {"a": Attachment("i-1", "m5.large")}, duration_s=10, **kwargs
        )


# --------------------------------------------------------------------------------------------
# The advisor: job=, alarm_minutes=, gp3_for, recent modifications
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("job", ["big", 60, {"minutes": 60}])
def test_advise_job_must_be_a_batch_job(job):
    with raises(r"job=.* must be an ebssim.advise.BatchJob"):
        advise({"v": gp2(100)}, "eu-west-1", job=job)


@pytest.mark.parametrize("minutes", [-5, 0, NAN, INF, -INF, True, "15"])
def test_advise_alarm_minutes_is_checked(minutes):
    # Checked up front for every fleet (not only where a gp2 volume needs an alarm), and not
    # turned into a note in the advice.
    for vols in ({"v": gp2(100)}, {"v": gp3(100)}):
        with raises(r"alarm_minutes=.* must be a (positive, finite )?number of minutes"):
            advise(vols, "eu-west-1", job=BatchJob(minutes=1), alarm_minutes=minutes)


@pytest.mark.parametrize("minutes", [-5, 0, NAN, INF, True])
def test_burst_balance_alarm_warning_minutes_is_checked(minutes):
    with raises(r"warning_minutes=.* must be a (positive, finite )?number of minutes"):
        burst_balance_alarm(gp2(100), warning_minutes=minutes)


@pytest.mark.parametrize("minutes", [True, NAN, 0, "60"])
def test_batch_job_minutes_is_checked(minutes):
    with raises(r"minutes=.* must be a (positive )?number of minutes"):
        BatchJob(minutes=minutes)


@pytest.mark.parametrize(
    "args, field",
    [
        ((100, NAN, 125), "iops=nan"),
        ((100, INF, 125), "iops=inf"),
        ((100, -5, 125), "iops=-5"),
        ((100, "3000", 125), "iops='3000'"),
        ((100, 3000, NAN), "throughput_mib_s=nan"),
        ((100, 3000, -INF), "throughput_mib_s=-inf"),
        ((100, 3000, -1), "throughput_mib_s=-1"),
        ((100, 3000, True), "throughput_mib_s=True"),
    ],
)
def test_gp3_for_refuses_what_is_not_a_rate(args, field):
    with raises(rf"{re.escape(field)} must be"):
        gp3_for(*args)


def test_recent_modifications_of_an_unknown_volume():
    fleet = advise({"vol-a": gp2(2000), "vol-b": gp3(100)}, "eu-west-1", job=BatchJob(minutes=1))
    with raises(r"recent_modifications names vol-zz, which is not among the volumes \(vol-a, vol-b\)"):
        modify_volume_plan(fleet, recent_modifications={"vol-zz": 1})
    # Pairs: the known volumes are the pairs'.
    pairs = [("vol-a", gp2(2000), gp3(2000))]
    with raises(r"recent_modifications names vol-b, vol-zz, which are not among the volumes \(vol-a\)"):
        modify_volume_plan(pairs, recent_modifications={"vol-zz": 1, "vol-b": 0, "vol-a": 1})
    # A volume that is not modified is still one of the fleet's.
    assert modify_volume_plan(fleet, recent_modifications={"vol-b": 3}).warnings == []


# --------------------------------------------------------------------------------------------
# The analysis helpers
# --------------------------------------------------------------------------------------------

LAT = [0.001, 0.002]
DONE = [10.0, 10.0]


MODEL = ebssim.LatencyModel(0.0005, 0.0005)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"read_service_s": True}, "read_service_s=True"),
        ({"write_service_s": "0.001"}, "write_service_s='0.001'"),
        ({"read_fraction": None}, "read_fraction=None"),
        ({"service_cv": True}, "service_cv=True"),
        ({"wait_cv": "4"}, "wait_cv='4'"),
        ({"instance_wait_cv": -1.0}, "instance_wait_cv=-1"),
    ],
)
def test_latency_model_checks_its_fields(kwargs, field):
    args = {"read_service_s": 0.0005, "write_service_s": 0.0005, **kwargs}
    with raises(re.escape(field)):
        ebssim.LatencyModel(**args)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"model": 0.0005}, "model must be an ebssim.LatencyModel"),
        ({"mean_latency_s": ["1ms", "2ms"]}, "mean_latency_s"),
        ({"mean_latency_s": [True, False]}, "mean_latency_s"),
        ({"completions": ["a", "b"]}, "completions"),
        ({"completions": 5.0}, "completions"),
        ({"direction": "reads"}, "direction='reads'"),
        ({"bound": [1.5, 2.0]}, "bound must be a 1-d array of Bound codes"),
    ],
)
@pytest.mark.parametrize("fn", ["latency_moments", "latency_quantiles"])
def test_latency_helpers_check_their_arguments(fn, kwargs, field):
    args = {"mean_latency_s": LAT, "completions": DONE, "model": MODEL, "direction": "all", "bound": None, **kwargs}
    with raises(re.escape(field)):
        if fn == "latency_moments":
            latency_moments(
                args["mean_latency_s"],
                args["completions"],
                args["model"],
                bound=args["bound"],
                direction=args["direction"],
            )
        else:
            latency_quantiles(
                args["mean_latency_s"],
                args["completions"],
                [0.5],
                args["model"],
                bound=args["bound"],
                direction=args["direction"],
            )


@pytest.mark.parametrize(
    "lat, done, field",
    [
        ([0.001, 0.001], [1.0, NAN], r"completions\[1\]=nan must be a finite number >= 0"),
        ([0.001, 0.001], [INF, 1.0], r"completions\[0\]=inf must be a finite number >= 0"),
        ([0.001, 0.001], [1.0, -2.0], r"completions\[1\]=-2 must be a finite number >= 0"),
        ([0.001, -0.001], [1.0, 1.0], r"mean_latency_s\[1\]=-0.001 must be a finite number >= 0"),
        ([INF, 0.001], [1.0, 1.0], r"mean_latency_s\[0\]=inf must be a finite number >= 0"),
    ],
)
@pytest.mark.parametrize("fn", ["latency_moments", "latency_quantiles"])
def test_latency_helpers_refuse_bad_steps(fn, lat, done, field):
    # The core's rule (latency.cpp): a count of completions is finite and >= 0, a mean latency NaN
    # (nothing completed) or finite and >= 0; NaN counts were skipped before, negative means read
    # as the service time.
    with raises(field):
        if fn == "latency_moments":
            latency_moments(lat, done, MODEL)
        else:
            latency_quantiles(lat, done, [0.5], MODEL)


def test_latency_helpers_skip_steps_without_completions():
    # NaN means (the engine's "nothing completed") are skipped: only the 0.002 s step counts, so
    # the mean is 0.002 s (wait 0.0015 s plus the 0.0005 s mean service time).
    mean, _ = latency_moments([NAN, 0.002], [3.0, 5.0], MODEL)
    assert mean == pytest.approx(0.002, rel=1e-12)


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: gp2(100, latency_ms=1e300), r"latency_ms=1e\+300 must be > 0 and at most 10000 ms"),
        (lambda: gp2(100, latency_ms=10000.5), r"latency_ms=10000.5 must be > 0 and at most 10000 ms"),
        (lambda: ebssim.Volume("st1", 500, transfer_mib_s=0.05), r"transfer_mib_s=0.05 must be at least 0.1 MiB/s"),
        (lambda: ClosedLoop(4, "4k", service_time_ms=1e300), r"service_time_ms=1e\+300 must be > 0 and at most 10000"),
        (lambda: ClosedLoop(4, 0.5), r"io_bytes=0.5 must be at least 1 byte"),
        (lambda: ClosedLoop(4, 0.999), r"io_bytes=0.999 must be at least 1 byte"),
    ],
)
def test_service_times_and_io_sizes_have_limits(make, field):
    # max_service_time_s = 10 s (latency.hpp): a volume's latency_ms, a workload's own service
    # time, a 1 MiB transfer (transfer_mib_s >= 1 MiB / 10 s); an I/O is at least one byte.
    assert ebssim._core.max_service_time_s == 10.0
    with raises(field):
        make()


def test_service_times_and_io_sizes_at_their_limits_are_accepted():
    assert gp2(100, latency_ms=10000).latency_ms == 10000
    assert ClosedLoop(4, 1).io_bytes == 1
    assert ClosedLoop(4, 1.5).io_bytes == 1.5  # a mean size of a mix may be fractional
    r = simulate(gp2(100), ClosedLoop(1, "4k", service_time_ms=10000), 20.0)
    assert r.totals.served_ops == pytest.approx(2.0, rel=1e-12)  # one I/O per 10 s


@pytest.mark.parametrize(
    "iops, field",
    [([NAN, 100.0], r"iops\[0\]=nan"), ([100.0, -1.0], r"iops\[1\]=-1"), ([INF], r"iops\[0\]=inf"), ("x", "iops='x'")],
)
def test_closed_loop_latency_needs_rates(iops, field):
    with raises(field + r" must (be|hold)"):
        closed_loop_latency_s(gp2(100), ClosedLoop(4, "4k"), iops)


def test_closed_loop_latency_of_good_rates():
    # Little's law: 4 in flight at 100 IOPS is 40 ms; none served is NaN; never below the
    # service time (0.5 ms + 4 KiB at 1,024 MiB/s).
    got = closed_loop_latency_s(gp2(100), ClosedLoop(4, "4k"), [[100.0, 0.0], [1e9, 400.0]])
    assert got.shape == (2, 2)
    assert got[0, 0] == pytest.approx(0.04) and math.isnan(got[0, 1]) and got[1, 1] == pytest.approx(0.01)
    assert got[1, 0] == pytest.approx(0.0005 + 4096 / 2**30)


@pytest.mark.parametrize("flag_value", ["yes", 1, 0, None])
@pytest.mark.parametrize("fn", [counted_iops, closed_loop_rate])
def test_with_credits_must_be_a_bool(fn, flag_value):
    with raises(rf"with_credits={re.escape(repr(flag_value))} must be True or False"):
        fn(gp2(100), ClosedLoop(4, "4k"), with_credits=flag_value)


# --------------------------------------------------------------------------------------------
# Windows outside the run
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("start, end", [(200, 300), (100, 150), (-50, 0), (40.2, 40.7), (50, 50)])
def test_window_without_a_step_is_refused(start, end):
    r = simulate(gp2(100), ClosedLoop(32, "4k"), 100)
    with raises(rf"window\(start_s={start!r}, end_s={end!r}\) holds no step: the run spans 0 to 100 s in steps of 1 s"):
        r.window(start, end)


def test_window_without_a_step_of_a_recording_in_intervals():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), 120, record=Recording(every_s=60))
    with raises(r"holds no step: the run spans 0 to 120 s"):
        r.window(120, 180)
    # Past the end is fine when the window holds steps: its steps are the run's last.
    assert r.window(60, 1e9).iops == 3000.0


# --------------------------------------------------------------------------------------------
# Cost: requests per month
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1e300, 2 * MAX_IO_REQUESTS_PER_MONTH, INF, NAN, -1.0])
def test_io_requests_per_month_has_a_limit(n):
    with raises(rf"io_requests_per_month={re.escape(repr(n))} must be a number of requests from 0 to 1e\+15"):
        monthly_cost(ebssim.standard(100), "us-east-1", io_requests_per_month=n)


def test_io_requests_at_the_limit_are_priced():
    # us-east-1 standard: $0.05 per million requests; 1e15 of them is $50,000,000.
    assert ebssim.cost.MAX_IO_REQUESTS_PER_MONTH == MAX_IO_REQUESTS_PER_MONTH
    c = monthly_cost(ebssim.standard(100), "us-east-1", io_requests_per_month=MAX_IO_REQUESTS_PER_MONTH)
    assert c.breakdown["io_requests"] == 50_000_000.0


# --------------------------------------------------------------------------------------------
# The command line: one error line, exit 2
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", ["1e300", "inf", "nan", "-1"])
def test_cli_cost_io_requests(cli, n):
    r = cli("cost", "--region", "us-east-1", "--io-requests-per-month", n, "standard")
    one_error_line(r, f"--io-requests-per-month={float(n)!r}", "from 0 to 1e+15")


@pytest.mark.parametrize("m", ["-1", "0", "nan", "inf"])
def test_cli_advise_alarm_minutes(cli, m):
    r = cli("advise", "--region", "eu-west-1", "--alarm-minutes", m, "vol-a=gp2:size=100")
    one_error_line(r, f"--alarm-minutes={float(m)!r}", "positive, finite")


def test_cli_advise_recent_modifications_of_an_unknown_volume(cli):
    r = cli(
        "advise",
        "--region",
        "eu-west-1",
        "--recent-modifications",
        "vol-zz=1",
        "vol-a=gp2:size=100",
        "vol-b=gp3:size=100",
    )
    one_error_line(r, "--recent-modifications", "vol-zz", "vol-a, vol-b")


# --------------------------------------------------------------------------------------------
# threads: 0 is every core, as in the core
# --------------------------------------------------------------------------------------------


def test_threads_zero_is_every_core():
    vols = [gp2(100), gp2(200), gp3(100)]
    w = [ClosedLoop(32, "4k")] * 3
    every = Simulation(vols).run(w, 3000, threads=0)
    one = Simulation(vols).run(w, 3000, threads=1)
    for a, b in zip(every, one):
        assert a.totals.served_ops == b.totals.served_ops
        np.testing.assert_array_equal(a.credits, b.credits)
    assert simulate_fleet({"a": gp2(100)}, {"a": ClosedLoop(32, "4k")}, duration_s=10, threads=0).errors == {}


@pytest.mark.parametrize("bad", [-1, -8, True, 1.5, "2"])
def test_threads_must_be_a_count(bad):
    sim = Simulation([gp3(100)])
    with raises(r"threads="):
        sim.rest(10, threads=bad)
    assert sim.time_s == 0.0


# --------------------------------------------------------------------------------------------
# One Simulation, two threads
# --------------------------------------------------------------------------------------------


def test_two_threads_running_one_simulation_run_one_after_the_other():
    """A 100 GiB gp2 volume: 5.4 M credits, 300 IOPS baseline (3 per GiB), 3,000 burst. Under
    32 x 4 KiB in flight for 1e7 s it bursts for 5.4e6 / (3,000 - 300) = 2,000 s, then serves its
    baseline: 2,000 x 3,000 + (1e7 - 2,000) x 300 = 3,005,400,000 I/Os. A second run from the empty
    bucket serves 1e7 x 300 = 3,000,000,000. Two threads at once must give the pair, not the
    burst twice (6,010,800,000) from one starting state."""
    n = 10_000_000  # stepped (jump=False): long enough in the compiled loop for the runs to overlap
    first, second = 3_005_400_000.0, 3_000_000_000.0
    sim = Simulation([gp2(100)])
    start = threading.Barrier(2)
    got: list = []

    def run() -> None:
        start.wait()
        got.append(sim.run([ClosedLoop(32, "4k")], n, record=False, jump=False, threads=1)[0])

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 2
    served = sorted((r.t0_s, r.totals.served_ops) for r in got)
    assert served == [(0.0, first), (float(n), second)]
    assert sim.time_s == 2.0 * n
    assert sim.credits(0) == 0.0


def test_ctrl_c_while_waiting_for_another_threads_run():
    """The main thread waits for a worker's run on the same Simulation: Ctrl-C ends the wait at
    once (the worker's run goes on), and the interrupted run never starts."""
    import signal
    import time

    # About 4.5 s stepped (7-8 ns a step): the worker is still running when the interrupt comes
    # 0.3 s after it started.
    n = 600_000_000
    sim = Simulation([gp2(100)])
    worker_end: list = []

    def work() -> None:
        try:
            sim.run([ClosedLoop(32, "4k")], n, record=False, jump=False)
            worker_end.append(f"finished at {time.perf_counter() - t0:.3f} s")
        except BaseException as e:  # reported in the assertion below
            worker_end.append(f"raised {e!r} at {time.perf_counter() - t0:.3f} s")

    t0 = time.perf_counter()
    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.1)
    assert repr(sim).startswith("<Simulation running")  # a repr never waits
    # Ctrl-C as the kernel delivers it: a real signal, 0.2 s on, whose Python handler raises
    # KeyboardInterrupt in the main thread (SIGALRM from an interval timer, handled as SIGINT
    # is). A timer thread calling _thread.interrupt_main did not interrupt the wait in three
    # fresh-clone `make test` runs (and in no other run); the timer signal needs no thread.
    old = signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    raised = False
    try:
        try:
            sim.run([ClosedLoop(32, "4k")], 10)
        except KeyboardInterrupt:
            raised = True
        waited = time.perf_counter() - t0
        alive = worker.is_alive()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        worker.join()
    assert raised and alive and waited < 1.5, (raised, alive, waited, worker_end)
    assert sim.time_s == float(n)  # the worker's run only
