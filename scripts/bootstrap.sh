#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what tenet needs from Debian's packages (only what is missing), then builds it.
#   scripts/bootstrap.sh          Release build of the tool alone (build/tenet)
#   scripts/bootstrap.sh --test   checks the code's layout (clang-format), builds the tool, its tests
#                                 and benchmarks in build/, the same with the
#                                 sanitizers (ASan + UBSan) in build-asan/, then runs the whole test
#                                 suite in both
# Run as root or as a user with sudo. Safe to run again: it only does what is left to do.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build libboost-graph-dev libcli11-dev nlohmann-json3-dev libtbb-dev catch2
          libpugixml-dev)
# The test run also checks the code's layout (scripts/check_format.sh).
[ "${1:-}" = "--test" ] && packages+=(clang-format)
scripts/install_packages.sh "${packages[@]}"

jobs=$(nproc)
testing=OFF
[ "${1:-}" = "--test" ] && testing=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENET_WARNINGS_AS_ERRORS=ON -DBUILD_TESTING=$testing >/dev/null
if [ $testing = OFF ]; then
  cmake --build build -j "$jobs" --target tenet
else
  echo "== layout (clang-format) =="
  scripts/check_format.sh
  # -O1 without debug info: the sanitizers still see everything, and the build is half as long.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1" -DTENET_SANITIZE=ON -DTENET_BUILD_BENCHMARKS=OFF \
        -DBUILD_TESTING=ON -DTENET_WARNINGS_AS_ERRORS=ON >/dev/null
  cmake --build build -j "$jobs"
  cmake --build build-asan -j "$jobs"
  echo "== tests (Release) =="
  ctest --test-dir build -j "$jobs" --output-on-failure --timeout 300
  echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j "$jobs" --output-on-failure --timeout 600
fi
