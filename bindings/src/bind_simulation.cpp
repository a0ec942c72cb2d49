// The engine (Simulation), the bounds on one run, and its results: per-volume and per-instance
// totals, per-step series, and the run that holds them.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ebssim/engine.hpp"
#include "ebssim/error.hpp"
#include "pybind.hpp"

using namespace ebssim;

namespace {

// Hand a buffer to numpy without copying: the array owns the heap Series through a capsule.
template <class T>
py::array_t<T> to_numpy(Series<T>&& v) {
    auto* heap = new Series<T>(std::move(v));
    py::capsule owner(heap, [](void* p) { delete static_cast<Series<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(heap->size()), heap->data(), owner);
}

// The per-step outputs of one volume as numpy arrays, made once per run; empty (length 0) when
// the run was not recorded.
struct PyVolumeSeries {
    py::array_t<double> iops, ebs_iops, throughput_mib_s, credits, latency_s, backlog_ops;
    py::array_t<std::uint8_t> bound;

    explicit PyVolumeSeries(StepSeries&& s)
        : iops(to_numpy(std::move(s.iops))),
          ebs_iops(to_numpy(std::move(s.ebs_iops))),
          throughput_mib_s(to_numpy(std::move(s.throughput_mib_s))),
          credits(to_numpy(std::move(s.credits))),
          latency_s(to_numpy(std::move(s.latency_s))),
          backlog_ops(to_numpy(std::move(s.backlog_ops))),
          bound(to_numpy(std::move(s.bound))) {}
};

struct PyInstanceSeries {
    py::array_t<double> iops, throughput_mb_s, io_balance_pct, byte_balance_pct;
    py::array_t<std::uint8_t> bound;

    explicit PyInstanceSeries(InstanceSeries&& s)
        : iops(to_numpy(std::move(s.iops))),
          throughput_mb_s(to_numpy(std::move(s.throughput_mb_s))),
          io_balance_pct(to_numpy(std::move(s.io_balance_pct))),
          byte_balance_pct(to_numpy(std::move(s.byte_balance_pct))),
          bound(to_numpy(std::move(s.bound))) {}
};

// A run as Python sees it: the Python objects are made once, so every read returns the same ones.
struct PyRunResult {
    double t0_s = 0;
    double dt_s = 1;
    std::int64_t n_steps = 0;
    py::tuple series;            // VolumeSeries, one per volume
    py::tuple totals;            // VolumeTotals, one per volume
    py::object instance_series;  // InstanceSeries, or None without an instance
    py::object instance_totals;  // InstanceTotals, or None without an instance

    explicit PyRunResult(RunResult&& r)
        : t0_s(r.t0_s),
          dt_s(r.dt_s),
          n_steps(r.n_steps),
          series(r.totals.size()),
          totals(r.totals.size()),
          instance_series(py::none()),
          instance_totals(py::none()) {
        for (std::size_t i = 0; i < r.totals.size(); ++i) {
            // r.series is empty when the run was not recorded: each volume gets empty arrays.
            series[i] = py::cast(PyVolumeSeries(i < r.series.size() ? std::move(r.series[i]) : StepSeries{}));
            totals[i] = py::cast(r.totals[i]);
        }
        if (r.has_instance) {
            instance_series = py::cast(PyInstanceSeries(std::move(r.instance_series)));
            instance_totals = py::cast(r.instance_totals);
        }
    }
};

py::tuple steps_tuple(const std::int64_t (&steps)[n_bounds]) {
    py::tuple t(n_bounds);
    for (std::size_t i = 0; i < static_cast<std::size_t>(n_bounds); ++i) t[i] = steps[i];
    return t;
}

py::tuple episodes_tuple(const std::vector<CliffEpisode>& episodes) {
    py::tuple t(episodes.size());
    for (std::size_t i = 0; i < episodes.size(); ++i) t[i] = py::cast(episodes[i]);
    return t;
}

bool on_main_thread() {
    py::module_ threading = py::module_::import("threading");
    return threading.attr("current_thread")().is(threading.attr("main_thread")());
}

// Calls body(check) with the GIL released, `check` honouring Ctrl-C: Python runs signal
// handlers only in the main thread, and only when asked, so a long run there polls for them;
// the clock keeps GIL round trips to a few a second. The engine calls the check from this
// (the calling) thread only. Raises the handler's exception (KeyboardInterrupt) after an
// interrupted run, which the engine has undone.
template <class Body>
void without_gil(Body&& body) {
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
    {
        py::gil_scoped_release release;
        try {
            body(check);
        } catch (const Interrupted&) {
            // The run was undone; the handler's exception is raised below, with the GIL.
            if (!signal) throw;
        }
    }
    if (signal) throw *signal;
}

void bind_results(py::module_& m) {
    py::class_<CliffEpisode> ce(m, "CliffEpisode",
                                "A stretch of one run in which a credit bucket was empty, simulated seconds.");
    ce.def_readonly("start_s", &CliffEpisode::start_s,
                    "When the bucket ran dry (interpolated inside the step); the run's start when it started the "
                    "run empty under demand.")
        .def_readonly("end_s", &CliffEpisode::end_s,
                      "Start of the first step that ended with credits again (NaN: still empty at the end of the "
                      "run).")
        .def(
            "__eq__",
            [](const CliffEpisode& a, const CliffEpisode& b) {
                // The same episode: NaN (still empty at the end of the run) matches NaN.
                auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
                return same(a.start_s, b.start_s) && same(a.end_s, b.end_s);
            },
            py::is_operator());
    def_fields_repr(ce);

    py::class_<VolumeTotals> vt(m, "VolumeTotals", "One volume's totals over one run (always computed).");
    vt.def_readonly("demanded_ops", &VolumeTotals::demanded_ops,
                    "I/Os that arrived (open loop) or were issued (closed loop).")
        .def_readonly("demanded_bytes", &VolumeTotals::demanded_bytes, "Bytes of the demanded I/Os.")
        .def_readonly("served_ops", &VolumeTotals::served_ops, "Application I/Os completed.")
        .def_readonly("served_bytes", &VolumeTotals::served_bytes, "Bytes completed.")
        .def_readonly("served_counted", &VolumeTotals::served_counted, "EBS-counted operations completed.")
        .def_readonly("latency_ops_s", &VolumeTotals::latency_ops_s,
                      "Sum over the steps of mean latency x I/Os completed, seconds (divide by served_ops for the "
                      "I/O-weighted mean latency).")
        .def_readonly("backlog_ops", &VolumeTotals::backlog_ops, "I/Os still queued at the end (open loop).")
        .def_readonly("backlog_bytes", &VolumeTotals::backlog_bytes, "Bytes still queued at the end.")
        .def_readonly("credits_end", &VolumeTotals::credits_end,
                      "Burst credits at the end (I/O credits; MiB on st1 and sc1; 0 without a bucket).")
        .def_readonly("cliff_time_s", &VolumeTotals::cliff_time_s,
                      "First time the bucket ran dry in this run, simulated seconds (NaN: it never did).")
        .def_property_readonly(
            "steps_bound", [](const VolumeTotals& t) { return steps_tuple(t.steps_bound); },
            "Steps spent in each bound, indexed like ebssim.BOUND_NAMES.")
        .def_property_readonly(
            "cliffs", [](const VolumeTotals& t) { return episodes_tuple(t.cliffs); },
            "Every CliffEpisode of this run in which the credit bucket was empty, in order.");
    def_fields_repr(vt);
    def_field_subscript(vt);

    py::class_<InstanceTotals> it(m, "InstanceTotals", "The instance's totals over one run, all volumes together.");
    it.def_readonly("served_counted", &InstanceTotals::served_counted, "EBS-counted operations completed.")
        .def_readonly("served_bytes", &InstanceTotals::served_bytes, "Bytes completed.")
        .def_readonly("io_credits_end", &InstanceTotals::io_credits_end, "I/O bucket at the end.")
        .def_readonly("bytes_credits_end", &InstanceTotals::bytes_credits_end, "Byte bucket at the end.")
        .def_readonly("io_cliff_time_s", &InstanceTotals::io_cliff_time_s,
                      "First time EBSIOBalance% reached 0 in this run, simulated seconds (NaN: never).")
        .def_readonly("bytes_cliff_time_s", &InstanceTotals::bytes_cliff_time_s,
                      "First time EBSByteBalance% reached 0 in this run, simulated seconds (NaN: never).")
        .def_property_readonly(
            "steps_bound", [](const InstanceTotals& t) { return steps_tuple(t.steps_bound); },
            "Steps spent in each bound, indexed like ebssim.BOUND_NAMES.")
        .def_property_readonly(
            "io_cliffs", [](const InstanceTotals& t) { return episodes_tuple(t.io_cliffs); },
            "Every CliffEpisode of this run with EBSIOBalance% at 0, in order.")
        .def_property_readonly(
            "bytes_cliffs", [](const InstanceTotals& t) { return episodes_tuple(t.bytes_cliffs); },
            "Every CliffEpisode of this run with EBSByteBalance% at 0, in order.");
    def_fields_repr(it);
    def_field_subscript(it);

    py::class_<PyVolumeSeries> vs(
        m, "VolumeSeries",
        "One volume's per-step outputs over one run: numpy arrays, one entry per step, that own the engine's "
        "buffers (no copy). Empty when the run was not recorded. Rates are averages over the step.");
    vs.def_readonly("iops", &PyVolumeSeries::iops, "Application I/Os completed per second.")
        .def_readonly("ebs_iops", &PyVolumeSeries::ebs_iops,
                      "EBS-counted operations per second (256 KiB units on SSD, 1 MiB on HDD).")
        .def_readonly("throughput_mib_s", &PyVolumeSeries::throughput_mib_s, "MiB/s completed.")
        .def_readonly("credits", &PyVolumeSeries::credits,
                      "Burst credits at the end of the step (I/O credits; MiB on st1 and sc1; 0 without a bucket).")
        .def_readonly("latency_s", &PyVolumeSeries::latency_s,
                      "Mean latency of the I/Os completed in the step, seconds (NaN where none completed).")
        .def_readonly("backlog_ops", &PyVolumeSeries::backlog_ops,
                      "I/Os waiting at the end of the step (arrived, not completed, not in service): queued at the "
                      "device or, above an open loop's max_in_flight, held back in the application.")
        .def_readonly("bound", &PyVolumeSeries::bound,
                      "Which limit held the volume back (uint8): an index into ebssim.BOUND_NAMES.");
    def_fields_repr(vs);

    py::class_<PyInstanceSeries> is(
        m, "InstanceSeries",
        "The instance's per-step outputs over one run, all volumes together: numpy arrays as in VolumeSeries.");
    is.def_readonly("iops", &PyInstanceSeries::iops, "EBS-counted operations per second.")
        .def_readonly("throughput_mb_s", &PyInstanceSeries::throughput_mb_s, "Decimal MB/s.")
        .def_readonly("io_balance_pct", &PyInstanceSeries::io_balance_pct,
                      "CloudWatch's EBSIOBalance% at the end of the step.")
        .def_readonly("byte_balance_pct", &PyInstanceSeries::byte_balance_pct,
                      "CloudWatch's EBSByteBalance% at the end of the step.")
        .def_readonly("bound", &PyInstanceSeries::bound,
                      "demand, instance_iops or instance_throughput (uint8): an index into ebssim.BOUND_NAMES.");
    def_fields_repr(is);

    py::class_<PyRunResult> rr(m, "RunResult", "The outputs of one Simulation.run.");
    rr.def_readonly("t0_s", &PyRunResult::t0_s, "Simulated time at the start of the run, seconds.")
        .def_readonly("dt_s", &PyRunResult::dt_s, "The step, seconds.")
        .def_readonly("n_steps", &PyRunResult::n_steps, "Steps in the run.")
        .def_readonly("series", &PyRunResult::series, "A VolumeSeries per volume (empty arrays when not recorded).")
        .def_readonly("totals", &PyRunResult::totals, "A VolumeTotals per volume.")
        .def_readonly("instance_series", &PyRunResult::instance_series,
                      "The instance's InstanceSeries (empty arrays when not recorded); None without an instance.")
        .def_readonly("instance_totals", &PyRunResult::instance_totals,
                      "The instance's InstanceTotals; None without an instance.");
    def_fields_repr(rr);
}

}  // namespace

namespace {

// run_many: items as (Simulation, workloads, n_steps, record) tuples; each outcome a RunResult,
// or the message of the ConfigError that refused that item.
py::list run_many_py(const py::list& items, std::int64_t max_volume_steps, std::int64_t max_memory_bytes, int threads,
                     bool jump) {
    std::vector<std::vector<Workload>> workloads(items.size());
    std::vector<FleetItem> fleet(items.size());
    std::size_t k = 0;
    for (const auto& h : items) {
        const auto t = h.cast<py::tuple>();
        if (t.size() != 4) {
            throw ConfigError(
                fmt::format("items[{}] must be (simulation, workloads, n_steps, record), got {} values", k, t.size()));
        }
        for (const auto& w : t[1].cast<py::list>()) workloads[k].push_back(to_workload(w));
        fleet[k] = FleetItem{&t[0].cast<Simulation&>(), &workloads[k], t[2].cast<std::int64_t>(), t[3].cast<bool>()};
        ++k;
    }
    std::vector<FleetOutcome> outcomes;
    // `items` keeps the Simulations and the trace buffers alive while the GIL is released.
    without_gil([&](const InterruptCheck& check) {
        outcomes = run_many(fleet, RunLimits{max_volume_steps, max_memory_bytes}, check,
                            RunOptions{.threads = threads, .jump = jump});
    });
    py::list out;
    for (auto& o : outcomes) {
        if (o.result) {
            out.append(py::cast(PyRunResult(std::move(*o.result))));
        } else {
            out.append(py::str(o.error));
        }
    }
    return out;
}

void bind_run_many(py::module_& m) {
    m.def("run_many", &run_many_py, py::arg("items"), py::arg("max_volume_steps") = RunLimits{}.max_volume_steps,
          py::arg("max_memory_bytes") = RunLimits{}.max_memory_bytes, py::arg("threads") = RunOptions{}.threads,
          py::arg("jump") = RunOptions{}.jump,
          "Run independent Simulations over `threads` threads (0: every core). items: (simulation, workloads, "
          "n_steps, record) tuples. Returns, per item in order, its RunResult or the message of the error that "
          "refused it (that Simulation unchanged). Ctrl-C or another error undoes every item.");
    m.attr("hardware_threads") = std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace

void bind_simulation(py::module_& m) {
    py::register_exception<LimitError>(m, "LimitError", PyExc_ValueError);
    m.attr("default_max_volume_steps") = RunLimits{}.max_volume_steps;
    m.attr("default_max_memory_bytes") = RunLimits{}.max_memory_bytes;
    py::tuple names(n_bounds);
    for (int i = 0; i < n_bounds; ++i) names[static_cast<std::size_t>(i)] = py::str(std::string(bound_names[i]));
    m.attr("BOUND_NAMES") = names;

    bind_results(m);

    py::class_<Simulation>(m, "Simulation")
        .def(py::init<const std::vector<VolumeSpec>&, double>(), py::arg("volumes"), py::arg("dt_s") = 1.0)
        .def(py::init<const std::vector<VolumeSpec>&, const InstanceSpec&, double>(), py::arg("volumes"),
             py::arg("instance"), py::arg("dt_s") = 1.0)
        .def(
            "run",
            [](Simulation& sim, const py::list& workloads, std::int64_t n_steps, bool record,
               std::int64_t max_volume_steps, std::int64_t max_memory_bytes, int threads, bool jump, bool lockstep) {
                std::vector<Workload> ws;
                ws.reserve(workloads.size());
                for (const auto& h : workloads) ws.push_back(to_workload(h));
                RunResult r;
                // Safe without the GIL: the workloads hold spans into numpy buffers kept alive by
                // `workloads`, and the engine touches no Python object (the check takes the GIL itself).
                without_gil([&](const InterruptCheck& check) {
                    r = sim.run(ws, n_steps, record, RunLimits{max_volume_steps, max_memory_bytes}, check,
                                RunOptions{.threads = threads, .jump = jump, .lockstep = lockstep});
                });
                return PyRunResult(std::move(r));
            },
            py::arg("workloads"), py::arg("n_steps"), py::arg("record") = true,
            py::arg("max_volume_steps") = RunLimits{}.max_volume_steps,
            py::arg("max_memory_bytes") = RunLimits{}.max_memory_bytes, py::arg("threads") = RunOptions{}.threads,
            py::arg("jump") = RunOptions{}.jump, py::arg("lockstep") = RunOptions{}.lockstep)
        .def_property_readonly("size", &Simulation::size)
        .def_property_readonly("dt_s", &Simulation::dt_s)
        .def_property_readonly("time_s", &Simulation::time_s)
        .def("params", &Simulation::params, py::arg("i"), py::return_value_policy::copy)
        .def("credits", &Simulation::credits, py::arg("i"))
        .def("backlog_ops", &Simulation::backlog_ops, py::arg("i"))
        .def_property_readonly("has_instance", &Simulation::has_instance)
        .def_property_readonly("instance_io_credits", &Simulation::instance_io_credits)
        .def_property_readonly("instance_bytes_credits", &Simulation::instance_bytes_credits);
    bind_run_many(m);
}
