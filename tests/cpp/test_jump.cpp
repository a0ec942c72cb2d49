// Closed-form jumps over constant stretches (RunOptions::jump) and the piecewise-constant open
// loop (PiecewiseOpenLoop): a jumped run equals the stepped one (bit for bit at fixed points,
// else within the rounding of c + m*d against m additions), over hand-worked cases and many
// random configurations.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

RunOptions stepped() {
    RunOptions o;
    o.jump = false;
    return o;
}

RunResult run_opt(Simulation& sim, const Workload& w, std::int64_t n, bool jump, bool record = true) {
    RunOptions o;
    o.jump = jump;
    return sim.run({w}, n, record, RunLimits{}, {}, o);
}

RunResult run_opt_all(Simulation& sim, const std::vector<Workload>& ws, std::int64_t n, bool jump, bool record) {
    RunOptions o;
    o.jump = jump;
    return sim.run(ws, n, record, RunLimits{}, {}, o);
}

PiecewiseOpenLoop piecewise(const std::vector<std::int64_t>& change, const std::vector<double>& ops,
                            const std::vector<double>& bytes) {
    PiecewiseOpenLoop p;
    p.change_steps = change;
    p.ops = ops;
    p.bytes = bytes;
    return p;
}

// The per-step values of a piecewise open loop, materialised.
struct Expanded {
    std::vector<double> ops, bytes;
};
Expanded expand(const std::vector<std::int64_t>& change, const std::vector<double>& ops,
                const std::vector<double>& bytes, std::int64_t n) {
    Expanded e;
    for (std::size_t i = 0; i < change.size(); ++i) {
        const std::int64_t end = i + 1 < change.size() ? change[i + 1] : n;
        for (std::int64_t k = change[i]; k < end; ++k) {
            e.ops.push_back(ops[i]);
            e.bytes.push_back(bytes[i]);
        }
    }
    return e;
}

// |a - b| <= rel * max(|a|, |b|) + abs_tol; NaN matches NaN.
bool close(double a, double b, double rel, double abs_tol) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)) + abs_tol;
}

// A volume of `type` of a random size (and io1 IOPS) across its range; `uni(lo, hi)` draws
// uniformly.
template <class Uni>
VolumeSpec random_spec(VolumeType type, Uni& uni) {
    VolumeSpec spec;
    spec.type = type;
    switch (type) {
        case VolumeType::gp2: spec.size_gib = std::round(std::exp(uni(0, std::log(3000.0)))); break;
        case VolumeType::gp3: spec.size_gib = std::round(uni(1, 2000)); break;
        case VolumeType::io1:
            spec.size_gib = std::round(uni(10, 2000));
            spec.iops = std::round(uni(100, std::min(50 * spec.size_gib, 64000.0)));
            break;
        case VolumeType::standard: spec.size_gib = std::round(uni(1, 1024)); break;
        default: spec.size_gib = std::round(uni(125, 16384)); break;
    }
    return spec;
}

// Tolerances of a jumped run against the stepped one (docs/model.md, "Jumps"): relative 1e-9 on
// totals and series (the runs here are at most 2e4 steps; rounding is about n x 2^-53); credits
// also absolutely to 1e-9 of the bucket; cliff times to 1e-6 of a step.
constexpr double rel_tol = 1e-9;

void check_same(const RunResult& j, const RunResult& s, double capacity, const std::string& what) {
    CAPTURE(what);
    REQUIRE(j.totals.size() == s.totals.size());
    for (std::size_t v = 0; v < j.totals.size(); ++v) {
        const VolumeTotals& a = j.totals[v];
        const VolumeTotals& b = s.totals[v];
        CHECK(close(a.demanded_ops, b.demanded_ops, rel_tol, 1e-9));
        CHECK(close(a.demanded_bytes, b.demanded_bytes, rel_tol, 1e-6));
        CHECK(close(a.served_ops, b.served_ops, rel_tol, 1e-9));
        CHECK(close(a.served_bytes, b.served_bytes, rel_tol, 1e-6));
        CHECK(close(a.served_counted, b.served_counted, rel_tol, 1e-9));
        CHECK(close(a.latency_ops_s, b.latency_ops_s, rel_tol, 1e-12));
        // A backlog that drains carries the absolute rounding of its largest value (of m steps'
        // sums against b + m * d), as credits carry the bucket's: 1e-9 of the most it can have
        // held, the ops demanded in the run (or the peak of its series, when recorded).
        double peak = std::max(a.demanded_ops, b.demanded_ops);
        if (!s.series.empty()) {
            const Column& bl = s.series[v].backlog_ops;
            for (std::size_t k = 0; k < bl.size(); ++k) peak = std::max(peak, bl[k]);
        }
        const double abs_b = 1e-9 * peak + 1e-6;
        CHECK(close(a.backlog_ops, b.backlog_ops, rel_tol, abs_b));
        CHECK(close(a.credits_end, b.credits_end, rel_tol, 1e-9 * capacity));
        for (int k = 0; k < n_bounds; ++k) CHECK(a.steps_bound[k] == b.steps_bound[k]);
        REQUIRE(a.cliffs.size() == b.cliffs.size());
        for (std::size_t e = 0; e < a.cliffs.size(); ++e) {
            CHECK(close(a.cliffs[e].start_s, b.cliffs[e].start_s, 1e-12, 1e-6 * j.dt_s));
            CHECK(close(a.cliffs[e].end_s, b.cliffs[e].end_s, 1e-12, 1e-6 * j.dt_s));
        }
        CHECK(close(a.cliff_time_s, b.cliff_time_s, 1e-12, 1e-6 * j.dt_s));
        if (j.series.empty()) continue;
        const StepSeries& x = j.series[v];
        const StepSeries& y = s.series[v];
        REQUIRE(x.iops.size() == y.iops.size());
        // In the step in which a bucket runs dry the volume serves the credits left, which carry
        // the credits' absolute error: rates within it per second, latency (outstanding / rate)
        // relatively 1e-6. The same for the step in which a backlog empties, and the backlog's
        // absolute error (abs_b).
        const double abs_c = 1e-9 * capacity + abs_b;
        int bad = 0;
        for (std::size_t k = 0; k < x.iops.size() && bad < 3; ++k) {
            const bool ok = close(x.iops[k], y.iops[k], rel_tol, abs_c / j.dt_s) &&
                            close(x.ebs_iops[k], y.ebs_iops[k], rel_tol, abs_c / j.dt_s) &&
                            close(x.throughput_mib_s[k], y.throughput_mib_s[k], rel_tol, abs_c / j.dt_s) &&
                            close(x.credits[k], y.credits[k], rel_tol, abs_c) &&
                            close(x.latency_s[k], y.latency_s[k], 1e-6, 1e-15) &&
                            close(x.backlog_ops[k], y.backlog_ops[k], rel_tol, abs_c) && x.bound[k] == y.bound[k];
            if (!ok) {
                ++bad;
                CAPTURE(k);
                CAPTURE(x.credits[k]);
                CAPTURE(y.credits[k]);
                CAPTURE(x.ebs_iops[k]);
                CAPTURE(y.ebs_iops[k]);
                CAPTURE(int(x.bound[k]));
                CAPTURE(x.iops[k] - y.iops[k]);
                CAPTURE(x.ebs_iops[k] - y.ebs_iops[k]);
                CAPTURE(x.throughput_mib_s[k] - y.throughput_mib_s[k]);
                CAPTURE(x.latency_s[k] - y.latency_s[k]);
                CAPTURE(x.latency_s[k]);
                CAPTURE(x.backlog_ops[k]);
                CAPTURE(y.backlog_ops[k]);
                CAPTURE(x.backlog_ops[k] - y.backlog_ops[k]);
                CAPTURE(int(y.bound[k]));
                CHECK(ok);
            }
        }
    }
}

bool bit_identical(const StepSeries& a, const StepSeries& b) {
    return same_series(a.iops, b.iops) && same_series(a.ebs_iops, b.ebs_iops) &&
           same_series(a.throughput_mib_s, b.throughput_mib_s) && same_series(a.credits, b.credits) &&
           same_series(a.latency_s, b.latency_s) && same_series(a.backlog_ops, b.backlog_ops) &&
           std::equal(a.bound.begin(), a.bound.end(), b.bound.begin(), b.bound.end());
}

}  // namespace

TEST_CASE("jump: the reference gp2 drain is bit-identical to stepping (whole numbers add exactly)") {
    // 100 GiB gp2, 32 x 4 KiB: 3,000 IOPS while 5.4e6 credits last, -2,700 per step: empty after
    // exactly 2,000 steps, then 300 IOPS at the empty fixed point. Every value is a whole number
    // (or the same quotient each step), so c + m*d equals m additions exactly.
    Simulation a = single(gp2_spec(100));
    Simulation b = single(gp2_spec(100));
    const RunResult j = run_opt(a, closed_loop(32, 4 * KiB), 2700, true);
    const RunResult s = run_opt(b, closed_loop(32, 4 * KiB), 2700, false);
    CHECK(bit_identical(j.series[0], s.series[0]));
    CHECK(j.series[0].credits[1998] == 2700);
    CHECK(j.series[0].credits[1999] == 0);
    CHECK(j.totals[0].cliff_time_s == 2000);
    CHECK(s.totals[0].cliff_time_s == 2000);
    CHECK(j.totals[0].served_ops == 2000 * 3000.0 + 700 * 300.0);
    CHECK(s.totals[0].served_ops == 2000 * 3000.0 + 700 * 300.0);
    CHECK(j.totals[0].steps_bound[static_cast<int>(Bound::volume_iops)] == 2700);
    CHECK(a.credits(0) == 0);
}

TEST_CASE("jump: fixed points are bit-identical, series and state (gp3, full gp2 bucket at rest)") {
    // gp3 has no bucket: a closed loop is the same step every step.
    Simulation a = single(gp3_spec(500));
    Simulation b = single(gp3_spec(500));
    const RunResult j = run_opt(a, closed_loop(7, 16 * KiB), 5000, true);
    const RunResult s = run_opt(b, closed_loop(7, 16 * KiB), 5000, false);
    CHECK(bit_identical(j.series[0], s.series[0]));
    CHECK(j.totals[0].steps_bound[0] == s.totals[0].steps_bound[0]);
    CHECK(j.totals[0].served_ops == near(s.totals[0].served_ops, 1e-12));

    // A full gp2 bucket under demand below baseline (100 IOPS < 300) stays full.
    std::vector<double> ops(3000, 100.0), bytes(3000, 100.0 * 4096);
    Simulation c = single(gp2_spec(100));
    Simulation d = single(gp2_spec(100));
    const RunResult jo = run_opt(c, open_loop(ops, bytes), 3000, true);
    const RunResult so = run_opt(d, open_loop(ops, bytes), 3000, false);
    CHECK(bit_identical(jo.series[0], so.series[0]));
    CHECK(c.credits(0) == 5.4e6);
    CHECK(jo.totals[0].served_ops == 300000);
}

TEST_CASE("jump: a run of equal steps ends where either the I/Os or the bytes change, at any offset") {
    // A full gp2 bucket at 100 or 120 IOPS (below the 300 baseline: every step is the same fixed
    // point, so jumping is bit-identical to stepping) whose I/O size, or I/O count at the same
    // bytes, changes at steps of every offset in the run finder's blocks of 16 (and 0 = +0 = -0
    // bytes of no I/O, which are equal). A run that went past a change would record the old
    // throughput or latency there.
    const std::int64_t n = 3000;
    std::vector<double> ops(static_cast<std::size_t>(n), 100.0), bytes(static_cast<std::size_t>(n), 100.0 * 4096);
    const std::int64_t bytes_at[] = {37, 38, 100, 117, 500, 1001, 1017, 1023, 2048, 2049};
    const std::int64_t ops_at[] = {1500, 1503, 1518, 1600};
    for (const std::int64_t k : bytes_at) {
        for (std::int64_t i = k; i < n; ++i)
            bytes[static_cast<std::size_t>(i)] =
                bytes[static_cast<std::size_t>(i)] == 100.0 * 4096 ? 100.0 * 16384 : 100.0 * 4096;
    }
    for (const std::int64_t k : ops_at) {  // the same bytes, another count: another I/O size
        for (std::int64_t i = k; i < n; ++i)
            ops[static_cast<std::size_t>(i)] = ops[static_cast<std::size_t>(i)] == 100.0 ? 120.0 : 100.0;
    }
    for (std::int64_t i = 2500; i < 2600; ++i) {
        ops[static_cast<std::size_t>(i)] = i % 2 == 0 ? 0.0 : -0.0;
        bytes[static_cast<std::size_t>(i)] = i % 3 == 0 ? 0.0 : -0.0;
    }
    Simulation a = single(gp2_spec(100));
    Simulation b = single(gp2_spec(100));
    const RunResult j = run_opt(a, open_loop(ops, bytes), n, true);
    const RunResult s = run_opt(b, open_loop(ops, bytes), n, false);
    CHECK(bit_identical(j.series[0], s.series[0]));
    // The recorded throughput follows the bytes at each change (100 x 4 KiB or 16 KiB a second).
    for (const std::int64_t k : bytes_at) {
        const auto i = static_cast<std::size_t>(k);
        CHECK(j.series[0].throughput_mib_s[i] * MiB == bytes[i]);
        CHECK(j.series[0].throughput_mib_s[i - 1] * MiB == bytes[i - 1]);
    }
    for (const std::int64_t k : ops_at)
        CHECK(j.series[0].iops[static_cast<std::size_t>(k)] == ops[static_cast<std::size_t>(k)]);
    CHECK(j.totals[0].served_bytes == s.totals[0].served_bytes);
}

TEST_CASE("piecewise: a gp2 cliff at the hand-worked time, equal to the materialised trace") {
    // 100 GiB gp2 (300 baseline, 3,000 burst, 5.4e6 credits), 4 KiB I/Os. Steps [0, 1000):
    // 1,000 IOPS, credits 5.4e6 - 700 x 1,000 = 4.7e6. Then 2,000 IOPS: -1,700 per step, dry
    // after 4.7e6 / 1,700 = 2,764.705882... steps, so the cliff is at 1,000 + 2,764.70588 s.
    // After it, 2,000 arrive and 300 are served per step: the backlog grows.
    const std::vector<std::int64_t> change{0, 1000};
    const std::vector<double> ops{1000, 2000}, bytes{1000 * 4096.0, 2000 * 4096.0};
    const std::int64_t n = 5000;
    Simulation a = single(gp2_spec(100));
    const RunResult j = run_opt(a, piecewise(change, ops, bytes), n, true);
    CHECK(j.totals[0].cliff_time_s == near(1000 + 4.7e6 / 1700, 1e-12));
    REQUIRE(j.totals[0].cliffs.size() == 1);
    CHECK(std::isnan(j.totals[0].cliffs[0].end_s));
    CHECK(j.series[0].credits[999] == 4.7e6);
    CHECK(j.series[0].credits[1000] == 4.7e6 - 1700);
    // Served: everything until the cliff step (1,000 + 2,764 = 3,764), in it the 1,200 credits
    // left + 300 earned, then 300 per step for the 1,235 steps after it.
    CHECK(j.totals[0].served_ops == near(1000 * 1000.0 + 2764 * 2000.0 + 1500 + 1235 * 300.0, 1e-12));
    CHECK(j.totals[0].demanded_ops == near(1000 * 1000.0 + 4000 * 2000.0, 1e-12));

    // The same demand as a materialised trace, stepped: every step bit-identical to the
    // piecewise loop stepped (the same arithmetic), and within rounding of the jumped one.
    const Expanded e = expand(change, ops, bytes, n);
    Simulation b = single(gp2_spec(100));
    Simulation c = single(gp2_spec(100));
    const RunResult t = run_opt(b, open_loop(e.ops, e.bytes), n, false);
    const RunResult ps = run_opt(c, piecewise(change, ops, bytes), n, false);
    CHECK(bit_identical(t.series[0], ps.series[0]));
    CHECK(t.totals[0].served_ops == ps.totals[0].served_ops);
    check_same(j, t, 5.4e6, "piecewise jumped vs trace stepped");
}

TEST_CASE("piecewise: validation names the field, the index and the value") {
    const std::vector<double> two{1, 2}, two_b{4096, 8192};
    auto msg = [&](const std::vector<std::int64_t>& ch, const std::vector<double>& o, const std::vector<double>& b,
                   std::int64_t n = 100) {
        return config_error_message([&] { (void)single(gp2_spec(100)).run({piecewise(ch, o, b)}, n); });
    };
    CHECK(msg({5, 10}, two, two_b) == "change_steps[0]=5 must be 0 (the first segment starts the run)");
    CHECK(msg({0, 0}, two, two_b) == "change_steps[1]=0 must be > change_steps[0]=0 (strictly increasing)");
    CHECK(msg({0, 100}, two, two_b) == "change_steps[1]=100 must be < the run's n_steps=100 (a change inside the run)");
    CHECK(msg({0}, two, two_b) ==
          "change_steps has 1 segments but ops has 2 and bytes 2: one value of each per segment");
    CHECK(msg({}, {}, {}) == "change_steps is empty: a piecewise open loop needs at least one segment");
    CHECK(msg({0, 10}, {1, -1}, two_b) == "ops[1]=-1 must be finite, >= 0 and <= 1e+15 per step");
    CHECK(msg({0, 10}, {1, 0}, two_b) == "bytes[1]=8192 with ops[1]=0: bytes need at least one I/O");
    CHECK(msg({0, 10}, {1, NaN}, two_b) == "ops[1]=nan must be finite, >= 0 and <= 1e+15 per step");
}

TEST_CASE("piecewise: 30 days at dt = 1 ms, hourly levels, without materialising 2.6e9 steps") {
    // 100 GiB gp2 at dt = 1 ms earns 0.3 credits per step (300 IOPS). Each day: hours 0-7 at
    // 100 IOPS (+0.2 per step, +720,000 an hour), hours 8-17 at 400 IOPS (-0.1 per step,
    // -360,000 an hour), hours 18-23 at 200 IOPS (+0.1 per step, +360,000 an hour). From a full
    // bucket (5.4e6): the night keeps it full, the day drains 3.6e6 to 1.8e6, the evening
    // refills 2.16e6 to 3.96e6; the next night fills it again (1.44e6 in 2 of its 8 hours).
    // Every I/O is served: 0.8 + 4 + 1.2 = 6 I/Os per step-hour, 6 x 3.6e6 a day.
    const std::int64_t hour = 3'600'000;
    const std::int64_t n = 720 * hour;
    std::vector<std::int64_t> change;
    std::vector<double> ops, bytes;
    for (std::int64_t h = 0; h < 720; ++h) {
        const std::int64_t hd = h % 24;
        const double o = hd < 8 ? 0.1 : (hd < 18 ? 0.4 : 0.2);
        change.push_back(h * hour);
        ops.push_back(o);
        bytes.push_back(o * 4096);
    }
    Simulation sim = single(gp2_spec(100), 0.001);
    const RunResult r = sim.run({piecewise(change, ops, bytes)}, n, false);
    CHECK(r.totals[0].credits_end == near(3.96e6, 1e-9));
    CHECK(r.totals[0].served_ops == near(30 * 6 * 3.6e6, 1e-12));
    CHECK(r.totals[0].demanded_ops == near(30 * 6 * 3.6e6, 1e-12));
    CHECK(r.totals[0].steps_bound[0] == n);
    CHECK(std::isnan(r.totals[0].cliff_time_s));
    CHECK(sim.time_s() == near(720 * 3600.0, 1e-15));
}

TEST_CASE("jump: a backlog grows and drains linearly at the IOPS cap (hand-worked, gp3)") {
    // gp3 500 GiB: 3,000 IOPS, 125 MiB/s, no bucket. 4,000 IOPS of 4 KiB for 600 s: 1,000 a
    // second wait, backlog (j + 1) x 1,000 after step j, 600,000 after 600 s. Then 2,000 IOPS:
    // 3,000 served, the backlog drains by 1,000 a second and is empty after step 1,199, in which
    // exactly the cap is available (1,000 + 2,000). Then 2,000 served a step.
    const std::vector<std::int64_t> change{0, 600};
    const std::vector<double> ops{4000, 2000}, bytes{4000 * 4096.0, 2000 * 4096.0};
    const std::int64_t n = 1400;
    Simulation a = single(gp3_spec(500));
    Simulation b = single(gp3_spec(500));
    RunOptions o;
    const RunResult j600 = a.run({piecewise({0}, {4000}, {4000 * 4096.0})}, 600, true, RunLimits{}, {}, o);
    CHECK(a.backlog_ops(0) == 600000);
    CHECK(j600.series[0].backlog_ops[0] == 1000);
    CHECK(j600.series[0].backlog_ops[599] == 600000);
    // The same demand over the whole run, jumped and stepped.
    Simulation c = single(gp3_spec(500));
    const RunResult j = run_opt(c, piecewise(change, ops, bytes), n, true);
    const RunResult s = run_opt(b, piecewise(change, ops, bytes), n, false);
    check_same(j, s, 1.0, "hand-worked backlog");
    const VolumeTotals& t = j.totals[0];
    CHECK(j.series[0].backlog_ops[599] == 600000);
    CHECK(j.series[0].backlog_ops[899] == 300000);
    CHECK(j.series[0].backlog_ops[1198] == 1000);
    CHECK(j.series[0].backlog_ops[1199] == 0);
    CHECK(c.backlog_ops(0) == 0);
    CHECK(t.served_ops == 1200 * 3000.0 + 200 * 2000.0);
    CHECK(t.demanded_ops == 600 * 4000.0 + 800 * 2000.0);
    CHECK(t.served_ops == t.demanded_ops);
    CHECK(t.steps_bound[static_cast<int>(Bound::volume_iops)] == 1199);
    CHECK(t.steps_bound[static_cast<int>(Bound::demand)] == 201);
    // Little's law: the I/O-seconds waited are the area under the backlog, a triangle of 1,200 s
    // x 600,000 / 2 = 3.6e8; every I/O also takes its service time st. Mean latency st + 90 s.
    const VolumeParams& p = c.params(0);
    const double st = p.read_latency_s + 4096 / p.transfer_bytes_s;  // gp2: reads and writes alike
    CHECK(t.latency_ops_s == near(4.0e6 * st + 3.6e8, 1e-12));
    CHECK(t.latency_ops_s / t.served_ops == near(st + 90, 1e-12));
    // Step 0 waits half of its 1,000 left over: latency st + 500 / 3,000.
    CHECK(j.series[0].latency_s[0] == near(st + 500.0 / 3000, 1e-12));
    CHECK(j.series[0].latency_s[599] == near(st + 599500.0 / 3000, 1e-12));
}

namespace {

// Demand alternating above the volume's cap (IOPS or throughput, the bucket full, draining or
// empty) and below it, so backlogs grow, drain, and cross a bucket running dry. `mixed`: each
// segment has its own I/O size, so a backlog carried into the next one has another mix than its
// arrivals (Stepper::jump_mixed; mostly unrecorded, as only unrecorded runs jump those).
void throttled_configurations(std::uint64_t seed, int iters, bool mixed) {
    std::mt19937_64 rng(seed);
    auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
    const VolumeType types[] = {VolumeType::gp2, VolumeType::gp3, VolumeType::io1, VolumeType::st1, VolumeType::sc1};
    const double dts[] = {0.001, 0.1, 1.0, 10.0};
    std::mt19937_64 over_rng(seed + 100);
    for (int iter = 0; iter < iters; ++iter) {
        CAPTURE(iter);
        const VolumeType type = types[pick(5)];
        VolumeSpec spec = random_spec(type, uni);
        if ((type == VolumeType::gp2 || type == VolumeType::st1 || type == VolumeType::sc1) && pick(2) == 0)
            spec.burst_balance_pct = pick(3) == 0 ? 0.0 : uni(0, 100);
        if (over_rng() % 3 == 0) {  // overshoot, from a second RNG (test "jump: equal to stepping ...")
            spec.overshoot_s = 0.1 + static_cast<double>(over_rng() % 1000) * 0.0019;
            spec.overshoot_balance_s = over_rng() % 2 == 0 ? 0.0 : spec.overshoot_s;
        }
        CAPTURE(spec.overshoot_s);
        const double dt = dts[pick(4)];
        Simulation a(std::vector<VolumeSpec>{spec}, dt);
        Simulation b(std::vector<VolumeSpec>{spec}, dt);
        const VolumeParams& p = a.params(0);
        const double cap = std::max(1.0, p.credit_capacity);
        auto io_size = [&] { return std::round(std::exp(uni(std::log(4096.0), std::log(1048576.0)))); };
        const double io0 = io_size();
        const std::int64_t n = 200 + static_cast<std::int64_t>(uni(0, 1) * 20000);
        std::vector<std::int64_t> change{0};
        for (int s = 1 + pick(4); s > 0; --s)
            change.push_back(static_cast<std::int64_t>(uni(0.05, 1) * static_cast<double>(n)));
        std::sort(change.begin(), change.end());
        change.erase(std::unique(change.begin(), change.end()), change.end());
        std::vector<double> ops, bytes;
        for (std::size_t s = 0; s < change.size(); ++s) {
            const double io = mixed ? io_size() : io0;
            // The I/Os a second that fill the tighter of the two caps (burst), and the baseline's.
            const double hi = std::min(p.burst_iops, p.tput_burst_bytes_s / io);
            const double lo = std::min(p.baseline_iops, p.tput_base_bytes_s / io);
            const double ref = pick(2) == 0 ? hi : lo;
            const double level = s % 2 == 0 ? ref * uni(1.05, 2.5) : (pick(4) == 0 ? 0.0 : ref * uni(0.1, 0.95));
            const double o = std::round(level * dt * 1e6) / 1e6;
            ops.push_back(o);
            bytes.push_back(o * io);
        }
        const bool trace = pick(2) == 0;
        const Expanded e = expand(change, ops, bytes, n);
        const Workload w = trace ? Workload{open_loop(e.ops, e.bytes)} : Workload{piecewise(change, ops, bytes)};
        const bool record = mixed ? pick(4) == 0 : pick(3) != 0;
        CAPTURE(n);
        CAPTURE(dt);
        CAPTURE(spec.size_gib);
        CAPTURE(static_cast<int>(type));
        CAPTURE(trace);
        RunOptions oj;
        oj.lockstep = false;
        RunOptions os = oj;
        os.jump = false;
        const RunResult rj = a.run({w}, n, record, RunLimits{}, {}, oj);
        const RunResult rs = b.run({w}, n, record, RunLimits{}, {}, os);
        check_same(rj, rs, cap, "throttled configuration");
        CHECK(close(a.credits(0), b.credits(0), rel_tol, 1e-9 * cap));
        CHECK(close(a.backlog_ops(0), b.backlog_ops(0), rel_tol, 1e-6));
    }
}

}  // namespace

TEST_CASE("jump: throttled and draining stretches equal stepping over random configurations") {
    throttled_configurations(34, 200, false);
}

TEST_CASE("jump: backlogs of another mix than their arrivals equal stepping over random configurations") {
    throttled_configurations(35, 300, true);
}

TEST_CASE("jump: a backlog of 1 MiB I/Os diluted by 16 KiB arrivals (hand-worked, gp3, Gamma ratios)") {
    // gp3 1,000 GiB at 3,000 IOPS and 750 MiB/s (0.25 MiB/s per IOPS), no bucket: the IOPS cap
    // binds for any mix (at most 256 KiB per counted I/O: 3,000 x 256 KiB = 750 MiB/s).
    // Segment 1, 1,000 s: 1,000 random 1 MiB I/Os a second, 4 counted each: 4,000 counted
    // arrive, 3,000 are served, the backlog grows by 1,000 counted (250 I/Os) a second to
    // B0 = 1e6 counted = 250,000 I/Os = 2.5e5 MiB.
    // Segment 2, n = 1,000 s: 4,000 I/Os of 16 KiB a second (1 counted each): a = 4,000,
    // s = 3,000, the backlog B_j = 1e6 + 1,000 j counted. The share of it left from segment 1
    // follows phi_{j+1} = phi_j B_j / (B_j + a) = phi_j (1000 + j) / (1004 + j), so
    // phi_n = C / ((1000+n)(1001+n)(1002+n)(1003+n)), C = 1000 x 1001 x 1002 x 1003, and the old
    // counted I/Os left before step j are O_j = phi_j B_j = 1000 C / ((1001+j)(1002+j)(1003+j)).
    // Each counted unit of old material is 1/4 I/O and 256 KiB, of new material 1 I/O and 16 KiB.
    const double C = 1000.0 * 1001 * 1002 * 1003;
    const double n = 1000;
    const double Bn = 1e6 + 1000 * n;
    const double On = C / ((1000 + n) * (1001 + n) * (1002 + n) * (1003 + n)) * Bn;
    const double ops_end = (Bn - On) + 0.25 * On;
    const double bytes_end = (Bn - On) * 16 * KiB + On * 256 * KiB;
    // Served in segment 2: what was there, plus what arrived, minus what is left.
    const double served_ops2 = 250000 + n * 4000 - ops_end;
    const double served_bytes2 = 2.5e5 * MiB + n * 4000 * 16 * KiB - bytes_end;
    // Little's law per step: st x served + dt x (b_j + b_{j+1}) / 2 I/O-seconds, b_j the I/Os
    // waiting before step j, b_j = B_j - 3/4 O_j; sum_{j<n} O_j telescopes by
    // 1 / (k(k+1)(k+2)) = (1/(k(k+1)) - 1/((k+1)(k+2))) / 2 to
    // 1000 C (1/(1001 x 1002) - 1/((1001+n)(1002+n))) / 2; sum_{j<n} B_j = n 1e6 + 1000 n(n-1)/2.
    const double sum_o = 1000 * C * (1 / (1001.0 * 1002) - 1 / ((1001 + n) * (1002 + n))) / 2;
    const double sum_b = n * 1e6 + 1000 * n * (n - 1) / 2;
    const double waiting2 = (sum_b - 0.75 * sum_o) + 0.5 * (ops_end - 250000);
    // Segment 1 (all one mix): waiting sum_{j<1000} 250 (j + 1/2) x 2 ... = 250 x (j + j + 1) / 2.
    const double waiting1 = 250.0 * (1000.0 * 999 / 2 + 1000.0 / 2);
    const std::vector<std::int64_t> change{0, 1000};
    const std::vector<double> ops{1000, 4000}, bytes{1000 * MiB, 4000 * 16 * KiB};
    for (const bool jump : {true, false}) {
        CAPTURE(jump);
        Simulation sim = single(gp3_spec(1000, 3000, 750));
        const VolumeParams& p = sim.params(0);
        RunOptions o;
        o.jump = jump;
        const RunResult r = sim.run({piecewise(change, ops, bytes)}, 2000, false, RunLimits{}, {}, o);
        const VolumeTotals& t = r.totals[0];
        CHECK(t.served_counted == near(2000 * 3000.0, 1e-12));
        CHECK(t.steps_bound[static_cast<int>(Bound::volume_iops)] == 2000);
        CHECK(sim.backlog_ops(0) == near(ops_end, 1e-10));
        CHECK(t.served_ops == near(750 * 1000.0 + served_ops2, 1e-10));
        CHECK(t.served_bytes == near(750 * MiB * 1000 + served_bytes2, 1e-10));
        // st = latency + size / transfer per I/O, so st x served = latency x I/Os + bytes / transfer.
        const double st_part = p.read_latency_s * t.served_ops + t.served_bytes / p.transfer_bytes_s;
        CHECK(t.latency_ops_s == near(st_part + waiting1 + waiting2, 1e-10));
    }
}

TEST_CASE("jump: equal to stepping over random configurations") {
    std::mt19937_64 rng(12);
    auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
    const VolumeType types[] = {VolumeType::gp2, VolumeType::gp3, VolumeType::io1,
                                VolumeType::st1, VolumeType::sc1, VolumeType::standard};
    const double dts[] = {0.001, 0.01, 0.1, 1.0, 10.0, 60.0};
    std::mt19937_64 over_rng(5);
    for (int iter = 0; iter < 400; ++iter) {
        CAPTURE(iter);
        const VolumeType type = types[pick(6)];
        VolumeSpec spec = random_spec(type, uni);
        const bool bucket = type == VolumeType::gp2 || type == VolumeType::st1 || type == VolumeType::sc1 ||
                            type == VolumeType::standard;
        if (bucket && pick(2) == 0) spec.burst_balance_pct = pick(3) == 0 ? 0.0 : uni(0, 100);
        // Overshoot (a second RNG, so the configurations above are those without it): a third of
        // the volumes save 0.1 to 2 s of their limits, from empty, full or between.
        if (over_rng() % 3 == 0) {
            spec.overshoot_s = 0.1 + static_cast<double>(over_rng() % 1000) * 0.0019;
            const auto b = over_rng() % 3;
            spec.overshoot_balance_s = b == 0 ? 0.0 : b == 1 ? spec.overshoot_s : spec.overshoot_s * 0.37;
        }
        CAPTURE(spec.overshoot_s);
        const double dt = dts[pick(6)];
        Simulation a(std::vector<VolumeSpec>{spec}, dt);
        Simulation b(std::vector<VolumeSpec>{spec}, dt);
        const VolumeParams& p = a.params(0);
        const double cap = std::max(1.0, p.credit_capacity);
        // Demand levels around the volume's baseline and burst, so that buckets drain, refill
        // and run dry; I/O sizes 4 KiB to 1 MiB.
        auto level_iops = [&] {
            const int c = pick(5);
            if (c == 0) return 0.0;
            const double ref = c == 1 ? p.baseline_iops : p.burst_iops;
            return ref * uni(0.2, 1.5);
        };
        for (int run = 0; run < 3; ++run) {
            CAPTURE(run);
            const std::int64_t n = 1 + static_cast<std::int64_t>(uni(0, 1) * uni(0, 1) * 20000);
            const double io = std::exp(uni(std::log(4096.0), std::log(1048576.0)));
            const int kind = pick(5);
            CAPTURE(kind);
            CAPTURE(n);
            CAPTURE(dt);
            CAPTURE(spec.size_gib);
            CAPTURE(static_cast<int>(type));
            // Segments for the piecewise kinds: 1 to 6 changes at random steps.
            std::vector<std::int64_t> change{0};
            for (int s = pick(6); s > 0; --s)
                change.push_back(static_cast<std::int64_t>(uni(0, 1) * static_cast<double>(n)));
            std::sort(change.begin(), change.end());
            change.erase(std::unique(change.begin(), change.end()), change.end());
            std::vector<double> ops, bytes, users, think;
            for (std::size_t s = 0; s < change.size(); ++s) {
                const double o = std::round(level_iops() * dt * 1e6) / 1e6;
                ops.push_back(o);
                bytes.push_back(o * std::round(io));
                users.push_back(pick(4) == 0 ? 0.0 : uni(0.5, 64));
                think.push_back(pick(2) == 0 ? 0.0 : uni(0, 0.01));
            }
            const Expanded e = expand(change, ops, bytes, n);
            const Expanded ph = expand(change, users, think, n);
            Workload w;
            ClosedLoop cl = closed_loop(uni(0.2, 64), std::round(io));
            if (pick(3) == 0) cl.think_time_s = uni(0, 0.02);
            switch (kind) {
                case 0: w = cl; break;
                case 1: w = Idle{}; break;
                case 2: w = open_loop(e.ops, e.bytes, pick(2) == 0 ? Pattern::random : Pattern::sequential); break;
                case 3: w = piecewise(change, ops, bytes); break;
                default: w = PhasedClosedLoop{cl, ph.ops, ph.bytes}; break;
            }
            const bool record = pick(4) != 0;
            const RunResult rj = run_opt(a, w, n, true, record);
            const RunResult rs = run_opt(b, w, n, false, record);
            check_same(rj, rs, cap, "random configuration");
            CHECK(close(a.credits(0), b.credits(0), rel_tol, 1e-9 * cap));
            CHECK(close(a.backlog_ops(0), b.backlog_ops(0), rel_tol, 1e-6));
        }
    }
}

TEST_CASE("jump: an interrupted jumped run is undone like a stepped one") {
    Simulation sim = single(gp2_spec(100));
    int calls = 0;
    RunOptions o;
    CHECK_THROWS_AS(
        sim.run(
            {closed_loop(32, 4 * KiB)}, 10'000'000, false, RunLimits{}, [&calls] { return ++calls == 2; }, o),
        Interrupted);
    CHECK(sim.credits(0) == 5.4e6);
    CHECK(sim.time_s() == 0);
    (void)stepped();
}

TEST_CASE("jump: in a fleet, a trace of long runs is jumped and noisy ones are stepped in lockstep") {
    // Nine gp2 100 GiB volumes (baseline 300 IOPS, 5.4e6 credits), 4,096 steps of 1 s: volume 0 replays 1,000.3 IOPS of
    // 4 KiB throughout (one run: the bucket drains by 700.3 a step, a linear jump), volumes 1-8 a new random level
    // every step (no runs). Volume 0 must give the results of the jumping scalar loop to the last bit (c0 + m d, not m
    // additions), the others those of stepping, whichever way the group is formed.
    const std::int64_t n = 4096;
    std::mt19937_64 rng(5);
    std::vector<std::vector<double>> ops(9), bytes(9);
    for (std::size_t v = 0; v < 9; ++v) {
        for (std::int64_t k = 0; k < n; ++k) {
            const double o = v == 0 ? 1000.3 : std::floor(std::uniform_real_distribution<double>(0, 2000)(rng));
            ops[v].push_back(o);
            bytes[v].push_back(o * 4096);
        }
    }
    std::vector<VolumeSpec> specs(9, gp2_spec(100));
    std::vector<Workload> ws;
    for (std::size_t v = 0; v < 9; ++v) ws.emplace_back(open_loop(ops[v], bytes[v]));
    Simulation fleet(specs, 1.0);
    const RunResult r = fleet.run(ws, n, false, RunLimits{}, {}, RunOptions{});
    auto same = [](const VolumeTotals& a, const VolumeTotals& b) {
        return a.served_ops == b.served_ops && a.served_bytes == b.served_bytes &&
               a.served_counted == b.served_counted && a.latency_ops_s == b.latency_ops_s &&
               a.credits_end == b.credits_end;
    };
    for (std::size_t v = 0; v < 9; ++v) {
        CAPTURE(v);
        Simulation jumped = single(specs[v]);
        Simulation stepped_alone = single(specs[v]);
        const RunResult rj = run_opt(jumped, ws[v], n, true, false);
        const RunResult rs = run_opt(stepped_alone, ws[v], n, false, false);
        if (v == 0) {
            // The test can tell the paths apart: jumping and stepping differ in the last bits here.
            CHECK_FALSE(same(rj.totals[0], rs.totals[0]));
            CHECK(same(r.totals[0], rj.totals[0]));
            CHECK(r.totals[0].credits_end == near(5.4e6 - 700.3 * 4096, 1e-12));
        } else {
            CHECK(same(r.totals[v], rs.totals[0]));
        }
    }
}

namespace {

// The instance's totals and series of a jumped run against the stepped one: served amounts
// relatively 1e-9, credits to 1e-9 of the bucket (absolute), steps per bound exactly, cliff
// episodes to 1e-6 of a step, balances (percent) to 1e-7 points.
void check_instance_same(const RunResult& j, const RunResult& s, const InstanceParams& ip) {
    const InstanceTotals& a = j.instance_totals;
    const InstanceTotals& b = s.instance_totals;
    CHECK(close(a.served_counted, b.served_counted, rel_tol, 1e-9));
    CHECK(close(a.served_bytes, b.served_bytes, rel_tol, 1e-6));
    CHECK(close(a.io_credits_end, b.io_credits_end, rel_tol, 1e-9 * std::max(1.0, ip.io_capacity)));
    CHECK(close(a.bytes_credits_end, b.bytes_credits_end, rel_tol, 1e-9 * std::max(1.0, ip.bytes_capacity)));
    for (int k = 0; k < n_bounds; ++k) CHECK(a.steps_bound[k] == b.steps_bound[k]);
    for (const auto eps : {&InstanceTotals::io_cliffs, &InstanceTotals::bytes_cliffs}) {
        const auto& x = a.*eps;
        const auto& y = b.*eps;
        REQUIRE(x.size() == y.size());
        for (std::size_t e = 0; e < x.size(); ++e) {
            CHECK(close(x[e].start_s, y[e].start_s, 1e-12, 1e-6 * j.dt_s));
            CHECK(close(x[e].end_s, y[e].end_s, 1e-12, 1e-6 * j.dt_s));
        }
    }
    if (j.instance_series.iops.empty()) return;
    const InstanceSeries& x = j.instance_series;
    const InstanceSeries& y = s.instance_series;
    REQUIRE(x.iops.size() == y.iops.size());
    int bad = 0;
    for (std::size_t k = 0; k < x.iops.size() && bad < 3; ++k) {
        // In the step in which a bucket runs dry (the bound changes) the volumes use the credits
        // left, which carry the credits' absolute error: rates there relatively 1e-6.
        const bool edge = k > 0 && (x.bound[k] != x.bound[k - 1] || y.bound[k] != y.bound[k - 1]);
        const double rel = edge ? 1e-6 : rel_tol;
        const bool ok = close(x.iops[k], y.iops[k], rel, 1e-9) &&
                        close(x.throughput_mb_s[k], y.throughput_mb_s[k], rel, 1e-9) &&
                        close(x.io_balance_pct[k], y.io_balance_pct[k], rel_tol, 1e-7) &&
                        close(x.byte_balance_pct[k], y.byte_balance_pct[k], rel_tol, 1e-7) && x.bound[k] == y.bound[k];
        if (!ok) {
            ++bad;
            CAPTURE(k);
            CAPTURE(x.io_balance_pct[k]);
            CAPTURE(y.io_balance_pct[k]);
            CAPTURE(int(x.bound[k]));
            CAPTURE(int(y.bound[k]));
            CHECK(ok);
        }
    }
}

}  // namespace

TEST_CASE("jump: volumes on an instance equal stepping over random configurations (the coupled loop)") {
    // 1-4 volumes on an instance whose EBS burst bucket is full, draining, empty or absent, with
    // demand around the instance's baseline and maximum and around the volumes' own limits:
    // piecewise open loops, closed loops, idle volumes, phased loops. Steady stretches (no
    // backlog) are jumped, every volume and both instance buckets together.
    std::mt19937_64 rng(77);
    auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
    const double dts[] = {0.01, 0.1, 1.0, 10.0};
    std::mt19937_64 over_rng(6);
    int jumped_cliffs = 0;
    for (int iter = 0; iter < 250; ++iter) {
        CAPTURE(iter);
        InstanceSpec inst = pick(3) == 0 ? m5_xlarge() : m5_large();
        // Off whole numbers: an exact tie between a volume's own limit and its share of the
        // instance (two gp2 1,000 GiB at 3,000 IOPS on 6,000) makes a step's bound depend on the
        // last bit of the shares, where a jumped run and a stepped one may differ.
        inst.baseline_iops *= uni(0.9, 1.1);
        inst.baseline_mb_s *= uni(0.9, 1.1);
        if (pick(5) == 0) {  // not burstable
            inst.baseline_iops = inst.max_iops;
            inst.baseline_mb_s = inst.max_mb_s;
        }
        inst.io_balance_pct = pick(3) == 0 ? uni(0, 100) : (pick(4) == 0 ? 0.0 : 100.0);
        inst.byte_balance_pct = pick(3) == 0 ? uni(0, 100) : 100.0;
        inst.burst_s = uni(60, 1800);
        inst.refill_s = uni(600, 84600);
        inst.share = pick(2) == 0 ? SharePolicy::fair : SharePolicy::proportional;
        const int nv = 1 + pick(4);
        std::vector<VolumeSpec> specs;
        for (int v = 0; v < nv; ++v) {
            const int t = pick(3);
            specs.push_back(t == 0   ? gp2_spec(std::round(uni(20, 2000)), pick(3) == 0 ? uni(0, 100) : 100.0)
                            : t == 1 ? gp3_spec(std::round(uni(50, 2000)), std::round(uni(3000, 16000)))
                                     : gp3_spec(std::round(uni(50, 2000))));
            if (over_rng() % 3 == 0) {  // a second RNG, as in the test above
                specs.back().overshoot_s = 0.1 + static_cast<double>(over_rng() % 1000) * 0.0019;
                specs.back().overshoot_balance_s = over_rng() % 2 == 0 ? 0.0 : specs.back().overshoot_s;
            }
        }
        const double dt = dts[pick(4)];
        Simulation a(specs, inst, dt);
        Simulation b(specs, inst, dt);
        const InstanceParams& ip = a.instance();
        const std::int64_t n = 100 + static_cast<std::int64_t>(uni(0, 1) * 20000);
        // The workloads' spans point into these, which outlive the runs.
        std::vector<Expanded> keep(static_cast<std::size_t>(nv));
        std::vector<std::vector<std::int64_t>> changes(static_cast<std::size_t>(nv));
        std::vector<std::vector<double>> levels(static_cast<std::size_t>(nv)), sizes(static_cast<std::size_t>(nv));
        std::vector<Workload> ws;
        for (int v = 0; v < nv; ++v) {
            const VolumeParams& p = a.params(static_cast<std::size_t>(v));
            const double io = std::round(std::exp(uni(std::log(4096.0), std::log(262144.0))));
            const auto vi = static_cast<std::size_t>(v);
            std::vector<std::int64_t>& change = changes[vi];
            change = {0};
            for (int s = pick(4); s > 0; --s)
                change.push_back(static_cast<std::int64_t>(uni(0, 1) * static_cast<double>(n)));
            std::sort(change.begin(), change.end());
            change.erase(std::unique(change.begin(), change.end()), change.end());
            std::vector<double>& ops = levels[vi];
            std::vector<double>& bytes = sizes[vi];
            for (std::size_t s = 0; s < change.size(); ++s) {
                const double refs[] = {ip.baseline_iops / nv, ip.max_iops / nv, p.baseline_iops, p.burst_iops};
                const double level = pick(6) == 0 ? 0.0 : refs[pick(4)] * uni(0.3, 1.3);
                const double o = std::round(level * dt * 1e6) / 1e6;
                ops.push_back(o);
                bytes.push_back(o * io);
            }
            const int kind = pick(4);
            ClosedLoop cl = closed_loop(uni(0.5, 64), io);
            if (kind == 0) {
                ws.emplace_back(piecewise(change, ops, bytes));
            } else if (kind == 1) {
                ws.emplace_back(cl);
            } else if (kind == 2) {
                ws.emplace_back(Idle{});
            } else {
                keep[static_cast<std::size_t>(v)] = expand(change, ops, bytes, n);
                ws.emplace_back(
                    open_loop(keep[static_cast<std::size_t>(v)].ops, keep[static_cast<std::size_t>(v)].bytes));
            }
        }
        const bool record = pick(2) == 0;
        CAPTURE(n);
        CAPTURE(dt);
        CAPTURE(nv);
        CAPTURE(record);
        const RunResult rj = run_opt_all(a, ws, n, true, record);
        const RunResult rs = run_opt_all(b, ws, n, false, record);
        check_same(rj, rs, 1e7, "volumes on an instance");
        check_instance_same(rj, rs, ip);
        jumped_cliffs += static_cast<int>(rj.instance_totals.io_cliffs.size());
    }
    CHECK(jumped_cliffs > 10);  // the instance's bucket ran dry in some of them
}
