#pragma once
/// \file recorder.hpp
/// What a run records of its per-step outputs, and the recorders the step loops write through.
///
/// A Recording chooses the series (any subset of a volume's and of the instance's), the interval
/// (`every` steps per recorded value, the last interval possibly partial), the precision of the
/// floating-point series (float64 or float32) and, optionally, caller-provided buffers. Per
/// interval:
///   - rates (iops, ebs_iops, throughput_mib_s; the instance's iops, throughput_mb_s): the mean
///     over the interval's steps;
///   - latency_s: the I/O-weighted mean (sum of latency x IOPS over sum of IOPS; NaN when no I/O
///     completed), so Little's law holds per interval: mean outstanding I/Os = latency x iops;
///   - levels (credits, backlog_ops, the instance's balances): the value at the end of the
///     interval;
///   - bound: the bound that held in most of the interval's steps (a tie goes to the lower code:
///     demand, then the volume's limits, then the instance's).
/// and, only when chosen (they are not in the default recording), the interval's extremes over
/// its steps, what a CloudWatch Maximum or Minimum statistic gives per period:
///   - iops_max (a volume's and the instance's): the largest step's IOPS;
///   - latency_max_s: the largest step latency among the steps that completed I/O (NaN when none
///     did), the worst step that the I/O-weighted mean averages away;
///   - credits_min, io_balance_min_pct, byte_balance_min_pct: the lowest level at the end of any
///     step (a bucket that runs low and refills inside the interval);
///   - backlog_max: the largest backlog at the end of any step.
/// Over a jumped stretch (record_constant) rates are constant and levels and latency linear, so
/// each chunk's extreme is at one of its ends: the recorder takes it there, without the steps.
/// Every recorded value belongs to the interval that starts at step j x every. With every = 1 the
/// values are the steps' own, bit for bit (an extreme equals its series' value).
/// An interval's sums (of the rates; of latency x iops and of iops, for the latency) are kept in
/// four partial sums, step i of the interval going to sum i mod 4 (a jumped chunk as one term, to
/// the sum of its first step), added as (s0 + s1) + (s2 + s3) when the interval ends: the sums of
/// four consecutive steps are then one vector addition (record_steps), and the rounding is the
/// same whichever way the steps come.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "ebssim/bound.hpp"
#include "ebssim/series.hpp"

namespace ebssim {

/// Storage of the floating-point series. float32 keeps 7 significant digits (credits of a gp2
/// bucket to about 1 credit in 5.4 M), half the memory.
enum class Dtype : std::uint8_t { f64 = 0, f32 = 1 };

/// A recorded floating-point series: float64 or float32, owned by the engine or borrowed from
/// the caller. Reads return double whatever the storage.
class Column {
public:
    /// Allocate n values of type t, uninitialised.
    void allocate(std::size_t n, Dtype t) {
        dtype_ = t;
        d_ = {};
        f_ = {};
        if (t == Dtype::f64) {
            d_.resize(n);
        } else {
            f_.resize(n);
        }
    }
    /// Write into the caller's buffer of n values of type t (double or float).
    void borrow(void* p, std::size_t n, Dtype t) noexcept {
        dtype_ = t;
        d_ = {};
        f_ = {};
        if (t == Dtype::f64) {
            d_.borrow(static_cast<double*>(p), n);
        } else {
            f_.borrow(static_cast<float*>(p), n);
        }
    }
    [[nodiscard]] Dtype dtype() const noexcept { return dtype_; }
    [[nodiscard]] std::size_t size() const noexcept { return dtype_ == Dtype::f64 ? d_.size() : f_.size(); }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] bool borrowed() const noexcept { return d_.borrowed() || f_.borrowed(); }
    [[nodiscard]] void* data() noexcept {
        return dtype_ == Dtype::f64 ? static_cast<void*>(d_.data()) : static_cast<void*>(f_.data());
    }
    double operator[](std::size_t k) const noexcept {
        return dtype_ == Dtype::f64 ? d_[k] : static_cast<double>(f_[k]);
    }
    /// The storage itself (empty unless dtype() is f64, respectively f32).
    Series<double>& f64() noexcept { return d_; }
    Series<float>& f32() noexcept { return f_; }

private:
    Dtype dtype_ = Dtype::f64;
    Series<double> d_;
    Series<float> f_;
};

/// The series of one volume, in the order of VolumeSeries' bits in Recording::volume_fields.
enum class VolumeField : std::uint8_t {
    iops = 0,
    ebs_iops = 1,
    throughput_mib_s = 2,
    credits = 3,
    latency_s = 4,
    backlog_ops = 5,
    bound = 6,
    // Per-interval extremes, after the bound so that the bits of the series above keep their values.
    iops_max = 7,
    latency_max_s = 8,
    credits_min = 9,
    backlog_max = 10,
};
inline constexpr int n_volume_fields = 11;
inline constexpr std::string_view volume_field_names[n_volume_fields] = {
    "iops",  "ebs_iops", "throughput_mib_s", "credits",     "latency_s",  "backlog_ops",
    "bound", "iops_max", "latency_max_s",    "credits_min", "backlog_max"};

/// The series of the instance, in the order of their bits in Recording::instance_fields.
enum class InstanceField : std::uint8_t {
    iops = 0,
    throughput_mb_s = 1,
    io_balance_pct = 2,
    byte_balance_pct = 3,
    bound = 4,
    iops_max = 5,
    io_balance_min_pct = 6,
    byte_balance_min_pct = 7,
};
inline constexpr int n_instance_fields = 8;
inline constexpr std::string_view instance_field_names[n_instance_fields] = {
    "iops",  "throughput_mb_s", "io_balance_pct",     "byte_balance_pct",
    "bound", "iops_max",        "io_balance_min_pct", "byte_balance_min_pct"};

/// Every series (the bits a Recording may set).
inline constexpr std::uint32_t all_volume_fields = (1U << n_volume_fields) - 1;
inline constexpr std::uint32_t all_instance_fields = (1U << n_instance_fields) - 1;
/// The default recording's series: all but the extremes, which only a Recording that names them
/// records (the default's speed and memory, 49 bytes a volume-step, stay what they were).
inline constexpr std::uint32_t default_volume_fields = (1U << (static_cast<unsigned>(VolumeField::bound) + 1)) - 1;
inline constexpr std::uint32_t default_instance_fields = (1U << (static_cast<unsigned>(InstanceField::bound) + 1)) - 1;

/// Recorded outputs of one volume, one value per interval (per step by default). A series that
/// was not chosen is empty. Rates are per second.
struct StepSeries {
    Column iops;              ///< application I/Os completed per second
    Column ebs_iops;          ///< EBS-counted operations per second
    Column throughput_mib_s;  ///< MiB/s completed
    Column credits;           ///< burst credits at the end of the step (I/O credits; MiB on st1/sc1)
    Column latency_s;         ///< mean latency of the I/Os completed (NaN if none)
    /// I/Os waiting at the end of the step: arrived (open loop) and neither completed nor in
    /// service, whether queued at the device or, above an open loop's max_in_flight, held back
    /// in the application
    Column backlog_ops;
    Series<std::uint8_t> bound;  ///< Bound code
    Column iops_max;             ///< largest step iops of the interval
    Column latency_max_s;        ///< largest step latency_s of the interval's steps with I/O (NaN if none)
    Column credits_min;          ///< lowest credits at the end of a step of the interval
    Column backlog_max;          ///< largest backlog_ops at the end of a step of the interval

    /// Mean I/Os outstanding (waiting + in service) in step (interval) k: by Little's law,
    /// latency x rate. Derived rather than stored, which keeps recording cheap.
    [[nodiscard]] double queue_length(std::size_t k) const noexcept {
        return iops[k] > 0 ? latency_s[k] * iops[k] : 0.0;
    }
};

/// Recorded outputs of the instance, as StepSeries.
struct InstanceSeries {
    Column iops;                  ///< EBS-counted operations per second, all volumes
    Column throughput_mb_s;       ///< decimal MB/s, all volumes
    Column io_balance_pct;        ///< EBSIOBalance% at the end of the step
    Column byte_balance_pct;      ///< EBSByteBalance% at the end of the step
    Series<std::uint8_t> bound;   ///< Bound::demand, instance_iops or instance_throughput
    Column iops_max;              ///< largest step iops of the interval
    Column io_balance_min_pct;    ///< lowest io_balance_pct at the end of a step of the interval
    Column byte_balance_min_pct;  ///< lowest byte_balance_pct at the end of a step of the interval
};

/// What a recorded run keeps (RunOptions::recording; ignored when Simulation::run's record is
/// false). The default is every series but the extremes, every step, float64, in buffers the
/// engine allocates.
struct Recording {
    /// Bit VolumeField f set: record that series of every volume.
    std::uint32_t volume_fields = default_volume_fields;
    /// Bit InstanceField f set: record that series of the instance (ignored without one).
    std::uint32_t instance_fields = default_instance_fields;
    /// Steps per recorded value (>= 1); the last interval has the remaining n_steps % every
    /// steps when every does not divide the run.
    std::int64_t every = 1;
    /// Storage of the floating-point series (bound is always uint8).
    Dtype dtype = Dtype::f64;
    /// Caller buffers: volume_out[i][f] is where volume i's series f goes (null: the engine
    /// allocates it). Empty: the engine allocates every series. Each non-null buffer holds at
    /// least intervals(n_steps) values of the series' type (double or float per dtype; uint8 for
    /// bound) and stays valid until the run's result is gone. Only chosen series are written.
    std::vector<std::array<void*, n_volume_fields>> volume_out;
    /// Caller buffers of the instance's series, as volume_out.
    std::array<void*, n_instance_fields> instance_out{};

    [[nodiscard]] bool records(VolumeField f) const noexcept {
        return (volume_fields >> static_cast<unsigned>(f) & 1U) != 0;
    }
    [[nodiscard]] bool records(InstanceField f) const noexcept {
        return (instance_fields >> static_cast<unsigned>(f) & 1U) != 0;
    }
    /// Values per recorded series of a run of n_steps: ceil(n_steps / every).
    [[nodiscard]] std::int64_t intervals(std::int64_t n_steps) const noexcept {
        return every > 0 ? (n_steps + every - 1) / every : 0;
    }
    /// Bytes the engine allocates per volume (respectively the instance) per recorded value:
    /// chosen series without a caller buffer (volume `i`; the instance when i < 0).
    [[nodiscard]] std::int64_t allocated_bytes_per_value(std::ptrdiff_t i, bool instance) const noexcept;
};

/// Throws ConfigError when `r` is not a valid recording of a run with n_volumes volumes (every
/// < 1, unknown field bits, caller buffers for another number of volumes).
void validate_recording(const Recording& r, std::size_t n_volumes);

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

    /// Series i of the values of a step: mean..., latency (if any), end....
    static double value(const Step& s, int i) noexcept {
        if (i < NMean) return s.mean[static_cast<std::size_t>(i)];
        if (Latency && i == NMean) return s.latency;
        return s.end[static_cast<std::size_t>(i - NMean - (Latency ? 1 : 0))];
    }
    [[gnu::always_inline]] void put(std::int64_t k, const Step& s) const noexcept {
        for (int i = 0; i < n_fields - 1; ++i) p[static_cast<std::size_t>(i)][k] = value(s, i);
        bound[k] = s.bound;
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

/// A volume's recorder: rates iops, ebs_iops, throughput_mib_s; latency_s; levels credits,
/// backlog_ops (VolumeField order); extremes iops_max, latency_max_s, credits_min, backlog_max.
using VolumeRecorder = Recorder<3, 2, true>;
/// The instance's recorder: rates iops, throughput_mb_s; levels io_balance_pct, byte_balance_pct;
/// extremes iops_max, io_balance_min_pct, byte_balance_min_pct.
using InstanceRecorder = Recorder<2, 2, false>;

/// Size (or borrow) the chosen series of one volume for a run of n_steps; `out` are the caller's
/// buffers of this volume (null entries: allocate).
void prepare_series(StepSeries& s, const Recording& r, std::int64_t n_steps,
                    const std::array<void*, n_volume_fields>& out);
/// The same for the instance.
void prepare_series(InstanceSeries& s, const Recording& r, std::int64_t n_steps);

/// The recorder of a prepared StepSeries, respectively InstanceSeries.
VolumeRecorder make_recorder(StepSeries& s, const Recording& r);
InstanceRecorder make_recorder(InstanceSeries& s, const Recording& r);

}  // namespace ebssim
