#pragma once
/// \file totals.hpp
/// What a run leaves besides its series: a volume's bucket and backlog state between steps,
/// and the per-run totals of each volume and of the instance, cliff episodes included.

#include <cstdint>
#include <vector>

#include "ebssim/bound.hpp"
#include "ebssim/volume.hpp"

namespace ebssim {

/// A volume's state between steps (and between runs): its credits and what waits in its queue.
struct VolumeState {
    double credits = 0;
    double backlog_ops = 0;
    double backlog_bytes = 0;
    double backlog_counted = 0;
};

/// One stretch of time in which a credit bucket was empty (a "cliff" and what follows it, until
/// the bucket earns again). Times are simulated seconds.
struct CliffEpisode {
    /// When the bucket ran dry: interpolated inside the step in which it did, at the rate the
    /// demand drained it; the start of the run when it starts the run empty under demand that
    /// spends faster than the bucket earns.
    double start_s = unset;
    /// Start of the first step that ends with credits in the bucket again (the demand fell below
    /// what the bucket earns); NaN when the bucket was still empty at the end of the run.
    double end_s = unset;
};

/// Cheap per-run totals of one volume, always computed.
struct VolumeTotals {
    double demanded_ops = 0;  ///< I/Os that arrived (open loop) or were issued (closed loop)
    double demanded_bytes = 0;
    double served_ops = 0;
    double served_bytes = 0;
    double served_counted = 0;  ///< EBS-counted operations
    double latency_ops_s = 0;   ///< sum over steps of latency x I/Os completed
    double backlog_ops = 0;     ///< queued at the end of the run (open loop)
    double backlog_bytes = 0;
    double credits_end = 0;
    double cliff_time_s = unset;              ///< first time the credit bucket ran dry in this run (NaN: never)
    std::int64_t steps_bound[n_bounds] = {};  ///< steps spent in each Bound
    /// Every episode of this run in which the credit bucket was empty, in order; the first
    /// starts at cliff_time_s. Recorded whether or not the run records series.
    std::vector<CliffEpisode> cliffs;
};

/// Per-run totals of the instance.
struct InstanceTotals {
    double served_counted = 0;
    double served_bytes = 0;
    double io_credits_end = 0;
    double bytes_credits_end = 0;
    double io_cliff_time_s = unset;     ///< first time EBSIOBalance% reached 0 in this run
    double bytes_cliff_time_s = unset;  ///< first time EBSByteBalance% reached 0 in this run
    std::int64_t steps_bound[n_bounds] = {};
    std::vector<CliffEpisode> io_cliffs;     ///< every episode with EBSIOBalance% at 0, in order
    std::vector<CliffEpisode> bytes_cliffs;  ///< every episode with EBSByteBalance% at 0, in order
};

}  // namespace ebssim
