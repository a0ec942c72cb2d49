#include "pybind.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "ebssim's compiled core (private; use the ebssim package)";
    bind_volume(m);
    bind_workload(m);
    bind_instance(m);
    bind_simulation(m);
    bind_latency(m);
    bind_fit(m);
}
