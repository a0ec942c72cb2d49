// Latency percentiles from per-step series (latency.hpp), and the closed forms under constant
// demand: what a closed loop reaches, how long a burst lasts, how long a refill takes (burst.hpp).

#include <vector>

#include "ebssim/burst.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
#include "pybind.hpp"

using namespace ebssim;

void bind_latency(py::module_& m) {
    m.attr("default_service_shape") = default_service_shape;
    m.attr("max_service_time_s") = max_service_time_s;
    m.def(
        "latency_quantiles",
        [](const InArray& mean_latency_s, const InArray& completions, double service_time_s, const InArray& quantiles,
           double shape) {
            std::vector<double> out;
            {
                py::gil_scoped_release release;  // pure C++ over buffers the caller keeps alive
                out = latency_quantiles(as_span(mean_latency_s), as_span(completions), service_time_s,
                                        as_span(quantiles), shape);
            }
            return py::array_t<double>(static_cast<py::ssize_t>(out.size()), out.data());
        },
        py::arg("mean_latency_s"), py::arg("completions"), py::arg("service_time_s"), py::arg("quantiles"),
        py::arg("shape") = default_service_shape);
    m.def(
        "latency_moments",
        [](const InArray& mean_latency_s, const InArray& completions, double service_time_s, double shape) {
            LatencyMoments r{};
            {
                py::gil_scoped_release release;  // as above
                r = latency_moments(as_span(mean_latency_s), as_span(completions), service_time_s, shape);
            }
            return py::make_tuple(r.mean_s, r.stddev_s);
        },
        py::arg("mean_latency_s"), py::arg("completions"), py::arg("service_time_s"),
        py::arg("shape") = default_service_shape);

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
