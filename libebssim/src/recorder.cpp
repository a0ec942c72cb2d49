#include "recorders.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "ebssim/error.hpp"

namespace ebssim {

std::int64_t Recording::allocated_bytes_per_value(std::ptrdiff_t i, bool instance) const noexcept {
    const std::int64_t fbytes = dtype == Dtype::f32 ? 4 : 8;
    const auto caller = [&](int f) {
        if (instance) return instance_out[static_cast<std::size_t>(f)] != nullptr;
        return i >= 0 && static_cast<std::size_t>(i) < volume_out.size() &&
               volume_out[static_cast<std::size_t>(i)][static_cast<std::size_t>(f)] != nullptr;
    };
    const std::uint32_t fields = instance ? instance_fields : volume_fields;
    const int n = instance ? n_instance_fields : n_volume_fields;
    // The bound is the one series of uint8 codes; the others are floating-point.
    const SeriesRow* table = instance ? instance_series_table : volume_series_table;
    std::int64_t bytes = 0;
    for (int f = 0; f < n; ++f) {
        if ((fields >> static_cast<unsigned>(f) & 1U) == 0 || caller(f)) continue;
        bytes += table[f].aggregation == Aggregation::majority ? 1 : fbytes;
    }
    return bytes;
}

void validate_recording(const Recording& r, std::size_t n_volumes) {
    if (r.every < 1) throw ConfigError(fmt::format("every={} steps per recorded value must be >= 1", r.every));
    if ((r.volume_fields & ~all_volume_fields) != 0) {
        throw ConfigError(fmt::format("volume_fields={:#x} has bits outside the {} volume series (at most {:#x})",
                                      r.volume_fields, n_volume_fields, all_volume_fields));
    }
    if ((r.instance_fields & ~all_instance_fields) != 0) {
        throw ConfigError(fmt::format("instance_fields={:#x} has bits outside the {} instance series (at most {:#x})",
                                      r.instance_fields, n_instance_fields, all_instance_fields));
    }
    if (r.dtype != Dtype::f64 && r.dtype != Dtype::f32) {
        throw ConfigError(fmt::format("dtype={} must be f64 (0) or f32 (1)", static_cast<int>(r.dtype)));
    }
    if (!r.volume_out.empty() && r.volume_out.size() != n_volumes) {
        throw ConfigError(fmt::format("volume_out has buffers for {} volumes but the simulation has {}",
                                      r.volume_out.size(), n_volumes));
    }
}

namespace {

void prepare(Column& c, bool chosen, void* out, std::size_t n, Dtype t) {
    if (!chosen) {
        c = Column{};
    } else if (out != nullptr) {
        c.borrow(out, n, t);
    } else {
        c.allocate(n, t);
    }
}

void prepare(Series<std::uint8_t>& b, bool chosen, void* out, std::size_t n) {
    if (!chosen) {
        b = Series<std::uint8_t>{};
    } else if (out != nullptr) {
        b.borrow(static_cast<std::uint8_t*>(out), n);
    } else {
        b.resize(n);
    }
}

}  // namespace

namespace {

// Sizes (or borrows) each chosen series of s (a StepSeries or an InstanceSeries); out(f) is the
// caller's buffer of series f, or null.
template <class S, class Out>
void prepare_all(S& s, const Recording& r, std::int64_t n_steps, const Out& out) {
    const auto n = static_cast<std::size_t>(r.intervals(n_steps));
    s.for_each([&](auto f, auto& c) {
        if constexpr (std::is_same_v<std::decay_t<decltype(c)>, Column>) {
            prepare(c, r.records(f), out(f), n, r.dtype);
        } else {
            prepare(c, r.records(f), out(f), n);
        }
    });
}

// The recorder of s: each series at its value in the recorder (recorders.hpp), an extreme at
// its source's, a level's extreme a minimum or a maximum as its row says.
template <class Rec, class S, std::size_t N>
Rec recorder_of(S& s, const SeriesRow (&table)[N], const Recording& r) {
    std::array<Column*, Rec::n_values> cols{}, extremes{};
    constexpr int levels0 = Rec::n_mean + Rec::n_latency;
    std::array<bool, static_cast<std::size_t>(Rec::n_end)> level_min{};
    Series<std::uint8_t>* bound = nullptr;
    s.for_each([&](auto f, auto& c) {
        const SeriesRow& row = table[static_cast<int>(f)];
        if constexpr (std::is_same_v<std::decay_t<decltype(c)>, Column>) {
            if (!row.extreme()) {
                cols[static_cast<std::size_t>(detail::recorder_value(table, static_cast<int>(f)))] = &c;
                return;
            }
            const int k = detail::recorder_value(table, row.source);
            extremes[static_cast<std::size_t>(k)] = &c;
            if (k >= levels0) level_min[static_cast<std::size_t>(k - levels0)] = row.aggregation == Aggregation::min;
        } else {
            bound = &c;
        }
    });
    return Rec(cols, bound, r.every, r.dtype, extremes, level_min);
}

}  // namespace

void prepare_series(StepSeries& s, const Recording& r, std::int64_t n_steps,
                    const std::array<void*, n_volume_fields>& out) {
    prepare_all(s, r, n_steps, [&](VolumeField f) { return out[static_cast<std::size_t>(f)]; });
}

void prepare_series(InstanceSeries& s, const Recording& r, std::int64_t n_steps) {
    prepare_all(s, r, n_steps, [&](InstanceField f) { return r.instance_out[static_cast<std::size_t>(f)]; });
}

VolumeRecorder make_recorder(StepSeries& s, const Recording& r) {
    return recorder_of<VolumeRecorder>(s, volume_series_table, r);
}

InstanceRecorder make_recorder(InstanceSeries& s, const Recording& r) {
    return recorder_of<InstanceRecorder>(s, instance_series_table, r);
}

}  // namespace ebssim
