#pragma once
// The one header every binding translation unit includes, so all see the same type casters.
// Each area of the library is bound in its own bind_<area>.cpp; module.cpp calls them in order
// (an area whose signatures name another area's classes comes after it, so docstrings show the
// Python names).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <span>
#include <string>

#include "ebssim/workload.hpp"

namespace py = pybind11;

/// A 1-D array of doubles as the bindings take them: any sequence or array, converted once.
using InArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// The elements of an InArray (which the caller keeps alive).
inline std::span<const double> as_span(const InArray& a) { return {a.data(), static_cast<std::size_t>(a.size())}; }

/// The C++ workload behind a bound Idle, ClosedLoop or OpenLoop (bind_workload.cpp); an
/// OpenLoop's spans point into the numpy buffers that the Python object keeps alive.
ebssim::Workload to_workload(const py::handle& h);

namespace bind_detail {
// The read-only fields of a bound class: its properties, in the order they were bound.
inline py::tuple field_names(py::handle cls) {
    const py::object property = py::module_::import("builtins").attr("property");
    py::list names;
    for (const py::handle item : cls.attr("__dict__").attr("items")()) {
        const auto kv = py::reinterpret_borrow<py::tuple>(item);
        if (py::isinstance(kv[1], property)) names.append(kv[0]);
    }
    return py::tuple(names);
}
}  // namespace bind_detail

/// A repr listing a bound class's read-only fields (its properties, in the order bound):
/// "VolumeTotals(served_ops=6210000.0, ...)". Arrays show their length and type, not their data.
/// Call after the fields are bound.
inline void def_fields_repr(py::handle cls) {
    const py::tuple names = bind_detail::field_names(cls);
    auto repr = [names](const py::handle& self) {
        py::list parts;
        for (const py::handle name : names) {
            const py::object value = self.attr(name);
            if (py::isinstance<py::array>(value)) {
                const auto a = py::reinterpret_borrow<py::array>(value);
                parts.append(py::str("{}=<{} {}>").format(name, a.size(), a.dtype()));
            } else {
                parts.append(py::str("{}={!r}").format(name, value));
            }
        }
        return py::str("{}({})").format(py::type::of(self).attr("__name__"), py::str(", ").attr("join")(parts));
    };
    py::setattr(cls, "__repr__", py::cpp_function(repr, py::name("__repr__"), py::is_method(cls)));
}

/// `record["field"]` reads `record.field`: results crossed the binding as dicts before, and
/// notebooks index them. Call after the fields are bound.
inline void def_field_subscript(py::handle cls) {
    const py::tuple names = bind_detail::field_names(cls);
    auto getitem = [names](const py::handle& self, const py::str& key) -> py::object {
        if (names.contains(key)) return self.attr(key);
        throw py::key_error(py::str("{!r} is not a field of {}; fields: {}")
                                .format(key, py::type::of(self).attr("__name__"), py::str(", ").attr("join")(names))
                                .cast<std::string>());
    };
    py::setattr(cls, "__getitem__",
                py::cpp_function(getitem, py::name("__getitem__"), py::is_method(cls), py::arg("key")));
}

void bind_volume(py::module_& m);      // volume types, specs and limit parameters
void bind_workload(py::module_& m);    // Idle, ClosedLoop, OpenLoop, the counting rule
void bind_instance(py::module_& m);    // instance specs and parameters
void bind_simulation(py::module_& m);  // the engine, run limits and results
void bind_latency(py::module_& m);     // latency percentiles, closed forms (burst, refill, cliff)
void bind_fit(py::module_& m);         // calibration: the fitter behind ebssim.fit
