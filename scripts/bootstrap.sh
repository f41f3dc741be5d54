#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what tenet needs from Debian's packages (only what is missing), then builds it.
#   scripts/bootstrap.sh          Release build of the tool alone (build/tenet)
#   scripts/bootstrap.sh --test   what CI runs (.ci/run), in phases, each timed:
#     layout       scripts/check_format.sh (clang-format)
#     build        build/: the tool, its tests and benchmarks, Release (g++)
#     build-asan   build-asan/: the unit tests and the libFuzzer harnesses, with AddressSanitizer and
#                  UndefinedBehaviorSanitizer (clang 14; one build serves the tests and the fuzzers)
#     build-tsan   build-tsan/: the unit tests of the parallel stages, with ThreadSanitizer (g++)
#     tests        the whole test suite in build/: unit tests, end-to-end runs of the tool, install
#     tests-asan   the unit tests in build-asan/ (sweeps shrunk, tests/support/sanitizers.hpp)
#     tests-tsan   the tests of the parallel stages in build-tsan/ (scripts/tsan.sh)
#     fuzz         the three harnesses of fuzz/ at once, 60 s of wall time each from the seeds
#                  (scripts/fuzz.sh; they share the cores, so on 2 cores each gets two thirds of one)
# Run as root or as a user with sudo. Safe to run again: it only does what is left to do.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build libboost-graph-dev libcli11-dev nlohmann-json3-dev libtbb-dev catch2
          libpugixml-dev)
# The test run also checks the code's layout and builds the fuzzers.
[ "${1:-}" = "--test" ] && packages+=(clang-format clang-14 libfuzzer-14-dev)
scripts/install_packages.sh "${packages[@]}"

jobs=$(nproc)
testing=OFF
[ "${1:-}" = "--test" ] && testing=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENET_WARNINGS_AS_ERRORS=ON -DBUILD_TESTING=$testing >/dev/null
if [ $testing = OFF ]; then
  cmake --build build -j "$jobs" --target tenet
  exit
fi

# phase NAME COMMAND...: runs the command under a heading, then says how long it took; wall and
# CPU both, since CI machines are shared.
TIMEFORMAT="== %R s wall, %U+%S s cpu =="
phase() {
  echo "== $1 =="
  shift
  time "$@"
}
sanitizer_options() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$@"
}

phase layout scripts/check_format.sh
# -O1 with line tables: the sanitizers still see everything, their reports name file and line, and
# the build is half as long as with full debug info. The fuzzers' coverage instrumentation
# (fuzzer-no-link) slows the tests by only a few percent, so one clang build serves both.
cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=None \
      -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DTENET_SANITIZE=ON -DTENET_FUZZ=ON \
      -DTENET_BUILD_BENCHMARKS=OFF -DBUILD_TESTING=ON -DTENET_TEST_CLI=OFF -DTENET_WARNINGS_AS_ERRORS=ON >/dev/null
phase build cmake --build build -j "$jobs"
phase build-asan cmake --build build-asan -j "$jobs" --target tenet_tests fuzz_topology fuzz_schedule fuzz_msccl
phase build-tsan scripts/tsan.sh --build-only
phase tests ctest --test-dir build -j "$jobs" --output-on-failure --timeout 300
# The tests that compare 1 and 2 threads run in Release and under ThreadSanitizer, not here.
phase tests-asan sanitizer_options ctest --test-dir build-asan -j "$jobs" --output-on-failure --timeout 600 \
  -E "1 and 2 threads|thread count"
phase tests-tsan scripts/tsan.sh
phase fuzz env TENET_FUZZ_BUILD=build-asan TENET_BINARY=build/tenet scripts/fuzz.sh all 60
