#pragma once
/// \file burst.hpp
/// Closed forms under constant demand: what a closed loop reaches on a volume, how long a burst
/// lasts and how long a refill takes. They reproduce AWS's gp2 burst table, agree with what the
/// engine simulates (the same rules: workload.hpp, latency.hpp), and let callers skip constant
/// stretches.

#include <limits>

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

/// An open loop whose arrivals are the same every second: a PiecewiseOpenLoop whose segments
/// all have one rate (or that has one segment).
struct SteadyOpenLoop {
    double iops = 0;             ///< I/Os arriving per second
    double bytes_per_s = 0;      ///< their bytes per second
    double read_fraction = 1.0;  ///< share of reads (the service time's, for max_in_flight)
    Pattern pattern = Pattern::random;
    double service_time_s = unset;  ///< default: the volume's model at the mean I/O size
    double max_in_flight = std::numeric_limits<double>::infinity();  ///< I/Os outstanding at the device at most
};

/// Seconds until a steady open loop empties volume `p`'s bucket, starting from `credits` (NaN:
/// the volume's initial balance): burst_duration_s at the counted rate the engine serves it
/// while credits last, min(arrivals, the caps with credits), the rest queueing, and at most
/// max_in_flight / service time I/Os per second. +inf when it never does. With a finite
/// max_in_flight a simulated run's cliff is within a step of it (the step places a cliff at
/// the volume's own drain rate). Validates the demand (ConfigError).
double cliff_time_s(const VolumeParams& p, const SteadyOpenLoop& w, double credits = unset);

/// Seconds until the bucket is empty when the volume is asked for `counted_iops` EBS-counted
/// operations per second, starting from `credits` (NaN: the volume's initial balance).
/// Returns +inf when the demand never drains the bucket (at or below baseline, or no bucket).
double burst_duration_s(const VolumeParams& p, double counted_iops, double credits = unset);

/// Seconds for the bucket to go from `credits` (NaN: empty) to full while the volume serves
/// `counted_iops` (0: idle). Returns +inf when demand is at or above baseline.
double refill_time_s(const VolumeParams& p, double counted_iops = 0.0, double credits = unset);

}  // namespace ebssim
