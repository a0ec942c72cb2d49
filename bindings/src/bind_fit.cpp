// The fitter (ebssim/fit.hpp): plain functions over numpy arrays and dicts of results, used by
// the ebssim.fit package through its one thin wrapper module (ebssim/fit/_native.py).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ebssim/error.hpp"
#include "ebssim/fit.hpp"
#include "pybind.hpp"

using namespace ebssim;

namespace {

using InArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::vector<double> vec(const InArray& a, const char* field) {
    if (a.ndim() != 1) throw ConfigError(fmt::format("{} must be 1-D, got {} dimensions", field, a.ndim()));
    return {a.data(), a.data() + a.size()};
}

fit::Windows windows(const InArray& start_s, const InArray& end_s, const InArray& value, const InArray& weight) {
    fit::Windows w{vec(start_s, "start_s"), vec(end_s, "end_s"), vec(value, "value"), vec(weight, "weight")};
    fit::validate(w);
    return w;
}

py::dict param(const fit::ParamFit& p) {
    py::dict d;
    d["value"] = p.value;
    d["se"] = p.se;
    d["lower"] = p.lower;
    d["upper"] = p.upper;
    d["determined"] = p.determined;
    return d;
}

py::array_t<double> arr(const std::vector<double>& v) {
    return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}

std::vector<fit::FitPhase> phases_of(const py::list& phases) {
    std::vector<fit::FitPhase> out;
    for (const auto& h : phases) {
        auto t = h.cast<py::tuple>();
        if (t.size() != 6)
            throw ConfigError("a phase is (start_s, end_s, io_bytes, read_fraction, sequential, demand_iops)");
        fit::FitPhase p;
        p.start_s = t[0].cast<double>();
        p.end_s = t[1].cast<double>();
        p.io_bytes = t[2].cast<double>();
        p.read_fraction = t[3].cast<double>();
        p.pattern = t[4].cast<bool>() ? Pattern::sequential : Pattern::random;
        p.demand_iops = t[5].cast<double>();
        out.push_back(p);
    }
    return out;
}

}  // namespace

void bind_fit(py::module_& m) {
    m.def(
        "fit_levels",
        [](const InArray& start_s, const InArray& end_s, const InArray& value, const InArray& weight,
           const std::vector<std::tuple<double, double, int, int>>& segments, const std::vector<double>& level0,
           const std::vector<double>& change0) {
            fit::Windows w = windows(start_s, end_s, value, weight);
            std::vector<fit::Segment> segs;
            segs.reserve(segments.size());
            for (const auto& [a, b, ca, cb] : segments) segs.push_back({a, b, ca, cb});
            fit::LevelsFit r;
            {
                py::gil_scoped_release release;  // pure C++ on copies of the inputs
                r = fit::fit_levels(w, segs, level0, change0);
            }
            py::dict d;
            d["level"] = arr(r.level);
            d["level_se"] = arr(r.level_se);
            d["level_determined"] = r.level_determined;
            d["change_s"] = arr(r.change_s);
            d["change_se"] = arr(r.change_se);
            d["change_determined"] = r.change_determined;
            d["predicted"] = arr(r.predicted);
            d["ssr"] = r.ssr;
            d["dof"] = r.dof;
            d["converged"] = r.converged;
            return d;
        },
        py::arg("start_s"), py::arg("end_s"), py::arg("value"), py::arg("weight"), py::arg("segments"),
        py::arg("level0"), py::arg("change0"));

    m.def(
        "fit_bucket_volume",
        [](const std::string& type, double size_gib, double size_guess_gib, double balance_guess_pct,
           const py::list& phases, const InArray& start_s, const InArray& end_s, const InArray& value,
           const InArray& weight, double dt_s, std::optional<InstanceSpec> instance) {
            fit::BucketFitInput in;
            in.type = parse_volume_type(type);
            in.size_gib = size_gib;
            in.size_guess_gib = size_guess_gib;
            in.balance_guess_pct = balance_guess_pct;
            in.phases = phases_of(phases);
            in.observed = windows(start_s, end_s, value, weight);
            in.dt_s = dt_s;
            in.instance = std::move(instance);
            fit::BucketFit r;
            {
                py::gil_scoped_release release;  // pure C++ on copies of the inputs
                r = fit::fit_bucket_volume(in);
            }
            py::dict d;
            d["size_gib"] = param(r.size_gib);
            d["balance_pct"] = param(r.balance_pct);
            d["cliff_time_s"] = param(r.cliff_time_s);
            d["size_used_gib"] = r.size_used_gib;
            d["balance_used_pct"] = r.balance_used_pct;
            d["predicted"] = arr(r.predicted);
            d["phase_bound"] = std::vector<int>(r.phase_bound.begin(), r.phase_bound.end());
            d["phase_iops"] = r.phase_iops;
            d["profile"] = r.profile;
            d["ssr"] = r.ssr;
            d["dof"] = r.dof;
            d["engine_runs"] = r.engine_runs;
            return d;
        },
        py::arg("type"), py::arg("size_gib"), py::arg("size_guess_gib"), py::arg("balance_guess_pct"),
        py::arg("phases"), py::arg("start_s"), py::arg("end_s"), py::arg("value"), py::arg("weight"), py::arg("dt_s"),
        py::arg("instance") = std::nullopt);

    m.def(
        "simulate_windows",
        [](const VolumeSpec& spec, const py::list& phases, const InArray& start_s, const InArray& end_s, double dt_s,
           const std::optional<InstanceSpec>& instance) {
            std::vector<double> s = vec(start_s, "start_s"), e = vec(end_s, "end_s");
            fit::Windows w{s, e, std::vector<double>(s.size(), 0.0), std::vector<double>(s.size(), 1.0)};
            fit::validate(w);
            const auto ph = phases_of(phases);
            double cliff = std::nan("");
            std::vector<std::uint8_t> bound;
            std::vector<double> iops, pred;
            {
                py::gil_scoped_release release;
                pred = fit::simulate_windows(spec, instance, ph, w, dt_s, &cliff, &bound, &iops);
            }
            py::dict d;
            d["predicted"] = arr(pred);
            d["cliff_time_s"] = cliff;
            d["phase_bound"] = std::vector<int>(bound.begin(), bound.end());
            d["phase_iops"] = iops;
            return d;
        },
        py::arg("spec"), py::arg("phases"), py::arg("start_s"), py::arg("end_s"), py::arg("dt_s"),
        py::arg("instance") = std::nullopt);

    m.def(
        "fit_service_time",
        [](const InArray& io_bytes, const InArray& latency_s, const InArray& weight, double default_per_byte_s) {
            const auto r = fit::fit_service_time(vec(io_bytes, "io_bytes"), vec(latency_s, "latency_s"),
                                                 vec(weight, "weight"), default_per_byte_s);
            py::dict d;
            d["intercept_s"] = param(r.intercept_s);
            d["per_byte_s"] = param(r.per_byte_s);
            d["ssr"] = r.ssr;
            d["dof"] = r.dof;
            d["distinct_sizes"] = r.distinct_sizes;
            return d;
        },
        py::arg("io_bytes"), py::arg("latency_s"), py::arg("weight"), py::arg("default_per_byte_s"));

    m.def(
        "fit_gamma",
        [](const InArray& lower_s, const InArray& upper_s, const InArray& counts) {
            fit::GammaFit r;
            auto lo = vec(lower_s, "lower_s"), up = vec(upper_s, "upper_s"), c = vec(counts, "counts");
            {
                py::gil_scoped_release release;
                r = fit::fit_gamma(lo, up, c);
            }
            py::dict d;
            d["shape"] = param(r.shape);
            d["mean_s"] = param(r.mean_s);
            d["log_likelihood"] = r.log_likelihood;
            d["total"] = r.total;
            d["converged"] = r.converged;
            return d;
        },
        py::arg("lower_s"), py::arg("upper_s"), py::arg("counts"));
}
