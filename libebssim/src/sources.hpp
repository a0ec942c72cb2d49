#pragma once
/// \file sources.hpp
/// The workload sources of the scalar stepper (stepper.hpp): what each workload offers in a step,
/// and where the stretch of equal offers that holds a step ends (the jumps need it).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ebssim/workload.hpp"

namespace ebssim::detail {

// What a workload offers in one step: new arrivals (open loop) or the completions the closed
// loop would reach unthrottled, in application ops, bytes and EBS-counted operations.
struct Offer {
    double ops;
    double bytes;
    double counted;
    bool ok;  // the trace's values are acceptable (checked in the loop instead of a separate pass)
};

// Every source says where the stretch of constant offers that contains step k ends (the jumps
// of Stepper::run_constant need it): `runs_known` sources know it without looking at the input
// (a closed loop, a rest, a piecewise open loop); the others compare neighbouring steps
// (same_next) and scan (run_end).
struct ClosedSource {
    static constexpr bool closed = true;
    static constexpr bool runs_known = true;
    Offer offer;
    double in_flight_;
    double service_time_s;
    double think_time_s_;
    Offer operator()(std::int64_t) const noexcept { return offer; }  // validated up front
    void prefetch(std::int64_t) const noexcept {}
    [[nodiscard]] double in_flight(std::int64_t) const noexcept { return in_flight_; }
    [[nodiscard]] double think_time_s(std::int64_t) const noexcept { return think_time_s_; }
    [[nodiscard]] std::int64_t run_end(std::int64_t, std::int64_t k_max) const noexcept { return k_max; }
};

// Runs of equal values in a pair of per-step arrays (a trace's ops and bytes, a phased loop's
// users and think time): whether step k + 1 equals step k in both (NaN never equals itself, so
// an invalid NaN step is never part of a run), and the end of the run that holds step k, at
// most k_max (equality is transitive: each step of the run equals step k).
[[nodiscard]] inline bool pair_same_next(const double* a, const double* b, std::int64_t k) noexcept {
    return a[k + 1] == a[k] && b[k + 1] == b[k];
}
[[nodiscard]] inline std::int64_t pair_run_end(const double* a, const double* b, std::int64_t k,
                                               std::int64_t k_max) noexcept {
    // 16 steps at a time while every one equals the one before (two at a time in vector
    // registers, without an exit in the loop: a long run is read at about the memory's speed;
    // docs/performance.md, "Finding runs in a trace"), then the first difference step by step.
    // The same test either way (x != y is !(x == y): a NaN ends a run, -0 equals +0).
    using v2 = double __attribute__((vector_size(2 * sizeof(double))));
    using m2 = std::int64_t __attribute__((vector_size(2 * sizeof(std::int64_t))));
    auto load = [](v2& v, const double* p) { std::memcpy(&v, p, sizeof v); };
    constexpr std::int64_t block = 16;
    std::int64_t e = k + 1;
    while (e + block <= k_max) {
        m2 differ{};
        for (std::int64_t i = 0; i < block; i += 2) {
            v2 x, y, u, w;
            load(x, a + e + i);
            load(y, a + e + i - 1);
            load(u, b + e + i);
            load(w, b + e + i - 1);
            differ |= (x != y) | (u != w);
        }
        if ((differ[0] | differ[1]) != 0) break;
        e += block;
    }
    while (e < k_max && pair_same_next(a, b, e - 1)) ++e;
    return e;
}

// A closed loop whose users and think time change per step (PhasedClosedLoop): the same
// offer as ClosedSource, with the step's values (offered_iops's rule, workload.hpp).
struct PhasedSource {
    static constexpr bool closed = true;
    static constexpr bool runs_known = false;
    const double* users;
    const double* think;
    double service_time_s;
    double io_bytes;
    double counted_per_io;
    double dt;
    Offer operator()(std::int64_t k) const noexcept {  // validated up front
        const double ops = users[k] / (service_time_s + think[k]) * dt;
        return {ops, ops * io_bytes, ops * counted_per_io, true};
    }
    void prefetch(std::int64_t) const noexcept {}
    [[nodiscard]] double in_flight(std::int64_t k) const noexcept { return users[k]; }
    [[nodiscard]] double think_time_s(std::int64_t k) const noexcept { return think[k]; }
    [[nodiscard]] bool same_next(std::int64_t k) const noexcept { return pair_same_next(users, think, k); }
    [[nodiscard]] std::int64_t run_end(std::int64_t k, std::int64_t k_max) const noexcept {
        return pair_run_end(users, think, k, k_max);
    }
};

struct OpenSource {
    static constexpr bool closed = false;
    static constexpr bool runs_known = false;
    const double* ops;
    const double* bytes;
    IoCounting count;
    double service_time_s;  // NaN: from the mean I/O size
    double max_in_flight;   // infinity: no bound on outstanding I/Os
    double latency_s;       // the volume's zero-byte latency at the trace's read share (VolumeParams::latency_at)
    [[nodiscard]] bool bounded() const noexcept { return max_in_flight < std::numeric_limits<double>::infinity(); }
    [[nodiscard]] double in_flight_bound(std::int64_t) const noexcept { return max_in_flight; }
    void prefetch(std::int64_t k) const noexcept {
        // Stepping many volumes together reads many traces at once, which defeats the hardware
        // prefetcher; ask for the lines a few steps ahead.
        __builtin_prefetch(ops + k + 64);
        __builtin_prefetch(bytes + k + 64);
    }
    Offer operator()(std::int64_t k) const noexcept {
        const double o = ops[k];
        const double b = bytes[k];
        return {o, b, count(o, b), trace_step_ok(o, b)};
    }
    [[nodiscard]] bool same_next(std::int64_t k) const noexcept { return pair_same_next(ops, bytes, k); }
    [[nodiscard]] std::int64_t run_end(std::int64_t k, std::int64_t k_max) const noexcept {
        return pair_run_end(ops, bytes, k, k_max);
    }
};

// An open-loop trace whose bound on outstanding I/Os changes from step to step
// (OpenLoop::max_in_flight_steps): OpenSource's offer, the step's own bound, and runs of equal
// ops, bytes and bound (the jumps take a stretch whose every step has step k's bound). A type of
// its own so that OpenSource, its kernels and their loops stay as they are.
struct StepBoundSource : OpenSource {
    const double* bound;  // one per step, > 0 (infinity: none in that step)
    [[nodiscard]] bool bounded() const noexcept { return true; }
    [[nodiscard]] double in_flight_bound(std::int64_t k) const noexcept { return bound[k]; }
    [[nodiscard]] bool same_next(std::int64_t k) const noexcept {
        return pair_same_next(ops, bytes, k) && bound[k + 1] == bound[k];
    }
    [[nodiscard]] std::int64_t run_end(std::int64_t k, std::int64_t k_max) const noexcept {
        return pair_run_end(bound, bound, k, pair_run_end(ops, bytes, k, k_max));
    }
};

// A piecewise-constant open loop (PiecewiseOpenLoop): the segment of step k, found from the
// last one asked for (steps are asked in increasing order; a probe asks the same step again).
struct PiecewiseSource {
    static constexpr bool closed = false;
    static constexpr bool runs_known = true;
    const std::int64_t* change;
    const double* ops;
    const double* bytes;
    std::size_t n_seg;
    IoCounting count;
    double service_time_s;  // NaN: from the mean I/O size
    double max_in_flight;   // infinity: no bound on outstanding I/Os
    double latency_s;       // as OpenSource's
    [[nodiscard]] bool bounded() const noexcept { return max_in_flight < std::numeric_limits<double>::infinity(); }
    [[nodiscard]] double in_flight_bound(std::int64_t) const noexcept { return max_in_flight; }
    std::size_t seg = 0;
    Offer operator()(std::int64_t k) noexcept {  // validated up front
        while (seg + 1 < n_seg && change[seg + 1] <= k) ++seg;
        const double o = ops[seg];
        const double b = bytes[seg];
        return {o, b, count(o, b), true};
    }
    void prefetch(std::int64_t) const noexcept {}
    [[nodiscard]] std::int64_t run_end(std::int64_t k, std::int64_t k_max) noexcept {
        (void)(*this)(k);
        return seg + 1 < n_seg ? std::min(change[seg + 1], k_max) : k_max;
    }
};

struct IdleSource {
    static constexpr bool closed = false;
    static constexpr bool runs_known = true;
    double service_time_s = std::numeric_limits<double>::quiet_NaN();
    double max_in_flight = std::numeric_limits<double>::infinity();
    // Nothing arrives, but a backlog left by an earlier workload may drain; the rest does not know
    // its mix, so it is served at the mean of the read and write latencies (latency_at(0.5)).
    double latency_s = 0;
    [[nodiscard]] bool bounded() const noexcept { return false; }
    [[nodiscard]] double in_flight_bound(std::int64_t) const noexcept { return max_in_flight; }
    Offer operator()(std::int64_t) const noexcept { return {0, 0, 0, true}; }
    void prefetch(std::int64_t) const noexcept {}
    [[nodiscard]] std::int64_t run_end(std::int64_t, std::int64_t k_max) const noexcept { return k_max; }
};

}  // namespace ebssim::detail
