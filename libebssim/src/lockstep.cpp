// The lockstep kernel (lockstep.hpp): independent open-loop volumes stepped together, one per
// lane of a SIMD vector, branch-free, with the same arithmetic as Stepper<OpenSource> in
// stepper.hpp, operation for operation (both take every formula from step.hpp), so that every
// lane's results equal the scalar loop's to the last bit. How each branch of the scalar step
// becomes a select is noted where it happens; the argument as a whole is in docs/design.md ("The
// lockstep kernel").
//
// This file is compiled with -ffp-contract=off (libebssim/CMakeLists.txt), as is the whole library:
// a fused multiply-add rounds once where the scalar loop rounds twice.

#include "lockstep.hpp"

#include <immintrin.h>

#include <atomic>
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
#define EBSSIM_AVX512 "avx512f,avx512dq,avx512vl"

// Vector g (lanes g * sizeof(T) / 8 ..) of a per-lane array.
template <class T, class A>
[[gnu::always_inline]] inline T load(const A& a, std::size_t g) noexcept {
    T v;
    std::memcpy(&v, reinterpret_cast<const char*>(&a) + g * sizeof v, sizeof v);
    return v;
}
template <class T, class A>
[[gnu::always_inline]] inline void store(A& a, std::size_t g, const T& v) noexcept {
    std::memcpy(reinterpret_cast<char*>(&a) + g * sizeof v, &v, sizeof v);
}

// The operations the step needs on V lanes, per instruction set. Arithmetic is the compiler's
// element-wise IEEE arithmetic on vector types (GCC/Clang vector extensions; __m512d is one);
// comparisons give masks, and sel(m, a, b) is a where m holds, else b.
//
// Blocks of trace values transposed (see VecOps::transpose), for 2 and 4 lanes. (Not members of
// VecOps: GCC 12 sees VecOps<V>::D as a plain double until instantiation and rejects shuffles of
// it. __builtin_shufflevector, not GCC's __builtin_shuffle: clang-tidy parses this file too.)
typedef double D2 __attribute__((vector_size(16)));
typedef double D4 __attribute__((vector_size(32)));
[[gnu::always_inline]] inline void transpose2(const double* const* rows, std::int64_t k, D2* cols) noexcept {
    D2 r0, r1;
    std::memcpy(&r0, rows[0] + k, sizeof r0);
    std::memcpy(&r1, rows[1] + k, sizeof r1);
    cols[0] = __builtin_shufflevector(r0, r1, 0, 2);
    cols[1] = __builtin_shufflevector(r0, r1, 1, 3);
}
[[gnu::always_inline]] inline void transpose4(const double* const* rows, std::int64_t k, D4* cols) noexcept {
    // Halves: h[j][q] = row j's steps 2q, 2q + 1. Rows 0 and 2 side by side, and 1 and 3, then
    // unpacked: 8 128-bit loads (half of them inserts) and 4 unpacks for 4 steps.
    D2 h[4][2];
    for (std::size_t j = 0; j < 4; ++j) {
        std::memcpy(&h[j][0], rows[j] + k, sizeof(D2));
        std::memcpy(&h[j][1], rows[j] + k + 2, sizeof(D2));
    }
    for (std::size_t q = 0; q < 2; ++q) {
        const D4 a = __builtin_shufflevector(h[0][q], h[2][q], 0, 1, 2, 3);  // r0(2q) r0(2q+1) r2(2q) r2(2q+1)
        const D4 b = __builtin_shufflevector(h[1][q], h[3][q], 0, 1, 2, 3);  // the same of rows 1 and 3
        cols[2 * q] = __builtin_shufflevector(a, b, 0, 4, 2, 6);
        cols[2 * q + 1] = __builtin_shufflevector(a, b, 1, 5, 3, 7);
    }
}

// SSE2 (V = 2) and AVX2 (V = 4): vector extensions throughout; a mask is a vector of int64, all
// bits set where it holds.
template <std::size_t V>
struct VecOps {
    static constexpr std::size_t lanes = V;
    // Whether steps() chooses between step()'s branchy and branch-free forms as it goes (see
    // there). With 4 lanes (AVX2) the branchy one paid on the diurnal fleet and cost little on
    // the noisy one (BM_Fleet; docs/performance.md), so it is the only one.
    static constexpr bool adaptive = false;
    typedef double D __attribute__((vector_size(sizeof(double) * V)));
    typedef std::int64_t M __attribute__((vector_size(sizeof(std::int64_t) * V)));
    using I = M;  // int64 lanes: counters, and masks as stored in LaneMask
    [[gnu::always_inline]] static M lt(const D& a, const D& b) noexcept { return a < b; }
    [[gnu::always_inline]] static M le(const D& a, const D& b) noexcept { return a <= b; }
    [[gnu::always_inline]] static M eq(const D& a, const D& b) noexcept { return a == b; }
    [[gnu::always_inline]] static M mand(const M& a, const M& b) noexcept { return a & b; }
    [[gnu::always_inline]] static M mor(const M& a, const M& b) noexcept { return a | b; }
    [[gnu::always_inline]] static M mxor(const M& a, const M& b) noexcept { return a ^ b; }
    [[gnu::always_inline]] static M andnot(const M& a, const M& b) noexcept { return a & ~b; }  // a and not b
    [[gnu::always_inline]] static M none() noexcept { return M{}; }
    [[gnu::always_inline]] static D sel(const M& m, const D& a, const D& b) noexcept { return m ? a : b; }
    // min(a, b) = a < b ? a : b and max(a, b) = a > b ? a : b, as written (not IEEE minNum: NaN
    // and -0 go as the comparison says); the x86 min/max instructions compute exactly this.
    [[gnu::always_inline]] static D min(const D& a, const D& b) noexcept { return a < b ? a : b; }
    [[gnu::always_inline]] static D max(const D& a, const D& b) noexcept { return a > b ? a : b; }
    // a / b where m holds, else `otherwise`; the lanes not selected divide by 1 (no inf or NaN).
    [[gnu::always_inline]] static D div_where(const M& m, const D& a, const D& b, const D& otherwise) noexcept {
        return m ? a / (m ? b : D{} + 1.0) : otherwise;
    }
    [[gnu::always_inline]] static I count(const I& c, const M& m) noexcept { return c - m; }  // + 1 where m
    [[gnu::always_inline]] static M from_lanes(const I& v) noexcept { return v; }
    [[gnu::always_inline]] static I to_lanes(const M& m) noexcept { return m; }
    // The V x V block rows[j][k .. k + V - 1] (V consecutive steps of lane j's trace), transposed:
    // cols[i] holds step k + i of every lane.
    [[gnu::always_inline]] static void transpose(const double* const* rows, std::int64_t k, D* cols) noexcept {
        if constexpr (V == 2) {
            transpose2(rows, k, reinterpret_cast<D2*>(cols));  // D is D2 (GCC sees the size late)
        } else {
            static_assert(V == 4);
            transpose4(rows, k, reinterpret_cast<D4*>(cols));
        }
    }
    // True when some lane is set: the 128-bit parts OR-ed, then one movmskpd (SSE2).
    [[gnu::always_inline]] static bool any(const M& m) noexcept {
        __m128d r;
        std::memcpy(&r, &m, sizeof r);
        for (std::size_t h = 1; h < sizeof(M) / sizeof(__m128d); ++h) {
            __m128d part;
            std::memcpy(&part, reinterpret_cast<const char*>(&m) + h * sizeof part, sizeof part);
            r = _mm_or_pd(r, part);
        }
        return _mm_movemask_pd(r) != 0;
    }
};

// AVX-512 (V = 8): masks are k registers (one bit per lane), selects are masked blends. (GCC 12
// compiles vector-extension comparisons of 512-bit vectors one element at a time, hence the
// intrinsics here.)
struct Avx512Ops {
    static constexpr std::size_t lanes = 8;
    static constexpr bool adaptive = true;
    using D = __m512d;
    using M = __mmask8;
    using I = __m512i;
    [[gnu::target(EBSSIM_AVX512)]] static M lt(const D& a, const D& b) noexcept {
        return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ);
    }
    [[gnu::target(EBSSIM_AVX512)]] static M le(const D& a, const D& b) noexcept {
        return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ);
    }
    [[gnu::target(EBSSIM_AVX512)]] static M eq(const D& a, const D& b) noexcept {
        return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ);
    }
    [[gnu::target(EBSSIM_AVX512)]] static M mand(M a, M b) noexcept { return static_cast<M>(a & b); }
    [[gnu::target(EBSSIM_AVX512)]] static M mor(M a, M b) noexcept { return static_cast<M>(a | b); }
    [[gnu::target(EBSSIM_AVX512)]] static M mxor(M a, M b) noexcept { return static_cast<M>(a ^ b); }
    [[gnu::target(EBSSIM_AVX512)]] static M andnot(M a, M b) noexcept { return static_cast<M>(a & ~b); }
    [[gnu::target(EBSSIM_AVX512)]] static M none() noexcept { return 0; }
    [[gnu::target(EBSSIM_AVX512)]] static D sel(M m, const D& a, const D& b) noexcept {
        return _mm512_mask_blend_pd(m, b, a);
    }
    // a < b ? a : b and a > b ? a : b: vminpd/vmaxpd are defined as exactly these (the second
    // operand when unordered or equal). One instruction instead of a compare into a k register
    // and a blend, which is most of the latency of the loop-carried credit chain. (The maskz
    // forms with every lane set compile to the plain instruction; GCC 12's _mm512_min_pd passes
    // an undefined vector that -Wmaybe-uninitialized flags. The same below.)
    [[gnu::target(EBSSIM_AVX512)]] static D min(const D& a, const D& b) noexcept {
        return _mm512_maskz_min_pd(0xFF, a, b);
    }
    [[gnu::target(EBSSIM_AVX512)]] static D max(const D& a, const D& b) noexcept {
        return _mm512_maskz_max_pd(0xFF, a, b);
    }
    // a / b where m holds, else `otherwise`: a masked division (the other lanes do not divide).
    [[gnu::target(EBSSIM_AVX512)]] static D div_where(M m, const D& a, const D& b, const D& otherwise) noexcept {
        return _mm512_mask_div_pd(otherwise, m, a, b);
    }
    [[gnu::target(EBSSIM_AVX512)]] static I count(const I& c, M m) noexcept {
        return _mm512_mask_sub_epi64(c, m, c, _mm512_set1_epi64(-1));
    }
    [[gnu::target(EBSSIM_AVX512)]] static M from_lanes(const I& v) noexcept { return _mm512_movepi64_mask(v); }
    [[gnu::target(EBSSIM_AVX512)]] static I to_lanes(M m) noexcept { return _mm512_movm_epi64(m); }
    [[gnu::target(EBSSIM_AVX512)]] static bool any(M m) noexcept { return m != 0; }
    // _mm512_shuffle_f64x2(a, b, Imm) (see min above for the maskz form).
    template <int Imm>
    [[gnu::target(EBSSIM_AVX512)]] static D shuffle_quarters(const D& a, const D& b) noexcept {
        return _mm512_maskz_shuffle_f64x2(0xFF, a, b, Imm);
    }
    // The 8 x 8 block rows[j][k .. k + 7], transposed (cols[i]: step k + i of every lane): 8
    // loads and 24 shuffles for 8 steps, where loading each step's 8 values into one vector
    // took 8 loads and 8 inserts per step. rjs below is element s of row j.
    [[gnu::target(EBSSIM_AVX512)]] static void transpose(const double* const* rows, std::int64_t k, D* cols) noexcept {
        D r[8];
        for (std::size_t j = 0; j < 8; ++j) r[j] = _mm512_loadu_pd(rows[j] + k);
        D t[8];
        for (std::size_t j = 0; j < 8; j += 2) {
            t[j] = _mm512_maskz_unpacklo_pd(0xFF, r[j], r[j + 1]);      // rj0 r(j+1)0 rj2 r(j+1)2 ..
            t[j + 1] = _mm512_maskz_unpackhi_pd(0xFF, r[j], r[j + 1]);  // rj1 r(j+1)1 rj3 r(j+1)3 ..
        }
        // 128-bit quarters: 0x88 takes quarters 0 and 2 of each operand, 0xDD quarters 1 and 3.
        const D u0 = shuffle_quarters<0x88>(t[0], t[2]);  // r00 r10 r04 r14 r20 r30 r24 r34
        const D u1 = shuffle_quarters<0xDD>(t[0], t[2]);  // r02 r12 r06 r16 r22 r32 r26 r36
        const D u2 = shuffle_quarters<0x88>(t[1], t[3]);  // r01 .. (columns 1 and 5)
        const D u3 = shuffle_quarters<0xDD>(t[1], t[3]);  // r03 .. (columns 3 and 7)
        const D u4 = shuffle_quarters<0x88>(t[4], t[6]);  // rows 4..7, columns 0 and 4
        const D u5 = shuffle_quarters<0xDD>(t[4], t[6]);
        const D u6 = shuffle_quarters<0x88>(t[5], t[7]);
        const D u7 = shuffle_quarters<0xDD>(t[5], t[7]);
        cols[0] = shuffle_quarters<0x88>(u0, u4);
        cols[4] = shuffle_quarters<0xDD>(u0, u4);
        cols[2] = shuffle_quarters<0x88>(u1, u5);
        cols[6] = shuffle_quarters<0xDD>(u1, u5);
        cols[1] = shuffle_quarters<0x88>(u2, u6);
        cols[5] = shuffle_quarters<0xDD>(u2, u6);
        cols[3] = shuffle_quarters<0x88>(u3, u7);
        cols[7] = shuffle_quarters<0xDD>(u3, u7);
    }
};

// Rare events, handled one lane at a time by the scalar code, away from the vector loop, for the
// lanes first .. first + lanes - 1 of the group (lane j of the arguments is lane first + j).

// Random I/Os larger than the counting unit on average split (IoCounting); the vector loop counts
// one operation per I/O and asks here for the lanes where the mean size is above the unit.
[[gnu::cold, gnu::noinline]] void count_split(const LockstepGroup::Data& d, std::size_t first, std::size_t lanes,
                                              const double* o, const double* b, const std::int64_t* split,
                                              double* cnt) noexcept {
    for (std::size_t j = 0; j < lanes; ++j) {
        if (split[j] != 0) cnt[j] = d.count[first + j](o[j], b[j]);
    }
}

// A bucket ran dry or earned again in step k (CliffTracker::changes): Stepper::commit's
// episode bookkeeping for the lanes in `change`, with g = 1 (no instance).
[[gnu::cold, gnu::noinline]] void note_cliffs(LockstepGroup::Data& d, std::size_t first, std::size_t lanes,
                                              std::int64_t k, const double* before, const double* after,
                                              const double* av_cnt, const double* av_bytes, const std::int64_t* change,
                                              std::int64_t* dry) {
    for (std::size_t j = 0; j < lanes; ++j) {
        if (change[j] == 0) continue;
        const std::size_t l = first + j;
        const double wanted = credit_drain(av_cnt[j], av_bytes[j], d.burst_cap[l], d.tput_hi[l]);
        VolumeTotals& tot = *d.totals[l];
        d.cliffs[l].note(before[j], after[j], wanted - d.earned[l], d.t0 + static_cast<double>(k) * d.dt, d.dt,
                         tot.cliffs, tot.cliff_time_s);
        dry[j] = d.cliffs[l].dry() ? -1 : 0;
    }
}

// V lanes: their limits, state and totals, held in registers (or the stack) through a chunk.
template <class Ops>
struct Lanes {
    static constexpr std::size_t V = Ops::lanes;
    using D = typename Ops::D;
    using M = typename Ops::M;
    using I = typename Ops::I;
    D earned, burst_cap, tput_hi, tput_lo, capacity, st_fixed, latency_s, inv_transfer, mif_dt, unit, merge_min,
        inv_unit;
    M bucket, has_st, mif_finite, sequential;
    D overshoot_s, inv_burst_cap, inv_tput_hi, inv_tput_lo;
    D credits, b_ops, b_bytes, b_cnt, over_iops, over_bytes;
    M dry;
    D demanded_ops, demanded_bytes, served_ops, served_bytes, served_cnt, latency_ops_s;
    I steps_iops, steps_tput, steps_mif;
    M ok;
    const double* ops[V];
    const double* bytes[V];

    static M mask(const LaneMask& a, std::size_t g) noexcept { return Ops::from_lanes(load<I>(a, g)); }
    void load_from(const LockstepGroup::Data& d, std::size_t g) noexcept {
        earned = load<D>(d.earned, g);
        burst_cap = load<D>(d.burst_cap, g);
        tput_hi = load<D>(d.tput_hi, g);
        tput_lo = load<D>(d.tput_lo, g);
        capacity = load<D>(d.capacity, g);
        st_fixed = load<D>(d.st_fixed, g);
        latency_s = load<D>(d.latency, g);
        inv_transfer = load<D>(d.inv_transfer, g);
        mif_dt = load<D>(d.mif_dt, g);
        unit = load<D>(d.unit, g);
        merge_min = load<D>(d.merge_min, g);
        inv_unit = load<D>(d.inv_unit, g);
        bucket = mask(d.bucket, g);
        has_st = mask(d.has_st, g);
        mif_finite = mask(d.mif_finite, g);
        sequential = mask(d.sequential, g);
        overshoot_s = load<D>(d.overshoot_s, g);
        inv_burst_cap = load<D>(d.inv_burst_cap, g);
        inv_tput_hi = load<D>(d.inv_tput_hi, g);
        inv_tput_lo = load<D>(d.inv_tput_lo, g);
        over_iops = load<D>(d.overshoot_iops_s, g);
        over_bytes = load<D>(d.overshoot_bytes_s, g);
        credits = load<D>(d.credits, g);
        b_ops = load<D>(d.backlog_ops, g);
        b_bytes = load<D>(d.backlog_bytes, g);
        b_cnt = load<D>(d.backlog_counted, g);
        dry = mask(d.dry, g);
        demanded_ops = load<D>(d.demanded_ops, g);
        demanded_bytes = load<D>(d.demanded_bytes, g);
        served_ops = load<D>(d.served_ops, g);
        served_bytes = load<D>(d.served_bytes, g);
        served_cnt = load<D>(d.served_counted, g);
        latency_ops_s = load<D>(d.latency_ops_s, g);
        steps_iops = load<I>(d.steps_iops, g);
        steps_tput = load<I>(d.steps_tput, g);
        steps_mif = load<I>(d.steps_mif, g);
        ok = mask(d.ok, g);
        for (std::size_t j = 0; j < V; ++j) {
            ops[j] = d.ops[g * V + j];
            bytes[j] = d.bytes[g * V + j];
        }
    }

    void store_to(LockstepGroup::Data& d, std::size_t g) const noexcept {
        store(d.overshoot_iops_s, g, over_iops);
        store(d.overshoot_bytes_s, g, over_bytes);
        store(d.credits, g, credits);
        store(d.backlog_ops, g, b_ops);
        store(d.backlog_bytes, g, b_bytes);
        store(d.backlog_counted, g, b_cnt);
        store(d.dry, g, Ops::to_lanes(dry));
        store(d.demanded_ops, g, demanded_ops);
        store(d.demanded_bytes, g, demanded_bytes);
        store(d.served_ops, g, served_ops);
        store(d.served_bytes, g, served_bytes);
        store(d.served_counted, g, served_cnt);
        store(d.latency_ops_s, g, latency_ops_s);
        store(d.steps_iops, g, steps_iops);
        store(d.steps_tput, g, steps_tput);
        store(d.steps_mif, g, steps_mif);
        store(d.ok, g, Ops::to_lanes(ok));
    }
};

// Step k of the V lanes of vector g, whose trace values are o and b: Stepper<OpenSource>::offer
// then commit(k, 1, Bound::demand), operation for operation. Seq, ModelSt and Mif say whether
// some lane counts sequential I/O, has its service time from the mean I/O size, has a finite
// max_in_flight: work no lane needs is compiled out. Branchy: skip the divisions no lane needs
// (below). Returns whether some lane needed them (was throttled, or completed and waited).
template <class Ops, bool Seq, bool ModelSt, bool Mif, bool Over, bool Branchy>
inline bool step(Lanes<Ops>& x, LockstepGroup::Data& d, std::size_t g, std::int64_t k, const typename Ops::D& o,
                 const typename Ops::D& b) {
    constexpr std::size_t V = Ops::lanes;
    using D = typename Ops::D;
    using M = typename Ops::M;
    const D zero = D{} * 0.0;
    const D one = zero + 1.0;
    const D max_demand = zero + max_demand_per_step;
    // trace_step_ok, per lane.
    const M ops_ok = Ops::mand(Ops::le(zero, o), Ops::le(o, max_demand));
    const M bytes_ok = Ops::mand(Ops::le(zero, b), Ops::le(b, max_demand));
    const M io_ok = Ops::mor(Ops::lt(zero, o), Ops::eq(b, zero));
    x.ok = Ops::mand(x.ok, Ops::mand(Ops::mand(ops_ok, bytes_ok), io_ok));

    // IoCounting. Sequential: the same arithmetic as the scalar rule (0/1 factors). Random: one
    // operation per I/O, except where the mean size is above the unit (count_split).
    D cnt = o;
    M split = Ops::lt(o * x.unit, b);
    if constexpr (Seq) {
        const M merged = Ops::le(o * x.merge_min, b);
        const D seq_cnt = Ops::sel(merged, one, zero) * (b * x.inv_unit) + Ops::sel(merged, zero, one) * o;
        cnt = Ops::sel(x.sequential, seq_cnt, o);
        split = Ops::andnot(split, x.sequential);
    }
    if (__builtin_expect(Ops::any(split), 0)) {
        alignas(64) double oa[V], ba[V], ca[V];
        alignas(64) std::int64_t sa[V];
        store(oa, 0, o);
        store(ba, 0, b);
        store(ca, 0, cnt);
        store(sa, 0, Ops::to_lanes(split));
        count_split(d, g * V, V, oa, ba, sa, ca);
        cnt = load<D>(ca, 0);
    }

    // Stepper::offer.
    const D av_ops = x.b_ops + o;
    const D av_bytes = x.b_bytes + b;
    const D av_cnt = x.b_cnt + cnt;
    const D pool = pool_of(x.credits, x.earned);
    // Stepper::overshoot_caps where some lane overshoots: each cap extended by the seconds of it
    // saved, and no pool for a volume without a bucket (lanes without overshoot save none: their
    // caps stay as they are, and so does their counted cap, the pool of such a volume being its cap).
    D burst = x.burst_cap;
    D hi = x.tput_hi;
    D lo = x.tput_lo;
    D pool_lim = pool;
    if constexpr (Over) {
        const D inv_dt = zero + d.inv_dt;
        burst = x.burst_cap + overshoot_extra(x.burst_cap, x.over_iops, inv_dt);
        hi = x.tput_hi + overshoot_extra(x.tput_hi, x.over_bytes, inv_dt);
        lo = x.tput_lo + overshoot_extra(x.tput_lo, x.over_bytes, inv_dt);
        pool_lim = Ops::sel(x.bucket, pool, zero + std::numeric_limits<double>::infinity());
    }
    const Caps<Ops> caps = limits_at<Ops>(x.credits, pool_lim, burst, hi, lo);
    const D cap_cnt = caps.counted;
    const D cap_bytes = caps.bytes;
    // throttle(): both quotients, each by the scalar rule's division in the lanes where it
    // applies (div_where), 1 in the others. Where no lane is throttled both are 1 in every lane,
    // and so is f: the branchy form skips two divisions and takes them out of the loop-carried
    // chain (credits and backlog -> f -> what is served -> credits and backlog). It pays where
    // throttling comes in runs of steps (a burst, an empty bucket) and few steps have it.
    // over_limit() is the cap times the rounding margin; what is within the cap itself is within
    // that too, so the calm steps are told apart by the plain comparison and pay nothing for it.
    const M over_any = Ops::mor(Ops::lt(cap_cnt, av_cnt), Ops::lt(cap_bytes, av_bytes));
    M throttled = Ops::none();
    M iops_bound = Ops::none();
    M tput_bound = Ops::none();
    D f = one;
    if (!Branchy || Ops::any(over_any)) {
        const Throttled<Ops> t = throttle_over<Ops>(av_cnt, av_bytes, cap_cnt, cap_bytes);
        throttled = t.throttled;
        iops_bound = t.iops;
        tput_bound = t.tput;
        f = t.f;  // 1 where nothing binds
    }

    // Stepper::service_time: the workload's, else the volume's model at the mean size.
    D st = x.st_fixed;
    if constexpr (ModelSt) {
        st = Ops::sel(x.has_st, x.st_fixed, model_service_time<Ops>(x.latency_s, av_ops, av_bytes, x.inv_transfer));
    }
    // The open loop's max_in_flight (a lane without a finite one is never bound by it).
    if constexpr (Mif) {
        const D cap_ops = in_flight_cap(x.mif_dt, st);
        const M mif_bound = Ops::mand(Ops::mand(x.mif_finite, Ops::lt(zero, av_ops)), Ops::lt(cap_ops, f * av_ops));
        f = Ops::div_where(mif_bound, cap_ops, av_ops, f);
        iops_bound = Ops::andnot(iops_bound, mif_bound);
        tput_bound = Ops::andnot(tput_bound, mif_bound);
        x.steps_mif = Ops::count(x.steps_mif, mif_bound);
    }

    // Stepper::commit with g = 1 (no instance).
    const D served_cnt = served_counted<Ops>(iops_bound, cap_cnt, f, av_cnt);  // want_counted()
    const D served_ops = f * av_ops;
    const D served_bytes = f * av_bytes;
    const D prev_b_ops = x.b_ops;
    x.b_ops = open_backlog(av_ops, served_ops);
    x.b_bytes = open_backlog(av_bytes, served_bytes);
    x.b_cnt = open_backlog(av_cnt, served_cnt);
    x.demanded_ops += o;
    x.demanded_bytes += b;

    // Stepper::overshoot_step, at the credits before the step (which chose the throughput cap).
    if constexpr (Over) {
        const M rate_cap = Ops::eq(cap_cnt, burst);
        const M hi_now = Ops::lt(zero, x.credits);
        const D dt = zero + d.dt;
        x.over_iops = overshoot_after<Ops>(x.over_iops, served_cnt, x.burst_cap, x.inv_burst_cap, dt, x.overshoot_s,
                                           Ops::mand(iops_bound, rate_cap));
        x.over_bytes =
            overshoot_after<Ops>(x.over_bytes, served_bytes, Ops::sel(hi_now, x.tput_hi, x.tput_lo),
                                 Ops::sel(hi_now, x.inv_tput_hi, x.inv_tput_lo), dt, x.overshoot_s, tput_bound);
    }

    // The bucket (bucket_after); lanes without one keep their credits (0).
    const D c = bucket_after<Ops>(pool, served_cnt, x.capacity);
    const D before = x.credits;
    x.credits = Ops::sel(x.bucket, c, x.credits);
    const M change = Ops::mand(x.bucket, Ops::mxor(Ops::le(c, zero), x.dry));  // CliffTracker::changes
    if (__builtin_expect(Ops::any(change), 0)) {
        alignas(64) double ba[V], ca[V], cnta[V], bya[V];
        alignas(64) std::int64_t cha[V], drya[V];
        store(ba, 0, before);
        store(ca, 0, c);
        store(cnta, 0, av_cnt);
        store(bya, 0, av_bytes);
        store(cha, 0, Ops::to_lanes(change));
        store(drya, 0, Ops::to_lanes(x.dry));
        note_cliffs(d, g * V, V, k, ba, ca, cnta, bya, cha, drya);
        x.dry = Ops::from_lanes(load<typename Ops::I>(drya, 0));
    }

    // Little's law, as in Stepper::commit; where rate is 0 the latency is not added (a 0 is: the
    // sum stays the same, as it is never -0).
    // The quotient q = outstanding / rate is needed only where something completes and waits
    // (latency = max(st, q)); where nothing waits the latency is st. In a group where no lane
    // has a backlog, this step or the last, the branch skips the division.
    const D rate = served_ops * d.inv_dt;
    const D waiting = mean_waiting(prev_b_ops, x.b_ops);
    const M completes = Ops::lt(zero, rate);
    const M queued = Ops::mand(completes, Ops::lt(zero, waiting));
    D latency = st;
    if (!Branchy || Ops::any(queued)) latency = open_latency<Ops>(rate, st, waiting);
    x.latency_ops_s += Ops::sel(completes, latency * served_ops, zero);

    x.served_ops += served_ops;
    x.served_bytes += served_bytes;
    x.served_cnt += served_cnt;
    x.steps_iops = Ops::count(x.steps_iops, iops_bound);
    x.steps_tput = Ops::count(x.steps_tput, tput_bound);
    return Ops::any(Ops::mor(throttled, queued));
}

// How far ahead of the step being loaded the kernel prefetches each trace, in steps (64: 512
// bytes, 8 cache lines). The kernel reads 2 x W streams at once (each lane's ops and bytes); the
// hardware prefetchers kept up with some fleets' layouts and not others (BM_Fleet shape:1 waited
// for memory without this, shape:0 did not; any distance from 32 to 256 does as well:
// docs/performance.md, "The lockstep kernel").
constexpr std::int64_t prefetch_ahead = 64;

// Steps k .. k1 - 1 of the G vectors of pass `pass`, with step()'s branches around divisions
// (Branchy) or without; returns the number of steps in which some lane was throttled or had
// something queued (the steps that need those divisions).
template <class Ops, std::size_t G, bool Seq, bool ModelSt, bool Mif, bool Over, bool Branchy>
inline std::int64_t run(Lanes<Ops> (&x)[G], LockstepGroup::Data& d, std::size_t pass, std::int64_t k, std::int64_t k1) {
    constexpr std::size_t V = Ops::lanes;
    using D = typename Ops::D;
    std::int64_t busy = 0;
    // Blocks of V steps: each lane's V trace values loaded as one vector, then transposed.
    for (; k + static_cast<std::int64_t>(V) <= k1; k += static_cast<std::int64_t>(V)) {
        D o[G][V], b[G][V];
        for (std::size_t g = 0; g < G; ++g) {
            for (std::size_t j = 0; j < V; ++j) {
                // Prefetches do not fault: the last ones may point past the traces' ends.
                __builtin_prefetch(x[g].ops[j] + k + prefetch_ahead);
                __builtin_prefetch(x[g].bytes[j] + k + prefetch_ahead);
            }
            Ops::transpose(x[g].ops, k, o[g]);
            Ops::transpose(x[g].bytes, k, b[g]);
        }
        for (std::size_t i = 0; i < V; ++i) {
#pragma GCC unroll 4
            for (std::size_t g = 0; g < G; ++g) {
                busy += step<Ops, Seq, ModelSt, Mif, Over, Branchy>(x[g], d, pass * G + g,
                                                                    k + static_cast<std::int64_t>(i), o[g][i], b[g][i]);
            }
        }
    }
    // The last steps of the chunk one at a time, each step's values gathered lane by lane.
    for (; k < k1; ++k) {
#pragma GCC unroll 4
        for (std::size_t g = 0; g < G; ++g) {
            D o, b;
            for (std::size_t j = 0; j < V; ++j) {
                o[j] = x[g].ops[j][k];
                b[j] = x[g].bytes[j][k];
            }
            busy += step<Ops, Seq, ModelSt, Mif, Over, Branchy>(x[g], d, pass * G + g, k, o, b);
        }
    }
    return busy;
}

// Steps between two choices of the branchy or branch-free step (a multiple of every V).
constexpr std::int64_t adapt_every = 512;

// Steps k0 .. k1 - 1 of every lane, G vectors side by side (G independent dependency chains per
// step, which the core overlaps), in W / (G V) passes. With Ops::adaptive, each stretch of
// adapt_every steps runs the branchy step when fewer than half the steps of the stretch before
// needed the divisions, else the branch-free one. Both give the same results, to the bit. (The
// branchy one paid on a calm trace and cost on fleets with some lane throttled in most steps,
// whose branches mispredict; docs/design.md. The half and the 512 steps are not tuned.)
template <class Ops, std::size_t G, bool Seq, bool ModelSt, bool Mif, bool Over>
inline void steps(LockstepGroup::Data& d, std::int64_t k0, std::int64_t k1) {
    constexpr std::size_t V = Ops::lanes;
    static_assert(W % (G * V) == 0);
    // Passes with no real volume (all padding) are skipped.
    const std::size_t passes = (d.used + G * V - 1) / (G * V);
    for (std::size_t pass = 0; pass < passes; ++pass) {
        Lanes<Ops> x[G];
        for (std::size_t g = 0; g < G; ++g) x[g].load_from(d, pass * G + g);
        if constexpr (Ops::adaptive) {
            bool branchy = d.form == LockstepForm::automatic ? d.branchy : d.form == LockstepForm::branchy;
            for (std::int64_t k = k0; k < k1;) {
                const std::int64_t end = std::min(k1, k + adapt_every);
                const std::int64_t busy = branchy ? run<Ops, G, Seq, ModelSt, Mif, Over, true>(x, d, pass, k, end)
                                                  : run<Ops, G, Seq, ModelSt, Mif, Over, false>(x, d, pass, k, end);
                if (d.form == LockstepForm::automatic) branchy = 2 * busy < end - k;
                k = end;
            }
            d.branchy = branchy;
        } else {
            run<Ops, G, Seq, ModelSt, Mif, Over, true>(x, d, pass, k0, k1);
        }
        for (std::size_t g = 0; g < G; ++g) x[g].store_to(d, pass * G + g);
    }
}

// The variant of `steps` for the group's needs.
template <class Ops, std::size_t G, bool Over>
inline void dispatch_over(LockstepGroup::Data& d, std::int64_t k0, std::int64_t k1) {
    const bool seq = d.any_sequential, model = d.any_model_st, mif = d.any_mif;
    if (!seq && model && !mif) return steps<Ops, G, false, true, false, Over>(d, k0, k1);  // the usual case
    if (seq) {
        if (mif) {
            return model ? steps<Ops, G, true, true, true, Over>(d, k0, k1)
                         : steps<Ops, G, true, false, true, Over>(d, k0, k1);
        }
        return model ? steps<Ops, G, true, true, false, Over>(d, k0, k1)
                     : steps<Ops, G, true, false, false, Over>(d, k0, k1);
    }
    if (mif) {
        return model ? steps<Ops, G, false, true, true, Over>(d, k0, k1)
                     : steps<Ops, G, false, false, true, Over>(d, k0, k1);
    }
    return steps<Ops, G, false, false, false, Over>(d, k0, k1);
}
template <class Ops, std::size_t G>
inline void dispatch(LockstepGroup::Data& d, std::int64_t k0, std::int64_t k1) {
    if (d.any_overshoot) return dispatch_over<Ops, G, true>(d, k0, k1);
    dispatch_over<Ops, G, false>(d, k0, k1);
}

// One compiled kernel per instruction set, everything it calls inlined into it (flatten) and so
// compiled for its instruction set. None contracts to FMA (-ffp-contract=off), so each rounds
// every operation as the scalar loop does.
[[gnu::flatten, gnu::target(EBSSIM_AVX512)]] void kernel_avx512(LockstepGroup::Data& d, std::int64_t k0,
                                                                std::int64_t k1) {
    dispatch<Avx512Ops, 1>(d, k0, k1);
}
[[gnu::flatten, gnu::target("avx2")]] void kernel_avx2(LockstepGroup::Data& d, std::int64_t k0, std::int64_t k1) {
    dispatch<VecOps<4>, 1>(d, k0, k1);
}
[[gnu::flatten]] void kernel_sse2(LockstepGroup::Data& d, std::int64_t k0, std::int64_t k1) {
    dispatch<VecOps<2>, 1>(d, k0, k1);
}

using Kernel = void (*)(LockstepGroup::Data&, std::int64_t, std::int64_t);

std::atomic<LockstepForm> current_form{LockstepForm::automatic};

Kernel kernel_for(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx512: return kernel_avx512;
        case Isa::avx2: return kernel_avx2;
        default: return kernel_sse2;
    }
}

}  // namespace

LockstepGroup::LockstepGroup(std::span<const LockstepVolume> volumes, double dt, double t0) : used_(volumes.size()) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    d_.used = used_;
    d_.dt = dt;
    d_.t0 = t0;
    d_.inv_dt = 1.0 / dt;
    for (std::size_t l = 0; l < W; ++l) {
        // Padding: a copy of the first volume whose state and totals are scratch.
        const bool real = l < used_;
        volumes_[l] = real ? volumes[l] : volumes[0];
        const VolumeParams& p = *volumes_[l].params;
        const OpenLoop& w = *volumes_[l].workload;
        const VolumeState& s = *volumes_[l].state;
        // As Stepper's constructor and OpenSource (stepper.hpp, sources.hpp).
        const StepLimits lim = StepLimits::of(p, dt);
        d_.earned[l] = lim.earned;
        d_.burst_cap[l] = lim.burst_cap;
        d_.tput_hi[l] = lim.tput_hi;
        d_.tput_lo[l] = lim.tput_lo;
        d_.capacity[l] = lim.capacity;
        d_.bucket[l] = lim.bucket ? -1 : 0;
        d_.has_st[l] = std::isnan(w.service_time_s) ? 0 : -1;
        d_.st_fixed[l] = std::isnan(w.service_time_s) ? 0.0 : w.service_time_s;
        d_.latency[l] = p.latency_at(w.read_fraction);
        d_.inv_transfer[l] = 1.0 / p.transfer_bytes_s;
        d_.mif_dt[l] = w.max_in_flight * dt;
        d_.mif_finite[l] = w.max_in_flight < inf ? -1 : 0;
        d_.count[l] = IoCounting(p, w.pattern);
        d_.unit[l] = d_.count[l].unit_bytes;
        d_.merge_min[l] = d_.count[l].merge_min_bytes;
        d_.inv_unit[l] = d_.count[l].inv_unit;
        d_.sequential[l] = d_.count[l].sequential ? -1 : 0;
        d_.overshoot_s[l] = p.overshoot_s;
        d_.inv_burst_cap[l] = 1.0 / lim.burst_cap;  // as Stepper's constructor
        d_.inv_tput_hi[l] = 1.0 / lim.tput_hi;
        d_.inv_tput_lo[l] = 1.0 / lim.tput_lo;
        d_.overshoot_iops_s[l] = volumes_[l].overshoot->iops_s;
        d_.overshoot_bytes_s[l] = volumes_[l].overshoot->bytes_s;
        d_.any_overshoot |= p.overshoots();
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
        d_.any_sequential |= d_.sequential[l] != 0;
    }
}

void set_lockstep_form(LockstepForm form) noexcept { current_form.store(form, std::memory_order_relaxed); }

void LockstepGroup::step(std::int64_t k0, std::int64_t k1) {
    d_.form = current_form.load(std::memory_order_relaxed);
    Isa isa = kernel_isa();
    // Up to 4 volumes: one AVX2 pass costs half an AVX-512 one (8 lanes, half of them padding).
    if (isa == Isa::avx512 && used_ <= 4) isa = Isa::avx2;
    kernel_for(isa)(d_, k0, k1);
    steps_ += k1 - k0;
}

bool LockstepGroup::finish() {
    bool ok = true;
    for (std::size_t l = 0; l < used_; ++l) {
        VolumeState& s = *volumes_[l].state;
        s.credits = d_.credits[l];
        volumes_[l].overshoot->iops_s = d_.overshoot_iops_s[l];
        volumes_[l].overshoot->bytes_s = d_.overshoot_bytes_s[l];
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
