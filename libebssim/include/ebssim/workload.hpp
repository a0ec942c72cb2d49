#pragma once
/// \file workload.hpp
/// What a volume is asked to do during a run: nothing (rest), a closed loop (fio-like, a fixed
/// number of I/Os in flight) or an open loop (a trace of demanded ops and bytes per step).

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <variant>

#include "ebssim/units.hpp"
#include "ebssim/volume.hpp"

namespace ebssim {

/// Random I/Os are counted one by one; physically sequential ones of at least the merge floor
/// (32 KiB) merge up to the counting unit.
enum class Pattern : std::uint8_t { random, sequential };

/// AWS's rule for counting I/O as EBS operations, for one volume and access pattern (the one
/// home of the rule: closed loops, open-loop traces and the bindings all call it).
///
/// - An I/O up to the counting unit (256 KiB SSD, 1 MiB HDD) is one operation, and every I/O
///   under the merge floor (32 KiB) is one operation, sequential or not.
/// - Physically sequential I/Os of at least the merge floor merge up to the unit: each counts
///   size / unit (8 contiguous 32 KiB I/Os: 1 operation; 1 MiB: 4).
/// - Larger random I/Os split: ceil(size / unit) each.
///
/// For `ops` I/Os of `bytes` in all (an open-loop step), the mean size bytes / ops decides.
struct IoCounting {
    double unit_bytes = units::ssd_io_unit_bytes;
    double merge_min_bytes = units::merge_min_bytes;
    bool sequential = false;
    double inv_unit = 1.0 / units::ssd_io_unit_bytes;

    IoCounting() = default;
    /// A floor above the unit is read as the unit (every I/O under the floor is then within one unit).
    IoCounting(double unit, Pattern pattern, double merge_min = units::merge_min_bytes) noexcept
        : unit_bytes(unit),
          merge_min_bytes(merge_min < unit ? merge_min : unit),
          sequential(pattern == Pattern::sequential),
          inv_unit(1.0 / unit) {}
    IoCounting(const VolumeParams& p, Pattern pattern) noexcept
        : IoCounting(p.io_unit_bytes, pattern, p.merge_min_bytes) {}

    /// EBS-counted operations for `ops` I/Os of `bytes` in all (0 for no I/O).
    [[nodiscard]] double operator()(double ops, double bytes) const noexcept {
        // Sequential: merged from the floor up, else one operation each (under the floor an I/O
        // is within one unit). Written as arithmetic so that it compiles without a branch: traces
        // cross the floor unpredictably. Exact: one of the two terms is 0.
        if (sequential) {
            const bool merged = bytes >= ops * merge_min_bytes;
            return static_cast<double>(merged) * (bytes * inv_unit) + static_cast<double>(!merged) * ops;
        }
        if (bytes <= ops * unit_bytes) return ops;  // one operation each (the common case, no division)
        // Split. A tiny tolerance so that a mean of exactly the unit counts 1, not 2, after division.
        return ops * std::ceil(bytes / ops * inv_unit - 1e-9);
    }
    /// operator() of a random pattern (not sequential, whose form has no branch already), written
    /// without branches for loops that the compiler vectorises: the same operations, so the same
    /// value to the last bit. `quotient` is bytes / ops, computed by the caller (used only where
    /// operator() divides, so any value will do for 0 ops).
    [[nodiscard, gnu::always_inline]] double random_branch_free(double ops, double bytes,
                                                                double quotient) const noexcept {
        const double split = ops * std::ceil(quotient * inv_unit - 1e-9);
        return bytes <= ops * unit_bytes ? ops : split;
    }
};

/// The volume rests: no new I/O (a backlog left by an earlier trace still drains).
struct Idle {};

/// N I/Os always in flight (numjobs x iodepth). Completes min(N / service_time, limits) I/Os per second.
struct ClosedLoop {
    double in_flight = 1;        ///< I/Os outstanding at all times (users of the closed loop)
    double io_bytes = 4096;      ///< size of each I/O, bytes
    double read_fraction = 1.0;  ///< share of I/Os that are reads, 0..1
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
///
/// An application keeps at most max_in_flight I/Os outstanding at the device; arrivals beyond
/// it wait in the application (not in the device's queue) until a slot frees. With service time
/// s, the device then completes at most max_in_flight / s I/Os per second (Little's law), on
/// top of the volume's limits (Bound::max_in_flight when that is what binds). Latency counts
/// from arrival, so the wait in the application is part of it. Infinity (the default): no bound.
/// The bound may change from step to step (max_in_flight_steps, one value per step: a replay
/// whose concurrency was measured per period, e.g. CloudWatch's VolumeQueueLength); such a trace
/// is stepped by the scalar stepper only (not the lockstep or served steps' kernels), and its
/// runs of equal values, which the jumps take, are runs of equal ops, bytes and bound.
struct OpenLoop {
    std::span<const double> ops;    ///< I/Os arriving in each step
    std::span<const double> bytes;  ///< bytes arriving in each step
    double read_fraction = 1.0;
    Pattern pattern = Pattern::random;
    double service_time_s = unset;  ///< default: the volume's model at the step's mean I/O size
    double max_in_flight = std::numeric_limits<double>::infinity();  ///< I/Os outstanding at the device at most
    /// The bound of each step instead of max_in_flight (which must then be infinity): empty (the
    /// default) for one bound over the trace; else as long as ops, each value > 0 (infinity: no
    /// bound in that step).
    std::span<const double> max_in_flight_steps = {};
};

/// A closed loop whose users and think time change from step to step: a day of traffic, a batch
/// that ramps up, fio phases without rests. Step k offers in_flight[k] / (service time +
/// think_time_s[k]) x dt completions, exactly as a ClosedLoop with those values would; the
/// I/O (size, mix, pattern, service time, counted_per_io) is `loop`'s, whose own in_flight and
/// think_time_s are not used. An in_flight of 0 is a step without users. The spans must outlive
/// the run.
struct PhasedClosedLoop {
    ClosedLoop loop;                       ///< the I/O every step issues
    std::span<const double> in_flight;     ///< users (I/Os outstanding) in each step, >= 0
    std::span<const double> think_time_s;  ///< think time in each step, >= 0
};

/// An open loop whose demand is constant between change steps: segment i covers steps
/// [change_steps[i], change_steps[i + 1]) (the last one until the end of the run) and brings
/// ops[i] I/Os and bytes[i] bytes in each of its steps. The same as an OpenLoop trace with those
/// values repeated, without materialising them: a month at dt = 1 ms is 2.6e9 steps but a few
/// hundred segments, and the engine jumps over each steady stretch (RunOptions::jump).
/// change_steps starts at 0, strictly increases and stays below the run's n_steps. The I/O
/// fields are OpenLoop's. The spans must outlive the run.
struct PiecewiseOpenLoop {
    std::span<const std::int64_t> change_steps;  ///< first step of each segment
    std::span<const double> ops;                 ///< I/Os arriving in each step of segment i
    std::span<const double> bytes;               ///< bytes arriving in each step of segment i
    double read_fraction = 1.0;
    Pattern pattern = Pattern::random;
    double service_time_s = unset;  ///< default: the volume's model at the segment's mean I/O size
    double max_in_flight = std::numeric_limits<double>::infinity();  ///< I/Os outstanding at the device at most
};

using Workload = std::variant<Idle, ClosedLoop, OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop>;

/// Largest open-loop demand per step (ops or bytes) accepted, so that sums stay finite.
inline constexpr double max_demand_per_step = 1e15;

/// EBS-counted operations per application I/O of the given size (IoCounting's rule).
[[nodiscard]] inline double counted_ops_per_io(double io_bytes, double unit_bytes, Pattern pattern,
                                               double merge_min_bytes = units::merge_min_bytes) noexcept {
    return IoCounting(unit_bytes, pattern, merge_min_bytes)(1.0, io_bytes);
}
/// EBS-counted operations per application I/O of the given size on volume `p`.
[[nodiscard]] inline double counted_ops_per_io(const VolumeParams& p, double io_bytes, Pattern pattern) noexcept {
    return IoCounting(p, pattern)(1.0, io_bytes);
}

/// Unloaded service time of a closed loop's I/Os on volume `p`: the workload's own, else the
/// volume's model at the loop's I/O size.
[[nodiscard]] inline double service_time_s(const VolumeParams& p, const ClosedLoop& w) noexcept {
    return std::isnan(w.service_time_s) ? p.service_time_s(w.io_bytes, w.read_fraction) : w.service_time_s;
}
/// EBS-counted operations per I/O of a closed loop on volume `p`: the workload's
/// counted_per_io, else the counting rule at the loop's I/O size and pattern.
[[nodiscard]] inline double counted_per_io(const VolumeParams& p, const ClosedLoop& w) noexcept {
    return std::isnan(w.counted_per_io) ? counted_ops_per_io(p, w.io_bytes, w.pattern) : w.counted_per_io;
}
/// I/Os per second a closed loop offers when no limit holds it back: each of its in_flight
/// users completes one I/O per service time plus think time.
[[nodiscard]] inline double offered_iops(const VolumeParams& p, const ClosedLoop& w) noexcept {
    return w.in_flight / (service_time_s(p, w) + w.think_time_s);
}

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
