#include "recorders.hpp"

#include <fmt/format.h>

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
    const int bound = instance ? static_cast<int>(InstanceField::bound) : static_cast<int>(VolumeField::bound);
    std::int64_t bytes = 0;
    for (int f = 0; f < n; ++f) {
        if ((fields >> static_cast<unsigned>(f) & 1U) == 0 || caller(f)) continue;
        bytes += f == bound ? 1 : fbytes;
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

void prepare_series(StepSeries& s, const Recording& r, std::int64_t n_steps,
                    const std::array<void*, n_volume_fields>& out) {
    const auto n = static_cast<std::size_t>(r.intervals(n_steps));
    const auto ch = [&](VolumeField f) { return r.records(f); };
    const auto o = [&](VolumeField f) { return out[static_cast<std::size_t>(f)]; };
    prepare(s.iops, ch(VolumeField::iops), o(VolumeField::iops), n, r.dtype);
    prepare(s.ebs_iops, ch(VolumeField::ebs_iops), o(VolumeField::ebs_iops), n, r.dtype);
    prepare(s.throughput_mib_s, ch(VolumeField::throughput_mib_s), o(VolumeField::throughput_mib_s), n, r.dtype);
    prepare(s.credits, ch(VolumeField::credits), o(VolumeField::credits), n, r.dtype);
    prepare(s.latency_s, ch(VolumeField::latency_s), o(VolumeField::latency_s), n, r.dtype);
    prepare(s.backlog_ops, ch(VolumeField::backlog_ops), o(VolumeField::backlog_ops), n, r.dtype);
    prepare(s.bound, ch(VolumeField::bound), o(VolumeField::bound), n);
    prepare(s.iops_max, ch(VolumeField::iops_max), o(VolumeField::iops_max), n, r.dtype);
    prepare(s.latency_max_s, ch(VolumeField::latency_max_s), o(VolumeField::latency_max_s), n, r.dtype);
    prepare(s.credits_min, ch(VolumeField::credits_min), o(VolumeField::credits_min), n, r.dtype);
    prepare(s.backlog_max, ch(VolumeField::backlog_max), o(VolumeField::backlog_max), n, r.dtype);
}

void prepare_series(InstanceSeries& s, const Recording& r, std::int64_t n_steps) {
    const auto n = static_cast<std::size_t>(r.intervals(n_steps));
    const auto ch = [&](InstanceField f) { return r.records(f); };
    const auto o = [&](InstanceField f) { return r.instance_out[static_cast<std::size_t>(f)]; };
    prepare(s.iops, ch(InstanceField::iops), o(InstanceField::iops), n, r.dtype);
    prepare(s.throughput_mb_s, ch(InstanceField::throughput_mb_s), o(InstanceField::throughput_mb_s), n, r.dtype);
    prepare(s.io_balance_pct, ch(InstanceField::io_balance_pct), o(InstanceField::io_balance_pct), n, r.dtype);
    prepare(s.byte_balance_pct, ch(InstanceField::byte_balance_pct), o(InstanceField::byte_balance_pct), n, r.dtype);
    prepare(s.bound, ch(InstanceField::bound), o(InstanceField::bound), n);
    prepare(s.iops_max, ch(InstanceField::iops_max), o(InstanceField::iops_max), n, r.dtype);
    prepare(s.io_balance_min_pct, ch(InstanceField::io_balance_min_pct), o(InstanceField::io_balance_min_pct), n,
            r.dtype);
    prepare(s.byte_balance_min_pct, ch(InstanceField::byte_balance_min_pct), o(InstanceField::byte_balance_min_pct), n,
            r.dtype);
}

VolumeRecorder make_recorder(StepSeries& s, const Recording& r) {
    // The recorder's order: rates, latency, levels; the extremes in the same order (none of
    // ebs_iops and throughput_mib_s), the credits' a minimum, the backlog's a maximum.
    return VolumeRecorder(
        {&s.iops, &s.ebs_iops, &s.throughput_mib_s, &s.latency_s, &s.credits, &s.backlog_ops}, &s.bound, r.every,
        r.dtype, {&s.iops_max, nullptr, nullptr, &s.latency_max_s, &s.credits_min, &s.backlog_max}, {true, false});
}

InstanceRecorder make_recorder(InstanceSeries& s, const Recording& r) {
    return InstanceRecorder({&s.iops, &s.throughput_mb_s, &s.io_balance_pct, &s.byte_balance_pct}, &s.bound, r.every,
                            r.dtype, {&s.iops_max, nullptr, &s.io_balance_min_pct, &s.byte_balance_min_pct},
                            {true, true});
}

}  // namespace ebssim
