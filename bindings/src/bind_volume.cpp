// Volume types, what a user configures (VolumeSpec) and the limits the engine steps with
// (VolumeParams); AWS's rules live in libebssim/src/volume.cpp.

#include <cmath>
#include <string>

#include "ebssim/volume.hpp"
#include "pybind.hpp"

using namespace ebssim;

namespace {

// The table's "not provisioned" NaN reads as None in Python.
py::object optional(double x) { return std::isnan(x) ? py::object(py::none()) : py::object(py::float_(x)); }

}  // namespace

void bind_volume(py::module_& m) {
    py::class_<VolumeTypeInfo> info(m, "VolumeTypeInfo",
                                    "One EBS volume type: what is known about it before any volume exists.");
    info.def_property_readonly(
            "name", [](const VolumeTypeInfo& t) { return std::string(t.name); }, "The type as AWS spells it: 'gp2'.")
        .def_property_readonly(
            "description", [](const VolumeTypeInfo& t) { return std::string(t.description); },
            "AWS's name for the family: 'General Purpose SSD'.")
        .def_property_readonly(
            "media", [](const VolumeTypeInfo& t) { return std::string(to_string(t.media)); },
            "'ssd' or 'hdd' (standard, magnetic, is an HDD).")
        .def_readonly("io_unit_bytes", &VolumeTypeInfo::io_unit_bytes,
                      "EBS counts an I/O of up to this size as one operation (256 KiB SSD, 1 MiB HDD).")
        .def_property_readonly(
            "bucket", [](const VolumeTypeInfo& t) { return std::string(to_string(t.bucket)); },
            "What the burst bucket holds: 'io_credits' (gp2, standard), 'throughput_credits' (MiB; st1, "
            "sc1) or 'none' (performance is provisioned).")
        .def_property_readonly("has_bucket", &VolumeTypeInfo::has_bucket,
                               "True for the types with a burst bucket (BurstBalance).")
        .def_readonly("min_size_gib", &VolumeTypeInfo::min_size_gib, "Smallest size AWS accepts, GiB.")
        .def_readonly("max_size_gib", &VolumeTypeInfo::max_size_gib, "Largest size AWS accepts, GiB.")
        .def_readonly("default_size_gib", &VolumeTypeInfo::default_size_gib,
                      "The EC2 console's size for a new volume, GiB.")
        .def_property_readonly(
            "default_iops", [](const VolumeTypeInfo& t) { return optional(t.default_iops); },
            "The EC2 console's IOPS for a new volume (gp3, io1, io2); None where IOPS follow the size.")
        .def_property_readonly(
            "default_throughput_mib_s", [](const VolumeTypeInfo& t) { return optional(t.default_throughput_mib_s); },
            "The EC2 console's throughput for a new volume, MiB/s (gp3); None where it is not provisioned.");
    def_fields_repr(info);
    m.def(
        "volume_types",
        [] {
            py::tuple out(volume_types().size());
            std::size_t i = 0;
            for (const VolumeTypeInfo& t : volume_types()) out[i++] = py::cast(t, py::return_value_policy::copy);
            return out;
        },
        "Every EBS volume type, in the order AWS lists them.");

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
        .def_readonly("read_latency_s", &VolumeParams::read_latency_s)
        .def_readonly("write_latency_s", &VolumeParams::write_latency_s)
        .def_readonly("transfer_bytes_s", &VolumeParams::transfer_bytes_s)
        .def_readonly("latency_cv", &VolumeParams::latency_cv)
        .def_readonly("wait_cv", &VolumeParams::wait_cv)
        .def_readonly("overshoot_s", &VolumeParams::overshoot_s)
        .def_readonly("initial_overshoot_s", &VolumeParams::initial_overshoot_s)
        .def("latency_at", &VolumeParams::latency_at, py::arg("read_fraction"))
        .def("service_time_s", &VolumeParams::service_time_s, py::arg("io_bytes"), py::arg("read_fraction"));

    py::class_<VolumeSpec>(m, "VolumeSpec")
        .def(py::init([](const std::string& type, double size_gib, double iops, double throughput_mib_s,
                         double burst_balance_pct, double latency_ms, double transfer_mib_s, double read_latency_ms,
                         double write_latency_ms, double latency_cv, double wait_cv, double overshoot_s,
                         double overshoot_balance_s) {
                 VolumeSpec s;
                 s.type = parse_volume_type(type);
                 s.size_gib = size_gib;
                 s.iops = iops;
                 s.throughput_mib_s = throughput_mib_s;
                 s.burst_balance_pct = burst_balance_pct;
                 s.latency_ms = latency_ms;
                 s.transfer_mib_s = transfer_mib_s;
                 s.read_latency_ms = read_latency_ms;
                 s.write_latency_ms = write_latency_ms;
                 s.latency_cv = latency_cv;
                 s.wait_cv = wait_cv;
                 s.overshoot_s = overshoot_s;
                 s.overshoot_balance_s = overshoot_balance_s;
                 return s;
             }),
             py::arg("type"), py::arg("size_gib"), py::arg("iops") = unset, py::arg("throughput_mib_s") = unset,
             py::arg("burst_balance_pct") = unset, py::arg("latency_ms") = unset, py::arg("transfer_mib_s") = unset,
             py::arg("read_latency_ms") = unset, py::arg("write_latency_ms") = unset, py::arg("latency_cv") = unset,
             py::arg("wait_cv") = unset, py::arg("overshoot_s") = unset, py::arg("overshoot_balance_s") = unset)
        .def_property_readonly("type", [](const VolumeSpec& s) { return std::string(to_string(s.type)); })
        .def_readonly("size_gib", &VolumeSpec::size_gib)
        .def_readonly("iops", &VolumeSpec::iops)
        .def_readonly("throughput_mib_s", &VolumeSpec::throughput_mib_s)
        .def_readonly("burst_balance_pct", &VolumeSpec::burst_balance_pct)
        .def_readonly("latency_ms", &VolumeSpec::latency_ms)
        .def_readonly("transfer_mib_s", &VolumeSpec::transfer_mib_s)
        .def_readonly("read_latency_ms", &VolumeSpec::read_latency_ms)
        .def_readonly("write_latency_ms", &VolumeSpec::write_latency_ms)
        .def_readonly("latency_cv", &VolumeSpec::latency_cv)
        .def_readonly("wait_cv", &VolumeSpec::wait_cv)
        .def_readonly("overshoot_s", &VolumeSpec::overshoot_s)
        .def_readonly("overshoot_balance_s", &VolumeSpec::overshoot_balance_s);

    m.attr("nitro_overshoot_s") = nitro_overshoot_s;
    m.attr("max_overshoot_s") = max_overshoot_s;
    m.def("make_volume", &make_volume, py::arg("spec"), py::arg("nitro") = true,
          "Validate a volume against AWS's rules and return its limit parameters.");
}
