#include "ebssim/volume.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/units.hpp"
#include "validate.hpp"

namespace ebssim {

std::string_view to_string(VolumeType type) {
    switch (type) {
        case VolumeType::gp2: return "gp2";
        case VolumeType::gp3: return "gp3";
    }
    return "?";
}

VolumeType parse_volume_type(std::string_view name) {
    if (name == "gp2") return VolumeType::gp2;
    if (name == "gp3") return VolumeType::gp3;
    throw ConfigError(fmt::format("volume type '{}' is not supported; known types: gp2, gp3", name));
}

namespace gp2 {
double baseline_iops(double size_gib) { return std::clamp(3.0 * size_gib, 100.0, 16000.0); }
double throughput_tier_mib_s(double size_gib) { return size_gib <= 170.0 ? 128.0 : 250.0; }
}  // namespace gp2

namespace {

using detail::require_finite;

void require_unset(double value, std::string_view field, std::string_view why) {
    if (!std::isnan(value)) {
        throw ConfigError(fmt::format("{}={} is not accepted: {}", field, value, why));
    }
}

void require_size(const VolumeSpec& s, double lo, double hi) {
    require_finite(s.size_gib, "size_gib");
    if (s.size_gib < lo || s.size_gib > hi) {
        throw ConfigError(fmt::format("size_gib={} is out of range: {} volumes are {} to {} GiB",
                                      s.size_gib, to_string(s.type), lo, hi));
    }
}

void fill_service_time(const VolumeSpec& s, VolumeParams& p) {
    double latency_ms = std::isnan(s.latency_ms) ? default_ssd_latency_ms : s.latency_ms;
    double transfer = std::isnan(s.transfer_mib_s) ? default_ssd_transfer_mib_s : s.transfer_mib_s;
    require_finite(latency_ms, "latency_ms");
    require_finite(transfer, "transfer_mib_s");
    if (latency_ms <= 0) {
        throw ConfigError(fmt::format("latency_ms={} must be > 0 (unloaded service time)", latency_ms));
    }
    if (transfer <= 0) {
        throw ConfigError(fmt::format("transfer_mib_s={} must be > 0", transfer));
    }
    p.latency_s = latency_ms / 1e3;
    p.transfer_bytes_s = transfer * units::MiB;
}

VolumeParams make_gp2(const VolumeSpec& s) {
    require_size(s, gp2::min_size_gib, gp2::max_size_gib);
    require_unset(s.iops, "iops", "gp2 IOPS are not provisioned (baseline is 3 IOPS per GiB); use gp3, io1 or io2");
    require_unset(s.throughput_mib_s, "throughput_mib_s",
                  "gp2 throughput is not provisioned; only gp3 accepts a throughput setting");
    double balance = std::isnan(s.burst_balance_pct) ? 100.0 : s.burst_balance_pct;
    require_finite(balance, "burst_balance_pct");
    if (balance < 0 || balance > 100) {
        throw ConfigError(fmt::format("burst_balance_pct={} is out of range 0 to 100", balance));
    }
    VolumeParams p;
    p.type = VolumeType::gp2;
    p.size_gib = s.size_gib;
    p.io_unit_bytes = units::ssd_io_unit_bytes;
    p.baseline_iops = gp2::baseline_iops(s.size_gib);
    p.burst_iops = std::max(p.baseline_iops, gp2::burst_iops);
    // Volumes whose baseline reaches the burst rate never spend credits; keep the bucket so
    // BurstBalance reads 100 % as on non-Nitro instances.
    p.credit_capacity = gp2::credit_capacity;
    p.initial_credits = gp2::credit_capacity * balance / 100.0;
    double tier = gp2::throughput_tier_mib_s(s.size_gib);
    // DERIVED rule (docs/model.md): cap = min(tier, IOPS cap x 256 KiB).
    p.tput_burst_bytes_s = std::min(tier, p.burst_iops * 0.25) * units::MiB;
    p.tput_base_bytes_s = std::min(tier, p.baseline_iops * 0.25) * units::MiB;
    fill_service_time(s, p);
    return p;
}

VolumeParams make_gp3(const VolumeSpec& s) {
    require_size(s, gp3::min_size_gib, gp3::max_size_gib);
    require_unset(s.burst_balance_pct, "burst_balance_pct", "gp3 has no burst bucket");
    double iops = std::isnan(s.iops) ? gp3::included_iops : s.iops;
    double tput = std::isnan(s.throughput_mib_s) ? gp3::included_throughput_mib_s : s.throughput_mib_s;
    require_finite(iops, "iops");
    require_finite(tput, "throughput_mib_s");
    if (iops < gp3::included_iops || iops > gp3::max_iops) {
        throw ConfigError(fmt::format("iops={} is out of range: gp3 IOPS are {} to {}", iops,
                                      gp3::included_iops, gp3::max_iops));
    }
    if (iops > gp3::included_iops && iops > gp3::max_iops_per_gib * s.size_gib) {
        throw ConfigError(fmt::format(
            "iops={} exceeds gp3's limit of {} IOPS per GiB: size_gib={} allows at most {} IOPS",
            iops, gp3::max_iops_per_gib, s.size_gib,
            std::max(gp3::included_iops, gp3::max_iops_per_gib * s.size_gib)));
    }
    if (tput < gp3::included_throughput_mib_s || tput > gp3::max_throughput_mib_s) {
        throw ConfigError(fmt::format("throughput_mib_s={} is out of range: gp3 throughput is {} to {} MiB/s",
                                      tput, gp3::included_throughput_mib_s, gp3::max_throughput_mib_s));
    }
    if (tput > gp3::included_throughput_mib_s && tput > gp3::max_mib_s_per_iops * iops) {
        throw ConfigError(fmt::format(
            "throughput_mib_s={} exceeds gp3's limit of {} MiB/s per provisioned IOPS: iops={} allows at most {} MiB/s",
            tput, gp3::max_mib_s_per_iops, iops, gp3::max_mib_s_per_iops * iops));
    }
    VolumeParams p;
    p.type = VolumeType::gp3;
    p.size_gib = s.size_gib;
    p.io_unit_bytes = units::ssd_io_unit_bytes;
    p.baseline_iops = iops;
    p.burst_iops = iops;
    p.tput_burst_bytes_s = tput * units::MiB;
    p.tput_base_bytes_s = tput * units::MiB;
    fill_service_time(s, p);
    return p;
}

}  // namespace

VolumeParams make_volume(const VolumeSpec& spec) {
    switch (spec.type) {
        case VolumeType::gp2: return make_gp2(spec);
        case VolumeType::gp3: return make_gp3(spec);
    }
    throw ConfigError("unknown volume type");
}

}  // namespace ebssim
