#pragma once
/// \file jumps.hpp
/// The scalar stepper's jumps (Stepper<Source>, stepper.hpp, which includes this file at its
/// end): run_constant steps a stretch of equal offers, jumping over what a closed form advances
/// in one go (jump_steady, jump_backlog, jump_mixed), each found with Stepper::outcome at the
/// predicted state, so that no rule of the step is restated here; and the helpers the coupled
/// loop's jumps use (steady, credit_step, same_step, apply_steady).

#include <cmath>
#include <cstdint>

namespace ebssim::detail {

/// Steps [k, end) offer what step k offers and no instance scales them: advance through
/// them, jumping over the steady stretches (jump_steady) and stepping the rest.
template <class Source, bool Over>
void Stepper<Source, Over>::run_constant(std::int64_t k, std::int64_t end) noexcept {
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

/// Whether outcome o of the step at credits c0 (no backlog before it) is steady: it leaves
/// no backlog and either keeps the credits (d = 0: a fixed point) or moves them by d,
/// unclamped, without ending a cliff episode.
template <class Source, bool Over>
bool Stepper<Source, Over>::steady(const StepOutcome& o, double c0, double& d) const noexcept {
    if constexpr (!Source::closed) {
        if (o.f != 1.0) return false;  // part of the arrivals waits: the backlog grows
    }
    return credit_step(o, c0, d);
}

/// Whether outcome o of the step at credits c0 keeps them (d = 0: no bucket, or a fixed point
/// that changes no cliff episode) or moves them by d, unclamped and without ending an episode:
/// the credits of a jump (linear in the steps).
template <class Source, bool Over>
bool Stepper<Source, Over>::credit_step(const StepOutcome& o, double c0, double& d) const noexcept {
    d = 0;
    if (!keeps_overshoot(o)) return false;  // the seconds saved for overshoot change: step it
    if (!lim_.bucket || (o.credits == c0 && !cliffs_.changes(c0))) return true;
    if (!(o.raw_credits > 0 && o.raw_credits < lim_.capacity)) return false;  // clamped: not linear
    if (cliffs_.changes(o.raw_credits)) return false;                         // ends an episode: step it
    d = lim_.earned - o.served_cnt;
    return true;
}

/// Whether q, the outcome of the step at the credits a steady stretch predicts, is the step
/// whose outcome is o (steady from c0 with change d).
template <class Source, bool Over>
bool Stepper<Source, Over>::same_step(const StepOutcome& o, const StepOutcome& q, double c0, double d) const noexcept {
    const bool credits_ok =
        d == 0 ? (!lim_.bucket || q.credits == c0) : (q.raw_credits > 0 && q.raw_credits < lim_.capacity);
    return q.bound == o.bound && q.f == o.f && q.served_cnt == o.served_cnt && q.served_ops == o.served_ops &&
           q.served_bytes == o.served_bytes && credits_ok && keeps_overshoot(q);
}

/// Apply the steady outcome o (share g of the instance) to the m steps from k.
template <class Source, bool Over>
void Stepper<Source, Over>::apply_steady(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d,
                                         double g) noexcept {
    apply_run(k, m, o, c0, d, g < 1.0);
}

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
template <class Source, bool Over>
std::int64_t Stepper<Source, Over>::jump_steady(std::int64_t k, std::int64_t avail) noexcept {
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
template <class Source, bool Over>
std::int64_t Stepper<Source, Over>::jump_backlog(std::int64_t k, std::int64_t avail) noexcept {
    if constexpr (Source::closed) {
        (void)k;
        (void)avail;
        return 0;
    } else {
        if (src_.bounded()) return 0;
        offer(k);
        if (!a_.ok || !(f_ < 1.0) || (bound_ != Bound::volume_iops && bound_ != Bound::volume_throughput)) return 0;
        const double b_ops = s_.backlog_ops;
        const double b_bytes = s_.backlog_bytes;
        const double b_cnt = s_.backlog_counted;
        // The backlog's composition equals the arrivals' (else it converges geometrically).
        constexpr double comp_tol = 1e-12;
        const bool no_arrivals = a_.ops == 0 && a_.bytes == 0 && a_.counted == 0;
        if (!no_arrivals && !(std::abs(b_ops * a_.counted - a_.ops * b_cnt) <= comp_tol * b_ops * a_.counted &&
                              std::abs(b_bytes * a_.counted - a_.bytes * b_cnt) <= comp_tol * b_bytes * a_.counted)) {
            // Another mix: the closed form has no per-step series to record (they are not
            // linear), so a recorded run steps it.
            return out_ == nullptr ? jump_mixed(k, avail) : 0;
        }
        const StepOutcome o = outcome(k, 1.0, Bound::demand);
        if (!(o.rate > 0) || std::isnan(o.latency)) return 0;
        const double c0 = s_.credits;
        const double cap = lim_.capacity;
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
            return q.bound == o.bound && q.f < 1.0 && credits_ok && q.backlog_counted > 0 && keeps_overshoot(q) &&
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
        add_run(m, o, false);
        // sum over j < m of served_ops * (latency + j * d_lat)
        acc_.latency_ops_s += o.served_ops * (mm * o.latency + d_lat * (mm * (mm - 1) * 0.5));
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
template <class Source, bool Over>
std::int64_t Stepper<Source, Over>::jump_mixed(std::int64_t k, std::int64_t avail) noexcept {
    const bool by_cnt = bound_ == Bound::volume_iops;
    if (!by_cnt && lim_.bucket) return 0;
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
    const double cap = lim_.capacity;
    double d = 0;
    if (!credit_step(o, c0, d)) return 0;
    // The backlog after j steps.
    auto state_at = [&](double j, double(&x)[3]) {
        const double bj = B0 + j * delta;
        const double oj = j == 0 ? B0 : old_share(B0, a, delta, j) * bj;
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
        return r.bound == o.bound && r.f < 1.0 && credits_ok && left > 0 && r.rate > 0 && keeps_overshoot(r) &&
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
    const double sum_o = old_sum(B0, a, s, mm);
    const double rho_ops = ax[0] / a;
    const double waiting = rho_ops * (sum_b - sum_o) + x0[0] / B0 * sum_o + 0.5 * (xm[0] - x0[0]);
    const double st_part = std::isnan(src_.service_time_s) ? src_.latency_s * served[0] + served[1] * inv_transfer_
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
template <class Source, bool Over>
void Stepper<Source, Over>::apply_run(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0, double d,
                                      bool instance_bound) noexcept {
    const auto mm = static_cast<double>(m);
    if (lim_.bucket && d != 0) s_.credits = c0 + mm * d;
    s_.backlog_ops = o.backlog_ops;
    s_.backlog_bytes = o.backlog_bytes;
    s_.backlog_counted = o.backlog_counted;
    add_run(m, o, instance_bound);
    if (o.rate > 0) acc_.latency_ops_s += mm * (o.latency * o.served_ops);
    if (out_ != nullptr) record_run(k, m, o, c0, d);
}

/// The sums of m steps that each serve what outcome o serves (all but the latency, which each
/// jump sums its own way), and what the next step needs to know of the last of them.
template <class Source, bool Over>
void Stepper<Source, Over>::add_run(std::int64_t m, const StepOutcome& o, bool instance_bound) noexcept {
    const auto mm = static_cast<double>(m);
    acc_.demanded_ops += mm * o.demanded_ops;
    acc_.demanded_bytes += mm * o.demanded_bytes;
    prev_instance_bound_ = instance_bound;
    prev_served_cnt_ = o.served_cnt;
    acc_.served_ops += mm * o.served_ops;
    acc_.served_bytes += mm * o.served_bytes;
    acc_.served_counted += mm * o.served_cnt;
    acc_.steps_bound[static_cast<int>(o.bound)] += m;
}

/// The recorded outputs of m steps from k that all have outcome o, credits c0 + (j + 1) d
/// at the end of step k + j: the recorder's fills, no per-step work beyond the stores.
template <class Source, bool Over>
void Stepper<Source, Over>::record_run(std::int64_t k, std::int64_t m, const StepOutcome& o, double c0,
                                       double d) noexcept {
    out_->record_constant(k, m,
                          {{o.rate, o.served_cnt * inv_dt_, o.served_bytes * inv_dt_ * (1.0 / units::MiB)},
                           o.latency,
                           {c0 + d, o.backlog_ops},
                           static_cast<std::uint8_t>(o.bound)},
                          {d, 0.0});
}

}  // namespace ebssim::detail
