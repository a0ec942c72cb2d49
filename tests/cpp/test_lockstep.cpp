// The lockstep kernel (libebssim/src/lockstep.cpp) against the scalar step loop: random volumes,
// workloads and traces, run in one Simulation (the independent open loops go through the kernel,
// lockstep_lanes at a time) and each volume alone (one volume: the scalar Stepper). Every total
// must be equal to the last bit, the cliff episodes too, and a bad value or an interrupt must
// undo the run in both. The expected numbers are the scalar loop's, an independent code path.
// Every run here steps every step (RunOptions::jump off): the kernel steps, and the scalar
// reference must too (jumps agree with stepping to rounding only; tests/cpp/test_jump.cpp).

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ebssim/ebssim.hpp"
#include "helpers.hpp"
// The kernel's lane count and instruction-set switch (private to the library).
#include "../../libebssim/src/lockstep.hpp"
#include "../../libebssim/src/served.hpp"

using namespace ebssim;
using namespace ebssim_test;

namespace {

constexpr std::size_t W = detail::lockstep_lanes;  // the tests cover 1 .. 2W + 1 volumes

// Every kernel this CPU can run (SSE2 always; AVX2, AVX-512 where present), each in turn, and
// AVX-512's step in each of its forms (chosen as it goes, branchy, branch-free); the defaults
// again at the end.
template <class F>
void for_each_isa(F&& f) {
    const auto reset = [] {
        detail::set_kernel_isa(detail::Isa::automatic);
        detail::set_lockstep_form(detail::LockstepForm::automatic);
    };
    for (const auto isa : {detail::Isa::sse2, detail::Isa::avx2, detail::Isa::avx512}) {
        if (!detail::set_kernel_isa(isa)) continue;
        CAPTURE(static_cast<int>(isa));
        for (const auto form :
             {detail::LockstepForm::automatic, detail::LockstepForm::branchy, detail::LockstepForm::branch_free}) {
            if (isa != detail::Isa::avx512 && form != detail::LockstepForm::automatic) continue;
            detail::set_lockstep_form(form);
            CAPTURE(static_cast<int>(form));
            try {
                f();
            } catch (...) {
                reset();
                throw;
            }
        }
    }
    reset();
}

using Rng = std::mt19937_64;

double uniform(Rng& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
std::size_t pick(Rng& rng, std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }
template <class T, std::size_t N>
T pick(Rng& rng, const T (&xs)[N]) {
    return xs[pick(rng, N)];
}

// A valid volume of any type, sized so that buckets drain and refill within a few thousand steps
// (small gp2 volumes and low initial balances) or not at all (large ones).
VolumeSpec random_spec(Rng& rng) {
    const double balances[] = {unset, 0.0, 0.2, 1.0, 5.0, 50.0, 100.0};
    switch (pick(rng, 7)) {
        case 0: {
            const double sizes[] = {1, 5, 33, 100, 170, 171, 333, 334, 1000, 5334, 16384};
            return gp2_spec(pick(rng, sizes), pick(rng, balances));
        }
        case 1: {
            const double sizes[] = {8, 100, 1000};
            const double size = pick(rng, sizes);
            const double iops = std::floor(uniform(rng, 3000, std::min(16000.0, 500 * size)));
            const double tput = std::floor(uniform(rng, 125, std::min(1000.0, 0.25 * iops)));
            return gp3_spec(size, iops, tput);
        }
        case 2: {
            const double size = std::floor(uniform(rng, 4, 1000));
            return io1_spec(size, std::floor(uniform(rng, 100, std::min(64000.0, 50 * size))));
        }
        case 3: {
            const double size = std::floor(uniform(rng, 4, 1000));
            return io2_spec(size, std::floor(uniform(rng, 100, std::min(256000.0, 1000 * size))));
        }
        case 4: return st1_spec(std::floor(uniform(rng, 125, 16384)), pick(rng, balances));
        case 5: return sc1_spec(std::floor(uniform(rng, 125, 16384)), pick(rng, balances));
        default: return standard_spec(std::floor(uniform(rng, 1, 1024)), pick(rng, balances));
    }
}

struct Trace {
    std::vector<double> ops, bytes;
};

// Segments of rests (zeros), light load, bursts far above any burst rate (drain buckets, bind
// IOPS), noise, and I/O sizes around the counting rule's thresholds (the 32 KiB merge floor, the
// 256 KiB / 1 MiB units, large random I/Os that split); whole or fractional I/Os.
Trace random_trace(Rng& rng, std::int64_t n, double dt) {
    Trace t;
    const double sizes[] = {512,       4 * KiB,       16 * KiB, 32 * KiB - 1, 32 * KiB, 64 * KiB,
                            256 * KiB, 256 * KiB + 1, 1 * MiB,  1.5 * MiB,    4 * MiB};
    std::int64_t k = 0;
    while (k < n) {
        const std::int64_t len = std::min<std::int64_t>(n - k, 1 + static_cast<std::int64_t>(pick(rng, 400)));
        const std::size_t kind = pick(rng, 6);
        const double rate = kind == 0 ? 0.0 : kind == 1 ? uniform(rng, 0, 200) : uniform(rng, 0, 40000);
        const double size = pick(rng, sizes);
        const bool whole = pick(rng, 2) == 0;
        for (std::int64_t j = 0; j < len; ++j, ++k) {
            double ops = kind == 5 ? uniform(rng, 0, 2 * rate) * dt : rate * dt;  // 5: noise
            if (whole) ops = std::floor(ops);
            // Noise in the I/O size too, within a factor of 2 either way.
            const double z = kind == 4 ? size * std::exp2(uniform(rng, -1, 1)) : size;
            t.ops.push_back(ops);
            t.bytes.push_back(ops * z);
        }
    }
    return t;
}

struct Case {
    std::vector<VolumeSpec> specs;
    std::vector<Trace> traces;
    std::vector<OpenLoop> loops;
    double dt = 1;
};

Case random_case(Rng& rng, std::size_t volumes, std::int64_t n) {
    const double dts[] = {1.0, 0.25, 60.0, 0.001};
    Case c;
    c.dt = pick(rng, dts);
    c.traces.reserve(volumes);
    for (std::size_t i = 0; i < volumes; ++i) {
        c.specs.push_back(random_spec(rng));
        c.traces.push_back(random_trace(rng, n, c.dt));
        OpenLoop o =
            open_loop(c.traces[i].ops, c.traces[i].bytes, pick(rng, 2) == 0 ? Pattern::random : Pattern::sequential);
        if (pick(rng, 3) == 0) o.service_time_s = uniform(rng, 1e-4, 2e-2);
        if (pick(rng, 3) == 0) {
            const double mifs[] = {1, 4, 32, 256};
            o.max_in_flight = pick(rng, mifs);
        }
        c.loops.push_back(o);
    }
    return c;
}

std::string show(double x) {
    std::ostringstream s;
    s << std::setprecision(17) << x << " (0x" << std::hex << std::bit_cast<std::uint64_t>(x) << ")";
    return s.str();
}

bool same(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

#define CHECK_SAME(a, b) CHECK_MESSAGE(same(a, b), #a ": " << show(a) << " vs " << show(b))

void check_same(const VolumeTotals& a, const VolumeTotals& b) {
    CHECK_SAME(a.demanded_ops, b.demanded_ops);
    CHECK_SAME(a.demanded_bytes, b.demanded_bytes);
    CHECK_SAME(a.served_ops, b.served_ops);
    CHECK_SAME(a.served_bytes, b.served_bytes);
    CHECK_SAME(a.served_counted, b.served_counted);
    CHECK_SAME(a.latency_ops_s, b.latency_ops_s);
    CHECK_SAME(a.backlog_ops, b.backlog_ops);
    CHECK_SAME(a.backlog_bytes, b.backlog_bytes);
    CHECK_SAME(a.credits_end, b.credits_end);
    CHECK_SAME(a.cliff_time_s, b.cliff_time_s);
    for (int k = 0; k < n_bounds; ++k) CHECK(a.steps_bound[k] == b.steps_bound[k]);
    REQUIRE(a.cliffs.size() == b.cliffs.size());
    for (std::size_t e = 0; e < a.cliffs.size(); ++e) {
        CHECK_SAME(a.cliffs[e].start_s, b.cliffs[e].start_s);
        CHECK_SAME(a.cliffs[e].end_s, b.cliffs[e].end_s);
    }
}

// What the random cases exercised, so that a generator that stopped reaching a path fails.
struct Coverage {
    std::int64_t steps_bound[n_bounds] = {};
    std::size_t cliffs = 0, cliffs_ended = 0;
    void add(const VolumeTotals& t) {
        for (int k = 0; k < n_bounds; ++k) steps_bound[k] += t.steps_bound[k];
        cliffs += t.cliffs.size();
        for (const auto& e : t.cliffs) cliffs_ended += std::isnan(e.end_s) ? 0 : 1;
    }
};

std::vector<Workload> workloads(const Case& c) { return {c.loops.begin(), c.loops.end()}; }

// The case's workloads over steps [k0, k0 + n) of its traces.
std::vector<Workload> part(const Case& c, std::int64_t k0, std::int64_t n) {
    std::vector<Workload> ws;
    for (OpenLoop o : c.loops) {
        o.ops = o.ops.subspan(static_cast<std::size_t>(k0), static_cast<std::size_t>(n));
        o.bytes = o.bytes.subspan(static_cast<std::size_t>(k0), static_cast<std::size_t>(n));
        ws.push_back(o);
    }
    return ws;
}

// Runs the case as consecutive runs of the given lengths: in one Simulation (lockstep), in one
// Simulation with the lockstep kernel off, and each volume alone; all must agree exactly.
void check_case(const Case& c, const std::vector<std::int64_t>& runs, Coverage& cov) {
    Simulation together(c.specs, c.dt);
    Simulation scalar_together(c.specs, c.dt);
    std::vector<Simulation> alone;
    for (const auto& s : c.specs) alone.push_back(single(s, c.dt));
    std::int64_t k0 = 0;
    for (const std::int64_t n : runs) {
        const std::vector<Workload> ws = part(c, k0, n);
        const RunResult r = together.run(ws, n, false, {}, {}, RunOptions{.jump = false});
        const RunResult rs = scalar_together.run(ws, n, false, {}, {}, RunOptions{.jump = false, .lockstep = false});
        for (std::size_t i = 0; i < c.specs.size(); ++i) {
            CAPTURE(i);
            CAPTURE(k0);
            const RunResult r1 = alone[i].run({ws[i]}, n, false, {}, {}, RunOptions{.jump = false});
            check_same(r.totals[i], r1.totals[0]);
            check_same(rs.totals[i], r1.totals[0]);
            CHECK_SAME(together.credits(i), alone[i].credits(0));
            CHECK_SAME(together.backlog_ops(i), alone[i].backlog_ops(0));
            CHECK_SAME(together.overshoot_saved_s(i).first, alone[i].overshoot_saved_s(0).first);
            CHECK_SAME(together.overshoot_saved_s(i).second, alone[i].overshoot_saved_s(0).second);
            cov.add(r.totals[i]);
        }
        k0 += n;
    }
}

// The random cases, on every instruction set: 1 to 2W + 1 volumes, `reps` cases of each, each
// two runs (state, credits and backlog, carries over), each case given to alter(case, rng2)
// before it runs (rng2 seeded with alter_seed on each instruction set).
template <class Alter>
void random_cases(std::uint64_t seed, int reps, std::uint64_t alter_seed, Coverage& cov, Alter&& alter) {
    for_each_isa([&] {
        Rng rng(seed);
        Rng other(alter_seed);
        for (std::size_t volumes = 1; volumes <= 2 * W + 1; ++volumes) {
            for (int rep = 0; rep < reps; ++rep) {
                CAPTURE(volumes);
                CAPTURE(rep);
                const std::int64_t n1 = 1 + static_cast<std::int64_t>(pick(rng, 1500));
                const std::int64_t n2 = static_cast<std::int64_t>(pick(rng, 1500));
                Case c = random_case(rng, volumes, n1 + n2);
                alter(c, other);
                check_case(c, {n1, n2}, cov);
            }
        }
    });
}

// Volumes of one kind each (gp2 on noisy traces, gp3, st1 sequential), as a fleet is.
void fleet_case() {
    Rng rng(7);
    Coverage cov;
    const double dt = 1.0;
    // 0: gp2, noisy; 1: gp3, noisy; 2: st1, sequential 1 MiB; 3: gp3, random 256 KiB I/Os at
    // 0..1,000 a second: throughput-bound in about half the steps and never IOPS-bound, so whole
    // vectors are throttled by bytes alone (the divisions a branchy step must not skip).
    for (int kind = 0; kind < 4; ++kind) {
        Case c;
        c.dt = dt;
        const std::size_t volumes = 2 * W + 3;
        c.traces.reserve(volumes);
        for (std::size_t i = 0; i < volumes; ++i) {
            const double size = 20.0 + 30.0 * static_cast<double>(i);
            c.specs.push_back(kind == 0 ? gp2_spec(size, 1.0) : kind == 2 ? st1_spec(125 + size, 2.0) : gp3_spec(size));
            Trace t;
            for (int k = 0; k < 3000; ++k) {
                const double ops = std::floor(uniform(rng, 0, kind == 2 ? 1200 : kind == 3 ? 1000 : 5600));
                t.ops.push_back(ops);
                t.bytes.push_back(ops * (kind == 2   ? 1 * MiB
                                         : kind == 3 ? 256 * KiB
                                                     : 4096 * std::exp2(uniform(rng, 0, 4))));
            }
            c.traces.push_back(std::move(t));
            c.loops.push_back(
                open_loop(c.traces[i].ops, c.traces[i].bytes, kind == 2 ? Pattern::sequential : Pattern::random));
        }
        check_case(c, {3000}, cov);
    }
    CHECK(cov.cliffs > 5);
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_throughput)] > 10000);
}

}  // namespace

TEST_CASE("lockstep: random volumes, workloads and traces give the scalar loop's results to the last bit") {
    Coverage cov;
    random_cases(20261130, 4, 0, cov, [](Case&, Rng&) {});
    // Every limit bound some steps, and buckets ran dry and earned again.
    CHECK(cov.steps_bound[static_cast<int>(Bound::demand)] > 1000);
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_iops)] > 1000);
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_throughput)] > 1000);
    CHECK(cov.steps_bound[static_cast<int>(Bound::max_in_flight)] > 1000);
    CHECK(cov.cliffs > 20);
    CHECK(cov.cliffs_ended > 10);
}

TEST_CASE("lockstep: volumes that overshoot, among others that do not, give the scalar loop's results") {
    // The random cases above with overshoot (VolumeSpec::overshoot_s) on about half the volumes,
    // from empty, full or between: the kernel's Over variant, whose lanes without overshoot must
    // stay exactly as the scalar loop without it steps them.
    Coverage cov;
    random_cases(20261205, 3, 99, cov, [](Case& c, Rng& over) {
        for (VolumeSpec& s : c.specs) {
            if (pick(over, 2) == 0) continue;
            s.overshoot_s = uniform(over, 0.05, 2.0);
            const double balances[] = {0.0, 1.0, 0.3};
            s.overshoot_balance_s = s.overshoot_s * pick(over, balances);
        }
    });
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_iops)] > 1000);
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_throughput)] > 1000);
}

TEST_CASE("lockstep: runs of 1 to 17 steps (blocks of steps, their remainders) from any offset") {
    // The kernel loads the traces in blocks of as many steps as a vector has lanes, transposed,
    // and the steps left over one at a time: runs shorter than a block, of whole blocks and of
    // blocks and a remainder, the second run starting where the first ended (any alignment).
    Coverage cov;
    for_each_isa([&] {
        Rng rng(5);
        for (std::int64_t n1 = 1; n1 <= 17; ++n1) {
            for (int rep = 0; rep < 3; ++rep) {
                CAPTURE(n1);
                CAPTURE(rep);
                const auto n2 = static_cast<std::int64_t>(pick(rng, 18));
                const Case c = random_case(rng, 2 + pick(rng, W), n1 + n2);
                check_case(c, {n1, n2}, cov);
            }
        }
    });
}

TEST_CASE("lockstep: one kind of volume per group, as a fleet is (gp2, gp3, st1 sequential, gp3 byte-bound)") {
    for_each_isa([] { fleet_case(); });
}

TEST_CASE("lockstep: open loops grouped among other workloads (idle, closed loops) in one simulation") {
    Rng rng(99);
    const std::int64_t n = 1200;
    const Case c = random_case(rng, 7, n);
    // Volumes 1 and 4 run a closed loop and idle instead of their traces.
    std::vector<Workload> ws = workloads(c);
    ws[1] = closed_loop(16, 16 * KiB);
    ws[4] = Idle{};
    Simulation together(c.specs, c.dt);
    const RunResult r = together.run(ws, n, false, {}, {}, RunOptions{.jump = false});
    for (std::size_t i = 0; i < c.specs.size(); ++i) {
        CAPTURE(i);
        Simulation alone = single(c.specs[i], c.dt);
        const RunResult r1 = alone.run({ws[i]}, n, false, {}, {}, RunOptions{.jump = false});
        check_same(r.totals[i], r1.totals[0]);
    }
}

TEST_CASE("lockstep: a bad trace value anywhere undoes the run and is reported as by the scalar loop") {
    const double bad_values[] = {NaN, -1.0, Inf, 2e15};
    Rng rng(3);
    for (std::size_t volumes : {2UL, 5UL, 9UL}) {
        for (int rep = 0; rep < 4; ++rep) {
            CAPTURE(volumes);
            CAPTURE(rep);
            const std::int64_t n = 500;
            Case c = random_case(rng, volumes, n);
            Simulation together(c.specs, c.dt);
            together.run(part(c, 0, 100), 100, false, {}, {}, RunOptions{.jump = false});  // some state to keep
            std::vector<double> credits, backlog;
            for (std::size_t i = 0; i < volumes; ++i) {
                credits.push_back(together.credits(i));
                backlog.push_back(together.backlog_ops(i));
            }
            const std::size_t j = pick(rng, volumes);
            const std::size_t k = pick(rng, static_cast<std::size_t>(n));
            const bool in_ops = rep % 2 == 0;
            if (rep == 3) {
                c.traces[j].ops[k] = 0;  // bytes without ops
                c.traces[j].bytes[k] = 4096;
            } else {
                (in_ops ? c.traces[j].ops : c.traces[j].bytes)[k] = bad_values[pick(rng, 4)];
            }
            const std::string msg =
                config_error_message([&] { together.run(workloads(c), n, false, {}, {}, RunOptions{.jump = false}); });
            Simulation scalar(c.specs, c.dt);
            const std::string expected = config_error_message(
                [&] { scalar.run(workloads(c), n, false, {}, {}, RunOptions{.jump = false, .lockstep = false}); });
            CHECK(msg == expected);
            CHECK(msg.find("workload " + std::to_string(j) + ":") == 0);
            CHECK(together.time_s() == 100 * c.dt);
            for (std::size_t i = 0; i < volumes; ++i) {
                CHECK_SAME(together.credits(i), credits[i]);
                CHECK_SAME(together.backlog_ops(i), backlog[i]);
            }
        }
    }
}

TEST_CASE("lockstep: an interrupt between chunks undoes the run; one that never fires changes nothing") {
    // Long enough for several chunks of interrupt_every_volume_steps / W steps.
    const std::int64_t n = 3 * interrupt_every_volume_steps / static_cast<std::int64_t>(W) + 17;
    std::vector<double> ops(static_cast<std::size_t>(n)), bytes(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < ops.size(); ++k) {
        ops[k] = static_cast<double>(k % 7000);  // up to 7,000 I/Os of 16 KiB: drains gp2 buckets
        bytes[k] = ops[k] * 16 * KiB;
    }
    const std::vector<VolumeSpec> specs{gp2_spec(100, 0.5), gp3_spec(100), gp2_spec(20, 0.0)};
    const std::vector<Workload> ws(3, open_loop(ops, bytes));
    Simulation sim(specs);
    int calls = 0;
    CHECK_THROWS_AS(sim.run(
                        ws, n, false, {}, [&] { return ++calls == 2; }, RunOptions{.jump = false}),
                    Interrupted);
    CHECK(calls == 2);
    CHECK(sim.time_s() == 0);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        CHECK_SAME(sim.credits(i), sim.params(i).initial_credits);
        CHECK(sim.backlog_ops(i) == 0);
    }
    const RunResult r = sim.run(
        ws, n, false, {}, [] { return false; }, RunOptions{.jump = false});
    for (std::size_t i = 0; i < specs.size(); ++i) {
        CAPTURE(i);
        Simulation alone = single(specs[i]);
        check_same(r.totals[i], alone.run({ws[i]}, n, false, {}, {}, RunOptions{.jump = false}).totals[0]);
    }
}

TEST_CASE("lockstep: groups on two threads give the results of one thread and of each volume alone") {
    Rng rng(11);
    const std::size_t volumes = 2 * W + 3;  // three groups: two threads have work
    const std::int64_t n = 8000;
    const Case c = random_case(rng, volumes, n);
    Simulation one(c.specs, c.dt);
    Simulation two(c.specs, c.dt);
    const RunResult r1 = one.run(workloads(c), n, false, {}, {}, RunOptions{.threads = 1, .jump = false});
    const RunResult r2 = two.run(workloads(c), n, false, {}, {}, RunOptions{.threads = 2, .jump = false});
    for (std::size_t i = 0; i < volumes; ++i) {
        CAPTURE(i);
        Simulation alone = single(c.specs[i], c.dt);
        const RunResult ra = alone.run({workloads(c)[i]}, n, false, {}, {}, RunOptions{.jump = false});
        check_same(r1.totals[i], ra.totals[0]);
        check_same(r2.totals[i], ra.totals[0]);
        CHECK_SAME(two.credits(i), alone.credits(0));
    }
}

// --- The served steps' kernel (libebssim/src/served.hpp) ----------------------------------------
// A volume alone replaying an open-loop trace hands the steps it serves in full from an empty
// backlog to the served steps' kernel, and with a core to spare a recorded run has a helper
// thread write their values. Neither may change a bit of any result: each random case runs with
// the kernel off (every step through offer() and commit()), on, and on with two threads (the
// helper), on every instruction set the CPU has.

namespace {

bool same_column(const Column& a, const Column& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same(a[i], b[i])) return false;
    }
    return true;
}

RunResult run_served(const VolumeSpec& spec, const OpenLoop& o, std::int64_t n, double dt, bool kernel, int threads,
                     bool record, const Recording& recording = {}) {
    detail::set_served_kernel(kernel);
    Simulation sim = single(spec, dt);
    RunResult r;
    try {
        r = sim.run({o}, n, record, {}, {}, RunOptions{.threads = threads, .jump = false, .recording = recording});
    } catch (...) {
        detail::set_served_kernel(true);
        throw;
    }
    detail::set_served_kernel(true);
    return r;
}

void check_same_run(const RunResult& a, const RunResult& b) {
    check_same(a.totals[0], b.totals[0]);
    REQUIRE(a.series.size() == b.series.size());
    if (a.series.empty()) return;
    const StepSeries& x = a.series[0];
    const StepSeries& y = b.series[0];
    CHECK(same_column(x.iops, y.iops));
    CHECK(same_column(x.ebs_iops, y.ebs_iops));
    CHECK(same_column(x.throughput_mib_s, y.throughput_mib_s));
    CHECK(same_column(x.credits, y.credits));
    CHECK(same_column(x.latency_s, y.latency_s));
    CHECK(same_column(x.backlog_ops, y.backlog_ops));
    CHECK(same_column(x.iops_max, y.iops_max));
    CHECK(same_column(x.latency_max_s, y.latency_max_s));
    CHECK(same_column(x.credits_min, y.credits_min));
    CHECK(same_column(x.backlog_max, y.backlog_max));
    REQUIRE(x.bound.size() == y.bound.size());
    bool bounds = true;
    for (std::size_t i = 0; i < x.bound.size(); ++i) bounds &= x.bound[i] == y.bound[i];
    CHECK(bounds);
}

}  // namespace

TEST_CASE("served steps: the kernel and its helper thread give offer() and commit()'s results to the last bit") {
    Rng rng(2026);
    Coverage cov;
    std::int64_t steps = 0, served = 0;
    for (int c = 0; c < 120; ++c) {
        CAPTURE(c);
        const double dts[] = {1.0, 0.25, 60.0, 0.001};
        const double dt = pick(rng, dts);
        // Long enough for the helper thread (served_filler_min_steps) in one case in six.
        const std::int64_t n = c % 6 == 0 ? detail::served_filler_min_steps + static_cast<std::int64_t>(pick(rng, 5000))
                                          : 1 + static_cast<std::int64_t>(pick(rng, 6000));
        const VolumeSpec spec = random_spec(rng);
        Trace t = random_trace(rng, n, dt);
        // Most cases lighter (most steps served in full, as in a real trace), some as generated
        // (heavy: the kernel must hand back at once).
        const double scales[] = {1.0, 0.1, 0.02, 0.005};
        const double scale = pick(rng, scales);
        for (std::size_t k = 0; k < t.ops.size(); ++k) {
            t.ops[k] *= scale;
            t.bytes[k] *= scale;
        }
        // Arrivals of -0 (trace_step_ok takes them; +0 + -0 is +0, which the kernel must keep).
        for (std::int64_t k = 0; k < n; k += 997) {
            t.ops[static_cast<std::size_t>(k)] = -0.0;
            t.bytes[static_cast<std::size_t>(k)] = -0.0;
        }
        OpenLoop o = open_loop(t.ops, t.bytes, pick(rng, 2) == 0 ? Pattern::random : Pattern::sequential);
        if (pick(rng, 3) == 0) o.service_time_s = uniform(rng, 1e-4, 2e-2);
        CAPTURE(static_cast<int>(spec.type));
        CAPTURE(spec.size_gib);
        CAPTURE(dt);
        CAPTURE(n);
        const bool record = pick(rng, 4) != 0;
        // The default recording (the direct sink), or one of the others (Recorder::record_steps):
        // one value every 7 or 60 steps with every series and extremes, float32, some series.
        Recording rc;
        switch (pick(rng, 5)) {
            case 0:
                rc.every = 7;
                rc.volume_fields = all_volume_fields;
                break;
            case 1:
                rc.every = 60;
                rc.volume_fields = all_volume_fields;
                break;
            case 2:
                rc.dtype = Dtype::f32;
                rc.volume_fields = all_volume_fields;
                break;
            case 3:
                rc.every = 4;
                rc.volume_fields = (1U << static_cast<unsigned>(VolumeField::latency_s)) |
                                   (1U << static_cast<unsigned>(VolumeField::credits));
                break;
            default: break;
        }
        CAPTURE(rc.every);
        const RunResult off = run_served(spec, o, n, dt, false, 1, record, rc);
        cov.add(off.totals[0]);
        steps += n;
        served += off.totals[0].steps_bound[static_cast<int>(Bound::demand)];
        for_each_isa([&] {
            check_same_run(run_served(spec, o, n, dt, true, 1, record, rc), off);
            check_same_run(run_served(spec, o, n, dt, true, 2, record, rc), off);
        });
    }
    // The cases reach what the kernel must hand back: throttled steps, cliffs that start and end.
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_iops)] > 1000);
    CHECK(cov.steps_bound[static_cast<int>(Bound::volume_throughput)] > 1000);
    CHECK(cov.cliffs_ended > 10);
    CHECK(served > steps / 4);
}

TEST_CASE("served steps: a gp2 volume's full bucket, then a steady drain, worked by hand") {
    // gp2 100 GiB: baseline 300 IOPS, burst 3,000, bucket 5.4 M credits (full). 100 s of 200
    // IOPS of 16 KiB (within the baseline: the bucket stays full), then 100 s of 1,000 IOPS (it
    // drains by 700 a second), then 100 s of 5,000 IOPS (above the burst: throttled to 3,000).
    std::vector<double> ops, bytes;
    for (int k = 0; k < 300; ++k) {
        const double x = k < 100 ? 200 : k < 200 ? 1000 : 5000;
        ops.push_back(x);
        bytes.push_back(x * 16 * KiB);
    }
    const VolumeSpec spec = gp2_spec(100);
    const double st_16k = 0.0005 + 16 * KiB / (1024.0 * MiB);  // the volume's model (helpers: st_4k)
    for (const int threads : {1, 2}) {
        CAPTURE(threads);
        const RunResult r = run_served(spec, open_loop(ops, bytes), 300, 1.0, true, threads, true);
        const StepSeries& s = r.series[0];
        for (std::size_t k = 0; k < 100; ++k) {
            CHECK(s.credits[k] == 5.4e6);
            CHECK(s.iops[k] == 200);
            CHECK(s.latency_s[k] == st_16k);
            CHECK(s.bound[k] == code(Bound::demand));
        }
        for (std::size_t k = 100; k < 200; ++k) {
            CHECK(s.credits[k] == 5.4e6 - 700.0 * static_cast<double>(k - 99));
            CHECK(s.iops[k] == 1000);
            CHECK(s.throughput_mib_s[k] == 1000 * 16 * KiB / MiB);
            CHECK(s.backlog_ops[k] == 0);
        }
        CHECK(s.iops[200] == 3000);
        CHECK(s.bound[200] == code(Bound::volume_iops));
        CHECK(s.backlog_ops[200] == 2000);
        CHECK(r.totals[0].steps_bound[static_cast<int>(Bound::demand)] == 200);
        CHECK(r.totals[0].served_ops == near(100 * 200 + 100 * 1000 + 100 * 3000));
    }
}
