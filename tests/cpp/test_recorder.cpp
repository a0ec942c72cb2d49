// Recording (recorder.hpp): chosen series, intervals of `every` steps, float32, caller buffers,
// the memory limit of what is recorded, record_constant against stepping, and the extremes per
// interval (iops_max, latency_max_s, credits_min, backlog_max; the instance's) against hand-worked
// values, the per-step run aggregated here, and stepping.

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../libebssim/src/recorders.hpp"
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
    // The default: 49 bytes per step, as before (no extremes).
    CHECK(limit_message(sim, w, 2700, Recording{}, 49 * 2700) == "<no LimitError>");
    CHECK(limit_message(sim, w, 2700, Recording{}, 49 * 2700 - 1) != "<no LimitError>");
    // Every series, the four extremes too: 49 + 4 x 8 = 81 bytes per step.
    Recording all;
    all.volume_fields = all_volume_fields;
    CHECK(limit_message(sim, w, 2700, all, 81 * 2700) == "<no LimitError>");
    CHECK(limit_message(sim, w, 2700, all, 81 * 2700 - 1) != "<no LimitError>");
    CHECK(sim.time_s() == 4 * 2700.0 + 2700.0);  // the runs that passed ran
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
    rc.volume_fields = 1U << 11;  // one past backlog_max, the last series
    CHECK(config_error_message([&] { run_with(sim, {w}, 10, rc); }) ==
          "volume_fields=0x800 has bits outside the 11 volume series (at most 0x7ff)");
    rc.volume_fields = all_volume_fields;
    rc.instance_fields = 1U << 8;  // one past byte_balance_min_pct
    CHECK(config_error_message([&] { run_with(sim, {w}, 10, rc); }) ==
          "instance_fields=0x100 has bits outside the 8 instance series (at most 0xff)");
    rc.instance_fields = all_instance_fields;
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

// ---------------------------------------------------------------------------------------------
// Extremes per interval

namespace {

std::uint32_t ibits(std::initializer_list<InstanceField> fs) {
    std::uint32_t b = 0;
    for (InstanceField f : fs) b |= 1U << static_cast<unsigned>(f);
    return b;
}

// The largest, respectively smallest, per-step value of steps k0..k1-1 of a column.
double max_of(const Column& c, std::size_t k0, std::size_t k1) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t k = k0; k < k1; ++k) m = std::max(m, c[k]);
    return m;
}
double min_of(const Column& c, std::size_t k0, std::size_t k1) {
    double m = std::numeric_limits<double>::infinity();
    for (std::size_t k = k0; k < k1; ++k) m = std::min(m, c[k]);
    return m;
}
// The largest per-step latency among steps k0..k1-1 that completed I/O; NaN if none did.
double latency_max_of(const Column& latency, const Column& iops, std::size_t k0, std::size_t k1) {
    double m = NaN;
    for (std::size_t k = k0; k < k1; ++k) {
        if (iops[k] > 0 && !(latency[k] <= m)) m = latency[k];
    }
    return m;
}

// Checks that a run recorded every `every` steps has, per interval, the extremes of the
// per-step run `steps` (the same workload, recorded every step), aggregated here: equal, as both
// come from the same per-step values (`rel` = 0), or, against a run stepped instead of jumped,
// within a jump's tolerance (test_jump.cpp): `rel` and `abs_c` on rates and levels, relatively
// 1e-6 on latency (outstanding / rate, in a step in which a bucket runs dry).
void check_volume_extremes(const StepSeries& steps, const StepSeries& iv, std::int64_t every, double rel = 0,
                           double abs_c = 0) {
    const double lat_rel = rel > 0 ? 1e-6 : 0;
    const std::size_t n = steps.iops.size();
    const auto e = static_cast<std::size_t>(every);
    REQUIRE(iv.iops_max.size() == (n + e - 1) / e);
    auto near_or_equal = [](double got, double want, double r, double abs_tol) {
        if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
        return std::abs(got - want) <= r * std::max(std::abs(got), std::abs(want)) + abs_tol;
    };
    int bad = 0;
    for (std::size_t j = 0; j < iv.iops_max.size() && bad < 5; ++j) {
        const std::size_t k0 = j * e, k1 = std::min(n, k0 + e);
        const bool ok =
            near_or_equal(iv.iops_max[j], max_of(steps.iops, k0, k1), rel, abs_c) &&
            near_or_equal(iv.latency_max_s[j], latency_max_of(steps.latency_s, steps.iops, k0, k1), lat_rel, 0) &&
            near_or_equal(iv.credits_min[j], min_of(steps.credits, k0, k1), rel, abs_c) &&
            near_or_equal(iv.backlog_max[j], max_of(steps.backlog_ops, k0, k1), rel, abs_c);
        if (!ok) {
            ++bad;
            CAPTURE(j);
            CAPTURE(iv.iops_max[j]);
            CAPTURE(max_of(steps.iops, k0, k1));
            CAPTURE(iv.latency_max_s[j]);
            CAPTURE(latency_max_of(steps.latency_s, steps.iops, k0, k1));
            CAPTURE(iv.credits_min[j]);
            CAPTURE(min_of(steps.credits, k0, k1));
            CAPTURE(iv.backlog_max[j]);
            CAPTURE(max_of(steps.backlog_ops, k0, k1));
            CHECK(ok);
        }
    }
}

Recording with_extremes(std::int64_t every) {
    Recording rc;
    rc.every = every;
    rc.volume_fields = all_volume_fields;
    rc.instance_fields = all_instance_fields;
    return rc;
}

}  // namespace

TEST_CASE("extremes per interval: a gp2 trace worked by hand, every = 3, a partial last interval") {
    // 100 GiB gp2 (300 IOPS baseline, 3,000 burst) from 0.1 % of 5.4e6 credits = 5,400, under
    // 4 KiB arrivals [2,000, 3,000, 0 | 2,000, 0, 0 | 0, 0]. Each step (dt = 1 s) has a pool of
    // credits + 300, serves at most min(3,000, pool) and keeps pool - served credits; latency is
    // st + (backlog before + backlog after) / 2 / served (Little's law), NaN when nothing
    // completes:
    //   step 0: pool 5,700, serves 2,000 -> 3,700 credits; latency st (nothing waits)
    //   step 1: pool 4,000, serves 3,000 -> 1,000; latency st
    //   step 2: pool 1,300, nothing arrives -> 1,300; no latency
    //   step 3: pool 1,600 < 2,000: serves 1,600 -> 0, 400 wait; latency st + 200 / 1,600
    //   step 4: pool 300: serves 300 of the 400 -> 0, 100 wait; latency st + 250 / 300
    //   step 5: pool 300: serves the last 100 -> 200; latency st + 50 / 100
    //   steps 6, 7: nothing arrives -> 500, 800 credits; no latency
    // Interval 0 (steps 0-2): iops_max 3,000, latency_max st, credits_min 1,000 (it ends at
    // 1,300: the refill hides the low), backlog_max 0. Interval 1 (3-5): 1,600, st + 250 / 300,
    // 0 (ends at 200), 400. Interval 2 (6-7, partial): 0, NaN (no I/O), 500, 0.
    const std::vector<double> ops{2000, 3000, 0, 2000, 0, 0, 0, 0};
    std::vector<double> bytes;
    for (double o : ops) bytes.push_back(o * 4 * KiB);
    const Workload w = open_loop(ops, bytes);
    for (bool jump : {true, false}) {
        CAPTURE(jump);
        Simulation sim = single(gp2_spec(100, 0.1));
        REQUIRE(sim.credits(0) == 5400.0);
        RunOptions o;
        o.jump = jump;
        o.recording = with_extremes(3);
        RunResult r = sim.run({w}, 8, true, {}, {}, o);
        const StepSeries& v = r.series[0];
        REQUIRE(v.iops_max.size() == 3);
        CHECK(v.iops_max[0] == 3000.0);
        CHECK(v.iops_max[1] == near(1600.0, 1e-12));
        CHECK(v.iops_max[2] == 0.0);
        CHECK(v.latency_max_s[0] == st_4k);
        CHECK(v.latency_max_s[1] == near(st_4k + 250.0 / 300.0, 1e-12));
        CHECK(std::isnan(v.latency_max_s[2]));
        CHECK(v.credits_min[0] == 1000.0);
        CHECK(v.credits_min[1] == 0.0);
        CHECK(v.credits_min[2] == 500.0);
        CHECK(v.backlog_max[0] == 0.0);
        CHECK(v.backlog_max[1] == near(400.0, 1e-12));
        CHECK(v.backlog_max[2] == 0.0);
        // The series of today, beside them: means, I/O-weighted latency, levels at the end.
        CHECK(v.iops[0] == near(5000.0 / 3, 1e-12));
        CHECK(v.credits[0] == 1300.0);
        CHECK(v.credits[1] == 200.0);
        CHECK(v.credits[2] == 800.0);
        CHECK(within(v.backlog_ops[1], 0.0, 1e-9));
        // (1,600 x (st + 200/1,600) + 300 x (st + 250/300) + 100 x (st + 50/100)) / 2,000
        // = st + (200 + 250 + 50) / 2,000 = st + 0.25
        CHECK(v.latency_s[1] == near(st_4k + 0.25, 1e-12));
        CHECK(std::isnan(v.latency_s[2]));
    }
}

TEST_CASE("extremes recorded every step are the steps' own values, and change no other series") {
    // A noisy open loop (0-1,199 I/Os a step, 600 on average) on a 100 GiB gp2 volume with 1 %
    // of its credits (54,000), in 500-step bursts and rests: a burst drains the bucket at about
    // 300 a step, then queues about 300 a step above the 300 IOPS baseline; a rest serves the
    // queue and completes nothing after it (NaN latency) while the bucket refills.
    std::vector<double> ops, bytes;
    for (int k = 0; k < 5000; ++k) {
        ops.push_back((k / 500) % 2 == 1 ? 0.0 : static_cast<double>((k * 7919) % 1200));
        bytes.push_back(ops.back() * (4 + (k * 31) % 60) * KiB);
    }
    const Workload w = open_loop(ops, bytes);
    for (Dtype t : {Dtype::f64, Dtype::f32}) {
        CAPTURE(static_cast<int>(t));
        Simulation a = single(gp2_spec(100, 1.0));
        Simulation b = single(gp2_spec(100, 1.0));
        Recording plain;
        plain.dtype = t;
        Recording rc = with_extremes(1);
        rc.dtype = t;
        RunResult x = run_with(a, {w}, 5000, plain);
        RunResult y = run_with(b, {w}, 5000, rc);
        const StepSeries& p = x.series[0];
        const StepSeries& s = y.series[0];
        CHECK(p.iops_max.empty());  // not in the default recording
        CHECK(p.credits_min.empty());
        REQUIRE(s.iops_max.size() == 5000);
        CHECK(s.iops_max.dtype() == t);
        CHECK(same_series(s.iops_max, s.iops));
        CHECK(same_series(s.latency_max_s, s.latency_s));
        CHECK(same_series(s.credits_min, s.credits));
        CHECK(same_series(s.backlog_max, s.backlog_ops));
        CHECK(same_series(p.iops, s.iops));
        CHECK(same_series(p.ebs_iops, s.ebs_iops));
        CHECK(same_series(p.throughput_mib_s, s.throughput_mib_s));
        CHECK(same_series(p.latency_s, s.latency_s));
        CHECK(same_series(p.credits, s.credits));
        CHECK(same_series(p.backlog_ops, s.backlog_ops));
        for (std::size_t k = 0; k < 5000; ++k) REQUIRE(p.bound[k] == s.bound[k]);
        int idle = 0, queued = 0;
        for (std::size_t k = 0; k < 5000; ++k) {
            idle += std::isnan(s.latency_s[k]);
            queued += s.backlog_ops[k] > 0;
        }
        CHECK(idle > 100);  // the run exercises steps without I/O and with a backlog
        CHECK(queued > 100);
    }
}

TEST_CASE("extremes per interval equal the per-step run aggregated, over random runs (jumped or stepped)") {
    // gp2 (credits drain and refill), gp3 and st1 volumes under open loops of random runs of
    // equal values (jumped where constant, queued above the caps) or closed loops; every from 2
    // to 1,000 steps, the last interval often partial. Both runs record the same per-step
    // values, so each extreme equals the maximum (minimum) the test takes of the every-1 run.
    std::mt19937_64 rng(2024);
    auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
    const std::int64_t everys[] = {2, 3, 7, 60, 1000};
    int partial = 0, with_backlog = 0, idle_interval = 0;
    for (int iter = 0; iter < 60; ++iter) {
        CAPTURE(iter);
        const int type = pick(3);
        const VolumeSpec spec = type == 0   ? gp2_spec(std::round(uni(20, 1000)), uni(0, 5))
                                : type == 1 ? gp3_spec(std::round(uni(50, 1000)))
                                            : [] {
                                                  VolumeSpec s;
                                                  s.type = VolumeType::st1;
                                                  s.size_gib = 500;
                                                  return s;
                                              }();
        const std::int64_t n = 50 + pick(4000);
        const std::int64_t every = everys[pick(5)];
        CAPTURE(n);
        CAPTURE(every);
        Simulation probe = single(spec);
        const VolumeParams& p = probe.params(0);
        std::vector<double> ops, bytes;
        Workload w = closed_loop(std::round(uni(1, 64)), 16 * KiB);
        if (pick(4) != 0) {
            const double io = std::round(std::exp(uni(std::log(4096.0), std::log(1048576.0))));
            while (static_cast<std::int64_t>(ops.size()) < n) {
                const double level = pick(5) == 0 ? 0.0 : std::round(p.burst_iops * uni(0.1, 1.5));
                for (int r = 1 + pick(200); r > 0 && static_cast<std::int64_t>(ops.size()) < n; --r) {
                    ops.push_back(level);
                    bytes.push_back(level * io);
                }
            }
            w = open_loop(ops, bytes);
        }
        const bool jump = pick(2) == 0;
        RunOptions o1, ok;
        o1.jump = ok.jump = jump;
        o1.recording = with_extremes(1);
        ok.recording = with_extremes(every);
        Simulation a = single(spec);
        Simulation b = single(spec);
        const RunResult x = a.run({w}, n, true, {}, {}, o1);
        const RunResult y = b.run({w}, n, true, {}, {}, ok);
        check_volume_extremes(x.series[0], y.series[0], every);
        partial += n % every != 0;
        with_backlog += max_of(x.series[0].backlog_ops, 0, static_cast<std::size_t>(n)) > 0;
        for (std::size_t j = 0; j < y.series[0].latency_max_s.size(); ++j) {
            idle_interval += std::isnan(y.series[0].latency_max_s[j]) ? 1 : 0;
        }
    }
    // The draw covers what the extremes handle apart.
    CHECK(partial > 10);
    CHECK(with_backlog > 10);
    CHECK(idle_interval > 0);
}

TEST_CASE("the instance's extremes per interval equal its per-step run aggregated") {
    // Two gp3 volumes on an m5.large (81.25 MB/s baseline, 593.75 burst) under 100-step bursts
    // of 64 KiB I/Os above its burst, then 900 steps below its baseline: the instance's buckets
    // drain, then refill once the queue is served. Recorded every step, every 50 and every 7.
    std::vector<double> ops, bytes;
    for (int k = 0; k < 6000; ++k) {
        const bool burst = k % 1000 < 100;
        ops.push_back(burst ? 9000.0 + (k * 37) % 500 : 500.0);
        bytes.push_back(ops.back() * 64 * KiB);
    }
    const std::vector<VolumeSpec> specs{gp3_spec(500, 16000, 1000), gp3_spec(500, 16000, 1000)};
    const Workload w = open_loop(ops, bytes);
    for (std::int64_t every : {50, 7}) {
        CAPTURE(every);
        Simulation a(specs, m5_large());
        Simulation b(specs, m5_large());
        RunOptions o1, ok;
        o1.recording = with_extremes(1);
        ok.recording = with_extremes(every);
        const RunResult x = a.run({w, w}, 6000, true, {}, {}, o1);
        const RunResult y = b.run({w, w}, 6000, true, {}, {}, ok);
        const InstanceSeries& s = x.instance_series;
        const InstanceSeries& v = y.instance_series;
        CHECK(same_series(s.iops_max, s.iops));  // every step: the steps' own
        CHECK(same_series(s.io_balance_min_pct, s.io_balance_pct));
        CHECK(same_series(s.byte_balance_min_pct, s.byte_balance_pct));
        const auto e = static_cast<std::size_t>(every);
        REQUIRE(v.iops_max.size() == (6000 + e - 1) / e);
        int dips = 0;  // intervals that end above their lowest balance (a refill inside them)
        for (std::size_t j = 0; j < v.iops_max.size(); ++j) {
            CAPTURE(j);
            const std::size_t k0 = j * e, k1 = std::min<std::size_t>(6000, k0 + e);
            CHECK(v.iops_max[j] == max_of(s.iops, k0, k1));
            CHECK(v.io_balance_min_pct[j] == min_of(s.io_balance_pct, k0, k1));
            CHECK(v.byte_balance_min_pct[j] == min_of(s.byte_balance_pct, k0, k1));
            dips += v.io_balance_min_pct[j] < v.io_balance_pct[j] && v.byte_balance_min_pct[j] < v.byte_balance_pct[j];
        }
        CHECK(dips > 10);
        for (std::size_t i = 0; i < 2; ++i) check_volume_extremes(x.series[i], y.series[i], every);
    }
    // Chosen alone, an extreme needs no other series.
    Simulation c(specs, m5_large());
    Recording rc;
    rc.every = 50;
    rc.volume_fields = bits({VolumeField::backlog_max});
    rc.instance_fields = ibits({InstanceField::io_balance_min_pct});
    RunOptions o;
    o.recording = rc;
    const RunResult z = c.run({w, w}, 6000, true, {}, {}, o);
    CHECK(z.instance_series.iops.empty());
    CHECK(z.instance_series.io_balance_min_pct.size() == 120);
    CHECK(z.series[0].iops.empty());
    CHECK(z.series[0].backlog_max.size() == 120);
}

TEST_CASE("extremes over jumped stretches equal stepping (hand-worked gp2 drain and gp3 backlog)") {
    // (a) 100 GiB gp2 under 32 x 4 KiB: 3,000 IOPS while credits last, 2,700 a second fewer
    // (5.4e6 / 2,700 = 2,000 s), then 300 IOPS; latency 32 / 3,000 s, then 32 / 300 s. Every 60:
    // credits_min of interval j is the credits after its last step, 5.4e6 - 2,700 x 60 (j + 1),
    // until interval 33 (1,980-2,039 s), which runs dry: 0, with iops_max 3,000 and
    // latency_max 32 / 300. The run is jumped (linear credits) and compared with stepping.
    {
        const Workload w = closed_loop(32, 4 * KiB);
        for (std::int64_t every : {60, 7}) {
            CAPTURE(every);
            Simulation a = single(gp2_spec(100));
            Simulation b = single(gp2_spec(100));
            RunOptions j, s;
            s.jump = false;
            j.recording = with_extremes(every);
            s.recording = with_extremes(1);  // stepped, every step: aggregated by the check
            const RunResult x = a.run({w}, 2700, true, {}, {}, j);
            const RunResult y = b.run({w}, 2700, true, {}, {}, s);
            // Tolerance of a jump (test_jump.cpp, docs/model.md): relative 1e-9, credits 1e-9 of the bucket.
            check_volume_extremes(y.series[0], x.series[0], every, 1e-9, 1e-9 * 5.4e6);
            const std::size_t n = x.series[0].credits_min.size();
            CHECK(n == static_cast<std::size_t>((2700 + every - 1) / every));
            if (every == 60) {
                const StepSeries& v = x.series[0];
                CHECK(v.credits_min[0] == near(5.4e6 - 2700.0 * 60, 1e-12));
                CHECK(v.credits_min[32] == near(5.4e6 - 2700.0 * 1980, 1e-12));  // 54,000
                CHECK(v.credits_min[33] == 0.0);
                CHECK(v.iops_max[33] == near(3000.0, 1e-12));
                CHECK(v.latency_max_s[32] == near(32.0 / 3000, 1e-12));
                CHECK(v.latency_max_s[33] == near(32.0 / 300, 1e-9));
                CHECK(v.backlog_max[33] == 0.0);
            }
        }
    }
    // (b) gp3 500 GiB (3,000 IOPS, no bucket): 4,000 IOPS of 4 KiB for 600 s, then 2,000. The
    // backlog grows by 1,000 a step to 600,000 after step 599, then drains by 1,000 a step to 0
    // after step 1,199. Step j < 600 waits (1,000 j + 1,000 (j + 1)) / 2 = 1,000 (j + 0.5) on
    // average: latency st + (j + 0.5) / 3, the largest in step 599 and again in step 600 (which
    // waits (600,000 + 599,000) / 2), st + 599,500 / 3,000. Every 60, interval 9 (steps 540-599)
    // and 10 (600-659) peak there; interval 9 has backlog_max 600,000, interval 10 599,000.
    // Jumped, the backlog and the latency are linear (record_constant's slopes).
    {
        const std::vector<std::int64_t> change{0, 600};  // spans point into these
        const std::vector<double> ops{4000, 2000}, bytes{4000 * 4 * KiB, 2000 * 4 * KiB};
        PiecewiseOpenLoop pw;
        pw.change_steps = change;
        pw.ops = ops;
        pw.bytes = bytes;
        for (std::int64_t every : {60, 7}) {
            CAPTURE(every);
            Simulation a = single(gp3_spec(500));
            Simulation b = single(gp3_spec(500));
            RunOptions j, s;
            s.jump = false;
            j.recording = with_extremes(every);
            s.recording = with_extremes(1);
            const RunResult x = a.run({pw}, 1400, true, {}, {}, j);
            const RunResult y = b.run({pw}, 1400, true, {}, {}, s);
            // Backlogs carry an absolute rounding of 1e-9 of the ops demanded (test_jump.cpp).
            check_volume_extremes(y.series[0], x.series[0], every, 1e-9, 1e-9 * 4.0e6 + 1e-6);
            if (every == 60) {
                const StepSeries& v = x.series[0];
                CHECK(v.backlog_max[9] == near(600000.0, 1e-12));
                CHECK(v.backlog_max[10] == near(599000.0, 1e-12));
                CHECK(v.latency_max_s[9] == near(st_4k + 599500.0 / 3000, 1e-9));
                CHECK(v.latency_max_s[10] == near(st_4k + 599500.0 / 3000, 1e-9));
                CHECK(v.iops_max[9] == near(3000.0, 1e-12));
                CHECK(v.credits_min[9] == 0.0);  // no bucket
                // The last, partial interval (steps 1,380-1,399): 2,000 a step, no backlog.
                CHECK(v.iops_max.size() == 24);
                CHECK(v.iops_max[23] == near(2000.0, 1e-12));
                CHECK(v.backlog_max[23] == 0.0);
                CHECK(v.latency_max_s[23] == near(st_4k, 1e-12));
            }
        }
    }
}

TEST_CASE("record_constant's extremes equal recording the steps one by one") {
    // 50 steps with the same rates and linear levels and latency, from the 3rd step of an
    // interval, then idle steps. sign +1: credits fall by 2,700 a step, backlog and latency rise
    // (a growing queue), so each chunk's extremes are at its last step; sign -1: credits refill,
    // the queue drains, the extremes are at each chunk's first step. Monotone in j (and rounding
    // is monotone), so recording step by step gives the same values, bit for bit.
    for (double sign : {1.0, -1.0}) {
        CAPTURE(sign);
        VolumeRecorder::Step base{{1234.5, 1300.25, 4.8}, 0.1, {5e5, 2e4}, code(Bound::volume_throughput)};
        const double d_c = -2700.0 * sign, d_b = 250.0 * sign, d_lat = 1e-3 * sign;
        for (std::int64_t every : {1, 7, 100}) {
            CAPTURE(every);
            Recording rc = with_extremes(every);
            const std::int64_t n = 3 + 50 + 4;
            StepSeries one, many;
            prepare_series(one, rc, n, {});
            prepare_series(many, rc, n, {});
            VolumeRecorder a = make_recorder(one, rc);
            VolumeRecorder b = make_recorder(many, rc);
            VolumeRecorder::Step other{{10, 11, 0.1}, 0.5, {9e5, 0}, code(Bound::demand)};
            VolumeRecorder::Step idle{{0, 0, 0}, NaN, {9e5, 0}, code(Bound::demand)};
            for (std::int64_t k = 0; k < 3; ++k) {
                a.record(k, k == 1 ? idle : other);
                b.record(k, k == 1 ? idle : other);
            }
            for (std::int64_t j = 0; j < 50; ++j) {
                VolumeRecorder::Step s = base;
                s.end[0] = base.end[0] + static_cast<double>(j) * d_c;
                s.end[1] = base.end[1] + static_cast<double>(j) * d_b;
                s.latency = base.latency + static_cast<double>(j) * d_lat;
                a.record(3 + j, s);
            }
            b.record_constant(3, 50, base, {d_c, d_b}, d_lat);
            for (std::int64_t k = 53; k < n; ++k) {
                a.record(k, idle);
                b.record(k, idle);
            }
            a.finish();
            b.finish();
            REQUIRE(one.iops_max.size() == static_cast<std::size_t>(rc.intervals(n)));
            for (std::size_t j = 0; j < one.iops_max.size(); ++j) {
                CAPTURE(j);
                CHECK(one.iops_max[j] == many.iops_max[j]);
                CHECK(close(one.latency_max_s[j], many.latency_max_s[j], 0.0));  // NaN matches NaN
                CHECK(one.credits_min[j] == many.credits_min[j]);
                CHECK(one.backlog_max[j] == many.backlog_max[j]);
            }
            if (every == 100) {
                // One interval, partial: the extremes of all 57 steps. The stretch's lowest
                // credits and largest backlog are at its last step (j = 49) or its first (j = 0);
                // the `other` steps' latency 0.5 beats the stretch's 0.1 +- 0.049.
                const double jx = sign > 0 ? 49 : 0;
                CHECK(many.iops_max[0] == 1234.5);
                CHECK(many.latency_max_s[0] == 0.5);
                CHECK(many.credits_min[0] == 5e5 + jx * d_c);
                CHECK(many.backlog_max[0] == 2e4 + jx * d_b);
            }
            if (every == 7) {
                // Interval 7 (steps 49-55): steps 49-52 of the stretch (j = 46..49), then idle:
                // the extremes at j = 49 (sign +1) or j = 46 (sign -1).
                const double jx = sign > 0 ? 49 : 46;
                CHECK(many.iops_max[7] == 1234.5);
                CHECK(many.latency_max_s[7] == base.latency + jx * d_lat);
                CHECK(many.credits_min[7] == 5e5 + jx * d_c);
                CHECK(many.backlog_max[7] == 2e4 + jx * d_b);
                // Interval 8 (step 56): idle only: no I/O, no latency.
                CHECK(std::isnan(many.latency_max_s[8]));
                CHECK(many.iops_max[8] == 0.0);
            }
        }
    }
}
