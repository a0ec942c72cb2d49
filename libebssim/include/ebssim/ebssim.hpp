#pragma once
/// \file ebssim.hpp
/// Everything public in libebssim.

#include "ebssim/application.hpp"
#include "ebssim/bound.hpp"
#include "ebssim/burst.hpp"
#include "ebssim/directions.hpp"
#include "ebssim/engine.hpp"
#include "ebssim/error.hpp"
#include "ebssim/instance.hpp"
#include "ebssim/latency.hpp"
#include "ebssim/recorder.hpp"
#include "ebssim/series.hpp"
#include "ebssim/stripe.hpp"
#include "ebssim/totals.hpp"
#include "ebssim/units.hpp"
#include "ebssim/volume.hpp"
#include "ebssim/workload.hpp"
