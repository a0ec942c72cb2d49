#pragma once
/// \file engine.hpp
/// The discrete-time engine: a set of volumes, optionally attached to one instance whose EBS
/// budget they share, their bucket state, and runs that advance it. State (credits, backlog,
/// instance balances, clock) carries from one run to the next, so phases and rests are
/// consecutive runs on the same Simulation.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ebssim/bound.hpp"
#include "ebssim/error.hpp"
#include "ebssim/instance.hpp"
#include "ebssim/interrupt.hpp"
#include "ebssim/recorder.hpp"
#include "ebssim/totals.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"

namespace ebssim {

namespace detail {
struct Recorders;  // the recorders of a run (libebssim/src/recorders.hpp)
}  // namespace detail

/// Outputs of one run.
struct RunResult {
    double t0_s = 0;  ///< simulated time at the start of the run
    double dt_s = 1;
    std::int64_t n_steps = 0;
    /// Steps per recorded value (Recording::every); the series hold ceil(n_steps / every) values.
    std::int64_t record_every = 1;
    std::vector<StepSeries> series;    ///< one per volume; empty when not recorded
    std::vector<VolumeTotals> totals;  ///< one per volume
    bool has_instance = false;
    InstanceSeries instance_series;  ///< empty without an instance or when not recorded
    InstanceTotals instance_totals;
};

/// Bytes the per-step series take in the default recording: per volume-step 6 doubles and a
/// Bound code (StepSeries), per step of the instance 4 doubles and a code (InstanceSeries).
/// Another Recording takes Recording::allocated_bytes_per_value per recorded value.
inline constexpr std::int64_t recorded_bytes_per_volume_step = 6 * 8 + 1;
inline constexpr std::int64_t recorded_bytes_per_instance_step = 4 * 8 + 1;

/// Bounds on the work and memory of one run, checked before it allocates or steps anything, so
/// that a mistyped duration or step is an error instead of hours of CPU or an exhausted machine.
struct RunLimits {
    /// Most volume-steps (n_steps x volumes) in one run. The default, 1e10, is about a minute
    /// or more of one core for the scalar step loop (its step rates: docs/performance.md).
    std::int64_t max_volume_steps = 10'000'000'000;
    /// Most bytes of per-step series one recorded run allocates, all volumes and the instance
    /// together: what the Recording chooses, at its interval and precision, except the series
    /// written into caller buffers (recorded_bytes_per_* in the default recording). The default,
    /// 4 GiB, holds about 88 M volume-steps of the default recording.
    std::int64_t max_memory_bytes = std::int64_t{4} << 30;
};

/// A run above a RunLimits bound. A ConfigError, so callers that handle bad input handle it too.
class LimitError : public ConfigError {
public:
    using ConfigError::ConfigError;
};

/// Options of one run, beside its workloads and bounds. Each field has a default that keeps the
/// behaviour of a run without options.
struct RunOptions {
    /// Threads that step volumes sharing no instance (Simulation::run) or independent
    /// Simulations (run_many): 0 (default) uses every core (std::thread::hardware_concurrency),
    /// 1 steps everything in the calling thread; negative is a ConfigError. Results are the same
    /// whatever the count: each volume is stepped by one thread with the arithmetic of one.
    int threads = 0;
    /// Jump over constant stretches in closed form (docs/model.md, "Jumps over constant
    /// stretches"): where a volume's demand is constant (a closed loop, idle, a run of equal
    /// trace values, a PiecewiseOpenLoop segment), the engine computes how many steps keep every
    /// branch of the step the same and advances them at once. Jumped: a steady step (no backlog,
    /// every output the same but the credits, which stay or change by a constant amount per
    /// step); an open loop's backlog held at the volume's IOPS or throughput cap, growing or
    /// draining, of the arrivals' composition or, in a run that records no series, of another
    /// mix; volumes on an instance, together with its buckets, while every one is steady.
    /// Stepped: the steps where a branch changes (a bucket runs dry or fills, a cliff episode
    /// starts or ends, the input changes, a backlog empties) and the two before them; open loops
    /// with a max_in_flight while held back; closed loops with a backlog; traces in which fewer than
    /// one step in 16 equals the next (not looked at for runs); the totals-only OpenLoop traces
    /// that the lockstep kernel steps (`lockstep`). At fixed points (a full or empty bucket, no
    /// bucket) the state and every per-step output equal stepping's bit for bit and totals differ
    /// by the rounding of m*x against m additions; otherwise results agree up to the rounding of
    /// c + m*d against m repeated additions. False steps every step (checking, benchmarking).
    bool jump = true;
    /// Step independent open-loop volumes (no instance, record = false) several at a time in the
    /// lockstep kernel (docs/design.md), which gives bit-identical results faster. With `jump`, a
    /// trace whose steps mostly (95 %) equal the next goes to the one-volume-at-a-time loop
    /// instead, which jumps its runs. False forces the one-volume-at-a-time loop for every
    /// volume: for checking the two against each other and benchmarking.
    bool lockstep = true;
    /// What a recorded run keeps (which series, every how many steps, float64 or float32,
    /// caller buffers); used only when run's `record` is true. Default: everything, every step.
    Recording recording{};
};

/// The threads a run with `options` uses: options.threads, or every core for 0. Throws
/// ConfigError for a negative count.
[[nodiscard]] int resolve_threads(const RunOptions& options);

/// A set of volumes stepped together with a fixed step dt, optionally sharing one instance.
class Simulation {
public:
    /// Volumes without an instance: no instance-level limit applies. Validates every spec
    /// (ConfigError naming the volume, field, value and rule).
    explicit Simulation(const std::vector<VolumeSpec>& volumes, double dt_s = 1.0);
    /// Volumes attached to one instance, sharing its EBS budget.
    Simulation(const std::vector<VolumeSpec>& volumes, const InstanceSpec& instance, double dt_s = 1.0);

    /// Advance n_steps with one workload per volume. Series are filled when record is true, as
    /// options.recording asks (default: every series but the extremes, every step, float64).
    /// Throws LimitError when the run exceeds `limits` (nothing ran), and Interrupted when
    /// `interrupt` asked to stop (the run is undone: state and clock are as before the call; a
    /// caller buffer may have been partly written).
    ///
    /// Volumes without an instance are independent and are stepped over options.threads threads
    /// (the InterruptCheck is called from the calling thread only); with an instance, the
    /// volumes are coupled in every step and one thread steps them all. options.jump: closed-form
    /// jumps over constant stretches (RunOptions::jump), with an instance too (its volumes and
    /// buckets jumped together).
    RunResult run(const std::vector<Workload>& workloads, std::int64_t n_steps, bool record = true,
                  const RunLimits& limits = {}, const InterruptCheck& interrupt = {}, const RunOptions& options = {});

    [[nodiscard]] std::size_t size() const noexcept { return params_.size(); }
    [[nodiscard]] double dt_s() const noexcept { return dt_s_; }
    [[nodiscard]] double time_s() const noexcept { return static_cast<double>(step_) * dt_s_; }
    /// Per-volume accessors; an index >= size() throws std::out_of_range naming it and size().
    [[nodiscard]] const VolumeParams& params(std::size_t i) const { return params_[checked(i)]; }
    [[nodiscard]] double credits(std::size_t i) const { return state_[checked(i)].credits; }
    [[nodiscard]] double backlog_ops(std::size_t i) const { return state_[checked(i)].backlog_ops; }
    /// Seconds of volume i's IOPS and throughput limits saved for overshoot (VolumeParams::overshoot_s).
    [[nodiscard]] std::pair<double, double> overshoot_saved_s(std::size_t i) const {
        const OvershootState& s = overshoot_[checked(i)];
        return {s.iops_s, s.bytes_s};
    }
    [[nodiscard]] bool has_instance() const noexcept { return instance_.has_value(); }
    [[nodiscard]] const InstanceParams& instance() const { return instance_.value(); }
    [[nodiscard]] double instance_io_credits() const noexcept { return inst_io_credits_; }
    [[nodiscard]] double instance_bytes_credits() const noexcept { return inst_bytes_credits_; }

    using State = VolumeState;

private:
    friend struct FleetPools;  // run_many's pools of lone volumes (src/fleet.cpp)

    [[nodiscard]] std::size_t checked(std::size_t i) const;
    void check_limits(std::int64_t n_steps, const Recording* recording, const RunLimits& limits) const;
    void init_volumes(const std::vector<VolumeSpec>& volumes, bool nitro);
    /// `rec`: one recorder per volume, or null (not recorded); `irec`: the instance's, or null.
    /// (libebssim/src/independent.cpp)
    bool run_independent(const std::vector<Workload>& ws, std::int64_t n, RunResult& r, const detail::Recorders& rec,
                         const InterruptCheck& interrupt, int threads, const RunOptions& options);
    /// (libebssim/src/coupled.cpp)
    bool run_shared(const std::vector<Workload>& ws, std::int64_t n, RunResult& r, const detail::Recorders& rec,
                    const InterruptCheck& interrupt, bool jump);

    std::vector<VolumeParams> params_;
    std::vector<State> state_;
    std::vector<OvershootState> overshoot_;  // one per volume, beside state_
    std::optional<InstanceParams> instance_;
    double inst_io_credits_ = 0;
    double inst_bytes_credits_ = 0;
    double dt_s_;
    std::int64_t step_ = 0;
};

/// One run of a batch given to run_many: a Simulation and what Simulation::run takes.
struct FleetItem {
    Simulation* sim = nullptr;
    const std::vector<Workload>* workloads = nullptr;  ///< one per volume of sim
    std::int64_t n_steps = 0;
    bool record = false;
    std::int64_t every = 1;  ///< with record: steps per recorded value (Recording::every)
};

/// What one item of run_many gave: its RunResult, or the message of the ConfigError that
/// refused it (a bad trace, a run above the limits), which left its Simulation unchanged.
struct FleetOutcome {
    std::optional<RunResult> result;
    std::string error;  ///< empty when result holds the run
    /// The workload (index into the item's workloads, hence its volume) that the error is about,
    /// with `error` the reason alone (no "workload i: " prefix: a front end names the volume its
    /// own way; WorkloadError); -1 when the error is not about one workload (a run above the
    /// limits, a bad n_steps, a workload count that does not match) or there is none.
    std::ptrdiff_t workload = -1;
};

/// Run many independent Simulations (each with its own volumes, optional instance, workloads
/// and n_steps) over options.threads threads, each item in one thread: a fleet, in which the
/// volumes on one instance are coupled and the instances are independent. Outcomes are in the
/// order of `items`, the same for any thread count. A ConfigError of one item is its outcome's
/// `error` and does not stop the others. Items that are one open-loop volume each (no instance,
/// not recorded) and share a step, a clock and n_steps are stepped together in the lockstep
/// kernel over options.threads threads (RunOptions::lockstep), as the volumes of one Simulation
/// are: each outcome is still, to the last bit, what its item run alone gives. Interrupted
/// (the InterruptCheck, called from the calling thread only, asked to stop) or any other
/// exception stops every thread, restores every Simulation to its state before the call, and
/// is rethrown.
std::vector<FleetOutcome> run_many(std::span<const FleetItem> items, const RunLimits& limits = {},
                                   const InterruptCheck& interrupt = {}, const RunOptions& options = {});

}  // namespace ebssim
