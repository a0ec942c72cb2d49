#pragma once
/// \file engine.hpp
/// The discrete-time engine: a set of volumes, their bucket state, and runs that advance it.
/// State (credits, backlog, clock) carries from one run to the next, so phases and rests are
/// consecutive runs on the same Simulation.

#include <cstdint>
#include <vector>

#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"

namespace ebssim {

/// Which limit held the volume back in a step.
enum class Bound : std::uint8_t {
    demand = 0,             ///< served everything it could (not throttled)
    volume_iops = 1,        ///< the volume's IOPS limit (gp2: burst or, without credits, baseline)
    volume_throughput = 2,  ///< the volume's throughput limit
};

/// Per-step outputs of one volume. Rates are per second over the step.
struct StepSeries {
    std::vector<double> iops;              ///< application I/Os completed per second
    std::vector<double> ebs_iops;          ///< EBS-counted operations per second
    std::vector<double> throughput_mib_s;  ///< MiB/s completed
    std::vector<double> credits;           ///< I/O credits at the end of the step
    std::vector<double> queue_length;      ///< mean I/Os outstanding (waiting + in service)
    std::vector<double> latency_s;         ///< mean latency of the I/Os completed (NaN if none)
    std::vector<std::uint8_t> bound;       ///< Bound code
};

/// Cheap per-run totals, always computed.
struct VolumeTotals {
    double demanded_ops = 0;    ///< I/Os that arrived (open loop) or were issued (closed loop)
    double demanded_bytes = 0;
    double served_ops = 0;
    double served_bytes = 0;
    double served_counted = 0;  ///< EBS-counted operations
    double latency_ops_s = 0;   ///< sum over steps of latency x I/Os completed
    double backlog_ops = 0;     ///< queued at the end of the run (open loop)
    double backlog_bytes = 0;
    double credits_end = 0;
    double cliff_time_s = unset;  ///< first time the credit bucket ran dry in this run (NaN: never)
    std::int64_t steps_bound[3] = {0, 0, 0};  ///< steps spent in each Bound
};

/// Outputs of one run.
struct RunResult {
    double t0_s = 0;             ///< simulated time at the start of the run
    double dt_s = 1;
    std::int64_t n_steps = 0;
    std::vector<StepSeries> series;    ///< one per volume; empty when not recorded
    std::vector<VolumeTotals> totals;  ///< one per volume
};

/// A set of volumes stepped together with a fixed step dt.
class Simulation {
public:
    /// Validates every spec (ConfigError naming the volume, field, value and rule).
    explicit Simulation(const std::vector<VolumeSpec>& volumes, double dt_s = 1.0);

    /// Advance n_steps with one workload per volume. Per-step series are filled when record is true.
    RunResult run(const std::vector<Workload>& workloads, std::int64_t n_steps, bool record = true);

    [[nodiscard]] std::size_t size() const noexcept { return params_.size(); }
    [[nodiscard]] double dt_s() const noexcept { return dt_s_; }
    [[nodiscard]] double time_s() const noexcept { return static_cast<double>(step_) * dt_s_; }
    [[nodiscard]] const VolumeParams& params(std::size_t i) const { return params_.at(i); }
    [[nodiscard]] double credits(std::size_t i) const { return state_.at(i).credits; }
    [[nodiscard]] double backlog_ops(std::size_t i) const { return state_.at(i).backlog_ops; }

    /// Upper bound on steps per run with recording on (memory: about 50 bytes per step per volume).
    static constexpr std::int64_t max_recorded_steps = 200'000'000;

private:
    struct State {
        double credits = 0;
        double backlog_ops = 0;
        double backlog_bytes = 0;
        double backlog_counted = 0;
    };
    void run_volume(std::size_t i, const Workload& w, std::int64_t n_steps, StepSeries* series,
                    VolumeTotals& totals);

    std::vector<VolumeParams> params_;
    std::vector<State> state_;
    double dt_s_;
    std::int64_t step_ = 0;
};

}  // namespace ebssim
