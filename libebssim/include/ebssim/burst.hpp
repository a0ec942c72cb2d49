#pragma once
/// \file burst.hpp
/// Closed forms under constant demand: what a closed loop reaches on a volume, how long a burst
/// lasts and how long a refill takes. They reproduce AWS's gp2 burst table, agree with what the
/// engine simulates (the same rules: workload.hpp, latency.hpp), and let callers skip constant
/// stretches.

#include "ebssim/bound.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"

namespace ebssim {

/// The steady state of a closed loop on one volume (no instance limit).
struct ClosedLoopRate {
    double offered_iops = 0;        ///< I/Os per second the loop asks for, unthrottled (offered_iops())
    double iops = 0;                ///< application I/Os completed per second
    double counted_iops = 0;        ///< EBS-counted operations per second
    double throughput_bytes_s = 0;  ///< bytes per second
    double latency_s = 0;           ///< mean latency (closed_loop_latency_s)
    Bound bound = Bound::demand;    ///< demand, volume_iops or volume_throughput: what held it back
};

/// What a closed loop completes on volume `p`, as the engine serves it in every step:
/// min(offered, IOPS cap / counted per I/O, throughput cap / io_bytes). With credits the burst
/// caps apply (gp2, st1, sc1, standard while their bucket holds credits; the provisioned caps
/// otherwise), without them the baseline caps (a bucket that is empty). Validates the workload
/// (ConfigError).
ClosedLoopRate closed_loop_rate(const VolumeParams& p, const ClosedLoop& w, bool with_credits = true);

/// Seconds until a closed loop empties volume `p`'s bucket, starting from `credits` (NaN: the
/// volume's initial balance): burst_duration_s at the loop's counted rate with credits. +inf
/// when it never does.
double cliff_time_s(const VolumeParams& p, const ClosedLoop& w, double credits = unset);

/// Seconds until the bucket is empty when the volume is asked for `counted_iops` EBS-counted
/// operations per second, starting from `credits` (NaN: the volume's initial balance).
/// Returns +inf when the demand never drains the bucket (at or below baseline, or no bucket).
double burst_duration_s(const VolumeParams& p, double counted_iops, double credits = unset);

/// Seconds for the bucket to go from `credits` (NaN: empty) to full while the volume serves
/// `counted_iops` (0: idle). Returns +inf when demand is at or above baseline.
double refill_time_s(const VolumeParams& p, double counted_iops = 0.0, double credits = unset);

}  // namespace ebssim
