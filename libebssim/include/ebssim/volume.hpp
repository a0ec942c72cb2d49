#pragma once
/// \file volume.hpp
/// EBS volume types, their AWS configuration rules, and the per-volume limit parameters the
/// engine steps with. Rules and sources: docs/model.md.

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "ebssim/units.hpp"

namespace ebssim {

/// The EBS volume types.
enum class VolumeType : std::uint8_t { gp2, gp3, io1, io2, st1, sc1, standard };

inline constexpr double unset = std::numeric_limits<double>::quiet_NaN();

/// The kind of device behind a volume type.
enum class Media : std::uint8_t { ssd, hdd };

/// What a volume type's burst bucket holds.
enum class BucketKind : std::uint8_t {
    none,                ///< no bucket: performance is provisioned (gp3, io1, io2)
    io_credits,          ///< I/O credits, one per counted operation (gp2, standard)
    throughput_credits,  ///< MiB of throughput, one per counted 1 MiB operation (st1, sc1)
};

/// One row of the volume-type table: what a front end needs to know about a type before any
/// volume exists. The one list of the types; bindings and command lines read it, never repeat it.
struct VolumeTypeInfo {
    VolumeType type;
    std::string_view name;            ///< as AWS spells it: "gp2"
    std::string_view description;     ///< AWS's name for the family: "General Purpose SSD"
    Media media;                      ///< standard (magnetic, previous generation) is an HDD
    double io_unit_bytes;             ///< EBS counts an I/O of up to this size as one operation
    BucketKind bucket;                ///< what the burst bucket holds
    double min_size_gib;              ///< smallest size AWS accepts
    double max_size_gib;              ///< largest size AWS accepts
    double default_size_gib;          ///< the EC2 console's size for a new volume
    double default_iops;              ///< the console's IOPS for a new volume; unset where IOPS follow the size
    double default_throughput_mib_s;  ///< the console's throughput for a new volume; unset where not provisioned

    [[nodiscard]] constexpr bool has_bucket() const noexcept { return bucket != BucketKind::none; }
};

/// Every volume type, in the order AWS lists them (gp2 gp3 io1 io2 st1 sc1 standard).
[[nodiscard]] std::span<const VolumeTypeInfo> volume_types() noexcept;
/// The table row of one type.
[[nodiscard]] const VolumeTypeInfo& volume_type_info(VolumeType type) noexcept;

/// Name of a volume type as AWS spells it ("gp2").
std::string_view to_string(VolumeType type);
/// "ssd" or "hdd".
std::string_view to_string(Media media);
/// "none", "io_credits" or "throughput_credits".
std::string_view to_string(BucketKind bucket);
/// Parse an AWS volume type name; throws ConfigError listing the known types.
VolumeType parse_volume_type(std::string_view name);

/// What a user asks for, as in CreateVolume. NaN fields take AWS's defaults.
struct VolumeSpec {
    VolumeType type = VolumeType::gp2;
    double size_gib = unset;           ///< volume size, GiB
    double iops = unset;               ///< provisioned IOPS (gp3, io1, io2); rejected for the others
    double throughput_mib_s = unset;   ///< provisioned throughput, MiB/s (gp3 only)
    double burst_balance_pct = unset;  ///< initial BurstBalance, percent (gp2, st1, sc1, standard); default 100
    /// Unloaded latency of a small (zero-byte) I/O, ms, for reads and writes alike; give it or
    /// the per-direction values, not both.
    double latency_ms = unset;
    double read_latency_ms = unset;   ///< a read's unloaded latency, ms (default: the family's)
    double write_latency_ms = unset;  ///< a write's, ms (default: the family's)
    double latency_cv = unset;        ///< coefficient of variation of the service time (default: the family's)
    /// Coefficient of variation of the wait of I/Os this volume's limits hold back (default: the
    /// platform's, default_wait_spread in latency.hpp).
    double wait_cv = unset;
    double transfer_mib_s = unset;  ///< per-I/O transfer rate for the size-dependent part of service time, MiB/s
    /// Seconds of each of the volume's rate limits (IOPS, throughput) that it saves while it runs
    /// below the limit and may spend above it: the depth of the limiter's token bucket
    /// (docs/model.md, "Overshoot"). Default 0 (the fio front end: nitro_overshoot_s on Nitro).
    double overshoot_s = unset;
    /// Seconds of each limit saved when the simulation starts, 0 to overshoot_s (default 0: as
    /// after a stretch held at the limits; overshoot_s after an idle second or more).
    double overshoot_balance_s = unset;
};

/// Limit parameters derived from a validated VolumeSpec; what the step loop reads.
struct VolumeParams {
    VolumeType type = VolumeType::gp2;
    double size_gib = 0;
    bool nitro = true;         ///< limits as attached to a Nitro instance
    double io_unit_bytes = 0;  ///< counting unit: I/Os up to this size count once
    /// Merge floor: sequential I/Os of at least this size merge up to the unit; smaller ones
    /// count one operation each, sequential or not (AWS's rule, units::merge_min_bytes).
    double merge_min_bytes = units::merge_min_bytes;
    double baseline_iops = 0;    ///< counted ops/s always available (gp2 baseline, gp3 provisioned)
    double burst_iops = 0;       ///< counted ops/s while credits remain (== baseline when no burst)
    double credit_capacity = 0;  ///< I/O credit bucket size; 0 = no bucket
    double initial_credits = 0;
    double tput_burst_bytes_s = 0;   ///< throughput cap while credits remain
    double tput_base_bytes_s = 0;    ///< throughput cap once credits are gone
    double read_latency_s = 0;       ///< unloaded service time of a zero-byte read
    double write_latency_s = 0;      ///< of a zero-byte write
    double transfer_bytes_s = 0;     ///< service time grows by io_bytes / transfer_bytes_s
    double latency_cv = 0;           ///< coefficient of variation of the service time
    double wait_cv = 0;              ///< of the wait under this volume's limits
    double overshoot_s = 0;          ///< depth of each rate limit's token bucket, seconds of the limit
    double initial_overshoot_s = 0;  ///< seconds of each limit saved at the start

    /// Unloaded latency of a zero-byte I/O of a mix with this share of reads: the I/O-weighted
    /// mean (exactly the common value when reads and writes take the same).
    [[nodiscard]] double latency_at(double read_fraction) const noexcept {
        return read_latency_s == write_latency_s ? read_latency_s
                                                 : write_latency_s + read_fraction * (read_latency_s - write_latency_s);
    }
    /// Mean unloaded service time of one I/O of the given size and share of reads, seconds.
    [[nodiscard]] double service_time_s(double io_bytes, double read_fraction) const noexcept {
        return latency_at(read_fraction) + io_bytes / transfer_bytes_s;
    }
    [[nodiscard]] bool has_bucket() const noexcept { return credit_capacity > 0; }
    [[nodiscard]] bool overshoots() const noexcept { return overshoot_s > 0; }
};

/// The largest overshoot_s a volume takes, seconds. The limiter's bucket measured on real volumes
/// holds about a second (docs/model.md, "Overshoot"); tens of seconds would be a burst bucket,
/// which gp2, st1 and sc1 model as such.
inline constexpr double max_overshoot_s = 10.0;
/// The limiter's depth on Nitro: a second of each limit, data set 05's (docs/model.md,
/// "Overshoot"); on Xen none (data set 01's runs went over their caps by a steady 2-3 %, not by a
/// bucket). The engine's default overshoot_s is 0: every step of a volume with overshoot pays for
/// it (the step loop ran 1.3-1.7x slower with it on every volume, docs/performance.md), and over
/// hours it moves less than a second's worth. The fio front end, whose runs are seconds long,
/// gives it to the volumes it simulates on Nitro by default.
inline constexpr double nitro_overshoot_s = 1.0;

/// Validate a spec against AWS's rules and derive its limits; throws ConfigError naming the
/// field, the value and the rule. `nitro` = false applies the limits of a volume attached to a
/// Xen (non-Nitro) instance: io1/io2 deliver at most 32,000 IOPS and 500 MiB/s there, and io2
/// provisioned above 64,000 IOPS cannot be attached at all.
VolumeParams make_volume(const VolumeSpec& spec, bool nitro = true);

/// True for st1 and sc1, the current-generation HDD types (throughput-credit buckets). standard,
/// magnetic, is an HDD too (its table row says so) but is not one of these.
[[nodiscard]] constexpr bool is_hdd(VolumeType t) noexcept { return t == VolumeType::st1 || t == VolumeType::sc1; }

namespace gp2 {
inline constexpr double credit_capacity = 5.4e6;  ///< I/O credits in a full bucket
inline constexpr double burst_iops = 3000.0;
inline constexpr double min_size_gib = 1.0;
inline constexpr double max_size_gib = 16384.0;
/// Baseline IOPS: 3 per GiB, at least 100, at most 16,000.
double baseline_iops(double size_gib);
/// Throughput tier: 128 MiB/s up to 170 GiB, 250 MiB/s above (250 only with credits below 334 GiB).
double throughput_tier_mib_s(double size_gib);
}  // namespace gp2

namespace gp3 {
inline constexpr double included_iops = 3000.0;
inline constexpr double included_throughput_mib_s = 125.0;
inline constexpr double max_iops = 80000.0;
inline constexpr double max_throughput_mib_s = 2000.0;
inline constexpr double max_iops_per_gib = 500.0;
inline constexpr double max_mib_s_per_iops = 0.25;
inline constexpr double min_size_gib = 1.0;
inline constexpr double max_size_gib = 65536.0;
}  // namespace gp3

namespace io1 {
inline constexpr double min_size_gib = 4.0;
inline constexpr double max_size_gib = 16384.0;
inline constexpr double min_iops = 100.0;
inline constexpr double max_iops = 64000.0;
inline constexpr double max_iops_per_gib = 50.0;
/// 256 KiB per IOPS up to 500 MiB/s at or below 32,000 IOPS; 16 KiB per IOPS above, up to 1,000 MiB/s.
double throughput_mib_s(double iops);
}  // namespace io1

namespace io2 {
inline constexpr double min_size_gib = 4.0;
inline constexpr double max_size_gib = 65536.0;
inline constexpr double min_iops = 100.0;
inline constexpr double max_iops = 256000.0;
inline constexpr double max_iops_per_gib = 1000.0;
inline constexpr double max_iops_non_nitro_attach = 64000.0;
/// Block Express: 0.25 MiB/s per provisioned IOPS (one 256 KiB operation per IOPS), up to
/// 4,000 MiB/s, reached at 16,000 IOPS. AWS quotes 0.256 MiB/s per IOPS, which 256 KiB
/// counting cannot serve: the model reports what it can reach (docs/model.md).
double throughput_mib_s(double iops);
}  // namespace io2

/// io1/io2 attached to a non-Nitro instance deliver at most this many IOPS (and 500 MiB/s).
inline constexpr double non_nitro_max_iops = 32000.0;
inline constexpr double non_nitro_max_mib_s = 500.0;

/// st1 and sc1: throughput-credit buckets, MiB/s per TiB with caps.
struct HddRates {
    double baseline_mib_s_per_tib;
    double baseline_cap_mib_s;
    double burst_mib_s_per_tib;
    double burst_cap_mib_s;
    double max_iops;
};
inline constexpr HddRates st1_rates{40.0, 500.0, 250.0, 500.0, 500.0};
inline constexpr HddRates sc1_rates{12.0, 192.0, 80.0, 250.0, 250.0};
inline constexpr double hdd_min_size_gib = 125.0;
inline constexpr double hdd_max_size_gib = 16384.0;

/// standard (magnetic): AWS documents only ranges (about 100 IOPS average, bursts to hundreds,
/// 40-90 MiB/s). ebssim's assumption: a gp2-like bucket, see docs/model.md.
namespace standard {
inline constexpr double min_size_gib = 1.0;
inline constexpr double max_size_gib = 1024.0;
inline constexpr double baseline_iops = 100.0;
inline constexpr double burst_iops = 200.0;
inline constexpr double credit_capacity = 360000.0;  ///< one hour of bursting at 200 IOPS
inline constexpr double baseline_mib_s = 40.0;
inline constexpr double burst_mib_s = 90.0;
}  // namespace standard

/// The service-time model's defaults of a volume family (docs/model.md, "Service time", with the
/// measurements and statements behind each): unloaded latency of a zero-byte read and write, ms;
/// the per-I/O transfer rate, MiB/s; the service time's coefficient of variation.
struct ServiceDefaults {
    double read_latency_ms;
    double write_latency_ms;
    double transfer_mib_s;
    double latency_cv;
};
/// gp2, gp3, io1: AWS says "single-digit millisecond"; no unthrottled measurement in the data.
inline constexpr ServiceDefaults ssd_service{0.5, 0.5, 1024.0, 0.5};
/// io2 (Block Express): 16 KiB reads measured at 0.43-0.48 ms, cv 0.11-0.14 (data set 03); writes
/// held by a 40,000 IOPS cap at 0.40 ms (so below that, unthrottled).
inline constexpr ServiceDefaults io2_service{0.44, 0.335, 1024.0, 0.12};
/// st1, sc1, standard: a seek and half a rotation.
inline constexpr ServiceDefaults hdd_service{5.0, 5.0, 250.0, 0.5};
/// The family defaults of a volume type.
[[nodiscard]] constexpr const ServiceDefaults& service_defaults(VolumeType t) noexcept {
    switch (t) {
        case VolumeType::io2: return io2_service;
        case VolumeType::st1:
        case VolumeType::sc1:
        case VolumeType::standard: return hdd_service;
        case VolumeType::gp2:
        case VolumeType::gp3:
        case VolumeType::io1: return ssd_service;
    }
    return ssd_service;
}

/// The EC2 console's defaults for a new volume: 8 GiB (gp2, gp3, standard), 100 GiB with 3,000
/// IOPS (io1, io2), and the 125 GiB minimum (st1, sc1). CreateVolume itself has no default size.
namespace console {
inline constexpr double default_size_gib = 8.0;
inline constexpr double default_piops_size_gib = 100.0;
inline constexpr double default_piops = 3000.0;
}  // namespace console

}  // namespace ebssim
