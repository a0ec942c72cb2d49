# ebssim: the two commands a new user needs are `make demo` and `make test`.
# Each installs what is missing (Debian -dev packages, a virtual environment in .venv with the
# package and its test dependencies), quietly and idempotently, then does its job.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
VPIP := $(VPY) -m pip --disable-pip-version-check -q
CMAKE := $(VENV)/bin/cmake
JOBS ?= 2

APT_PACKAGES := g++ make libeigen3-dev libboost-math-dev libfmt-dev doctest-dev libbenchmark-dev
BUILD_REQS := "scikit-build-core>=0.10" "pybind11>=2.12" "cmake>=3.20" ninja
# Sources that the compiled module depends on: reinstall when any of them changes.
CORE_SOURCES := $(shell find libebssim bindings -type f 2>/dev/null) CMakeLists.txt pyproject.toml
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test deps apt venv install lint test-cpp test-asan test-python bench bench-cpp bench-python clean

demo: install
	$(VPY) examples/gp2_vs_gp3_cliff.py

test: install lint test-cpp test-asan test-python

# Python style and types: ruff, and mypy --strict on the package (its compiled part via _core.pyi).
lint: venv
	@$(VENV)/bin/ruff check --quiet bindings/python scripts examples bench
	@$(VENV)/bin/mypy --no-error-summary

deps: apt venv

# Debian packages: installed only when one is missing.
apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "ebssim: installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

$(VENV)/.deps-stamp: pyproject.toml
	@test -x $(VPY) || { echo "ebssim: creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "ebssim: installing build and test dependencies into $(VENV)"
	@$(VPIP) install --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
	@$(VPIP) install $(BUILD_REQS) numpy pandas matplotlib \
	  "pytest>=7" "hypothesis>=6.50" "nbclient>=0.7" "nbformat>=5.7" ipykernel ruff mypy pandas-stubs 2>&1 | grep -v "^WARNING: Location" || true
	@$(VPY) -c "import scikit_build_core, pybind11, pytest, hypothesis, nbclient"
	@touch $@

venv: $(VENV)/.deps-stamp

# The package, built by scikit-build-core against the Debian C++ libraries; the CMake build
# directory (build/python) is kept, so rebuilds are incremental.
$(VENV)/.install-stamp: $(VENV)/.deps-stamp $(CORE_SOURCES) | apt
	@echo "ebssim: building and installing the package into $(VENV)"
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VPIP) install --no-build-isolation --no-deps -C build-dir=build/python . 2>&1 \
	  | grep -v "^WARNING: Location" || true
	@$(VPY) -c "import ebssim._core" 
	@touch $@

install: apt $(VENV)/.install-stamp

test-cpp: apt venv
	@$(CMAKE) -S . -B build/cpp -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEBSSIM_BUILD_TESTS=ON \
	  -DEBSSIM_WERROR=ON -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null
	@$(CMAKE) --build build/cpp -j $(JOBS) | grep -Ev "^\[[0-9]+/[0-9]+\]" || true
	@cd build/cpp && $(CURDIR)/$(VENV)/bin/ctest --output-on-failure -j $(JOBS)

# The C++ tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: apt venv
	@$(CMAKE) -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEBSSIM_BUILD_TESTS=ON \
	  -DEBSSIM_SANITIZE=ON -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null
	@$(CMAKE) --build build/asan -j $(JOBS) | grep -Ev "^\[[0-9]+/[0-9]+\]" || true
	@cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(CURDIR)/$(VENV)/bin/ctest --output-on-failure -j $(JOBS)

test-python: install
	$(VPY) -m pytest

bench: bench-cpp bench-python

bench-cpp: apt venv
	@$(CMAKE) -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DEBSSIM_BUILD_TESTS=OFF \
	  -DEBSSIM_BUILD_BENCH=ON -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null
	@$(CMAKE) --build build/bench -j $(JOBS) | grep -Ev "^\[[0-9]+/[0-9]+\]" || true
	build/bench/bench/ebssim_bench

bench-python: install
	$(VPY) bench/bench_replay.py

clean:
	rm -rf build $(VENV)
