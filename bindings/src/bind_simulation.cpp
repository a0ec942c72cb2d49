// The engine (Simulation), the bounds on one run, and its results: per-volume and per-instance
// totals, per-step series, and the run that holds them.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ebssim/engine.hpp"
#include "ebssim/error.hpp"
#include "ebssim/recorder.hpp"
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

// A recorded series as numpy: the caller's own array when it was written into a caller buffer
// (`given`), else the engine's buffer (float64 or float32), without a copy.
py::array column_array(Column&& c, const py::object& given) {
    if (c.borrowed() && !given.is_none()) return py::reinterpret_borrow<py::array>(given);
    if (c.dtype() == Dtype::f32) return to_numpy(std::move(c.f32()));
    return to_numpy(std::move(c.f64()));
}
py::array bound_array(Series<std::uint8_t>&& b, const py::object& given) {
    if (b.borrowed() && !given.is_none()) return py::reinterpret_borrow<py::array>(given);
    return to_numpy(std::move(b));
}

// Caller buffers as the run received them: per volume (and the instance), per field, the array
// written into (None: the engine allocated it).
using Given = std::vector<py::object>;
const py::object& given_at(const Given& g, std::size_t f) {
    static const py::object none = py::none();
    return f < g.size() ? g[f] : none;
}

// A series of s (Column or bound codes) as numpy.
py::object series_array(Column&& c, const py::object& given) { return column_array(std::move(c), given); }
py::object series_array(Series<std::uint8_t>&& b, const py::object& given) { return bound_array(std::move(b), given); }

// The recorded outputs of one volume (S = StepSeries) or of the instance (InstanceSeries) as
// numpy arrays, made once per run, one per row of the series table; empty (length 0) when the
// run was not recorded or the series was not chosen.
template <class S, std::size_t N>
struct PySeries {
    std::array<py::object, N> arrays;

    PySeries(S&& s, const Given& g) {
        s.for_each([&](auto f, auto& c) {
            const auto i = static_cast<std::size_t>(f);
            arrays[i] = series_array(std::move(c), given_at(g, i));
        });
    }
};
using PyVolumeSeries = PySeries<StepSeries, n_volume_fields>;
using PyInstanceSeries = PySeries<InstanceSeries, n_instance_fields>;

// A read-only property per row of `table`, its docstring the row's.
template <class Py, std::size_t N>
void def_series_properties(py::class_<Py>& cls, const SeriesRow (&table)[N]) {
    for (std::size_t i = 0; i < N; ++i) {
        // The table's names and docs are string literals: null-terminated, static.
        cls.def_property_readonly(
            table[i].name.data(), [i](const Py& s) { return s.arrays[i]; }, table[i].doc.data());
    }
}

// The table as Python: (name, aggregation, source, doc) per row.
template <std::size_t N>
py::tuple series_table(const SeriesRow (&table)[N]) {
    py::tuple rows(N);
    for (std::size_t i = 0; i < N; ++i) {
        const SeriesRow& r = table[i];
        rows[i] = py::make_tuple(std::string(r.name), std::string(aggregation_names[static_cast<int>(r.aggregation)]),
                                 std::string(table[r.source].name), std::string(r.doc));
    }
    return rows;
}

// A run as Python sees it: the Python objects are made once, so every read returns the same ones.
struct PyRunResult {
    double t0_s = 0;
    double dt_s = 1;
    std::int64_t n_steps = 0;
    std::int64_t record_every = 1;
    py::tuple series;            // VolumeSeries, one per volume
    py::tuple totals;            // VolumeTotals, one per volume
    py::object instance_series;  // InstanceSeries, or None without an instance
    py::object instance_totals;  // InstanceTotals, or None without an instance

    explicit PyRunResult(RunResult&& r, const std::vector<Given>& given = {}, const Given& instance_given = {})
        : t0_s(r.t0_s),
          dt_s(r.dt_s),
          n_steps(r.n_steps),
          record_every(r.record_every),
          series(r.totals.size()),
          totals(r.totals.size()),
          instance_series(py::none()),
          instance_totals(py::none()) {
        // r.series is empty when the run was not recorded: every volume gets the same empty
        // series (one object: a fleet's totals-only run would spend microseconds a volume on it).
        py::object empty;
        if (r.series.empty()) empty = py::cast(PyVolumeSeries(StepSeries{}, Given{}));
        for (std::size_t i = 0; i < r.totals.size(); ++i) {
            series[i] = r.series.empty()
                            ? empty
                            : py::cast(PyVolumeSeries(std::move(r.series[i]), i < given.size() ? given[i] : Given{}));
            totals[i] = py::cast(r.totals[i]);
        }
        if (r.has_instance) {
            instance_series = py::cast(PyInstanceSeries(std::move(r.instance_series), instance_given));
            instance_totals = py::cast(r.instance_totals);
        }
    }
};

// Run options with `threads` and the other fields at their defaults.
RunOptions threads_only(int threads) {
    RunOptions o;
    o.threads = threads;
    return o;
}

// The bit of each chosen series name (`what`: "series" or "instance_series"); None: the default
// recording's (`default_bits`).
template <std::size_t N>
std::uint32_t field_bits(const py::object& names, const std::string_view (&known)[N], std::uint32_t default_bits,
                         const char* what) {
    if (names.is_none()) return default_bits;
    if (py::isinstance<py::str>(names)) {
        throw py::value_error(fmt::format("{}={} must be a sequence of series names, e.g. ('iops', 'credits')", what,
                                          py::repr(names).cast<std::string>()));
    }
    std::uint32_t bits = 0;
    for (const py::handle h : names) {
        const auto name = py::str(h).cast<std::string>();
        std::size_t f = 0;
        while (f < N && known[f] != name) ++f;
        if (f == N || !py::isinstance<py::str>(h)) {
            std::string all;
            for (const auto& k : known) all += (all.empty() ? "" : ", ") + std::string(k);
            throw py::value_error(
                fmt::format("{}: {} is not a series; the series are {}", what, py::repr(h).cast<std::string>(), all));
        }
        bits |= 1U << f;
    }
    return bits;
}

// Checks the caller buffers `out` (a mapping of series name to numpy array) and points the
// Recording at them: each chosen, a writeable C-contiguous array of the series' dtype, 1-D of
// n_values (one volume) or 2-D of (volumes, n_values). Returns the array (or row) per volume
// and field, which the result hands back.
template <std::size_t N>
std::vector<Given> take_buffers(const py::object& out, const std::string_view (&known)[N], std::size_t bound_field,
                                std::uint32_t chosen, Dtype dtype, std::size_t volumes, std::int64_t n_values,
                                const char* what, const std::function<void*&(std::size_t, std::size_t)>& slot) {
    std::vector<Given> given(volumes, Given(N, py::none()));
    if (out.is_none()) return given;
    if (!py::isinstance<py::dict>(out)) {
        throw py::value_error(fmt::format("{} must be a dict of series name to numpy array, got {}", what,
                                          py::str(py::type::of(out).attr("__name__")).cast<std::string>()));
    }
    for (const auto& kv : py::reinterpret_borrow<py::dict>(out)) {
        const auto name = py::str(kv.first).cast<std::string>();
        const std::string arg = fmt::format("{}['{}']", what, name);
        std::size_t f = 0;
        while (f < N && known[f] != name) ++f;
        if (f == N) throw py::value_error(fmt::format("{}: '{}' is not a series", what, name));
        if ((chosen >> f & 1U) == 0) {
            throw py::value_error(fmt::format("{} is given but the series '{}' is not recorded", arg, name));
        }
        if (!py::isinstance<py::array>(kv.second)) {
            throw py::value_error(fmt::format("{} must be a numpy array, got {}", arg,
                                              py::str(py::type::of(kv.second).attr("__name__")).cast<std::string>()));
        }
        auto a = py::reinterpret_borrow<py::array>(kv.second);
        const bool is_bound = f == bound_field;
        const py::dtype want = is_bound              ? py::dtype::of<std::uint8_t>()
                               : dtype == Dtype::f32 ? py::dtype::of<float>()
                                                     : py::dtype::of<double>();
        if (!a.dtype().is(want) && !a.dtype().equal(want)) {
            throw py::value_error(fmt::format("{} has dtype {}, the recording needs {}", arg,
                                              py::str(a.dtype()).cast<std::string>(),
                                              py::str(want).cast<std::string>()));
        }
        const bool one = volumes == 1 && a.ndim() == 1;
        if (!one && !(a.ndim() == 2 && static_cast<std::size_t>(a.shape(0)) == volumes)) {
            throw py::value_error(
                fmt::format("{} has shape {}: it must be ({},) for one volume or ({}, {}) for {} "
                            "volume{} (one row each)",
                            arg, py::str(a.attr("shape")).cast<std::string>(), n_values, volumes, n_values, volumes,
                            volumes == 1 ? "" : "s"));
        }
        const py::ssize_t len = a.shape(a.ndim() - 1);
        if (len != n_values) {
            throw py::value_error(fmt::format("{} holds {} values per volume, the run records {} (one per interval)",
                                              arg, len, n_values));
        }
        if ((a.flags() & py::array::c_style) == 0) {
            throw py::value_error(
                fmt::format("{} must be C-contiguous (np.ascontiguousarray, or a slice of whole "
                            "rows)",
                            arg));
        }
        if (!a.writeable()) throw py::value_error(fmt::format("{} is read-only: it must be writeable", arg));
        for (std::size_t i = 0; i < volumes; ++i) {
            py::object row = one ? py::object(a) : py::object(a[py::int_(i)]);
            given[i][f] = row;
            slot(i, f) = one ? a.mutable_data() : a.mutable_data(static_cast<py::ssize_t>(i), 0);
        }
    }
    return given;
}

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
    m.def(
        "merge_cliffs",
        [](const py::sequence& episodes, double dt_s, double merge_gap_s, double min_duration_s) {
            std::vector<CliffEpisode> v;
            v.reserve(episodes.size());
            for (const py::handle e : episodes) v.push_back(e.cast<CliffEpisode>());
            return episodes_tuple(merge_cliffs(v, dt_s, CliffRule{merge_gap_s, min_duration_s}));
        },
        py::arg("episodes"), py::arg("dt_s"), py::arg("merge_gap_s") = CliffRule{}.merge_gap_s,
        py::arg("min_duration_s") = CliffRule{}.min_duration_s,
        "The cliffs of a run from its CliffEpisodes (CliffRule, docs/model.md): episodes apart by at most "
        "merge_gap_s (NaN: max(300 s, two steps)) merged, then closed ones shorter than min_duration_s dropped.");
    m.attr("CLIFF_MERGE_GAP_S") = CliffRule::default_merge_gap_s;
    m.attr("CLIFF_MIN_DURATION_S") = CliffRule::default_min_duration_s;

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
    def_series_properties(vs, volume_series_table);
    def_fields_repr(vs);

    py::class_<PyInstanceSeries> is(
        m, "InstanceSeries",
        "The instance's per-step outputs over one run, all volumes together: numpy arrays as in VolumeSeries.");
    def_series_properties(is, instance_series_table);
    def_fields_repr(is);

    py::class_<PyRunResult> rr(m, "RunResult", "The outputs of one Simulation.run.");
    rr.def_readonly("t0_s", &PyRunResult::t0_s, "Simulated time at the start of the run, seconds.")
        .def_readonly("dt_s", &PyRunResult::dt_s, "The step, seconds.")
        .def_readonly("n_steps", &PyRunResult::n_steps, "Steps in the run.")
        .def_readonly("record_every", &PyRunResult::record_every,
                      "Steps per recorded value: the series hold ceil(n_steps / record_every) values, one per "
                      "interval (1: one per step).")
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
// or (workload, message) for the ConfigError that refused that item (FleetOutcome::workload).
py::list run_many_py(const py::list& items, std::int64_t max_volume_steps, std::int64_t max_memory_bytes, int threads,
                     bool jump) {
    std::vector<std::vector<Workload>> workloads(items.size());
    std::vector<FleetItem> fleet(items.size());
    std::size_t k = 0;
    for (const auto& h : items) {
        const auto t = h.cast<py::tuple>();
        if (t.size() != 4 && t.size() != 5) {
            throw ConfigError(fmt::format(
                "items[{}] must be (simulation, workloads, n_steps, record[, every]), got {} values", k, t.size()));
        }
        for (const auto& w : t[1].cast<py::list>()) workloads[k].push_back(to_workload(w));
        fleet[k] = FleetItem{&t[0].cast<Simulation&>(), &workloads[k], t[2].cast<std::int64_t>(), t[3].cast<bool>(),
                             t.size() == 5 ? t[4].cast<std::int64_t>() : 1};
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
            out.append(py::make_tuple(o.workload, o.error));
        }
    }
    return out;
}

void bind_run_many(py::module_& m) {
    m.def("run_many", &run_many_py, py::arg("items"), py::arg("max_volume_steps") = RunLimits{}.max_volume_steps,
          py::arg("max_memory_bytes") = RunLimits{}.max_memory_bytes, py::arg("threads") = RunOptions{}.threads,
          py::arg("jump") = RunOptions{}.jump,
          "Run independent Simulations over `threads` threads (0: every core). items: (simulation, workloads, "
          "n_steps, record[, every]) tuples (every: steps per recorded value, default 1); items of one open-loop "
          "volume each (no instance, record False) with one step, clock and n_steps are stepped together in the "
          "lockstep kernel. Returns, per item in order, its RunResult or, for an item refused (that Simulation "
          "unchanged), (workload, message): the index of the item's workload the message is about (the message then "
          "without 'workload i: '), or -1. Ctrl-C or another error undoes every item.");
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
    py::tuple vnames(n_volume_fields);
    for (int i = 0; i < n_volume_fields; ++i) {
        vnames[static_cast<std::size_t>(i)] = py::str(std::string(volume_field_names[i]));
    }
    m.attr("VOLUME_SERIES") = vnames;
    py::tuple inames(n_instance_fields);
    for (int i = 0; i < n_instance_fields; ++i) {
        inames[static_cast<std::size_t>(i)] = py::str(std::string(instance_field_names[i]));
    }
    m.attr("INSTANCE_SERIES") = inames;
    m.attr("VOLUME_SERIES_TABLE") = series_table(volume_series_table);
    m.attr("INSTANCE_SERIES_TABLE") = series_table(instance_series_table);
    // The default recording's series, from its bits: every series but the extremes.
    py::list vdefault, idefault;
    for (int i = 0; i < n_volume_fields; ++i) {
        if ((default_volume_fields >> i & 1U) != 0) vdefault.append(vnames[static_cast<std::size_t>(i)]);
    }
    for (int i = 0; i < n_instance_fields; ++i) {
        if ((default_instance_fields >> i & 1U) != 0) idefault.append(inames[static_cast<std::size_t>(i)]);
    }
    m.attr("DEFAULT_VOLUME_SERIES") = py::tuple(vdefault);
    m.attr("DEFAULT_INSTANCE_SERIES") = py::tuple(idefault);

    bind_results(m);

    py::class_<Simulation>(m, "Simulation")
        .def(py::init<const std::vector<VolumeSpec>&, double>(), py::arg("volumes"), py::arg("dt_s") = 1.0)
        .def(py::init<const std::vector<VolumeSpec>&, const InstanceSpec&, double>(), py::arg("volumes"),
             py::arg("instance"), py::arg("dt_s") = 1.0)
        .def(
            "run",
            [](Simulation& sim, const py::list& workloads, std::int64_t n_steps, bool record,
               std::int64_t max_volume_steps, std::int64_t max_memory_bytes, int threads, bool jump, bool lockstep,
               const py::object& series, const py::object& instance_series, std::int64_t every,
               const std::string& dtype, const py::object& out, const py::object& instance_out) {
                std::vector<Workload> ws;
                ws.reserve(workloads.size());
                for (const auto& h : workloads) ws.push_back(to_workload(h));
                RunOptions options = threads_only(threads);
                options.jump = jump;
                options.lockstep = lockstep;
                Recording& rc = options.recording;
                std::vector<Given> given;
                Given instance_given;
                if (record) {
                    if (every < 1) throw py::value_error(fmt::format("every={} must be >= 1 steps", every));
                    if (dtype != "float64" && dtype != "float32") {
                        throw py::value_error(fmt::format("dtype='{}' must be 'float64' or 'float32'", dtype));
                    }
                    rc.every = every;
                    rc.dtype = dtype == "float32" ? Dtype::f32 : Dtype::f64;
                    rc.volume_fields = field_bits(series, volume_field_names, default_volume_fields, "series");
                    rc.instance_fields =
                        field_bits(instance_series, instance_field_names, default_instance_fields, "instance_series");
                    const std::int64_t values = n_steps >= 0 ? rc.intervals(n_steps) : 0;
                    if (!out.is_none()) rc.volume_out.assign(sim.size(), {});
                    given = take_buffers(out, volume_field_names, static_cast<std::size_t>(VolumeField::bound),
                                         rc.volume_fields, rc.dtype, sim.size(), values, "out",
                                         [&rc](std::size_t i, std::size_t f) -> void*& { return rc.volume_out[i][f]; });
                    if (!instance_out.is_none() && !sim.has_instance()) {
                        throw py::value_error("instance_out is given but the simulation has no instance");
                    }
                    auto ig =
                        take_buffers(instance_out, instance_field_names, static_cast<std::size_t>(InstanceField::bound),
                                     rc.instance_fields, rc.dtype, 1, values, "instance_out",
                                     [&rc](std::size_t, std::size_t f) -> void*& { return rc.instance_out[f]; });
                    instance_given = std::move(ig[0]);
                } else if (!out.is_none() || !instance_out.is_none()) {
                    throw py::value_error("out and instance_out need record=True");
                }
                RunResult r;
                // Safe without the GIL: the workloads hold spans into numpy buffers kept alive by
                // `workloads`, the caller buffers are kept alive by `out` and `instance_out`, and
                // the engine touches no Python object (the check takes the GIL itself).
                without_gil([&](const InterruptCheck& check) {
                    r = sim.run(ws, n_steps, record, RunLimits{max_volume_steps, max_memory_bytes}, check, options);
                });
                return PyRunResult(std::move(r), given, instance_given);
            },
            py::arg("workloads"), py::arg("n_steps"), py::arg("record") = true,
            py::arg("max_volume_steps") = RunLimits{}.max_volume_steps,
            py::arg("max_memory_bytes") = RunLimits{}.max_memory_bytes, py::arg("threads") = RunOptions{}.threads,
            py::arg("jump") = RunOptions{}.jump, py::arg("lockstep") = RunOptions{}.lockstep, py::kw_only(),
            py::arg("series") = py::none(), py::arg("instance_series") = py::none(), py::arg("every") = 1,
            py::arg("dtype") = "float64", py::arg("out") = py::none(), py::arg("instance_out") = py::none())
        .def_property_readonly("size", &Simulation::size)
        .def_property_readonly("dt_s", &Simulation::dt_s)
        .def_property_readonly("time_s", &Simulation::time_s)
        .def("params", &Simulation::params, py::arg("i"), py::return_value_policy::copy)
        .def("credits", &Simulation::credits, py::arg("i"))
        .def("backlog_ops", &Simulation::backlog_ops, py::arg("i"))
        .def("overshoot_saved_s", &Simulation::overshoot_saved_s, py::arg("i"),
             "Seconds of volume i's IOPS and throughput limits saved for overshoot: (iops, throughput).")
        .def(
            "copy", [](const Simulation& s) { return s; },
            "A copy of the simulation, its state and clock included (runs on one leave the other as it was).")
        .def_property_readonly("has_instance", &Simulation::has_instance)
        .def_property_readonly("instance_io_credits", &Simulation::instance_io_credits)
        .def_property_readonly("instance_bytes_credits", &Simulation::instance_bytes_credits);
    bind_run_many(m);
}
