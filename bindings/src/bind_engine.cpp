#include <chrono>
#include <memory>
#include <optional>
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
py::array_t<T> to_numpy(Series<T>&& v) {
    auto* heap = new Series<T>(std::move(v));
    py::capsule owner(heap, [](void* p) { delete static_cast<Series<T>*>(p); });
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
    d["latency_s"] = to_numpy(std::move(s.latency_s));
    d["bound"] = to_numpy(std::move(s.bound));
    return d;
}

py::tuple steps_tuple(const std::int64_t (&steps)[n_bounds]) {
    py::tuple t(n_bounds);
    for (int i = 0; i < n_bounds; ++i) t[static_cast<std::size_t>(i)] = steps[i];
    return t;
}

SharePolicy parse_share(const std::string& s) {
    if (s == "proportional") return SharePolicy::proportional;
    if (s == "fair") return SharePolicy::fair;
    throw ConfigError(fmt::format("share='{}' is not a sharing policy; expected 'proportional' or 'fair'", s));
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
    d["steps_bound"] = steps_tuple(t.steps_bound);
    return d;
}

py::dict instance_dict(RunResult& r, bool record) {
    py::dict d;
    const InstanceTotals& t = r.instance_totals;
    d["served_counted"] = t.served_counted;
    d["served_bytes"] = t.served_bytes;
    d["io_credits_end"] = t.io_credits_end;
    d["bytes_credits_end"] = t.bytes_credits_end;
    d["io_cliff_time_s"] = t.io_cliff_time_s;
    d["bytes_cliff_time_s"] = t.bytes_cliff_time_s;
    d["steps_bound"] = steps_tuple(t.steps_bound);
    if (record) {
        InstanceSeries& s = r.instance_series;
        d["iops"] = to_numpy(std::move(s.iops));
        d["throughput_mb_s"] = to_numpy(std::move(s.throughput_mb_s));
        d["io_balance_pct"] = to_numpy(std::move(s.io_balance_pct));
        d["byte_balance_pct"] = to_numpy(std::move(s.byte_balance_pct));
        d["bound"] = to_numpy(std::move(s.bound));
    }
    return d;
}

bool on_main_thread() {
    py::module_ threading = py::module_::import("threading");
    return threading.attr("current_thread")().is(threading.attr("main_thread")());
}

}  // namespace

void bind_engine(py::module_& m) {
    py::register_exception<LimitError>(m, "LimitError", PyExc_ValueError);
    m.attr("default_max_volume_steps") = RunLimits{}.max_volume_steps;
    m.attr("default_max_memory_bytes") = RunLimits{}.max_memory_bytes;

    py::class_<Idle>(m, "Idle").def(py::init<>());

    py::class_<ClosedLoop>(m, "ClosedLoop")
        .def(py::init([](double in_flight, double io_bytes, double read_fraction, bool sequential,
                         double service_time_s, double think_time_s, double counted_per_io) {
                 return ClosedLoop{in_flight,      io_bytes,     read_fraction, pattern_of(sequential),
                                   service_time_s, think_time_s, counted_per_io};
             }),
             py::arg("in_flight"), py::arg("io_bytes"), py::arg("read_fraction") = 1.0,
             py::arg("sequential") = false, py::arg("service_time_s") = unset, py::arg("think_time_s") = 0.0,
             py::arg("counted_per_io") = unset)
        .def_readonly("in_flight", &ClosedLoop::in_flight)
        .def_readonly("io_bytes", &ClosedLoop::io_bytes)
        .def_readonly("read_fraction", &ClosedLoop::read_fraction)
        .def_property_readonly("sequential", [](const ClosedLoop& c) { return c.pattern == Pattern::sequential; })
        .def_readonly("service_time_s", &ClosedLoop::service_time_s)
        .def_readonly("think_time_s", &ClosedLoop::think_time_s)
        .def_readonly("counted_per_io", &ClosedLoop::counted_per_io);

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

    py::class_<InstanceSpec>(m, "InstanceSpec")
        .def(py::init([](const std::string& name, double baseline_iops, double max_iops, double baseline_mb_s,
                         double max_mb_s, bool nitro, double burst_s, double refill_s, double io_balance_pct,
                         double byte_balance_pct, const std::string& share) {
                 return InstanceSpec{name,    baseline_iops, max_iops,       baseline_mb_s,
                                     max_mb_s, nitro,        burst_s,        refill_s,
                                     io_balance_pct, byte_balance_pct, parse_share(share)};
             }),
             py::arg("name"), py::arg("baseline_iops"), py::arg("max_iops"), py::arg("baseline_mb_s"),
             py::arg("max_mb_s"), py::arg("nitro") = true, py::arg("burst_s") = 1800.0,
             py::arg("refill_s") = 84600.0, py::arg("io_balance_pct") = 100.0, py::arg("byte_balance_pct") = 100.0,
             py::arg("share") = "proportional")
        .def_readonly("name", &InstanceSpec::name)
        .def_readonly("baseline_iops", &InstanceSpec::baseline_iops)
        .def_readonly("max_iops", &InstanceSpec::max_iops)
        .def_readonly("baseline_mb_s", &InstanceSpec::baseline_mb_s)
        .def_readonly("max_mb_s", &InstanceSpec::max_mb_s)
        .def_readonly("nitro", &InstanceSpec::nitro);

    py::class_<InstanceParams>(m, "InstanceParams")
        .def_readonly("name", &InstanceParams::name)
        .def_readonly("nitro", &InstanceParams::nitro)
        .def_readonly("baseline_iops", &InstanceParams::baseline_iops)
        .def_readonly("max_iops", &InstanceParams::max_iops)
        .def_readonly("baseline_bytes_s", &InstanceParams::baseline_bytes_s)
        .def_readonly("max_bytes_s", &InstanceParams::max_bytes_s)
        .def_readonly("io_capacity", &InstanceParams::io_capacity)
        .def_readonly("bytes_capacity", &InstanceParams::bytes_capacity)
        .def_readonly("io_earn_idle", &InstanceParams::io_earn_idle)
        .def_readonly("bytes_earn_idle", &InstanceParams::bytes_earn_idle);
    m.def("make_instance", &make_instance, py::arg("spec"));

    py::class_<Simulation>(m, "Simulation")
        .def(py::init<const std::vector<VolumeSpec>&, double>(), py::arg("volumes"), py::arg("dt_s") = 1.0)
        .def(py::init<const std::vector<VolumeSpec>&, const InstanceSpec&, double>(), py::arg("volumes"),
             py::arg("instance"), py::arg("dt_s") = 1.0)
        .def(
            "run",
            [](Simulation& sim, const py::list& workloads, std::int64_t n_steps, bool record,
               std::int64_t max_volume_steps, std::int64_t max_memory_bytes) {
                std::vector<Workload> ws;
                ws.reserve(workloads.size());
                for (const auto& h : workloads) ws.push_back(to_workload(h));
                // Ctrl-C: Python runs signal handlers only in the main thread, and only when asked,
                // so a long run there polls for them; the clock keeps GIL round trips to a few a second.
                std::optional<py::error_already_set> signal;
                InterruptCheck check;
                if (on_main_thread()) {
                    check = [&signal, last = std::chrono::steady_clock::now()]() mutable {
                        const auto now = std::chrono::steady_clock::now();
                        if (now - last < std::chrono::milliseconds(50)) return false;
                        last = now;
                        py::gil_scoped_acquire gil;
                        if (PyErr_CheckSignals() == 0) return false;
                        signal.emplace();  // takes the exception a handler raised (KeyboardInterrupt)
                        return true;
                    };
                }
                RunResult r;
                {
                    // Safe: the workloads hold spans into numpy buffers kept alive by `workloads`,
                    // and the engine touches no Python object (the check takes the GIL itself).
                    py::gil_scoped_release release;
                    try {
                        r = sim.run(ws, n_steps, record, RunLimits{max_volume_steps, max_memory_bytes}, check);
                    } catch (const Interrupted&) {
                        // The run was undone; the handler's exception is raised below, with the GIL.
                        if (!signal) throw;
                    }
                }
                if (signal) throw *signal;
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
                out["instance"] = r.has_instance ? py::object(instance_dict(r, record)) : py::object(py::none());
                return out;
            },
            py::arg("workloads"), py::arg("n_steps"), py::arg("record") = true,
            py::arg("max_volume_steps") = RunLimits{}.max_volume_steps,
            py::arg("max_memory_bytes") = RunLimits{}.max_memory_bytes)
        .def_property_readonly("size", &Simulation::size)
        .def_property_readonly("dt_s", &Simulation::dt_s)
        .def_property_readonly("time_s", &Simulation::time_s)
        .def("params", &Simulation::params, py::arg("i"), py::return_value_policy::copy)
        .def("credits", &Simulation::credits, py::arg("i"))
        .def("backlog_ops", &Simulation::backlog_ops, py::arg("i"))
        .def_property_readonly("has_instance", &Simulation::has_instance)
        .def_property_readonly("instance_io_credits", &Simulation::instance_io_credits)
        .def_property_readonly("instance_bytes_credits", &Simulation::instance_bytes_credits);
}
