#include <string>

#include "ebssim/burst.hpp"
#include "ebssim/engine.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
#include "pybind.hpp"

using namespace ebssim;

void bind_volume(py::module_& m) {
    py::class_<VolumeParams>(m, "VolumeParams")
        .def_property_readonly("type", [](const VolumeParams& p) { return std::string(to_string(p.type)); })
        .def_readonly("size_gib", &VolumeParams::size_gib)
        .def_readonly("nitro", &VolumeParams::nitro)
        .def_readonly("io_unit_bytes", &VolumeParams::io_unit_bytes)
        .def_readonly("merge_min_bytes", &VolumeParams::merge_min_bytes)
        .def_readonly("baseline_iops", &VolumeParams::baseline_iops)
        .def_readonly("burst_iops", &VolumeParams::burst_iops)
        .def_readonly("credit_capacity", &VolumeParams::credit_capacity)
        .def_readonly("initial_credits", &VolumeParams::initial_credits)
        .def_readonly("tput_burst_bytes_s", &VolumeParams::tput_burst_bytes_s)
        .def_readonly("tput_base_bytes_s", &VolumeParams::tput_base_bytes_s)
        .def_readonly("latency_s", &VolumeParams::latency_s)
        .def_readonly("transfer_bytes_s", &VolumeParams::transfer_bytes_s)
        .def("service_time_s", &VolumeParams::service_time_s, py::arg("io_bytes"));

    py::class_<VolumeSpec>(m, "VolumeSpec")
        .def(py::init([](const std::string& type, double size_gib, double iops, double throughput_mib_s,
                         double burst_balance_pct, double latency_ms, double transfer_mib_s) {
                 return VolumeSpec{parse_volume_type(type), size_gib,   iops,          throughput_mib_s,
                                   burst_balance_pct,       latency_ms, transfer_mib_s};
             }),
             py::arg("type"), py::arg("size_gib"), py::arg("iops") = unset, py::arg("throughput_mib_s") = unset,
             py::arg("burst_balance_pct") = unset, py::arg("latency_ms") = unset,
             py::arg("transfer_mib_s") = unset)
        .def_property_readonly("type", [](const VolumeSpec& s) { return std::string(to_string(s.type)); })
        .def_readonly("size_gib", &VolumeSpec::size_gib)
        .def_readonly("iops", &VolumeSpec::iops)
        .def_readonly("throughput_mib_s", &VolumeSpec::throughput_mib_s)
        .def_readonly("burst_balance_pct", &VolumeSpec::burst_balance_pct)
        .def_readonly("latency_ms", &VolumeSpec::latency_ms)
        .def_readonly("transfer_mib_s", &VolumeSpec::transfer_mib_s);

    m.def("make_volume", &make_volume, py::arg("spec"), py::arg("nitro") = true,
          "Validate a volume against AWS's rules and return its limit parameters.");

    using InArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
    auto span = [](const InArray& a) { return std::span<const double>(a.data(), static_cast<std::size_t>(a.size())); };
    m.attr("default_service_shape") = default_service_shape;
    m.def(
        "latency_quantiles",
        [span](const InArray& mean_latency_s, const InArray& completions, double service_time_s,
               const InArray& quantiles, double shape) {
            std::vector<double> out;
            {
                py::gil_scoped_release release;  // pure C++ over buffers the caller keeps alive
                out = latency_quantiles(span(mean_latency_s), span(completions), service_time_s, span(quantiles),
                                        shape);
            }
            return py::array_t<double>(static_cast<py::ssize_t>(out.size()), out.data());
        },
        py::arg("mean_latency_s"), py::arg("completions"), py::arg("service_time_s"), py::arg("quantiles"),
        py::arg("shape") = default_service_shape);
    m.def(
        "latency_moments",
        [span](const InArray& mean_latency_s, const InArray& completions, double service_time_s, double shape) {
            LatencyMoments r{};
            {
                py::gil_scoped_release release;
                r = latency_moments(span(mean_latency_s), span(completions), service_time_s, shape);
            }
            return py::make_tuple(r.mean_s, r.stddev_s);
        },
        py::arg("mean_latency_s"), py::arg("completions"), py::arg("service_time_s"),
        py::arg("shape") = default_service_shape);

    m.def("burst_duration_s", &burst_duration_s, py::arg("params"), py::arg("counted_iops"),
          py::arg("credits") = unset);
    m.def("refill_time_s", &refill_time_s, py::arg("params"), py::arg("counted_iops") = 0.0,
          py::arg("credits") = unset);
    m.def(
        "counted_ops_per_io",
        [](const VolumeParams& p, double io_bytes, bool sequential) {
            return counted_ops_per_io(p, io_bytes, sequential ? Pattern::sequential : Pattern::random);
        },
        py::arg("params"), py::arg("io_bytes"), py::arg("sequential"));

    // Closed-loop rules (workload.hpp, burst.hpp, latency.hpp); ClosedLoop is bound in bind_engine.cpp.
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
