// The fitter (ebssim/fit.hpp): plain functions over numpy arrays that return read-only result
// classes (ParamFit, LevelsFit, BucketFit, SimulatedWindows, ServiceTimeFit, GammaFit), used by
// the ebssim.fit package through its one thin wrapper module (ebssim/fit/_native.py).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

template <class T>
py::array_t<T> arr(const std::vector<T>& v) {
    return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

py::array_t<bool> arr(const std::vector<bool>& v) {
    py::array_t<bool> a(static_cast<py::ssize_t>(v.size()));
    auto m = a.mutable_unchecked<1>();
    for (std::size_t i = 0; i < v.size(); ++i) m(static_cast<py::ssize_t>(i)) = v[i];
    return a;
}

// A fit_levels result as Python sees it: the arrays are made once, so every read returns the same ones.
struct PyLevelsFit {
    py::array_t<double> level, level_se, change_s, change_se;
    py::array_t<bool> level_determined, change_determined;
    py::array_t<double> predicted;
    double ssr;
    int dof;
    bool converged;

    explicit PyLevelsFit(const fit::LevelsFit& r)
        : level(arr(r.level)),
          level_se(arr(r.level_se)),
          change_s(arr(r.change_s)),
          change_se(arr(r.change_se)),
          level_determined(arr(r.level_determined)),
          change_determined(arr(r.change_determined)),
          predicted(arr(r.predicted)),
          ssr(r.ssr),
          dof(r.dof),
          converged(r.converged) {}
};

// A fit_bucket_volume result as Python sees it.
struct PyBucketFit {
    fit::ParamFit size_gib, balance_pct, cliff_time_s;
    double size_used_gib, balance_used_pct;
    py::array_t<double> predicted;
    py::array_t<std::uint8_t> phase_bound;
    py::array_t<double> phase_iops;
    py::tuple profile;  // (size_gib, ssr) tuples
    double ssr;
    int dof;
    int engine_runs;

    explicit PyBucketFit(const fit::BucketFit& r)
        : size_gib(r.size_gib),
          balance_pct(r.balance_pct),
          cliff_time_s(r.cliff_time_s),
          size_used_gib(r.size_used_gib),
          balance_used_pct(r.balance_used_pct),
          predicted(arr(r.predicted)),
          phase_bound(arr(r.phase_bound)),
          phase_iops(arr(r.phase_iops)),
          profile(r.profile.size()),
          ssr(r.ssr),
          dof(r.dof),
          engine_runs(r.engine_runs) {
        for (std::size_t i = 0; i < r.profile.size(); ++i) {
            py::tuple pair(r.profile[i].size());
            for (std::size_t j = 0; j < r.profile[i].size(); ++j) pair[j] = r.profile[i][j];
            profile[i] = std::move(pair);
        }
    }
};

// What simulate_windows returns (fit::simulate_windows reports all but the prediction through
// out-parameters).
struct PySimulatedWindows {
    py::array_t<double> predicted;
    double cliff_time_s;
    py::array_t<std::uint8_t> phase_bound;
    py::array_t<double> phase_iops;
};

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
    py::class_<fit::ParamFit> pf(m, "ParamFit",
                                 "A parameter as fitted: value, standard error, and the interval the data allow.");
    pf.def_readonly("value", &fit::ParamFit::value, "The fitted value (NaN: not determined, only bounded).")
        .def_readonly("se", &fit::ParamFit::se, "Standard error (NaN: not determined, or no degrees of freedom left).")
        .def_readonly("lower", &fit::ParamFit::lower, "Lowest value consistent with the data.")
        .def_readonly("upper", &fit::ParamFit::upper, "Highest value consistent with the data.")
        .def_readonly("determined", &fit::ParamFit::determined,
                      "False: the data do not constrain the parameter (its interval reaches a limit).");
    def_fields_repr(pf);

    py::class_<PyLevelsFit> lf(m, "LevelsFit",
                               "Piecewise-constant levels and the free times they change, fitted to window means "
                               "(fit_levels). Arrays are numpy float64 (bool for the *_determined ones).");
    lf.def_readonly("level", &PyLevelsFit::level, "Per segment, the fitted level.")
        .def_readonly("level_se", &PyLevelsFit::level_se, "Per segment, the level's standard error (NaN: none).")
        .def_readonly("level_determined", &PyLevelsFit::level_determined,
                      "Per segment, whether the data constrain its level.")
        .def_readonly("change_s", &PyLevelsFit::change_s, "Per free change time, the fitted time, seconds.")
        .def_readonly("change_se", &PyLevelsFit::change_se,
                      "Per free change time, its standard error, seconds (NaN: none).")
        .def_readonly("change_determined", &PyLevelsFit::change_determined,
                      "Per free change time, whether the data constrain it.")
        .def_readonly("predicted", &PyLevelsFit::predicted, "Per window, the fitted mean.")
        .def_readonly("ssr", &PyLevelsFit::ssr, "Weighted sum of squared residuals.")
        .def_readonly("dof", &PyLevelsFit::dof, "Degrees of freedom (windows less determined parameters).")
        .def_readonly("converged", &PyLevelsFit::converged, "Whether Levenberg-Marquardt converged.");
    def_fields_repr(lf);

    py::class_<PyBucketFit> bf(m, "BucketFit",
                               "A bucket volume's size and starting balance fitted with the engine as forward "
                               "model (fit_bucket_volume).");
    bf.def_readonly("size_gib", &PyBucketFit::size_gib, "The size, GiB (whole GiB, profiled).")
        .def_readonly("balance_pct", &PyBucketFit::balance_pct, "BurstBalance at time 0, percent.")
        .def_readonly("cliff_time_s", &PyBucketFit::cliff_time_s,
                      "When the bucket first runs dry, seconds (NaN value: not in the fitted run).")
        .def_readonly("size_used_gib", &PyBucketFit::size_used_gib, "The whole size the other results are for.")
        .def_readonly("balance_used_pct", &PyBucketFit::balance_used_pct,
                      "The starting balance the other results are for, percent.")
        .def_readonly("predicted", &PyBucketFit::predicted,
                      "Per window, the engine's mean served I/Os per second (numpy float64).")
        .def_readonly("phase_bound", &PyBucketFit::phase_bound,
                      "Per phase, the bound that held most of its steps, indexed like ebssim.BOUND_NAMES "
                      "(numpy uint8).")
        .def_readonly("phase_iops", &PyBucketFit::phase_iops, "Per phase, mean served I/Os per second (numpy float64).")
        .def_readonly("profile", &PyBucketFit::profile, "The (size_gib, ssr) pairs tried, in order.")
        .def_readonly("ssr", &PyBucketFit::ssr, "Weighted sum of squared residuals at the fit.")
        .def_readonly("dof", &PyBucketFit::dof, "Degrees of freedom.")
        .def_readonly("engine_runs", &PyBucketFit::engine_runs, "Engine runs the fit took.");
    def_fields_repr(bf);

    py::class_<PySimulatedWindows> sw(m, "SimulatedWindows",
                                      "The fitter's forward model run on given phases (simulate_windows).");
    sw.def_readonly("predicted", &PySimulatedWindows::predicted,
                    "Per window, mean served I/Os per second (numpy float64).")
        .def_readonly("cliff_time_s", &PySimulatedWindows::cliff_time_s,
                      "When the bucket first ran dry, seconds (NaN: it did not).")
        .def_readonly("phase_bound", &PySimulatedWindows::phase_bound,
                      "Per phase, the bound that held most of its steps, indexed like ebssim.BOUND_NAMES "
                      "(numpy uint8).")
        .def_readonly("phase_iops", &PySimulatedWindows::phase_iops,
                      "Per phase, mean served I/Os per second (numpy float64).");
    def_fields_repr(sw);

    py::class_<fit::ServiceTimeFit> st(m, "ServiceTimeFit",
                                       "Unloaded service time s(b) = intercept_s + b x per_byte_s (fit_service_time).");
    st.def_readonly("intercept_s", &fit::ServiceTimeFit::intercept_s, "Service time of a 0-byte I/O, seconds.")
        .def_readonly("per_byte_s", &fit::ServiceTimeFit::per_byte_s,
                      "Seconds per byte (the given default, not determined, with one distinct size).")
        .def_readonly("ssr", &fit::ServiceTimeFit::ssr, "Weighted sum of squared residuals.")
        .def_readonly("dof", &fit::ServiceTimeFit::dof, "Degrees of freedom.")
        .def_readonly("distinct_sizes", &fit::ServiceTimeFit::distinct_sizes, "Distinct I/O sizes in the data.");
    def_fields_repr(st);

    py::class_<fit::GammaFit> gf(m, "GammaFit",
                                 "Maximum likelihood gamma distribution of binned latencies (fit_gamma).");
    gf.def_readonly("shape", &fit::GammaFit::shape, "The gamma shape.")
        .def_readonly("mean_s", &fit::GammaFit::mean_s, "The mean latency, seconds.")
        .def_readonly("log_likelihood", &fit::GammaFit::log_likelihood, "Log-likelihood at the fit.")
        .def_readonly("total", &fit::GammaFit::total, "Latencies counted.")
        .def_readonly("converged", &fit::GammaFit::converged, "Whether the Newton steps converged.");
    def_fields_repr(gf);

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
            return PyLevelsFit(r);
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
            return PyBucketFit(r);
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
            return PySimulatedWindows{arr(pred), cliff, arr(bound), arr(iops)};
        },
        py::arg("spec"), py::arg("phases"), py::arg("start_s"), py::arg("end_s"), py::arg("dt_s"),
        py::arg("instance") = std::nullopt);

    m.def(
        "fit_service_time",
        [](const InArray& io_bytes, const InArray& latency_s, const InArray& weight, double default_per_byte_s) {
            return fit::fit_service_time(vec(io_bytes, "io_bytes"), vec(latency_s, "latency_s"), vec(weight, "weight"),
                                         default_per_byte_s);
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
            return r;
        },
        py::arg("lower_s"), py::arg("upper_s"), py::arg("counts"));
}
