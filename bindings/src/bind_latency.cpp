// Latency percentiles from per-step series (latency.hpp), and the closed forms under constant
// demand: what a closed loop reaches, how long a burst lasts, how long a refill takes (burst.hpp).

#include <limits>
#include <vector>

#include "ebssim/burst.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
#include "pybind.hpp"

using namespace ebssim;

void bind_latency(py::module_& m) {
    m.attr("max_service_time_s") = max_service_time_s;
    m.attr("min_service_cv") = min_service_cv;
    m.attr("max_cv") = max_cv;
    m.def(
        "default_wait_spread",
        [](bool nitro, double in_flight) {
            const WaitSpread w = default_wait_spread(nitro);
            return py::make_tuple(w.volume_cv, instance_wait_cv_at(w, in_flight));
        },
        py::arg("nitro"), py::arg("in_flight"));
    m.def(
        "held_in_flight",
        [](const InArray& mean_latency_s, const InArray& iops, double service_s) {
            return held_in_flight(as_span(mean_latency_s), as_span(iops), service_s);
        },
        py::arg("mean_latency_s"), py::arg("iops"), py::arg("service_s"));
    m.def("default_submitting", &default_submitting, py::arg("nitro"));
    m.def("submission_share", &submission_share, py::arg("depth"), py::arg("submitting"));
    m.def(
        "submission_latency_s",
        [](const InArray& mean_latency_s, const LatencyModel& model) {
            py::array_t<double> out(mean_latency_s.size());
            const double* in = mean_latency_s.data();
            double* o = out.mutable_data();
            for (py::ssize_t i = 0; i < mean_latency_s.size(); ++i) o[i] = submission_latency_s(in[i], model);
            return out;
        },
        py::arg("mean_latency_s"), py::arg("model"));
    py::class_<LatencyModel>(m, "LatencyModel")
        .def(py::init([](double read_service_s, double write_service_s, double read_fraction, double service_cv,
                         double wait_cv, double instance_wait_cv, double submission_share) {
                 LatencyModel lm{read_service_s, write_service_s,  read_fraction,   service_cv,
                                 wait_cv,        instance_wait_cv, submission_share};
                 check_latency_model(lm);
                 return lm;
             }),
             py::arg("read_service_s"), py::arg("write_service_s"), py::arg("read_fraction"), py::arg("service_cv"),
             py::arg("wait_cv"), py::arg("instance_wait_cv"), py::arg("submission_share") = 0.0)
        .def_readonly("read_service_s", &LatencyModel::read_service_s)
        .def_readonly("write_service_s", &LatencyModel::write_service_s)
        .def_readonly("read_fraction", &LatencyModel::read_fraction)
        .def_readonly("service_cv", &LatencyModel::service_cv)
        .def_readonly("wait_cv", &LatencyModel::wait_cv)
        .def_readonly("instance_wait_cv", &LatencyModel::instance_wait_cv)
        .def_readonly("submission_share", &LatencyModel::submission_share)
        .def("mean_service_s", &LatencyModel::mean_service_s);
    using U8Array = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;
    m.def(
        "latency_quantiles",
        [](const InArray& mean_latency_s, const InArray& completions, const U8Array& bound, const LatencyModel& model,
           const InArray& quantiles, int direction) {
            std::vector<double> out;
            const std::span<const std::uint8_t> b(bound.data(), static_cast<std::size_t>(bound.size()));
            {
                py::gil_scoped_release release;  // pure C++ over buffers the caller keeps alive
                out = latency_quantiles(as_span(mean_latency_s), as_span(completions), b, model, as_span(quantiles),
                                        static_cast<Direction>(direction));
            }
            return py::array_t<double>(static_cast<py::ssize_t>(out.size()), out.data());
        },
        py::arg("mean_latency_s"), py::arg("completions"), py::arg("bound"), py::arg("model"), py::arg("quantiles"),
        py::arg("direction"));
    m.def(
        "latency_moments",
        [](const InArray& mean_latency_s, const InArray& completions, const U8Array& bound, const LatencyModel& model,
           int direction) {
            LatencyMoments r{};
            const std::span<const std::uint8_t> b(bound.data(), static_cast<std::size_t>(bound.size()));
            {
                py::gil_scoped_release release;  // as above
                r = latency_moments(as_span(mean_latency_s), as_span(completions), b, model,
                                    static_cast<Direction>(direction));
            }
            return py::make_tuple(r.mean_s, r.stddev_s);
        },
        py::arg("mean_latency_s"), py::arg("completions"), py::arg("bound"), py::arg("model"), py::arg("direction"));

    m.def("burst_duration_s", &burst_duration_s, py::arg("params"), py::arg("counted_iops"),
          py::arg("credits") = unset);
    m.def("refill_time_s", &refill_time_s, py::arg("params"), py::arg("counted_iops") = 0.0,
          py::arg("credits") = unset);

    py::class_<ClosedLoopRate>(m, "ClosedLoopRate")
        .def_readonly("offered_iops", &ClosedLoopRate::offered_iops)
        .def_readonly("iops", &ClosedLoopRate::iops)
        .def_readonly("counted_iops", &ClosedLoopRate::counted_iops)
        .def_readonly("throughput_bytes_s", &ClosedLoopRate::throughput_bytes_s)
        .def_readonly("latency_s", &ClosedLoopRate::latency_s)
        .def_property_readonly("bound", [](const ClosedLoopRate& r) { return static_cast<int>(r.bound); });
    m.def("closed_loop_rate", &closed_loop_rate, py::arg("params"), py::arg("workload"),
          py::arg("with_credits") = true);
    m.def("cliff_time_s", py::overload_cast<const VolumeParams&, const ClosedLoop&, double>(&cliff_time_s),
          py::arg("params"), py::arg("workload"), py::arg("credits") = unset);
    m.def(
        "open_loop_cliff_time_s",
        [](const VolumeParams& p, double iops, double bytes_per_s, double read_fraction, bool sequential,
           double service_time_s, double max_in_flight, double credits) {
            const SteadyOpenLoop w{iops,           bytes_per_s,
                                   read_fraction,  sequential ? Pattern::sequential : Pattern::random,
                                   service_time_s, max_in_flight};
            return cliff_time_s(p, w, credits);
        },
        py::arg("params"), py::arg("iops"), py::arg("bytes_per_s"), py::arg("read_fraction") = 1.0,
        py::arg("sequential") = false, py::arg("service_time_s") = unset,
        py::arg("max_in_flight") = std::numeric_limits<double>::infinity(), py::arg("credits") = unset,
        "Seconds until a steady open loop (the same arrivals every second) empties the bucket (inf: never).");
    m.def("closed_loop_service_time_s", py::overload_cast<const VolumeParams&, const ClosedLoop&>(&service_time_s),
          py::arg("params"), py::arg("workload"));
    m.def(
        "closed_loop_latency_s",
        [](const VolumeParams& p, const ClosedLoop& w, const InArray& iops) {
            const double st = service_time_s(p, w);
            py::array_t<double> out(iops.size());
            const double* in = iops.data();
            double* o = out.mutable_data();
            for (py::ssize_t i = 0; i < iops.size(); ++i) {
                o[i] = closed_loop_latency_s(w.in_flight, in[i], st, w.think_time_s);
            }
            return out;
        },
        py::arg("params"), py::arg("workload"), py::arg("iops"));
}
