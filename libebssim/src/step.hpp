#pragma once
/// \file step.hpp
/// The step's arithmetic, once (private). One volume's step is: the limits at its credit level
/// (limits_at: the counted-I/O cap and the byte cap), the share of what is available that they
/// let through (the limit rule: limit_share and iops_binds, composed by throttle() for one value
/// and throttle_over() for lanes), the application's bound on outstanding I/Os
/// (in_flight_cap), what is served (served_counted), the backlog after (open_backlog,
/// closed_backlog), the bucket after (bucket_after), the service time (model_service_time,
/// transfer_service_time) and Little's-law latency (open_latency; a closed loop's is
/// closed_loop_latency_s, latency.hpp). Each is a small pure function over an ops type `Ops`
/// (Ops::D the values, Ops::M the conditions, and lt, le, sel, min, max, div_where, mand, mor,
/// andnot on them), instantiated with ScalarOps by the scalar stepper (stepper.hpp), its jumps,
/// the served steps' kernel (served.cpp) and the closed forms (burst.cpp), and with the lockstep
/// kernel's vector Ops per instruction set (lockstep.cpp). The drivers keep only their control
/// flow: which steps to take, in what order, what to record; none restates a formula. Each
/// formula is written so that scalar and vector instantiations round alike, operation for
/// operation (no fused multiply-add: -ffp-contract=off), which the bit-identity tests check.
///
/// The per-step limits of a volume (StepLimits) are built in one place, StepLimits::of.

#include <type_traits>

#include "ebssim/bound.hpp"
#include "ebssim/volume.hpp"

// The functions below take and return the lockstep kernel's vectors too; always inlined, they
// are never called across an interface, so GCC's note that 32- and 64-byte vectors pass
// differently with and without AVX concerns none.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ebssim::detail {

/// A volume's limits per step of dt seconds. Without a bucket credits stay 0, burst_cap is the
/// baseline and tput_hi is tput_lo, so the same expressions give the provisioned caps.
struct StepLimits {
    double earned = 0;     ///< credits earned per step (the baseline I/Os)
    double burst_cap = 0;  ///< counted I/Os per step at most, with credits
    double tput_hi = 0;    ///< bytes per step while the bucket holds credits
    double tput_lo = 0;    ///< bytes per step once it is empty
    double capacity = 0;   ///< the bucket's capacity (credits)
    bool bucket = false;   ///< whether the volume has a credit bucket

    [[nodiscard]] static StepLimits of(const VolumeParams& p, double dt) noexcept {
        return {p.baseline_iops * dt,     p.burst_iops * dt, p.tput_burst_bytes_s * dt,
                p.tput_base_bytes_s * dt, p.credit_capacity, p.has_bucket()};
    }
};

/// The ops of one value (the scalar stepper's): the same names as the lockstep kernel's vector
/// Ops (lockstep.cpp), with the same select and comparison forms.
struct ScalarOps {
    using D = double;
    using M = bool;
    [[gnu::always_inline]] static M lt(D a, D b) noexcept { return a < b; }
    [[gnu::always_inline]] static M le(D a, D b) noexcept { return a <= b; }
    [[gnu::always_inline]] static M mand(M a, M b) noexcept { return a && b; }
    [[gnu::always_inline]] static M mor(M a, M b) noexcept { return a || b; }
    [[gnu::always_inline]] static M andnot(M a, M b) noexcept { return a && !b; }  // a and not b
    [[gnu::always_inline]] static D sel(M m, D a, D b) noexcept { return m ? a : b; }
    [[gnu::always_inline]] static D min(D a, D b) noexcept { return a < b ? a : b; }
    [[gnu::always_inline]] static D max(D a, D b) noexcept { return a > b ? a : b; }
    [[gnu::always_inline]] static D div_where(M m, D a, D b, D otherwise) noexcept { return m ? a / b : otherwise; }
};

/// The rounding margin of the limit rule: a limit binds when what is asked exceeds it by more
/// than 1e-12 of it, and the IOPS limit binds when its fraction is within 1e-12 of the
/// throughput limit's. Demand that meets a limit exactly (a backlog draining at the cap, 256 KiB
/// I/Os on io1/io2, whose throughput cap is 256 KiB x IOPS, binding both limits at once) lands a
/// rounding error either side of it from step to step; without the margin the bound would flip
/// at random, a step would leave a backlog of 1e-17 I/Os, and a jump (which predicts the state
/// of a stretch in closed form, a rounding error away from the stepped one) could disagree with
/// stepping on which limit bound. A step may so serve at most 1e-12 more than a cap.
inline constexpr double throttle_tie = 1.0 + 1e-12;

/// Whether `want` exceeds the limit `cap` (by more than the rounding margin, throttle_tie).
[[nodiscard, gnu::always_inline]] inline bool over_limit(double want, double cap) noexcept {
    return want > cap * throttle_tie;
}
/// Whether `want` is within the limit `cap` and its margin: !over_limit, but false for a NaN
/// `want` (the served steps' kernel marks a step it does not take with a NaN).
[[nodiscard, gnu::always_inline]] inline bool within_limit(double want, double cap) noexcept {
    return want <= cap * throttle_tie;
}

/// The limits at a credit level: counted I/Os (what the pool of credits plus what the step
/// earns allows, at most the burst) and bytes (the byte cap falls to the baseline when the
/// bucket is empty: the one home of that rule).
template <class Ops>
struct Caps {
    typename Ops::D counted;
    typename Ops::D bytes;
};
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline Caps<Ops> limits_at(const D& credits, const D& pool, const D& burst_cap,
                                                             const D& tput_hi, const D& tput_lo) noexcept {
    const D zero = D{} * 0.0;
    return {Ops::min(pool, burst_cap), Ops::sel(Ops::lt(zero, credits), tput_hi, tput_lo)};
}
/// The pool of credits a step may spend: the balance plus what the step earns.
template <class D>
[[nodiscard, gnu::always_inline]] inline D pool_of(const D& credits, const D& earned) noexcept {
    return credits + earned;
}

/// The limit rule: f = min(1, cap_counted / want_counted, cap_bytes / want_bytes), each limit
/// taken when over_limit(); whichever binds first wins, a near tie (throttle_tie) going to the
/// IOPS limit. Its parts: limit_share (a limit's quotient where it is over, 1 elsewhere) and
/// iops_binds (which limit binds), composed by throttle() for one value with branches and by
/// throttle_over() for the lockstep kernel's lanes with masks.
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline D limit_share(const typename Ops::M& over, const D& cap,
                                                       const D& want) noexcept {
    return Ops::div_where(over, cap, want, D{} * 0.0 + 1.0);
}
/// Whether the IOPS limit binds, given both limits' shares: it holds the step back (f_cnt < 1)
/// at least as far as the throughput limit does, within the margin (a near tie goes to it).
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline typename Ops::M iops_binds(const D& f_cnt, const D& f_bytes) noexcept {
    if constexpr (std::is_same_v<D, double>) {
        return f_cnt < 1.0 && f_cnt <= f_bytes * throttle_tie;  // one value: the second test only where needed
    } else {
        return Ops::mand(Ops::lt(f_cnt, D{} * 0.0 + 1.0), Ops::le(f_cnt, f_bytes * throttle_tie));
    }
}

/// The limit rule over lanes: `throttled`, some limit is over; `iops`, `tput`: which one binds
/// (neither: f = 1).
template <class Ops>
struct Throttled {
    typename Ops::D f;
    typename Ops::M throttled, iops, tput;
};
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline Throttled<Ops> throttle_over(const D& want_counted, const D& want_bytes,
                                                                      const D& cap_counted,
                                                                      const D& cap_bytes) noexcept {
    using M = typename Ops::M;
    const M over_cnt = Ops::lt(cap_counted * throttle_tie, want_counted);  // over_limit()
    const M over_bytes = Ops::lt(cap_bytes * throttle_tie, want_bytes);
    const M throttled = Ops::mor(over_cnt, over_bytes);
    const D f_cnt = limit_share<Ops>(over_cnt, cap_counted, want_counted);
    const D f_bytes = limit_share<Ops>(over_bytes, cap_bytes, want_bytes);
    const M iops = Ops::mand(throttled, iops_binds<Ops>(f_cnt, f_bytes));
    return {Ops::sel(iops, f_cnt, f_bytes), throttled, iops, Ops::andnot(throttled, iops)};  // f_bytes: 1 if none
}

/// The limit rule of one value, with its bound: the plain comparison first (most steps are
/// within both limits, and so within the margin), then the margin, the shares and the tie, each
/// decided by a branch. (throttle_over<ScalarOps>, the masks' form for one value, cost the scalar
/// loop about 10 instructions a throttled step: GCC 12 packed its flags into a word and unpacked
/// them into the bound; docs/performance.md, the issue-20 gate.)
struct Throttle {
    double f = 1.0;
    Bound bound = Bound::demand;
};
[[nodiscard, gnu::always_inline]] inline Throttle throttle(double want_counted, double want_bytes, double cap_counted,
                                                           double cap_bytes) noexcept {
    if (!(want_counted > cap_counted || want_bytes > cap_bytes)) return {};
    const bool over_cnt = over_limit(want_counted, cap_counted);
    const bool over_bytes = over_limit(want_bytes, cap_bytes);
    if (!(over_cnt || over_bytes)) return {};
    const double f_cnt = limit_share<ScalarOps>(over_cnt, cap_counted, want_counted);
    const double f_bytes = limit_share<ScalarOps>(over_bytes, cap_bytes, want_bytes);
    if (iops_binds<ScalarOps>(f_cnt, f_bytes)) return {f_cnt, Bound::volume_iops};
    return {f_bytes, Bound::volume_throughput};
}

/// The application's bound on outstanding I/Os (an open loop's max_in_flight): at most
/// max_in_flight / st completions per second (Little's law), mif_dt = max_in_flight x dt of them
/// in a step; what is beyond waits in the application.
template <class D>
[[nodiscard, gnu::always_inline]] inline D in_flight_cap(const D& mif_dt, const D& st) noexcept {
    return mif_dt / st;
}

/// The counted I/Os a step serves: exactly the cap when the IOPS limit binds (so that a bucket
/// empties to exactly zero), else the share f of what is available.
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline D served_counted(const typename Ops::M& iops_bound, const D& cap_counted,
                                                          const D& f, const D& available) noexcept {
    if constexpr (std::is_same_v<D, double>) {
        return iops_bound ? cap_counted : f * available;  // one value: the product only where taken
    } else {
        return Ops::sel(iops_bound, cap_counted, f * available);
    }
}

/// An open loop's backlog after the step: what was available and was not served.
template <class D>
[[nodiscard, gnu::always_inline]] inline D open_backlog(const D& available, const D& served) noexcept {
    return available - served;
}
/// A closed loop's backlog after the step: it waits instead of queueing, so only an earlier
/// backlog stays queued, the share f of it served.
template <class D>
[[nodiscard, gnu::always_inline]] inline D closed_backlog(const D& backlog, const D& f) noexcept {
    return backlog * (1.0 - f);
}

/// The bucket after a step that served `counted` from `pool`, clamped to [0, capacity]:
/// c < 0 ? 0 : (c > capacity ? capacity : c). With capacity >= 0 the inner min is < 0 exactly
/// where c is (NaN stays NaN, -0 stays -0), so max(0, min(capacity, c)) is the same value.
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline D bucket_after(const D& pool, const D& counted, const D& capacity) noexcept {
    if constexpr (std::is_same_v<D, double>) {
        // One value: the branches, which keep the clamp off the chain of credits from step to
        // step (a step rarely meets a bound); the minimum and maximum instructions lengthened it,
        // and the served steps' kernel, which runs along that chain, ran slower for it
        // (docs/performance.md, the issue-20 gate).
        const D c = pool - counted;
        return c < 0 ? 0.0 : (c > capacity ? capacity : c);
    } else {
        return Ops::max(D{} * 0.0, Ops::min(capacity, pool - counted));
    }
}

/// Overshoot (docs/model.md, "Overshoot"): each rate limit of a volume (its IOPS cap and its
/// throughput cap) is a token bucket of overshoot_s seconds of the limit, refilled at the limit's
/// rate. `saved` seconds of it let a step of dt serve cap x (1 + saved / dt) instead of cap. What
/// a step of cap `cap` per step extends it by:
template <class D>
[[nodiscard, gnu::always_inline]] inline D overshoot_extra(const D& cap, const D& saved, const D& inv_dt) noexcept {
    return cap * (saved * inv_dt);
}
/// The seconds of a limit saved after a step that used `used` of it (cap per step `cap`, inv_cap
/// = 1 / cap): saved + dt (1 - used / cap), at most `depth`, at least 0; 0 where `spent` (the
/// limit held the step at its extended cap, which spends all). A step within the cap and its
/// rounding margin (within_limit) loses none, and one at the cap within that margin either side
/// (used x throttle_tie >= cap) keeps what it had: so a full bucket stays full to the last bit
/// under demand within the limit, and an empty one stays empty while the limit holds the steps
/// (used / cap is a rounding error away from 1 there).
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline D overshoot_after(const D& saved, const D& used, const D& cap,
                                                           const D& inv_cap, const D& dt, const D& depth,
                                                           const typename Ops::M& spent) noexcept {
    const D zero = D{} * 0.0;
    if constexpr (std::is_same_v<D, double>) {
        // One value: branches, which keep the seconds saved off the chain from step to step where
        // they stay; the same values as the selects below.
        if (spent) return zero;
        if (within_limit(used, cap)) {
            if (saved == depth || cap <= used * throttle_tie) return saved;
            return Ops::min(depth, Ops::max(saved, saved + dt * (1.0 - used * inv_cap)));
        }
        return Ops::max(zero, saved + dt * (1.0 - used * inv_cap));
    } else {
        const D r = saved + dt * (1.0 - used * inv_cap);
        const typename Ops::M within = Ops::le(used, cap * throttle_tie);
        const typename Ops::M at = Ops::le(cap, used * throttle_tie);
        const D kept = Ops::sel(at, saved, Ops::min(depth, Ops::max(saved, r)));
        return Ops::sel(spent, zero, Ops::sel(within, kept, Ops::max(zero, r)));
    }
}

/// The volume's service time of an I/O of mean size `mean_bytes`: its latency plus the transfer.
template <class D>
[[nodiscard, gnu::always_inline]] inline D transfer_service_time(const D& latency_s, const D& mean_bytes,
                                                                 const D& inv_transfer) noexcept {
    return latency_s + mean_bytes * inv_transfer;
}
/// The volume's service time of the I/Os available in a step (ops of them, bytes in all): at
/// their mean size, the latency alone when there are none.
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline D model_service_time(const D& latency_s, const D& ops, const D& bytes,
                                                              const D& inv_transfer) noexcept {
    const D zero = D{} * 0.0;
    const typename Ops::M has_ops = Ops::lt(zero, ops);
    return Ops::sel(has_ops,
                    transfer_service_time(latency_s, Ops::div_where(has_ops, bytes, ops, zero + 1.0), inv_transfer),
                    latency_s);
}

/// The mean backlog of a step: the mean of the backlog before and after it.
template <class D>
[[nodiscard, gnu::always_inline]] inline D mean_waiting(const D& before, const D& after) noexcept {
    return 0.5 * (before + after);
}

/// An open loop's mean latency in a step that completes I/Os (rate > 0 completions per second),
/// Little's law: mean outstanding I/Os (rate x st in service plus `waiting`) over the rate, at
/// least the service time st; st itself when nothing waits (no division needed).
template <class Ops, class D = typename Ops::D>
[[nodiscard, gnu::always_inline]] inline D open_latency(const D& rate, const D& st, const D& waiting) noexcept {
    const D zero = D{} * 0.0;
    const typename Ops::M queued = Ops::mand(Ops::lt(zero, rate), Ops::lt(zero, waiting));
    if constexpr (std::is_same_v<D, double>) {
        // One value: the quotient and the maximum only where something waits (the common step
        // has nothing waiting; ScalarOps::sel would evaluate both arms, 3 instructions a step).
        return queued ? Ops::max((rate * st + waiting) / rate, st) : st;
    } else {
        const D q = Ops::div_where(queued, rate * st + waiting, rate, zero + 1.0);
        return Ops::sel(queued, Ops::max(q, st), st);  // std::max(st, q) = st < q ? q : st
    }
}

}  // namespace ebssim::detail

#pragma GCC diagnostic pop
