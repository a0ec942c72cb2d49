// Instance-level EBS limits: what the volumes attached to one instance share.

#include <fmt/format.h>

#include <string>

#include "ebssim/error.hpp"
#include "ebssim/instance.hpp"
#include "pybind.hpp"

using namespace ebssim;

namespace {

SharePolicy parse_share(const std::string& s) {
    if (s == "proportional") return SharePolicy::proportional;
    if (s == "fair") return SharePolicy::fair;
    throw ConfigError(fmt::format("share='{}' is not a sharing policy; expected 'proportional' or 'fair'", s));
}

}  // namespace

void bind_instance(py::module_& m) {
    py::class_<InstanceSpec>(m, "InstanceSpec")
        .def(py::init([](const std::string& name, double baseline_iops, double max_iops, double baseline_mb_s,
                         double max_mb_s, bool nitro, double burst_s, double refill_s, double io_balance_pct,
                         double byte_balance_pct, const std::string& share, double wait_cv) {
                 InstanceSpec s{name,    baseline_iops, max_iops,       baseline_mb_s,    max_mb_s,          nitro,
                                burst_s, refill_s,      io_balance_pct, byte_balance_pct, parse_share(share)};
                 s.wait_cv = wait_cv;
                 return s;
             }),
             py::arg("name"), py::arg("baseline_iops"), py::arg("max_iops"), py::arg("baseline_mb_s"),
             py::arg("max_mb_s"), py::arg("nitro") = true, py::arg("burst_s") = 1800.0, py::arg("refill_s") = 84600.0,
             py::arg("io_balance_pct") = 100.0, py::arg("byte_balance_pct") = 100.0, py::arg("share") = "proportional",
             py::arg("wait_cv") = unset)
        .def_readonly("name", &InstanceSpec::name)
        .def_readonly("baseline_iops", &InstanceSpec::baseline_iops)
        .def_readonly("max_iops", &InstanceSpec::max_iops)
        .def_readonly("baseline_mb_s", &InstanceSpec::baseline_mb_s)
        .def_readonly("max_mb_s", &InstanceSpec::max_mb_s)
        .def_readonly("nitro", &InstanceSpec::nitro)
        .def_readonly("wait_cv", &InstanceSpec::wait_cv);

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
        .def_readonly("bytes_earn_idle", &InstanceParams::bytes_earn_idle)
        .def_readonly("wait_cv", &InstanceParams::wait_cv);
    m.def("make_instance", &make_instance, py::arg("spec"));
}
