#include "ebssim/volume.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/units.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {

using units::hdd_io_unit_bytes;
using units::ssd_io_unit_bytes;
constexpr auto io = BucketKind::io_credits;
constexpr auto mib = BucketKind::throughput_credits;
constexpr auto no_bucket = BucketKind::none;

// Indexed by VolumeType. The numbers are the rule constants of volume.hpp, so the table is an
// index of them, not a second copy.
constexpr VolumeTypeInfo type_table[] = {
    {VolumeType::gp2, "gp2", "General Purpose SSD", Media::ssd, ssd_io_unit_bytes, io, gp2::min_size_gib,
     gp2::max_size_gib, console::default_size_gib, unset, unset},
    {VolumeType::gp3, "gp3", "General Purpose SSD", Media::ssd, ssd_io_unit_bytes, no_bucket, gp3::min_size_gib,
     gp3::max_size_gib, console::default_size_gib, gp3::included_iops, gp3::included_throughput_mib_s},
    {VolumeType::io1, "io1", "Provisioned IOPS SSD", Media::ssd, ssd_io_unit_bytes, no_bucket, io1::min_size_gib,
     io1::max_size_gib, console::default_piops_size_gib, console::default_piops, unset},
    {VolumeType::io2, "io2", "Provisioned IOPS SSD (Block Express)", Media::ssd, ssd_io_unit_bytes, no_bucket,
     io2::min_size_gib, io2::max_size_gib, console::default_piops_size_gib, console::default_piops, unset},
    {VolumeType::st1, "st1", "Throughput Optimized HDD", Media::hdd, hdd_io_unit_bytes, mib, hdd_min_size_gib,
     hdd_max_size_gib, hdd_min_size_gib, unset, unset},
    {VolumeType::sc1, "sc1", "Cold HDD", Media::hdd, hdd_io_unit_bytes, mib, hdd_min_size_gib, hdd_max_size_gib,
     hdd_min_size_gib, unset, unset},
    {VolumeType::standard, "standard", "Magnetic (previous generation)", Media::hdd, hdd_io_unit_bytes, io,
     standard::min_size_gib, standard::max_size_gib, console::default_size_gib, unset, unset},
};

constexpr bool table_in_enum_order() {
    for (std::size_t i = 0; i < std::size(type_table); ++i) {
        if (static_cast<std::size_t>(type_table[i].type) != i) return false;
    }
    return std::size(type_table) == static_cast<std::size_t>(VolumeType::standard) + 1;
}
static_assert(table_in_enum_order(), "type_table has one row per VolumeType, in enum order");

}  // namespace

std::span<const VolumeTypeInfo> volume_types() noexcept { return type_table; }

const VolumeTypeInfo& volume_type_info(VolumeType type) noexcept { return type_table[static_cast<std::size_t>(type)]; }

std::string_view to_string(VolumeType type) { return volume_type_info(type).name; }

std::string_view to_string(Media media) { return media == Media::ssd ? "ssd" : "hdd"; }

std::string_view to_string(BucketKind bucket) {
    switch (bucket) {
        case BucketKind::none: return "none";
        case BucketKind::io_credits: return "io_credits";
        case BucketKind::throughput_credits: return "throughput_credits";
    }
    return "?";
}

VolumeType parse_volume_type(std::string_view name) {
    std::string known;
    for (const VolumeTypeInfo& t : type_table) {
        if (name == t.name) return t.type;
        known += known.empty() ? "" : ", ";
        known += t.name;
    }
    throw ConfigError(fmt::format("volume type '{}' is not an EBS volume type; known types: {}", name, known));
}

namespace gp2 {
double baseline_iops(double size_gib) { return std::clamp(3.0 * size_gib, 100.0, 16000.0); }
double throughput_tier_mib_s(double size_gib) { return size_gib <= 170.0 ? 128.0 : 250.0; }
}  // namespace gp2

namespace io1 {
double throughput_mib_s(double iops) {
    return iops <= 32000.0 ? std::min(500.0, iops * 0.25) : std::min(1000.0, iops / 64.0);
}
}  // namespace io1

namespace io2 {
double throughput_mib_s(double iops) {
    return std::min(4000.0, iops * units::ssd_io_unit_bytes / units::MiB);  // 0.25 MiB/s per IOPS
}
}  // namespace io2

namespace {

using detail::require_finite;

void require_unset(double value, std::string_view field, std::string_view why) {
    if (!std::isnan(value)) {
        throw ConfigError(fmt::format("{}={} is not accepted: {}", field, value, why));
    }
}

// CreateVolume takes whole numbers for Size (GiB), Iops and Throughput (MiB/s).
void require_whole(double value, std::string_view field, std::string_view unit) {
    if (value != std::floor(value)) {
        throw ConfigError(
            fmt::format("{}={} must be a whole number of {}: AWS takes integers here", field, value, unit));
    }
}

void require_size(const VolumeSpec& s, double lo, double hi) {
    require_finite(s.size_gib, "size_gib");
    if (s.size_gib < lo || s.size_gib > hi) {
        throw ConfigError(fmt::format("size_gib={} is out of range: {} volumes are {} to {} GiB", s.size_gib,
                                      to_string(s.type), lo, hi));
    }
    require_whole(s.size_gib, "size_gib", "GiB");
}

double initial_balance(const VolumeSpec& s) {
    double balance = std::isnan(s.burst_balance_pct) ? 100.0 : s.burst_balance_pct;
    require_finite(balance, "burst_balance_pct");
    if (balance < 0 || balance > 100) {
        throw ConfigError(fmt::format("burst_balance_pct={} is out of range 0 to 100", balance));
    }
    return balance;
}

void fill_service_time(const VolumeSpec& s, VolumeParams& p) {
    const ServiceDefaults& d = service_defaults(s.type);
    if (!std::isnan(s.latency_ms) && !(std::isnan(s.read_latency_ms) && std::isnan(s.write_latency_ms))) {
        throw ConfigError(
            fmt::format("latency_ms={} sets reads and writes alike: give it or read_latency_ms/write_latency_ms, "
                        "not both",
                        s.latency_ms));
    }
    auto latency = [&](double given, const char* name, double fallback) {
        const double ms = !std::isnan(given) ? given : !std::isnan(s.latency_ms) ? s.latency_ms : fallback;
        const char* field = !std::isnan(given) || std::isnan(s.latency_ms) ? name : "latency_ms";
        require_finite(ms, field);
        if (!(ms > 0 && ms <= max_service_time_s * 1e3)) {
            throw ConfigError(
                fmt::format("{}={} must be > 0 and at most {:g} ms (the unloaded service time; "
                            "max_service_time_s={:g})",
                            field, ms, max_service_time_s * 1e3, max_service_time_s));
        }
        return ms / 1e3;
    };
    p.read_latency_s = latency(s.read_latency_ms, "read_latency_ms", d.read_latency_ms);
    p.write_latency_s = latency(s.write_latency_ms, "write_latency_ms", d.write_latency_ms);
    const double transfer = std::isnan(s.transfer_mib_s) ? d.transfer_mib_s : s.transfer_mib_s;
    require_finite(transfer, "transfer_mib_s");
    // A 1 MiB I/O's transfer may take at most max_service_time_s.
    if (!(transfer >= 1.0 / max_service_time_s)) {
        throw ConfigError(
            fmt::format("transfer_mib_s={} must be at least {:g} MiB/s (a 1 MiB I/O in at most "
                        "max_service_time_s={:g} s)",
                        transfer, 1.0 / max_service_time_s, max_service_time_s));
    }
    p.transfer_bytes_s = transfer * units::MiB;
    p.latency_cv = std::isnan(s.latency_cv) ? d.latency_cv : s.latency_cv;
    if (!(p.latency_cv >= min_service_cv && p.latency_cv <= max_cv)) {
        throw ConfigError(fmt::format(
            "latency_cv={} must be between {:g} and {:g} (the coefficient of variation of the service time)",
            p.latency_cv, min_service_cv, max_cv));
    }
    if (!std::isnan(s.wait_cv) && !(s.wait_cv >= 0 && s.wait_cv <= max_cv)) {
        throw ConfigError(
            fmt::format("wait_cv={} must be between 0 and {:g} (the coefficient of variation of the "
                        "wait under the volume's limits; 0: every I/O waits the mean)",
                        s.wait_cv, max_cv));
    }
}

// The limiter's token bucket (docs/model.md, "Overshoot"): its depth and starting balance.
void fill_overshoot(const VolumeSpec& s, VolumeParams& p) {
    p.overshoot_s = std::isnan(s.overshoot_s) ? 0.0 : s.overshoot_s;
    require_finite(p.overshoot_s, "overshoot_s");
    if (!(p.overshoot_s >= 0 && p.overshoot_s <= max_overshoot_s)) {
        throw ConfigError(
            fmt::format("overshoot_s={} must be between 0 and {:g} seconds (the seconds of its limits a volume "
                        "saves below them and spends above them; max_overshoot_s={:g})",
                        p.overshoot_s, max_overshoot_s, max_overshoot_s));
    }
    p.initial_overshoot_s = std::isnan(s.overshoot_balance_s) ? 0.0 : s.overshoot_balance_s;
    require_finite(p.initial_overshoot_s, "overshoot_balance_s");
    if (!(p.initial_overshoot_s >= 0 && p.initial_overshoot_s <= p.overshoot_s)) {
        throw ConfigError(
            fmt::format("overshoot_balance_s={} must be between 0 and overshoot_s={} (the seconds saved at the start)",
                        p.initial_overshoot_s, p.overshoot_s));
    }
}

// Types whose performance is not provisioned reject iops and throughput settings.
void reject_provisioning(const VolumeSpec& s, std::string_view why_iops) {
    require_unset(s.iops, "iops", why_iops);
    require_unset(
        s.throughput_mib_s, "throughput_mib_s",
        fmt::format("{} throughput is not provisioned; only gp3 accepts a throughput setting", to_string(s.type)));
}

VolumeParams make_gp2(const VolumeSpec& s) {
    require_size(s, gp2::min_size_gib, gp2::max_size_gib);
    reject_provisioning(s, "gp2 IOPS are not provisioned (baseline is 3 IOPS per GiB); use gp3, io1 or io2");
    double balance = initial_balance(s);
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
    require_whole(iops, "iops", "IOPS");
    require_whole(tput, "throughput_mib_s", "MiB/s");
    if (iops < gp3::included_iops || iops > gp3::max_iops) {
        throw ConfigError(
            fmt::format("iops={} is out of range: gp3 IOPS are {} to {}", iops, gp3::included_iops, gp3::max_iops));
    }
    if (iops > gp3::included_iops && iops > gp3::max_iops_per_gib * s.size_gib) {
        throw ConfigError(fmt::format(
            "iops={} exceeds gp3's limit of {} IOPS per GiB: size_gib={} allows at most {} IOPS", iops,
            gp3::max_iops_per_gib, s.size_gib, std::max(gp3::included_iops, gp3::max_iops_per_gib * s.size_gib)));
    }
    if (tput < gp3::included_throughput_mib_s || tput > gp3::max_throughput_mib_s) {
        throw ConfigError(fmt::format("throughput_mib_s={} is out of range: gp3 throughput is {} to {} MiB/s", tput,
                                      gp3::included_throughput_mib_s, gp3::max_throughput_mib_s));
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

VolumeParams make_piops(const VolumeSpec& s, bool nitro) {
    const bool is_io1 = s.type == VolumeType::io1;
    const double min_size = is_io1 ? io1::min_size_gib : io2::min_size_gib;
    const double max_size = is_io1 ? io1::max_size_gib : io2::max_size_gib;
    const double min_iops = is_io1 ? io1::min_iops : io2::min_iops;
    const double max_iops = is_io1 ? io1::max_iops : io2::max_iops;
    const double ratio = is_io1 ? io1::max_iops_per_gib : io2::max_iops_per_gib;
    const auto name = to_string(s.type);
    require_size(s, min_size, max_size);
    require_unset(s.burst_balance_pct, "burst_balance_pct", fmt::format("{} has no burst bucket", name));
    require_unset(
        s.throughput_mib_s, "throughput_mib_s",
        fmt::format("{} throughput follows its provisioned IOPS; only gp3 accepts a throughput setting", name));
    if (std::isnan(s.iops)) {
        throw ConfigError(
            fmt::format("iops is required for {}: provisioned IOPS from {} to {}", name, min_iops, max_iops));
    }
    require_finite(s.iops, "iops");
    require_whole(s.iops, "iops", "IOPS");
    if (s.iops < min_iops || s.iops > max_iops) {
        throw ConfigError(
            fmt::format("iops={} is out of range: {} IOPS are {} to {}", s.iops, name, min_iops, max_iops));
    }
    if (s.iops > ratio * s.size_gib) {
        throw ConfigError(
            fmt::format("iops={} exceeds {}'s limit of {} IOPS per GiB: size_gib={} allows at most {} IOPS", s.iops,
                        name, ratio, s.size_gib, ratio * s.size_gib));
    }
    if (!nitro && !is_io1 && s.iops > io2::max_iops_non_nitro_attach) {
        throw ConfigError(
            fmt::format("iops={}: an io2 volume provisioned above {} IOPS cannot be attached to a non-Nitro instance",
                        s.iops, io2::max_iops_non_nitro_attach));
    }
    VolumeParams p;
    p.type = s.type;
    p.nitro = nitro;
    p.size_gib = s.size_gib;
    p.io_unit_bytes = units::ssd_io_unit_bytes;
    double iops = s.iops;
    double tput = is_io1 ? io1::throughput_mib_s(iops) : io2::throughput_mib_s(iops);
    if (!nitro) {
        iops = std::min(iops, non_nitro_max_iops);
        tput = std::min(tput, non_nitro_max_mib_s);
    }
    p.baseline_iops = iops;
    p.burst_iops = iops;
    p.tput_burst_bytes_s = tput * units::MiB;
    p.tput_base_bytes_s = tput * units::MiB;
    fill_service_time(s, p);
    return p;
}

// st1/sc1: credits are MiB of throughput; every I/O up to 1 MiB costs one 1 MiB credit, so the
// engine counts operations in 1 MiB units and the bucket holds the volume's size in MiB.
VolumeParams make_hdd(const VolumeSpec& s) {
    const HddRates& r = s.type == VolumeType::st1 ? st1_rates : sc1_rates;
    require_size(s, hdd_min_size_gib, hdd_max_size_gib);
    reject_provisioning(
        s, fmt::format("{} performance follows its size (MiB/s per TiB); IOPS are not provisioned", to_string(s.type)));
    double balance = initial_balance(s);
    const double tib = s.size_gib / 1024.0;
    const double base = std::min(r.baseline_cap_mib_s, r.baseline_mib_s_per_tib * tib);
    const double burst = std::min(r.burst_cap_mib_s, r.burst_mib_s_per_tib * tib);
    VolumeParams p;
    p.type = s.type;
    p.size_gib = s.size_gib;
    p.io_unit_bytes = units::hdd_io_unit_bytes;
    p.baseline_iops = std::min(base, r.max_iops);
    p.burst_iops = std::min(burst, r.max_iops);
    p.credit_capacity = s.size_gib * 1024.0;  // a full bucket scans the whole volume once
    p.initial_credits = p.credit_capacity * balance / 100.0;
    p.tput_burst_bytes_s = burst * units::MiB;
    p.tput_base_bytes_s = base * units::MiB;
    fill_service_time(s, p);
    return p;
}

VolumeParams make_standard(const VolumeSpec& s) {
    require_size(s, standard::min_size_gib, standard::max_size_gib);
    reject_provisioning(s, "standard (magnetic) IOPS are not provisioned");
    double balance = initial_balance(s);
    VolumeParams p;
    p.type = VolumeType::standard;
    p.size_gib = s.size_gib;
    // Magnetic: counted in 1 MiB units like the HDD types (assumption, docs/model.md).
    p.io_unit_bytes = units::hdd_io_unit_bytes;
    p.baseline_iops = standard::baseline_iops;
    p.burst_iops = standard::burst_iops;
    p.credit_capacity = standard::credit_capacity;
    p.initial_credits = standard::credit_capacity * balance / 100.0;
    p.tput_burst_bytes_s = standard::burst_mib_s * units::MiB;
    p.tput_base_bytes_s = standard::baseline_mib_s * units::MiB;
    fill_service_time(s, p);
    return p;
}

}  // namespace

VolumeParams make_volume(const VolumeSpec& spec, bool nitro) {
    VolumeParams p;
    switch (spec.type) {
        case VolumeType::gp2: p = make_gp2(spec); break;
        case VolumeType::gp3: p = make_gp3(spec); break;
        case VolumeType::io1:
        case VolumeType::io2: p = make_piops(spec, nitro); break;
        case VolumeType::st1:
        case VolumeType::sc1: p = make_hdd(spec); break;
        case VolumeType::standard: p = make_standard(spec); break;
    }
    p.nitro = nitro;
    p.wait_cv = std::isnan(spec.wait_cv) ? default_wait_spread(nitro).volume_cv : spec.wait_cv;
    fill_overshoot(spec, p);
    return p;
}

}  // namespace ebssim
