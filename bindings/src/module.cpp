#include "pybind.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "ebssim's compiled core (private; use the ebssim package)";
    bind_volume(m);
    bind_engine(m);
    bind_fit(m);
}
