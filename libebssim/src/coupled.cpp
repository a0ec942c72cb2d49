// The instance-coupled loop (Simulation::run_shared): the volumes of one instance, stepped
// together, every step each volume offering what its own limits allow (Stepper::offer), the
// instance scaling the offers to fit its budget (fair_shares, InstanceBucket), each volume then
// committing; with jumps over the stretches in which every volume and the instance are steady.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <variant>
#include <vector>

#include "ebssim/engine.hpp"
#include "parallel.hpp"
#include "recorders.hpp"
#include "stepper.hpp"

namespace ebssim {

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): this file is the engine's

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

// The coupled loop: every step, each volume offers what its own limits allow, the instance
// scales the offers to fit its budget, then each volume commits. `Steppers` is a vector of one
// stepper type (no dispatch per volume per step) or of variants (mixed workloads).
template <class Steppers>
class Coupled {
public:
    Coupled(Steppers& steppers, const InstanceParams& ip, double io_credits, double bytes_credits, double dt, double t0,
            InstanceTotals& it, InstanceRecorder* out, const std::vector<double>& read_fraction)
        : st_(steppers),
          ip_(ip),
          it_(it),
          out_(out),
          nv_(steppers.size()),
          fair_(ip.share == SharePolicy::fair),
          duplex_(!ip.nitro),
          dt_(dt),
          t0_(t0),
          inv_dt_(1.0 / dt),
          read_fraction_(read_fraction),
          want_cnt_(nv_),
          want_bytes_(nv_),
          share_(nv_),
          g_(nv_),
          base_(nv_, 1.0),
          spare_cnt_(nv_),
          spare_bytes_(nv_),
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
               {}} {
        for (std::size_t i = 0; i < nv_; ++i)
            any_over_ |= apply(st_[i], [](const auto& st) { return st.overshoots(); });
    }

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
                if (any_over_) base_[i] = st.base_share();
            });
            sum_cnt += want_cnt_[i];
            sum_bytes += want_bytes_[i];
        }
    }
    // The instance's decision on the offers, volumes with overshoot among them (docs/model.md,
    // "Overshoot"): the instance serves first what the volumes' limits allow at their rates (the
    // share base_ of each offer), shared by decide_offers as any offers are when that is above its
    // budget; what is left of its budget goes to the volumes' overshoot, each the same share of it.
    [[gnu::always_inline]] Decision decide(const Hot& h, double sum_cnt, double sum_bytes) {
        if (!any_over_) return decide_offers(h, sum_cnt, sum_bytes);
        // The base offers, swapped into want_cnt_ and want_bytes_ while decide_offers may share
        // them (the whole offers wait in spare_cnt_ and spare_bytes_ meanwhile).
        double base_cnt = 0, base_bytes = 0;
        for (std::size_t i = 0; i < nv_; ++i) {
            spare_cnt_[i] = base_[i] * want_cnt_[i];
            spare_bytes_[i] = base_[i] * want_bytes_[i];
            base_cnt += spare_cnt_[i];
            base_bytes += spare_bytes_[i];
        }
        want_cnt_.swap(spare_cnt_);
        want_bytes_.swap(spare_bytes_);
        const auto [cap_io, cap_by] = caps(h, base_bytes);
        const bool at_base = base_cnt > cap_io || base_bytes > cap_by;
        for (std::size_t i = 0; i < nv_; ++i) apply(st_[i], [&](auto& st) { st.hold_at_base(at_base); });
        // Held at the rates already: the base offers shared (g_ of each), and no overshoot.
        const Decision held_at_base = at_base ? decide_offers(h, base_cnt, base_bytes) : Decision{};
        want_cnt_.swap(spare_cnt_);
        want_bytes_.swap(spare_bytes_);
        if (at_base) return held_at_base;
        const auto [cap_io_x, cap_by_x] = caps(h, sum_bytes);
        if (sum_cnt <= cap_io_x && sum_bytes <= cap_by_x) return decide_offers(h, sum_cnt, sum_bytes);
        // The room left after the base offers, shared by the overshoot in proportion to it.
        const double h_io = sum_cnt > cap_io_x ? (cap_io_x - base_cnt) / (sum_cnt - base_cnt) : 1.0;
        const double h_by = sum_bytes > cap_by_x ? (cap_by_x - base_bytes) / (sum_bytes - base_bytes) : 1.0;
        const double hh = std::clamp(std::min(h_io, h_by), 0.0, 1.0);
        const Bound ib = instance_bound(h_io, h_by);
        double used_cnt = 0, used_bytes = 0;
        for (std::size_t i = 0; i < nv_; ++i) {
            const bool held = base_[i] < 1.0;
            g_[i] = held ? base_[i] + hh * (1.0 - base_[i]) : 1.0;
            bound_[i] = held ? ib : Bound::demand;
            used_cnt += g_[i] * want_cnt_[i];
            used_bytes += g_[i] * want_bytes_[i];
        }
        return decision(ib, used_cnt, used_bytes, cap_io_x, cap_by_x);
    }
    // The limit that holds the volumes, from the share of their offers each budget allows: the
    // smaller share, a tie going to the IOPS budget.
    static Bound instance_bound(double g_io, double g_by) noexcept {
        return g_io <= g_by ? Bound::instance_iops : Bound::instance_throughput;
    }
    // The decision of bound ib with what the volumes use of the budgets, exactly the budget where
    // it binds (so that the instance bucket empties to exactly zero).
    static Decision decision(Bound ib, double used_cnt, double used_bytes, double cap_io, double cap_by) noexcept {
        if (ib == Bound::instance_iops) used_cnt = std::min(used_cnt, cap_io);
        if (ib == Bound::instance_throughput) used_bytes = std::min(used_bytes, cap_by);
        return {ib, used_cnt, used_bytes};
    }
    // The instance's budgets per step at the buckets' credits, for the offers in want_bytes_ (sum_bytes in all).
    [[gnu::always_inline]] std::pair<double, double> caps(const Hot& h, double sum_bytes) const {
        const double cap_io = h.io.cap();
        double cap_by = h.by.cap();
        // A Xen instance's EBS link is full duplex (docs/model.md, "Instances"): reads and writes
        // each have the byte budget, so the total may reach cap x total / (the busier direction).
        if (duplex_ && sum_bytes > 0) [[unlikely]] {
            double reads = 0;
            for (std::size_t i = 0; i < nv_; ++i) reads += read_fraction_[i] * want_bytes_[i];
            const double busier = std::max(reads, sum_bytes - reads);
            if (busier > 0) cap_by *= sum_bytes / busier;
        }
        return {cap_io, cap_by};
    }
    // The instance's decision on the offers at the buckets' credits: its bound, each volume's
    // share g_ and bound bound_, and what the volumes use of its budgets.
    [[gnu::always_inline]] Decision decide_offers(const Hot& h, double sum_cnt, double sum_bytes) {
        const auto [cap_io, cap_by] = caps(h, sum_bytes);
        const double g_io = sum_cnt > cap_io ? cap_io / sum_cnt : 1.0;
        const double g_by = sum_bytes > cap_by ? cap_by / sum_bytes : 1.0;
        Bound ib = Bound::demand;
        if (g_io < 1.0 || g_by < 1.0) ib = instance_bound(g_io, g_by);
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
        return decision(ib, used_cnt, used_bytes, cap_io, cap_by);
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
    bool duplex_;  // a Xen instance: the byte budget holds in each direction
    double dt_, t0_, inv_dt_;
    std::vector<double> read_fraction_;  // each volume's workload's share of reads (its bytes' too)
    std::vector<double> want_cnt_, want_bytes_, share_, g_;
    // With overshoot on some volume (any_over_): each offer's base share (Stepper::base_share),
    // and the other offers, base or whole, while decide() swaps them (spare_cnt_, spare_bytes_).
    bool any_over_ = false;
    std::vector<double> base_, spare_cnt_, spare_bytes_;
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
                  const InterruptCheck& interrupt, bool jump, const std::vector<double>& read_fraction) {
    Coupled<Steppers> c(steppers, ip, io_credits, bytes_credits, dt, t0, it, out, read_fraction);
    c.run(n, interrupt, jump);
    c.finish(io_credits, bytes_credits);
}

// A workload's share of reads (of its I/Os and, each direction having its own sizes' mean, of
// its bytes as the model counts them); an idle one's is irrelevant: it asks for no bytes.
double read_fraction_of(const Workload& w) {
    return std::visit(
        [](const auto& x) -> double {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, Idle>) {
                return 0.5;
            } else if constexpr (std::is_same_v<T, PhasedClosedLoop>) {
                return x.loop.read_fraction;
            } else {
                return x.read_fraction;
            }
        },
        w);
}

// The steppers as one concrete type when every workload has the same kind.
template <class S>
bool try_homogeneous(std::vector<AnyStepper>& any, const InstanceParams& ip, double& io_c, double& by_c, std::int64_t n,
                     double dt, double t0, InstanceTotals& it, InstanceRecorder* out, const InterruptCheck& interrupt,
                     bool jump, const std::vector<double>& read_fraction, bool& ok) {
    for (const auto& a : any) {
        if (!std::holds_alternative<Stepper<S>>(a)) return false;
    }
    std::vector<Stepper<S>> typed;
    typed.reserve(any.size());
    for (auto& a : any) typed.push_back(std::get<Stepper<S>>(a));
    coupled_loop(typed, ip, io_c, by_c, n, dt, t0, it, out, interrupt, jump, read_fraction);
    ok = true;
    for (const auto& st : typed) ok &= st.input_ok();
    return true;
}

}  // namespace

bool Simulation::run_shared(const std::vector<Workload>& ws, std::int64_t n, RunResult& r,
                            const detail::Recorders& recs, const InterruptCheck& interrupt, bool jump) {
    VolumeRecorder* const rec = recs.volumes;
    const InstanceParams& ip = *instance_;
    const std::size_t nv = params_.size();
    std::vector<AnyStepper> steppers;
    steppers.reserve(nv);
    std::vector<double> read_fraction(nv);
    for (std::size_t i = 0; i < nv; ++i) {
        read_fraction[i] = read_fraction_of(ws[i]);
        steppers.push_back(make_stepper(params_[i], state_[i], overshoot_[i], ws[i], dt_s_, r.t0_s,
                                        rec != nullptr ? &rec[i] : nullptr, r.totals[i]));
    }
    InstanceTotals& it = r.instance_totals;
    InstanceRecorder* out = recs.instance;
    bool ok = true;
    if (!try_homogeneous<OpenSource>(steppers, ip, inst_io_credits_, inst_bytes_credits_, n, dt_s_, r.t0_s, it, out,
                                     interrupt, jump, read_fraction, ok) &&
        !try_homogeneous<ClosedSource>(steppers, ip, inst_io_credits_, inst_bytes_credits_, n, dt_s_, r.t0_s, it, out,
                                       interrupt, jump, read_fraction, ok)) {
        coupled_loop(steppers, ip, inst_io_credits_, inst_bytes_credits_, n, dt_s_, r.t0_s, it, out, interrupt, jump,
                     read_fraction);
        for (auto& st : steppers) ok &= std::visit([](auto& x) { return x.input_ok(); }, st);
    }
    it.io_credits_end = inst_io_credits_;
    it.bytes_credits_end = inst_bytes_credits_;
    return ok;
}

}  // namespace ebssim
