#pragma once
/// \file stepper.hpp
/// One volume's step (the scalar stepper): Stepper<Source> offers what the volume's limits allow
/// (offer), an instance may scale it, and commit applies it; outcome() works out a step without
/// applying it, for the jumps (jumps.hpp, their definitions). make_stepper builds the stepper of
/// a workload (sources.hpp). Private: the step loops (independent.cpp, coupled.cpp) use it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <variant>

#include "cliffs.hpp"
#include "ebssim/bound.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/totals.hpp"
#include "ebssim/units.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
#include "mixing.hpp"
#include "recorders.hpp"
#include "served.hpp"
#include "sources.hpp"
#include "step.hpp"

namespace ebssim::detail {

inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

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
    double overshoot_iops_s = 0, overshoot_bytes_s = 0;  // saved at the end of the step (with overshoot)
    double rate;                                         // completions per second
    double latency;                                      // NaN when nothing completed
};

// Jumps (Stepper::run_constant): stretches shorter than this are stepped; a linear jump stops
// this many steps short of the first step whose outcome differs, which is left to stepping.
inline constexpr std::int64_t min_jump = 4;
inline constexpr std::int64_t jump_margin = 2;
// Steps between two looks for a run of equal values in a trace, and the shortest run worth a
// probe: one comparison per scan_every steps is all a noisy trace pays.
inline constexpr std::int64_t scan_every = 16;
inline constexpr std::int64_t min_run = 8;
// After a failed probe, step 1, 2, 4, ... up to this many steps before the next one.
inline constexpr std::int64_t max_backoff = 64;
// The served steps' kernel (served.hpp): a stretch of served steps shorter than this makes the loop wait before
// the next look, up to served_max_backoff steps.
inline constexpr std::int64_t served_min_stretch = 16;
inline constexpr std::int64_t served_max_backoff = 1024;

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
template <class Source, bool Over = false>
class Stepper {
public:
    Stepper(const VolumeParams& p, VolumeState& s, OvershootState& over, Source src, double dt, double t0,
            VolumeRecorder* out, VolumeTotals& tot)
        : p_(&p),
          home_(&s),
          s_(s),
          src_(src),
          out_(out),
          tot_(&tot),
          dt_(dt),
          t0_(t0),
          lim_(StepLimits::of(p, dt)),
          inv_dt_(1.0 / dt),
          inv_transfer_(1.0 / p.transfer_bytes_s) {
        if constexpr (Over) {
            ov_.inv_burst_cap = 1.0 / lim_.burst_cap;
            ov_.inv_tput_hi = 1.0 / lim_.tput_hi;
            ov_.inv_tput_lo = 1.0 / lim_.tput_lo;
            ov_.depth = p.overshoot_s;
            ov_.home = &over;
            ov_.saved = over;
        } else {
            (void)over;
        }
        if constexpr (std::is_same_v<Source, OpenSource>) served_ok_ = !(src.max_in_flight < inf) && served_kernel();
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
        pool_ = pool_of(s_.credits, lim_.earned);
        Caps<ScalarOps> caps;
        if constexpr (Over) {
            caps = overshoot_caps();
        } else {
            caps = limits_at<ScalarOps>(s_.credits, pool_, lim_.burst_cap, lim_.tput_hi, lim_.tput_lo);
        }
        cap_cnt_ = caps.counted;
        const Throttle t = throttle(av_cnt_, av_bytes_, cap_cnt_, caps.bytes);
        f_ = t.f;
        bound_ = t.bound;
        if constexpr (!Source::closed) {
            if (src_.bounded() && av_ops_ > 0) {
                const double cap_ops = in_flight_cap(src_.in_flight_bound(k) * dt_, service_time(av_ops_, av_bytes_));
                if (cap_ops < f_ * av_ops_) {
                    f_ = cap_ops / av_ops_;
                    bound_ = Bound::max_in_flight;
                }
            }
        }
    }
    [[nodiscard]] double want_counted() const noexcept {
        return served_counted<ScalarOps>(bound_ == Bound::volume_iops, cap_cnt_, f_, av_cnt_);
    }
    [[nodiscard]] double want_bytes() const noexcept { return f_ * av_bytes_; }
    /// Whether the volume overshoots (VolumeParams::overshoot_s > 0): the stepper's template flag.
    [[nodiscard]] static constexpr bool overshoots() noexcept { return Over; }
    /// The share of offer()'s step that the volume's limits allow at their rates, without the
    /// seconds saved for overshoot (1 without overshoot): what an instance serves first, before
    /// any volume's overshoot (Coupled::decide).
    /// The offer at the rates is kept for hold_at_base.
    [[nodiscard]] double base_share() noexcept {
        if constexpr (Over) {
            const Caps<ScalarOps> base =
                limits_at<ScalarOps>(s_.credits, pool_, lim_.burst_cap, lim_.tput_hi, lim_.tput_lo);
            const Throttle t = throttle(av_cnt_, av_bytes_, base.counted, base.bytes);
            if (t.f < f_) {
                ov_.base_f = t.f;
                ov_.base_bound = t.bound;
                ov_.base_cap = base.counted;
            } else {
                ov_.base_f = f_;
                ov_.base_bound = bound_;
                ov_.base_cap = cap_cnt_;
            }
            return f_ > 0 ? ov_.base_f / f_ : 1.0;
        } else {
            return 1.0;
        }
    }
    /// Whether commit() and outcome() take the offer at the volume's rates (base_share, `at_base`)
    /// or the whole offer, with what the seconds saved add: the instance's choice (Coupled::decide,
    /// which sets it for every volume in every step; a volume alone never has it set).
    void hold_at_base(bool at_base) noexcept {
        if constexpr (Over) {
            ov_.at_base = at_base;
        } else {
            (void)at_base;
        }
    }
    void prefetch(std::int64_t k) const noexcept { src_.prefetch(k); }
    /// False when some step of an open-loop trace was invalid (NaN, negative, ...).
    [[nodiscard]] bool input_ok() const noexcept { return input_ok_; }

    /// What serving the fraction g (<= 1) of what offer() allowed does in step k; g < 1 means
    /// the instance bound. Changes nothing: the jumps apply it m times at once (jumps.hpp), and
    /// the coupled loop's jumps probe with it. commit() is the same step as updates: both take
    /// every formula from step.hpp and the shared parts from share() and latency(), and differ
    /// only in where the results go. (commit() applying this struct, the one step with two sinks
    /// that issue 20 asked for, slowed the closed loop by 6-8 % and the piecewise loop by 13 %
    /// under GCC 12, which kept the struct in memory: docs/performance.md.) The jump-vs-step tests
    /// (tests/cpp/test_jump.cpp, tests/python/test_jump.py, hundreds of random configurations)
    /// fail if the two differ.
    [[gnu::always_inline]] [[nodiscard]] StepOutcome outcome(std::int64_t k, double g,
                                                             Bound instance_bound) const noexcept {
        StepOutcome o;
        share(g, instance_bound, o.f, o.bound, o.served_cnt);
        o.served_ops = o.f * av_ops_;
        o.served_bytes = o.f * av_bytes_;
        if constexpr (Source::closed) {
            o.backlog_ops = closed_backlog(s_.backlog_ops, o.f);
            o.backlog_bytes = closed_backlog(s_.backlog_bytes, o.f);
            o.backlog_counted = closed_backlog(s_.backlog_counted, o.f);
            o.demanded_ops = o.f * a_.ops;
            o.demanded_bytes = o.f * a_.bytes;
        } else {
            o.backlog_ops = open_backlog(av_ops_, o.served_ops);
            o.backlog_bytes = open_backlog(av_bytes_, o.served_bytes);
            o.backlog_counted = open_backlog(av_cnt_, o.served_cnt);
            o.demanded_ops = a_.ops;
            o.demanded_bytes = a_.bytes;
        }
        o.raw_credits = pool_ - o.served_cnt;
        o.credits = lim_.bucket ? bucket_after<ScalarOps>(pool_, o.served_cnt, lim_.capacity) : s_.credits;
        if constexpr (Over) {
            o.overshoot_iops_s = ov_.saved.iops_s;
            o.overshoot_bytes_s = ov_.saved.bytes_s;
            overshoot_step(o.bound, o.served_cnt, o.served_bytes, o.overshoot_iops_s, o.overshoot_bytes_s);
        }
        o.rate = o.served_ops * inv_dt_;
        o.latency = latency(k, o.rate, mean_waiting(s_.backlog_ops, o.backlog_ops));
        return o;
    }

    /// Serve the fraction g (<= 1) of what offer() allowed; g < 1 means the instance bound:
    /// outcome()'s step, applied.
    [[gnu::always_inline]] void commit(std::int64_t k, double g, Bound instance_bound) noexcept {
        double f, served_cnt;
        Bound bound;
        share(g, instance_bound, f, bound, served_cnt);
        const double served_ops = f * av_ops_;
        const double served_bytes = f * av_bytes_;
        const double prev_b_ops = s_.backlog_ops;
        if constexpr (Source::closed) {
            s_.backlog_ops = closed_backlog(s_.backlog_ops, f);
            s_.backlog_bytes = closed_backlog(s_.backlog_bytes, f);
            s_.backlog_counted = closed_backlog(s_.backlog_counted, f);
            acc_.demanded_ops += f * a_.ops;
            acc_.demanded_bytes += f * a_.bytes;
        } else {
            s_.backlog_ops = open_backlog(av_ops_, served_ops);
            s_.backlog_bytes = open_backlog(av_bytes_, served_bytes);
            s_.backlog_counted = open_backlog(av_cnt_, served_cnt);
            acc_.demanded_ops += a_.ops;
            acc_.demanded_bytes += a_.bytes;
        }
        if constexpr (Over) {
            overshoot_step(bound, served_cnt, served_bytes, ov_.saved.iops_s, ov_.saved.bytes_s);
        }
        if (lim_.bucket) {
            const double before = s_.credits;
            const double c = bucket_after<ScalarOps>(pool_, served_cnt, lim_.capacity);
            s_.credits = c;
            if (cliffs_.changes(c)) note_cliff(k, before, c, g);
        }
        const double rate = served_ops * inv_dt_;
        const double lat = latency(k, rate, mean_waiting(prev_b_ops, s_.backlog_ops));
        if (rate > 0) acc_.latency_ops_s += lat * served_ops;

        prev_instance_bound_ = g < 1.0;
        prev_served_cnt_ = served_cnt;
        acc_.served_ops += served_ops;
        acc_.served_bytes += served_bytes;
        acc_.served_counted += served_cnt;
        acc_.steps_bound[static_cast<int>(bound)] += 1;

        if (out_ != nullptr) {
            const VolumeRecorder::Step v{{rate, served_cnt * inv_dt_, served_bytes * inv_dt_ * (1.0 / units::MiB)},
                                         lat,
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
            return served_ok_ && s_.backlog_ops == 0 && s_.backlog_bytes == 0 && s_.backlog_counted == 0 &&
                   overshoot_full();
        } else {
            return false;
        }
    }

    /// The served steps' kernel (served.hpp) on this stepper's state, from step k.
    [[nodiscard]] ServedRun served() const noexcept requires(std::is_same_v<Source, OpenSource>) {
        ServedRun r;
        r.in.ops = src_.ops;
        r.in.bytes = src_.bytes;
        r.in.count = src_.count;
        r.in.own_service_time_s = src_.service_time_s;
        r.in.latency_s = src_.latency_s;
        r.in.inv_transfer = inv_transfer_;
        r.in.inv_dt = inv_dt_;
        r.lim = lim_;
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
    void served_done(const ServedRun& r) noexcept {
        s_.credits = r.credits;
        static_cast<RunningSums&>(acc_) = r.sums;
        acc_.steps_bound[static_cast<int>(Bound::demand)] += r.taken;
        if (r.taken > 0) {
            prev_instance_bound_ = false;
            prev_served_cnt_ = r.last_counted;
        }
    }

    /// Writes the state and the totals accumulated since the last flush to where they live.
    /// Every step loop calls it when it is done with the stepper.
    void flush() noexcept {
        *home_ = s_;
        if constexpr (Over) *ov_.home = ov_.saved;
        tot_->demanded_ops += acc_.demanded_ops;
        tot_->demanded_bytes += acc_.demanded_bytes;
        tot_->served_ops += acc_.served_ops;
        tot_->served_bytes += acc_.served_bytes;
        tot_->served_counted += acc_.served_counted;
        tot_->latency_ops_s += acc_.latency_ops_s;
        for (int b = 0; b < n_bounds; ++b) tot_->steps_bound[b] += acc_.steps_bound[b];
        acc_ = Totals{};
    }

    /// The end of the stretch of constant offers that contains step k, at most k_max.
    [[nodiscard]] std::int64_t run_end(std::int64_t k, std::int64_t k_max) noexcept { return src_.run_end(k, k_max); }
    /// True when step k + 1 offers what step k offers (sources that compare their input).
    [[nodiscard]] bool same_next(std::int64_t k) const noexcept requires(!Source::runs_known) {
        return src_.same_next(k);
    }

    [[gnu::noinline]] void run_constant(std::int64_t k, std::int64_t end) noexcept;

    // For the coupled loop's jumps (coupled_loop), which probe every volume of an instance
    // together with the conditions jump_steady uses for one.
    [[nodiscard]] double credits() const noexcept { return s_.credits; }
    void set_credits(double c) noexcept { s_.credits = c; }
    /// Whether outcome o leaves the seconds saved for overshoot as they are (always, without
    /// overshoot): a condition of every jump, which applies one outcome to many steps.
    [[nodiscard]] bool keeps_overshoot(const StepOutcome& o) const noexcept {
        if constexpr (!Over) {
            (void)o;
            return true;
        } else {
            return o.overshoot_iops_s == ov_.saved.iops_s && o.overshoot_bytes_s == ov_.saved.bytes_s;
        }
    }
    [[nodiscard]] bool has_backlog() const noexcept {
        return s_.backlog_ops != 0 || s_.backlog_bytes != 0 || s_.backlog_counted != 0;
    }
    [[nodiscard]] bool steady(const StepOutcome& o, double c0, double& d) const noexcept;
    [[nodiscard]] bool credit_step(const StepOutcome& o, double c0, double& d) const noexcept;
    [[nodiscard]] bool same_step(const StepOutcome& o, const StepOutcome& q, double c0, double d) const noexcept;
    void apply_steady(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d, double g) noexcept;

private:
    std::int64_t jump_steady(std::int64_t k, std::int64_t avail) noexcept;

    std::int64_t jump_backlog(std::int64_t k, std::int64_t avail) noexcept;

    std::int64_t jump_mixed(std::int64_t k, std::int64_t avail) noexcept;

    void apply_run(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d,
                   bool instance_bound = false) noexcept;

    void record_run(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d) noexcept;
    void add_run(std::int64_t m, const StepOutcome& o, bool instance_bound) noexcept;

private:
    /// The share of offer()'s step that is served when the instance grants the fraction g (<= 1)
    /// of it: f, the bound (the instance's when g < 1) and the counted I/Os (exactly the cap when
    /// the IOPS limit binds alone, so the bucket empties to exactly zero).
    [[gnu::always_inline]] void share(double g, Bound instance_bound, double& f, Bound& bound,
                                      double& served_cnt) const noexcept {
        if constexpr (Over) {
            if (ov_.at_base) {  // the instance shared the offer at the volume's rates (hold_at_base)
                f = ov_.base_f;
                bound = ov_.base_bound;
                const double want = served_counted<ScalarOps>(bound == Bound::volume_iops, ov_.base_cap, f, av_cnt_);
                if (g < 1.0) {
                    f *= g;
                    bound = instance_bound;
                }
                served_cnt = g < 1.0 ? g * want : want;
                return;
            }
        }
        f = f_;
        bound = bound_;
        if (g < 1.0) {
            f *= g;
            bound = instance_bound;
            served_cnt = g * want_counted();
        } else {
            served_cnt = want_counted();
        }
    }

    /// The mean latency of step k's I/Os at `rate` completions per second with `waiting` I/Os
    /// waiting on average (NaN when nothing completes in an open loop). Little's law: mean latency
    /// = mean outstanding I/Os / completion rate; for an open loop with max_in_flight the
    /// outstanding I/Os include those held in the application (latency counts from arrival); for
    /// a closed loop, over the whole cycle (latency + think time) of each user.
    [[gnu::always_inline]] [[nodiscard]] double latency(std::int64_t k, double rate, double waiting) const noexcept {
        if constexpr (Source::closed) {
            return closed_loop_latency_s(src_.in_flight(k) + waiting, rate, src_.service_time_s, src_.think_time_s(k));
        } else {
            (void)k;
            // The service time ahead of the test (a pure value, as before step.hpp): inside it, GCC
            // 12 gave the scalar loop 2 more instructions a step (docs/performance.md, issue-20 gate).
            const double st = service_time(av_ops_, av_bytes_);
            return rate > 0 ? open_latency<ScalarOps>(rate, st, waiting) : nan;
        }
    }

    /// The caps of offer() with overshoot: each rate limit extended by the seconds of it saved
    /// (overshoot_extra); the credits still bound the counted I/Os of a volume with a bucket, and
    /// a volume without one has no pool to bound them.
    [[nodiscard]] Caps<ScalarOps> overshoot_caps() noexcept {
        // (None saved extends by exactly 0: the branches skip the products, not change a bit.)
        double burst = lim_.burst_cap, hi = lim_.tput_hi, lo = lim_.tput_lo;
        if (ov_.saved.iops_s != 0) burst += overshoot_extra(lim_.burst_cap, ov_.saved.iops_s, inv_dt_);
        if (ov_.saved.bytes_s != 0) {
            hi += overshoot_extra(lim_.tput_hi, ov_.saved.bytes_s, inv_dt_);
            lo += overshoot_extra(lim_.tput_lo, ov_.saved.bytes_s, inv_dt_);
        }
        return limits_at<ScalarOps>(s_.credits, lim_.bucket ? pool_ : inf, burst, hi, lo);
    }
    /// The seconds saved after a step that served served_cnt counted I/Os and served_bytes bytes
    /// and was held by `bound` (overshoot_after on each limit). Called before the step changes
    /// the credits (whose level chose the throughput cap), with
    /// the seconds saved at offer(). The common steps are told apart first and change nothing: a
    /// full bucket within its limit, an empty one at exactly the IOPS cap (overshoot_after gives
    /// them the same values).
    [[gnu::always_inline]] void overshoot_step(Bound bound, double served_cnt, double served_bytes, double& iops_s,
                                               double& bytes_s) const noexcept {
        const double depth = ov_.depth;
        const bool full_within = iops_s == depth && within_limit(served_cnt, lim_.burst_cap);
        if (!full_within && !(iops_s == 0 && served_cnt == lim_.burst_cap)) {
            // Spent: the IOPS limit held the step at its extended cap (not the credits', and not
            // at the rates an instance held it to, hold_at_base).
            const double burst =
                iops_s != 0 ? lim_.burst_cap + overshoot_extra(lim_.burst_cap, iops_s, inv_dt_) : lim_.burst_cap;
            const bool spent = !ov_.at_base && bound == Bound::volume_iops && cap_cnt_ == burst;
            iops_s =
                overshoot_after<ScalarOps>(iops_s, served_cnt, lim_.burst_cap, ov_.inv_burst_cap, dt_, depth, spent);
        }
        const bool hi_now = s_.credits > 0;  // limits_at's choice of the throughput cap
        const double bytes_cap = hi_now ? lim_.tput_hi : lim_.tput_lo;
        if (!(bytes_s == depth && within_limit(served_bytes, bytes_cap))) {
            bytes_s =
                overshoot_after<ScalarOps>(bytes_s, served_bytes, bytes_cap, hi_now ? ov_.inv_tput_hi : ov_.inv_tput_lo,
                                           dt_, depth, !ov_.at_base && bound == Bound::volume_throughput);
        }
    }
    /// Whether both limits have their whole overshoot saved (always, without overshoot): then a
    /// step within the limits keeps it so, and the served steps' kernel, which knows nothing of it,
    /// may take such steps.
    [[nodiscard]] bool overshoot_full() const noexcept {
        if constexpr (Over) {
            return ov_.saved.iops_s == ov_.depth && ov_.saved.bytes_s == ov_.depth;
        } else {
            return true;
        }
    }

    /// A cliff episode begins or ends in step k (credits before -> c; the instance's share g).
    [[gnu::always_inline]] void note_cliff(std::int64_t k, double before, double c, double g) noexcept {
        // The bucket drained at the rate the demand asked for while credits last (the
        // throughput cap with credits).
        double wanted = credit_drain(av_cnt_, av_bytes_, lim_.burst_cap, lim_.tput_hi) * g;
        // Behind an instance that held the volume back last step, its credits drained at the
        // share the instance allowed, not at what the volume alone would ask.
        if (prev_instance_bound_) wanted = std::min(wanted, prev_served_cnt_);
        cliffs_.note(before, c, wanted - lim_.earned, t0_ + static_cast<double>(k) * dt_, dt_, tot_->cliffs,
                     tot_->cliff_time_s);
    }

    // Unloaded service time of the I/Os in a step: a closed loop's own (always set), an open
    // loop's when it gives one, else the volume's model at the mean size of the I/Os available.
    [[nodiscard]] double service_time(double ops, double bytes) const noexcept {
        if constexpr (Source::closed) {
            return src_.service_time_s;
        } else {
            if (!std::isnan(src_.service_time_s)) return src_.service_time_s;
            return model_service_time<ScalarOps>(src_.latency_s, ops, bytes, inv_transfer_);
        }
    }

    const VolumeParams* p_;
    // The volume's state and the run's totals are worked on in the stepper itself (s_, acc_)
    // and written to where they live (*home_, *tot_) by flush(): a stepper that is a local of the
    // step loop then keeps them in registers instead of a store and a load per field and step.
    VolumeState* home_;
    VolumeState s_;
    struct Totals : RunningSums {
        std::int64_t steps_bound[n_bounds] = {};
    };
    Totals acc_;
    Source src_;
    VolumeRecorder* out_;
    VolumeRecorder::Sink sink_{};  // out_'s, when it records directly (a copy kept in registers)
    bool direct_ = false;
    VolumeTotals* tot_;
    double dt_, t0_;
    StepLimits lim_;  // the per-step limits (step.hpp)
    double inv_dt_, inv_transfer_;
    bool served_ok_ = false;  // the served steps' kernel applies (can_serve)
    bool input_ok_ = true;
    bool prev_instance_bound_ = false;
    double prev_served_cnt_ = 0;
    CliffTracker cliffs_;
    // Scratch between offer() and commit().
    Offer a_{};
    double av_ops_ = 0, av_bytes_ = 0, av_cnt_ = 0, pool_ = 0, cap_cnt_ = 0, f_ = 1;
    // With overshoot only (none of it in a stepper without): the seconds saved and where they
    // live, the depth, the caps' inverses, and the offer at the rates that an instance may hold
    // the step to (base_share, hold_at_base).
    struct OvershootScratch {
        OvershootState* home = nullptr;  // where the seconds saved live (written by flush)
        OvershootState saved;            // worked on here, as s_
        double depth = 0, inv_burst_cap = 0, inv_tput_hi = 0, inv_tput_lo = 0;
        // The offer at the rates (base_share) and whether the instance holds the step to it.
        double base_f = 1, base_cap = 0;
        Bound base_bound = Bound::demand;
        bool at_base = false;
    };
    struct NoOvershoot {};
    [[no_unique_address]] std::conditional_t<Over, OvershootScratch, NoOvershoot> ov_;
    Bound bound_ = Bound::demand;
};

// Each source with and without overshoot (VolumeParams::overshoot_s): a volume without it steps
// in a loop that has none of its arithmetic (a runtime test of it cost the closed loop 43 % in
// the step-loop benchmarks: docs/performance.md).
using AnyStepper = std::variant<Stepper<ClosedSource>, Stepper<OpenSource>, Stepper<IdleSource>, Stepper<PhasedSource>,
                                Stepper<PiecewiseSource>, Stepper<StepBoundSource>, Stepper<ClosedSource, true>,
                                Stepper<OpenSource, true>, Stepper<IdleSource, true>, Stepper<PhasedSource, true>,
                                Stepper<PiecewiseSource, true>, Stepper<StepBoundSource, true>>;

/// The stepper of source `src`, with overshoot or without as the volume has it.
template <class Source>
AnyStepper stepper_of(const VolumeParams& p, VolumeState& s, OvershootState& over, const Source& src, double dt,
                      double t0, VolumeRecorder* out, VolumeTotals& tot) {
    if (p.overshoots()) return Stepper<Source, true>(p, s, over, src, dt, t0, out, tot);
    return Stepper<Source>(p, s, over, src, dt, t0, out, tot);
}

inline AnyStepper make_stepper(const VolumeParams& p, VolumeState& s, OvershootState& over, const Workload& w,
                               double dt, double t0, VolumeRecorder* out, VolumeTotals& tot) {
    if (const auto* c = std::get_if<ClosedLoop>(&w)) {
        // The closed-loop rules of workload.hpp, shared with closed_loop_rate (burst.hpp).
        const double ops = offered_iops(p, *c) * dt;
        return stepper_of(p, s, over,
                          ClosedSource{{ops, ops * c->io_bytes, ops * counted_per_io(p, *c), true},
                                       c->in_flight,
                                       service_time_s(p, *c),
                                       c->think_time_s},
                          dt, t0, out, tot);
    }
    if (const auto* ph = std::get_if<PhasedClosedLoop>(&w)) {
        return stepper_of(p, s, over,
                          PhasedSource{ph->in_flight.data(), ph->think_time_s.data(), service_time_s(p, ph->loop),
                                       ph->loop.io_bytes, counted_per_io(p, ph->loop), dt},
                          dt, t0, out, tot);
    }
    if (const auto* o = std::get_if<OpenLoop>(&w)) {
        if (!o->max_in_flight_steps.empty()) {
            return stepper_of(p, s, over,
                              StepBoundSource{{o->ops.data(), o->bytes.data(), IoCounting(p, o->pattern),
                                               o->service_time_s, o->max_in_flight, p.latency_at(o->read_fraction)},
                                              o->max_in_flight_steps.data()},
                              dt, t0, out, tot);
        }
        return stepper_of(p, s, over,
                          OpenSource{o->ops.data(), o->bytes.data(), IoCounting(p, o->pattern), o->service_time_s,
                                     o->max_in_flight, p.latency_at(o->read_fraction)},
                          dt, t0, out, tot);
    }
    if (const auto* pw = std::get_if<PiecewiseOpenLoop>(&w)) {
        return stepper_of(p, s, over,
                          PiecewiseSource{pw->change_steps.data(), pw->ops.data(), pw->bytes.data(),
                                          pw->change_steps.size(), IoCounting(p, pw->pattern), pw->service_time_s,
                                          pw->max_in_flight, p.latency_at(pw->read_fraction)},
                          dt, t0, out, tot);
    }
    IdleSource idle;
    idle.latency_s = p.latency_at(0.5);
    return stepper_of(p, s, over, idle, dt, t0, out, tot);
}

}  // namespace ebssim::detail

// The jumps' definitions (Stepper::run_constant and the closed forms it takes).
#include "jumps.hpp"  // IWYU pragma: export
