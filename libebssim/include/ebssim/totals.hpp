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

/// The seconds of a volume's IOPS limit and of its throughput limit saved for overshoot
/// (VolumeParams::overshoot_s; 0 when the volume has none). Apart from VolumeState: a stepper of
/// a volume without overshoot carries none of it (a larger VolumeState cost the step loop 3 %).
struct OvershootState {
    double iops_s = 0;
    double bytes_s = 0;
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

/// The rule that makes a run's cliffs out of its episodes (docs/model.md, "Cliffs"). A bucket
/// that demand keeps at its baseline touches empty and earns a little again step after step:
/// the engine records each touch as an episode, but it is one cliff. Two parameters:
struct CliffRule {
    static constexpr double default_merge_gap_s = 300.0;
    static constexpr double default_min_duration_s = 60.0;
    /// Episodes apart by at most merge_gap_s of credits in the bucket are one cliff, from the
    /// first one's start to the last one's end. NaN (the default): max(default_merge_gap_s, two
    /// steps), so that a refill of a step or two merges also at coarse steps (dt = 300 s).
    double merge_gap_s = unset;
    /// A cliff, after merging, that ended less than min_duration_s after it started is none (the
    /// bucket touched empty and earned at once). One still open at the end of the run is kept.
    double min_duration_s = default_min_duration_s;
};

/// The cliffs of a run under `rule` from its episodes (in order of start, as the totals hold
/// them) and its step dt_s: episodes merged across short refills, then short ones dropped.
/// Computed after the run, from the totals; the step loop records every episode as it was.
/// Throws ConfigError for a negative parameter (or a NaN min_duration_s), or a step that is not
/// positive.
std::vector<CliffEpisode> merge_cliffs(const std::vector<CliffEpisode>& episodes, double dt_s,
                                       const CliffRule& rule = {});

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
