#pragma once
/// \file series_table.hpp
/// The per-step series, one row each: the only list of them. A row is the series' name, how an
/// interval of steps aggregates it (for an extreme, of which series) and its meaning. From the
/// rows come VolumeField / InstanceField (a row's place is its bit in Recording::volume_fields),
/// the names, the masks, StepSeries' and InstanceSeries' members (recorder.hpp), what the
/// recorder computes per value (recorders.hpp), the Python properties and ebssim.VOLUME_SERIES
/// (bindings), which tests check _core.pyi, VolumeResult and docs/model.md against.
///
/// Adding a series is adding a row, in the order of the bits (extremes after the bound, so that
/// the bits of the others keep their values), and, for a rate, latency or level, the value in
/// the step loops' StepValues (recorders.hpp's static_asserts name the order they build).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ebssim {

/// How an interval aggregates a series (recorder.hpp says each in full).
enum class Aggregation : std::uint8_t {
    rate = 0,      ///< the mean over the interval's steps
    latency = 1,   ///< the mean weighted by the first rate's I/Os (NaN when none completed)
    level = 2,     ///< the value at the end of the interval
    majority = 3,  ///< the bound code that held in most of the interval's steps
    max = 4,       ///< the largest step value of the source series (not in the default recording)
    min = 5,       ///< the lowest step value of the source series (not in the default recording)
};
inline constexpr int n_aggregations = 6;
inline constexpr std::string_view aggregation_names[n_aggregations] = {"rate",     "latency", "level",
                                                                       "majority", "max",     "min"};

/// One series: `source` is the row whose step values an extreme (max, min) takes; a row's own
/// index otherwise.
struct SeriesRow {
    std::string_view name;
    Aggregation aggregation;
    int source;
    std::string_view doc;  ///< a string literal (null-terminated), as the Python docstring

    /// An extreme per interval: recorded only when a Recording names it.
    [[nodiscard]] constexpr bool extreme() const noexcept {
        return aggregation == Aggregation::max || aggregation == Aggregation::min;
    }
};

// X(name, aggregation, source, doc): the rows of a volume's series.
#define EBSSIM_VOLUME_SERIES(X)                                                                                       \
    X(iops, rate, iops, "Application I/Os completed per second.")                                                     \
    X(ebs_iops, rate, ebs_iops, "EBS-counted operations per second (256 KiB units on SSD, 1 MiB on HDD).")            \
    X(throughput_mib_s, rate, throughput_mib_s, "MiB/s completed.")                                                   \
    X(credits, level, credits,                                                                                        \
      "Burst credits at the end of the step (I/O credits; MiB on st1 and sc1; 0 without a bucket).")                  \
    X(latency_s, latency, latency_s,                                                                                  \
      "Mean latency of the I/Os completed in the step, seconds (NaN where none completed).")                          \
    X(backlog_ops, level, backlog_ops,                                                                                \
      "I/Os waiting at the end of the step (arrived, not completed, not in service): queued at the device or, "       \
      "above an open loop's max_in_flight, held back in the application.")                                            \
    X(bound, majority, bound, "Which limit held the volume back (uint8): an index into ebssim.BOUND_NAMES.")          \
    X(iops_max, max, iops, "Largest step iops of each interval (recorded only when chosen).")                         \
    X(latency_max_s, max, latency_s,                                                                                  \
      "Largest step latency of each interval among the steps that completed I/O, seconds (NaN where none did; "       \
      "recorded only when chosen).")                                                                                  \
    X(credits_min, min, credits, "Lowest credits at the end of a step of each interval (recorded only when chosen).") \
    X(backlog_max, max, backlog_ops,                                                                                  \
      "Largest backlog_ops at the end of a step of each interval (recorded only when chosen).")

// X(name, aggregation, source, doc): the rows of the instance's series (all volumes together).
#define EBSSIM_INSTANCE_SERIES(X)                                                                        \
    X(iops, rate, iops, "EBS-counted operations per second.")                                            \
    X(throughput_mb_s, rate, throughput_mb_s, "Decimal MB/s.")                                           \
    X(io_balance_pct, level, io_balance_pct, "CloudWatch's EBSIOBalance% at the end of the step.")       \
    X(byte_balance_pct, level, byte_balance_pct, "CloudWatch's EBSByteBalance% at the end of the step.") \
    X(bound, majority, bound,                                                                            \
      "demand, instance_iops or instance_throughput (uint8): an index into ebssim.BOUND_NAMES.")         \
    X(iops_max, max, iops, "Largest step iops of each interval (recorded only when chosen).")            \
    X(io_balance_min_pct, min, io_balance_pct,                                                           \
      "Lowest EBSIOBalance% at the end of a step of each interval (recorded only when chosen).")         \
    X(byte_balance_min_pct, min, byte_balance_pct,                                                       \
      "Lowest EBSByteBalance% at the end of a step of each interval (recorded only when chosen).")

/// The series of one volume, in the table's order (the order of their bits).
enum class VolumeField : std::uint8_t {
#define EBSSIM_X(name, aggregation, source, doc) name,
    EBSSIM_VOLUME_SERIES(EBSSIM_X)
#undef EBSSIM_X
};
/// The series of the instance, in the table's order.
enum class InstanceField : std::uint8_t {
#define EBSSIM_X(name, aggregation, source, doc) name,
    EBSSIM_INSTANCE_SERIES(EBSSIM_X)
#undef EBSSIM_X
};

/// The rows, indexed by VolumeField, respectively InstanceField.
inline constexpr SeriesRow volume_series_table[] = {
#define EBSSIM_X(name, aggregation, source, doc) \
    SeriesRow{#name, Aggregation::aggregation, static_cast<int>(VolumeField::source), doc},
    EBSSIM_VOLUME_SERIES(EBSSIM_X)
#undef EBSSIM_X
};
inline constexpr SeriesRow instance_series_table[] = {
#define EBSSIM_X(name, aggregation, source, doc) \
    SeriesRow{#name, Aggregation::aggregation, static_cast<int>(InstanceField::source), doc},
    EBSSIM_INSTANCE_SERIES(EBSSIM_X)
#undef EBSSIM_X
};
inline constexpr int n_volume_fields = static_cast<int>(std::size(volume_series_table));
inline constexpr int n_instance_fields = static_cast<int>(std::size(instance_series_table));

/// The names alone, indexed as the rows.
inline constexpr std::string_view volume_field_names[n_volume_fields] = {
#define EBSSIM_X(name, aggregation, source, doc) #name,
    EBSSIM_VOLUME_SERIES(EBSSIM_X)
#undef EBSSIM_X
};
inline constexpr std::string_view instance_field_names[n_instance_fields] = {
#define EBSSIM_X(name, aggregation, source, doc) #name,
    EBSSIM_INSTANCE_SERIES(EBSSIM_X)
#undef EBSSIM_X
};

[[nodiscard]] constexpr const SeriesRow& series_row(VolumeField f) noexcept {
    return volume_series_table[static_cast<int>(f)];
}
[[nodiscard]] constexpr const SeriesRow& series_row(InstanceField f) noexcept {
    return instance_series_table[static_cast<int>(f)];
}

namespace detail {
/// The bits of the rows of a table: every one, or the default recording's (all but the extremes).
template <std::size_t N>
constexpr std::uint32_t series_bits(const SeriesRow (&t)[N], bool extremes) noexcept {
    std::uint32_t bits = 0;
    for (std::size_t f = 0; f < N; ++f) {
        if (extremes || !t[f].extreme()) bits |= 1U << f;
    }
    return bits;
}
/// What the recorder supports (recorders.hpp): one bound, at most one latency, extremes of a
/// rate or the latency a maximum, each series' extreme at most once, an extreme of a series
/// before it in the table and after every other series (their bits keep their values).
template <std::size_t N>
constexpr bool valid_table(const SeriesRow (&t)[N]) noexcept {
    int bounds = 0, latencies = 0;
    bool seen_extreme = false;
    if (N > 32) return false;
    for (std::size_t f = 0; f < N; ++f) {
        const SeriesRow& r = t[f];
        bounds += r.aggregation == Aggregation::majority ? 1 : 0;
        latencies += r.aggregation == Aggregation::latency ? 1 : 0;
        if (!r.extreme()) {
            if (seen_extreme || r.source != static_cast<int>(f)) return false;
            continue;
        }
        seen_extreme = true;
        if (r.source < 0 || static_cast<std::size_t>(r.source) >= f) return false;
        const Aggregation a = t[r.source].aggregation;
        if (a == Aggregation::majority || t[r.source].extreme()) return false;
        if (a != Aggregation::level && r.aggregation != Aggregation::max) return false;
        for (std::size_t g = 0; g < f; ++g) {
            if (t[g].extreme() && t[g].source == r.source) return false;
        }
    }
    return bounds == 1 && latencies <= 1;
}
}  // namespace detail

static_assert(detail::valid_table(volume_series_table));
static_assert(detail::valid_table(instance_series_table));

}  // namespace ebssim
