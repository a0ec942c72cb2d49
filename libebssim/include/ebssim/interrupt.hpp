#pragma once
/// \file interrupt.hpp
/// How a long run is abandoned: the check a run asks between chunks, and what it throws.

#include <cstdint>
#include <functional>
#include <stdexcept>

namespace ebssim {

/// Asked between chunks of a run whether to abandon it (e.g. the user pressed Ctrl-C). Returning
/// true, or throwing, abandons the run and leaves the Simulation as it was before it.
using InterruptCheck = std::function<bool()>;

/// Volume-steps between two calls of the InterruptCheck: a few ms of stepping, so that a check
/// costs nothing measurable and an interrupt is honoured promptly.
inline constexpr std::int64_t interrupt_every_volume_steps = std::int64_t{1} << 18;

/// Thrown by Simulation::run when its InterruptCheck returned true.
class Interrupted : public std::runtime_error {
public:
    Interrupted() : std::runtime_error("the run was interrupted; the simulation is unchanged") {}
};

}  // namespace ebssim
