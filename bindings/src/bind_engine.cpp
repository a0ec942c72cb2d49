#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ebssim/engine.hpp"
#include "ebssim/error.hpp"
#include "pybind.hpp"

using namespace ebssim;

namespace {

using InArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// An open-loop workload that owns the numpy buffers its spans point into.
struct PyOpenLoop {
    InArray ops;
    InArray bytes;
    OpenLoop w;
};

InArray as_1d(const py::handle& obj, const char* field) {
    InArray a = InArray::ensure(obj);
    if (!a) throw ConfigError(fmt::format("{} must be a 1-D array of numbers", field));
    if (a.ndim() != 1) throw ConfigError(fmt::format("{} must be 1-D, got {} dimensions", field, a.ndim()));
    return a;
}

// Hand a vector to numpy without copying: the array owns the heap vector through a capsule.
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
    auto* heap = new std::vector<T>(std::move(v));
    py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(heap->size()), heap->data(), owner);
}

Pattern pattern_of(bool sequential) { return sequential ? Pattern::sequential : Pattern::random; }

Workload to_workload(const py::handle& h) {
    if (py::isinstance<ClosedLoop>(h)) return h.cast<ClosedLoop>();
    if (py::isinstance<Idle>(h)) return Idle{};
    if (py::isinstance<PyOpenLoop>(h)) return h.cast<const PyOpenLoop&>().w;
    throw ConfigError(fmt::format("workload must be ClosedLoop, OpenLoop or Idle, got {}",
                                  std::string(py::str(py::type::of(h).attr("__name__")))));
}

py::dict series_dict(StepSeries&& s) {
    py::dict d;
    d["iops"] = to_numpy(std::move(s.iops));
    d["ebs_iops"] = to_numpy(std::move(s.ebs_iops));
    d["throughput_mib_s"] = to_numpy(std::move(s.throughput_mib_s));
    d["credits"] = to_numpy(std::move(s.credits));
    d["queue_length"] = to_numpy(std::move(s.queue_length));
    d["latency_s"] = to_numpy(std::move(s.latency_s));
    d["bound"] = to_numpy(std::move(s.bound));
    return d;
}

py::dict totals_dict(const VolumeTotals& t) {
    py::dict d;
    d["demanded_ops"] = t.demanded_ops;
    d["demanded_bytes"] = t.demanded_bytes;
    d["served_ops"] = t.served_ops;
    d["served_bytes"] = t.served_bytes;
    d["served_counted"] = t.served_counted;
    d["latency_ops_s"] = t.latency_ops_s;
    d["backlog_ops"] = t.backlog_ops;
    d["backlog_bytes"] = t.backlog_bytes;
    d["credits_end"] = t.credits_end;
    d["cliff_time_s"] = t.cliff_time_s;
    d["steps_bound"] = py::make_tuple(t.steps_bound[0], t.steps_bound[1], t.steps_bound[2]);
    return d;
}

}  // namespace

void bind_engine(py::module_& m) {
    py::class_<Idle>(m, "Idle").def(py::init<>());

    py::class_<ClosedLoop>(m, "ClosedLoop")
        .def(py::init([](double in_flight, double io_bytes, double read_fraction, bool sequential,
                         double service_time_s) {
                 return ClosedLoop{in_flight, io_bytes, read_fraction, pattern_of(sequential), service_time_s};
             }),
             py::arg("in_flight"), py::arg("io_bytes"), py::arg("read_fraction") = 1.0,
             py::arg("sequential") = false, py::arg("service_time_s") = unset)
        .def_readonly("in_flight", &ClosedLoop::in_flight)
        .def_readonly("io_bytes", &ClosedLoop::io_bytes)
        .def_readonly("read_fraction", &ClosedLoop::read_fraction)
        .def_property_readonly("sequential", [](const ClosedLoop& c) { return c.pattern == Pattern::sequential; })
        .def_readonly("service_time_s", &ClosedLoop::service_time_s);

    py::class_<PyOpenLoop>(m, "OpenLoop")
        .def(py::init([](const py::object& ops, const py::object& bytes, double read_fraction, bool sequential,
                         double service_time_s) {
                 auto o = std::make_unique<PyOpenLoop>();
                 o->ops = as_1d(ops, "ops");
                 o->bytes = as_1d(bytes, "bytes");
                 o->w = OpenLoop{{o->ops.data(), static_cast<std::size_t>(o->ops.size())},
                                 {o->bytes.data(), static_cast<std::size_t>(o->bytes.size())},
                                 read_fraction,
                                 pattern_of(sequential),
                                 service_time_s};
                 return o;
             }),
             py::arg("ops"), py::arg("bytes"), py::arg("read_fraction") = 1.0, py::arg("sequential") = false,
             py::arg("service_time_s") = unset)
        .def_readonly("ops", &PyOpenLoop::ops)
        .def_readonly("bytes", &PyOpenLoop::bytes)
        .def_property_readonly("read_fraction", [](const PyOpenLoop& o) { return o.w.read_fraction; })
        .def_property_readonly("sequential", [](const PyOpenLoop& o) { return o.w.pattern == Pattern::sequential; })
        .def_property_readonly("service_time_s", [](const PyOpenLoop& o) { return o.w.service_time_s; });

    py::class_<Simulation>(m, "Simulation")
        .def(py::init<const std::vector<VolumeSpec>&, double>(), py::arg("volumes"), py::arg("dt_s") = 1.0)
        .def(
            "run",
            [](Simulation& sim, const py::list& workloads, std::int64_t n_steps, bool record) {
                std::vector<Workload> ws;
                ws.reserve(workloads.size());
                for (const auto& h : workloads) ws.push_back(to_workload(h));
                RunResult r;
                {
                    // Safe: the workloads hold spans into numpy buffers kept alive by `workloads`,
                    // and the engine touches no Python object.
                    py::gil_scoped_release release;
                    r = sim.run(ws, n_steps, record);
                }
                py::dict out;
                out["t0_s"] = r.t0_s;
                out["dt_s"] = r.dt_s;
                out["n_steps"] = r.n_steps;
                py::list series;
                for (auto& s : r.series) series.append(series_dict(std::move(s)));
                py::list totals;
                for (const auto& t : r.totals) totals.append(totals_dict(t));
                out["series"] = series;
                out["totals"] = totals;
                return out;
            },
            py::arg("workloads"), py::arg("n_steps"), py::arg("record") = true)
        .def_property_readonly("size", &Simulation::size)
        .def_property_readonly("dt_s", &Simulation::dt_s)
        .def_property_readonly("time_s", &Simulation::time_s)
        .def("params", &Simulation::params, py::arg("i"), py::return_value_policy::copy)
        .def("credits", &Simulation::credits, py::arg("i"))
        .def("backlog_ops", &Simulation::backlog_ops, py::arg("i"));
}
