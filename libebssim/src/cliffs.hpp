#pragma once
// Private to the library: the bookkeeping of cliff episodes (CliffEpisode), shared by the scalar
// step loop (stepper.hpp) and the lockstep kernel (lockstep.cpp), so that both follow one rule.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ebssim/totals.hpp"

namespace ebssim::detail {

// The episodes of one run in which a bucket was empty (CliffEpisode). Each step ends with the
// bucket empty or not; only a change costs more than a comparison.
class CliffTracker {
public:
    /// True when the bucket is empty at the end of a step (`after`) and the tracker does not yet
    /// know it: call note() then.
    [[nodiscard, gnu::always_inline]] bool changes(double after) const noexcept { return (after <= 0) != dry_; }
    /// True while an episode is open (the bucket was empty at the end of the last noted step).
    [[nodiscard]] bool dry() const noexcept { return dry_; }

    /// The bucket went from `before` to `after` credits in the step starting at step_start_s.
    /// It runs dry in this step, or was already dry (at the start of the run, or at exactly the
    /// rate it earns) and the demand now spends faster than it earns: an episode starts,
    /// interpolated inside the step at the net drain per step the demand asked for (`spend`).
    /// It earns again: the open episode ends at the start of this step.
    void note(double before, double after, double spend, double step_start_s, double dt,
              std::vector<CliffEpisode>& episodes, double& first) {
        if (after > 0) {
            episodes.back().end_s = step_start_s;
            dry_ = false;
            return;
        }
        if (!(before > 0 || spend > 0)) return;  // empty, but not drained by this step's demand
        const double at = step_start_s + dt * (spend > 0 ? std::min(1.0, before / spend) : 1.0);
        episodes.push_back({at, std::numeric_limits<double>::quiet_NaN()});
        if (std::isnan(first)) first = at;
        dry_ = true;
    }

private:
    bool dry_ = false;  // an episode is open
};

/// The credits a volume's demand drains per step while credits last, before the instance's
/// share: what it has available (counted), at most the burst rate and, for the bytes available,
/// the throughput cap with credits. Used to place a cliff inside its step.
[[nodiscard]] inline double credit_drain(double av_cnt, double av_bytes, double burst_cap, double tput_hi) noexcept {
    return std::min(
        {av_cnt, burst_cap, av_bytes > 0 ? tput_hi / av_bytes * av_cnt : std::numeric_limits<double>::infinity()});
}

}  // namespace ebssim::detail
