// Google Benchmark suite for the engine's step loop.
//
//   make bench-cpp                         # Release build in build/bench, runs everything
//   build/bench/bench/ebssim_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//   build/bench/bench/ebssim_bench --benchmark_filter=OpenLoop_gp2/
//   build/bench/bench/ebssim_bench --benchmark_filter='SharedInstance|OpenLoop_gp[23]/record:0'
//
// items_per_second is volume-steps per second (volumes x steps per run); s_per_vstep is its
// inverse (seconds per volume-step, e.g. 20.1n = 20.1 ns). Product target: >= 50 M
// volume-steps/s on one core, Release build, gp2 under an open-loop trace (BM_OpenLoop_gp2).
//
// Each iteration is what a caller pays for one run: a fresh Simulation (full bucket), validation
// of the workload, the step loop and, with record=true, allocating and filling the per-step series
// (freed at the end of the iteration). Traces are generated once, outside the timed region.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ebssim/engine.hpp"
#include "ebssim/instance.hpp"
#include "ebssim/stripe.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
// The lockstep kernel's instruction-set switch (private to the library; BM_Fleet compares them).
#include "../libebssim/src/lockstep.hpp"

#ifndef EBSSIM_BENCH_BUILD_TYPE
#define EBSSIM_BENCH_BUILD_TYPE "unknown"
#endif
#ifndef EBSSIM_BENCH_COMPILER
#define EBSSIM_BENCH_COMPILER "unknown"
#endif

namespace {

using namespace ebssim;

constexpr std::int64_t kSteps = 1'000'000;  // 1 s steps: about 11.6 days
constexpr double kDay = 86400.0;

struct Trace {
    std::vector<double> ops;
    std::vector<double> bytes;
};

// A synthetic open-loop trace at 1 s steps, fixed seed; bench/bench_replay.py generates the
// same kind (same parameters, numpy's generator). Diurnal demand of 40..160 IOPS (below a
// 100 GiB gp2's 300 IOPS baseline, so the bucket refills) plus bursts: Poisson, 4 a day, each
// 60..900 s at 1,000..6,000 IOPS, so some exceed the 3,000 IOPS burst rate; clusters of them drain
// the bucket, and large-I/O bursts hit the 128 MiB/s cap. I/O size log-uniform 4..64 KiB (per
// step; fixed within a burst). Whole I/Os per step with +-40 % noise.
struct TraceShape {
    double base_iops = 100, diurnal_iops = 60;
    double bursts_per_day = 4, burst_min_s = 60, burst_max_s = 900;
    double burst_min_iops = 1000, burst_max_iops = 6000;
};

double io_size(double u01) { return 4096.0 * std::exp2(4.0 * u01); }  // 4..64 KiB

Trace make_trace(std::int64_t n, std::uint64_t seed, const TraceShape& sh = {}) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const auto len = static_cast<std::size_t>(n);
    std::vector<double> rate(len), size(len);
    for (std::size_t k = 0; k < len; ++k) {
        rate[k] =
            sh.base_iops + sh.diurnal_iops * std::sin(2.0 * std::numbers::pi * (static_cast<double>(k) / kDay - 0.25));
        size[k] = io_size(u(rng));
    }
    std::poisson_distribution<std::int64_t> count(sh.bursts_per_day * static_cast<double>(n) / kDay);
    std::uniform_int_distribution<std::int64_t> start(0, n - 1);
    std::vector<std::int64_t> starts(static_cast<std::size_t>(count(rng)));
    for (auto& s : starts) s = start(rng);
    std::sort(starts.begin(), starts.end());
    for (std::int64_t s : starts) {
        auto d = static_cast<std::int64_t>(sh.burst_min_s + (sh.burst_max_s - sh.burst_min_s) * u(rng));
        double r = sh.burst_min_iops + (sh.burst_max_iops - sh.burst_min_iops) * u(rng);
        double z = io_size(u(rng));
        for (std::int64_t k = s; k < std::min(n, s + d); ++k) {
            rate[static_cast<std::size_t>(k)] = r;
            size[static_cast<std::size_t>(k)] = z;
        }
    }
    Trace t;
    t.ops.resize(len);
    t.bytes.resize(len);
    for (std::size_t k = 0; k < len; ++k) {
        double ops = std::floor(rate[k] * (0.6 + 0.8 * u(rng)) + u(rng));
        t.ops[k] = ops;
        t.bytes[k] = ops * size[k];
    }
    return t;
}

// Worst case for branch prediction: every step independently uniform in 0..5,600 I/Os of
// 4..64 KiB. On a default gp3 (3,000 IOPS, 125 MiB/s, no bucket) that is 93 % utilisation, so the
// queue empties and fills at random and the bound (demand / IOPS / throughput) flips from step to
// step instead of staying put for minutes as in the realistic trace.
Trace make_noisy_trace(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Trace t;
    t.ops.resize(static_cast<std::size_t>(n));
    t.bytes.resize(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < t.ops.size(); ++k) {
        double ops = std::floor(5600.0 * u(rng));
        t.ops[k] = ops;
        t.bytes[k] = ops * io_size(u(rng));
    }
    return t;
}

// Traces are generated on first use and kept for the whole process (the workloads' spans point
// into them).
const Trace& trace(std::uint64_t seed) {
    static std::map<std::uint64_t, Trace> cache;
    auto it = cache.find(seed);
    if (it == cache.end()) it = cache.emplace(seed, make_trace(kSteps, 1000 + seed)).first;
    return it->second;
}

const Trace& noisy_trace() {
    static const Trace t = make_noisy_trace(kSteps, 7);
    return t;
}

OpenLoop open_loop(const Trace& t) { return OpenLoop{t.ops, t.bytes}; }

VolumeSpec gp2_spec(double size_gib) { return VolumeSpec{VolumeType::gp2, size_gib}; }
VolumeSpec gp3_spec(double size_gib) { return VolumeSpec{VolumeType::gp3, size_gib}; }

// What the trace made the volume do (one untimed run): shows that it exercises every branch.
void add_trace_counters(benchmark::State& state, const VolumeSpec& spec, const Workload& w) {
    Simulation sim({spec});
    RunResult r = sim.run({w}, kSteps, true);
    const VolumeTotals& t = r.totals[0];
    const auto n = static_cast<double>(kSteps);
    state.counters["demand%"] = 100.0 * static_cast<double>(t.steps_bound[0]) / n;
    state.counters["iops_bound%"] = 100.0 * static_cast<double>(t.steps_bound[1]) / n;
    state.counters["tput_bound%"] = 100.0 * static_cast<double>(t.steps_bound[2]) / n;
    // How often the bound changes from one step to the next (branch predictability).
    const auto& bound = r.series[0].bound;
    std::int64_t changes = 0;
    for (std::size_t k = 1; k < bound.size(); ++k) changes += bound[k] != bound[k - 1];
    state.counters["bound_changes%"] = 100.0 * static_cast<double>(changes) / n;
    if (sim.params(0).has_bucket()) {
        // Times the bucket ran dry (a stretch at baseline that briefly earns credits counts again).
        int drains = 0;
        double prev = sim.params(0).initial_credits;
        const Column& credits = r.series[0].credits;
        for (std::size_t k = 0; k < credits.size(); ++k) {
            const double c = credits[k];
            if (prev > 0 && c <= 0) ++drains;
            prev = c;
        }
        state.counters["drains"] = drains;
    }
}

void set_rates(benchmark::State& state, std::int64_t volumes, std::int64_t steps) {
    const std::int64_t vsteps = volumes * steps;
    state.SetItemsProcessed(state.iterations() * vsteps);
    state.counters["s_per_vstep"] = benchmark::Counter(
        static_cast<double>(vsteps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// One thread (RunOptions::threads = 1) unless `threads` says otherwise: the figures are per core;
// BM_IndependentThreads measures the threads. Every step is stepped (RunOptions::jump off) unless
// `jump` says otherwise, so that the figures measure the step loop; BM_Piecewise and BM_Jump_scan
// measure jumps.
template <class Make>
void run_loop(benchmark::State& state, Make make_sim, const std::vector<Workload>& ws, std::int64_t steps, bool record,
              int threads = 1, bool jump = false) {
    RunOptions options;
    options.threads = threads;
    options.jump = jump;
    for (auto _ : state) {
        Simulation sim = make_sim();
        RunResult r = sim.run(ws, steps, record, {}, {}, options);
        benchmark::DoNotOptimize(r.totals.data());
        benchmark::DoNotOptimize(r.series.data());
        benchmark::ClobberMemory();
    }
    set_rates(state, static_cast<std::int64_t>(ws.size()), steps);
}

// (a) One 100 GiB gp2 volume under the open-loop trace. The product target applies here.
void BM_OpenLoop_gp2(benchmark::State& state) {
    const bool record = state.range(0) != 0;
    const VolumeSpec spec = gp2_spec(100);
    const std::vector<Workload> ws{open_loop(trace(0))};
    add_trace_counters(state, spec, ws[0]);
    run_loop(
        state, [&] { return Simulation({spec}); }, ws, kSteps, record);
}
BENCHMARK(BM_OpenLoop_gp2)->ArgName("record")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// (a'') The recorded run with a core to spare or without: threads = 2 gives the served steps'
// helper thread (ServedFiller, served.hpp) a core, which writes the recorded values of the served
// stretches while the stepping thread goes on; threads = 1 leaves them to the stepping thread.
// every = 1 is the default recording (a direct sink), every = 60 the windowed helper. Whether
// the helper earns its complexity is decided by these figures (docs/performance.md).
void BM_Recorded_helper(benchmark::State& state) {
    const int threads = static_cast<int>(state.range(0));
    const VolumeSpec spec = gp2_spec(100);
    const std::vector<Workload> ws{open_loop(trace(0))};
    add_trace_counters(state, spec, ws[0]);
    RunOptions options;
    options.threads = threads;
    options.recording.every = state.range(1);
    for (auto _ : state) {
        Simulation sim({spec});
        RunResult r = sim.run(ws, kSteps, true, {}, {}, options);
        benchmark::DoNotOptimize(r.series.data());
        benchmark::ClobberMemory();
    }
    set_rates(state, 1, kSteps);
}
BENCHMARK(BM_Recorded_helper)
    ->ArgNames({"threads", "every"})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({1, 60})
    ->Args({2, 60})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// (a') The same trace on a default gp3 (no bucket), and gp3 on a trace whose bound flips at
// random every step (branch-predictor worst case). Not part of the target; they show how much
// the bucket logic and branch mispredictions cost.
void BM_OpenLoop_gp3(benchmark::State& state) {
    const bool record = state.range(0) != 0;
    const VolumeSpec spec = gp3_spec(100);
    const std::vector<Workload> ws{open_loop(trace(0))};
    add_trace_counters(state, spec, ws[0]);
    run_loop(
        state, [&] { return Simulation({spec}); }, ws, kSteps, record);
}
BENCHMARK(BM_OpenLoop_gp3)->ArgName("record")->Arg(0)->Unit(benchmark::kMillisecond);

void BM_OpenLoop_gp3_noisy(benchmark::State& state) {
    const bool record = state.range(0) != 0;
    const VolumeSpec spec = gp3_spec(100);
    const std::vector<Workload> ws{open_loop(noisy_trace())};
    add_trace_counters(state, spec, ws[0]);
    run_loop(
        state, [&] { return Simulation({spec}); }, ws, kSteps, record);
}
BENCHMARK(BM_OpenLoop_gp3_noisy)->ArgName("record")->Arg(0)->Unit(benchmark::kMillisecond);

// (b) Closed loop, 32 x 16 KiB random reads in flight, on a 100 GiB gp2 (bursts, hits the cliff
// after ~30 min, then baseline) and a default gp3 (3,000 IOPS / 125 MiB/s, IOPS-bound throughout).
void BM_ClosedLoop(benchmark::State& state) {
    const bool gp3 = state.range(0) != 0;
    const bool record = state.range(1) != 0;
    const VolumeSpec spec = gp3 ? gp3_spec(100) : gp2_spec(100);
    const std::vector<Workload> ws{ClosedLoop{32, 16384}};
    state.SetLabel(gp3 ? "gp3 100 GiB" : "gp2 100 GiB");
    add_trace_counters(state, spec, ws[0]);
    run_loop(
        state, [&] { return Simulation({spec}); }, ws, kSteps, record);
}
BENCHMARK(BM_ClosedLoop)->ArgNames({"gp3", "record"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

// (c) Several gp2 volumes (100..250 GiB) in one Simulation, each with its own trace (own seed).
// items = volumes x steps, so the per-volume cost of a step compares with BM_OpenLoop_gp2.
void BM_OpenLoop_gp2_volumes(benchmark::State& state) {
    const auto volumes = static_cast<std::uint64_t>(state.range(0));
    const bool record = state.range(1) != 0;
    std::vector<VolumeSpec> specs;
    std::vector<Workload> ws;
    for (std::uint64_t i = 0; i < volumes; ++i) {
        specs.push_back(gp2_spec(100.0 + 10.0 * static_cast<double>(i)));
        ws.push_back(open_loop(trace(i)));
    }
    run_loop(
        state, [&] { return Simulation(specs); }, ws, kSteps, record);
}
BENCHMARK(BM_OpenLoop_gp2_volumes)
    ->ArgNames({"volumes", "record"})
    ->ArgsProduct({{1, 4, 16}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// (c') 16 independent gp2 volumes as in (c), totals only, stepped by 1 or 2 threads
// (RunOptions::threads; each volume whole by one thread). Wall time: on an idle 2-core machine
// threads:2 should take about half of threads:1 (items_per_second about double).
void BM_IndependentThreads(benchmark::State& state) {
    const int threads = static_cast<int>(state.range(0));
    constexpr std::uint64_t volumes = 16;
    std::vector<VolumeSpec> specs;
    std::vector<Workload> ws;
    for (std::uint64_t i = 0; i < volumes; ++i) {
        specs.push_back(gp2_spec(100.0 + 10.0 * static_cast<double>(i)));
        ws.push_back(open_loop(trace(i)));
    }
    run_loop(
        state, [&] { return Simulation(specs); }, ws, kSteps, false, threads);
}
BENCHMARK(BM_IndependentThreads)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// (d) Volumes sharing one instance: Simulation(specs, InstanceSpec{...}) couples them step by step
// (Simulation::run_shared: every volume offers, the instance scales the offers to fit its budget,
// every volume commits). The instance has m5.large's EBS limits (3,600 / 18,750 IOPS, 81.25 /
// 593.75 MB/s, 30 min burst). Volumes and traces as in (c): gp2 100, 110, ... GiB, or default gp3
// 100 GiB, volume i on trace(i). items = volumes x steps, so s_per_vstep compares directly with
// the single-volume, no-instance loop (BM_OpenLoop_gp2/record:0, BM_OpenLoop_gp3/record:0) and with
// instance:0 (the same volumes and traces without an instance: the independent loop).
// Counters from one untimed run: inst_bound% (steps in which the instance bound) and
// inst_cliffs (1 when EBSIOBalance% or EBSByteBalance% reached 0).
InstanceSpec m5_large_spec(SharePolicy share = SharePolicy::proportional) {
    InstanceSpec s;
    s.name = "m5.large";
    s.baseline_iops = 3600;
    s.max_iops = 18750;
    s.baseline_mb_s = 81.25;
    s.max_mb_s = 593.75;
    s.share = share;
    return s;
}

void add_instance_counters(benchmark::State& state, const std::vector<VolumeSpec>& specs, const InstanceSpec& inst,
                           const std::vector<Workload>& ws, std::int64_t steps) {
    Simulation sim(specs, inst);
    RunResult r = sim.run(ws, steps, false);
    const InstanceTotals& t = r.instance_totals;
    const auto n = static_cast<double>(steps);
    state.counters["inst_bound%"] = 100.0 *
                                    static_cast<double>(t.steps_bound[static_cast<int>(Bound::instance_iops)] +
                                                        t.steps_bound[static_cast<int>(Bound::instance_throughput)]) /
                                    n;
    state.counters["inst_cliffs"] =
        (std::isnan(t.io_cliff_time_s) ? 0 : 1) + (std::isnan(t.bytes_cliff_time_s) ? 0 : 1);
}

struct SharedCase {
    std::vector<VolumeSpec> specs;
    std::vector<Workload> ws;
};

SharedCase shared_case(bool gp3, std::uint64_t volumes) {
    SharedCase c;
    for (std::uint64_t i = 0; i < volumes; ++i) {
        c.specs.push_back(gp3 ? gp3_spec(100) : gp2_spec(100.0 + 10.0 * static_cast<double>(i)));
        c.ws.push_back(open_loop(trace(i)));
    }
    return c;
}

void BM_SharedInstance(benchmark::State& state) {
    const bool gp3 = state.range(0) != 0;
    const auto volumes = static_cast<std::uint64_t>(state.range(1));
    const bool with_instance = state.range(2) != 0;
    const bool record = state.range(3) != 0;
    const SharedCase c = shared_case(gp3, volumes);
    const InstanceSpec inst = m5_large_spec();
    state.SetLabel(std::string(gp3 ? "gp3" : "gp2") + (with_instance ? " on m5.large" : " no instance"));
    if (with_instance) {
        add_instance_counters(state, c.specs, inst, c.ws, kSteps);
        run_loop(
            state, [&] { return Simulation(c.specs, inst); }, c.ws, kSteps, record);
    } else {
        run_loop(
            state, [&] { return Simulation(c.specs); }, c.ws, kSteps, record);
    }
}
BENCHMARK(BM_SharedInstance)
    ->ArgNames({"gp3", "volumes", "instance", "record"})
    ->ArgsProduct({{0, 1}, {1, 4, 16}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// (d') The instance binding most steps: every volume on the noisy trace (uniform 0..5,600 I/Os of
// 4..64 KiB a step; 4 volumes ask ~11,200 IOPS on average, 16 ask ~44,800, above m5.large's
// 18,750 maximum, so its buckets drain and it binds at baseline from then on). share:1 is max-min
// fair, which sorts the volumes' demands in every bound step.
void BM_SharedInstance_bound(benchmark::State& state) {
    const auto volumes = static_cast<std::size_t>(state.range(0));
    const bool fair = state.range(1) != 0;
    const std::vector<VolumeSpec> specs(volumes, gp3_spec(100));
    const std::vector<Workload> ws(volumes, open_loop(noisy_trace()));
    const InstanceSpec inst = m5_large_spec(fair ? SharePolicy::fair : SharePolicy::proportional);
    state.SetLabel(fair ? "gp3 on m5.large, fair" : "gp3 on m5.large, proportional");
    add_instance_counters(state, specs, inst, ws, kSteps);
    run_loop(
        state, [&] { return Simulation(specs, inst); }, ws, kSteps, false);
}
BENCHMARK(BM_SharedInstance_bound)
    ->ArgNames({"volumes", "share"})
    ->ArgsProduct({{1, 4, 16}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// (e) A fleet: many independent volumes (no instance) with distinct traces, totals only
// (record = false): what a fleet replay runs. 30 days at 1-minute steps (43,200 steps) per volume.
// shape:0, noisy: volume i is gp2 (100..1,000 GiB) or gp3 (3,000..6,000 IOPS) in turn, its demand
// uniform noise around its own mean (50..3,000 IOPS) of 4..64 KiB I/Os, so gp2 buckets drain and
// refill and every bound occurs (a third of the steps IOPS-bound). shape:1, diurnal: the fleet of
// bench/bench_vs_numba.py case b (issue 12), drawn alike with C++'s generators: 70 % gp2 and 30 %
// gp3 of 20..2,000 GiB, diurnal demand at 10..70 % of the volume's baseline with its own phase,
// about 3 bursts a day (5..120 minutes, 1.5..4x), +-40 % noise, 4..64 KiB I/Os per step (about a
// sixth of the steps IOPS-bound, mostly gp3 in bursts and gp2 with an empty bucket).
// lockstep:1 steps them through the lockstep kernel (the default), lockstep:0 one at a time
// through the scalar loop (RunOptions), on one core either way. Compare items_per_second
// (volume-steps/s) of the two.
constexpr std::int64_t kFleetSteps = 43'200;
constexpr double kFleetDt = 60.0;

struct Fleet {
    std::vector<VolumeSpec> specs;
    std::vector<Trace> traces;
    std::vector<Workload> ws;
};

void noisy_fleet(Fleet& f, std::size_t volumes) {
    std::mt19937_64 rng(2026);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::size_t i = 0; i < volumes; ++i) {
        if (i % 2 == 0) {
            f.specs.push_back(gp2_spec(std::floor(100.0 + 900.0 * u(rng))));
        } else {
            VolumeSpec s = gp3_spec(100);
            s.iops = std::floor(3000.0 + 3000.0 * u(rng));
            f.specs.push_back(s);
        }
        const double mean_ops = (50.0 + 2950.0 * u(rng)) * 60.0;  // per 1-minute step
        Trace& t = f.traces[i];
        t.ops.resize(static_cast<std::size_t>(kFleetSteps));
        t.bytes.resize(t.ops.size());
        for (std::size_t k = 0; k < t.ops.size(); ++k) {
            t.ops[k] = std::floor(2.0 * mean_ops * u(rng));
            t.bytes[k] = t.ops[k] * io_size(u(rng));
        }
    }
}

// bench_vs_numba.py's fleet_traces, step for step (its generator's draws, not its values).
void diurnal_fleet(Fleet& f, std::size_t volumes) {
    std::mt19937_64 rng(20240601);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double dt = kFleetDt;
    const auto n = static_cast<std::size_t>(kFleetSteps);
    std::poisson_distribution<std::int64_t> bursts(3.0 * static_cast<double>(n) * dt / kDay);
    std::uniform_int_distribution<std::size_t> start(0, n - 1);
    for (std::size_t i = 0; i < volumes; ++i) {
        const double size = std::floor(20.0 + 1980.0 * u(rng));
        const bool gp3 = u(rng) < 0.3;
        f.specs.push_back(gp3 ? gp3_spec(size) : gp2_spec(size));
        const double base = gp3 ? 3000.0 : std::clamp(3.0 * size, 100.0, 16000.0);
        const double level = base * (0.1 + 0.6 * u(rng));
        const double phase = u(rng);
        std::vector<double> rate(n);
        for (std::size_t k = 0; k < n; ++k) {
            const double t = static_cast<double>(k) * dt;
            rate[k] = level * (1.0 + 0.6 * std::sin(2.0 * std::numbers::pi * (t / kDay - phase)));
        }
        for (std::int64_t b = bursts(rng); b > 0; --b) {
            const std::size_t s = start(rng);
            const auto len = std::max<std::size_t>(1, static_cast<std::size_t>((300.0 + 6900.0 * u(rng)) / dt));
            const double mult = 1.5 + 2.5 * u(rng);
            for (std::size_t k = s; k < std::min(n, s + len); ++k) rate[k] = mult * level;
        }
        Trace& t = f.traces[i];
        t.ops.resize(n);
        t.bytes.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            t.ops[k] = std::floor(rate[k] * (0.6 + 0.8 * u(rng)) * dt);
            t.bytes[k] = t.ops[k] * io_size(u(rng));
        }
    }
}

const Fleet& fleet(std::size_t volumes, bool diurnal) {
    static std::map<std::pair<std::size_t, bool>, Fleet> cache;
    auto it = cache.find({volumes, diurnal});
    if (it != cache.end()) return it->second;
    Fleet& f = cache[{volumes, diurnal}];
    f.traces.resize(volumes);
    if (diurnal) {
        diurnal_fleet(f, volumes);
    } else {
        noisy_fleet(f, volumes);
    }
    for (const Trace& t : f.traces) f.ws.push_back(open_loop(t));
    return f;
}

void BM_Fleet(benchmark::State& state) {
    const auto volumes = static_cast<std::size_t>(state.range(0));
    const RunOptions options{.threads = 1, .lockstep = state.range(1) != 0};  // one core
    const auto isa = static_cast<detail::Isa>(state.range(2));
    if (!detail::set_kernel_isa(isa)) {
        state.SkipWithError("this CPU lacks the instruction set");
        return;
    }
    const Fleet& f = fleet(volumes, state.range(3) != 0);
    {
        // What the traces made the volumes do (one untimed run): steps per bound, cliff episodes.
        Simulation sim(f.specs, kFleetDt);
        const RunResult r = sim.run(f.ws, kFleetSteps, false);
        double cliffs = 0, iops = 0, tput = 0;
        for (const VolumeTotals& t : r.totals) {
            cliffs += static_cast<double>(t.cliffs.size());
            iops += static_cast<double>(t.steps_bound[static_cast<int>(Bound::volume_iops)]);
            tput += static_cast<double>(t.steps_bound[static_cast<int>(Bound::volume_throughput)]);
        }
        const double vsteps = static_cast<double>(volumes) * static_cast<double>(kFleetSteps);
        state.counters["cliffs"] = cliffs;
        state.counters["iops_bound%"] = 100.0 * iops / vsteps;
        state.counters["tput_bound%"] = 100.0 * tput / vsteps;
    }
    for (auto _ : state) {
        Simulation sim(f.specs, kFleetDt);
        RunResult r = sim.run(f.ws, kFleetSteps, false, {}, {}, options);
        benchmark::DoNotOptimize(r.totals.data());
        benchmark::ClobberMemory();
    }
    detail::set_kernel_isa(detail::Isa::automatic);
    set_rates(state, static_cast<std::int64_t>(volumes), kFleetSteps);
}
// isa: 0 the default (the widest the CPU has), 2 SSE2, 3 AVX2, 4 AVX-512 (lockstep:1 only).
// shape: 0 noisy, 1 diurnal (above).
BENCHMARK(BM_Fleet)
    ->ArgNames({"volumes", "lockstep", "isa", "shape"})
    ->Args({64, 0, 0, 0})
    ->Args({64, 1, 0, 0})
    ->Args({256, 0, 0, 0})
    ->Args({256, 1, 0, 0})
    ->Args({64, 1, 2, 0})
    ->Args({64, 1, 3, 0})
    ->Args({64, 1, 4, 0})
    ->Args({256, 0, 0, 1})
    ->Args({256, 1, 0, 1})
    ->Args({256, 1, 3, 1})
    ->Unit(benchmark::kMillisecond);

// (f) What recording costs (Recording, recorder.hpp): one 100 GiB gp2 volume, 1e6 or 1e7 steps
// of an open-loop trace of that length (the kind of trace(); 16 bytes of input a step), 1e8 steps
// of a closed loop (no input: a 1e8-step trace would take 1.6 GB). mode: 0 not recorded, 1 every
// series every step in float64 (the default, 49 bytes a step), 2 two series (iops, credits),
// 3 every series every 60 steps, 4 every series in float32 (25 bytes a step), 5 iops and credits
// every 60 steps in float32, 6 the default into caller buffers allocated once, outside the timed
// loop (what a caller streaming a long run in chunks pays: no fresh memory).
//   build/bench/bench/ebssim_bench --benchmark_filter='Recording/steps:10000000/'
enum RecordMode : std::int64_t {
    rec_none,
    rec_full,
    rec_subset,
    rec_every60,
    rec_f32,
    rec_every60_f32_subset,
    rec_caller
};

const Trace& long_trace(std::int64_t n) {
    static std::map<std::int64_t, Trace> cache;
    auto it = cache.find(n);
    if (it == cache.end()) it = cache.emplace(n, make_trace(n, 2000)).first;
    return it->second;
}

void BM_Recording(benchmark::State& state) {
    const std::int64_t steps = state.range(0);
    const auto mode = static_cast<RecordMode>(state.range(1));
    const VolumeSpec spec = gp2_spec(100);
    const std::vector<Workload> ws{steps <= 10'000'000 ? Workload{open_loop(long_trace(steps))}
                                                       : Workload{ClosedLoop{32, 16384}}};
    RunOptions o;
    o.threads = 1;
    Recording& rc = o.recording;
    const std::uint32_t two =
        (1U << static_cast<unsigned>(VolumeField::iops)) | (1U << static_cast<unsigned>(VolumeField::credits));
    if (mode == rec_subset || mode == rec_every60_f32_subset) rc.volume_fields = two;
    if (mode == rec_every60 || mode == rec_every60_f32_subset) rc.every = 60;
    if (mode == rec_f32 || mode == rec_every60_f32_subset) rc.dtype = Dtype::f32;
    std::vector<double> bufs[6];
    std::vector<std::uint8_t> bound_buf;
    if (mode == rec_caller) {
        const auto n = static_cast<std::size_t>(steps);
        rc.volume_out.assign(1, {});
        for (std::size_t f = 0; f < 6; ++f) {
            bufs[f].assign(n, 0.0);  // touched once here, so the timed runs take no page faults
            rc.volume_out[0][f] = bufs[f].data();
        }
        bound_buf.assign(n, 0);
        rc.volume_out[0][6] = bound_buf.data();
    }
    RunLimits limits;
    limits.max_memory_bytes = std::int64_t{1} << 40;
    static const char* const names[] = {
        "none", "full", "iops+credits", "every 60", "float32", "iops+credits every 60 float32", "caller buffers"};
    state.SetLabel(names[mode]);
    for (auto _ : state) {
        Simulation sim({spec});
        RunResult r = sim.run(ws, steps, mode != rec_none, limits, {}, o);
        benchmark::DoNotOptimize(r.totals.data());
        benchmark::DoNotOptimize(r.series.data());
        benchmark::ClobberMemory();
    }
    set_rates(state, 1, steps);
}
BENCHMARK(BM_Recording)
    ->ArgNames({"steps", "mode"})
    ->ArgsProduct({{1'000'000, 10'000'000, 100'000'000}, {0, 1, 2, 3, 4, 5, 6}})
    ->Unit(benchmark::kMillisecond);

// Where the time goes: the floor of the loop with no trace to read (Idle), and the validation
// pass Simulation::run makes over an open-loop trace before stepping (part of every run above).
void BM_Idle_gp2(benchmark::State& state) {
    const bool record = state.range(0) != 0;
    const VolumeSpec spec = gp2_spec(100);
    const std::vector<Workload> ws{Idle{}};
    run_loop(
        state, [&] { return Simulation({spec}); }, ws, kSteps, record);
}
BENCHMARK(BM_Idle_gp2)->ArgName("record")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// (d) Piecewise-constant demand: 30 days at 1 s steps, constant within each hour, on a 100 GiB
// gp2 (300 IOPS baseline, 3,000 burst, 5.4e6 credits). Every day: hours 0-7 idle (the bucket
// refills, then stays full), 8-17 at 400 IOPS (-100 credits/s), 18-23 at 200 (+100/s). On days
// 3, 10, 17 and 24, hour 10 asks 3,100 IOPS: above the burst, throttled, the bucket runs dry
// (a cliff) and a backlog of about 5.4e6 I/Os builds, which hours 11-16 (idle) drain at 300/s
// (stepped: an open loop with a backlog is not steady). As a PiecewiseOpenLoop (720 segments)
// or the same demand materialised as a per-step trace (runs found by scanning), jump on or off.
struct HourlyDemand {
    std::vector<std::int64_t> change;
    std::vector<double> ops, bytes;
    Trace trace;  // the same, per step
};

const HourlyDemand& hourly_demand() {
    static const HourlyDemand h = [] {
        HourlyDemand d;
        const std::int64_t hour = 3600;
        for (std::int64_t day = 0; day < 30; ++day) {
            for (std::int64_t hd = 0; hd < 24; ++hd) {
                double iops = hd < 8 ? 0.0 : (hd < 18 ? 400.0 : 200.0);
                if (day % 7 == 3 && hd == 10) iops = 3100;
                if (day % 7 == 3 && hd > 10 && hd < 17) iops = 0;
                d.change.push_back((day * 24 + hd) * hour);
                d.ops.push_back(iops);
                d.bytes.push_back(iops * 16384);
                for (std::int64_t k = 0; k < hour; ++k) {
                    d.trace.ops.push_back(iops);
                    d.trace.bytes.push_back(iops * 16384);
                }
            }
        }
        return d;
    }();
    return h;
}

void BM_Piecewise_gp2(benchmark::State& state) {
    const bool as_trace = state.range(0) != 0;
    RunOptions options;
    options.jump = state.range(1) != 0;
    const HourlyDemand& d = hourly_demand();
    const auto n = static_cast<std::int64_t>(d.trace.ops.size());
    Workload w;
    if (as_trace) {
        w = open_loop(d.trace);
    } else {
        PiecewiseOpenLoop p;
        p.change_steps = d.change;
        p.ops = d.ops;
        p.bytes = d.bytes;
        w = p;
    }
    const std::vector<Workload> ws{w};
    state.SetLabel(as_trace ? "per-step trace" : "PiecewiseOpenLoop");
    {
        Simulation sim({gp2_spec(100)});
        const RunResult r = sim.run(ws, n, false);
        state.counters["cliffs"] = static_cast<double>(r.totals[0].cliffs.size());
    }
    run_loop(
        state, [&] { return Simulation({gp2_spec(100)}); }, ws, n, false, 1, options.jump);
}
BENCHMARK(BM_Piecewise_gp2)->ArgNames({"trace", "jump"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

// What looking for runs costs a trace that has none (jump on vs off, totals only): the realistic
// trace of BM_OpenLoop_gp2 and the noisy one of BM_OpenLoop_gp3_noisy.
void BM_Jump_scan(benchmark::State& state) {
    const bool noisy = state.range(0) != 0;
    RunOptions options;
    options.jump = state.range(1) != 0;
    const VolumeSpec spec = noisy ? gp3_spec(100) : gp2_spec(100);
    const std::vector<Workload> ws{open_loop(noisy ? noisy_trace() : trace(0))};
    state.SetLabel(noisy ? "gp3, noisy trace" : "gp2, realistic trace");
    run_loop(
        state, [&] { return Simulation({spec}); }, ws, kSteps, false, 1, options.jump);
}
BENCHMARK(BM_Jump_scan)->ArgNames({"noisy", "jump"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

void BM_ValidateOpenLoop(benchmark::State& state) {
    const Workload w = open_loop(trace(0));
    for (auto _ : state) {
        validate_workload(w, kSteps);
        benchmark::ClobberMemory();
    }
    set_rates(state, 1, kSteps);
}
BENCHMARK(BM_ValidateOpenLoop)->Unit(benchmark::kMillisecond);

// A trace on a RAID-0 set, split into one member's (stripe_member_trace): what Simulation.run does
// before stepping a set's open loop. Mixed sizes (4, 16, 64 KiB at random), reads and writes.
void BM_StripeMemberTrace(benchmark::State& state) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> rate(100, 3000);
    std::uniform_int_distribution<int> pick(0, 2);
    const double sizes[] = {4096, 16384, 65536};
    std::vector<double> ops(kSteps), bytes(kSteps), read_ops(kSteps), read_bytes(kSteps);
    for (std::int64_t i = 0; i < kSteps; ++i) {
        const auto k = static_cast<std::size_t>(i);
        ops[k] = rate(rng);
        bytes[k] = ops[k] * sizes[pick(rng)];
        read_ops[k] = ops[k] / 2;
        read_bytes[k] = bytes[k] / 2;
    }
    const bool reads = state.range(0) != 0;
    for (auto _ : state) {
        const StripeMemberTrace t = reads ? stripe_member_trace(ops, bytes, 512.0 * 1024, 2, {}, read_ops, read_bytes)
                                          : stripe_member_trace(ops, bytes, 512.0 * 1024, 2);
        benchmark::DoNotOptimize(t.ops.data());
    }
    set_rates(state, 1, kSteps);
}
BENCHMARK(BM_StripeMemberTrace)->ArgName("reads")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    benchmark::AddCustomContext("ebssim_build_type", EBSSIM_BENCH_BUILD_TYPE);
    benchmark::AddCustomContext("ebssim_compiler", EBSSIM_BENCH_COMPILER);
    benchmark::AddCustomContext("ebssim_steps_per_run", std::to_string(kSteps));
    benchmark::AddCustomContext("ebssim_target", "BM_OpenLoop_gp2: >= 50M volume-steps/s (items_per_second)");
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
