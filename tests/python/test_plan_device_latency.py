"""Capacity plans on the device latency (Plan(latency_at="device"), a plan's criteria.latency_at):
an application that bounds its outstanding I/Os waits in the application for what a slower
volume cannot carry, and its latency criteria may count from the I/O's submission to the device
(what the volume's own latency metrics show) instead of from its arrival. Numbers worked out by
hand (the arithmetic in the comments)."""

from __future__ import annotations

from pathlib import Path

import ebssim
import numpy as np
import pytest
from ebssim import OpenLoop, gp3, simulate
from ebssim.check import parse_plan
from ebssim.testing import Plan, assert_plan


def _bounded():
    # gp3 100 GiB serves 3,000 IOPS; 5,000 4-KiB reads arrive a second for a minute, 64 at most in
    # flight: the device holds the 64 at the cap in every step, 64 / 3,000 s = 21.33 ms; the rest
    # waits in the application, 2,000 more each second (from arrival: seconds).
    return simulate(gp3(100), OpenLoop.constant(5000, "4k", 60, max_in_flight=64))


def _device_quantiles(qs):
    model = ebssim.LatencyModel.of(gp3(100), 4096, 1.0, in_flight=64)
    return ebssim.latency_quantiles([64 / 3000], [1.0], qs, model) * 1e3


def test_device_latency_criteria_count_from_submission():
    r = _bounded()
    p99 = float(_device_quantiles([0.99])[0])  # 64.8 ms: the spread of the waits under the cap
    assert 60 < p99 < 70
    report = assert_plan(r, p99_ms=70, max_latency_ms=25, latency_at="device")
    assert [(c.criterion, c.ok) for c in report.checks] == [
        ("p99 device latency <= 70 ms", True),
        ("device latency <= 25 ms in every step", True),
    ]
    assert report.checks[0].got == f"got {ebssim._repr.latency(p99)}"
    # From arrival (the default) the same plan fails: the backlog's wait is the application's.
    arrival = Plan(p99_ms=70, max_latency_ms=25).check(r)
    assert [c.ok for c in arrival.checks] == [False, False]
    assert arrival.checks[0].criterion == "p99 latency <= 70 ms"


def test_device_latency_failure_names_the_steps_above():
    # 20 ms is below the 21.33 ms every step holds at the device: every step is above it.
    report = Plan(max_latency_ms=20, latency_at="device").check(_bounded())
    c = report.checks[0]
    assert not c.ok and c.criterion == "device latency <= 20 ms in every step"
    assert c.got.startswith("got 21.3 ms at most")
    assert "device latency above 20 ms" in c.detail


def test_without_a_bound_device_and_arrival_agree():
    r = simulate(gp3(100), OpenLoop.constant(2000, "4k", 10))
    a = Plan(p99_ms=5).check(r).checks[0]
    d = Plan(p99_ms=5, latency_at="device").check(r).checks[0]
    assert a.got == d.got and a.ok == d.ok


def test_latency_at_is_checked_and_is_no_criterion():
    with pytest.raises(ValueError, match=r"latency_at='clat' must be 'arrival'"):
        Plan(p99_ms=5, latency_at="clat")
    with pytest.raises(ValueError, match="the plan has no criterion"):
        Plan(latency_at="device")


def test_a_plan_file_takes_latency_at(tmp_path: Path):
    # The same minute as a trace file: 5,000 reads of 4 KiB a second, 64 at most in flight.
    rows = ["time,read_iops,read_mib_s"] + [f"2024-05-01T00:00:{s:02d}Z,5000,19.53125" for s in range(60)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    text = (
        "volumes: {v: 'gp3:size=100'}\nworkload: {trace: {v: t.csv}, max_in_flight: 64}\n"
        "criteria: {p99_ms: 70, latency_at: %s}\n"
    )
    device = parse_plan(text % "device", base_dir=tmp_path).run()
    assert device.ok and device.checks[0][1].criterion == "p99 device latency <= 70 ms"
    r = device.results["v"]
    np.testing.assert_allclose(r.device_latency_s[:59], 64 / 3000, rtol=1e-12)
    arrival = parse_plan(text % "arrival", base_dir=tmp_path).run()
    assert not arrival.ok
    with pytest.raises(ValueError, match=r"criteria\.latency_at.*latency_at='sideways' must be 'arrival'"):
        parse_plan(text % "sideways", base_dir=tmp_path)
