// run_many's pools of lone volumes (fleet.hpp). Simulation::run groups the open-loop volumes of
// one Simulation for the lockstep kernel; a fleet's lone volumes are one Simulation each, so
// run_many gathers them into pools first, or the kernel would never see two of them together.

#include "fleet.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <variant>

#include "ebssim/error.hpp"

namespace ebssim {

namespace {

// What the items of one pool share: the step, the clock (the run's t0) and the run's length.
struct PoolKey {
    double dt_s;
    double t0_s;
    std::int64_t n_steps;
    // (Not a defaulted operator<=>: clang-tidy 14 reads its synthesized comparison with 0 as a
    // null pointer constant.)
    bool operator<(const PoolKey& o) const noexcept {
        return std::tie(dt_s, t0_s, n_steps) < std::tie(o.dt_s, o.t0_s, o.n_steps);
    }
};

}  // namespace

std::vector<std::size_t> FleetPools::run(std::span<const FleetItem> items, std::span<FleetOutcome> out,
                                         const RunLimits& limits, const InterruptCheck& interrupt,
                                         const RunOptions& options) {
    std::vector<std::size_t> rest;
    std::map<PoolKey, std::vector<std::size_t>> pools;
    for (std::size_t k = 0; k < items.size(); ++k) {
        const FleetItem& it = items[k];
        const Simulation& s = *it.sim;
        // Only what the kernel takes; a run above its own limit or of a bad length is left to run
        // alone, for its own error.
        const bool lone = options.lockstep && !it.record && !s.has_instance() && s.size() == 1 &&
                          it.workloads->size() == 1 && std::holds_alternative<OpenLoop>(it.workloads->front()) &&
                          std::get<OpenLoop>(it.workloads->front()).max_in_flight_steps.empty() && it.n_steps > 0 &&
                          it.n_steps <= limits.max_volume_steps;
        if (lone) {
            pools[PoolKey{s.dt_s(), s.time_s(), it.n_steps}].push_back(k);
        } else {
            rest.push_back(k);
        }
    }
    for (const auto& [key, members] : pools) {
        if (members.size() < 2) {
            rest.insert(rest.end(), members.begin(), members.end());
            continue;
        }
        Simulation pool = *items[members[0]].sim;  // its step, clock and first volume
        std::vector<Workload> ws{items[members[0]].workloads->front()};
        for (std::size_t j = 1; j < members.size(); ++j) {
            const Simulation& s = *items[members[j]].sim;
            pool.params_.push_back(s.params_[0]);
            pool.state_.push_back(s.state_[0]);
            pool.overshoot_.push_back(s.overshoot_[0]);
            ws.push_back(items[members[j]].workloads->front());
        }
        RunLimits each = limits;  // every member is within its own limit (checked above)
        each.max_volume_steps = std::numeric_limits<std::int64_t>::max();
        RunResult r;
        try {
            r = pool.run(ws, key.n_steps, false, each, interrupt, options);
        } catch (const ConfigError&) {
            // A bad trace (the pool is unchanged): each member alone, for its own outcome.
            rest.insert(rest.end(), members.begin(), members.end());
            continue;
        }
        for (std::size_t j = 0; j < members.size(); ++j) {
            const FleetItem& it = items[members[j]];
            it.sim->state_[0] = pool.state_[j];
            it.sim->overshoot_[0] = pool.overshoot_[j];
            it.sim->step_ = pool.step_;
            RunResult one;
            one.t0_s = r.t0_s;
            one.dt_s = r.dt_s;
            one.n_steps = r.n_steps;
            one.record_every = it.every;  // as its own run reports it
            one.totals.push_back(std::move(r.totals[j]));
            out[members[j]].result = std::move(one);
        }
    }
    std::sort(rest.begin(), rest.end());
    return rest;
}

}  // namespace ebssim
