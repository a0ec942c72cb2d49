#include "ebssim/engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>

#include "cliffs.hpp"
#include "ebssim/error.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/units.hpp"
#include "fleet.hpp"
#include "lockstep.hpp"
#include "mixing.hpp"
#include "served.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

using detail::CliffTracker;

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
    double service_time_s = nan;
    double max_in_flight = inf;
    Offer operator()(std::int64_t) const noexcept { return {0, 0, 0, true}; }
    void prefetch(std::int64_t) const noexcept {}
    [[nodiscard]] std::int64_t run_end(std::int64_t, std::int64_t k_max) const noexcept { return k_max; }
};

// What one step does, worked out from the state and offer() before any of it is applied
// (Stepper::outcome): a jump applies it m times at once.
struct StepOutcome {
    double f;  // share of what was available that was served
    Bound bound;
    double served_cnt, served_ops, served_bytes;
    double demanded_ops, demanded_bytes;
    double backlog_ops, backlog_bytes, backlog_counted;  // at the end of the step
    double raw_credits;                                  // pool - served, before the clamp to [0, capacity]
    double credits;                                      // at the end of the step (unchanged without a bucket)
    double rate;                                         // completions per second
    double latency;                                      // NaN when nothing completed
};

// Jumps (Stepper::run_constant): stretches shorter than this are stepped; a linear jump stops
// this many steps short of the first step whose outcome differs, which is left to stepping.
constexpr std::int64_t min_jump = 4;
constexpr std::int64_t jump_margin = 2;
// Steps between two looks for a run of equal values in a trace, and the shortest run worth a
// probe: one comparison per scan_every steps is all a noisy trace pays.
constexpr std::int64_t scan_every = 16;
constexpr std::int64_t min_run = 8;
// After a failed probe, step 1, 2, 4, ... up to this many steps before the next one.
constexpr std::int64_t max_backoff = 64;
// The served steps' kernel (served.hpp): a stretch of served steps shorter than this makes the loop wait before
// the next look, up to served_max_backoff steps.
constexpr std::int64_t served_min_stretch = 16;
constexpr std::int64_t served_max_backoff = 1024;

// The steps of a jump: `same(j)` tells whether step k + j of a stretch of `avail` steps still
// has step k's outcome, and those that do are a prefix (each branch of the step changes at most
// once along the stretch). Galloping then bisection find its end with O(log avail) probes; the
// jump stops jump_margin steps short of the first step that differs, which is left to stepping.
// Returns the steps to jump: avail if every step is the same, else 0 when fewer than min_jump.
template <class Same>
std::int64_t jump_length(std::int64_t avail, Same&& same) {
    std::int64_t good = 0;     // step k + good has step k's outcome
    std::int64_t bad = avail;  // the first step that does not (avail: none in the stretch)
    for (std::int64_t stride = 1;; stride *= 2) {
        const std::int64_t j = std::min(good + stride, avail - 1);
        if (j == good) break;
        if (!same(j)) {
            bad = j;
            break;
        }
        good = j;
    }
    while (bad - good > 1 && bad < avail) {
        const std::int64_t mid = good + (bad - good) / 2;
        (same(mid) ? good : bad) = mid;
    }
    const std::int64_t m = bad == avail ? avail : good + 1 - jump_margin;
    return m < min_jump ? 0 : m;
}

// One volume's step, split in two so that an instance can scale what the volumes ask for
// between `offer` and `commit`. Alone, the pair inlines into a tight loop.
template <class Source>
class Stepper {
public:
    Stepper(const VolumeParams& p, Simulation::State& s, Source src, double dt, double t0, VolumeRecorder* out,
            VolumeTotals& tot)
        : p_(p),
          home_(s),
          s_(s),
          src_(src),
          out_(out),
          tot_(tot),
          dt_(dt),
          t0_(t0),
          earned_(p.baseline_iops * dt),
          burst_cap_(p.burst_iops * dt),
          tput_hi_(p.tput_burst_bytes_s * dt),
          tput_lo_(p.tput_base_bytes_s * dt),
          inv_dt_(1.0 / dt),
          inv_transfer_(1.0 / p.transfer_bytes_s),
          bucket_(p.has_bucket()) {
        if constexpr (std::is_same_v<Source, OpenSource>)
            served_ok_ = !(src.max_in_flight < inf) && detail::served_kernel();
        if (out != nullptr && out->direct()) {
            sink_ = out->sink();
            direct_ = true;
        }
    }

    /// Volume limits for step k; returns what the volume would serve (counted ops, bytes).
    [[gnu::always_inline]] void offer(std::int64_t k) noexcept {
        a_ = src_(k);
        input_ok_ &= a_.ok;
        av_ops_ = s_.backlog_ops + a_.ops;
        av_bytes_ = s_.backlog_bytes + a_.bytes;
        av_cnt_ = s_.backlog_counted + a_.counted;
        // Without a bucket credits stay 0 and burst == baseline, so the same expressions give
        // the provisioned caps.
        pool_ = s_.credits + earned_;
        cap_cnt_ = std::min(burst_cap_, pool_);
        const double cap_bytes = s_.credits > 0 ? tput_hi_ : tput_lo_;
        const Throttle t = throttle(av_cnt_, av_bytes_, cap_cnt_, cap_bytes);
        f_ = t.f;
        bound_ = t.bound;
        if constexpr (!Source::closed) {
            // The application's bound on outstanding I/Os: at most max_in_flight / s completions
            // per second (Little's law); what is beyond waits in the application.
            if (src_.max_in_flight < inf && av_ops_ > 0) {
                const double cap_ops = src_.max_in_flight * dt_ / service_time(av_ops_, av_bytes_);
                if (cap_ops < f_ * av_ops_) {
                    f_ = cap_ops / av_ops_;
                    bound_ = Bound::max_in_flight;
                }
            }
        }
    }
    [[nodiscard]] double want_counted() const noexcept {
        return bound_ == Bound::volume_iops ? cap_cnt_ : f_ * av_cnt_;
    }
    [[nodiscard]] double want_bytes() const noexcept { return f_ * av_bytes_; }
    void prefetch(std::int64_t k) const noexcept { src_.prefetch(k); }
    /// False when some step of an open-loop trace was invalid (NaN, negative, ...).
    [[nodiscard]] bool input_ok() const noexcept { return input_ok_; }

    /// What serving the fraction g (<= 1) of what offer() allowed does in step k; g < 1 means
    /// the instance bound. Changes nothing. The same arithmetic as commit(), operation for
    /// operation, as values instead of updates: jumps apply it m times at once. commit() keeps
    /// its own copy because building this struct in the step loop slowed the loop (GCC 12;
    /// docs/performance.md), a second copy of the step that issue 20 is to remove; the jump-vs-step
    /// tests (tests/cpp/test_jump.cpp, tests/python/test_jump.py, hundreds of random
    /// configurations) fail if the two differ.
    [[gnu::always_inline]] [[nodiscard]] StepOutcome outcome(std::int64_t k, double g,
                                                             Bound instance_bound) const noexcept {
        StepOutcome o;
        double f = f_;
        Bound bound = bound_;
        double served_cnt;
        if (g < 1.0) {
            f *= g;
            bound = instance_bound;
            served_cnt = g * want_counted();
        } else {
            served_cnt = want_counted();  // exact at the IOPS cap, so the bucket empties to exactly zero
        }
        o.f = f;
        o.bound = bound;
        o.served_cnt = served_cnt;
        o.served_ops = f * av_ops_;
        o.served_bytes = f * av_bytes_;

        if constexpr (Source::closed) {
            // The closed loop waits instead of queueing: only an earlier backlog stays queued.
            o.backlog_ops = s_.backlog_ops * (1.0 - f);
            o.backlog_bytes = s_.backlog_bytes * (1.0 - f);
            o.backlog_counted = s_.backlog_counted * (1.0 - f);
            o.demanded_ops = f * a_.ops;
            o.demanded_bytes = f * a_.bytes;
        } else {
            o.backlog_ops = av_ops_ - o.served_ops;
            o.backlog_bytes = av_bytes_ - o.served_bytes;
            o.backlog_counted = av_cnt_ - served_cnt;
            o.demanded_ops = a_.ops;
            o.demanded_bytes = a_.bytes;
        }
        o.raw_credits = pool_ - served_cnt;
        const double c = o.raw_credits;
        o.credits = bucket_ ? (c < 0 ? 0 : (c > p_.credit_capacity ? p_.credit_capacity : c)) : s_.credits;

        // Little's law: mean latency = mean outstanding I/Os / completion rate. For an open loop
        // with max_in_flight, the outstanding I/Os include those held in the application: latency
        // counts from arrival.
        const double rate = o.served_ops * inv_dt_;
        double st;
        if constexpr (Source::closed) {
            st = src_.service_time_s;
        } else {
            st = service_time(av_ops_, av_bytes_);
        }
        const double waiting = 0.5 * (s_.backlog_ops + o.backlog_ops);
        double outstanding;
        double latency = nan;
        if constexpr (Source::closed) {
            // Little's law over the whole cycle (latency + think time) of each user.
            outstanding = src_.in_flight(k) + waiting;
            latency = closed_loop_latency_s(outstanding, rate, st, src_.think_time_s(k));
        } else {
            outstanding = rate * st + waiting;
            // Nothing waiting: every I/O completes in its service time (no division needed).
            if (rate > 0) latency = waiting > 0 ? std::max(st, outstanding / rate) : st;
        }
        o.rate = rate;
        o.latency = latency;
        return o;
    }

    /// Serve the fraction g (<= 1) of what offer() allowed; g < 1 means the instance bound.
    [[gnu::always_inline]] void commit(std::int64_t k, double g, Bound instance_bound) noexcept {
        double f = f_;
        Bound bound = bound_;
        double served_cnt;
        if (g < 1.0) {
            f *= g;
            bound = instance_bound;
            served_cnt = g * want_counted();
        } else {
            served_cnt = want_counted();  // exact at the IOPS cap, so the bucket empties to exactly zero
        }
        const double served_ops = f * av_ops_;
        const double served_bytes = f * av_bytes_;
        const double prev_b_ops = s_.backlog_ops;

        if constexpr (Source::closed) {
            // The closed loop waits instead of queueing: only an earlier backlog stays queued.
            s_.backlog_ops *= 1.0 - f;
            s_.backlog_bytes *= 1.0 - f;
            s_.backlog_counted *= 1.0 - f;
            acc_.demanded_ops += f * a_.ops;
            acc_.demanded_bytes += f * a_.bytes;
        } else {
            s_.backlog_ops = av_ops_ - served_ops;
            s_.backlog_bytes = av_bytes_ - served_bytes;
            s_.backlog_counted = av_cnt_ - served_cnt;
            acc_.demanded_ops += a_.ops;
            acc_.demanded_bytes += a_.bytes;
        }

        if (bucket_) {
            const double before = s_.credits;
            double c = pool_ - served_cnt;
            c = c < 0 ? 0 : (c > p_.credit_capacity ? p_.credit_capacity : c);
            s_.credits = c;
            if (cliffs_.changes(c)) {
                // The bucket drained at the rate the demand asked for while credits last (the
                // throughput cap with credits).
                double wanted = detail::credit_drain(av_cnt_, av_bytes_, burst_cap_, tput_hi_) * g;
                // Behind an instance that held the volume back last step, its credits drained at
                // the share the instance allowed, not at what the volume alone would ask.
                if (prev_instance_bound_) wanted = std::min(wanted, prev_served_cnt_);
                cliffs_.note(before, c, wanted - earned_, t0_ + static_cast<double>(k) * dt_, dt_, tot_.cliffs,
                             tot_.cliff_time_s);
            }
        }

        // Little's law: mean latency = mean outstanding I/Os / completion rate. For an open loop
        // with max_in_flight, the outstanding I/Os include those held in the application: latency
        // counts from arrival.
        const double rate = served_ops * inv_dt_;
        double st;
        if constexpr (Source::closed) {
            st = src_.service_time_s;
        } else {
            st = service_time(av_ops_, av_bytes_);
        }
        const double waiting = 0.5 * (prev_b_ops + s_.backlog_ops);
        double outstanding;
        double latency = nan;
        if constexpr (Source::closed) {
            // Little's law over the whole cycle (latency + think time) of each user.
            outstanding = src_.in_flight(k) + waiting;
            latency = closed_loop_latency_s(outstanding, rate, st, src_.think_time_s(k));
        } else {
            outstanding = rate * st + waiting;
            // Nothing waiting: every I/O completes in its service time (no division needed).
            if (rate > 0) latency = waiting > 0 ? std::max(st, outstanding / rate) : st;
        }
        if (rate > 0) acc_.latency_ops_s += latency * served_ops;

        prev_instance_bound_ = g < 1.0;
        prev_served_cnt_ = served_cnt;
        acc_.served_ops += served_ops;
        acc_.served_bytes += served_bytes;
        acc_.served_counted += served_cnt;
        acc_.steps_bound[static_cast<int>(bound)] += 1;

        if (out_ != nullptr) {
            const VolumeRecorder::Step v{{rate, served_cnt * inv_dt_, served_bytes * inv_dt_ * (1.0 / units::MiB)},
                                         latency,
                                         {s_.credits, s_.backlog_ops},
                                         static_cast<std::uint8_t>(bound)};
            if (direct_) {
                sink_.put(k, v);
            } else {
                out_->record(k, v);
            }
        }
    }

    /// Whether the served steps' kernel (served.hpp) may take the next step: an open-loop trace
    /// without an application bound on outstanding I/Os, with nothing queued (+0, as x - x
    /// leaves it). Alone: no instance scales the step (the caller's to know).
    [[nodiscard]] bool can_serve() const noexcept {
        if constexpr (std::is_same_v<Source, OpenSource>) {
            // (An open loop's backlog is never -0: x - x is +0, and it starts at +0.)
            return served_ok_ && s_.backlog_ops == 0 && s_.backlog_bytes == 0 && s_.backlog_counted == 0;
        } else {
            return false;
        }
    }

    /// The served steps' kernel (served.hpp) on this stepper's state, from step k.
    [[nodiscard]] detail::ServedRun served() const noexcept requires(std::is_same_v<Source, OpenSource>) {
        detail::ServedRun r;
        r.in.ops = src_.ops;
        r.in.bytes = src_.bytes;
        r.in.count = src_.count;
        r.in.own_service_time_s = src_.service_time_s;
        r.in.latency_s = p_.latency_s;
        r.in.inv_transfer = inv_transfer_;
        r.in.inv_dt = inv_dt_;
        r.credit_capacity = p_.credit_capacity;
        r.earned = earned_;
        r.burst_cap = burst_cap_;
        r.tput_hi = tput_hi_;
        r.tput_lo = tput_lo_;
        r.bucket = bucket_;
        r.dry = cliffs_.dry();
        r.out = out_;
        r.direct = direct_;
        r.sink = sink_;
        r.credits = s_.credits;
        r.sums = acc_;  // (the sums of acc_)
        r.last_counted = prev_served_cnt_;
        return r;
    }
    /// Whether the served steps' kernel applies to this stepper at all (can_serve() without the state).
    [[nodiscard]] bool can_serve_at_all() const noexcept { return served_ok_; }
    /// Whether the stepper records into a direct sink (direct_sink()).
    [[nodiscard]] bool records_direct() const noexcept { return out_ != nullptr && direct_; }
    [[nodiscard]] const VolumeRecorder::Sink& direct_sink() const noexcept { return sink_; }
    /// The recorder (null: the run records nothing).
    [[nodiscard]] VolumeRecorder* recorder() const noexcept { return out_; }
    /// Records the next steps into `sink` instead (a served filler's window).
    void record_into(const VolumeRecorder::Sink& sink) noexcept {
        sink_ = sink;
        direct_ = true;
    }
    /// Takes back the state and sums of a served() run that the kernel advanced.
    void served_done(const detail::ServedRun& r) noexcept {
        s_.credits = r.credits;
        static_cast<detail::RunningSums&>(acc_) = r.sums;
        acc_.steps_bound[static_cast<int>(Bound::demand)] += r.taken;
        if (r.taken > 0) {
            prev_instance_bound_ = false;
            prev_served_cnt_ = r.last_counted;
        }
    }

    /// Writes the state and the totals accumulated since the last flush to where they live.
    /// Every step loop calls it when it is done with the stepper.
    void flush() noexcept {
        home_ = s_;
        tot_.demanded_ops += acc_.demanded_ops;
        tot_.demanded_bytes += acc_.demanded_bytes;
        tot_.served_ops += acc_.served_ops;
        tot_.served_bytes += acc_.served_bytes;
        tot_.served_counted += acc_.served_counted;
        tot_.latency_ops_s += acc_.latency_ops_s;
        for (int b = 0; b < n_bounds; ++b) tot_.steps_bound[b] += acc_.steps_bound[b];
        acc_ = Totals{};
    }

    /// The end of the stretch of constant offers that contains step k, at most k_max.
    [[nodiscard]] std::int64_t run_end(std::int64_t k, std::int64_t k_max) noexcept { return src_.run_end(k, k_max); }
    /// True when step k + 1 offers what step k offers (sources that compare their input).
    [[nodiscard]] bool same_next(std::int64_t k) const noexcept requires(!Source::runs_known) {
        return src_.same_next(k);
    }

    /// Steps [k, end) offer what step k offers and no instance scales them: advance through
    /// them, jumping over the steady stretches (jump_steady) and stepping the rest.
    [[gnu::noinline]] void run_constant(std::int64_t k, std::int64_t end) noexcept {
        std::int64_t backoff = 1;
        while (k < end) {
            std::int64_t m = end - k >= min_jump ? jump_steady(k, end - k) : 0;
            if (m == 0 && end - k >= min_jump) m = jump_backlog(k, end - k);
            if (m > 0) {
                k += m;
                backoff = 1;
                continue;
            }
            const std::int64_t stop = std::min(end, k + backoff);
            for (; k < stop; ++k) {
                offer(k);
                commit(k, 1.0, Bound::demand);
            }
            backoff = std::min(backoff * 2, max_backoff);
        }
    }

    // For the coupled loop's jumps (coupled_loop), which probe every volume of an instance
    // together with the conditions jump_steady uses for one.
    [[nodiscard]] double credits() const noexcept { return s_.credits; }
    void set_credits(double c) noexcept { s_.credits = c; }
    [[nodiscard]] bool has_backlog() const noexcept {
        return s_.backlog_ops != 0 || s_.backlog_bytes != 0 || s_.backlog_counted != 0;
    }
    /// Whether outcome o of the step at credits c0 (no backlog before it) is steady: it leaves
    /// no backlog and either keeps the credits (d = 0: a fixed point) or moves them by d,
    /// unclamped, without ending a cliff episode.
    [[nodiscard]] bool steady(const StepOutcome& o, double c0, double& d) const noexcept {
        if constexpr (!Source::closed) {
            if (o.f != 1.0) return false;  // part of the arrivals waits: the backlog grows
        }
        return credit_step(o, c0, d);
    }
    /// Whether outcome o of the step at credits c0 keeps them (d = 0: no bucket, or a fixed point
    /// that changes no cliff episode) or moves them by d, unclamped and without ending an episode:
    /// the credits of a jump (linear in the steps).
    [[nodiscard]] bool credit_step(const StepOutcome& o, double c0, double& d) const noexcept {
        d = 0;
        if (!bucket_ || (o.credits == c0 && !cliffs_.changes(c0))) return true;
        if (!(o.raw_credits > 0 && o.raw_credits < p_.credit_capacity)) return false;  // clamped: not linear
        if (cliffs_.changes(o.raw_credits)) return false;                              // ends an episode: step it
        d = earned_ - o.served_cnt;
        return true;
    }
    /// Whether q, the outcome of the step at the credits a steady stretch predicts, is the step
    /// whose outcome is o (steady from c0 with change d).
    [[nodiscard]] bool same_step(const StepOutcome& o, const StepOutcome& q, double c0, double d) const noexcept {
        const bool credits_ok =
            d == 0 ? (!bucket_ || q.credits == c0) : (q.raw_credits > 0 && q.raw_credits < p_.credit_capacity);
        return q.bound == o.bound && q.f == o.f && q.served_cnt == o.served_cnt && q.served_ops == o.served_ops &&
               q.served_bytes == o.served_bytes && credits_ok;
    }
    /// Apply the steady outcome o (share g of the instance) to the m steps from k.
    void apply_steady(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d, double g) noexcept {
        apply_run(k, m, o, c0, d, g < 1.0);
    }

private:
    /// If step k is steady, jump: advance the m steps from k (at most `avail`, all offering
    /// what step k offers) that have step k's outcome, and return m; else change nothing and
    /// return 0.
    ///
    /// Steady: no backlog before the step and none after it (an open loop served in full; a
    /// closed loop waits instead of queueing), so the step's only state is the credit balance
    /// c. Then either the step leaves c as it was (a full bucket under demand within what it
    /// earns, an empty one under a closed loop held at baseline, a volume without a bucket): a
    /// fixed point, every later step of the stretch is this one, bit for bit; or it moves c by
    /// d = earned - served, unclamped. Every branch of offer() and commit() is a threshold on c
    /// (c > 0 for the throughput cap, c + earned against the burst cap and the demand, the
    /// limit that binds first, the clamps at 0 and at the capacity), and what a step serves
    /// does not decrease as c grows, so along c + j d (monotone in j) each branch changes at
    /// most once: the steps with step k's outcome are a prefix, found by galloping and
    /// bisection over j with outcome() itself (no rule restated). The jump stops jump_margin
    /// steps short of the first step that differs, which is stepped.
    std::int64_t jump_steady(std::int64_t k, std::int64_t avail) noexcept {
        if (has_backlog()) return 0;
        offer(k);
        const StepOutcome o = outcome(k, 1.0, Bound::demand);
        const double c0 = s_.credits;
        double d = 0;
        if (!steady(o, c0, d)) return 0;
        if (d == 0) {
            apply_run(k, avail, o, c0, 0.0);
            return avail;
        }
        auto same = [&](std::int64_t j) {
            s_.credits = c0 + static_cast<double>(j) * d;
            offer(k);
            return same_step(o, outcome(k, 1.0, Bound::demand), c0, d);
        };
        const std::int64_t m = jump_length(avail, same);
        s_.credits = c0;
        if (m == 0) return 0;
        apply_run(k, m, o, c0, d);
        return m;
    }

    /// If step k is an open loop that the volume's IOPS or throughput cap holds back (f < 1)
    /// and has no max_in_flight, jump: advance the m steps from k (at most
    /// `avail`) that serve what step k serves, and return m; else change nothing and return 0.
    ///
    /// With constant arrivals a and a backlog b of the arrivals' composition (ops and bytes per
    /// counted operation; or no arrivals at all), every step serves the same cap (counted ops at
    /// the IOPS cap, bytes at the throughput cap) and the same ops and bytes, so the backlog
    /// moves by a - served each step (grows under demand above the cap, drains under demand
    /// below it), the credits by earned - served (or stay: an empty bucket at baseline, no
    /// bucket, a full one), and the latency, st + waiting / rate with waiting the mean backlog
    /// of the step, by (a_ops - served_ops) / rate. Each branch (f < 1: the backlog outlasts the
    /// step; the bucket's thresholds as in jump_steady) changes at most once along the stretch,
    /// so the steps that keep step k's outcome are a prefix, found by galloping and bisection
    /// over j with outcome() itself at the predicted state; served amounts may differ from step
    /// k's by rounding only (relative 1e-12). The jump stops jump_margin steps short of the
    /// first step that differs (the backlog's last steps, the bucket running dry), which is
    /// stepped. A recorded jump passes the latency's slope to Recorder::record_constant.
    std::int64_t jump_backlog(std::int64_t k, std::int64_t avail) noexcept {
        if constexpr (Source::closed) {
            (void)k;
            (void)avail;
            return 0;
        } else {
            if (src_.max_in_flight < inf) return 0;
            offer(k);
            if (!a_.ok || !(f_ < 1.0) || (bound_ != Bound::volume_iops && bound_ != Bound::volume_throughput)) return 0;
            const double b_ops = s_.backlog_ops;
            const double b_bytes = s_.backlog_bytes;
            const double b_cnt = s_.backlog_counted;
            // The backlog's composition equals the arrivals' (else it converges geometrically).
            constexpr double comp_tol = 1e-12;
            const bool no_arrivals = a_.ops == 0 && a_.bytes == 0 && a_.counted == 0;
            if (!no_arrivals &&
                !(std::abs(b_ops * a_.counted - a_.ops * b_cnt) <= comp_tol * b_ops * a_.counted &&
                  std::abs(b_bytes * a_.counted - a_.bytes * b_cnt) <= comp_tol * b_bytes * a_.counted)) {
                // Another mix: the closed form has no per-step series to record (they are not
                // linear), so a recorded run steps it.
                return out_ == nullptr ? jump_mixed(k, avail) : 0;
            }
            const StepOutcome o = outcome(k, 1.0, Bound::demand);
            if (!(o.rate > 0) || std::isnan(o.latency)) return 0;
            const double c0 = s_.credits;
            const double cap = p_.credit_capacity;
            double d = 0;
            if (!credit_step(o, c0, d)) return 0;
            const double d_ops = a_.ops - o.served_ops;
            const double d_bytes = a_.bytes - o.served_bytes;
            const double d_cnt = a_.counted - o.served_cnt;
            const double d_lat = d_ops / o.rate;  // waiting grows by d_ops a step
            auto near = [](double x, double y, double rel) { return std::abs(x - y) <= rel * std::abs(y); };
            auto same = [&](std::int64_t j) {
                const auto jj = static_cast<double>(j);
                s_.credits = c0 + jj * d;
                s_.backlog_ops = b_ops + jj * d_ops;
                s_.backlog_bytes = b_bytes + jj * d_bytes;
                s_.backlog_counted = b_cnt + jj * d_cnt;
                offer(k);
                const StepOutcome q = outcome(k, 1.0, Bound::demand);
                const bool credits_ok = d == 0 ? q.credits == c0 : (q.raw_credits > 0 && q.raw_credits < cap);
                return q.bound == o.bound && q.f < 1.0 && credits_ok && q.backlog_counted > 0 &&
                       near(q.served_cnt, o.served_cnt, comp_tol) && near(q.served_ops, o.served_ops, comp_tol) &&
                       near(q.served_bytes, o.served_bytes, comp_tol) && near(q.latency, o.latency + jj * d_lat, 1e-10);
            };
            const std::int64_t m = jump_length(avail, same);
            if (m == 0) {
                s_.credits = c0;
                s_.backlog_ops = b_ops;
                s_.backlog_bytes = b_bytes;
                s_.backlog_counted = b_cnt;
                return 0;
            }
            const auto mm = static_cast<double>(m);
            s_.credits = c0 + mm * d;
            s_.backlog_ops = b_ops + mm * d_ops;
            s_.backlog_bytes = b_bytes + mm * d_bytes;
            s_.backlog_counted = b_cnt + mm * d_cnt;
            acc_.demanded_ops += mm * o.demanded_ops;
            acc_.demanded_bytes += mm * o.demanded_bytes;
            // sum over j < m of served_ops * (latency + j * d_lat)
            acc_.latency_ops_s += o.served_ops * (mm * o.latency + d_lat * (mm * (mm - 1) * 0.5));
            prev_instance_bound_ = false;
            prev_served_cnt_ = o.served_cnt;
            acc_.served_ops += mm * o.served_ops;
            acc_.served_bytes += mm * o.served_bytes;
            acc_.served_counted += mm * o.served_cnt;
            acc_.steps_bound[static_cast<int>(o.bound)] += m;
            if (out_ != nullptr) {
                out_->record_constant(k, m,
                                      {{o.rate, o.served_cnt * inv_dt_, o.served_bytes * inv_dt_ * (1.0 / units::MiB)},
                                       o.latency,
                                       {c0 + d, b_ops + d_ops},
                                       static_cast<std::uint8_t>(o.bound)},
                                      {d, d_ops}, d_lat);
            }
            return m;
        }
    }

    /// jump_backlog's case of a backlog whose mix (operations and bytes per counted I/O) is not the
    /// arrivals', in a run that records no series: advance the m steps from k (at most `avail`)
    /// that stay throttled by the limit that throttles step k, and return m; else change nothing
    /// and return 0. offer(k) has been called.
    ///
    /// Each such step serves the same amount s of the binding quantity (counted I/Os at the IOPS
    /// cap, bytes at the throughput cap) and the same share of every component of what is
    /// available, so that quantity's backlog moves linearly, and the backlog is a mix of what
    /// was there at step k (its share phi_j a ratio of Gamma functions, mixing.hpp) and of
    /// arrivals: each component x after j steps is rho_x (B_j - O_j) + (x_0 / B_0) O_j, with
    /// rho_x the arrivals' x per unit of the binding quantity and O_j = phi_j B_j. The totals
    /// follow without stepping: what was served is what was there plus what arrived minus what
    /// is left; the latency, st x served + dt x waiting per step (Little's law, st linear in the
    /// bytes served), sums the backlog, whose old part has a closed-form sum too (old_sum). As
    /// in jump_backlog, every branch of the step changes at most once along the stretch (the
    /// mix moves monotonically from the old one to the arrivals'), so the steps that keep step
    /// k's limit are a prefix, found by galloping and bisection over j with outcome() at the
    /// predicted state. Not jumped: a throughput-bound volume with a credit bucket (its credits
    /// would follow the varying counted I/Os), and arrivals within 1e-6 of twice the amount
    /// served but not equal to it (old_sum's quotient loses its precision there).
    std::int64_t jump_mixed(std::int64_t k, std::int64_t avail) noexcept {
        const bool by_cnt = bound_ == Bound::volume_iops;
        if (!by_cnt && bucket_) return 0;
        const int q = by_cnt ? 2 : 1;  // index of the binding quantity in {ops, bytes, counted}
        const double x0[3] = {s_.backlog_ops, s_.backlog_bytes, s_.backlog_counted};
        const double ax[3] = {a_.ops, a_.bytes, a_.counted};
        const double B0 = x0[q];
        const double a = ax[q];
        if (!(B0 > 0 && a > 0)) return 0;
        const StepOutcome o = outcome(k, 1.0, Bound::demand);
        if (!(o.rate > 0) || std::isnan(o.latency)) return 0;
        const double s = by_cnt ? o.served_cnt : o.served_bytes;
        const double delta = a - s;
        const double eps = a - 2 * s;
        if (eps != 0 && std::abs(eps) < 1e-6 * a) return 0;
        const double c0 = s_.credits;
        const double cap = p_.credit_capacity;
        double d = 0;
        if (!credit_step(o, c0, d)) return 0;
        // The backlog after j steps.
        auto state_at = [&](double j, double(&x)[3]) {
            const double bj = B0 + j * delta;
            const double oj = j == 0 ? B0 : detail::old_share(B0, a, delta, j) * bj;
            for (int i = 0; i < 3; ++i) x[i] = i == q ? bj : ax[i] / a * (bj - oj) + x0[i] / B0 * oj;
        };
        auto set_state = [&](double j) {
            double x[3];
            state_at(j, x);
            s_.credits = c0 + j * d;
            s_.backlog_ops = x[0];
            s_.backlog_bytes = x[1];
            s_.backlog_counted = x[2];
        };
        auto restore = [&] {
            s_.credits = c0;
            s_.backlog_ops = x0[0];
            s_.backlog_bytes = x0[1];
            s_.backlog_counted = x0[2];
        };
        constexpr double rel = 1e-12;
        auto same = [&](std::int64_t j) {
            set_state(static_cast<double>(j));
            offer(k);
            const StepOutcome r = outcome(k, 1.0, Bound::demand);
            const bool credits_ok = d == 0 ? r.credits == c0 : (r.raw_credits > 0 && r.raw_credits < cap);
            const double served = by_cnt ? r.served_cnt : r.served_bytes;
            const double left = by_cnt ? r.backlog_counted : r.backlog_bytes;
            return r.bound == o.bound && r.f < 1.0 && credits_ok && left > 0 && r.rate > 0 &&
                   std::abs(served - s) <= rel * s;
        };
        const std::int64_t m = jump_length(avail, same);
        restore();
        if (m == 0) return 0;
        const auto mm = static_cast<double>(m);
        double xm[3], xl[3];  // the backlog after m steps, and before the last of them
        state_at(mm, xm);
        state_at(mm - 1, xl);
        double served[3];
        for (int i = 0; i < 3; ++i) served[i] = i == q ? mm * s : x0[i] + mm * ax[i] - xm[i];
        // sum_{j<m} of the mean backlog of operations in step j, (b_j + b_{j+1}) / 2.
        const double sum_b = mm * B0 + delta * (mm * (mm - 1) * 0.5);
        const double sum_o = detail::old_sum(B0, a, s, mm);
        const double rho_ops = ax[0] / a;
        const double waiting = rho_ops * (sum_b - sum_o) + x0[0] / B0 * sum_o + 0.5 * (xm[0] - x0[0]);
        const double st_part = std::isnan(src_.service_time_s) ? p_.latency_s * served[0] + served[1] * inv_transfer_
                                                               : src_.service_time_s * served[0];
        s_.credits = c0 + mm * d;
        s_.backlog_ops = xm[0];
        s_.backlog_bytes = xm[1];
        s_.backlog_counted = xm[2];
        acc_.demanded_ops += mm * a_.ops;
        acc_.demanded_bytes += mm * a_.bytes;
        acc_.latency_ops_s += st_part + waiting * dt_;
        prev_instance_bound_ = false;
        prev_served_cnt_ = by_cnt ? s : xl[2] + ax[2] - xm[2];
        acc_.served_ops += served[0];
        acc_.served_bytes += served[1];
        acc_.served_counted += served[2];
        acc_.steps_bound[static_cast<int>(o.bound)] += m;
        return m;
    }

    /// Apply outcome o to the m steps from k: credits c0 + j d after step k + j - 1 (d = 0 at a
    /// fixed point), everything else as o says, every step.
    void apply_run(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d,
                   bool instance_bound = false) noexcept {
        const auto mm = static_cast<double>(m);
        if (bucket_ && d != 0) s_.credits = c0 + mm * d;
        s_.backlog_ops = o.backlog_ops;
        s_.backlog_bytes = o.backlog_bytes;
        s_.backlog_counted = o.backlog_counted;
        acc_.demanded_ops += mm * o.demanded_ops;
        acc_.demanded_bytes += mm * o.demanded_bytes;
        if (o.rate > 0) acc_.latency_ops_s += mm * (o.latency * o.served_ops);
        prev_instance_bound_ = instance_bound;
        prev_served_cnt_ = o.served_cnt;
        acc_.served_ops += mm * o.served_ops;
        acc_.served_bytes += mm * o.served_bytes;
        acc_.served_counted += mm * o.served_cnt;
        acc_.steps_bound[static_cast<int>(o.bound)] += m;
        if (out_ != nullptr) record_run(k, m, o, c0, d);
    }

    /// The recorded outputs of m steps from k that all have outcome o, credits c0 + (j + 1) d
    /// at the end of step k + j: the recorder's fills, no per-step work beyond the stores.
    void record_run(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d) noexcept {
        out_->record_constant(k, m,
                              {{o.rate, o.served_cnt * inv_dt_, o.served_bytes * inv_dt_ * (1.0 / units::MiB)},
                               o.latency,
                               {c0 + d, o.backlog_ops},
                               static_cast<std::uint8_t>(o.bound)},
                              {d, 0.0});
    }

private:
    // Unloaded service time of an open loop's I/Os in a step: the workload's, else the volume's
    // model at the mean size of the I/Os available.
    [[nodiscard]] double service_time(double ops, double bytes) const noexcept {
        if (!std::isnan(src_.service_time_s)) return src_.service_time_s;
        return ops > 0 ? p_.latency_s + bytes / ops * inv_transfer_ : p_.latency_s;
    }

    const VolumeParams& p_;
    // The volume's state and the run's totals are worked on in the stepper itself (s_, acc_)
    // and written to where they live (home_, tot_) by flush(): a stepper that is a local of the
    // step loop then keeps them in registers instead of a store and a load per field and step.
    Simulation::State& home_;
    Simulation::State s_;
    struct Totals : detail::RunningSums {
        std::int64_t steps_bound[n_bounds] = {};
    };
    Totals acc_;
    Source src_;
    VolumeRecorder* out_;
    VolumeRecorder::Sink sink_{};  // out_'s, when it records directly (a copy kept in registers)
    bool direct_ = false;
    VolumeTotals& tot_;
    double dt_, t0_, earned_, burst_cap_, tput_hi_, tput_lo_, inv_dt_, inv_transfer_;
    bool bucket_;
    bool served_ok_ = false;  // the served steps' kernel applies (can_serve)
    bool input_ok_ = true;
    bool prev_instance_bound_ = false;
    double prev_served_cnt_ = 0;
    CliffTracker cliffs_;
    // Scratch between offer() and commit().
    Offer a_{};
    double av_ops_ = 0, av_bytes_ = 0, av_cnt_ = 0, pool_ = 0, cap_cnt_ = 0, f_ = 1;
    Bound bound_ = Bound::demand;
};

using AnyStepper = std::variant<Stepper<ClosedSource>, Stepper<OpenSource>, Stepper<IdleSource>, Stepper<PhasedSource>,
                                Stepper<PiecewiseSource>>;

AnyStepper make_stepper(const VolumeParams& p, Simulation::State& s, const Workload& w, double dt, double t0,
                        VolumeRecorder* out, VolumeTotals& tot) {
    if (const auto* c = std::get_if<ClosedLoop>(&w)) {
        // The closed-loop rules of workload.hpp, shared with closed_loop_rate (burst.hpp).
        const double ops = offered_iops(p, *c) * dt;
        return Stepper<ClosedSource>(p, s,
                                     ClosedSource{{ops, ops * c->io_bytes, ops * counted_per_io(p, *c), true},
                                                  c->in_flight,
                                                  service_time_s(p, *c),
                                                  c->think_time_s},
                                     dt, t0, out, tot);
    }
    if (const auto* ph = std::get_if<PhasedClosedLoop>(&w)) {
        return Stepper<PhasedSource>(
            p, s,
            PhasedSource{ph->in_flight.data(), ph->think_time_s.data(), service_time_s(p, ph->loop), ph->loop.io_bytes,
                         counted_per_io(p, ph->loop), dt},
            dt, t0, out, tot);
    }
    if (const auto* o = std::get_if<OpenLoop>(&w)) {
        return Stepper<OpenSource>(
            p, s,
            OpenSource{o->ops.data(), o->bytes.data(), IoCounting(p, o->pattern), o->service_time_s, o->max_in_flight},
            dt, t0, out, tot);
    }
    if (const auto* pw = std::get_if<PiecewiseOpenLoop>(&w)) {
        return Stepper<PiecewiseSource>(
            p, s,
            PiecewiseSource{pw->change_steps.data(), pw->ops.data(), pw->bytes.data(), pw->change_steps.size(),
                            IoCounting(p, pw->pattern), pw->service_time_s, pw->max_in_flight},
            dt, t0, out, tot);
    }
    return Stepper<IdleSource>(p, s, IdleSource{}, dt, t0, out, tot);
}

// Steps [k0, k1) of one volume alone, with jumps: constant stretches go to run_constant, all of
// it for sources whose stretches are known, else the runs of equal values that a look every
// scan_every steps finds (a noisy trace pays one comparison per scan_every steps).
template <class Source>
void step_range_jumping(Stepper<Source>& st, std::int64_t k0, std::int64_t k1) {
    if constexpr (Source::runs_known) {
        for (std::int64_t k = k0; k < k1;) {
            const std::int64_t e = st.run_end(k, k1);
            st.run_constant(k, e);
            k = e;
        }
    } else {
        // The steps between runs go through a local copy of the stepper, as in step_all (its
        // address does not escape, so its fields stay in registers); the copy is handed back
        // (copy-constructed in place: references as members) for a run, which run_constant
        // advances in place, and a new copy steps on after it.
        for (std::int64_t k = k0; k < k1;) {
            std::int64_t run_end = -1;
            {
                Stepper<Source> local = st;
                while (k < k1) {
                    const std::int64_t stop = std::min(k1, k + scan_every);
                    for (; k < stop; ++k) {
                        local.offer(k);
                        local.commit(k, 1.0, Bound::demand);
                    }
                    // (Asked of st, whose source is the same: no call on the local copy that
                    // might not be inlined and so take its address.)
                    if (k + min_run <= k1 && st.same_next(k)) {
                        const std::int64_t e = st.run_end(k, k1);
                        if (e - k >= min_run) {
                            run_end = e;
                            break;
                        }
                    }
                }
                std::destroy_at(&st);
                std::construct_at(&st, local);
            }
            if (run_end >= 0) {
                st.run_constant(k, run_end);
                k = run_end;
            }
        }
    }
}

// Dominant-resource fair shares (max-min fair on each volume's larger share of the two
// budgets): volume i keeps min(1, level / d_i) of its request, d_i = max(cnt_i / cap_io,
// bytes_i / cap_by), at the highest level both budgets allow, so at least one is used up.
void fair_shares(const std::vector<double>& cnt, const std::vector<double>& bytes, double cap_io, double cap_by,
                 std::vector<double>& g) {
    const std::size_t n = cnt.size();
    double hi = 0;
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) {
        d[i] = std::max(cap_io > 0 ? cnt[i] / cap_io : inf, cap_by > 0 ? bytes[i] / cap_by : inf);
        hi = std::max(hi, d[i]);
    }
    auto fits = [&](double level) {
        double u_io = 0, u_by = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double f = d[i] > level ? level / d[i] : 1.0;
            u_io += f * cnt[i];
            u_by += f * bytes[i];
        }
        return u_io <= cap_io && u_by <= cap_by;
    };
    double lo = 0;
    for (int it = 0; it < 64 && hi - lo > 1e-15 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        (fits(mid) ? lo : hi) = mid;
    }
    for (std::size_t i = 0; i < n; ++i) g[i] = d[i] > lo ? lo / d[i] : 1.0;
}

// The instance's shared bucket: earns in proportion to unused baseline, spends above it.
struct InstanceBucket {
    InstanceBucket(double base_rate, double max_rate, double capacity_, double earn_idle, double dt, double c)
        : base(base_rate * dt),
          max(max_rate * dt),
          capacity(capacity_),
          earn(earn_idle * dt),
          earn_per_unused(base > 0 ? earn / base : 0),
          credits(c) {}
    double base, max, capacity, earn, earn_per_unused;
    double credits;  // a copy (kept in a register by the loops), written back at the end of a run
    [[nodiscard]] double cap() const noexcept { return std::min(max, base + credits); }
    /// The credits after a step that used `used`, before the clamps to [0, capacity].
    [[nodiscard]] double raw_after(double used) const noexcept {
        return used <= base ? credits + earn - earn_per_unused * used : credits - (used - base);
    }
    /// Whether the raw credits `c` are left as they are by the clamps of use().
    [[nodiscard]] bool unclamped(double c) const noexcept { return c >= capacity * 1e-12 && c <= capacity; }
    /// The credits after a step that used `used`.
    [[nodiscard]] double after(double used) const noexcept {
        if (capacity <= 0) return credits;
        double c = raw_after(used);
        // Rounding in the sum of the volumes' shares must not leave a sliver of credit.
        if (c < capacity * 1e-12) c = 0;
        return c > capacity ? capacity : c;
    }
    void use(double used) noexcept { credits = after(used); }
    [[nodiscard]] double pct() const noexcept { return capacity > 0 ? credits / capacity * 100.0 : 100.0; }
};

// Calls f on a stepper, whether its type is known (homogeneous run) or held in a variant.
template <class St, class F>
inline decltype(auto) apply(St& st, F&& f) {
    if constexpr (requires { st.index(); }) {
        return std::visit(std::forward<F>(f), st);
    } else {
        return f(st);
    }
}

// Steps between two interrupt checks of a loop that steps `volumes` volumes together.
inline std::int64_t steps_per_check(std::size_t volumes) {
    return std::max<std::int64_t>(1, interrupt_every_volume_steps / static_cast<std::int64_t>(volumes));
}

// Calls steps(k0, k1) over [0, n) in chunks of steps_per_check(volumes) and asks `interrupt`
// between chunks: the tight step loop itself stays free of the check.
template <class F>
inline void in_chunks(std::int64_t n, std::size_t volumes, const InterruptCheck& interrupt, F&& steps) {
    const std::int64_t chunk = steps_per_check(volumes);
    for (std::int64_t k0 = 0; k0 < n; k0 += chunk) {
        if (k0 > 0 && interrupt && interrupt()) throw Interrupted();
        steps(k0, std::min(n, k0 + chunk));
    }
}

// Steps [0, n) of one volume alone, every step (RunOptions::jump off), asking `interrupt`
// between chunks; returns input_ok(). The loop steps a copy of the stepper: a local whose address
// nothing takes (no lambda captures it, no out-of-line call sees it), so GCC keeps its fields in
// registers across the stores that commit() makes through s_ and tot_ (the volume's state and
// totals). Stepping the variant's stepper in place, as before the jumps, was fine until the same
// visit also handed that stepper to the jump path (run_constant is noinline; the chunk lambdas
// may be compiled out of line): it escapes, GCC can no longer tell s_ and tot_ from pointers into
// it, and the loop reloaded s_, tot_ and the constants and stored the scratch fields (a_, av_*,
// pool_, cap_cnt_, f_, bound_) to memory in every step, which made the closed and open loops
// markedly slower (docs/performance.md, "The scalar step loop on a copy of the stepper"). A copy
// stepped inside the chunk lambda fixed the closed loop only: GCC compiled the open loop's lambda
// out of line, so the copy escaped again. Copying is cheap (references and scalars); the state
// and totals it writes are the caller's. noinline: inlined into the visit, step_all slowed the
// piecewise source's loop; out of line, it leaves that loop and the others as they were.
// A helper thread for step_all's served steps (served.hpp, ServedFiller), which writes their
// recorded values but the credits, for a recorded open loop long enough to be worth a thread when
// there is a core to spare; none (empty) otherwise. It lives in step_all's caller: an object with
// a destructor in step_all itself made GCC keep the step loop's values in memory (a throttled
// trace stepped slower: docs/performance.md, "Served steps").
// Another recording than the default (some series, every N steps, float32, extremes) gets a
// windowed filler: the loop records every value of a window of steps as the default would, and
// the filler hands each window to the recorder while the loop goes on in the other buffer.
constexpr std::int64_t served_window = std::int64_t{1} << 15;
static_assert(interrupt_every_volume_steps % served_window == 0);

template <class Source>
void served_filler(const Stepper<Source>& st, std::int64_t n, bool spare_core,
                   std::optional<detail::ServedFiller>& filler) {
    if constexpr (std::is_same_v<Source, OpenSource>) {
        if (spare_core && n >= detail::served_filler_min_steps && st.recorder() != nullptr && st.can_serve_at_all()) {
            try {
                if (st.records_direct()) {
                    filler.emplace(st.served().in, st.direct_sink());
                } else {
                    filler.emplace(st.served().in, *st.recorder(), served_window);
                }
            } catch (const std::system_error&) {  // no thread to be had: the kernel writes them
            } catch (const std::bad_alloc&) {     // no room for the window: record step by step
            }
        }
    }
}

template <class Source>
[[gnu::noinline]] bool step_all(const Stepper<Source>& st0, std::int64_t n, const InterruptCheck& interrupt,
                                detail::ServedFiller* filler) {
    Stepper<Source> st = st0;
    const std::int64_t check = steps_per_check(1);
    const std::int64_t window = filler != nullptr ? filler->window() : 0;  // a windowed filler's
    const std::int64_t chunk = window > 0 ? window : check;
    std::int64_t next_try = 0, backoff = 1;
    for (std::int64_t k0 = 0; k0 < n; k0 += chunk) {
        if (k0 > 0 && k0 % check == 0 && interrupt && interrupt()) throw Interrupted();
        const std::int64_t k1 = std::min(n, k0 + chunk);
        if (window > 0) st.record_into(filler->window_sink(k0 / window));
        if constexpr (std::is_same_v<Source, OpenSource>) {
            // Steps served in full go to the kernel of served.hpp, on a copy of what it needs (st
            // stays a local whose address nothing takes), the others through offer() and commit().
            // A stretch that ends within a few steps makes the next look wait (doubling), so that
            // a throttled trace pays little for the looks. The kernel's call costs the loop some
            // registers: a throttled trace, with few steps served, steps slower than before the
            // kernel (docs/performance.md); a separate function for these steps was slower
            // still (GCC spilled its loop's values), and so was an object with a destructor here.
            for (std::int64_t k = k0; k < k1;) {
                for (; k < k1; ++k) {
                    if (k >= next_try && st.can_serve()) break;
                    st.offer(k);
                    st.commit(k, 1.0, Bound::demand);
                }
                if (k == k1) break;
                detail::ServedRun r = st.served();
                r.filler = filler;
                const std::int64_t e = detail::serve(r, k, k1);
                st.served_done(r);
                if (e - k < served_min_stretch) {
                    next_try = e + backoff;
                    backoff = std::min(2 * backoff, served_max_backoff);
                } else {
                    backoff = 1;
                }
                k = e;
                if (k < k1) {  // the step that ended the stretch
                    st.offer(k);
                    st.commit(k, 1.0, Bound::demand);
                    ++k;
                }
            }
        } else {
            for (std::int64_t k = k0; k < k1; ++k) {
                st.offer(k);
                st.commit(k, 1.0, Bound::demand);
            }
        }
        if (window > 0) filler->push_window(k0, k1);
    }
    st.flush();
    return st.input_ok();
}

}  // namespace

Simulation::Simulation(const std::vector<VolumeSpec>& volumes, double dt_s) : dt_s_(dt_s) {
    detail::require_positive(dt_s, "dt_s");
    init_volumes(volumes, true);
}

Simulation::Simulation(const std::vector<VolumeSpec>& volumes, const InstanceSpec& instance, double dt_s)
    : dt_s_(dt_s) {
    detail::require_positive(dt_s, "dt_s");
    instance_ = make_instance(instance);
    inst_io_credits_ = instance_->io_initial;
    inst_bytes_credits_ = instance_->bytes_initial;
    init_volumes(volumes, instance_->nitro);
}

void Simulation::init_volumes(const std::vector<VolumeSpec>& volumes, bool nitro) {
    if (volumes.empty()) throw ConfigError("volumes is empty: a simulation needs at least one volume");
    params_.reserve(volumes.size());
    for (std::size_t i = 0; i < volumes.size(); ++i) {
        try {
            params_.push_back(make_volume(volumes[i], nitro));
        } catch (const ConfigError& e) {
            if (volumes.size() == 1) throw;
            throw ConfigError(fmt::format("volume {}: {}", i, e.what()));
        }
        state_.push_back(State{params_.back().initial_credits, 0, 0, 0});
    }
}

namespace {

// Work below which one more thread is not worth starting it (about a millisecond of stepping):
// runs this small stay in the calling thread.
constexpr std::int64_t min_volume_steps_per_thread = std::int64_t{1} << 16;

// Threads worth using for `items` items of `work` volume-steps in all, at most `threads`.
int useful_threads(int threads, std::size_t items, double work) {
    const double by_work = std::max(1.0, work / static_cast<double>(min_volume_steps_per_thread));
    return static_cast<int>(std::min({static_cast<double>(threads), static_cast<double>(items), by_work}));
}

// Calls work(i, check) for every i in [0, n_items) over `threads` threads, the calling thread
// one of them; each item is done whole by one thread (handed out in order by an atomic counter).
// `check` is the InterruptCheck the item's loop asks between chunks: a stop flag, which the
// calling thread's check also sets from `interrupt` (only the calling thread calls `interrupt`:
// it may take the GIL). The calling thread polls `interrupt` while it waits for the others. The
// first exception (an Interrupted from the check included) stops every thread; all are joined
// before it is rethrown, so the caller can undo what the items did.
template <class Work>
void parallel_items(std::size_t n_items, int threads, const InterruptCheck& interrupt, Work&& work) {
    if (threads <= 1 || n_items <= 1) {
        for (std::size_t i = 0; i < n_items; ++i) work(i, interrupt);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::condition_variable cv;
    std::exception_ptr first;
    int running = threads - 1;
    auto fail = [&](std::exception_ptr e) {
        {
            const std::lock_guard<std::mutex> lock(mu);
            if (!first) first = std::move(e);
        }
        stop.store(true, std::memory_order_relaxed);
    };
    auto loop = [&](const InterruptCheck& check) {
        try {
            for (std::size_t i = next.fetch_add(1); i < n_items && !stop.load(std::memory_order_relaxed);
                 i = next.fetch_add(1)) {
                work(i, check);
            }
        } catch (...) {
            fail(std::current_exception());
        }
    };
    const InterruptCheck worker_check = [&stop] { return stop.load(std::memory_order_relaxed); };
    bool interrupted = false;
    const InterruptCheck caller_check = [&] {
        if (stop.load(std::memory_order_relaxed)) return true;
        if (interrupt && interrupt()) {
            interrupted = true;
            return true;
        }
        return false;
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads - 1));
    try {
        for (int t = 1; t < threads; ++t) {
            pool.emplace_back([&] {
                loop(worker_check);
                const std::lock_guard<std::mutex> lock(mu);
                --running;
                cv.notify_all();
            });
        }
    } catch (...) {  // no more threads to be had: the ones started and this one do the work
        const std::lock_guard<std::mutex> lock(mu);
        running -= threads - 1 - static_cast<int>(pool.size());
    }
    loop(caller_check);
    {
        // Wait for the workers, asking `interrupt` every 10 ms (it rate-limits itself).
        std::unique_lock<std::mutex> lock(mu);
        while (!cv.wait_for(lock, std::chrono::milliseconds(10), [&] { return running == 0; })) {
            if (!interrupted && !stop.load(std::memory_order_relaxed) && interrupt) {
                lock.unlock();
                try {
                    if (interrupt()) {
                        interrupted = true;
                        fail(std::make_exception_ptr(Interrupted()));
                    }
                } catch (...) {
                    fail(std::current_exception());
                }
                lock.lock();
            }
        }
    }
    for (auto& t : pool) t.join();
    if (first) std::rethrow_exception(first);
}

// The share of a trace's steps that equal the next one, estimated from at most 1,024 evenly
// spaced steps (so it costs nothing against the run, and depends on the trace alone: a volume's
// results do not depend on the other volumes); -1 for a run too short to bother.
double equal_share(const OpenLoop& o, std::int64_t n) {
    constexpr std::int64_t samples = 1024;
    if (n < 2 * samples) return -1;
    const std::int64_t stride = (n - 1) / samples;
    std::int64_t seen = 0, same = 0;
    for (std::int64_t k = 0; k + 1 < n; k += stride) {
        ++seen;
        same += pair_same_next(o.ops.data(), o.bytes.data(), k) ? 1 : 0;
    }
    return static_cast<double>(same) / static_cast<double>(seen);
}

// Whether a totals-only trace has runs of equal values long enough that the scalar loop, which
// jumps over them, beats the lockstep kernel, which steps every value: the kernel's speed does
// not depend on the runs, the jumping loop's grows with their length L, and the two break even
// at about L = 20, where about 95 % of the steps equal the next one (docs/performance.md, "Jumps
// or the lockstep kernel").
bool long_runs(const OpenLoop& o, std::int64_t n) { return equal_share(o, n) >= 0.95; }

// Whether a trace stepped alone is worth looking at for runs to jump (the looks every scan_every
// steps cost a noisy trace more than its few runs save: docs/performance.md, BM_Jump_scan): not
// when fewer than one step in scan_every equals the next.
bool has_runs(const OpenLoop& o, std::int64_t n) {
    const double share = equal_share(o, n);
    return share < 0 || share * static_cast<double>(scan_every) >= 1.0;
}

// How hard a trace presses on its volume: the mean I/Os a step of at most 1,024 evenly spaced
// steps, over the volume's baseline a step. The lockstep kernel steps a group much faster when
// none of its lanes is throttled (it skips the divisions), so volumes are grouped by this.
double load(const OpenLoop& o, const VolumeParams& p, std::int64_t n, double dt) {
    constexpr std::int64_t samples = 1024;
    const std::int64_t stride = std::max<std::int64_t>(1, n / samples);
    double sum = 0;
    std::int64_t seen = 0;
    for (std::int64_t k = 0; k < n; k += stride) {
        const double x = o.ops[static_cast<std::size_t>(k)];
        if (x >= 0 && x <= max_demand_per_step) sum += x;  // (a bad value is reported by the run)
        ++seen;
    }
    return seen > 0 ? sum / static_cast<double>(seen) / std::max(p.baseline_iops * dt, 1e-300) : 0.0;
}

}  // namespace

int resolve_threads(const RunOptions& options) {
    if (options.threads < 0) {
        throw ConfigError(fmt::format("threads={} must be >= 0 (0: every core, {} here)", options.threads,
                                      std::max(1U, std::thread::hardware_concurrency())));
    }
    if (options.threads > 0) return options.threads;
    return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

bool Simulation::run_independent(const std::vector<Workload>& ws, std::int64_t n, RunResult& r, VolumeRecorder* rec,
                                 const InterruptCheck& interrupt, int threads, const RunOptions& options) {
    // Volumes that share no budget are independent. The work comes in items, each stepped whole
    // by one thread: groups of totals-only open loops for the lockstep kernel (lockstep.hpp),
    // lockstep_lanes at a time (the last group padded; a last single volume goes to the scalar
    // loop, which is faster for one), and every other volume alone, through the scalar loop,
    // which keeps its state in registers and its source type known at compile time. Each volume
    // gives the same results, to the last bit, whichever item and thread steps it.
    // Closed-form jumps (options.jump) apply to the volumes stepped alone, so a totals-only
    // OpenLoop trace goes to the lockstep kernel only when it has few runs of equal values to
    // jump over (long_runs); lockstep = false sends every volume through the scalar loop.
    constexpr std::size_t lanes = detail::lockstep_lanes;
    std::vector<detail::LockstepVolume> open;
    std::vector<std::size_t> scalar;
    const bool lockstep = rec == nullptr && options.lockstep && detail::lockstep_isa() != detail::LockstepIsa::none;
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const auto* o = std::get_if<OpenLoop>(&ws[i]);
        if (o != nullptr && lockstep && !(options.jump && long_runs(*o, n))) {
            open.push_back({&params_[i], &state_[i], o, &r.totals[i]});
        } else {
            scalar.push_back(i);
        }
    }
    if (open.size() > lanes) {
        // Volumes of similar load side by side: groups whose lanes are rarely throttled skip
        // the throttle's divisions (lockstep.cpp); results do not depend on the grouping.
        std::vector<std::pair<double, std::size_t>> key(open.size());
        for (std::size_t j = 0; j < open.size(); ++j) {
            key[j] = {load(*open[j].workload, *open[j].params, n, dt_s_), j};
        }
        std::sort(key.begin(), key.end());
        std::vector<detail::LockstepVolume> sorted(open.size());
        for (std::size_t j = 0; j < open.size(); ++j) sorted[j] = open[key[j].second];
        open.swap(sorted);
    }
    if (open.size() % lanes == 1) {  // nothing to step it with
        scalar.push_back(static_cast<std::size_t>(open.back().state - state_.data()));
        open.pop_back();
    }
    const std::size_t groups = (open.size() + lanes - 1) / lanes;
    const std::size_t items = groups + scalar.size();
    std::vector<char> ok(items, 1);
    const int used = useful_threads(threads, items, static_cast<double>(n) * static_cast<double>(size()));
    // A core for each item's helper thread (the served steps' filler of a recorded open loop).
    const bool spare_core = static_cast<std::size_t>(threads) >= 2 * items;
    parallel_items(items, used, interrupt, [&](std::size_t item, const InterruptCheck& check) {
        if (item < groups) {
            // The group keeps its volumes' state and totals in its own (aligned) arrays while it
            // steps and writes them back at the end.
            const std::size_t g = item * lanes;
            const std::span<const detail::LockstepVolume> members(open.data() + g, std::min(lanes, open.size() - g));
            detail::LockstepGroup group(members, dt_s_, r.t0_s);
            in_chunks(n, lanes, check, [&group](std::int64_t k0, std::int64_t k1) { group.step(k0, k1); });
            ok[item] = group.finish() ? 1 : 0;
            return;
        }
        // One volume, on copies of its state and totals (no cache line shared with another
        // thread's volume), written back at its end.
        const std::size_t i = scalar[item - groups];
        State state = state_[i];
        VolumeTotals totals;
        // The recorder too is a copy (its interval sums are written in every step), written back.
        std::optional<VolumeRecorder> recorder;
        if (rec != nullptr) recorder.emplace(rec[i]);
        AnyStepper any = make_stepper(params_[i], state, ws[i], dt_s_, r.t0_s, recorder ? &*recorder : nullptr, totals);
        const auto* trace = std::get_if<OpenLoop>(&ws[i]);
        const bool jump = options.jump && (trace == nullptr || has_runs(*trace, n));
        ok[item] = std::visit(
            [n, &check, jump, spare_core](auto& st) {
                if (!jump) {
                    std::optional<detail::ServedFiller> filler;
                    served_filler(st, n, spare_core, filler);
                    const bool input_ok = step_all(st, n, check, filler ? &*filler : nullptr);  // on a copy
                    if (filler) filler->finish();
                    return input_ok;
                }
                in_chunks(n, 1, check, [&st](std::int64_t k0, std::int64_t k1) { step_range_jumping(st, k0, k1); });
                st.flush();
                return st.input_ok();
            },
            any);
        state_[i] = state;
        r.totals[i] = std::move(totals);
        if (recorder) rec[i] = *recorder;
    });
    return std::all_of(ok.begin(), ok.end(), [](char x) { return x != 0; });
}

namespace {

// The coupled loop: every step, each volume offers what its own limits allow, the instance
// scales the offers to fit its budget, then each volume commits. `Steppers` is a vector of one
// stepper type (no dispatch per volume per step) or of variants (mixed workloads).
template <class Steppers>
class Coupled {
public:
    Coupled(Steppers& steppers, const InstanceParams& ip, double io_credits, double bytes_credits, double dt, double t0,
            InstanceTotals& it, InstanceRecorder* out)
        : st_(steppers),
          ip_(ip),
          it_(it),
          out_(out),
          nv_(steppers.size()),
          fair_(ip.share == SharePolicy::fair),
          dt_(dt),
          t0_(t0),
          inv_dt_(1.0 / dt),
          want_cnt_(nv_),
          want_bytes_(nv_),
          share_(nv_),
          g_(nv_),
          bound_(nv_),
          o0_(nv_),
          c0_(nv_),
          dv_(nv_),
          g0_(nv_),
          b0_(nv_),
          hot_{InstanceBucket(ip.baseline_iops, ip.max_iops, ip.io_capacity, ip.io_earn_idle, dt, io_credits),
               InstanceBucket(ip.baseline_bytes_s, ip.max_bytes_s, ip.bytes_capacity, ip.bytes_earn_idle, dt,
                              bytes_credits),
               0.0,
               0.0,
               it.io_cliff_time_s,
               it.bytes_cliff_time_s,
               {},
               {},
               {}} {}

    /// Steps [0, n), asking `interrupt` between chunks (in_chunks), which also bound the jumps.
    void run(std::int64_t n, const InterruptCheck& interrupt, bool jump) {
        in_chunks(n, nv_, interrupt, [&](std::int64_t k0, std::int64_t k1) {
            if (!jump) {
                step_range(k0, k1);
                return;
            }
            for (std::int64_t k = k0; k < k1;) {
                // The stretch in which every volume offers what it offers in step k, looked for
                // every scan_every steps.
                std::int64_t e = k1;
                for (std::size_t i = 0; i < nv_ && e - k >= min_run; ++i) {
                    e = apply(st_[i], [&](auto& st) { return st.run_end(k, e); });
                }
                if (e - k >= min_run) {
                    run_constant(k, e);
                    k = e;
                    continue;
                }
                const std::int64_t stop = std::min(k1, k + scan_every);
                step_range(k, stop);
                k = stop;
            }
        });
    }

    /// Writes the volumes' and the instance's state and totals back.
    void finish(double& io_credits, double& bytes_credits) {
        for (std::size_t i = 0; i < nv_; ++i) apply(st_[i], [](auto& st) { st.flush(); });
        io_credits = hot_.io.credits;
        bytes_credits = hot_.by.credits;
        it_.served_counted += hot_.served_counted;
        it_.served_bytes += hot_.served_bytes;
        it_.io_cliff_time_s = hot_.io_cliff;
        it_.bytes_cliff_time_s = hot_.bytes_cliff;
        for (int b = 0; b < n_bounds; ++b) it_.steps_bound[b] += hot_.steps_bound[b];
    }

private:
    // The instance's state and running totals: copied into a local for a range of steps
    // (step_range), whose address nothing takes, so that GCC keeps them in registers.
    struct Hot {
        InstanceBucket io, by;
        double served_counted, served_bytes;
        double io_cliff, bytes_cliff;
        CliffTracker io_track, by_track;
        std::int64_t steps_bound[n_bounds];
    };
    struct Decision {
        Bound ib;
        double used_cnt, used_bytes;
    };

    // What every volume asks in step k (offer), and the sums.
    [[gnu::always_inline]] void offers(std::int64_t k, double& sum_cnt, double& sum_bytes) {
        sum_cnt = 0;
        sum_bytes = 0;
        for (std::size_t i = 0; i < nv_; ++i) {
            apply(st_[i], [&](auto& st) {
                st.prefetch(k);
                st.offer(k);
                want_cnt_[i] = st.want_counted();
                want_bytes_[i] = st.want_bytes();
            });
            sum_cnt += want_cnt_[i];
            sum_bytes += want_bytes_[i];
        }
    }
    // The instance's decision on the offers at the buckets' credits: its bound, each volume's
    // share g_ and bound bound_, and what the volumes use of its budgets.
    [[gnu::always_inline]] Decision decide(const Hot& h, double sum_cnt, double sum_bytes) {
        const double cap_io = h.io.cap();
        const double cap_by = h.by.cap();
        const double g_io = sum_cnt > cap_io ? cap_io / sum_cnt : 1.0;
        const double g_by = sum_bytes > cap_by ? cap_by / sum_bytes : 1.0;
        Bound ib = Bound::demand;
        if (g_io < 1.0 || g_by < 1.0) ib = g_io <= g_by ? Bound::instance_iops : Bound::instance_throughput;
        double used_cnt = 0, used_bytes = 0;
        if (ib == Bound::demand || !fair_) {
            const double gg = std::min(g_io, g_by);
            for (std::size_t i = 0; i < nv_; ++i) {
                // A volume that asks nothing is not held back by the instance.
                const bool asks = want_cnt_[i] > 0 || want_bytes_[i] > 0;
                g_[i] = asks ? gg : 1.0;
                bound_[i] = asks ? ib : Bound::demand;
            }
            used_cnt = gg * sum_cnt;
            used_bytes = gg * sum_bytes;
        } else {
            fair_shares(want_cnt_, want_bytes_, cap_io, cap_by, share_);
            for (std::size_t i = 0; i < nv_; ++i) {
                const bool asks = want_cnt_[i] > 0 || want_bytes_[i] > 0;
                g_[i] = asks ? share_[i] : 1.0;
                bound_[i] = asks ? ib : Bound::demand;
                used_cnt += share_[i] * want_cnt_[i];
                used_bytes += share_[i] * want_bytes_[i];
            }
        }
        // Exact at the cap, so the instance bucket empties to exactly zero.
        if (ib == Bound::instance_iops) used_cnt = std::min(used_cnt, cap_io);
        if (ib == Bound::instance_throughput) used_bytes = std::min(used_bytes, cap_by);
        return {ib, used_cnt, used_bytes};
    }

    // One step of every volume and of the instance.
    [[gnu::always_inline]] void step(Hot& h, std::int64_t k) {
        double sum_cnt, sum_bytes;
        offers(k, sum_cnt, sum_bytes);
        const Decision dc = decide(h, sum_cnt, sum_bytes);
        for (std::size_t i = 0; i < nv_; ++i) apply(st_[i], [&](auto& st) { st.commit(k, g_[i], bound_[i]); });
        const double io_before = h.io.credits, by_before = h.by.credits;
        h.io.use(dc.used_cnt);
        h.by.use(dc.used_bytes);
        // As for volumes: a bucket that runs dry in this step, or starts the run dry under demand
        // above baseline, has its cliff here (interpolated inside the step); one that earns again
        // ends its episode.
        const double t = t0_ + static_cast<double>(k) * dt_;
        if (ip_.io_capacity > 0 && h.io_track.changes(h.io.credits)) {
            h.io_track.note(io_before, h.io.credits, std::min(sum_cnt, h.io.max) - h.io.base, t, dt_, it_.io_cliffs,
                            h.io_cliff);
        }
        if (ip_.bytes_capacity > 0 && h.by_track.changes(h.by.credits)) {
            h.by_track.note(by_before, h.by.credits, std::min(sum_bytes, h.by.max) - h.by.base, t, dt_,
                            it_.bytes_cliffs, h.bytes_cliff);
        }
        h.served_counted += dc.used_cnt;
        h.served_bytes += dc.used_bytes;
        h.steps_bound[static_cast<int>(dc.ib)] += 1;
        if (out_ != nullptr) {
            out_->record(k, {{dc.used_cnt * inv_dt_, dc.used_bytes * inv_dt_ * (1.0 / units::MB)},
                             0.0,
                             {h.io.pct(), h.by.pct()},
                             static_cast<std::uint8_t>(dc.ib)});
        }
    }
    void step_range(std::int64_t k0, std::int64_t k1) {
        Hot h = hot_;
        for (std::int64_t k = k0; k < k1; ++k) step(h, k);
        hot_ = h;
    }

    // Jumps (RunOptions::jump): in a stretch where every volume offers what it offered in step
    // k, step k is steady when no volume has a backlog before or after it (each as in
    // Stepper::jump_steady, with the share the instance gives it) and the instance's buckets
    // keep their credits or move them by a constant amount, unclamped and without a cliff. Then
    // the whole state is linear in the steps (each volume's credits, both instance buckets), and
    // every branch of the joint step (the instance's caps min(max, base + credits) and its
    // bound, each volume's own thresholds) is a threshold on one of them that changes at most
    // once along the stretch: the steps with step k's outcome are a prefix, found by galloping
    // and bisection on offers/decide/outcome at the predicted state (no rule restated), and
    // jumped to two steps short of its end, as for one volume.
    static bool bucket_step(const InstanceBucket& b, double used, double& d) {
        d = 0;
        if (b.capacity <= 0) return true;
        const double raw = b.raw_after(used);
        if (!b.unclamped(raw)) return false;
        d = raw - b.credits;
        return true;
    }
    std::int64_t try_jump(std::int64_t k, std::int64_t avail) {
        for (std::size_t i = 0; i < nv_; ++i) {
            if (apply(st_[i], [](auto& st) { return st.has_backlog(); })) return 0;
        }
        Hot& h = hot_;
        double sum_cnt, sum_bytes;
        offers(k, sum_cnt, sum_bytes);
        const Decision dc0 = decide(h, sum_cnt, sum_bytes);
        bool ok = true;
        bool fixed = true;
        for (std::size_t i = 0; i < nv_ && ok; ++i) {
            apply(st_[i], [&](auto& st) {
                o0_[i] = st.outcome(k, g_[i], bound_[i]);
                c0_[i] = st.credits();
                ok = st.steady(o0_[i], c0_[i], dv_[i]);
            });
            g0_[i] = g_[i];
            b0_[i] = bound_[i];
            fixed &= dv_[i] == 0;
        }
        if (!ok) return 0;
        // The instance's buckets: a fixed point (full, or empty at its baseline) or linear.
        const double io0 = h.io.credits, by0 = h.by.credits;
        double d_io = 0, d_by = 0;
        const bool io_fixed = h.io.capacity <= 0 || (h.io.after(dc0.used_cnt) == io0 && !h.io_track.changes(io0));
        const bool by_fixed = h.by.capacity <= 0 || (h.by.after(dc0.used_bytes) == by0 && !h.by_track.changes(by0));
        if (!io_fixed && (!bucket_step(h.io, dc0.used_cnt, d_io) || h.io_track.changes(io0 + d_io))) return 0;
        if (!by_fixed && (!bucket_step(h.by, dc0.used_bytes, d_by) || h.by_track.changes(by0 + d_by))) return 0;
        fixed &= d_io == 0 && d_by == 0;
        std::int64_t m = avail;
        if (!fixed) {
            auto same = [&](std::int64_t j) {
                const auto jj = static_cast<double>(j);
                for (std::size_t i = 0; i < nv_; ++i) {
                    apply(st_[i], [&](auto& st) { st.set_credits(c0_[i] + jj * dv_[i]); });
                }
                h.io.credits = io0 + jj * d_io;
                h.by.credits = by0 + jj * d_by;
                double sc, sb;
                offers(k, sc, sb);
                const Decision dc = decide(h, sc, sb);
                if (dc.ib != dc0.ib || dc.used_cnt != dc0.used_cnt || dc.used_bytes != dc0.used_bytes) return false;
                if (d_io != 0 && !h.io.unclamped(h.io.raw_after(dc.used_cnt))) return false;
                if (d_by != 0 && !h.by.unclamped(h.by.raw_after(dc.used_bytes))) return false;
                for (std::size_t i = 0; i < nv_; ++i) {
                    if (g_[i] != g0_[i] || bound_[i] != b0_[i]) return false;
                    const bool same_i = apply(st_[i], [&](auto& st) {
                        return st.same_step(o0_[i], st.outcome(k, g_[i], bound_[i]), c0_[i], dv_[i]);
                    });
                    if (!same_i) return false;
                }
                return true;
            };
            m = jump_length(avail, same);
            for (std::size_t i = 0; i < nv_; ++i) apply(st_[i], [&](auto& st) { st.set_credits(c0_[i]); });
            h.io.credits = io0;
            h.by.credits = by0;
            if (m == 0) return 0;
        }
        for (std::size_t i = 0; i < nv_; ++i) {
            apply(st_[i], [&](auto& st) { st.apply_steady(k, m, o0_[i], c0_[i], dv_[i], g0_[i]); });
        }
        const auto mm = static_cast<double>(m);
        if (d_io != 0) h.io.credits = io0 + mm * d_io;
        if (d_by != 0) h.by.credits = by0 + mm * d_by;
        h.served_counted += mm * dc0.used_cnt;
        h.served_bytes += mm * dc0.used_bytes;
        h.steps_bound[static_cast<int>(dc0.ib)] += m;
        if (out_ != nullptr) {
            // Levels as InstanceBucket::pct (100 without a bucket), which stay put without one.
            auto pct = [](const InstanceBucket& b, double c) {
                return b.capacity > 0 ? c / b.capacity * 100.0 : 100.0;
            };
            auto slope = [](const InstanceBucket& b, double d) {
                return b.capacity > 0 ? d / b.capacity * 100.0 : 0.0;
            };
            out_->record_constant(k, m,
                                  {{dc0.used_cnt * inv_dt_, dc0.used_bytes * inv_dt_ * (1.0 / units::MB)},
                                   0.0,
                                   {pct(h.io, io0 + d_io), pct(h.by, by0 + d_by)},
                                   static_cast<std::uint8_t>(dc0.ib)},
                                  {slope(h.io, d_io), slope(h.by, d_by)});
        }
        return m;
    }
    // Steps [k, end) of a stretch in which every volume offers what it offers in step k: jumps
    // where they apply, steps 1, 2, 4, ... between failed tries (as Stepper::run_constant).
    void run_constant(std::int64_t k, std::int64_t end) {
        std::int64_t backoff = 1;
        while (k < end) {
            const std::int64_t m = end - k >= min_jump ? try_jump(k, end - k) : 0;
            if (m > 0) {
                k += m;
                backoff = 1;
                continue;
            }
            const std::int64_t stop = std::min(end, k + backoff);
            step_range(k, stop);
            k = stop;
            backoff = std::min(backoff * 2, max_backoff);
        }
    }

    Steppers& st_;
    const InstanceParams& ip_;
    InstanceTotals& it_;
    InstanceRecorder* out_;
    std::size_t nv_;
    bool fair_;
    double dt_, t0_, inv_dt_;
    std::vector<double> want_cnt_, want_bytes_, share_, g_;
    std::vector<Bound> bound_;
    // A jump's probe: each volume's outcome, credits, change per step, share and bound at step k.
    std::vector<StepOutcome> o0_;
    std::vector<double> c0_, dv_, g0_;
    std::vector<Bound> b0_;
    Hot hot_;
};

template <class Steppers>
void coupled_loop(Steppers& steppers, const InstanceParams& ip, double& io_credits, double& bytes_credits,
                  std::int64_t n, double dt, double t0, InstanceTotals& it, InstanceRecorder* out,
                  const InterruptCheck& interrupt, bool jump) {
    Coupled<Steppers> c(steppers, ip, io_credits, bytes_credits, dt, t0, it, out);
    c.run(n, interrupt, jump);
    c.finish(io_credits, bytes_credits);
}

// The steppers as one concrete type when every workload has the same kind.
template <class S>
bool try_homogeneous(std::vector<AnyStepper>& any, const InstanceParams& ip, double& io_c, double& by_c, std::int64_t n,
                     double dt, double t0, InstanceTotals& it, InstanceRecorder* out, const InterruptCheck& interrupt,
                     bool jump, bool& ok) {
    for (const auto& a : any) {
        if (!std::holds_alternative<Stepper<S>>(a)) return false;
    }
    std::vector<Stepper<S>> typed;
    typed.reserve(any.size());
    for (auto& a : any) typed.push_back(std::get<Stepper<S>>(a));
    coupled_loop(typed, ip, io_c, by_c, n, dt, t0, it, out, interrupt, jump);
    ok = true;
    for (const auto& st : typed) ok &= st.input_ok();
    return true;
}

}  // namespace

bool Simulation::run_shared(const std::vector<Workload>& ws, std::int64_t n, RunResult& r, VolumeRecorder* rec,
                            InstanceRecorder* irec, const InterruptCheck& interrupt, bool jump) {
    const InstanceParams& ip = *instance_;
    const std::size_t nv = params_.size();
    std::vector<AnyStepper> steppers;
    steppers.reserve(nv);
    for (std::size_t i = 0; i < nv; ++i) {
        steppers.push_back(
            make_stepper(params_[i], state_[i], ws[i], dt_s_, r.t0_s, rec != nullptr ? &rec[i] : nullptr, r.totals[i]));
    }
    InstanceTotals& it = r.instance_totals;
    InstanceRecorder* out = irec;
    bool ok = true;
    if (!try_homogeneous<OpenSource>(steppers, ip, inst_io_credits_, inst_bytes_credits_, n, dt_s_, r.t0_s, it, out,
                                     interrupt, jump, ok) &&
        !try_homogeneous<ClosedSource>(steppers, ip, inst_io_credits_, inst_bytes_credits_, n, dt_s_, r.t0_s, it, out,
                                       interrupt, jump, ok)) {
        coupled_loop(steppers, ip, inst_io_credits_, inst_bytes_credits_, n, dt_s_, r.t0_s, it, out, interrupt, jump);
        for (auto& st : steppers) ok &= std::visit([](auto& x) { return x.input_ok(); }, st);
    }
    it.io_credits_end = inst_io_credits_;
    it.bytes_credits_end = inst_bytes_credits_;
    return ok;
}

std::size_t Simulation::checked(std::size_t i) const {
    if (i >= params_.size()) {
        throw std::out_of_range(fmt::format("volume index {} is out of range: the simulation has {} volume{} (0 to {})",
                                            i, params_.size(), params_.size() == 1 ? "" : "s", params_.size() - 1));
    }
    return i;
}

void Simulation::check_limits(std::int64_t n_steps, const Recording* recording, const RunLimits& limits) const {
    if (limits.max_volume_steps < 0) {
        throw ConfigError(fmt::format("max_volume_steps={} must be >= 0", limits.max_volume_steps));
    }
    if (limits.max_memory_bytes < 0) {
        throw ConfigError(fmt::format("max_memory_bytes={} must be >= 0", limits.max_memory_bytes));
    }
    // In double: n_steps x volumes may not fit in 64 bits.
    const double nv = static_cast<double>(size());
    const double work = static_cast<double>(n_steps) * nv;
    if (work > static_cast<double>(limits.max_volume_steps)) {
        throw LimitError(fmt::format(
            "n_steps={} x {} volume{} = {:.4g} volume-steps exceeds max_volume_steps={:.4g} per run (at 50-100 M "
            "volume-steps per second that is {:.3g} to {:.3g} s of CPU): split it into shorter runs on the same "
            "Simulation (state carries over), use a coarser dt, or raise max_volume_steps",
            n_steps, size(), size() == 1 ? "" : "s", work, static_cast<double>(limits.max_volume_steps), work / 1e8,
            work / 5e7));
    }
    if (recording == nullptr) return;
    // What the engine allocates: the chosen series without a caller buffer, per recorded value.
    double per_value = has_instance() ? static_cast<double>(recording->allocated_bytes_per_value(-1, true)) : 0.0;
    for (std::size_t i = 0; i < size(); ++i) {
        per_value += static_cast<double>(recording->allocated_bytes_per_value(static_cast<std::ptrdiff_t>(i), false));
    }
    const double values = static_cast<double>(recording->intervals(n_steps));
    const double bytes = values * per_value;
    if (bytes > static_cast<double>(limits.max_memory_bytes)) {
        const std::string per = recording->every == 1 ? fmt::format("{:g} per step", per_value)
                                                      : fmt::format("{:g} per value, one value every {} steps",
                                                                    per_value, recording->every);
        throw LimitError(fmt::format(
            "recording n_steps={} for {} volume{}{} takes {:.4g} bytes ({}), above max_memory_bytes={:.4g}: "
            "pass record=False for totals only, record fewer series or every so many steps, use a coarser dt, "
            "split the run, or raise max_memory_bytes",
            n_steps, size(), size() == 1 ? "" : "s", has_instance() ? " and the instance" : "", bytes, per,
            static_cast<double>(limits.max_memory_bytes)));
    }
}

RunResult Simulation::run(const std::vector<Workload>& workloads, std::int64_t n_steps, bool record,
                          const RunLimits& limits, const InterruptCheck& interrupt, const RunOptions& options) {
    const int threads = resolve_threads(options);
    if (workloads.size() != params_.size()) {
        throw ConfigError(fmt::format("workloads has {} entries but the simulation has {} volumes", workloads.size(),
                                      params_.size()));
    }
    if (n_steps < 0) throw ConfigError(fmt::format("n_steps={} must be >= 0", n_steps));
    const Recording& rc = options.recording;
    if (record) validate_recording(rc, params_.size());
    check_limits(n_steps, record ? &rc : nullptr, limits);
    for (std::size_t i = 0; i < workloads.size(); ++i) {
        try {
            validate_workload(workloads[i], n_steps, /*check_values=*/false);
            if (const auto* ph = std::get_if<PhasedClosedLoop>(&workloads[i])) {
                // The same bound as a closed loop's, in every step.
                const double st = service_time_s(params_[i], ph->loop);
                for (std::size_t k = 0; k < ph->in_flight.size(); ++k) {
                    const double ops_per_step = ph->in_flight[k] / (st + ph->think_time_s[k]) * dt_s_;
                    if (!(ops_per_step <= max_demand_per_step)) {
                        throw ConfigError(fmt::format(
                            "in_flight[{}]={} offers {:.4g} I/Os per step, above the {:g} per step the engine "
                            "accepts (max_demand_per_step)",
                            k, ph->in_flight[k], ops_per_step, max_demand_per_step));
                    }
                }
            }
            if (const auto* c = std::get_if<ClosedLoop>(&workloads[i])) {
                // The bound a trace has per step, so that totals stay finite (not NaN).
                const double ops_per_step = offered_iops(params_[i], *c) * dt_s_;
                if (!(ops_per_step <= max_demand_per_step)) {
                    throw ConfigError(fmt::format(
                        "in_flight={} offers {:.4g} I/Os per step (in_flight / (service time {:g} s + think time "
                        "{:g} s) x dt {:g} s), above the {:g} per step the engine accepts (max_demand_per_step)",
                        c->in_flight, ops_per_step, service_time_s(params_[i], *c), c->think_time_s, dt_s_,
                        max_demand_per_step));
                }
            }
        } catch (const ConfigError& e) {
            throw WorkloadError(i, e.what(), workloads.size() > 1);
        }
    }
    RunResult r;
    r.t0_s = time_s();
    r.dt_s = dt_s_;
    r.n_steps = n_steps;
    r.totals.resize(params_.size());
    r.has_instance = has_instance();
    r.record_every = rc.every;
    std::vector<VolumeRecorder> recorders;
    std::optional<InstanceRecorder> irec;
    if (record) {
        r.series.resize(params_.size());
        recorders.reserve(params_.size());
        for (std::size_t i = 0; i < params_.size(); ++i) {
            prepare_series(r.series[i], rc, n_steps,
                           rc.volume_out.empty() ? std::array<void*, n_volume_fields>{} : rc.volume_out[i]);
            recorders.push_back(make_recorder(r.series[i], rc));
        }
        if (has_instance()) {
            prepare_series(r.instance_series, rc, n_steps);
            irec.emplace(make_recorder(r.instance_series, rc));
        }
    }
    VolumeRecorder* rec = record ? recorders.data() : nullptr;
    // Trace values are checked inside the step loop (no extra pass over long traces). If one is
    // bad, the run is undone and the first offender reported, as if checked up front. An
    // interrupted run is undone the same way.
    const std::vector<State> saved = state_;
    const double saved_io = inst_io_credits_, saved_bytes = inst_bytes_credits_;
    auto undo = [&] {
        state_ = saved;
        inst_io_credits_ = saved_io;
        inst_bytes_credits_ = saved_bytes;
    };
    bool ok = false;
    try {
        ok = has_instance() ? run_shared(workloads, n_steps, r, rec, irec ? &*irec : nullptr, interrupt, options.jump)
                            : run_independent(workloads, n_steps, r, rec, interrupt, threads, options);
    } catch (...) {
        undo();
        throw;
    }
    if (!ok) {
        undo();
        for (std::size_t i = 0; i < workloads.size(); ++i) {
            try {
                validate_workload(workloads[i], n_steps);
            } catch (const ConfigError& e) {
                throw WorkloadError(i, e.what(), workloads.size() > 1);
            }
        }
        throw ConfigError("invalid trace values");  // unreachable: validate_workload found them
    }
    for (auto& x : recorders) x.finish();  // the last, partial interval
    if (irec) irec->finish();
    for (std::size_t i = 0; i < params_.size(); ++i) {
        r.totals[i].backlog_ops = state_[i].backlog_ops;
        r.totals[i].backlog_bytes = state_[i].backlog_bytes;
        r.totals[i].credits_end = state_[i].credits;
    }
    step_ += n_steps;
    return r;
}

std::vector<FleetOutcome> run_many(std::span<const FleetItem> items, const RunLimits& limits,
                                   const InterruptCheck& interrupt, const RunOptions& options) {
    const int threads = resolve_threads(options);
    std::unordered_set<const Simulation*> seen;
    for (std::size_t k = 0; k < items.size(); ++k) {
        const FleetItem& it = items[k];
        if (it.sim == nullptr || it.workloads == nullptr) {
            throw ConfigError(fmt::format("items[{}] has no {}", k, it.sim == nullptr ? "Simulation" : "workloads"));
        }
        if (!seen.insert(it.sim).second) {
            throw ConfigError(fmt::format(
                "items[{}] runs a Simulation that an earlier item runs too: each item needs its own Simulation", k));
        }
    }
    // What to restore if the batch is abandoned: each item's run undoes itself, but the items
    // already done would keep their new state.
    std::vector<Simulation> saved;
    saved.reserve(items.size());
    for (const FleetItem& it : items) saved.push_back(*it.sim);
    std::vector<FleetOutcome> out(items.size());
    try {
        RunOptions pooled = options;
        pooled.threads = threads;
        const std::vector<std::size_t> rest = FleetPools::run(items, out, limits, interrupt, pooled);
        double work = 0;
        for (const std::size_t k : rest) {
            work += static_cast<double>(std::max<std::int64_t>(items[k].n_steps, 0)) *
                    static_cast<double>(items[k].sim->size());
        }
        RunOptions one = options;  // each Simulation in one thread, with the other options
        one.threads = 1;
        parallel_items(rest.size(), useful_threads(threads, rest.size(), work), interrupt,
                       [&](std::size_t j, const InterruptCheck& check) {
                           const std::size_t k = rest[j];
                           const FleetItem& it = items[k];
                           try {
                               RunOptions o = one;
                               o.recording.every = it.every;
                               out[k].result = it.sim->run(*it.workloads, it.n_steps, it.record, limits, check, o);
                           } catch (const WorkloadError& e) {
                               out[k].error = e.reason();
                               out[k].workload = static_cast<std::ptrdiff_t>(e.workload());
                           } catch (const ConfigError& e) {
                               out[k].error = e.what();
                           }
                       });
    } catch (...) {
        for (std::size_t k = 0; k < items.size(); ++k) *items[k].sim = saved[k];
        throw;
    }
    return out;
}

}  // namespace ebssim
