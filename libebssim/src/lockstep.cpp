// The lockstep kernel (lockstep.hpp): independent open-loop volumes stepped together, one per
// lane of a SIMD vector, branch-free, with the same arithmetic as Stepper<OpenSource> in
// engine.cpp, operation for operation, so that every lane's results equal the scalar loop's to
// the last bit. How each branch of the scalar step becomes a select is noted where it happens;
// the argument as a whole is in docs/design.md ("The lockstep kernel").
//
// This file is compiled with -ffp-contract=off (libebssim/CMakeLists.txt), as is engine.cpp:
// a fused multiply-add rounds once where the scalar loop rounds twice.

#include "lockstep.hpp"

#include <cmath>
#include <cstring>
#include <limits>

// The helpers below take and return vectors; they are inlined into the kernel and never called
// across this file, so GCC's note that 32-byte vectors pass differently with and without AVX
// concerns no interface.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ebssim::detail {

namespace {

constexpr std::size_t W = lockstep_lanes;

// GCC/Clang vector extensions: element-wise IEEE arithmetic on W doubles, compiled to SSE2
// (two 128-bit halves) or AVX2 (one 256-bit register) by the target clones below. A comparison
// gives a mask (all bits set in the lanes where it holds); `m ? a : b` selects per lane.
using D = double __attribute__((vector_size(sizeof(double) * W)));
using M = std::int64_t __attribute__((vector_size(sizeof(std::int64_t) * W)));

template <class V, class A>
[[gnu::always_inline]] inline V load(const A& a) noexcept {
    static_assert(sizeof(V) == sizeof(A));
    V v;
    std::memcpy(&v, &a, sizeof v);
    return v;
}
template <class V, class A>
[[gnu::always_inline]] inline void store(A& a, const V& v) noexcept {
    static_assert(sizeof(V) == sizeof(A));
    std::memcpy(&a, &v, sizeof v);
}
[[gnu::always_inline]] inline bool any(const M& m) noexcept {
    std::int64_t r = 0;
    for (std::size_t l = 0; l < W; ++l) r |= m[l];
    return r != 0;
}

// Rare events, handled one lane at a time by the scalar code, away from the vector loop.

// Random I/Os larger than the counting unit on average split (IoCounting); the vector loop counts
// one operation per I/O and asks here for the lanes where the mean size is above the unit.
[[gnu::cold, gnu::noinline]] void count_split(const LockstepGroup::Data& d, const LaneArray& o, const LaneArray& b,
                                              const LaneMask& split, LaneArray& cnt) noexcept {
    for (std::size_t l = 0; l < W; ++l) {
        if (split[l] != 0) cnt[l] = d.count[l](o[l], b[l]);
    }
}

// A bucket ran dry or earned again in step k (CliffTracker::changes): Stepper::commit's
// episode bookkeeping for the lanes in `change`, with g = 1 (no instance).
[[gnu::cold, gnu::noinline]] void note_cliffs(LockstepGroup::Data& d, std::int64_t k, const LaneArray& before,
                                              const LaneArray& after, const LaneArray& av_cnt,
                                              const LaneArray& av_bytes, const LaneMask& change) {
    for (std::size_t l = 0; l < W; ++l) {
        if (change[l] == 0) continue;
        const double wanted = credit_drain(av_cnt[l], av_bytes[l], d.burst_cap[l], d.tput_hi[l]);
        VolumeTotals& tot = *d.totals[l];
        d.cliffs[l].note(before[l], after[l], wanted - d.earned[l], d.t0 + static_cast<double>(k) * d.dt, d.dt,
                         tot.cliffs, tot.cliff_time_s);
        d.dry[l] = d.cliffs[l].dry() ? -1 : 0;
    }
}

// Steps k0 .. k1 - 1 of every lane. Compiled twice (AVX2 and the x86-64 baseline, SSE2), chosen
// at load time by the CPU; neither has FMA, and -ffp-contract=off forbids contraction anyway.
[[gnu::target_clones("avx2", "default")]] void kernel(LockstepGroup::Data& d, std::int64_t k0, std::int64_t k1) {
    const D zero = {};
    const D one = zero + 1.0;
    const D max_demand = zero + max_demand_per_step;
    const D earned = load<D>(d.earned), burst_cap = load<D>(d.burst_cap), tput_hi = load<D>(d.tput_hi),
            tput_lo = load<D>(d.tput_lo), capacity = load<D>(d.capacity), st_fixed = load<D>(d.st_fixed),
            latency_s = load<D>(d.latency), inv_transfer = load<D>(d.inv_transfer), mif_dt = load<D>(d.mif_dt),
            unit = load<D>(d.unit), merge_min = load<D>(d.merge_min), inv_unit = load<D>(d.inv_unit);
    const M bucket = load<M>(d.bucket), has_st = load<M>(d.has_st), mif_finite = load<M>(d.mif_finite),
            sequential = load<M>(d.sequential);
    const D inv_dt = zero + d.inv_dt;
    const bool any_mif = d.any_mif, any_model_st = d.any_model_st;

    D credits = load<D>(d.credits), b_ops = load<D>(d.backlog_ops), b_bytes = load<D>(d.backlog_bytes),
      b_cnt = load<D>(d.backlog_counted);
    M dry = load<M>(d.dry);
    D demanded_ops = load<D>(d.demanded_ops), demanded_bytes = load<D>(d.demanded_bytes),
      served_ops_sum = load<D>(d.served_ops), served_bytes_sum = load<D>(d.served_bytes),
      served_cnt_sum = load<D>(d.served_counted), latency_ops_s = load<D>(d.latency_ops_s);
    M steps_iops = load<M>(d.steps_iops), steps_tput = load<M>(d.steps_tput), steps_mif = load<M>(d.steps_mif);
    M ok = load<M>(d.ok);
    const double* ops[W];
    const double* bytes[W];
    for (std::size_t l = 0; l < W; ++l) {
        ops[l] = d.ops[l];
        bytes[l] = d.bytes[l];
    }

    for (std::int64_t k = k0; k < k1; ++k) {
        D o, b;
        for (std::size_t l = 0; l < W; ++l) {
            o[l] = ops[l][k];
            b[l] = bytes[l][k];
        }
        // trace_step_ok, per lane.
        ok &= (o >= 0) & (o <= max_demand) & (b >= 0) & (b <= max_demand) & ((o > 0) | (b == 0));

        // IoCounting. Sequential: the same arithmetic as the scalar rule (0/1 factors). Random:
        // one operation per I/O, except where the mean size is above the unit (count_split).
        const M merged = b >= o * merge_min;
        const D seq_cnt = (merged ? one : zero) * (b * inv_unit) + (merged ? zero : one) * o;
        D cnt = sequential ? seq_cnt : o;
        const M split = ~sequential & (b > o * unit);
        if (__builtin_expect(any(split), 0)) {
            alignas(32) LaneArray oa, ba, ca;
            alignas(32) LaneMask sa;
            store(oa, o);
            store(ba, b);
            store(ca, cnt);
            store(sa, split);
            count_split(d, oa, ba, sa, ca);
            cnt = load<D>(ca);
        }

        // Stepper::offer.
        const D av_ops = b_ops + o;
        const D av_bytes = b_bytes + b;
        const D av_cnt = b_cnt + cnt;
        const D pool = credits + earned;
        const D cap_cnt = pool < burst_cap ? pool : burst_cap;  // std::min(burst_cap, pool)
        const D cap_bytes = credits > 0 ? tput_hi : tput_lo;
        // throttle(): both quotients, each by the same division as the scalar rule where it is
        // selected (a denominator of 1 elsewhere keeps the unused lanes finite).
        const M over_cnt = av_cnt > cap_cnt;
        const M over_bytes = av_bytes > cap_bytes;
        const D f_cnt = over_cnt ? cap_cnt / (over_cnt ? av_cnt : one) : one;
        const D f_bytes = over_bytes ? cap_bytes / (over_bytes ? av_bytes : one) : one;
        const M throttled = over_cnt | over_bytes;
        M iops_bound = throttled & (f_cnt < 1.0) & (f_cnt <= f_bytes);
        M tput_bound = throttled & ~iops_bound;
        D f = iops_bound ? f_cnt : f_bytes;  // 1 where nothing binds: f_bytes is then 1

        // Stepper::service_time: the workload's, else the volume's model at the mean size.
        D st = st_fixed;
        if (any_model_st) {
            const M has_ops = av_ops > 0;
            const D st_model = has_ops ? latency_s + av_bytes / (has_ops ? av_ops : one) * inv_transfer : latency_s;
            st = has_st ? st_fixed : st_model;
        }
        // The open loop's max_in_flight (a lane without a finite one is never bound by it).
        M mif_bound = {};
        if (any_mif) {
            const D cap_ops = mif_dt / st;
            mif_bound = mif_finite & (av_ops > 0) & (cap_ops < f * av_ops);
            f = mif_bound ? cap_ops / (mif_bound ? av_ops : one) : f;
            iops_bound &= ~mif_bound;
            tput_bound &= ~mif_bound;
        }

        // Stepper::commit with g = 1 (no instance).
        const D served_cnt = iops_bound ? cap_cnt : f * av_cnt;  // want_counted()
        const D served_ops = f * av_ops;
        const D served_bytes = f * av_bytes;
        const D prev_b_ops = b_ops;
        b_ops = av_ops - served_ops;
        b_bytes = av_bytes - served_bytes;
        b_cnt = av_cnt - served_cnt;
        demanded_ops += o;
        demanded_bytes += b;

        // The bucket: clamped to [0, capacity]; lanes without one keep their credits (0).
        D c = pool - served_cnt;
        c = c < 0 ? zero : (c > capacity ? capacity : c);
        const D before = credits;
        credits = bucket ? c : credits;
        const M change = bucket & ((c <= 0) ^ dry);  // CliffTracker::changes
        if (__builtin_expect(any(change), 0)) {
            alignas(32) LaneArray ba, ca, cnta, bya;
            alignas(32) LaneMask cha;
            store(ba, before);
            store(ca, c);
            store(cnta, av_cnt);
            store(bya, av_bytes);
            store(cha, change);
            store(d.dry, dry);
            note_cliffs(d, k, ba, ca, cnta, bya, cha);
            dry = load<M>(d.dry);
        }

        // Little's law, as in Stepper::commit; where rate is 0 the latency is not added (a 0 is:
        // the sum stays the same, as it is never -0).
        const D rate = served_ops * inv_dt;
        const D waiting = 0.5 * (prev_b_ops + b_ops);
        const D outstanding = rate * st + waiting;
        const M completes = rate > 0;
        const D q = outstanding / (completes ? rate : one);
        const D latency = waiting > 0 ? (st < q ? q : st) : st;  // std::max(st, q)
        latency_ops_s += completes ? latency * served_ops : zero;

        served_ops_sum += served_ops;
        served_bytes_sum += served_bytes;
        served_cnt_sum += served_cnt;
        steps_iops -= iops_bound;  // a mask is -1 where it holds
        steps_tput -= tput_bound;
        steps_mif -= mif_bound;
    }

    store(d.credits, credits);
    store(d.backlog_ops, b_ops);
    store(d.backlog_bytes, b_bytes);
    store(d.backlog_counted, b_cnt);
    store(d.dry, dry);
    store(d.demanded_ops, demanded_ops);
    store(d.demanded_bytes, demanded_bytes);
    store(d.served_ops, served_ops_sum);
    store(d.served_bytes, served_bytes_sum);
    store(d.served_counted, served_cnt_sum);
    store(d.latency_ops_s, latency_ops_s);
    store(d.steps_iops, steps_iops);
    store(d.steps_tput, steps_tput);
    store(d.steps_mif, steps_mif);
    store(d.ok, ok);
}

}  // namespace

LockstepGroup::LockstepGroup(std::span<const LockstepVolume> volumes, double dt, double t0) : used_(volumes.size()) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    d_.dt = dt;
    d_.t0 = t0;
    d_.inv_dt = 1.0 / dt;
    for (std::size_t l = 0; l < W; ++l) {
        // Padding: a copy of the first volume whose state and totals are scratch.
        const bool real = l < used_;
        volumes_[l] = real ? volumes[l] : volumes[0];
        const VolumeParams& p = *volumes_[l].params;
        const OpenLoop& w = *volumes_[l].workload;
        const Simulation::State& s = *volumes_[l].state;
        // As Stepper's constructor and OpenSource (engine.cpp).
        d_.earned[l] = p.baseline_iops * dt;
        d_.burst_cap[l] = p.burst_iops * dt;
        d_.tput_hi[l] = p.tput_burst_bytes_s * dt;
        d_.tput_lo[l] = p.tput_base_bytes_s * dt;
        d_.capacity[l] = p.credit_capacity;
        d_.bucket[l] = p.has_bucket() ? -1 : 0;
        d_.has_st[l] = std::isnan(w.service_time_s) ? 0 : -1;
        d_.st_fixed[l] = std::isnan(w.service_time_s) ? 0.0 : w.service_time_s;
        d_.latency[l] = p.latency_s;
        d_.inv_transfer[l] = 1.0 / p.transfer_bytes_s;
        d_.mif_dt[l] = w.max_in_flight * dt;
        d_.mif_finite[l] = w.max_in_flight < inf ? -1 : 0;
        d_.count[l] = IoCounting(p, w.pattern);
        d_.unit[l] = d_.count[l].unit_bytes;
        d_.merge_min[l] = d_.count[l].merge_min_bytes;
        d_.inv_unit[l] = d_.count[l].inv_unit;
        d_.sequential[l] = d_.count[l].sequential ? -1 : 0;
        d_.credits[l] = s.credits;
        d_.backlog_ops[l] = s.backlog_ops;
        d_.backlog_bytes[l] = s.backlog_bytes;
        d_.backlog_counted[l] = s.backlog_counted;
        d_.ok[l] = -1;
        d_.ops[l] = w.ops.data();
        d_.bytes[l] = w.bytes.data();
        d_.totals[l] = real ? volumes_[l].totals : &pad_totals_[l];
        d_.any_mif |= d_.mif_finite[l] != 0;
        d_.any_model_st |= d_.has_st[l] == 0;
    }
}

void LockstepGroup::step(std::int64_t k0, std::int64_t k1) {
    kernel(d_, k0, k1);
    steps_ += k1 - k0;
}

bool LockstepGroup::finish() {
    bool ok = true;
    for (std::size_t l = 0; l < used_; ++l) {
        Simulation::State& s = *volumes_[l].state;
        s.credits = d_.credits[l];
        s.backlog_ops = d_.backlog_ops[l];
        s.backlog_bytes = d_.backlog_bytes[l];
        s.backlog_counted = d_.backlog_counted[l];
        // The totals start the run at 0, as the scalar loop's do, so adding the lane's sums
        // gives the scalar loop's sums exactly.
        VolumeTotals& t = *volumes_[l].totals;
        t.demanded_ops += d_.demanded_ops[l];
        t.demanded_bytes += d_.demanded_bytes[l];
        t.served_ops += d_.served_ops[l];
        t.served_bytes += d_.served_bytes[l];
        t.served_counted += d_.served_counted[l];
        t.latency_ops_s += d_.latency_ops_s[l];
        const std::int64_t iops = d_.steps_iops[l], tput = d_.steps_tput[l], mif = d_.steps_mif[l];
        t.steps_bound[static_cast<int>(Bound::volume_iops)] += iops;
        t.steps_bound[static_cast<int>(Bound::volume_throughput)] += tput;
        t.steps_bound[static_cast<int>(Bound::max_in_flight)] += mif;
        t.steps_bound[static_cast<int>(Bound::demand)] += steps_ - iops - tput - mif;
        ok &= d_.ok[l] != 0;
    }
    return ok;
}

}  // namespace ebssim::detail
