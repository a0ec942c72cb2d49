"""Replay analysis on every result: all cliff episodes, seconds bound by each limit, time above
a latency, the backlog series, the offered I/O, the instance result on every volume result, an
open loop's max_in_flight, summaries and reprs. Numbers worked out by hand (the arithmetic is in
the comments; tests/cpp/test_replay.cpp works the same traces step by step)."""

from __future__ import annotations

import math

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, Simulation, gp2, gp3, simulate

# 4 KiB on the default SSD model: 0.5 ms + 4,096 / 2^30 s.
ST_4K = 0.0005 + 4096 / 2**30


@pytest.fixture(scope="module")
def two_cliffs() -> ebssim.VolumeResult:
    # 100 GiB gp2 at 0.1 % BurstBalance (5,400 credits; 300 earned a second, 3,000 IOPS burst),
    # 4 KiB arrivals per second; credits at the end of each step:
    #   0: 3,000 served -> 2,700;  1: 3,000 -> 0: dry at 1 + 2,700 / 2,700 = 2.0 s
    #   2, 3: 300 (= what it earns) -> 0;  4: 100 -> 200: credits again from 4.0 s
    #   5: 3,000 arrive, 500 served (the cap: 200 + 300), 2,500 queue -> 0: dry at 5 + 200 / 2,700 s
    #   6: 300 arrive + 2,500 queued, 300 served, 2,500 queue -> 0: still dry at the end, 7 s
    ops = np.array([3000.0, 3000.0, 300.0, 300.0, 100.0, 3000.0, 300.0])
    return simulate(gp2(100, burst_balance_pct=0.1), OpenLoop(ops, ops * 4096))


# --------------------------------------------------------------------------------------------
# Cliffs: every episode
# --------------------------------------------------------------------------------------------


def test_every_cliff_episode(two_cliffs):
    # The episodes as the engine recorded them (no merging, no minimum duration).
    first, second = ebssim.analysis.cliffs(two_cliffs, merge_gap_s=0, min_duration_s=0)
    assert isinstance(first, ebssim.Cliff)
    assert (first.start_s, first.end_s, first.duration_s) == (2.0, 4.0, 2.0)
    assert first.bucket == "BurstBalance"
    # Steps 2 and 3 ask exactly what the bucket earns: empty, but nothing held back.
    assert first.limit == "demand"
    assert (first.iops, first.offered_iops) == (300.0, 300.0)
    assert second.start_s == pytest.approx(5 + 200 / 2700)
    assert second.end_s is None
    assert second.duration_s == pytest.approx(7 - (5 + 200 / 2700))
    assert second.limit == "volume_iops"
    # Steps 5 and 6: (500 + 300) / 2 served, (3,000 + 300) / 2 arriving.
    assert (second.iops, second.offered_iops) == (400.0, 1650.0)
    assert two_cliffs.cliff_time_s == 2.0  # the first episode's start
    assert second["limit"] == "volume_iops"
    assert str(second) == (
        "BurstBalance empty from 5.07 s to the end of the run (still empty): 1.93 s, bound by volume_iops "
        "at 400 IOPS (1,650 arriving)"
    )
    # 1.07 s apart (<= 300 s, docs/model.md "Cliffs"): one cliff, from 2 s to the end (7 s), its
    # limit the one of steps 5 and 6 (steps 2-4 bound by none), (300 + 300 + 100 + 500 + 300) / 5
    # = 300 IOPS served and (300 + 300 + 100 + 3,000 + 300) / 5 = 800 arriving.
    (cliff,) = two_cliffs.cliffs
    assert (cliff.start_s, cliff.end_s, cliff.duration_s, cliff.limit) == (2.0, None, 5.0, "volume_iops")
    assert (cliff.iops, cliff.offered_iops) == (300.0, 800.0)


def test_cliffs_without_series_follow_the_bucket():
    ops = np.array([3000.0, 3000.0, 300.0, 300.0, 100.0, 3000.0, 300.0])
    r = simulate(gp2(100, burst_balance_pct=0.1), OpenLoop(ops, ops * 4096), record=False)
    first, second = ebssim.analysis.cliffs(r, merge_gap_s=0, min_duration_s=0)
    assert (first.start_s, first.end_s) == (2.0, 4.0)
    assert first.limit == second.limit == "volume_iops"  # gp2's bucket holds I/O credits
    assert math.isnan(first.iops) and math.isnan(first.offered_iops)


def test_the_reference_cliff_and_none_without_a_bucket():
    # 100 GiB gp2, 32 x 4 KiB reads: dry at 5.4e6 / 2,700 = 2,000 s, 300 IOPS after.
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2700)
    (c,) = r.cliffs
    assert (c.start_s, c.end_s, c.duration_s, c.limit, c.iops) == (2000.0, None, 700.0, "volume_iops", 300.0)
    assert math.isnan(c.offered_iops)  # a closed loop adapts; it has no arrivals
    assert simulate(gp3(100), ClosedLoop(32, "4k"), duration_s=100).cliffs == ()


def test_episodes_are_per_run():
    # Load 2,100 s (dry at 2,000 s), rest 600 s (180,000 credits), load again: the second run's
    # bucket empties after 180,000 / 2,700 = 66.7 s, at 2,766.7 s of simulated time.
    sim = Simulation([gp2(100)])
    a = sim.run([ClosedLoop(32, "4k")], 2100)[0]
    rest = sim.rest(600)[0]
    b = sim.run([ClosedLoop(32, "4k")], 200)[0]
    assert [(c.start_s, c.end_s) for c in a.cliffs] == [(2000.0, None)]
    assert rest.cliffs == ()  # it earns from the first step of the rest
    (c,) = b.cliffs
    assert c.start_s == pytest.approx(2700 + 180000 / 2700)


def test_instance_cliffs():
    sim = Simulation([gp3(1000, iops=16000, throughput_mib_s=1000)] * 2, instance="m5.large")
    run = sim.run([ClosedLoop(64, "16k")] * 2, duration_s=2400)
    # Two volumes ask 32,000 > 18,750: the bucket of (18,750 - 3,600) x 1,800 s drains at
    # 15,150 a second, empty at 1,800 s; EBSIOBalance only (the bytes bucket holds).
    (c,) = run.instance.cliffs
    assert (c.start_s, c.end_s, c.bucket, c.limit, c.iops) == (1800.0, None, "EBSIOBalance", "instance_iops", 3600.0)
    assert math.isnan(c.offered_iops)


@pytest.fixture(scope="module")
def served_at_baseline() -> ebssim.VolumeResult:
    # CloudWatch minutes (dt = 60 s) of a 100 GiB gp2 (5.4e6 credits, 300 x 60 = 18,000 earned a
    # step) that burst, then was served at its baseline, replayed as 4 KiB reads:
    #   steps 0-99, 1,200 IOPS (72,000 a step): the full bucket drains 72,000 - 18,000 = 54,000 a
    #     step (the first step's 18,000 do not fit in it): empty at the end of step 99, 6,000 s.
    #   six minutes of 240 IOPS (14,400), each followed by one of 360 (21,600): each 240 earns
    #     18,000 - 14,400 = 3,600 (credits again: an episode ends at the minute's start), each
    #     360 spends them (21,600 = 3,600 + 18,000): empty at the minute's end, 6,120, 6,240, ...
    #     6,720 s. Episodes: (6,000, 6,000), (6,120, 6,120), ..., (6,600, 6,600), (6,720, open).
    #   60 minutes of 300 IOPS: exactly what it earns, still empty at the end, 172 x 60 = 10,320 s.
    ops = np.concatenate([np.full(100, 72000.0), np.tile([14400.0, 21600.0], 6), np.full(60, 18000.0)])
    return simulate(gp2(100), OpenLoop(ops, ops * 4096), dt=60)


def test_a_replay_served_at_baseline_has_one_cliff(served_at_baseline):
    r = served_at_baseline
    # The engine records seven episodes, six of them 0 s long ...
    raw = [(e.start_s, e.end_s) for e in r.totals.cliffs]
    assert raw[:6] == [(6000.0 + 120 * i, 6000.0 + 120 * i) for i in range(6)]
    assert raw[6][0] == 6720.0 and math.isnan(raw[6][1])
    # ... apart by 120 s of credits <= 300 s (docs/model.md, "Cliffs"): one cliff, from 6,000 s to
    # the end, 10,320 - 6,000 = 4,320 s. Steps 100-171 serve (6 x 240 + 6 x 360 + 60 x 300) / 72
    # = 300 IOPS, all that arrives, within what the bucket grants: no limit bound.
    (c,) = r.cliffs
    assert (c.start_s, c.end_s, c.duration_s, c.limit, c.iops, c.offered_iops) == (
        6000.0,
        None,
        4320.0,
        "demand",
        300.0,
        300.0,
    )
    assert r.cliff_time_s == 6000.0
    s = r.summary()
    assert (s.cliff_count, s.episode_count) == (1, 7)
    assert "1 cliff, the first at 6,000 s" in str(s)
    assert "cliff at 6,000 s (100 min)>" in repr(r)
    # The same rule in the capacity plan: one cliff, no list of seven.
    report = ebssim.testing.check_plan(r, no_cliff=True)
    assert not report.ok
    assert "cliffs in the run" not in str(report)
    # Other parameters: a gap of 100 s < 120 s merges none; without a minimum all seven are cliffs,
    # with the default 60 s the 0 s touches are none.
    assert len(ebssim.analysis.cliffs(r, merge_gap_s=100, min_duration_s=0)) == 7
    (last,) = ebssim.analysis.cliffs(r, merge_gap_s=100)
    assert last.start_s == 6720.0


def test_a_brief_touch_of_empty_is_no_cliff():
    # The burst above (empty at 6,000 s), then 20 minutes of 240 IOPS: credits from the next
    # minute on. One episode of 0 s, shorter than the 60 s minimum: no cliff.
    ops = np.concatenate([np.full(100, 72000.0), np.full(20, 14400.0)])
    r = simulate(gp2(100), OpenLoop(ops, ops * 4096), dt=60)
    assert [(e.start_s, e.end_s) for e in r.totals.cliffs] == [(6000.0, 6000.0)]
    assert r.totals.cliff_time_s == 6000.0
    assert r.cliffs == () and r.cliff_time_s is None
    s = r.summary()
    assert (s.cliff_count, s.episode_count) == (0, 1)
    assert "no cliff: the credit bucket touched empty once, each time too briefly" in str(s)
    report = ebssim.testing.check_plan(r, no_cliff=True)
    assert report.ok and "no cliff: a bucket touched empty only briefly" in str(report)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"merge_gap_s": -1}, "merge_gap_s=-1"),
        ({"min_duration_s": math.nan}, "min_duration_s=nan"),
        ({"merge_gap_s": "300"}, "merge_gap_s='300' must be a number of seconds"),
        ({"min_duration_s": True}, "min_duration_s=True must be a number of seconds"),
    ],
)
def test_bad_cliff_rule_parameters(two_cliffs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ebssim.analysis.cliffs(two_cliffs, **kwargs)


# --------------------------------------------------------------------------------------------
# Time bound by each limit, time above a latency, backlog, offered
# --------------------------------------------------------------------------------------------


def test_bound_seconds(two_cliffs):
    b = two_cliffs.bound_s
    assert b == {
        "demand": 5.0,
        "volume_iops": 2.0,
        "volume_throughput": 0.0,
        "instance_iops": 0.0,
        "instance_throughput": 0.0,
        "max_in_flight": 0.0,
    }
    assert two_cliffs.instance_bound_s == 0.0
    # dt = 60: every step counts 60 s.
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=3600, dt=60)
    assert r.bound_s["volume_iops"] == 3600.0


def test_time_above_latency(two_cliffs):
    # Latency is the service time, except step 5 (mean backlog 1,250 over 500 served: + 2.5 s)
    # and step 6 (2,500 over 300: + 8.33 s).
    r = two_cliffs
    np.testing.assert_allclose(r.latency_s, [ST_4K] * 5 + [ST_4K + 2.5, ST_4K + 2500 / 300])
    assert r.time_above_latency(1000) == 2.0
    assert r.time_above_latency(3000) == 1.0
    assert r.time_above_latency(0.1) == 7.0
    assert r.time_above_latency(1e6) == 0.0
    spans = ebssim.analysis.spans_above_latency(r, 1000)
    assert [(s.start_s, s.end_s, s.duration_s) for s in spans] == [(5.0, 7.0, 2.0)]
    assert [(s.start_s, s.end_s) for s in ebssim.analysis.bound_spans(r, "volume_iops")] == [(5.0, 7.0)]


def test_time_above_latency_skips_steps_without_io():
    ops = np.array([6000.0, 0.0, 0.0, 0.0])  # gp3: 3,000 + 3,000 served, then nothing completes
    r = simulate(gp3(100), OpenLoop(ops, ops * 4096))
    assert np.isnan(r.latency_s[2:]).all()
    assert r.time_above_latency(0) == 2.0


def test_backlog_and_offered(two_cliffs):
    r = two_cliffs
    np.testing.assert_allclose(r.backlog_ops, [0, 0, 0, 0, 0, 2500, 2500], atol=1e-9)
    np.testing.assert_array_equal(r.offered_iops, [3000, 3000, 300, 300, 100, 3000, 300])
    df = r.to_pandas()
    np.testing.assert_allclose(df["backlog_ops"].to_numpy(), r.backlog_ops)
    # The same trace at dt = 2 s offers half as many I/Os per second.
    ops = np.array([3000.0, 3000.0])
    assert simulate(gp3(100), OpenLoop(ops, ops * 4096), dt=2).offered_iops.tolist() == [1500.0, 1500.0]
    # A closed loop offers N / (s + think) unthrottled: 32 / 0.5038 ms = 63,515.4 IOPS.
    w = ClosedLoop(32, "4k")
    assert simulate(gp3(100), w, duration_s=2).offered_iops[0] == pytest.approx(32 / ST_4K)
    assert simulate(gp3(100), Idle(), duration_s=2).offered_iops.tolist() == [0.0, 0.0]


def test_analysis_needs_series_where_it_reads_them():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=10, record=False)
    with pytest.raises(ValueError, match=r"time_above_latency needs the per-step series.*record=False"):
        r.time_above_latency(20)
    assert r.bound_s["volume_iops"] == 10.0  # totals are always there
    with pytest.raises(ValueError, match=r"^ms=-1 must be a finite latency in ms >= 0"):
        simulate(gp2(100), Idle(), duration_s=1).time_above_latency(-1)
    with pytest.raises(ValueError, match=r"^ms='20' must be a latency in ms"):
        simulate(gp2(100), Idle(), duration_s=1).time_above_latency("20")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"limit 'iops' is not one of demand, volume_iops"):
        ebssim.analysis.bound_spans(simulate(gp2(100), Idle(), duration_s=1), "iops")


# --------------------------------------------------------------------------------------------
# The instance result on every volume result
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def on_m5_large() -> ebssim.VolumeResult:
    # gp3 16,000 IOPS alone on an m5.large, 64 x 16 KiB: 16,000 IOPS (the volume's cap) while
    # the instance's bucket lasts; it holds (18,750 - 3,600) x 1,800 = 27,270,000 and drains at
    # 16,000 - 3,600 = 12,400 a second: 2,199 s and 27,270,000 - 12,400 x 2,199 = 2,400 left,
    # empty 2,400 / 12,400 = 0.19 s into step 2,199, whose cap is 3,600 + 2,400 = 6,000: from
    # that step on the instance binds, 3,600 - 2,199 = 1,401 s.
    return simulate(gp3(1000, iops=16000, throughput_mib_s=1000), ClosedLoop(64, "16k"), 3600, instance="m5.large")


def test_simulate_returns_the_instance_result(on_m5_large):
    r = on_m5_large
    assert isinstance(r.instance, ebssim.InstanceResult)
    assert r.instance.instance.name == "m5.large"
    assert r.instance.cliff_time_s == pytest.approx(2199 + 2400 / 12400)
    assert r.bound_s["volume_iops"] == 2199.0
    assert r.instance_bound_s == 1401.0
    assert r.instance.bound_s["instance_iops"] == 1401.0
    assert r.iops[0] == 16000.0 and r.iops[-1] == 3600.0
    s = r.summary()
    assert s.instance_bound_s == 1401.0 and s.instance_cliff_time_s == pytest.approx(2199 + 2400 / 12400)
    # The repr no longer says only "no cliff": 1,401 s = 23.4 min, 1,401 / 3,600 = 39 %.
    assert repr(r).endswith("no cliff, instance-bound 23.4 min (39%), instance balance ran dry at 2,199 s (36.7 min)>")
    assert simulate(gp3(100), Idle(), duration_s=1).instance is None


def test_run_results_share_one_instance_result():
    sim = Simulation([gp3(100), gp3(100)], instance="m5.large")
    run = sim.run([ClosedLoop(1, "4k"), Idle()], 10)
    assert run[0].instance is run.instance and run[1].instance is run.instance
    assert repr(run[0]).endswith(", never instance-bound>")


# --------------------------------------------------------------------------------------------
# max_in_flight: the application holds back what is beyond its bound
# --------------------------------------------------------------------------------------------


def test_max_in_flight_by_hand():
    # gp3 (3,000 IOPS), service time 1 ms, at most 2 outstanding: 2 / 0.001 = 2,000 IOPS.
    #   arrivals 3,000, 3,000, 0 -> served 2,000 each; waiting 1,000, 2,000, 0
    #   latency from arrival (Little): (2,000 x 1 ms + mean waiting) / 2,000:
    #   (2 + 500) / 2,000 = 0.251 s, (2 + 1,500) / 2,000 = 0.751 s, (2 + 1,000) / 2,000 = 0.501 s
    ops = np.array([3000.0, 3000.0, 0.0])
    w = OpenLoop(ops, ops * 4096, service_time_ms=1, max_in_flight=2)
    r = simulate(gp3(100), w)
    assert r.iops.tolist() == [2000.0, 2000.0, 2000.0]
    assert r.backlog_ops.tolist() == [1000.0, 2000.0, 0.0]
    np.testing.assert_allclose(r.latency_s, [0.251, 0.751, 0.501])
    assert [ebssim.BOUND_NAMES[b] for b in r.bound] == ["max_in_flight", "max_in_flight", "demand"]
    assert r.bound_s["max_in_flight"] == 2.0
    # Without the bound gp3 serves 3,000, 3,000 and nothing is left for step 2.
    free = simulate(gp3(100), OpenLoop(ops, ops * 4096, service_time_ms=1))
    assert free.iops.tolist() == [3000.0, 3000.0, 0.0]


def test_max_in_flight_above_the_volume_changes_nothing():
    # 64 outstanding at 1 ms = 64,000 IOPS, far above gp2's 3,000: the same run as unbounded.
    ops = np.array([6000.0, 6000.0, 0.0, 0.0])
    a = simulate(gp2(100), OpenLoop(ops, ops * 4096, service_time_ms=1, max_in_flight=64))
    b = simulate(gp2(100), OpenLoop(ops, ops * 4096, service_time_ms=1))
    np.testing.assert_array_equal(a.latency_s, b.latency_s)
    np.testing.assert_array_equal(a.backlog_ops, b.backlog_ops)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, r"^max_in_flight=0 must be a positive number of I/Os \(None: no bound"),
        (-3.0, r"^max_in_flight=-3.0 must be a positive number of I/Os"),
        (float("nan"), r"^max_in_flight=nan must be a positive number of I/Os"),
        (True, r"^max_in_flight=True must be a number of I/Os"),
        ("8", r"^max_in_flight='8' must be a number of I/Os"),
    ],
)
def test_max_in_flight_errors(value, message):
    ops = np.array([1.0])
    with pytest.raises(ValueError, match=message):
        OpenLoop(ops, ops * 4096, max_in_flight=value)


# --------------------------------------------------------------------------------------------
# Summaries and reprs
# --------------------------------------------------------------------------------------------


def test_summary_reads_well(two_cliffs):
    s = two_cliffs.summary()
    # Episodes 2.0 s and 7 - 5.074 = 1.926 s: 3.926 s with the bucket empty; one cliff of them.
    assert (s.cliff_count, s.episode_count) == (1, 2)
    assert s.bucket_empty_s == pytest.approx(2 + 7 - (5 + 200 / 2700))
    text = str(s)
    assert text.splitlines() == [
        "gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s) under open-loop trace of 7 steps (1e+04 I/Os)",
        # (3,000 + 3,000 + 300 + 300 + 100 + 500 + 300) / 7 = 7,500 / 7 = 1,071.4 IOPS; latency
        # weighted by I/O: (7,500 x 0.504 ms + 500 x 2.5 s + 300 x 8.33 s) / 7,500 = 500.5 ms
        "  1,071 IOPS mean, 501 ms mean latency",
        "  1 cliff, the first at 2 s; bucket empty 3.93 s in all",
        "  BurstBalance 0.0 % at the end",
        "  held back by: volume_iops 2 s (29%)",
        "  2,500 I/Os still queued at the end",
    ]


def test_open_loop_repr_is_a_summary():
    ops = np.array([100.0, 300.0, 200.0])
    w = OpenLoop(ops, ops * 16384, read_fraction=0.7, max_in_flight=32)
    assert repr(w) == (
        "OpenLoop(3 steps, 600 I/Os, 200 per step mean, 300 peak, 16 KiB mean, 70% reads, random, max_in_flight=32)"
    )
    assert "array" not in repr(w)
    assert str(w) == "open-loop trace of 3 steps (600 I/Os, at most 32 in flight)"


def test_html_reprs(two_cliffs, on_m5_large):
    html = two_cliffs._repr_html_()
    assert html.startswith("<table") and "VolumeResult: gp2 100 GiB" in html
    # Its two episodes, 1.07 s apart, are one cliff (docs/model.md, "Cliffs").
    assert "cliff 1" in html and "cliff 2" not in html and "still empty at the end" in html
    assert "2,500 I/Os" in html
    html = on_m5_large._repr_html_()
    assert "m5.large: bound 23.4 min (39%)" in html
    assert "EBSIOBalance empty" in on_m5_large.instance._repr_html_()
    sim = Simulation([gp3(100), gp2(100)], instance="m5.large")
    run = sim.run([ClosedLoop(1, "4k"), ClosedLoop(1, "4k")], 5)
    assert run._repr_html_().count("<tr>") == 1 + 2 + 1  # header, two volumes, the instance
    for obj in (gp2(100), gp3(100), ClosedLoop(8, "16k"), OpenLoop(np.ones(3), np.ones(3) * 4096), ebssim.Idle()):
        h = obj._repr_html_()
        assert "<" in h and "array(" not in h
    assert "5.4e+06" not in gp2(100)._repr_html_() and "5,400,000 credits, 100% full" in gp2(100)._repr_html_()


def test_fio_prediction_html_repr():
    from ebssim.fio import predict

    p = predict(
        ["fio --name=rr --filename=/dev/x --rw=randread --bs=4k --ioengine=libaio --iodepth=32 --runtime=60"],
        volumes={"/dev/x": gp3(100)},
    )
    html = p._repr_html_()
    # 32 / 3,000 IOPS = 10.7 ms.
    assert "FioPrediction: 1 job" in html and "<td" in html and "3,000" in html and "10.7" in html


# --------------------------------------------------------------------------------------------
# PhasedClosedLoop: depth and think time that change over time
# --------------------------------------------------------------------------------------------


def test_phased_closed_loop_is_consecutive_closed_loops():
    # 32 users for 2,000 s, then 4 with 10 ms think time for 700 s on a 100 GiB gp2: the bucket
    # empties at 5.4e6 / 2,700 = 2,000 s; the 4 users offer 4 / (0.504 + 10) ms = 380.8 IOPS,
    # above the 300 baseline, so they get 300 and wait: 4 / 300 - 10 ms = 3.33 ms.
    w = ebssim.PhasedClosedLoop.from_phases([(2000, 32), (700, 4, 10.0)], io_size="4k")
    r = simulate(gp2(100), w)
    assert (r.n_steps, r.cliff_time_s) == (2700, 2000.0)
    assert (r.iops[0], r.iops[-1]) == (3000.0, 300.0)
    assert r.latency_ms[-1] == pytest.approx(4 / 300 * 1e3 - 10)
    assert r.offered_iops[-1] == pytest.approx(4 / (ST_4K + 0.010))
    # The same as two closed-loop runs on one Simulation (state carries over): one result.
    sim = Simulation([gp2(100)])
    a = sim.run([ClosedLoop(32, "4k")], 2000)[0]
    b = sim.run([ClosedLoop(4, "4k", think_time_ms=10.0)], 700)[0]
    np.testing.assert_array_equal(r.iops, np.concatenate([a.iops, b.iops]))
    np.testing.assert_array_equal(r.latency_s, np.concatenate([a.latency_s, b.latency_s]))
    np.testing.assert_array_equal(r.credits, np.concatenate([a.credits, b.credits]))
    assert w.phases() == [(2000, 32.0, 0.0), (700, 4.0, 10.0)]
    # Per-step arrays work too; zero users is a step at rest.
    w2 = ebssim.PhasedClosedLoop(np.array([8.0, 0.0, 2.0]), think_time_ms=np.array([0.0, 0.0, 1.0]), io_size="4k")
    r2 = simulate(gp3(100), w2)
    assert r2.iops[1] == 0.0 and math.isnan(r2.latency_s[1])
    # 2 users, 1 ms think time: 2 / (0.504 + 1) ms = 1,330 IOPS, under gp3's 3,000.
    assert r2.iops[2] == pytest.approx(2 / (ST_4K + 0.001))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ebssim.PhasedClosedLoop(np.array([1.0, -2.0])), r"^in_flight\[1\]=-2.0 must be a finite number >= 0"),
        (
            lambda: ebssim.PhasedClosedLoop(np.ones(2), think_time_ms=np.ones(3)),
            r"^think_time_ms has 3 steps but in_flight has 2",
        ),
        (lambda: ebssim.PhasedClosedLoop(np.ones(2), think_time_ms=-1.0), r"^think_time_ms=-1.0 must be a finite"),
        (lambda: ebssim.PhasedClosedLoop.from_phases([]), r"^phases=\[\] must be a non-empty list"),
        (
            lambda: ebssim.PhasedClosedLoop.from_phases([(10,)]),
            r"^phases\[0\]=\(10,\) must be \(duration_s, in_flight\)",
        ),
        (lambda: ebssim.PhasedClosedLoop.from_phases([(1.5, 4)]), r"^duration_s=1.5 is not a whole number of steps"),
    ],
)
def test_phased_closed_loop_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_phased_closed_loop_length_must_match_the_run():
    w = ebssim.PhasedClosedLoop(np.ones(3))
    with pytest.raises(ValueError, match=r"duration_s=5 is 5 steps of dt=1 but the trace has 3 steps"):
        simulate(gp3(100), w, duration_s=5)
