// Simulation (its construction, the checks of a run, Simulation::run, which hands the steps to
// the independent loop, independent.cpp, or the instance-coupled one, coupled.cpp) and run_many.

#include "ebssim/engine.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "fleet.hpp"
#include "parallel.hpp"
#include "recorders.hpp"
#include "validate.hpp"

namespace ebssim {

Simulation::Simulation(const std::vector<VolumeSpec>& volumes, double dt_s) : dt_s_(dt_s) {
    detail::require_positive(dt_s, "dt_s");
    init_volumes(volumes, true);
}

Simulation::Simulation(const std::vector<VolumeSpec>& volumes, const InstanceSpec& instance, double dt_s)
    : dt_s_(dt_s) {
    detail::require_positive(dt_s, "dt_s");
    instance_ = make_instance(instance);
    inst_io_credits_ = instance_->io_initial;
    inst_bytes_credits_ = instance_->bytes_initial;
    init_volumes(volumes, instance_->nitro);
}

void Simulation::init_volumes(const std::vector<VolumeSpec>& volumes, bool nitro) {
    if (volumes.empty()) throw ConfigError("volumes is empty: a simulation needs at least one volume");
    params_.reserve(volumes.size());
    for (std::size_t i = 0; i < volumes.size(); ++i) {
        try {
            params_.push_back(make_volume(volumes[i], nitro));
        } catch (const ConfigError& e) {
            if (volumes.size() == 1) throw;
            throw ConfigError(fmt::format("volume {}: {}", i, e.what()));
        }
        const VolumeParams& p = params_.back();
        state_.push_back(State{p.initial_credits, 0, 0, 0});
        overshoot_.push_back(OvershootState{p.initial_overshoot_s, p.initial_overshoot_s});
    }
}

int resolve_threads(const RunOptions& options) {
    if (options.threads < 0) {
        throw ConfigError(fmt::format("threads={} must be >= 0 (0: every core, {} here)", options.threads,
                                      std::max(1U, std::thread::hardware_concurrency())));
    }
    if (options.threads > 0) return options.threads;
    return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

std::size_t Simulation::checked(std::size_t i) const {
    if (i >= params_.size()) {
        throw std::out_of_range(fmt::format("volume index {} is out of range: the simulation has {} volume{} (0 to {})",
                                            i, params_.size(), params_.size() == 1 ? "" : "s", params_.size() - 1));
    }
    return i;
}

void Simulation::check_limits(std::int64_t n_steps, const Recording* recording, const RunLimits& limits) const {
    if (limits.max_volume_steps < 0) {
        throw ConfigError(fmt::format("max_volume_steps={} must be >= 0", limits.max_volume_steps));
    }
    if (limits.max_memory_bytes < 0) {
        throw ConfigError(fmt::format("max_memory_bytes={} must be >= 0", limits.max_memory_bytes));
    }
    // In double: n_steps x volumes may not fit in 64 bits.
    const double nv = static_cast<double>(size());
    const double work = static_cast<double>(n_steps) * nv;
    if (work > static_cast<double>(limits.max_volume_steps)) {
        throw LimitError(fmt::format(
            "n_steps={} x {} volume{} = {:.4g} volume-steps exceeds max_volume_steps={:.4g} per run (at 50-100 M "
            "volume-steps per second that is {:.3g} to {:.3g} s of CPU): split it into shorter runs on the same "
            "Simulation (state carries over), use a coarser dt, or raise max_volume_steps",
            n_steps, size(), size() == 1 ? "" : "s", work, static_cast<double>(limits.max_volume_steps), work / 1e8,
            work / 5e7));
    }
    if (recording == nullptr) return;
    // What the engine allocates: the chosen series without a caller buffer, per recorded value.
    double per_value = has_instance() ? static_cast<double>(recording->allocated_bytes_per_value(-1, true)) : 0.0;
    for (std::size_t i = 0; i < size(); ++i) {
        per_value += static_cast<double>(recording->allocated_bytes_per_value(static_cast<std::ptrdiff_t>(i), false));
    }
    const double values = static_cast<double>(recording->intervals(n_steps));
    const double bytes = values * per_value;
    if (bytes > static_cast<double>(limits.max_memory_bytes)) {
        const std::string per = recording->every == 1 ? fmt::format("{:g} per step", per_value)
                                                      : fmt::format("{:g} per value, one value every {} steps",
                                                                    per_value, recording->every);
        throw LimitError(fmt::format(
            "recording n_steps={} for {} volume{}{} takes {:.4g} bytes ({}), above max_memory_bytes={:.4g}: "
            "pass record=False for totals only, record fewer series or every so many steps, use a coarser dt, "
            "split the run, or raise max_memory_bytes",
            n_steps, size(), size() == 1 ? "" : "s", has_instance() ? " and the instance" : "", bytes, per,
            static_cast<double>(limits.max_memory_bytes)));
    }
}

RunResult Simulation::run(const std::vector<Workload>& workloads, std::int64_t n_steps, bool record,
                          const RunLimits& limits, const InterruptCheck& interrupt, const RunOptions& options) {
    const int threads = resolve_threads(options);
    if (workloads.size() != params_.size()) {
        throw ConfigError(fmt::format("workloads has {} entries but the simulation has {} volumes", workloads.size(),
                                      params_.size()));
    }
    if (n_steps < 0) throw ConfigError(fmt::format("n_steps={} must be >= 0", n_steps));
    const Recording& rc = options.recording;
    if (record) validate_recording(rc, params_.size());
    check_limits(n_steps, record ? &rc : nullptr, limits);
    for (std::size_t i = 0; i < workloads.size(); ++i) {
        try {
            validate_workload(workloads[i], n_steps, /*check_values=*/false);
            if (const auto* ph = std::get_if<PhasedClosedLoop>(&workloads[i])) {
                // The same bound as a closed loop's, in every step.
                const double st = service_time_s(params_[i], ph->loop);
                for (std::size_t k = 0; k < ph->in_flight.size(); ++k) {
                    const double ops_per_step = ph->in_flight[k] / (st + ph->think_time_s[k]) * dt_s_;
                    if (!(ops_per_step <= max_demand_per_step)) {
                        throw ConfigError(fmt::format(
                            "in_flight[{}]={} offers {:.4g} I/Os per step, above the {:g} per step the engine "
                            "accepts (max_demand_per_step)",
                            k, ph->in_flight[k], ops_per_step, max_demand_per_step));
                    }
                }
            }
            if (const auto* c = std::get_if<ClosedLoop>(&workloads[i])) {
                // The bound a trace has per step, so that totals stay finite (not NaN).
                const double ops_per_step = offered_iops(params_[i], *c) * dt_s_;
                if (!(ops_per_step <= max_demand_per_step)) {
                    throw ConfigError(fmt::format(
                        "in_flight={} offers {:.4g} I/Os per step (in_flight / (service time {:g} s + think time "
                        "{:g} s) x dt {:g} s), above the {:g} per step the engine accepts (max_demand_per_step)",
                        c->in_flight, ops_per_step, service_time_s(params_[i], *c), c->think_time_s, dt_s_,
                        max_demand_per_step));
                }
            }
        } catch (const ConfigError& e) {
            throw WorkloadError(i, e.what(), workloads.size() > 1);
        }
    }
    RunResult r;
    r.t0_s = time_s();
    r.dt_s = dt_s_;
    r.n_steps = n_steps;
    r.totals.resize(params_.size());
    r.has_instance = has_instance();
    r.record_every = rc.every;
    std::vector<VolumeRecorder> recorders;
    std::optional<InstanceRecorder> irec;
    if (record) {
        r.series.resize(params_.size());
        recorders.reserve(params_.size());
        for (std::size_t i = 0; i < params_.size(); ++i) {
            prepare_series(r.series[i], rc, n_steps,
                           rc.volume_out.empty() ? std::array<void*, n_volume_fields>{} : rc.volume_out[i]);
            recorders.push_back(make_recorder(r.series[i], rc));
        }
        if (has_instance()) {
            prepare_series(r.instance_series, rc, n_steps);
            irec.emplace(make_recorder(r.instance_series, rc));
        }
    }
    const detail::Recorders recs{record ? recorders.data() : nullptr, irec ? &*irec : nullptr};
    // Trace values are checked inside the step loop (no extra pass over long traces). If one is
    // bad, the run is undone and the first offender reported, as if checked up front. An
    // interrupted run is undone the same way.
    const std::vector<State> saved = state_;
    const std::vector<OvershootState> saved_overshoot = overshoot_;
    const double saved_io = inst_io_credits_, saved_bytes = inst_bytes_credits_;
    auto undo = [&] {
        state_ = saved;
        overshoot_ = saved_overshoot;
        inst_io_credits_ = saved_io;
        inst_bytes_credits_ = saved_bytes;
    };
    bool ok = false;
    try {
        ok = has_instance() ? run_shared(workloads, n_steps, r, recs, interrupt, options.jump)
                            : run_independent(workloads, n_steps, r, recs, interrupt, threads, options);
    } catch (...) {
        undo();
        throw;
    }
    if (!ok) {
        undo();
        for (std::size_t i = 0; i < workloads.size(); ++i) {
            try {
                validate_workload(workloads[i], n_steps);
            } catch (const ConfigError& e) {
                throw WorkloadError(i, e.what(), workloads.size() > 1);
            }
        }
        throw ConfigError("invalid trace values");  // unreachable: validate_workload found them
    }
    for (auto& x : recorders) x.finish();  // the last, partial interval
    if (irec) irec->finish();
    for (std::size_t i = 0; i < params_.size(); ++i) {
        r.totals[i].backlog_ops = state_[i].backlog_ops;
        r.totals[i].backlog_bytes = state_[i].backlog_bytes;
        r.totals[i].credits_end = state_[i].credits;
    }
    step_ += n_steps;
    return r;
}

std::vector<FleetOutcome> run_many(std::span<const FleetItem> items, const RunLimits& limits,
                                   const InterruptCheck& interrupt, const RunOptions& options) {
    const int threads = resolve_threads(options);
    std::unordered_set<const Simulation*> seen;
    for (std::size_t k = 0; k < items.size(); ++k) {
        const FleetItem& it = items[k];
        if (it.sim == nullptr || it.workloads == nullptr) {
            throw ConfigError(fmt::format("items[{}] has no {}", k, it.sim == nullptr ? "Simulation" : "workloads"));
        }
        if (!seen.insert(it.sim).second) {
            throw ConfigError(fmt::format(
                "items[{}] runs a Simulation that an earlier item runs too: each item needs its own Simulation", k));
        }
    }
    // What to restore if the batch is abandoned: each item's run undoes itself, but the items
    // already done would keep their new state.
    std::vector<Simulation> saved;
    saved.reserve(items.size());
    for (const FleetItem& it : items) saved.push_back(*it.sim);
    std::vector<FleetOutcome> out(items.size());
    try {
        RunOptions pooled = options;
        pooled.threads = threads;
        const std::vector<std::size_t> rest = FleetPools::run(items, out, limits, interrupt, pooled);
        double work = 0;
        for (const std::size_t k : rest) {
            work += static_cast<double>(std::max<std::int64_t>(items[k].n_steps, 0)) *
                    static_cast<double>(items[k].sim->size());
        }
        RunOptions one = options;  // each Simulation in one thread, with the other options
        one.threads = 1;
        detail::parallel_items(rest.size(), detail::useful_threads(threads, rest.size(), work), interrupt,
                               [&](std::size_t j, const InterruptCheck& check) {
                                   const std::size_t k = rest[j];
                                   const FleetItem& it = items[k];
                                   try {
                                       RunOptions o = one;
                                       o.recording.every = it.every;
                                       out[k].result =
                                           it.sim->run(*it.workloads, it.n_steps, it.record, limits, check, o);
                                   } catch (const WorkloadError& e) {
                                       out[k].error = e.reason();
                                       out[k].workload = static_cast<std::ptrdiff_t>(e.workload());
                                   } catch (const ConfigError& e) {
                                       out[k].error = e.what();
                                   }
                               });
    } catch (...) {
        for (std::size_t k = 0; k < items.size(); ++k) *items[k].sim = saved[k];
        throw;
    }
    return out;
}

}  // namespace ebssim
