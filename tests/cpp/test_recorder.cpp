// Recording (recorder.hpp): chosen series, intervals of `every` steps, float32, caller buffers,
// the memory limit of what is recorded, and record_constant against stepping.

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

RunResult run_with(Simulation& sim, const std::vector<Workload>& ws, std::int64_t n, const Recording& rc,
                   const RunLimits& limits = {}) {
    RunOptions o;
    o.recording = rc;
    return sim.run(ws, n, true, limits, {}, o);
}

std::uint32_t bits(std::initializer_list<VolumeField> fs) {
    std::uint32_t b = 0;
    for (VolumeField f : fs) b |= 1U << static_cast<unsigned>(f);
    return b;
}

// Mean of per-step values k0..k1-1 of a column.
double mean_of(const Column& c, std::size_t k0, std::size_t k1) {
    double s = 0;
    for (std::size_t k = k0; k < k1; ++k) s += c[k];
    return s / static_cast<double>(k1 - k0);
}

bool close(double a, double b, double rel = 1e-12) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

std::string limit_message(Simulation& sim, const Workload& w, std::int64_t n, const Recording& rc,
                          std::int64_t max_bytes) {
    try {
        RunLimits l;
        l.max_memory_bytes = max_bytes;
        run_with(sim, {w}, n, rc, l);
    } catch (const LimitError& e) {
        return e.what();
    }
    return "<no LimitError>";
}

}  // namespace

TEST_CASE("gp2 cliff recorded every 60 steps: interval means, end-of-interval credits, weighted latency") {
    // 100 GiB gp2 under 32 x 4 KiB: 3,000 IOPS for 2,000 s (5.4e6 / 2,700), then 300 IOPS.
    // Interval 33 (steps 1,980..2,039) has 20 steps at 3,000 and 40 at 300: mean 1,200 IOPS.
    // Latency 32 / 3,000 s, then 32 / 300 s; weighted by I/Os: (20 x 32 + 40 x 32) / 72,000
    // = 32 / 1,200 s (Little's law per interval: 32 outstanding at 1,200 IOPS).
    Simulation a = single(gp2_spec(100));
    Simulation b = single(gp2_spec(100));
    const Workload w = closed_loop(32, 4 * KiB);
    RunResult steps = run1(a, w, 2700);
    Recording rc;
    rc.every = 60;
    RunResult iv = run_with(b, {w}, 2700, rc);
    CHECK(iv.record_every == 60);
    const StepSeries& s = steps.series[0];
    const StepSeries& v = iv.series[0];
    REQUIRE(v.iops.size() == 45);
    REQUIRE(v.bound.size() == 45);
    CHECK(v.iops[33] == doctest::Approx(1200.0).epsilon(1e-14));
    CHECK(v.latency_s[33] == doctest::Approx(32.0 / 1200.0).epsilon(1e-12));
    CHECK(v.queue_length(33) == doctest::Approx(32.0).epsilon(1e-12));
    CHECK(v.credits[32] == 5.4e6 - 1980.0 * 2700.0);  // end of step 1,979
    CHECK(v.credits[33] == 0.0);
    for (std::size_t j = 0; j < 45; ++j) {
        CAPTURE(j);
        const std::size_t k0 = 60 * j, k1 = k0 + 60;
        CHECK(close(v.iops[j], mean_of(s.iops, k0, k1)));
        CHECK(close(v.ebs_iops[j], mean_of(s.ebs_iops, k0, k1)));
        CHECK(close(v.throughput_mib_s[j], mean_of(s.throughput_mib_s, k0, k1)));
        CHECK(v.credits[j] == s.credits[k1 - 1]);
        CHECK(v.backlog_ops[j] == s.backlog_ops[k1 - 1]);
        CHECK(v.bound[j] == code(Bound::volume_iops));
    }
    // Totals do not depend on the recording.
    CHECK(iv.totals[0].served_ops == steps.totals[0].served_ops);
    CHECK(iv.totals[0].latency_ops_s == steps.totals[0].latency_ops_s);
    CHECK(iv.totals[0].cliff_time_s == steps.totals[0].cliff_time_s);
}

TEST_CASE("a last partial interval, and the bound that held most of an interval") {
    // An open loop on gp3 (3,000 IOPS): per 10-step interval, steps of 3,001 I/Os (volume_iops;
    // one more I/O queues each time) then steps of 500 (demand: the queue drains at once). The
    // first interval has 6 and 4, the second 5 and 5 (a tie: demand, the lower code). 25 steps
    // in all: the third interval has 5 steps, of 100 I/Os.
    std::vector<double> ops;
    for (int k = 0; k < 6; ++k) ops.push_back(3001.0);
    for (int k = 0; k < 4; ++k) ops.push_back(500.0);
    for (int k = 0; k < 5; ++k) ops.push_back(3001.0);
    for (int k = 0; k < 5; ++k) ops.push_back(500.0);
    for (int k = 0; k < 5; ++k) ops.push_back(100.0);
    std::vector<double> bytes(ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) bytes[k] = ops[k] * 4 * KiB;
    const Workload w = open_loop(ops, bytes);
    Simulation a = single(gp3_spec(100));
    Simulation b = single(gp3_spec(100));
    RunResult steps = run1(a, w, 25);
    Recording rc;
    rc.every = 10;
    RunResult iv = run_with(b, {w}, 25, rc);
    const StepSeries& s = steps.series[0];
    const StepSeries& v = iv.series[0];
    REQUIRE(v.iops.size() == 3);
    int bound1 = 0, bound2 = 0;
    for (std::size_t k = 0; k < 10; ++k) bound1 += s.bound[k] == code(Bound::volume_iops);
    for (std::size_t k = 10; k < 20; ++k) bound2 += s.bound[k] == code(Bound::volume_iops);
    REQUIRE(bound1 == 6);
    REQUIRE(bound2 == 5);
    CHECK(v.bound[0] == code(Bound::volume_iops));
    CHECK(v.bound[1] == code(Bound::demand));  // 5 against 5: the lower code
    CHECK(v.bound[2] == code(Bound::demand));
    CHECK(close(v.iops[2], mean_of(s.iops, 20, 25)));  // the 5 steps of the last interval
    CHECK(v.iops[2] == 100.0);
    CHECK(v.credits[2] == s.credits[24]);
    CHECK(v.backlog_ops[2] == s.backlog_ops[24]);
    for (std::size_t j = 0; j < 2; ++j) CHECK(close(v.iops[j], mean_of(s.iops, 10 * j, 10 * j + 10)));
}

TEST_CASE("float32 storage holds the float64 values rounded, every step and per interval") {
    const Workload w = closed_loop(32, 4 * KiB);
    for (std::int64_t every : {1, 60}) {
        CAPTURE(every);
        Simulation a = single(gp2_spec(100));
        Simulation b = single(gp2_spec(100));
        Recording r64;
        r64.every = every;
        Recording r32 = r64;
        r32.dtype = Dtype::f32;
        RunResult x = run_with(a, {w}, 2700, r64);
        RunResult y = run_with(b, {w}, 2700, r32);
        const StepSeries& s = x.series[0];
        StepSeries& f = y.series[0];
        REQUIRE(f.iops.dtype() == Dtype::f32);
        REQUIRE(f.iops.f64().empty());
        REQUIRE(f.iops.size() == s.iops.size());
        for (std::size_t j = 0; j < s.iops.size(); ++j) {
            CAPTURE(j);
            CHECK(f.iops.f32()[j] == static_cast<float>(s.iops[j]));
            CHECK(f.credits.f32()[j] == static_cast<float>(s.credits[j]));
            CHECK(f.latency_s.f32()[j] == static_cast<float>(s.latency_s[j]));
            CHECK(f.bound[j] == s.bound[j]);
        }
    }
}

TEST_CASE("chosen series only: the others are empty and the memory limit counts what is recorded") {
    const Workload w = closed_loop(32, 4 * KiB);
    Recording rc;
    rc.volume_fields = bits({VolumeField::iops, VolumeField::credits});
    rc.every = 60;
    {
        Simulation sim = single(gp2_spec(100));
        RunResult r = run_with(sim, {w}, 2700, rc);
        const StepSeries& s = r.series[0];
        CHECK(s.iops.size() == 45);
        CHECK(s.credits.size() == 45);
        CHECK(s.ebs_iops.empty());
        CHECK(s.latency_s.empty());
        CHECK(s.backlog_ops.empty());
        CHECK(s.bound.empty());
        CHECK(s.iops[33] == doctest::Approx(1200.0).epsilon(1e-14));
    }
    // 45 values x 2 doubles = 720 bytes; float32: 360; with bound: + 45.
    Simulation sim = single(gp2_spec(100));
    CHECK(limit_message(sim, w, 2700, rc, 720) == "<no LimitError>");
    const std::string msg = limit_message(sim, w, 2700, rc, 719);
    CHECK(msg.find("takes 720 bytes (16 per value, one value every 60 steps)") != std::string::npos);
    Recording r32 = rc;
    r32.dtype = Dtype::f32;
    CHECK(limit_message(sim, w, 2700, r32, 360) == "<no LimitError>");
    CHECK(limit_message(sim, w, 2700, r32, 359) != "<no LimitError>");
    r32.volume_fields |= bits({VolumeField::bound});
    CHECK(limit_message(sim, w, 2700, r32, 405) == "<no LimitError>");
    CHECK(limit_message(sim, w, 2700, r32, 404) != "<no LimitError>");
    // The default: 49 bytes per step, as before.
    CHECK(limit_message(sim, w, 2700, Recording{}, 49 * 2700) == "<no LimitError>");
    CHECK(limit_message(sim, w, 2700, Recording{}, 49 * 2700 - 1) != "<no LimitError>");
    CHECK(sim.time_s() == 3 * 2700.0 + 2700.0);  // the runs that passed ran
}

TEST_CASE("caller buffers are written in place and not counted by the memory limit") {
    const Workload w = closed_loop(32, 4 * KiB);
    std::vector<double> iops(45, -1.0);
    std::vector<std::uint8_t> bound(45, 255);
    Recording rc;
    rc.every = 60;
    rc.volume_fields = bits({VolumeField::iops, VolumeField::credits, VolumeField::bound});
    rc.volume_out.assign(1, {});
    rc.volume_out[0][static_cast<std::size_t>(VolumeField::iops)] = iops.data();
    rc.volume_out[0][static_cast<std::size_t>(VolumeField::bound)] = bound.data();
    Simulation sim = single(gp2_spec(100));
    RunLimits l;
    l.max_memory_bytes = 45 * 8;  // only credits is allocated
    RunResult r = run_with(sim, {w}, 2700, rc, l);
    StepSeries& s = r.series[0];
    CHECK(s.iops.data() == iops.data());
    CHECK(s.iops.borrowed());
    CHECK_FALSE(s.credits.borrowed());
    CHECK(s.bound.data() == bound.data());
    CHECK(iops[0] == 3000.0);
    CHECK(iops[33] == doctest::Approx(1200.0).epsilon(1e-14));
    CHECK(iops[44] == 300.0);
    CHECK(bound[44] == code(Bound::volume_iops));
    r = RunResult{};  // dropping the result leaves the caller's buffers alone
    CHECK(iops[44] == 300.0);
}

TEST_CASE("a subset at every step takes the general path and writes the same values bit for bit") {
    std::vector<double> ops, bytes;
    for (int k = 0; k < 5000; ++k) {
        ops.push_back(static_cast<double>((k * 7919) % 5600));
        bytes.push_back(ops.back() * (4 + (k * 31) % 60) * KiB);
    }
    const Workload w = open_loop(ops, bytes);
    Simulation a = single(gp2_spec(100, 1.0));
    Simulation b = single(gp2_spec(100, 1.0));
    RunResult full = run1(a, w, 5000);
    Recording rc;
    rc.volume_fields = all_volume_fields & ~bits({VolumeField::ebs_iops});
    RunResult sub = run_with(b, {w}, 5000, rc);
    const StepSeries& x = full.series[0];
    const StepSeries& y = sub.series[0];
    CHECK(y.ebs_iops.empty());
    CHECK(same_series(x.iops, y.iops));
    CHECK(same_series(x.latency_s, y.latency_s));
    CHECK(same_series(x.credits, y.credits));
    CHECK(same_series(x.backlog_ops, y.backlog_ops));
    CHECK(same_series(x.throughput_mib_s, y.throughput_mib_s));
    for (std::size_t k = 0; k < 5000; ++k) REQUIRE(x.bound[k] == y.bound[k]);
}

TEST_CASE("the instance's series per interval: means of the steps, balances at the end") {
    Simulation a(std::vector<VolumeSpec>{gp3_spec(100, 16000, 1000), gp3_spec(100, 16000, 1000)}, m5_xlarge());
    Simulation b(std::vector<VolumeSpec>{gp3_spec(100, 16000, 1000), gp3_spec(100, 16000, 1000)}, m5_xlarge());
    const Workload w = closed_loop(256, 16 * KiB);
    RunResult steps = a.run({w, w}, 2400);
    Recording rc;
    rc.every = 100;
    rc.instance_fields = (1U << static_cast<unsigned>(InstanceField::iops)) |
                         (1U << static_cast<unsigned>(InstanceField::io_balance_pct)) |
                         (1U << static_cast<unsigned>(InstanceField::bound));
    RunResult iv = run_with(b, {w, w}, 2400, rc);
    const InstanceSeries& s = steps.instance_series;
    const InstanceSeries& v = iv.instance_series;
    REQUIRE(v.iops.size() == 24);
    CHECK(v.throughput_mb_s.empty());
    CHECK(v.byte_balance_pct.empty());
    // 18,750 IOPS until the IO bucket empties at 1,800 s, then 6,000; EBSIOBalance% 0 from then.
    CHECK(v.iops[0] == doctest::Approx(18750.0).epsilon(1e-12));
    CHECK(v.iops[23] == doctest::Approx(6000.0).epsilon(1e-12));
    CHECK(v.io_balance_pct[17] == 0.0);
    for (std::size_t j = 0; j < 24; ++j) {
        CAPTURE(j);
        CHECK(close(v.iops[j], mean_of(s.iops, 100 * j, 100 * j + 100)));
        CHECK(v.io_balance_pct[j] == s.io_balance_pct[100 * j + 99]);
        CHECK(v.bound[j] == code(Bound::instance_iops));
    }
    CHECK(iv.series[0].iops.size() == 24);
    CHECK(iv.instance_totals.served_counted == steps.instance_totals.served_counted);
}

TEST_CASE("record_constant equals recording the steps one by one") {
    // m steps with the same outputs and credits c0 + j d, from the 3rd step of an interval.
    VolumeRecorder::Step base{{1234.5, 1300.25, 4.8}, 0.0123, {5e5, 17.0}, code(Bound::volume_throughput)};
    const double d = -2700.0;
    for (std::int64_t every : {1, 7}) {
        CAPTURE(every);
        Recording rc;
        rc.every = every;
        const std::int64_t n = 3 + 50 + 4;  // 3 steps before, 50 constant, 4 after
        StepSeries one, many;
        prepare_series(one, rc, n, {});
        prepare_series(many, rc, n, {});
        VolumeRecorder a = make_recorder(one, rc);
        VolumeRecorder b = make_recorder(many, rc);
        VolumeRecorder::Step other{{10, 11, 0.1}, 0.5, {9e5, 0}, code(Bound::demand)};
        for (std::int64_t k = 0; k < 3; ++k) {
            a.record(k, other);
            b.record(k, other);
        }
        for (std::int64_t j = 0; j < 50; ++j) {
            VolumeRecorder::Step s = base;
            s.end[0] = base.end[0] + static_cast<double>(j) * d;
            a.record(3 + j, s);
        }
        b.record_constant(3, 50, base, {d, 0.0});
        for (std::int64_t k = 53; k < n; ++k) {
            a.record(k, other);
            b.record(k, other);
        }
        a.finish();
        b.finish();
        REQUIRE(one.iops.size() == static_cast<std::size_t>(rc.intervals(n)));
        for (std::size_t j = 0; j < one.iops.size(); ++j) {
            CAPTURE(j);
            // Every step: bit for bit. Per interval: c x value against a sum of c values, within
            // a few ulps.
            const double rel = every == 1 ? 0.0 : 1e-14;
            CHECK(close(one.iops[j], many.iops[j], rel));
            CHECK(close(one.ebs_iops[j], many.ebs_iops[j], rel));
            CHECK(close(one.throughput_mib_s[j], many.throughput_mib_s[j], rel));
            CHECK(close(one.latency_s[j], many.latency_s[j], rel));
            CHECK(one.credits[j] == many.credits[j]);
            CHECK(one.backlog_ops[j] == many.backlog_ops[j]);
            CHECK(one.bound[j] == many.bound[j]);
        }
    }
}

TEST_CASE("bad recordings are ConfigErrors naming the field") {
    Simulation sim = single(gp2_spec(100));
    const Workload w = closed_loop(32, 4 * KiB);
    Recording rc;
    rc.every = 0;
    CHECK(config_error_message([&] { run_with(sim, {w}, 10, rc); }) == "every=0 steps per recorded value must be >= 1");
    rc.every = 1;
    rc.volume_fields = 1U << 9;
    CHECK(config_error_message([&] { run_with(sim, {w}, 10, rc); }).find("volume_fields=0x200") != std::string::npos);
    rc.volume_fields = all_volume_fields;
    rc.volume_out.assign(2, {});
    CHECK(config_error_message([&] { run_with(sim, {w}, 10, rc); }) ==
          "volume_out has buffers for 2 volumes but the simulation has 1");
    // record=false ignores the recording.
    RunOptions o;
    o.recording = rc;
    CHECK(sim.run({w}, 10, false, {}, {}, o).series.empty());
}

TEST_CASE("interval recording is the same on one thread and two") {
    // Three independent volumes (enough work for two threads), each recorded every 7 steps in
    // float32 into its own recorder: the threads step copies and write them back.
    const std::vector<VolumeSpec> specs{gp2_spec(100), gp2_spec(200), gp2_spec(300)};
    const std::vector<Workload> ws{closed_loop(32, 4 * KiB), closed_loop(8, 16 * KiB), closed_loop(64, 4 * KiB)};
    Recording rc;
    rc.every = 7;
    rc.dtype = Dtype::f32;
    RunOptions one, two;
    one.recording = two.recording = rc;
    one.threads = 1;
    two.threads = 2;
    Simulation a(specs), b(specs);
    RunResult x = a.run(ws, 100'000, true, {}, {}, one);
    RunResult y = b.run(ws, 100'000, true, {}, {}, two);
    for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(i);
        REQUIRE(x.series[i].iops.size() == 14286);  // ceil(100,000 / 7)
        CHECK(same_series(x.series[i].iops, y.series[i].iops));
        CHECK(same_series(x.series[i].latency_s, y.series[i].latency_s));
        CHECK(same_series(x.series[i].credits, y.series[i].credits));
        for (std::size_t j = 0; j < 14286; ++j) REQUIRE(x.series[i].bound[j] == y.series[i].bound[j]);
    }
}
