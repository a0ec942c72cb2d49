#pragma once
/// \file burst.hpp
/// Closed forms for a credit bucket under constant demand: how long a burst lasts and how long
/// a refill takes. They reproduce AWS's gp2 burst table and let callers skip constant stretches.

#include "ebssim/volume.hpp"

namespace ebssim {

/// Seconds until the bucket is empty when the volume is asked for `counted_iops` EBS-counted
/// operations per second, starting from `credits` (NaN: the volume's initial balance).
/// Returns +inf when the demand never drains the bucket (at or below baseline, or no bucket).
double burst_duration_s(const VolumeParams& p, double counted_iops, double credits = unset);

/// Seconds for the bucket to go from `credits` (NaN: empty) to full while the volume serves
/// `counted_iops` (0: idle). Returns +inf when demand is at or above baseline.
double refill_time_s(const VolumeParams& p, double counted_iops = 0.0, double credits = unset);

}  // namespace ebssim
