# Thin wrapper over CMake. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install missing Debian packages first.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= 2
CMAKE_FLAGS ?=
ifeq ($(PEERBLOOM_WERROR),1)
CMAKE_FLAGS += -DPEERBLOOM_WERROR=ON
endif

.PHONY: all deps demo-deps configure demo-configure build test demo bench bench-all results fuzz \
	fuzz-run soak upgrade-test \
	format clean

all: build

deps:
	@bash scripts/install-deps.sh --with-squid

# The demo needs no Squid: it installs only the build packages.
demo-deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

demo-configure: demo-deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 600

demo: demo-configure
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target peerbloomd peerbloom_cli
	@bash scripts/demo.sh $(BUILD_DIR)

# docs/results/bench.md and its plots: the headline figures, one Release build and one run
# (about 8 minutes on 2 idle cores; docs/benchmarks.md). bench-all prints every benchmark's own
# figures instead.
BENCH_DIR ?= build-bench
bench:
	@bash scripts/bench.sh $(BENCH_DIR)

bench-all: build
	@bash scripts/bench-all.sh $(BUILD_DIR)

# docs/results/: the Summary Cache comparison's tables and plots (a few minutes on 2 cores).
results: demo-configure
	@bash scripts/results.sh $(BUILD_DIR)

fuzz:
	@bash scripts/install-deps.sh
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPEERBLOOM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build-fuzz -j$(JOBS)

# Runs every fuzz target for SECONDS seconds (default 60) and reports executions and findings.
SECONDS ?= 60
fuzz-run:
	@bash scripts/install-deps.sh
	@bash scripts/fuzz-run.sh $(SECONDS) build-fuzz

# Not part of `make test`: 6 daemons under churn and 5 % loss for MINUTES minutes (default 10).
MINUTES ?= 10
soak: build
	@bash scripts/soak.sh --minutes $(MINUTES) --build $(BUILD_DIR)

# Not part of `make test`: daemons of an older release (OLD_REF, default 198fffe: wire version 3)
# upgraded one by one to this tree's. The old release is built from git history into
# build-old/ (about 10 minutes on one core, then reused); docs/gossip.md says what it checks.
OLD_REF ?= 198fffe
UPGRADE_DIR ?= build-upgrade
upgrade-test:
	@JOBS=$(JOBS) bash scripts/rolling-upgrade.sh $(UPGRADE_DIR) $(OLD_REF)

format:
	@find lib daemon cli tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	@rm -rf $(BUILD_DIR) build-fuzz $(BENCH_DIR) $(UPGRADE_DIR) build-old
