#include "ebssim/workload.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/latency.hpp"
#include "validate.hpp"

namespace ebssim {

namespace {

using detail::require_finite;
using detail::require_positive;

void check_read_fraction(double rf) {
    require_finite(rf, "read_fraction");
    if (rf < 0 || rf > 1) throw ConfigError(fmt::format("read_fraction={} must be between 0 and 1", rf));
}

void check_service_time(double st) {
    if (std::isnan(st)) return;                   // default
    if (!(st > 0 && st <= max_service_time_s)) {  // also infinity
        throw ConfigError(
            fmt::format("service_time_s={} must be > 0 and at most max_service_time_s={:g} s", st, max_service_time_s));
    }
}

void check_one(double x, std::size_t i, std::string_view field) {
    // The upper bound keeps sums finite; it is far above what any volume can serve.
    if (!(x >= 0 && x <= max_demand_per_step)) {  // also false for NaN
        throw ConfigError(
            fmt::format("{}[{}]={} must be finite, >= 0 and <= {:g} per step", field, i, x, max_demand_per_step));
    }
}

}  // namespace

void validate_trace(std::span<const double> ops, std::span<const double> bytes) {
    if (ops.size() != bytes.size()) {
        throw ConfigError(fmt::format("ops has {} steps but bytes has {}: the arrays must have the same length",
                                      ops.size(), bytes.size()));
    }
    // One branch-free pass decides whether anything is wrong (NaN fails every comparison); only
    // then a second pass finds the first offender for the message.
    bool ok = true;
    const std::size_t n = ops.size();
    for (std::size_t i = 0; i < n; ++i) ok &= trace_step_ok(ops[i], bytes[i]);
    if (ok) return;
    for (std::size_t i = 0; i < n; ++i) {
        check_one(ops[i], i, "ops");
        check_one(bytes[i], i, "bytes");
        if (ops[i] == 0 && bytes[i] > 0) {
            throw ConfigError(fmt::format("bytes[{}]={} with ops[{}]=0: bytes need at least one I/O", i, bytes[i], i));
        }
    }
}

namespace {
// The I/O of a closed loop: size, mix, service time, counting.
void check_closed_io(const ClosedLoop& c) {
    require_finite(c.io_bytes, "io_bytes");
    // A mean size may be fractional (a mix of sizes), but no I/O is smaller than a byte.
    if (!(c.io_bytes >= 1)) {
        throw ConfigError(
            fmt::format("io_bytes={} must be at least 1 byte (an I/O moves at least one byte)", c.io_bytes));
    }
    if (c.io_bytes > 1024.0 * 1024.0 * 1024.0) {
        throw ConfigError(fmt::format("io_bytes={} exceeds the 1 GiB limit on one I/O", c.io_bytes));
    }
    check_read_fraction(c.read_fraction);
    check_service_time(c.service_time_s);
    if (!std::isnan(c.counted_per_io)) require_positive(c.counted_per_io, "counted_per_io");
}
}  // namespace

namespace {
// The I/O fields an open loop and a piecewise open loop share.
void check_open_io(double read_fraction, double service_time_s, double max_in_flight) {
    check_read_fraction(read_fraction);
    check_service_time(service_time_s);
    if (!(max_in_flight > 0)) {  // also NaN; infinity is "no bound"
        throw ConfigError(
            fmt::format("max_in_flight={} must be a positive number of I/Os (infinity: no bound on outstanding I/Os)",
                        max_in_flight));
    }
}

// An open loop's per-step bound on outstanding I/Os: one value per step, each > 0 (infinity: no
// bound in that step), instead of the one max_in_flight.
void check_bound_steps(const OpenLoop& o) {
    const auto& m = o.max_in_flight_steps;
    if (m.empty()) return;
    if (m.size() != o.ops.size()) {
        throw ConfigError(
            fmt::format("max_in_flight_steps has {} steps but ops has {}: one bound per step", m.size(), o.ops.size()));
    }
    if (o.max_in_flight < std::numeric_limits<double>::infinity()) {
        throw ConfigError(
            fmt::format("max_in_flight={} and max_in_flight_steps are both given: give one bound for "
                        "the trace or one per step",
                        o.max_in_flight));
    }
    for (std::size_t i = 0; i < m.size(); ++i) {
        if (!(m[i] > 0)) {  // also NaN
            throw ConfigError(fmt::format(
                "max_in_flight_steps[{}]={} must be a positive number of I/Os (infinity: no bound in that step)", i,
                m[i]));
        }
    }
}

void check_piecewise(const PiecewiseOpenLoop& p, std::int64_t n_steps) {
    const auto& ch = p.change_steps;
    if (ch.empty()) throw ConfigError("change_steps is empty: a piecewise open loop needs at least one segment");
    if (p.ops.size() != ch.size() || p.bytes.size() != ch.size()) {
        throw ConfigError(
            fmt::format("change_steps has {} segments but ops has {} and bytes {}: one value of each per segment",
                        ch.size(), p.ops.size(), p.bytes.size()));
    }
    if (ch[0] != 0)
        throw ConfigError(fmt::format("change_steps[0]={} must be 0 (the first segment starts the run)", ch[0]));
    for (std::size_t i = 1; i < ch.size(); ++i) {
        if (ch[i] <= ch[i - 1]) {
            throw ConfigError(fmt::format("change_steps[{}]={} must be > change_steps[{}]={} (strictly increasing)", i,
                                          ch[i], i - 1, ch[i - 1]));
        }
    }
    if (ch.back() >= n_steps && n_steps > 0) {
        throw ConfigError(fmt::format("change_steps[{}]={} must be < the run's n_steps={} (a change inside the run)",
                                      ch.size() - 1, ch.back(), n_steps));
    }
    for (std::size_t i = 0; i < ch.size(); ++i) {
        check_one(p.ops[i], i, "ops");
        check_one(p.bytes[i], i, "bytes");
        if (p.ops[i] == 0 && p.bytes[i] > 0) {
            throw ConfigError(
                fmt::format("bytes[{}]={} with ops[{}]=0: bytes need at least one I/O", i, p.bytes[i], i));
        }
    }
    check_open_io(p.read_fraction, p.service_time_s, p.max_in_flight);
}
}  // namespace

void validate_workload(const Workload& w, std::int64_t n_steps, bool check_values) {
    if (const auto* pw = std::get_if<PiecewiseOpenLoop>(&w)) {
        check_piecewise(*pw, n_steps);
        return;
    }
    if (const auto* ph = std::get_if<PhasedClosedLoop>(&w)) {
        check_closed_io(ph->loop);
        for (auto [span, field] :
             {std::pair{ph->in_flight, "in_flight"}, std::pair{ph->think_time_s, "think_time_s"}}) {
            if (static_cast<std::int64_t>(span.size()) != n_steps) {
                throw ConfigError(
                    fmt::format("{} has {} steps but the run has n_steps={}", field, span.size(), n_steps));
            }
            for (std::size_t i = 0; i < span.size(); ++i) {
                if (!(span[i] >= 0 && span[i] < std::numeric_limits<double>::infinity())) {  // also NaN
                    throw ConfigError(fmt::format("{}[{}]={} must be a finite number >= 0", field, i, span[i]));
                }
            }
        }
        return;
    }
    if (const auto* c = std::get_if<ClosedLoop>(&w)) {
        require_positive(c->in_flight, "in_flight");
        check_closed_io(*c);
        require_finite(c->think_time_s, "think_time_s");
        if (c->think_time_s < 0) throw ConfigError(fmt::format("think_time_s={} must be >= 0", c->think_time_s));
    } else if (const auto* o = std::get_if<OpenLoop>(&w)) {
        if (o->ops.size() != o->bytes.size()) {
            throw ConfigError(fmt::format("ops has {} steps but bytes has {}: the arrays must have the same length",
                                          o->ops.size(), o->bytes.size()));
        }
        if (static_cast<std::int64_t>(o->ops.size()) != n_steps) {
            throw ConfigError(fmt::format("ops has {} steps but the run has n_steps={}", o->ops.size(), n_steps));
        }
        if (check_values) validate_trace(o->ops, o->bytes);
        check_open_io(o->read_fraction, o->service_time_s, o->max_in_flight);
        check_bound_steps(*o);
    }
}

}  // namespace ebssim
