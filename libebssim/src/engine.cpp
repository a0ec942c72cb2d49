#include "ebssim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/units.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// What a workload offers in one step: new arrivals (open loop) or the completions the
// closed loop would reach unthrottled. `service_time_s` is NaN when the kernel must derive it
// from the mean I/O size of what is available.
struct Offer {
    double ops;
    double bytes;
    double counted;
};

struct ClosedSource {
    static constexpr bool closed = true;
    Offer offer;
    double in_flight;
    double service_time_s;
    Offer operator()(std::int64_t) const noexcept { return offer; }
};

struct OpenSource {
    static constexpr bool closed = false;
    const double* ops;
    const double* bytes;
    double inv_unit;
    bool sequential;
    double service_time_s;  // NaN: from the mean I/O size
    Offer operator()(std::int64_t k) const noexcept {
        double o = ops[k];
        double b = bytes[k];
        double c;
        if (sequential) {
            c = b * inv_unit;
        } else if (o > 0) {
            double per = std::ceil(b / o * inv_unit - 1e-9);
            c = o * (per < 1.0 ? 1.0 : per);
        } else {
            c = 0;
        }
        return {o, b, c};
    }
};

struct IdleSource {
    static constexpr bool closed = false;
    double service_time_s = nan;
    Offer operator()(std::int64_t) const noexcept { return {0, 0, 0}; }
};

}  // namespace

Simulation::Simulation(const std::vector<VolumeSpec>& volumes, double dt_s) : dt_s_(dt_s) {
    detail::require_positive(dt_s, "dt_s");
    if (volumes.empty()) throw ConfigError("volumes is empty: a simulation needs at least one volume");
    params_.reserve(volumes.size());
    for (std::size_t i = 0; i < volumes.size(); ++i) {
        try {
            params_.push_back(make_volume(volumes[i]));
        } catch (const ConfigError& e) {
            if (volumes.size() == 1) throw;
            throw ConfigError(fmt::format("volume {}: {}", i, e.what()));
        }
        state_.push_back(State{params_.back().initial_credits, 0, 0, 0});
    }
}

namespace {

// One volume through n steps. Inlined per source type so the step loop has no indirect calls.
template <class Source>
void kernel(const VolumeParams& p, double& credits, double& b_ops, double& b_bytes, double& b_cnt,
            const Source& src, std::int64_t n, double dt, double t0, StepSeries* out, VolumeTotals& tot) {
    const double earned = p.baseline_iops * dt;
    const double burst_cap = p.burst_iops * dt;
    const double tput_hi = p.tput_burst_bytes_s * dt;
    const double tput_lo = p.tput_base_bytes_s * dt;
    const double cap_credits = p.credit_capacity;
    const bool bucket = p.has_bucket();
    const double inv_dt = 1.0 / dt;
    bool cliff_seen = false;

    for (std::int64_t k = 0; k < n; ++k) {
        const Offer a = src(k);
        const double prev_b_ops = b_ops;
        const double av_ops = b_ops + a.ops;
        const double av_bytes = b_bytes + a.bytes;
        const double av_cnt = b_cnt + a.counted;

        // Limits this step. Without a bucket credits stay 0 and burst == baseline, so the
        // same expressions give the provisioned caps.
        const double pool = credits + earned;
        const double cap_cnt = std::min(burst_cap, pool);
        const double cap_bytes = credits > 0 ? tput_hi : tput_lo;
        const double f_cnt = av_cnt > 0 ? cap_cnt / av_cnt : inf;
        const double f_bytes = av_bytes > 0 ? cap_bytes / av_bytes : inf;

        double f = 1.0;
        Bound bound = Bound::demand;
        double served_cnt = av_cnt;
        if (f_cnt < 1.0 && f_cnt <= f_bytes) {
            f = f_cnt;
            bound = Bound::volume_iops;
            served_cnt = cap_cnt;  // exact, so the bucket empties to exactly zero
        } else if (f_bytes < 1.0) {
            f = f_bytes;
            bound = Bound::volume_throughput;
            served_cnt = f * av_cnt;
        }
        const double served_ops = f * av_ops;
        const double served_bytes = f * av_bytes;

        if constexpr (Source::closed) {
            // The closed loop waits instead of queueing: only an earlier backlog stays queued.
            b_ops *= 1.0 - f;
            b_bytes *= 1.0 - f;
            b_cnt *= 1.0 - f;
            tot.demanded_ops += f * a.ops;
            tot.demanded_bytes += f * a.bytes;
        } else {
            b_ops = av_ops - served_ops;
            b_bytes = av_bytes - served_bytes;
            b_cnt = av_cnt - served_cnt;
            tot.demanded_ops += a.ops;
            tot.demanded_bytes += a.bytes;
        }

        if (bucket) {
            const double before = credits;
            double c = pool - served_cnt;
            c = c < 0 ? 0 : (c > cap_credits ? cap_credits : c);
            credits = c;
            // A cliff: the bucket runs dry in this step, or starts the run dry under demand that
            // wants more than the baseline.
            if (!cliff_seen && c <= 0 && (before > 0 || k == 0)) {
                // Interpolate inside the step: the bucket drained at the rate the demand asked for.
                // What the demand asks for while credits last (the throughput cap with credits).
                double wanted = std::min({av_cnt, burst_cap, av_bytes > 0 ? tput_hi / av_bytes * av_cnt : inf});
                double spend = wanted - earned;
                if (before > 0 || spend > 0) {
                    cliff_seen = true;
                    double frac = spend > 0 ? std::min(1.0, before / spend) : 1.0;
                    tot.cliff_time_s = t0 + (static_cast<double>(k) + frac) * dt;
                }
            }
        }

        // Little's law: mean latency = mean outstanding I/Os / completion rate.
        const double rate = served_ops * inv_dt;
        double st;
        if constexpr (Source::closed) {
            st = src.service_time_s;
        } else {
            st = !std::isnan(src.service_time_s) ? src.service_time_s
                 : av_ops > 0                    ? p.service_time_s(av_bytes / av_ops)
                                                 : p.latency_s;
        }
        const double waiting = 0.5 * (prev_b_ops + b_ops);
        double outstanding;
        if constexpr (Source::closed) {
            outstanding = src.in_flight + waiting;
        } else {
            outstanding = rate * st + waiting;
        }
        double latency = nan;
        if (rate > 0) {
            latency = outstanding / rate;
            if (latency < st) latency = st;
            tot.latency_ops_s += latency * served_ops;
        }

        tot.served_ops += served_ops;
        tot.served_bytes += served_bytes;
        tot.served_counted += served_cnt;
        tot.steps_bound[static_cast<int>(bound)] += 1;

        if (out != nullptr) {
            out->iops[k] = rate;
            out->ebs_iops[k] = served_cnt * inv_dt;
            out->throughput_mib_s[k] = served_bytes * inv_dt * (1.0 / units::MiB);
            out->credits[k] = credits;
            out->queue_length[k] = outstanding;
            out->latency_s[k] = latency;
            out->bound[k] = static_cast<std::uint8_t>(bound);
        }
    }
}

}  // namespace

void Simulation::run_volume(std::size_t i, const Workload& w, std::int64_t n, StepSeries* series,
                            VolumeTotals& totals) {
    const VolumeParams& p = params_[i];
    State& s = state_[i];
    const double t0 = time_s();
    if (const auto* c = std::get_if<ClosedLoop>(&w)) {
        double st = std::isnan(c->service_time_s) ? p.service_time_s(c->io_bytes) : c->service_time_s;
        double per = counted_ops_per_io(c->io_bytes, p.io_unit_bytes, c->pattern);
        double ops = c->in_flight / st * dt_s_;
        ClosedSource src{{ops, ops * c->io_bytes, ops * per}, c->in_flight, st};
        kernel(p, s.credits, s.backlog_ops, s.backlog_bytes, s.backlog_counted, src, n, dt_s_, t0, series, totals);
    } else if (const auto* o = std::get_if<OpenLoop>(&w)) {
        OpenSource src{o->ops.data(), o->bytes.data(), 1.0 / p.io_unit_bytes, o->pattern == Pattern::sequential,
                       o->service_time_s};
        kernel(p, s.credits, s.backlog_ops, s.backlog_bytes, s.backlog_counted, src, n, dt_s_, t0, series, totals);
    } else {
        IdleSource src;
        kernel(p, s.credits, s.backlog_ops, s.backlog_bytes, s.backlog_counted, src, n, dt_s_, t0, series, totals);
    }
    totals.backlog_ops = s.backlog_ops;
    totals.backlog_bytes = s.backlog_bytes;
    totals.credits_end = s.credits;
}

RunResult Simulation::run(const std::vector<Workload>& workloads, std::int64_t n_steps, bool record) {
    if (workloads.size() != params_.size()) {
        throw ConfigError(fmt::format("workloads has {} entries but the simulation has {} volumes",
                                      workloads.size(), params_.size()));
    }
    if (n_steps < 0) throw ConfigError(fmt::format("n_steps={} must be >= 0", n_steps));
    if (record && n_steps > max_recorded_steps) {
        throw ConfigError(fmt::format("n_steps={} exceeds {} steps per recorded run; record fewer steps or pass "
                                      "record=False for totals only",
                                      n_steps, max_recorded_steps));
    }
    for (std::size_t i = 0; i < workloads.size(); ++i) {
        try {
            validate_workload(workloads[i], n_steps);
        } catch (const ConfigError& e) {
            if (workloads.size() == 1) throw;
            throw ConfigError(fmt::format("workload {}: {}", i, e.what()));
        }
    }
    RunResult r;
    r.t0_s = time_s();
    r.dt_s = dt_s_;
    r.n_steps = n_steps;
    r.totals.resize(params_.size());
    if (record) {
        r.series.resize(params_.size());
        auto n = static_cast<std::size_t>(n_steps);
        for (auto& s : r.series) {
            s.iops.resize(n);
            s.ebs_iops.resize(n);
            s.throughput_mib_s.resize(n);
            s.credits.resize(n);
            s.queue_length.resize(n);
            s.latency_s.resize(n);
            s.bound.resize(n);
        }
    }
    // Volumes without a shared instance budget are independent: step each through the whole
    // run in turn, which keeps its state in registers.
    for (std::size_t i = 0; i < params_.size(); ++i) {
        run_volume(i, workloads[i], n_steps, record ? &r.series[i] : nullptr, r.totals[i]);
    }
    step_ += n_steps;
    return r;
}

}  // namespace ebssim
