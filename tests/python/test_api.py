"""Public API surface: record=False, the GIL, Volume properties, size parsing (plot(): test_plot.py)."""

from __future__ import annotations

import threading
import time

import ebssim
import numpy as np
import pytest
from ebssim import ClosedLoop, Idle, OpenLoop, Simulation, Volume, gp2, gp3, simulate

MiB = 2**20


# --------------------------------------------------------------------------------------------
# record=False
# --------------------------------------------------------------------------------------------


def test_record_false_keeps_totals_only():
    r = simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=2100, record=False)
    assert r.n_steps == 2100
    for a in (r.iops, r.ebs_iops, r.throughput_mib_s, r.credits, r.queue_length, r.latency_s, r.bound):
        assert a.shape == (0,)
    assert r.time_s.shape == (0,)
    # 2,000 s at 3,000 + 100 s at 300 = 6,030,000 I/Os.
    assert r.totals["served_ops"] == pytest.approx(6.03e6)
    assert r.totals["served_bytes"] == pytest.approx(6.03e6 * 4096)
    assert r.mean_iops == pytest.approx(6.03e6 / 2100)
    assert r.cliff_time_s == pytest.approx(2000.0, abs=1.0)
    assert r.burst_balance_end_pct == 0.0
    s = r.summary()
    assert s["mean_iops"] == pytest.approx(6.03e6 / 2100)
    # (6e6 x 32/3,000 + 30,000 x 32/300) / 6.03e6 s = (64,000 + 3,200) / 6.03e6 = 11.144 ms
    assert s["mean_latency_ms"] == pytest.approx(67200 / 6.03e6 * 1e3, rel=1e-9)
    assert r.to_pandas().shape == (0, 13)


def test_record_false_same_totals_as_recorded():
    ops = np.array([100.0, 9000.0, 0.0, 50.0, 4000.0])
    w = OpenLoop(ops, ops * 16384)
    a = simulate(gp2(50, burst_balance_pct=0.05), w, record=True)
    b = simulate(gp2(50, burst_balance_pct=0.05), w, record=False)
    # Typed totals (were a dict): compare every field the binding declares.
    fields = [name for name, attr in vars(ebssim.VolumeTotals).items() if isinstance(attr, property)]
    assert len(fields) == 12
    for key in fields:
        assert getattr(a.totals, key) == getattr(b.totals, key), key  # deterministic: bit-identical
    assert a.summary() == b.summary()


# --------------------------------------------------------------------------------------------
# The GIL is released while the compiled loop runs
# --------------------------------------------------------------------------------------------


def test_gil_released_during_long_run():
    n = 20_000_000
    rng = np.random.default_rng(7)
    ops = rng.uniform(0.0, 6000.0, n)  # random, so no closed form can skip the steps
    trace = OpenLoop(ops, ops * 4096.0)
    sim = Simulation([gp2(100)])
    box: dict = {}

    def worker() -> None:
        box["t0"] = time.perf_counter()
        box["result"] = sim.run([trace], record=False)
        box["t1"] = time.perf_counter()

    stamps = []
    count = 0
    th = threading.Thread(target=worker)
    th.start()
    while th.is_alive():
        count += 1
        if count % 256 == 0:
            stamps.append(time.perf_counter())
    th.join()

    r = box["result"][0]
    assert r.n_steps == n
    assert r.totals["demanded_ops"] == pytest.approx(float(ops.sum()), rel=1e-9)
    # Python bytecode ran in this thread *during* the compiled run: if the worker held the GIL,
    # no main-thread iteration could fall in the middle half of its run (the Python around the
    # call is microseconds; the 20 M steps take a substantial fraction of a second).
    t0, t1 = box["t0"], box["t1"]
    lo, hi = t0 + 0.25 * (t1 - t0), t0 + 0.75 * (t1 - t0)
    inside = sum(1 for s in stamps if lo <= s <= hi)
    assert inside * 256 >= 10_000, (inside, count, t1 - t0)


# --------------------------------------------------------------------------------------------
# Volume properties
# --------------------------------------------------------------------------------------------

# size -> baseline = clamp(3 x size, 100, 16,000), max IOPS = max(baseline, 3,000),
# burst throughput = min(tier, max IOPS x 0.25), baseline throughput = min(tier, baseline x 0.25),
# tier = 128 if size <= 170 else 250.
GP2_PROPS = [
    (1, 100, 3000, 128, 25),  # 100 x 0.25 = 25
    (33, 100, 3000, 128, 25),
    (34, 102, 3000, 128, 25.5),
    (100, 300, 3000, 128, 75),  # AWS: empty 100 GiB -> 300 IOPS, 75 MiB/s
    (170, 510, 3000, 128, 127.5),
    (171, 513, 3000, 250, 128.25),  # tier 250 with credits; 513 x 0.25 without
    (250, 750, 3000, 250, 187.5),
    (334, 1002, 3000, 250, 250),  # min size for 250 MiB/s regardless of credits
    (1000, 3000, 3000, 250, 250),
    (5333, 15999, 15999, 250, 250),
    (5334, 16000, 16000, 250, 250),
    (16384, 16000, 16000, 250, 250),
]


@pytest.mark.parametrize("size, baseline, max_iops, tput, base_tput", GP2_PROPS)
def test_gp2_properties(size, baseline, max_iops, tput, base_tput):
    v = gp2(size)
    assert v.type == "gp2"
    assert v.size_gib == size
    assert v.baseline_iops == baseline
    assert v.max_iops == max_iops
    assert v.max_throughput_mib_s == pytest.approx(tput)
    assert v.baseline_throughput_mib_s == pytest.approx(base_tput)
    assert v.credit_capacity == 5.4e6
    assert v.initial_credits == 5.4e6
    assert v.io_unit_bytes == 256 * 1024


@pytest.mark.parametrize(
    "size, iops, tput",
    [
        (1, None, None),  # 3,000 / 125 included even at 1 GiB
        (100, None, None),
        (100, 10000, 500),
        (160, 80000, 2000),
        (1000, 16000, 1000),
    ],
)
def test_gp3_properties(size, iops, tput):
    v = gp3(size, iops=iops, throughput_mib_s=tput)
    want_iops = 3000 if iops is None else iops
    want_tput = 125 if tput is None else tput
    assert v.baseline_iops == want_iops
    assert v.max_iops == want_iops
    assert v.max_throughput_mib_s == want_tput
    assert v.baseline_throughput_mib_s == want_tput
    assert v.credit_capacity == 0
    assert v.io_unit_bytes == 256 * 1024


def test_gp2_initial_balance():
    assert gp2(100, burst_balance_pct=25).initial_credits == pytest.approx(1.35e6)  # 25 % of 5.4e6
    assert gp2(100, burst_balance_pct=0).initial_credits == 0.0


def test_service_time_model():
    # 0.5 ms + bytes / (1,024 MiB/s)
    v = gp2(100)
    assert v.service_time_s(4096) == pytest.approx(0.5e-3 + 4096 / (1024 * MiB), rel=1e-12)
    assert v.service_time_s(MiB) == pytest.approx(0.5e-3 + 1 / 1024, rel=1e-12)  # 1.4765625 ms
    assert v.service_time_s(0) == pytest.approx(0.5e-3)
    # latency_ms and transfer_mib_s change both terms: 2 ms + 1 MiB / 512 MiB/s = 3.953125 ms
    w = Volume("gp3", 100, latency_ms=2.0, transfer_mib_s=512.0)
    assert w.service_time_s(MiB) == pytest.approx(2e-3 + 1 / 512, rel=1e-12)


def test_volume_str_and_equality():
    assert str(gp2(100)) == "gp2 100 GiB (300 IOPS baseline, burst 3000, 128 MiB/s)"
    assert str(gp3(100)) == "gp3 100 GiB (3000 IOPS, 125 MiB/s)"
    assert gp2(100) == gp2(100)
    assert gp2(100) != gp2(101)
    assert "gp3" in gp3(50)._repr_html_()
    assert ebssim.VOLUME_TYPES == ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")


def test_volume_is_frozen():
    v = gp2(100)
    with pytest.raises(AttributeError):
        v.size_gib = 200  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, nbytes",
    [
        ("4k", 4096),
        ("4K", 4096),
        ("4kb", 4096),
        ("4KiB", 4096),
        (" 4 k ", 4096),
        ("1MiB", 1048576),
        ("1m", 1048576),
        ("1.5k", 1536),
        ("0.5m", 524288),
        ("1g", 2**30),
        ("512", 512),
        ("512b", 512),
        (4096, 4096),
        (4096.0, 4096),
        (np.float64(65536), 65536),
    ],
)
def test_parse_sizes(size, nbytes):
    assert ClosedLoop(1, size).io_bytes == nbytes


def test_parse_numpy_integer_size():
    assert ClosedLoop(1, np.int64(4096)).io_bytes == 4096


def test_open_loop_constant():
    # 3,000 IOPS of 4 KiB for 10 s at 0.5 s steps: 20 steps of 1,500 I/Os, 6,144,000 bytes.
    w = OpenLoop.constant(3000, "4k", 10, dt=0.5)
    assert w.n_steps == 20
    np.testing.assert_array_equal(w.ops, np.full(20, 1500.0))
    np.testing.assert_array_equal(w.bytes, np.full(20, 1500.0 * 4096))
    r = simulate(gp3(100), w, dt=0.5)
    np.testing.assert_allclose(r.iops, 3000.0)


def test_open_loop_accepts_lists_and_keeps_float64_arrays():
    w = OpenLoop([1, 2, 3], [4096, 8192, 12288])
    assert w.ops.dtype == np.float64 and w.bytes.dtype == np.float64
    assert w.n_steps == 3


def test_workload_strings():
    assert str(ClosedLoop(32, "4k")) == "4 KiB random reads at queue depth 32"
    assert str(ClosedLoop(8, "1MiB", pattern="sequential", read_fraction=0)) == (
        "1 MiB sequential writes at queue depth 8"
    )
    assert str(Idle()) == "idle"


# --------------------------------------------------------------------------------------------
# Results as a sequence, reprs, dt handling
# --------------------------------------------------------------------------------------------


def test_run_result_is_a_sequence():
    sim = Simulation([gp2(100), gp3(100)], dt=0.5)
    assert sim.dt == 0.5
    rr = sim.run([ClosedLoop(1, "4k"), Idle()], duration_s=2)
    assert len(rr) == 2
    assert [r.volume.type for r in rr] == ["gp2", "gp3"]
    assert rr[-1] is rr[1]
    assert len(rr[0:1]) == 1
    assert rr[0].n_steps == 4 and rr[0].dt_s == 0.5
    assert "RunResult" in repr(rr) and "gp2 100 GiB" in repr(rr)
    assert "t=2 s" in repr(sim)


def test_result_repr_mentions_cliff():
    r = simulate(gp2(100, burst_balance_pct=1), ClosedLoop(32, "4k"), duration_s=30)
    assert "cliff at 20 s" in repr(r)  # 54,000 / 2,700 = 20 s
    assert "no cliff" in repr(simulate(gp3(100), ClosedLoop(32, "4k"), duration_s=3))


def test_output_arrays_are_numpy_float64():
    r = simulate(gp2(100), ClosedLoop(4, "16k"), duration_s=5)
    for a in (r.iops, r.ebs_iops, r.throughput_mib_s, r.credits, r.queue_length, r.latency_s):
        assert isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (5,)
    assert r.bound.dtype == np.uint8
    assert ebssim.BOUND_NAMES == (
        "demand",
        "volume_iops",
        "volume_throughput",
        "instance_iops",
        "instance_throughput",
        "max_in_flight",
    )
