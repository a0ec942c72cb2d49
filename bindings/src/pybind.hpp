#pragma once
// The one header every binding translation unit includes, so all see the same type casters.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_volume(py::module_& m);
void bind_engine(py::module_& m);
void bind_fit(py::module_& m);
