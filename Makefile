# ebssim: the two commands a new user needs are `make demo` and `make test`.
# Each installs what is missing (Debian -dev packages, a virtual environment in .venv with the
# package and its test dependencies), quietly and idempotently, then does its job.
#
# Every recipe runs under bash with -e and pipefail: a build, install or test that fails makes
# the target fail, even when its output is filtered through sed. Output is filtered with sed
# (which always succeeds), never with `grep ... || true`, which would hide the failure.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
VPIP := $(VPY) -m pip --disable-pip-version-check -q
JOBS ?= 2
# CMake, Ninja and ctest come from the virtual environment (the `dev` extra).
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)
export CTEST_PARALLEL_LEVEL := $(JOBS)

APT_PACKAGES := g++ make libeigen3-dev libboost-math-dev libfmt-dev doctest-dev libbenchmark-dev clang-format clang-tidy
# Requirement groups of pyproject.toml (scripts/requirements.py prints them): versions live there only.
REQ_GROUPS := build runtime dev test lint fleet
# C++ sources checked by clang-format (.clang-format).
CXX_SOURCES := $(shell find libebssim bindings/src tests/cpp tests/cmake bench -name '*.cpp' -o -name '*.hpp' 2>/dev/null)
# Sources that the compiled module depends on: reinstall when any of them changes.
CORE_SOURCES := $(shell find libebssim bindings -type f -not -name '*.pyc' 2>/dev/null) CMakeLists.txt pyproject.toml
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pip's "WARNING: Location ..." lines are noise about the venv layout.
QUIET_PIP := sed -u '/^WARNING: Location/d'
# Ninja's "[3/17] Building ..." progress lines.
QUIET_NINJA := sed -u -E '/^\[[0-9]+\/[0-9]+\]/d'

.PHONY: demo test deps apt venv install lint test-cpp test-asan test-python accuracy fuzz bench bench-cpp bench-python bench-numba clean

demo: install
	$(VPY) examples/gp2_vs_gp3_cliff.py

test: install lint test-cpp test-asan test-python

# Style and static checks: ruff (lint and format) over all Python; mypy --strict on the package
# (its compiled part via _core.pyi); stubtest: _core.pyi against the installed module (exceptions,
# each with its reason, in tests/stubtest-allowlist.txt); clang-format over the C++ sources; and
# clang-tidy over the library and the Python module through the `tidy` preset (.clang-tidy).
lint: install
	$(VENV)/bin/ruff check --quiet bindings/python scripts examples bench tests
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/mypy --no-error-summary
	$(VPY) -m mypy.stubtest ebssim._core --allowlist tests/stubtest-allowlist.txt
	clang-format --dry-run --Werror $(CXX_SOURCES)
	@cmake --preset tidy -DPython_EXECUTABLE=$(CURDIR)/$(VPY) -Dpybind11_DIR="$$($(VPY) -m pybind11 --cmakedir)" >/dev/null
	@cmake --build --preset tidy 2>&1 | $(QUIET_NINJA)

deps: apt venv

# Debian packages: installed only when one is missing.
apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "ebssim: installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

$(VENV)/.deps-stamp: pyproject.toml scripts/requirements.py
	@test -x $(VPY) || { echo "ebssim: creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "ebssim: installing build and test dependencies into $(VENV)"
	@$(VPIP) install --upgrade pip 2>&1 | $(QUIET_PIP)
	@$(VPY) scripts/requirements.py $(REQ_GROUPS) > $(VENV)/requirements.txt
	@$(VPIP) install -r $(VENV)/requirements.txt 2>&1 | $(QUIET_PIP)
	@touch $@

venv: $(VENV)/.deps-stamp

# The package, built by scikit-build-core against the Debian C++ libraries; the CMake build
# directory (build/python) is kept, so rebuilds are incremental.
$(VENV)/.install-stamp: $(VENV)/.deps-stamp $(CORE_SOURCES) | apt
	@echo "ebssim: building and installing the package into $(VENV)"
	@$(VPIP) install --no-build-isolation --no-deps -C build-dir=build/python . 2>&1 | $(QUIET_PIP)
	@$(VPY) -c "import ebssim._core"
	@touch $@

install: apt $(VENV)/.install-stamp

# The C++ suite through CMakePresets.json: `ci` (warnings are errors) and `asan`
# (AddressSanitizer + UndefinedBehaviorSanitizer, Debug).
test-cpp: apt venv
	@cmake --preset ci >/dev/null
	@cmake --build --preset ci 2>&1 | $(QUIET_NINJA)
	@ctest --preset ci

test-asan: apt venv
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan 2>&1 | $(QUIET_NINJA)
	@ctest --preset asan

test-python: install
	$(VPY) -m pytest

# ebssim against real fio runs on real EBS volumes (tests/data/real-ebs, issue 21): writes
# docs/accuracy.md, which tests/python/test_real_ebs.py checks is up to date.
accuracy: install
	$(VPY) scripts/accuracy.py

# Fuzzing (atheris, the `fuzz` extra, installed on demand): each target (the fio front end's in
# tests/fuzz/fuzz_fio.py, every other reader's in tests/fuzz/fuzz_readers.py) runs FUZZ_SECONDS,
# its corpus seeded from tests/data and kept in build/fuzz. Not part of `test`.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= jobfile cmdline json normal log hist predict \
	volumes instances metric_data queries statistics request metrics_csv claims catalog_csv catalog_json

$(VENV)/.fuzz-stamp: $(VENV)/.deps-stamp pyproject.toml scripts/requirements.py
	@echo "ebssim: installing the fuzz extra into $(VENV)"
	@$(VPY) scripts/requirements.py fuzz > $(VENV)/requirements-fuzz.txt
	@$(VPIP) install -r $(VENV)/requirements-fuzz.txt 2>&1 | $(QUIET_PIP)
	@touch $@

fuzz: install $(VENV)/.fuzz-stamp
	$(VPY) tests/fuzz/run.py --seconds $(FUZZ_SECONDS) $(FUZZ_TARGETS)

bench: bench-cpp bench-python

bench-cpp: apt venv
	@cmake --preset bench >/dev/null
	@cmake --build --preset bench 2>&1 | $(QUIET_NINJA)
	build/bench/bench/ebssim_bench

# The Python paths' benchmarks; each exits non-zero when it misses its goal (issue 22: a long
# DataFrame fleet within 2x the same fleet as workloads; the fio log readers within 1.5x
# pandas.read_csv of the same files).
bench-python: install
	$(VPY) bench/bench_replay.py
	$(VPY) bench/bench_fleet_frame.py
	$(VPY) bench/bench_fio_logs.py

# ebssim against a numba port of its step loop (the `bench` extra, installed on demand): the
# ratios of issue 12, each goal reported as met or not. BENCH_NUMBA_ARGS selects cases and sizes,
# e.g. BENCH_NUMBA_ARGS="--cases a,c --fleet-volumes 500" (see bench/bench_vs_numba.py --help).
BENCH_NUMBA_ARGS ?=

$(VENV)/.bench-stamp: $(VENV)/.deps-stamp pyproject.toml scripts/requirements.py
	@echo "ebssim: installing the bench extra into $(VENV)"
	@$(VPY) scripts/requirements.py bench > $(VENV)/requirements-bench.txt
	@$(VPIP) install -r $(VENV)/requirements-bench.txt 2>&1 | $(QUIET_PIP)
	@touch $@

bench-numba: install $(VENV)/.bench-stamp
	$(VPY) bench/bench_vs_numba.py $(BENCH_NUMBA_ARGS)

clean:
	rm -rf build $(VENV)
