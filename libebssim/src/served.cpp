#include "served.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ebssim/bound.hpp"
#include "ebssim/units.hpp"
#include "isa.hpp"

namespace ebssim::detail {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Blocks of steps, growing from block_min (a stretch that ends at once wastes little of the look
// ahead) to block_max, each in three passes: A, what each step's input decides (the counted
// I/Os, NaN for an input the kernel does not take, and the service time); B, in step order, the
// credits, whether the step is served in full, and the totals' sums; C, the recorded values of
// the steps B took.
constexpr int block_min = 16;
constexpr int block_max = 256;

// A. Each step on its own: offer()'s counting and validity (cnt: 0 + counted, the I/Os
// available; NaN for an input the kernel does not take) and commit()'s service time at the I/Os
// available (0 + arrivals: +0 for an arrival of -0), for the m steps at o and b.
[[gnu::always_inline]] inline void each_step(const ServedInput& in, const double* o, const double* b, int m,
                                             double* cnt, double* st) noexcept {
    const IoCounting count = in.count;
    if (count.sequential) {
        for (int j = 0; j < m; ++j) st[j] = (0.0 + b[j]) / (0.0 + o[j]);
        for (int j = 0; j < m; ++j) cnt[j] = trace_step_ok(o[j], b[j]) ? 0.0 + count(o[j], b[j]) : nan;
    } else {
        for (int j = 0; j < m; ++j) {
            const double x = o[j], y = b[j];
            const double q = (0.0 + y) / (0.0 + x);  // = y / x wherever the counting divides (x, y > 0)
            st[j] = q;
            cnt[j] = trace_step_ok(x, y) ? 0.0 + count.random_branch_free(x, y, q) : nan;
        }
    }
    if (!std::isnan(in.own_service_time_s)) {
        std::fill_n(st, m, in.own_service_time_s);
    } else {
        const double lat0 = in.latency_s, inv_transfer = in.inv_transfer;
        for (int j = 0; j < m; ++j) st[j] = 0.0 + o[j] > 0 ? transfer_service_time(lat0, st[j], inv_transfer) : lat0;
    }
}

// C. The rates and the latency (commit()'s Step) of the m served steps from k, one loop per
// series, into out[0..3] (iops, ebs_iops, throughput_mib_s, latency_s).
[[gnu::always_inline]] inline void rates(const ServedInput& in, std::int64_t k, int m, const double* cnt,
                                         const double* st, const std::array<double*, 4>& out) noexcept {
    const double* const o = in.ops + k;
    const double* const b = in.bytes + k;
    const double inv_dt = in.inv_dt;
    double* const iops = out[0];
    double* const ebs = out[1];
    double* const mib = out[2];
    double* const lat = out[3];
    for (int i = 0; i < m; ++i) iops[i] = (0.0 + o[i]) * inv_dt;
    for (int i = 0; i < m; ++i) ebs[i] = cnt[i] * inv_dt;
    for (int i = 0; i < m; ++i) mib[i] = (0.0 + b[i]) * inv_dt * (1.0 / units::MiB);
    for (int i = 0; i < m; ++i) lat[i] = (0.0 + o[i]) * inv_dt > 0 ? st[i] : nan;
}

// C. The recorded values but the credits of the m served steps from k into a direct sink.
[[gnu::always_inline]] inline void write_values(const ServedInput& in, const VolumeRecorder::Sink& sink, std::int64_t k,
                                                int m, const double* cnt, const double* st) noexcept {
    // The sink's series in DirectSink::value's order: the rates, the latency, the levels.
    static_assert(VolumeRecorder::Sink::n_fields == 7);
    rates(in, k, m, cnt, st,
          {sink.at(volume_value<VolumeField::iops>, k), sink.at(volume_value<VolumeField::ebs_iops>, k),
           sink.at(volume_value<VolumeField::throughput_mib_s>, k), sink.at(volume_value<VolumeField::latency_s>, k)});
    std::fill_n(sink.at(volume_value<VolumeField::backlog_ops>, k), m, 0.0);
    std::fill_n(sink.bound_at(k), m, static_cast<std::uint8_t>(Bound::demand));
}

// The filler's work: the values of steps [k0, k1) but the credits, block by block.
[[gnu::always_inline]] inline void fill_impl(const ServedInput& in, const VolumeRecorder::Sink& sink, std::int64_t k0,
                                             std::int64_t k1) noexcept {
    alignas(64) double cnt[block_max];
    alignas(64) double st[block_max];
    for (std::int64_t k = k0; k < k1; k += block_max) {
        const int m = static_cast<int>(std::min<std::int64_t>(block_max, k1 - k));
        each_step(in, in.ops + k, in.bytes + k, m, cnt, st);
        write_values(in, sink, k, m, cnt, st);
    }
}

[[gnu::always_inline]] inline std::int64_t serve_impl(ServedRun& r, std::int64_t k, std::int64_t k1) noexcept {
    const ServedInput& in = r.in;
    const double* const ops = in.ops;
    const double* const bytes = in.bytes;
    const double inv_dt = in.inv_dt;
    const double cap = r.lim.capacity, earned = r.lim.earned, burst_cap = r.lim.burst_cap;
    const double tput_hi = r.lim.tput_hi, tput_lo = r.lim.tput_lo;
    const bool bucket = r.lim.bucket, dry = r.dry;
    alignas(64) double cnt[block_max];  // available counted I/Os, 0 + counted (NaN: not taken)
    alignas(64) double st[block_max];   // service time
    alignas(64) double cred_block[block_max];
    alignas(64) double lw[block_max];           // latency x served I/Os
    alignas(64) unsigned char flag[block_max];  // 1: a step not taken at constant credits
    double c = r.credits;
    // The sums in locals (registers): the kernel's stores through double* may alias r.
    double dem_ops = r.sums.demanded_ops, dem_bytes = r.sums.demanded_bytes, srv_ops = r.sums.served_ops,
           srv_bytes = r.sums.served_bytes, srv_cnt = r.sums.served_counted, lat_ops = r.sums.latency_ops_s;
    std::int64_t taken = 0;
    double last_cnt = r.last_counted;
    int block = block_min;
    bool stop = false;
    while (k < k1 && !stop) {
        const int m = static_cast<int>(std::min<std::int64_t>(block, k1 - k));
        const double* const o = ops + k;
        const double* const b = bytes + k;
        // The credits of the steps B takes, written straight into a direct sink (the values of
        // the steps not taken are written later) or kept for out->record.
        double* const cred =
            r.out != nullptr && r.direct ? r.sink.at(volume_value<VolumeField::credits>, k) : cred_block;
        const bool keep_cred = r.out != nullptr;
        __builtin_prefetch(o + m + 64);
        __builtin_prefetch(b + m + 64);
        each_step(in, o, b, m, cnt, st);
        // latency x served I/Os where any completed (adding +0 changes no sum, none being -0)
        for (int j = 0; j < m; ++j) {
            const double xs = 0.0 + o[j];
            lw[j] = xs * inv_dt > 0 ? st[j] * xs : 0.0;
        }
        // B. In step order. A step is taken when throttle() leaves f = 1 at the step's credits c.
        auto sums = [&](int j0, int j1) {
            for (int i = j0; i < j1; ++i) {
                dem_ops += o[i];
                dem_bytes += b[i];
                lat_ops += lw[i];
                srv_ops += 0.0 + o[i];
                srv_bytes += 0.0 + b[i];
                srv_cnt += cnt[i];
            }
        };
        // At credits c that stay as they are (no bucket, or a full one that stays full while
        // (cap + earned) - counted >= cap, which each step checks on its own): the first step
        // from j0 that is not taken at c (throttled, an input not taken, or, full, one that
        // drains the bucket), found over the block in a vectorised loop; m if none.
        auto first_not_kept = [&](int j0, bool full) {
            const double pool = pool_of(c, earned);
            const Caps<ScalarOps> caps = limits_at<ScalarOps>(c, pool, burst_cap, tput_hi, tput_lo);
            for (int i = j0; i < m; ++i) {
                // Within both limits (& rather than &&, so that the loop vectorises).
                const bool kept = within_limit(cnt[i], caps.counted) & !over_limit(0.0 + b[i], caps.bytes) &
                                  (!full | (pool - cnt[i] >= cap));
                flag[i] = kept ? 0 : 1;
            }
            const void* f = std::memchr(flag + j0, 1, static_cast<std::size_t>(m - j0));
            return f == nullptr ? m : static_cast<int>(static_cast<const unsigned char*>(f) - flag);
        };
        int j = 0;
        if (!bucket) {
            j = first_not_kept(0, false);
            sums(0, j);
            stop = j < m;
        } else {
            while (j < m && !stop) {
                if (c == cap && cap > 0 && !dry) {
                    const int e = first_not_kept(j, true);
                    if (keep_cred) std::fill(cred + j, cred + e, c);
                    sums(j, e);
                    j = e;
                    if (j == m) break;
                    // Step j is throttled or not taken (the chain's step below stops), or it drains.
                }
                for (; j < m; ++j) {
                    const double pool = pool_of(c, earned);
                    const Caps<ScalarOps> caps = limits_at<ScalarOps>(c, pool, burst_cap, tput_hi, tput_lo);
                    if (!within_limit(cnt[j], caps.counted) || over_limit(0.0 + b[j], caps.bytes)) {
                        stop = true;
                        break;
                    }
                    const double nc = bucket_after<ScalarOps>(pool, cnt[j], cap);
                    if ((nc <= 0) != dry) {  // CliffTracker::changes: commit() notes a cliff
                        stop = true;
                        break;
                    }
                    c = nc;
                    if (keep_cred) cred[j] = c;
                    sums(j, j + 1);
                    if (c == cap) {
                        ++j;
                        break;
                    }
                }
            }
        }
        // C. The recorded values of the steps taken: the credits here, the rest by the filler
        // if there is one and it takes them.
        if (r.out != nullptr && j > 0) {
            if (r.direct) {
                if (!bucket) std::fill_n(cred, j, c);  // (a bucket's: by B)
                if (r.filler == nullptr || !r.filler->push(k, k + j)) write_values(in, r.sink, k, j, cnt, st);
            } else {
                // The values the direct sink gets, in arrays for record_steps (a recording of
                // some series, one value per interval, float32 or extremes).
                alignas(64) double rate[block_max], ebs[block_max], mib[block_max], lat[block_max];
                rates(in, k, j, cnt, st, {rate, ebs, mib, lat});
                if (!bucket) std::fill_n(cred, j, c);
                static constexpr std::array<double, block_max> no_backlog{};
                r.out->record_steps(k, j, {rate, ebs, mib}, lat, {cred, no_backlog.data()},
                                    static_cast<std::uint8_t>(Bound::demand));
            }
        }
        if (j > 0) last_cnt = cnt[j - 1];
        taken += j;
        k += j;
        block = std::min(2 * block, block_max);
    }
    r.credits = c;
    r.sums = {dem_ops, dem_bytes, srv_ops, srv_bytes, srv_cnt, lat_ops};
    r.taken = taken;
    r.last_counted = last_cnt;
    return k;
}

// One compiled kernel per instruction set (as the lockstep kernel's), everything inlined into
// it. Neither contracts to FMA (-ffp-contract=off): both round every operation as the step does.
[[gnu::flatten, gnu::target("avx2")]] std::int64_t serve_avx2(ServedRun& r, std::int64_t k, std::int64_t k1) noexcept {
    return serve_impl(r, k, k1);
}
[[gnu::flatten]] std::int64_t serve_base(ServedRun& r, std::int64_t k, std::int64_t k1) noexcept {
    return serve_impl(r, k, k1);
}
[[gnu::flatten, gnu::target("avx2")]] void fill_avx2(const ServedInput& in, const VolumeRecorder::Sink& sink,
                                                     std::int64_t k0, std::int64_t k1) noexcept {
    fill_impl(in, sink, k0, k1);
}
[[gnu::flatten]] void fill_base(const ServedInput& in, const VolumeRecorder::Sink& sink, std::int64_t k0,
                                std::int64_t k1) noexcept {
    fill_impl(in, sink, k0, k1);
}

// The filler's recording of a window's steps [k0, k1) from its sink s.
[[gnu::always_inline]] inline void record_window_impl(VolumeRecorder& rec, const VolumeRecorder::Sink& s,
                                                      std::int64_t k0, std::int64_t k1) noexcept {
    rec.record_steps(k0, static_cast<int>(k1 - k0), {s.at(0, k0), s.at(1, k0), s.at(2, k0)}, s.at(3, k0),
                     {s.at(4, k0), s.at(5, k0)}, 0, s.bound_at(k0));
}
[[gnu::flatten, gnu::target("avx2")]] void record_window_avx2(VolumeRecorder& rec, const VolumeRecorder::Sink& s,
                                                              std::int64_t k0, std::int64_t k1) noexcept {
    record_window_impl(rec, s, k0, k1);
}
[[gnu::flatten]] void record_window_base(VolumeRecorder& rec, const VolumeRecorder::Sink& s, std::int64_t k0,
                                         std::int64_t k1) noexcept {
    record_window_impl(rec, s, k0, k1);
}

}  // namespace

namespace {
std::atomic<bool> served_on{true};
}  // namespace

void set_served_kernel(bool on) noexcept { served_on.store(on, std::memory_order_relaxed); }
bool served_kernel() noexcept { return served_on.load(std::memory_order_relaxed); }

std::int64_t serve(ServedRun& r, std::int64_t k, std::int64_t k1) noexcept {
    return kernels_use_avx2() ? serve_avx2(r, k, k1) : serve_base(r, k, k1);
}

ServedFiller::ServedFiller(const ServedInput& in, const VolumeRecorder::Sink& sink)
    : in_(in), sink_(sink), queue_(std::make_unique<std::array<Task, capacity>>()), thread_([this] { work(); }) {}

ServedFiller::ServedFiller(const ServedInput& in, VolumeRecorder& recorder, std::int64_t window)
    : in_(in),
      recorder_(&recorder),
      window_(window),
      values_(static_cast<std::size_t>(window) * 2 * VolumeRecorder::n_values),
      bounds_(static_cast<std::size_t>(2 * window)),
      queue_(std::make_unique<std::array<Task, capacity>>()),
      thread_([this] { work(); }) {}

VolumeRecorder::Sink ServedFiller::sink_of(std::int64_t w) noexcept {
    // Window w's buffer (the two buffers in turns), its values from step w x window on.
    const auto b = static_cast<std::size_t>(w % 2);
    const auto n = static_cast<std::size_t>(window_);
    VolumeRecorder::Sink s;
    for (std::size_t i = 0; i < s.p.size(); ++i) s.p[i] = values_.data() + (b * s.p.size() + i) * n;
    s.bound = bounds_.data() + b * n;
    s.first = w * window_;
    return s;
}

namespace {
// Either thread spins this many pauses (some tens of microseconds) before it sleeps.
constexpr int spin_pauses = 1024;
inline void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Waits until `a` differs from `old`: a short spin (a stretch is handed over every few
// microseconds while the kernel serves), then blocked in the kernel (std::atomic::wait) until the
// other thread stores a new value and notifies.
template <class T>
void await_change(const std::atomic<T>& a, T old) noexcept {
    for (int i = 0; i < spin_pauses; ++i) {
        if (a.load(std::memory_order_acquire) != old) return;
        cpu_pause();
    }
    while (a.load(std::memory_order_acquire) == old) a.wait(old, std::memory_order_acquire);
}
}  // namespace

VolumeRecorder::Sink ServedFiller::window_sink(std::int64_t w) noexcept {
    for (std::int64_t r = recorded_.load(std::memory_order_acquire); r < w - 1;  // window w - 2 used the buffer
         r = recorded_.load(std::memory_order_acquire)) {
        await_change(recorded_, r);
    }
    return sink_of(w);
}

void ServedFiller::push_window(std::int64_t k0, std::int64_t k1) noexcept {
    for (;;) {
        const std::size_t t = tail_.load(std::memory_order_acquire);  // before the try: a change after it wakes us
        if (push_task({k0, k1, true})) return;
        wake();  // the queue is full: the helper may sleep on stretches it was not woken for (push_task)
        await_change(tail_, t);
    }
}

ServedFiller::~ServedFiller() {
    if (thread_.joinable()) {
        state_.store(2, std::memory_order_release);
        wake();
        thread_.join();
    }
}

bool ServedFiller::push(std::int64_t k0, std::int64_t k1) noexcept { return push_task({k0, k1, false}); }

bool ServedFiller::push_task(const Task& t) noexcept {
    const std::size_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_.load(std::memory_order_acquire) >= capacity) return false;
    (*queue_)[h % capacity] = t;
    head_.store(h + 1, std::memory_order_release);
    // Wake the helper only if it has gone to sleep. A window pays a fence first: with the helper's
    // (work()), either the helper sees the window before it sleeps or this sees that it sleeps, so
    // no wake-up is lost, which the loop needs (it waits for the windows). A stretch does not:
    // nothing waits for one but finish(), which wakes the helper, and push_window when the queue
    // is full, which wakes it too; a wake-up missed at the moment the helper falls asleep leaves
    // the stretch to the next hand-over that sees it asleep. A fence on each of a run's thousands
    // of hand-overs cost a recorded run with the helper 2-5 % (docs/performance.md, issue-20 gate).
    if (t.record) std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_relaxed)) wake();
    return true;
}

void ServedFiller::finish() noexcept {
    if (thread_.joinable()) {
        state_.store(1, std::memory_order_release);
        wake();
        thread_.join();
    }
}

void ServedFiller::wake() noexcept {
    signal_.fetch_add(1, std::memory_order_release);
    signal_.notify_one();
}

void ServedFiller::work() noexcept {
    const bool avx2 = kernels_use_avx2();
    std::size_t t = 0;
    int idle = 0;
    for (;;) {
        const int s = state_.load(std::memory_order_acquire);
        if (s == 2) return;
        if (t < head_.load(std::memory_order_acquire)) {
            const Task x = (*queue_)[t % capacity];
            // Where the stretch's steps are: the run's sink, or the window's buffer.
            const VolumeRecorder::Sink ws = recorder_ == nullptr ? sink_ : sink_of(x.k0 / window_);
            if (x.record) {
                if (avx2) {
                    record_window_avx2(*recorder_, ws, x.k0, x.k1);
                } else {
                    record_window_base(*recorder_, ws, x.k0, x.k1);
                }
                recorded_.store(x.k0 / window_ + 1, std::memory_order_release);
                recorded_.notify_one();
            } else if (avx2) {
                fill_avx2(in_, ws, x.k0, x.k1);
            } else {
                fill_base(in_, ws, x.k0, x.k1);
            }
            tail_.store(++t, std::memory_order_release);
            // Only a windowed filler's loop waits for room (push_window); the notification is a
            // read-modify-write on a line of the library's table of waiters (libstdc++ 12).
            if (recorder_ != nullptr) tail_.notify_one();
            idle = 0;
            continue;
        }
        // Everything handed over before finish() is in the queue once state 1 is seen.
        if (s == 1 && t == head_.load(std::memory_order_acquire)) return;
        // Nothing to do: wait for the next stretch, a short spin first (the kernel hands one over
        // every few microseconds while it serves), then asleep (the step loop may throttle for
        // long): say so, then look once more before sleeping (push_task's fence before a window
        // pairs with this).
        if (++idle < spin_pauses) {
            cpu_pause();
            continue;
        }
        sleeping_.store(true, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const std::uint32_t now = signal_.load(std::memory_order_acquire);
        if (t == head_.load(std::memory_order_acquire) && state_.load(std::memory_order_acquire) == s) {
            signal_.wait(now, std::memory_order_acquire);
        }
        sleeping_.store(false, std::memory_order_relaxed);
        idle = 0;
    }
}

}  // namespace ebssim::detail
