#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ThreadSanitizer run of the stages that run in parallel: the synthesizer, the verifier, the
# simulator (cut bound included) and batch.
#   scripts/tsan.sh            the tests that compare 1 and 2 threads ([threads]: the synthesizer's
#                              engines on tori, meshes, switches and random networks, batch), and
#                              those of the verifier, simulator, cut bound and batch:
#                              [threads],[verifier],[verify],[simulator],[cut],[batch]
#   scripts/tsan.sh SPEC...    other Catch2 test specs, e.g. "[batch]" or a test's name; "*" runs
#                              all 93 it compiles (4.7 minutes on the shared 2-core machine)
#   scripts/tsan.sh --build-only
# Installs what is missing from Debian's packages (as bootstrap.sh does), builds the test binary
# in build-tsan/ with -DTENET_SANITIZE=thread, where the parallel loops run on std::thread rather
# than on Debian's uninstrumented TBB (include/tenet/common/parallel.hpp says why), and runs the
# tests. That build compiles only the tests of synth, verify, sim and batch, and not the tool.
# Exit status 0: every test passed and TSan reported nothing; the first race stops the run.
# bootstrap.sh --test (hence CI) runs the default selection.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
[ "${1:-}" = "--build-only" ] && build_only=true

packages=(cmake g++ ninja-build libboost-graph-dev libcli11-dev nlohmann-json3-dev libtbb-dev catch2
          libpugixml-dev)
scripts/install_packages.sh "${packages[@]}"

# -O1 without debug info, as the AddressSanitizer build: TSan still sees every access.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1" -DTENET_SANITIZE=thread \
      -DTENET_BUILD_BENCHMARKS=OFF -DBUILD_TESTING=ON -DTENET_TEST_CLI=OFF -DTENET_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build-tsan -j "$(nproc)" --target tenet_tests
$build_only && exit

export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"
if [ $# -gt 0 ]; then
  echo "== tests (ThreadSanitizer): $* =="
  exec build-tsan/tests/tenet_tests "$@"
fi
# The default selection as two processes at once, about equally long: the [threads] tests use
# two threads only part of the time, so one process alone left a core idle.
echo "== tests (ThreadSanitizer): [threads],[verifier],[verify],[simulator],[cut],[batch] =="
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
build-tsan/tests/tenet_tests "[threads]" >"$logs/threads.log" 2>&1 &
threads=$!
status=0
build-tsan/tests/tenet_tests "[verifier]~[threads],[verify]~[threads],[simulator]~[threads],[cut]~[threads],[batch]~[threads]" \
  >"$logs/stages.log" 2>&1 || status=1
wait "$threads" || status=1
for log in "$logs/threads.log" "$logs/stages.log"; do
  # A passing run's whole log is its summary line; a failing one's is the report.
  if [ $status -ne 0 ]; then cat "$log"; else tail -n 2 "$log"; fi
done
exit $status
