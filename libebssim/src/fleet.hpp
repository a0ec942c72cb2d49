#pragma once
// run_many's pools of lone volumes (fleet.cpp): the part of a fleet that the lockstep kernel can
// step several volumes at a time, although each volume is an item of its own.

#include <cstddef>
#include <span>
#include <vector>

#include "ebssim/engine.hpp"

namespace ebssim {

/// A friend of Simulation: it moves volumes between the items' Simulations and a pool's.
struct FleetPools {
    /// Runs the items that are one open-loop volume each (no instance, not recorded, n_steps
    /// within limits.max_volume_steps), several at a time: those of one step dt, one clock and one
    /// n_steps as one Simulation, whose run steps them in the lockstep kernel over
    /// options.threads threads (RunOptions::lockstep; each volume's results the same, to the last
    /// bit, as its item run alone). Fills out[k] of the items it ran and advances their
    /// Simulations; returns, in order, the items left to run one by one: the others, a pool of
    /// one, and the members of a pool whose run was refused (a bad trace: run alone, each gets its
    /// own error, the others their results). Interrupted and other exceptions propagate, with the
    /// Simulations of the pools already run advanced (run_many restores them).
    static std::vector<std::size_t> run(std::span<const FleetItem> items, std::span<FleetOutcome> out,
                                        const RunLimits& limits, const InterruptCheck& interrupt,
                                        const RunOptions& options);
};

}  // namespace ebssim
