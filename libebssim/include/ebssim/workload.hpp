#pragma once
/// \file workload.hpp
/// What a volume is asked to do during a run: nothing (rest), a closed loop (fio-like, a fixed
/// number of I/Os in flight) or an open loop (a trace of demanded ops and bytes per step).

#include <cstdint>
#include <span>
#include <variant>

#include "ebssim/volume.hpp"

namespace ebssim {

/// Random I/Os are counted one by one; physically sequential ones merge up to the counting unit.
enum class Pattern : std::uint8_t { random, sequential };

/// The volume rests: no new I/O (a backlog left by an earlier trace still drains).
struct Idle {};

/// N I/Os always in flight (numjobs x iodepth). Completes min(N / service_time, limits) I/Os per second.
struct ClosedLoop {
    double in_flight = 1;           ///< I/Os outstanding at all times (users of the closed loop)
    double io_bytes = 4096;         ///< size of each I/O, bytes
    double read_fraction = 1.0;     ///< share of I/Os that are reads, 0..1
    Pattern pattern = Pattern::random;
    double service_time_s = unset;  ///< unloaded service time; default from the volume's latency model
    /// Time each user waits between an I/O's completion and its next submission (fio's
    /// thinktime). A closed network: throughput x = in_flight / (latency + think_time_s).
    double think_time_s = 0.0;
    /// EBS-counted operations per I/O; default from io_bytes, the pattern and the volume's
    /// counting unit. Set it to describe a mix of I/O sizes by its means.
    double counted_per_io = unset;
};

/// Demanded application ops and bytes per step. Demand above the limits queues (a fluid,
/// work-conserving queue) and is served in later steps. The spans must outlive the run.
struct OpenLoop {
    std::span<const double> ops;    ///< I/Os arriving in each step
    std::span<const double> bytes;  ///< bytes arriving in each step
    double read_fraction = 1.0;
    Pattern pattern = Pattern::random;
    double service_time_s = unset;  ///< default: the volume's model at the step's mean I/O size
};

using Workload = std::variant<Idle, ClosedLoop, OpenLoop>;

/// Largest open-loop demand per step (ops or bytes) accepted, so that sums stay finite.
inline constexpr double max_demand_per_step = 1e15;

/// EBS-counted operations per application I/O of the given size: random I/Os count
/// ceil(size / unit) (at least 1); sequential ones merge, counting size / unit.
double counted_ops_per_io(double io_bytes, double unit_bytes, Pattern pattern) noexcept;

/// Check an open-loop trace: equal lengths, every value finite, >= 0 and <= max_demand_per_step,
/// no bytes without ops. Throws ConfigError naming the first offending index and value.
void validate_trace(std::span<const double> ops, std::span<const double> bytes);

/// Check a workload against a run of n_steps; throws ConfigError naming the field and value.
/// With check_values false, an open-loop trace's values are left to the caller (the engine
/// checks them inside its step loop, which saves a pass over the trace).
void validate_workload(const Workload& w, std::int64_t n_steps, bool check_values = true);

/// True when one step of a trace is acceptable (see validate_trace). Branch-free.
[[nodiscard]] inline bool trace_step_ok(double ops, double bytes) noexcept {
    return (ops >= 0) & (ops <= max_demand_per_step) & (bytes >= 0) & (bytes <= max_demand_per_step) &
           ((ops > 0) | (bytes == 0));
}

}  // namespace ebssim
