// What a volume is asked to do (Idle, ClosedLoop, OpenLoop) and AWS's rule for counting its I/O.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "ebssim/application.hpp"
#include "ebssim/directions.hpp"
#include "ebssim/error.hpp"
#include "ebssim/stripe.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
#include "pybind.hpp"

using namespace ebssim;

namespace {

// An open-loop workload that owns the numpy buffers its spans point into.
struct PyOpenLoop {
    InArray ops;
    InArray bytes;
    py::object max_in_flight_steps = py::none();  // None, or the InArray of the per-step bound
    OpenLoop w;
};

// A piecewise open loop that owns the numpy buffers its spans point into.
struct PyPiecewiseOpenLoop {
    py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> change_steps;
    InArray ops;
    InArray bytes;
    PiecewiseOpenLoop w;
};

// A phased closed loop that owns the numpy buffers its spans point into.
struct PyPhasedClosedLoop {
    InArray in_flight;
    InArray think_time_s;
    PhasedClosedLoop w;
};

InArray as_1d(const py::handle& obj, const char* field) {
    InArray a = InArray::ensure(obj);
    if (!a) throw ConfigError(fmt::format("{} must be a 1-D array of numbers", field));
    if (a.ndim() != 1) throw ConfigError(fmt::format("{} must be 1-D, got {} dimensions", field, a.ndim()));
    return a;
}

Pattern pattern_of(bool sequential) { return sequential ? Pattern::sequential : Pattern::random; }

}  // namespace

Workload to_workload(const py::handle& h) {
    if (py::isinstance<ClosedLoop>(h)) return h.cast<ClosedLoop>();
    if (py::isinstance<Idle>(h)) return Idle{};
    if (py::isinstance<PyOpenLoop>(h)) return h.cast<const PyOpenLoop&>().w;
    if (py::isinstance<PyPhasedClosedLoop>(h)) return h.cast<const PyPhasedClosedLoop&>().w;
    if (py::isinstance<PyPiecewiseOpenLoop>(h)) return h.cast<const PyPiecewiseOpenLoop&>().w;
    throw ConfigError(
        fmt::format("workload must be ClosedLoop, OpenLoop, PhasedClosedLoop, PiecewiseOpenLoop or Idle, got {}",
                    std::string(py::str(py::type::of(h).attr("__name__")))));
}

void bind_workload(py::module_& m) {
    // The largest demand per step a trace or loop may offer (the trace check's bound).
    m.attr("max_demand_per_step") = max_demand_per_step;
    py::class_<Idle>(m, "Idle").def(py::init<>());

    py::class_<ClosedLoop>(m, "ClosedLoop")
        .def(py::init([](double in_flight, double io_bytes, double read_fraction, bool sequential,
                         double service_time_s, double think_time_s, double counted_per_io) {
                 ClosedLoop c{in_flight,      io_bytes,     read_fraction, pattern_of(sequential),
                              service_time_s, think_time_s, counted_per_io};
                 validate_workload(Workload{c}, 0);  // refused when built, not when first run
                 return c;
             }),
             py::arg("in_flight"), py::arg("io_bytes"), py::arg("read_fraction") = 1.0, py::arg("sequential") = false,
             py::arg("service_time_s") = unset, py::arg("think_time_s") = 0.0, py::arg("counted_per_io") = unset)
        .def_readonly("in_flight", &ClosedLoop::in_flight)
        .def_readonly("io_bytes", &ClosedLoop::io_bytes)
        .def_readonly("read_fraction", &ClosedLoop::read_fraction)
        .def_property_readonly("sequential", [](const ClosedLoop& c) { return c.pattern == Pattern::sequential; })
        .def_readonly("service_time_s", &ClosedLoop::service_time_s)
        .def_readonly("think_time_s", &ClosedLoop::think_time_s)
        .def_readonly("counted_per_io", &ClosedLoop::counted_per_io);

    py::class_<PyOpenLoop>(m, "OpenLoop")
        .def(py::init([](const py::object& ops, const py::object& bytes, double read_fraction, bool sequential,
                         double service_time_s, double max_in_flight, const py::object& max_in_flight_steps) {
                 auto o = std::make_unique<PyOpenLoop>();
                 o->ops = as_1d(ops, "ops");
                 o->bytes = as_1d(bytes, "bytes");
                 o->w = OpenLoop{as_span(o->ops),        as_span(o->bytes), read_fraction,
                                 pattern_of(sequential), service_time_s,    max_in_flight};
                 if (!max_in_flight_steps.is_none()) {
                     InArray bound = as_1d(max_in_flight_steps, "max_in_flight_steps");
                     o->w.max_in_flight_steps = as_span(bound);
                     o->max_in_flight_steps = bound;
                 }
                 return o;
             }),
             py::arg("ops"), py::arg("bytes"), py::arg("read_fraction") = 1.0, py::arg("sequential") = false,
             py::arg("service_time_s") = unset, py::arg("max_in_flight") = std::numeric_limits<double>::infinity(),
             py::arg("max_in_flight_steps") = py::none())
        .def_readonly("ops", &PyOpenLoop::ops)
        .def_readonly("bytes", &PyOpenLoop::bytes)
        .def_property_readonly("read_fraction", [](const PyOpenLoop& o) { return o.w.read_fraction; })
        .def_property_readonly("sequential", [](const PyOpenLoop& o) { return o.w.pattern == Pattern::sequential; })
        .def_property_readonly("service_time_s", [](const PyOpenLoop& o) { return o.w.service_time_s; })
        .def_property_readonly("max_in_flight", [](const PyOpenLoop& o) { return o.w.max_in_flight; })
        .def_readonly("max_in_flight_steps", &PyOpenLoop::max_in_flight_steps);

    py::class_<PyPiecewiseOpenLoop>(m, "PiecewiseOpenLoop")
        .def(py::init([](const py::object& change_steps, const py::object& ops, const py::object& bytes,
                         double read_fraction, bool sequential, double service_time_s, double max_in_flight) {
                 auto o = std::make_unique<PyPiecewiseOpenLoop>();
                 using Int64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
                 o->change_steps = Int64Array::ensure(change_steps);
                 if (!o->change_steps) throw ConfigError("change_steps must be a 1-D array of whole numbers");
                 if (o->change_steps.ndim() != 1) {
                     throw ConfigError(
                         fmt::format("change_steps must be 1-D, got {} dimensions", o->change_steps.ndim()));
                 }
                 o->ops = as_1d(ops, "ops");
                 o->bytes = as_1d(bytes, "bytes");
                 o->w = PiecewiseOpenLoop{{o->change_steps.data(), static_cast<std::size_t>(o->change_steps.size())},
                                          as_span(o->ops),
                                          as_span(o->bytes),
                                          read_fraction,
                                          pattern_of(sequential),
                                          service_time_s,
                                          max_in_flight};
                 // Checked here, whatever the run's length: the order, the values, the I/O fields.
                 validate_workload(o->w, 0);
                 return o;
             }),
             py::arg("change_steps"), py::arg("ops"), py::arg("bytes"), py::arg("read_fraction") = 1.0,
             py::arg("sequential") = false, py::arg("service_time_s") = unset,
             py::arg("max_in_flight") = std::numeric_limits<double>::infinity())
        .def_readonly("change_steps", &PyPiecewiseOpenLoop::change_steps)
        .def_readonly("ops", &PyPiecewiseOpenLoop::ops)
        .def_readonly("bytes", &PyPiecewiseOpenLoop::bytes)
        .def_property_readonly("read_fraction", [](const PyPiecewiseOpenLoop& o) { return o.w.read_fraction; })
        .def_property_readonly("sequential",
                               [](const PyPiecewiseOpenLoop& o) { return o.w.pattern == Pattern::sequential; })
        .def_property_readonly("service_time_s", [](const PyPiecewiseOpenLoop& o) { return o.w.service_time_s; })
        .def_property_readonly("max_in_flight", [](const PyPiecewiseOpenLoop& o) { return o.w.max_in_flight; });

    py::class_<PyPhasedClosedLoop>(m, "PhasedClosedLoop")
        .def(py::init([](const ClosedLoop& loop, const py::object& in_flight, const py::object& think_time_s) {
                 auto o = std::make_unique<PyPhasedClosedLoop>();
                 o->in_flight = as_1d(in_flight, "in_flight");
                 o->think_time_s = as_1d(think_time_s, "think_time_s");
                 o->w = PhasedClosedLoop{loop, as_span(o->in_flight), as_span(o->think_time_s)};
                 return o;
             }),
             py::arg("loop"), py::arg("in_flight"), py::arg("think_time_s"))
        .def_property_readonly("loop", [](const PyPhasedClosedLoop& o) { return o.w.loop; })
        .def_readonly("in_flight", &PyPhasedClosedLoop::in_flight)
        .def_readonly("think_time_s", &PyPhasedClosedLoop::think_time_s);

    m.def(
        "counted_ops_per_io",
        [](const VolumeParams& p, double io_bytes, bool sequential) {
            return counted_ops_per_io(p, io_bytes, pattern_of(sequential));
        },
        py::arg("params"), py::arg("io_bytes"), py::arg("sequential"));
    py::class_<StripeSplit>(m, "StripeSplit",
                            "What one set-level I/O becomes on the members of a striped set (stripe.hpp).")
        .def_readonly("pieces_per_io", &StripeSplit::pieces_per_io,
                      "Member I/Os per set I/O: the chunks it covers, on average.")
        .def_readonly("piece_bytes", &StripeSplit::piece_bytes, "Bytes of each member I/O.")
        .def_readonly("member_share", &StripeSplit::member_share,
                      "pieces_per_io / members: member I/Os per set I/O on each member.")
        .def_readonly("members", &StripeSplit::members);
    m.def("stripe_split", &stripe_split, py::arg("io_bytes"), py::arg("chunk_bytes"), py::arg("members"),
          py::arg("align_bytes") = 0.0,
          "What a set I/O of io_bytes at offsets that are multiples of align_bytes (0: io_bytes) becomes on the "
          "members of a RAID-0 of `members` volumes with chunks of chunk_bytes (stripe_split, stripe.hpp).");
    m.def("stripe_member_loop", &stripe_member_loop, py::arg("set"), py::arg("chunk_bytes"), py::arg("members"),
          "The closed loop each member runs for a closed loop on the striped set, members alike "
          "(stripe_member_loop, stripe.hpp).");
    auto array_of = [](std::vector<double> StripeMemberTrace::*f) {
        return
            [f](const StripeMemberTrace& t) { return py::array_t<double>(py::ssize_t((t.*f).size()), (t.*f).data()); };
    };
    py::class_<StripeMemberTrace> member_trace(
        m, "StripeMemberTrace", "What each member of a striped set receives from a trace on the set (stripe.hpp).");
    member_trace.def_property_readonly("ops", array_of(&StripeMemberTrace::ops), "I/Os each member receives per step.")
        .def_property_readonly("bytes", array_of(&StripeMemberTrace::bytes), "Bytes each member receives per step.")
        .def_property_readonly("read_ops", array_of(&StripeMemberTrace::read_ops),
                               "The reads among ops (empty unless the set's reads are given).")
        .def_property_readonly("read_bytes", array_of(&StripeMemberTrace::read_bytes),
                               "The reads' bytes (empty unless the set's reads are given).")
        .def_property_readonly("member_share", array_of(&StripeMemberTrace::member_share),
                               "Member I/Os per set I/O in each step (NaN: a step without I/O).")
        .def_property_readonly("max_in_flight", array_of(&StripeMemberTrace::max_in_flight),
                               "Each member's bound on outstanding I/Os: one value, or one per step.");
    def_fields_repr(member_trace);
    m.def(
        "stripe_member_trace",
        [](const py::handle& ops, const py::handle& bytes, double chunk_bytes, std::int64_t members,
           const py::handle& max_in_flight, const py::handle& read_ops, const py::handle& read_bytes) {
            auto opt = [](const py::handle& h, const char* field) { return h.is_none() ? InArray() : as_1d(h, field); };
            const InArray o = as_1d(ops, "ops"), b = as_1d(bytes, "bytes"), mif = opt(max_in_flight, "max_in_flight"),
                          ro = opt(read_ops, "read_ops"), rb = opt(read_bytes, "read_bytes");
            auto span_of = [](const InArray& a) { return a ? as_span(a) : std::span<const double>{}; };
            return stripe_member_trace(as_span(o), as_span(b), chunk_bytes, members, span_of(mif), span_of(ro),
                                       span_of(rb));
        },
        py::arg("ops"), py::arg("bytes"), py::arg("chunk_bytes"), py::arg("members"),
        py::arg("max_in_flight") = py::none(), py::arg("read_ops") = py::none(), py::arg("read_bytes") = py::none(),
        "What each member of a RAID-0 of `members` volumes with chunks of chunk_bytes receives, per step, from a "
        "trace of ops and bytes on the set; max_in_flight: None, one bound or one per step (stripe_member_trace, "
        "stripe.hpp).");
    m.def(
        "carried_member_shares",
        [](const py::handle& member_share, std::int64_t members) {
            const InArray a = as_1d(member_share, "member_share");
            const std::vector<double> v = carried_member_shares(as_span(a), members);
            py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
            std::copy(v.begin(), v.end(), out.mutable_data());
            return out;
        },
        py::arg("member_share"), py::arg("members"),
        "Each step's member share, a step without I/O (NaN) keeping the last one's, those before the first I/O "
        "the first one's, none at all 1 / members (carried_member_shares, stripe.hpp).");
    m.attr("DEFAULT_STRIPE_CHUNK_BYTES") = default_stripe_chunk_bytes;
    m.def(
        "device_latency_s",
        [](const py::handle& latency_s, const py::handle& iops, const py::handle& max_in_flight,
           const py::handle& backlog_ops, const py::handle& arrivals, double service_s, double dt) {
            auto opt = [](const py::handle& h, const char* field) { return h.is_none() ? InArray() : as_1d(h, field); };
            const InArray in[] = {as_1d(latency_s, "latency_s"), as_1d(iops, "iops"),
                                  as_1d(max_in_flight, "max_in_flight")};
            const InArray b = opt(backlog_ops, "backlog_ops"), a = opt(arrivals, "arrivals");
            auto span_of = [](const InArray& x) { return x ? as_span(x) : std::span<const double>{}; };
            py::array_t<double> out(in[0].size());
            const std::span<double> o{out.mutable_data(), static_cast<std::size_t>(out.size())};
            device_latency_s(as_span(in[0]), as_span(in[1]), as_span(in[2]), o, span_of(b), span_of(a), service_s, dt);
            return out;
        },
        py::arg("latency_s"), py::arg("iops"), py::arg("max_in_flight"), py::arg("backlog_ops") = py::none(),
        py::arg("arrivals") = py::none(), py::arg("service_s") = 0.0, py::arg("dt") = 1.0,
        "The mean latency at the device of each step of an open loop bounded by max_in_flight (one value, or one "
        "per step), from its recorded latency_s and iops: min(latency_s, max_in_flight / iops); with the run's "
        "backlog_ops and arrivals per step, a step whose backlog runs out after a held step as "
        "drained_device_latency_s with the run's service time service_s and step dt (device_latency_s, "
        "application.hpp).");
    m.def("drain_time_s", &drain_time_s, py::arg("backlog_before"), py::arg("arrived"), py::arg("rate"), py::arg("dt"),
          "The seconds into a step of dt seconds at which a backlog is gone: backlog_before waiting at its start, "
          "arrived more over the step, served at rate I/Os per second (drain_time_s, application.hpp).");
    m.def(
        "split_served",
        [](const py::handle& ops, const py::handle& bytes, const py::handle& read_ops, const py::handle& read_bytes,
           const py::handle& served_ops, const py::handle& served_bytes, const py::handle& backlog_ops,
           double backlog_bytes_end, double read_fraction) {
            const InArray in[] = {as_1d(ops, "ops"),
                                  as_1d(bytes, "bytes"),
                                  as_1d(read_ops, "read_ops"),
                                  as_1d(read_bytes, "read_bytes"),
                                  as_1d(served_ops, "served_ops"),
                                  as_1d(served_bytes, "served_bytes"),
                                  as_1d(backlog_ops, "backlog_ops")};
            const SplitArrivals a{as_span(in[0]), as_span(in[1]), as_span(in[2]), as_span(in[3]), read_fraction};
            const SplitServed s{as_span(in[4]), as_span(in[5]), as_span(in[6]), backlog_bytes_end};
            py::array_t<double> out_ops(in[0].size()), out_bytes(in[0].size());
            const std::span<double> o{out_ops.mutable_data(), static_cast<std::size_t>(out_ops.size())};
            const std::span<double> b{out_bytes.mutable_data(), static_cast<std::size_t>(out_bytes.size())};
            {
                py::gil_scoped_release release;  // pure C++ over buffers held here
                split_served(a, s, o, b);
            }
            return py::make_tuple(out_ops, out_bytes);
        },
        py::arg("ops"), py::arg("bytes"), py::arg("read_ops"), py::arg("read_bytes"), py::arg("served_ops"),
        py::arg("served_bytes"), py::arg("backlog_ops"), py::arg("backlog_bytes_end"), py::arg("read_fraction"),
        "Reads served per step (I/Os, bytes) of an open-loop trace with a per-step read/write split (arrivals "
        "ops, bytes, read_ops, read_bytes), from what its run served per step (counts), the I/Os waiting at the end "
        "of each step and the bytes waiting at the end of the run (split_served, directions.hpp).");
}
