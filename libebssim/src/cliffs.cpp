// The cliffs of a run from its episodes (totals.hpp, CliffRule): the one rule that results,
// plots and capacity plans report cliffs by. After the run, from the totals; the step loops
// record every episode (cliffs.hpp) and are not touched.

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/totals.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {
void require_duration(double value, const char* field) {
    // inf is allowed: merge every episode, or keep no closed one.
    if (std::isnan(value) || value < 0) {
        throw ConfigError(fmt::format("{}={} must be a number of seconds >= 0", field, value));
    }
}
}  // namespace

std::vector<CliffEpisode> merge_cliffs(const std::vector<CliffEpisode>& episodes, double dt_s, const CliffRule& rule) {
    detail::require_positive(dt_s, "dt_s");
    if (!std::isnan(rule.merge_gap_s)) require_duration(rule.merge_gap_s, "merge_gap_s");
    require_duration(rule.min_duration_s, "min_duration_s");
    // By default a refill of a step or two merges whatever the step: at dt = 300 s (CloudWatch's
    // basic monitoring) one step of credits is already 300 s.
    const double gap =
        std::isnan(rule.merge_gap_s) ? std::max(CliffRule::default_merge_gap_s, 2.0 * dt_s) : rule.merge_gap_s;
    std::vector<CliffEpisode> merged;
    merged.reserve(episodes.size());
    for (const CliffEpisode& e : episodes) {
        if (!merged.empty()) {
            CliffEpisode& last = merged.back();
            // An open episode (NaN end) is the run's last; `<=` is false for NaN.
            if (e.start_s - last.end_s <= gap) {
                last.end_s = e.end_s;
                continue;
            }
        }
        merged.push_back(e);
    }
    std::erase_if(merged, [&](const CliffEpisode& c) {
        return !std::isnan(c.end_s) && c.end_s - c.start_s < rule.min_duration_s;
    });
    return merged;
}

}  // namespace ebssim
