#pragma once
/// \file volume.hpp
/// EBS volume types, their AWS configuration rules, and the per-volume limit parameters the
/// engine steps with. Rules and sources: docs/model.md.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace ebssim {

/// The EBS volume types.
enum class VolumeType : std::uint8_t { gp2, gp3 };

/// Name of a volume type as AWS spells it ("gp2").
std::string_view to_string(VolumeType type);
/// Parse an AWS volume type name; throws ConfigError listing the known types.
VolumeType parse_volume_type(std::string_view name);

inline constexpr double unset = std::numeric_limits<double>::quiet_NaN();

/// What a user asks for, as in CreateVolume. NaN fields take AWS's defaults.
struct VolumeSpec {
    VolumeType type = VolumeType::gp2;
    double size_gib = unset;            ///< volume size, GiB
    double iops = unset;                ///< provisioned IOPS (gp3); must be unset for gp2
    double throughput_mib_s = unset;    ///< provisioned throughput, MiB/s (gp3)
    double burst_balance_pct = unset;   ///< initial BurstBalance, percent (gp2); default 100
    double latency_ms = unset;          ///< unloaded latency of a small I/O, ms
    double transfer_mib_s = unset;      ///< per-I/O transfer rate for the size-dependent part of service time, MiB/s
};

/// Limit parameters derived from a validated VolumeSpec; what the step loop reads.
struct VolumeParams {
    VolumeType type = VolumeType::gp2;
    double size_gib = 0;
    double io_unit_bytes = 0;        ///< counting unit: I/Os up to this size count once
    double baseline_iops = 0;        ///< counted ops/s always available (gp2 baseline, gp3 provisioned)
    double burst_iops = 0;           ///< counted ops/s while credits remain (== baseline when no burst)
    double credit_capacity = 0;      ///< I/O credit bucket size; 0 = no bucket
    double initial_credits = 0;
    double tput_burst_bytes_s = 0;   ///< throughput cap while credits remain
    double tput_base_bytes_s = 0;    ///< throughput cap once credits are gone
    double latency_s = 0;            ///< unloaded service time of a zero-byte I/O
    double transfer_bytes_s = 0;     ///< service time grows by io_bytes / transfer_bytes_s

    /// Unloaded service time of one I/O of the given size, seconds.
    [[nodiscard]] double service_time_s(double io_bytes) const noexcept {
        return latency_s + io_bytes / transfer_bytes_s;
    }
    [[nodiscard]] bool has_bucket() const noexcept { return credit_capacity > 0; }
};

/// Validate a spec against AWS's rules and derive its limits; throws ConfigError naming the
/// field, the value and the rule.
VolumeParams make_volume(const VolumeSpec& spec);

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

/// Default unloaded latency (ms) and transfer rate (MiB/s) of the service-time model for SSD types.
inline constexpr double default_ssd_latency_ms = 0.5;
inline constexpr double default_ssd_transfer_mib_s = 1024.0;

}  // namespace ebssim
