#pragma once
/// \file recorders.hpp
/// The recorders the step loops write through (private): StepValues, the DirectSink of the
/// default recording and the Recorder that applies a Recording (ebssim/recorder.hpp, which says
/// what each series aggregates per interval).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ebssim/bound.hpp"
#include "ebssim/recorder.hpp"
#include "ebssim/series.hpp"

namespace ebssim {

/// One step's outputs as the step loops hand them to a Recorder: NMean rates (averaged over an
/// interval), with Latency a latency (weighted by the first rate), NEnd levels (kept at the end
/// of the interval), and the bound.
template <int NMean, int NEnd>
struct StepValues {
    std::array<double, NMean> mean;
    double latency;
    std::array<double, NEnd> end;
    std::uint8_t bound;
};

/// Where the default recording (every series, every step, float64) writes: the columns' first
/// values, one store per series and step. A step loop may keep a copy of it (in registers, where
/// a pointer to the Recorder would be reloaded after every store of a bound code, which as a
/// byte may alias anything).
template <int NMean, int NEnd, bool Latency>
struct DirectSink {
    using Step = StepValues<NMean, NEnd>;
    static constexpr int n_fields = NMean + (Latency ? 1 : 0) + NEnd + 1;
    std::array<double*, n_fields - 1> p{};
    std::uint8_t* bound = nullptr;
    /// The step whose values p[i][0] and bound[0] hold: 0 for a run's own series, a window's first
    /// step for a window's buffer (ServedFiller::window_sink).
    std::int64_t first = 0;

    /// Where series i, respectively the bound, of step k goes.
    [[gnu::always_inline]] [[nodiscard]] double* at(std::size_t i, std::int64_t k) const noexcept {
        return p[i] + (k - first);
    }
    [[gnu::always_inline]] [[nodiscard]] std::uint8_t* bound_at(std::int64_t k) const noexcept {
        return bound + (k - first);
    }

    /// Series i of the values of a step: mean..., latency (if any), end....
    static double value(const Step& s, int i) noexcept {
        if (i < NMean) return s.mean[static_cast<std::size_t>(i)];
        if (Latency && i == NMean) return s.latency;
        return s.end[static_cast<std::size_t>(i - NMean - (Latency ? 1 : 0))];
    }
    [[gnu::always_inline]] void put(std::int64_t k, const Step& s) const noexcept {
        for (int i = 0; i < n_fields - 1; ++i) *at(static_cast<std::size_t>(i), k) = value(s, i);
        *bound_at(k) = s.bound;
    }
};

/// Writes one volume's (or the instance's) outputs into its series as the Recording asks. The
/// default recording (every series but the extremes, every step, float64) takes a direct path
/// (DirectSink): one store per series and step, as a loop writing the arrays itself would.
/// Extremes per interval are kept only for the columns that record them.
template <int NMean, int NEnd, bool Latency>
class Recorder {
public:
    using Step = StepValues<NMean, NEnd>;
    using Sink = DirectSink<NMean, NEnd, Latency>;
    static constexpr int n_fields = NMean + (Latency ? 1 : 0) + NEnd + 1;
    /// The rates, the latencies (0 or 1) and the levels among the values.
    static constexpr int n_mean = NMean, n_latency = Latency ? 1 : 0, n_end = NEnd;
    /// The floating-point values of a step: the rates, the latency (if any), the levels.
    static constexpr int n_values = n_fields - 1;
    /// Partial sums per interval sum (see the file's comment).
    static constexpr std::size_t lanes = 4;

    /// `cols` are the floating-point series in the order mean..., latency (if any), end...;
    /// `bound` the codes. `extremes` are, in the same order, the series of each value's extreme
    /// per interval: the maximum of a rate and of the latency (over the steps with I/O), and of
    /// level e the minimum where level_min[e] (a balance), else the maximum (a backlog). A
    /// column or bound that is null or empty is not recorded.
    Recorder(std::array<Column*, n_values> cols, Series<std::uint8_t>* bound, std::int64_t every, Dtype dtype,
             std::array<Column*, n_values> extremes = {}, std::array<bool, NEnd> level_min = {})
        : every_(every), f32_(dtype == Dtype::f32), level_min_(level_min) {
        bool all = true;
        for (int i = 0; i < n_values; ++i) {
            Column* c = cols[static_cast<std::size_t>(i)];
            void* p = c != nullptr && !c->empty() ? c->data() : nullptr;
            p_[static_cast<std::size_t>(i)] = p;
            all &= p != nullptr;
        }
        bound_ = bound != nullptr && !bound->empty() ? bound->data() : nullptr;
        all &= bound_ != nullptr;
        for (int i = 0; i < n_values; ++i) {
            Column* c = extremes[static_cast<std::size_t>(i)];
            void* p = c != nullptr && !c->empty() ? c->data() : nullptr;
            x_[static_cast<std::size_t>(i)] = p;
            extremes_ |= p != nullptr;
        }
        reset_extremes();
        // Extremes take the general path, so that the direct one stays the plain stores it was.
        direct_ = all && every == 1 && !f32_ && !extremes_;
        if (direct_) {
            for (int i = 0; i < n_values; ++i) {
                sink_.p[static_cast<std::size_t>(i)] = static_cast<double*>(p_[static_cast<std::size_t>(i)]);
            }
            sink_.bound = bound_;
        }
    }

    /// True when record() is Sink::put, which a step loop may then call on its own copy of sink().
    [[nodiscard]] bool direct() const noexcept { return direct_; }
    [[nodiscard]] const Sink& sink() const noexcept { return sink_; }

    /// The outputs of step k (steps come in order, from 0).
    [[gnu::always_inline]] void record(std::int64_t k, const Step& s) noexcept {
        if (direct_) {
            sink_.put(k, s);
            return;
        }
        record_general(s);
    }

    /// The outputs of the m steps from k0 (the next to record), one array per value: the same as
    /// record() of each step in turn, to the last bit, in loops that vectorise. Every step's bound
    /// is `bound`, or bounds[t] when `bounds` is given. A rate (mean[0] for the latency's weight)
    /// of a step is not NaN.
    [[gnu::always_inline]] void record_steps(std::int64_t k0, int m, const std::array<const double*, NMean>& mean,
                                             const double* latency, const std::array<const double*, NEnd>& end,
                                             std::uint8_t bound, const std::uint8_t* bounds = nullptr) noexcept {
        if (m <= 0) return;
        auto value_at = [&](int i, int t) {
            if (i < NMean) return mean[static_cast<std::size_t>(i)][t];
            if (Latency && i == NMean) return latency[t];
            return end[static_cast<std::size_t>(i - NMean - (Latency ? 1 : 0))][t];
        };
        if (every_ == 1) {
            for (int i = 0; i < n_values; ++i) {
                for (void* p : {p_[static_cast<std::size_t>(i)], x_[static_cast<std::size_t>(i)]}) {
                    if (p == nullptr) continue;
                    if (f32_) {
                        float* q = static_cast<float*>(p) + j_;
                        for (int t = 0; t < m; ++t) q[t] = static_cast<float>(value_at(i, t));
                    } else {
                        double* q = static_cast<double*>(p) + j_;
                        for (int t = 0; t < m; ++t) q[t] = value_at(i, t);
                    }
                }
            }
            if (bound_ != nullptr) {
                if (bounds != nullptr) {
                    std::copy_n(bounds, m, bound_ + j_);
                } else {
                    std::fill_n(bound_ + j_, m, bound);
                }
            }
            j_ += m;
            (void)k0;
            return;
        }
        sum_steps(m, mean, latency, end, bound, bounds);
    }

    /// The outputs of the m steps from k0 (the next to record) when every output is the same in
    /// each, except the levels, which change linearly: level e in step k0 + j is
    /// s.end[e] + j * slope[e], and the latency, s.latency + j * lat_slope (a backlog growing
    /// or draining at a constant rate). O(m / every) work (O(m) fills at every = 1). Linear in
    /// j, a level or the latency takes its extremes over any run of these steps at the run's
    /// ends: the extremes per interval come from the first and last step of each chunk.
    void record_constant(std::int64_t k0, std::int64_t m, const Step& s, const std::array<double, NEnd>& slope,
                         double lat_slope = 0) noexcept {
        if (m <= 0) return;
        if (every_ == 1) {
            for (int i = 0; i < n_values; ++i) {
                fill(p_[static_cast<std::size_t>(i)], i, k0, m, s, slope, lat_slope);
                fill(x_[static_cast<std::size_t>(i)], i, k0, m, s, slope, lat_slope);  // a step is its own extreme
            }
            if (bound_ != nullptr) {
                for (std::int64_t j = 0; j < m; ++j) bound_[k0 + j] = s.bound;
            }
            j_ = k0 + m;
            return;
        }
        std::int64_t j = 0;
        while (j < m) {
            const std::int64_t c = std::min(m - j, every_ - in_);
            std::array<double, NEnd> first{}, last{};
            for (std::size_t e = 0; e < static_cast<std::size_t>(NEnd); ++e) {
                first[e] = s.end[e] + static_cast<double>(j) * slope[e];
                last[e] = s.end[e] + static_cast<double>(j + c - 1) * slope[e];
            }
            // Before add(), which writes the interval when this chunk completes it.
            if (extremes_) {
                extend(s, s.latency + static_cast<double>(j) * lat_slope,
                       s.latency + static_cast<double>(j + c - 1) * lat_slope, first, last);
            }
            if (lat_slope != 0) {
                // The interval's latency is weighted by the (constant) rate: the chunk's mean.
                Step sc = s;
                sc.latency = s.latency + (static_cast<double>(j) + 0.5 * static_cast<double>(c - 1)) * lat_slope;
                add(sc, c, last);
            } else {
                add(s, c, last);
            }
            j += c;
        }
    }

    /// Write the last, partial interval (if any). Call once after the last step.
    void finish() noexcept {
        if (in_ > 0) emit();
    }

private:
    // Out of line, so that the step loops around record() stay as compact as with the direct
    // path alone (inlined, it slowed the coupled loop even when not taken: docs/performance.md).
    [[gnu::noinline]] void record_general(const Step& s) noexcept {
        if (extremes_ && every_ > 1) extend(s, s.latency, s.latency, s.end, s.end);
        add(s, 1, s.end);
    }

    static double value(const Step& s, int i) noexcept { return Sink::value(s, i); }
    void put(void* p, std::int64_t k, double v) const noexcept {
        if (f32_) {
            static_cast<float*>(p)[k] = static_cast<float>(v);
        } else {
            static_cast<double*>(p)[k] = v;
        }
    }
    // Writes value i of the m steps from k0 of record_constant into p (if recorded), every = 1.
    void fill(void* p, int i, std::int64_t k0, std::int64_t m, const Step& s, const std::array<double, NEnd>& slope,
              double lat_slope) const noexcept {
        if (p == nullptr) return;
        const int e = i - NMean - (Latency ? 1 : 0);
        if (Latency && i == NMean && lat_slope != 0) {
            for (std::int64_t j = 0; j < m; ++j) put(p, k0 + j, s.latency + static_cast<double>(j) * lat_slope);
            return;
        }
        for (std::int64_t j = 0; j < m; ++j) {
            const double v = e >= 0 ? s.end[static_cast<std::size_t>(e)] +
                                          static_cast<double>(j) * slope[static_cast<std::size_t>(e)]
                                    : value(s, i);
            put(p, k0 + j, v);
        }
    }

    // Value i's extreme is a minimum (a level that level_min_ marks), else a maximum.
    [[nodiscard]] bool is_min(int i) const noexcept {
        const int e = i - NMean - (Latency ? 1 : 0);
        return e >= 0 && level_min_[static_cast<std::size_t>(e)];
    }
    void reset_extremes() noexcept {
        constexpr double inf = std::numeric_limits<double>::infinity();
        for (int i = 0; i < n_values; ++i) ext_[static_cast<std::size_t>(i)] = is_min(i) ? inf : -inf;
    }
    // Folds steps of rates s.mean, latency from lat0 to lat1 and levels from first to last
    // (linear in between: one step, or a jumped chunk) into the open interval's extremes.
    void extend(const Step& s, double lat0, double lat1, const std::array<double, NEnd>& first,
                const std::array<double, NEnd>& last) noexcept {
        for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) ext_[i] = std::max(ext_[i], s.mean[i]);
        constexpr std::size_t lev = NMean + (Latency ? 1 : 0);
        if constexpr (Latency) {
            // Only steps that completed I/O have a latency (the others' is NaN), as for the mean.
            if (s.mean[0] > 0) ext_[NMean] = std::max({ext_[NMean], lat0, lat1});
        }
        for (std::size_t e = 0; e < static_cast<std::size_t>(NEnd); ++e) {
            double& x = ext_[lev + e];
            x = level_min_[e] ? std::min({x, first[e], last[e]}) : std::max({x, first[e], last[e]});
        }
    }

    // Adds c steps of s (levels at the end: `last`) to the open interval; writes it when full.
    // The extremes of these steps are extend()'s, before.
    [[gnu::always_inline]] void add(const Step& s, std::int64_t c, const std::array<double, NEnd>& last) noexcept {
        if (every_ == 1) {  // a subset, float32 or extremes: the step's own values
            for (int i = 0; i < n_values; ++i) {
                void* p = p_[static_cast<std::size_t>(i)];
                if (p != nullptr) put(p, j_, value(s, i));
                void* x = x_[static_cast<std::size_t>(i)];
                if (x != nullptr) put(x, j_, value(s, i));
            }
            if (bound_ != nullptr) bound_[j_] = s.bound;
            ++j_;
            return;
        }
        const auto w = static_cast<double>(c);
        const auto l = static_cast<std::size_t>(in_) % lanes;
        for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i)
            sum_[i][l] += c == 1 ? s.mean[i] : w * s.mean[i];
        if constexpr (Latency) {
            if (s.mean[0] > 0) {
                lat_w_[l] += w * s.latency * s.mean[0];
                rate_w_[l] += w * s.mean[0];
            }
        }
        end_ = last;
        counts_[s.bound] += c;
        in_ += c;
        if (in_ == every_) emit();
    }

    // The partial sums in vector registers (GCC's vector extension: lane by lane the scalar
    // operations, rounded as they are).
    using v4 = double __attribute__((vector_size(lanes * sizeof(double))));
    // (Out parameters, not return values: a vector returned by value changes the ABI where the
    // caller's instruction set differs, which GCC warns of.)
    static void load4(v4& v, const double* q) noexcept { std::memcpy(&v, q, sizeof v); }
    static void store4(double* q, const v4& v) noexcept { std::memcpy(q, &v, sizeof v); }

    // record_steps at every > 1: as add() of each step, step i of the interval going to partial
    // sum i mod 4, four steps at a time where a group of four is in the interval. A step without
    // I/O adds +0 to the latency's sums (never -0), where add() adds nothing.
    [[gnu::always_inline]] void sum_steps(int m, const std::array<const double*, NMean>& mean, const double* latency,
                                          const std::array<const double*, NEnd>& end, std::uint8_t bound,
                                          const std::uint8_t* bounds) noexcept {
        const v4 zero{};
        std::array<v4, NMean> vs;
        v4 vl, vr;
        auto load_all = [&] {
#pragma GCC unroll 4
            for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) load4(vs[i], sum_[i].data());
            load4(vl, lat_w_.data());
            load4(vr, rate_w_.data());
        };
        auto store_all = [&] {
#pragma GCC unroll 4
            for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) store4(sum_[i].data(), vs[i]);
            store4(lat_w_.data(), vl);
            store4(rate_w_.data(), vr);
        };
        // Steps [u, u + q) into lanes [l, l + q) (the others add +0).
        auto part = [&](int u, int l, int q) {
            std::array<v4, NMean> xs{};
            v4 r = zero, w = zero;
            for (int a = 0; a < q; ++a) {
#pragma GCC unroll 4
                for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) xs[i][l + a] = mean[i][u + a];
                if constexpr (Latency) {
                    r[l + a] = mean[0][u + a];
                    w[l + a] = latency[u + a];
                }
            }
#pragma GCC unroll 4
            for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) vs[i] += xs[i];
            if constexpr (Latency) {
                vl += r > zero ? w * r : zero;
                vr += r > zero ? r : zero;
            }
        };
        load_all();
        int t = 0;
        while (t < m) {
            const int c = static_cast<int>(std::min<std::int64_t>(m - t, every_ - in_));
            if (extremes_) {
                for (int u = t; u < t + c; ++u) {
                    Step s{};
                    for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) s.mean[i] = mean[i][u];
                    s.latency = Latency ? latency[u] : 0.0;
                    for (std::size_t e = 0; e < static_cast<std::size_t>(NEnd); ++e) s.end[e] = end[e][u];
                    extend(s, s.latency, s.latency, s.end, s.end);
                }
            }
            const int t1 = t + c;
            int u = t;
            const int l0 = static_cast<int>(static_cast<std::size_t>(in_) % lanes);
            if (l0 != 0) {
                const int q = std::min(static_cast<int>(lanes) - l0, t1 - u);
                part(u, l0, q);
                u += q;
            }
            for (; u + static_cast<int>(lanes) <= t1; u += static_cast<int>(lanes)) {
#pragma GCC unroll 4
                for (std::size_t i = 0; i < static_cast<std::size_t>(NMean); ++i) {
                    v4 x;
                    load4(x, mean[i] + u);
                    vs[i] += x;
                }
                if constexpr (Latency) {
                    v4 r, w;
                    load4(r, mean[0] + u);
                    load4(w, latency + u);
                    vl += r > zero ? w * r : zero;
                    vr += r > zero ? r : zero;
                }
            }
            if (u < t1) part(u, 0, t1 - u);
            for (std::size_t e = 0; e < static_cast<std::size_t>(NEnd); ++e) end_[e] = end[e][t1 - 1];
            if (bounds != nullptr) {
                for (int v = t; v < t1; ++v) ++counts_[bounds[v]];
            } else {
                counts_[bound] += c;
            }
            in_ += c;
            if (in_ == every_) {
                store_all();
                emit();
                load_all();
            }
            t = t1;
        }
        store_all();
    }

    static_assert(lanes == 4, "total() adds four partial sums");
    static double total(const std::array<double, lanes>& a) noexcept { return (a[0] + a[1]) + (a[2] + a[3]); }

    void emit() noexcept {
        const double n = static_cast<double>(in_);
        for (int i = 0; i < n_values; ++i) {
            void* p = p_[static_cast<std::size_t>(i)];
            if (p == nullptr) continue;
            double v;
            if (i < NMean) {
                v = total(sum_[static_cast<std::size_t>(i)]) / n;
            } else if (Latency && i == NMean) {
                const double rate_w = total(rate_w_);
                v = rate_w > 0 ? total(lat_w_) / rate_w : std::numeric_limits<double>::quiet_NaN();
            } else {
                v = end_[static_cast<std::size_t>(i - NMean - (Latency ? 1 : 0))];
            }
            put(p, j_, v);
        }
        if (extremes_) {
            for (int i = 0; i < n_values; ++i) {
                void* p = x_[static_cast<std::size_t>(i)];
                if (p == nullptr) continue;
                double v = ext_[static_cast<std::size_t>(i)];
                // No step of the interval completed I/O: no latency, as latency_s.
                if (Latency && i == NMean && std::isinf(v)) v = std::numeric_limits<double>::quiet_NaN();
                put(p, j_, v);
            }
            reset_extremes();
        }
        if (bound_ != nullptr) {
            std::size_t best = 0;
            for (std::size_t b = 1; b < static_cast<std::size_t>(n_bounds); ++b) {
                if (counts_[b] > counts_[best]) best = b;
            }
            bound_[j_] = static_cast<std::uint8_t>(best);
        }
        ++j_;
        in_ = 0;
        sum_ = {};
        lat_w_ = {};
        rate_w_ = {};
        counts_ = {};
    }

    std::array<void*, n_fields - 1> p_{};
    std::uint8_t* bound_ = nullptr;
    Sink sink_{};
    std::int64_t every_;
    bool f32_;
    bool direct_ = false;
    // The open interval: its index, steps so far, sums, levels at its last step, bound counts.
    std::int64_t j_ = 0;
    std::int64_t in_ = 0;
    std::array<std::array<double, lanes>, NMean> sum_{};
    std::array<double, lanes> lat_w_{}, rate_w_{};
    std::array<double, NEnd> end_{};
    std::array<std::int64_t, n_bounds> counts_{};
    // Extremes (after the members above, which the step loops use, so that their layout stays):
    // the series (null: not recorded), which levels take their minimum, whether any is recorded,
    // and the open interval's extremes so far (+-inf before its first step).
    std::array<void*, n_values> x_{};
    std::array<bool, NEnd> level_min_{};
    bool extremes_ = false;
    std::array<double, n_values> ext_{};
};

namespace detail {
/// The rows of a table that aggregate as `a`.
template <std::size_t N>
constexpr int count_rows(const SeriesRow (&t)[N], Aggregation a) noexcept {
    int c = 0;
    for (const SeriesRow& r : t) c += r.aggregation == a ? 1 : 0;
    return c;
}
/// The recorder's value of row f (its StepValues and column order): the rates in the table's
/// order, then the latency, then the levels; -1 for the bound and the extremes (an extreme is
/// kept for its source's value).
template <std::size_t N>
constexpr int recorder_value(const SeriesRow (&t)[N], int f) noexcept {
    const Aggregation order[] = {Aggregation::rate, Aggregation::latency, Aggregation::level};
    int k = 0;
    for (const Aggregation b : order) {
        for (int g = 0; g < static_cast<int>(N); ++g) {
            if (t[g].aggregation != b) continue;
            if (g == f) return k;
            ++k;
        }
    }
    return -1;
}
}  // namespace detail

/// A volume's recorder, its layout from volume_series_table: the rates, the latency, the levels.
using VolumeRecorder = Recorder<detail::count_rows(volume_series_table, Aggregation::rate),
                                detail::count_rows(volume_series_table, Aggregation::level),
                                detail::count_rows(volume_series_table, Aggregation::latency) == 1>;
/// The instance's recorder, from instance_series_table.
using InstanceRecorder = Recorder<detail::count_rows(instance_series_table, Aggregation::rate),
                                  detail::count_rows(instance_series_table, Aggregation::level),
                                  detail::count_rows(instance_series_table, Aggregation::latency) == 1>;

/// The index of series F in the recorder's values, hence in DirectSink::p (served.cpp's stores)
/// and in a StepValues read as mean..., latency, end....
template <VolumeField F>
inline constexpr std::size_t volume_value = [] {
    constexpr int k = detail::recorder_value(volume_series_table, static_cast<int>(F));
    static_assert(k >= 0, "a rate, the latency or a level");
    return static_cast<std::size_t>(k);
}();
template <InstanceField F>
inline constexpr std::size_t instance_value = [] {
    constexpr int k = detail::recorder_value(instance_series_table, static_cast<int>(F));
    static_assert(k >= 0, "a rate or a level");
    return static_cast<std::size_t>(k);
}();

// The step loops build the steps' values positionally: a volume's as
// {{iops, ebs_iops, throughput_mib_s}, latency_s, {credits, backlog_ops}, bound} (stepper.hpp,
// jumps.hpp), the instance's as {{iops, throughput_mb_s}, 0, {io_balance_pct, byte_balance_pct},
// bound} (coupled.cpp). A row added to the table, or moved, stops the build here until they
// follow. The latency's weight is the first rate, iops.
static_assert(VolumeRecorder::n_values == 6);
static_assert(volume_value<VolumeField::iops> == 0 && volume_value<VolumeField::ebs_iops> == 1 &&
              volume_value<VolumeField::throughput_mib_s> == 2 && volume_value<VolumeField::latency_s> == 3 &&
              volume_value<VolumeField::credits> == 4 && volume_value<VolumeField::backlog_ops> == 5);
static_assert(InstanceRecorder::n_values == 4);
static_assert(instance_value<InstanceField::iops> == 0 && instance_value<InstanceField::throughput_mb_s> == 1 &&
              instance_value<InstanceField::io_balance_pct> == 2 &&
              instance_value<InstanceField::byte_balance_pct> == 3);

/// Size (or borrow) the chosen series of one volume for a run of n_steps; `out` are the caller's
/// buffers of this volume (null entries: allocate).
void prepare_series(StepSeries& s, const Recording& r, std::int64_t n_steps,
                    const std::array<void*, n_volume_fields>& out);
/// The same for the instance.
void prepare_series(InstanceSeries& s, const Recording& r, std::int64_t n_steps);

/// The recorder of a prepared StepSeries, respectively InstanceSeries.
VolumeRecorder make_recorder(StepSeries& s, const Recording& r);
InstanceRecorder make_recorder(InstanceSeries& s, const Recording& r);

/// The recorders of a run (Simulation::run): one per volume, or null (not recorded), and the
/// instance's, or null.
namespace detail {
struct Recorders {
    VolumeRecorder* volumes = nullptr;
    InstanceRecorder* instance = nullptr;
};
}  // namespace detail

}  // namespace ebssim
