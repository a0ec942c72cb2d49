#pragma once
/// \file recorder.hpp
/// What a run records of its per-step outputs (the recorders the step loops write through are
/// private: libebssim/src/recorders.hpp).
///
/// A Recording chooses the series (any subset of a volume's and of the instance's), the interval
/// (`every` steps per recorded value, the last interval possibly partial), the precision of the
/// floating-point series (float64 or float32) and, optionally, caller-provided buffers. Per
/// interval, by the row's Aggregation in series_table.hpp (the list of the series):
///   - a rate: the mean over the interval's steps;
///   - the latency: the I/O-weighted mean (sum of latency x IOPS over sum of IOPS; NaN when no
///     I/O completed), so Little's law holds per interval: mean outstanding I/Os = latency x iops;
///   - a level: the value at the end of the interval;
///   - the bound (majority): the bound that held in most of the interval's steps (a tie goes to
///     the lower code: demand, then the volume's limits, then the instance's).
/// and, only when chosen (they are not in the default recording), the interval's extremes over
/// its steps, what a CloudWatch Maximum or Minimum statistic gives per period (max, min of the
/// row's source series):
///   - of a rate: the largest step's rate;
///   - of the latency: the largest step latency among the steps that completed I/O (NaN when
///     none did), the worst step that the I/O-weighted mean averages away;
///   - of a level: the lowest (a bucket that runs low and refills inside the interval) or the
///     largest (a backlog) level at the end of any step.
/// Over a jumped stretch (record_constant) rates are constant and levels and latency linear, so
/// each chunk's extreme is at one of its ends: the recorder takes it there, without the steps.
/// Every recorded value belongs to the interval that starts at step j x every. With every = 1 the
/// values are the steps' own, bit for bit (an extreme equals its series' value).
/// An interval's sums (of the rates; of latency x iops and of iops, for the latency) are kept in
/// four partial sums, step i of the interval going to sum i mod 4 (a jumped chunk as one term, to
/// the sum of its first step), added as (s0 + s1) + (s2 + s3) when the interval ends: the sums of
/// four consecutive steps are then one vector addition (record_steps), and the rounding is the
/// same whichever way the steps come.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ebssim/bound.hpp"
#include "ebssim/series.hpp"
#include "ebssim/series_table.hpp"

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

/// Every series (the bits a Recording may set).
inline constexpr std::uint32_t all_volume_fields = detail::series_bits(volume_series_table, true);
inline constexpr std::uint32_t all_instance_fields = detail::series_bits(instance_series_table, true);
/// The default recording's series: all but the extremes, which only a Recording that names them
/// records (the default's speed and memory, 49 bytes a volume-step, stay what they were).
inline constexpr std::uint32_t default_volume_fields = detail::series_bits(volume_series_table, false);
inline constexpr std::uint32_t default_instance_fields = detail::series_bits(instance_series_table, false);

/// The storage of a recorded series: the bound's codes as uint8, the others a Column.
template <Aggregation A>
using SeriesStorage = std::conditional_t<A == Aggregation::majority, Series<std::uint8_t>, Column>;

/// Recorded outputs of one volume, one value per interval (per step by default): a member per
/// row of volume_series_table (series_table.hpp, which says what each is). A series that was
/// not chosen is empty. Rates are per second.
struct StepSeries {
#define EBSSIM_X(name, aggregation, source, doc) SeriesStorage<Aggregation::aggregation> name;
    EBSSIM_VOLUME_SERIES(EBSSIM_X)
#undef EBSSIM_X

    /// f(field, member) for each series, in the table's order.
    template <class F>
    void for_each(F&& f) {
#define EBSSIM_X(name, aggregation, source, doc) f(VolumeField::name, name);
        EBSSIM_VOLUME_SERIES(EBSSIM_X)
#undef EBSSIM_X
    }

    /// Mean I/Os outstanding (waiting + in service) in step (interval) k: by Little's law,
    /// latency x rate. Derived rather than stored, which keeps recording cheap.
    [[nodiscard]] double queue_length(std::size_t k) const noexcept {
        return iops[k] > 0 ? latency_s[k] * iops[k] : 0.0;
    }
};

/// Recorded outputs of the instance, as StepSeries: a member per row of instance_series_table.
struct InstanceSeries {
#define EBSSIM_X(name, aggregation, source, doc) SeriesStorage<Aggregation::aggregation> name;
    EBSSIM_INSTANCE_SERIES(EBSSIM_X)
#undef EBSSIM_X

    /// f(field, member) for each series, in the table's order.
    template <class F>
    void for_each(F&& f) {
#define EBSSIM_X(name, aggregation, source, doc) f(InstanceField::name, name);
        EBSSIM_INSTANCE_SERIES(EBSSIM_X)
#undef EBSSIM_X
    }
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

}  // namespace ebssim
