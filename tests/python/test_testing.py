"""ebssim.testing: capacity plans as tests. Each criterion against runs whose numbers are worked
out by hand; the failure message shows the plan next to what the run did, which limit bound,
when, for how long and by how much; bad plans are ValueErrors; a suite of plans is fast."""

from __future__ import annotations

import time

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, OpenLoop, Simulation, gp2, gp3, simulate
from ebssim.testing import Plan, PlanReport, assert_plan, check_plan


@pytest.fixture(scope="module")
def gp2_qd32() -> ebssim.VolumeResult:
    # 100 GiB gp2, 32 x 4 KiB reads, 2,700 s: 3,000 IOPS (10.7 ms) until the bucket empties at
    # 5.4e6 / 2,700 = 2,000 s, then 300 IOPS (106.7 ms). docs/model.md: p99 = 106.77 ms.
    return simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2700)


@pytest.fixture(scope="module")
def gp3_qd32() -> ebssim.VolumeResult:
    # The same on 100 GiB gp3: 3,000 IOPS throughout; docs/model.md: p99 = 11.43 ms.
    return simulate(gp3(100), ClosedLoop(32, "4k"), duration_s=2700)


@pytest.fixture(scope="module")
def on_m5_large() -> ebssim.VolumeResult:
    # gp3 16,000 IOPS alone on an m5.large: the instance's I/O bucket, (18,750 - 3,600) x 1,800 =
    # 27,270,000, drains at 16,000 - 3,600 = 12,400 a second; the instance binds from step 2,199
    # (2,400 left: a cap of 6,000) to the end: 1,401 s (test_replay.py).
    return simulate(gp3(1000, iops=16000, throughput_mib_s=1000), ClosedLoop(64, "16k"), 3600, instance="m5.large")


def lines(report: PlanReport) -> list[str]:
    return str(report).splitlines()


def by_criterion(report: PlanReport) -> dict[str, ebssim.testing.Check]:
    return {c.criterion: c for c in report.checks}


def test_a_plan_that_holds(gp3_qd32):
    # Mean 32 / 3,000 = 10.7 ms at the cap; the waits (10.16 ms mean) spread with Nitro's cv 0.65,
    # so p99 is near 3 x the mean: 31.9 ms (docs/model.md; within 2 % of the exact convolution,
    # tests/python/test_latency.py).
    report = assert_plan(gp3_qd32, p99_ms=40, no_cliff=True, throttled_s=2700, min_burst_balance_pct=20)
    assert report.ok and bool(report) and report.failures == []
    assert lines(report)[0] == "capacity plan met"
    got = {c.criterion: c.got for c in report.checks}
    assert got["p99 latency <= 40 ms"] == "got 31.9 ms"
    assert got["no cliff"] == "no bucket to run dry"
    assert got["BurstBalance >= 20 %"] == "no credit bucket"
    # Every step held by the IOPS cap (32 in flight want 63,515 IOPS): 2,700 s, within the plan.
    assert got["throttled <= 45 min"] == "bound 45 min (100% of the run)"


def test_latency_percentiles(gp2_qd32):
    report = check_plan(gp2_qd32, p99_ms=20, percentiles_ms={50: 11, 99.9: 300})
    (p50, p99, p999) = report.checks
    # p50 = 9.54 ms (README): below the burst's 10.67 ms mean, within 11.
    assert (p50.criterion, p50.ok, p50.got) == ("p50 latency <= 11 ms", True, "got 9.54 ms")
    # p99 = 130.5 ms: 130.5 / 20 = 6.52 x the plan. Above 20 ms: from the cliff to the end.
    assert (p99.ok, p99.got) == (False, "got 130 ms (6.52 x the plan)")
    assert p99.detail == (
        "latency above 20 ms for 11.7 min (26% of the run), from 2,000 s (33.3 min) to the end of the run, "
        "bound by volume_iops (BurstBalance empty)"
    )
    assert p999.ok  # 269.1 ms
    with pytest.raises(ValueError, match=r"percentile 99 is given twice: p99_ms=20 and 30"):
        Plan(p99_ms=20, percentiles_ms={99: 30})


def test_no_cliff_within(gp2_qd32):
    ok, bad = check_plan(gp2_qd32, no_cliff_within_h=0.5).checks + check_plan(gp2_qd32, no_cliff_within_h=1).checks
    assert (ok.ok, ok.got) == (True, "first at 2,000 s (33.3 min)")
    # 1 h = 3,600 s; the cliff at 2,000 s is 1,600 s = 26.7 min early; 300 IOPS for 700 s after.
    assert (bad.ok, bad.got) == (False, "BurstBalance ran dry at 2,000 s (33.3 min), 26.7 min early")
    assert bad.detail == "bound by volume_iops at 300 IOPS for 11.7 min, until the end of the run"


def test_every_cliff_is_listed():
    # 100 GiB gp2 at 0.1 % (5,400 credits), 4 KiB arrivals per second: 3,000 for 2 s (dry at
    # 5,400 / 2,700 = 2.0 s), 300 for 70 s (what it earns: still dry), 100 for 400 s (credits again
    # from 72 s, 400 x 200 = 80,000 of them), 3,000 for 60 s: dry again at 472 + 80,000 / 2,700 =
    # 501.63 s, still dry at the end, 532 s. 430 s of credits between (> 300 s, docs/model.md
    # "Cliffs"): two cliffs.
    ops = np.concatenate([np.full(2, 3000.0), np.full(70, 300.0), np.full(400, 100.0), np.full(60, 3000.0)])
    r = simulate(gp2(100, burst_balance_pct=0.1), OpenLoop(ops, ops * 4096))
    (c,) = check_plan(r, no_cliff=True).checks
    assert c.got == "BurstBalance ran dry at 2 s"
    assert c.detail.splitlines() == [
        "no limit bound at 300 IOPS (300 arriving) for 70 s, until 72 s",
        "2 cliffs in the run: 2 s for 70 s, 502 s (8.36 min) for 30.4 s",  # 501.63 / 60
    ]
    # The trace of test_replay.py: episodes at 2 s and 5.07 s, 1.07 s apart: one cliff.
    ops = np.array([3000.0, 3000.0, 300.0, 300.0, 100.0, 3000.0, 300.0])
    r = simulate(gp2(100, burst_balance_pct=0.1), OpenLoop(ops, ops * 4096))
    (c,) = check_plan(r, no_cliff=True).checks
    assert c.detail == "bound by volume_iops at 300 IOPS (800 arriving) for 5 s, until the end of the run"


def test_burst_balance(gp2_qd32):
    (c,) = check_plan(gp2_qd32, min_burst_balance_pct=20).checks
    # 20 % of 5.4e6 = 1.08e6 credits, reached after (5.4e6 - 1.08e6) / 2,700 = 1,600 s; below it
    # to the end, 2,700 - 1,600 = 1,100 s.
    assert (c.ok, c.got) == (False, "got 0 % (lowest)")
    assert c.detail == "below 20 % from 1,600 s (26.7 min) to the end of the run, 18.3 min"


def test_instance_criteria(on_m5_large):
    report = by_criterion(check_plan(on_m5_large, instance_bound_s=0, min_instance_balance_pct=10, no_cliff=True))
    bound = report["never bound by the instance"]
    balance = report["instance balances >= 10 %"]
    cliff = report["no cliff"]
    # 1,401 s = 23.4 min, 1,401 / 3,600 = 39 % of the run.
    assert (bound.ok, bound.got) == (False, "bound 23.4 min (39% of the run)")
    # Served while bound: 6,000 in step 2,199 (3,600 + the 2,400 left), then 3,600:
    # (6,000 + 1,400 x 3,600) / 1,401 = 3,601.7 IOPS.
    assert bound.detail == (
        "by instance_iops 23.4 min; 1 span, the first from 2,199 s (36.6 min) for 23.4 min, serving 3,602 IOPS; "
        "the instance's balance ran dry at 2,199 s (36.7 min)"
    )
    # 10 % of 27,270,000 = 2,727,000 credits: the end of step 1,979 leaves 27,270,000 - 12,400 x
    # 1,980 = 2,718,000, below; step 1,978 leaves 2,730,400. Below from 1,979 s to the end.
    assert (balance.ok, balance.got) == (False, "EBSIOBalance 0 % (lowest)")
    assert balance.detail == (
        "EBSIOBalance below 10 % from 1,979 s (33 min) to the end of the run, 27 min; "
        "the instance bound (instance_iops) for 23.4 min in the run"
    )
    assert (cliff.ok, cliff.got) == (False, "EBSIOBalance ran dry at 2,199 s (36.7 min)")
    # Within a looser plan: 1,401 s allowed.
    assert check_plan(on_m5_large, instance_bound_s=1401).ok
    assert not check_plan(on_m5_large, instance_bound_s=1400).ok


def test_backlog_and_throttled():
    # gp3 (3,000 IOPS), arrivals 6,000, 6,000, 0, 0: 3,000 served each step, 3,000, 6,000,
    # 3,000, 0 waiting at the ends of the steps; held by the IOPS cap in steps 0-2 (step 3
    # serves the 3,000 left exactly).
    ops = np.array([6000.0, 6000.0, 0.0, 0.0])
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    report = by_criterion(check_plan(r, max_backlog_ops=4000, throttled_s=1))
    backlog, throttled = report["backlog <= 4,000 I/Os"], report["throttled <= 1 s"]
    assert (backlog.ok, backlog.got) == (False, "got 6,000 I/Os at most, at 1 s")
    assert backlog.detail == (
        "backlog above 4,000 I/Os for 1 s (25% of the run), from 1 s to 2 s, bound by volume_iops"
    )
    assert (throttled.ok, throttled.got) == (False, "bound 3 s (75% of the run)")
    # Steps 0-2: 3,000 served a second while (6,000 + 6,000 + 0) / 3 = 4,000 arrive.
    assert (
        throttled.detail
        == "by volume_iops 3 s; 1 span, the first from 0 s for 3 s, serving 3,000 IOPS of 4,000 arriving"
    )


def test_the_failure_message(gp2_qd32):
    with pytest.raises(AssertionError) as e:
        assert_plan(gp2_qd32, p99_ms=20, no_cliff_within_h=1, min_burst_balance_pct=20)
    text = str(e.value).splitlines()
    assert text[0] == "capacity plan not met (3 of 3 criteria fail)"
    assert text[1] == (
        "gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s) under 4 KiB random reads at queue depth 32, "
        "2,700 s (45 min) from t = 0 s"
    )
    # The plan, then what the run did, on one line per criterion; the why below each failure.
    assert text[2] == "  FAIL  p99 latency <= 20 ms             got 130 ms (6.52 x the plan)"
    assert (
        text[4] == "  FAIL  no cliff within 1 h              BurstBalance ran dry at 2,000 s (33.3 min), 26.7 min early"
    )
    assert text[6] == "  FAIL  BurstBalance >= 20 %             got 0 % (lowest)"
    assert all(t.startswith("        ") for t in (text[3], text[5], text[7]))


def test_run_results_check_every_volume():
    sim = Simulation([gp2(100), gp3(100)])
    run = sim.run([ClosedLoop(32, "4k")] * 2, 2700)
    report = check_plan(run, no_cliff=True)
    assert [c.ok for c in report.checks] == [False, True]  # gp2 runs dry, gp3 has no bucket
    heads = [ln for ln in lines(report)[1:] if not ln.startswith(" ")]
    assert [h.split(" (")[0] for h in heads] == ["gp2 100 GiB", "gp3 100 GiB"]
    assert check_plan([run[1]], no_cliff=True).ok


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, r"the plan has no criterion: give at least one"),
        ({"p99_ms": -1}, r"^p99_ms=-1 must be a finite number >= 0"),
        ({"p99_ms": "20"}, r"^p99_ms='20' must be a number"),
        ({"no_cliff_within_h": float("inf")}, r"^no_cliff_within_h=inf must be a finite number >= 0"),
        ({"min_burst_balance_pct": 120}, r"^min_burst_balance_pct=120 must be a percentage between 0 and 100"),
        ({"no_cliff": 1}, r"^no_cliff=1 must be True or False"),
        ({"percentiles_ms": [99]}, r"^percentiles_ms=\[99\] must map percentiles to ms"),
        ({"percentiles_ms": {101: 5}}, r"^percentiles_ms key 101 must be a percentile between 0 and 100"),
        ({"percentiles_ms": {99: -5}}, r"^percentiles_ms\[99\]=-5 must be a finite latency in ms >= 0"),
    ],
)
def test_bad_plans(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Plan(**kwargs)


@pytest.mark.parametrize("bound", ["throttled_s", "instance_bound_s", "max_backlog_ops"])
def test_a_bound_of_zero_alone_is_a_criterion(bound):
    # 0 is "never" (0 == False in Python, and was once taken for no criterion). gp2 100 GiB under
    # 32 x 4 KiB in flight for 2,700 s: bound by its IOPS from the cliff at 2,000 s, so
    # throttled_s=0 fails; no instance, so instance_bound_s=0 holds; a closed loop keeps its 32
    # in flight and leaves no backlog (open-loop demand not yet admitted), so max_backlog_ops=0 holds.
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2700)
    report = check_plan(r, **{bound: 0})
    assert len(report.checks) == 1
    assert report.ok == (bound != "throttled_s")


def test_bad_results(gp2_qd32):
    with pytest.raises(ValueError, match=r"result=3 must be a VolumeResult, a RunResult or a sequence"):
        check_plan(3, no_cliff=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"result\[1\]=None must be a VolumeResult"):
        check_plan([gp2_qd32, None], no_cliff=True)  # type: ignore[list-item]
    nr = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10, record=False)
    with pytest.raises(ValueError, match=r"need the per-step series.*record=False"):
        check_plan(nr, p99_ms=20)
    assert check_plan(nr, no_cliff=True, instance_bound_s=0).ok  # totals suffice for these
    with pytest.raises(TypeError):
        check_plan(gp2_qd32, p99=20)


def test_a_suite_of_plans_runs_in_seconds():
    # Ten plans over a week of 1-second steps (604,800 each): simulate and check.
    n = 7 * 86400
    rng = np.random.default_rng(3)
    ops = rng.uniform(0, 2500, n)
    w = OpenLoop(ops, ops * 16384)
    t0 = time.perf_counter()
    for size in range(100, 1100, 100):
        r = simulate(gp2(size), w)
        check_plan(r, p99_ms=20, no_cliff_within_h=8, min_burst_balance_pct=20, throttled_s=60, max_backlog_ops=1e4)
    elapsed = time.perf_counter() - t0
    assert elapsed < 10.0  # measured 0.4 s (docs/analysis.md); generous for a shared machine
