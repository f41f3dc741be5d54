#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes one of tenet's file readers with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/fuzz.sh topology|schedule|msccl SECONDS
# Installs what is missing from Debian's packages (as bootstrap.sh does), builds the harness of
# fuzz/ in build-fuzz/, seeds it from the shipped files (topologies/, tests/cli/) and from
# schedules and MSCCL files tenet writes, then runs it for SECONDS. The corpus it grows is kept in
# build-fuzz/corpus/TARGET for the next run. Exit status 0: nothing found. Otherwise the input
# that crashed, leaked, hung (10 s) or took more than 2 GiB is in build-fuzz/findings/TARGET/;
# replay it with build-fuzz/fuzz/fuzz_TARGET FILE.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/fuzz.sh topology|schedule|msccl SECONDS" >&2
  exit 2
}
[ $# -eq 2 ] || usage
target=$1
seconds=$2
case "$target" in
  topology | schedule | msccl) ;;
  *) usage ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || usage

packages=(cmake ninja-build clang-14 libfuzzer-14-dev libboost-graph-dev libcli11-dev nlohmann-json3-dev libtbb-dev
          libpugixml-dev)
scripts/install_packages.sh "${packages[@]}"

# -O1 with line tables: sanitizer reports name file and line, and the build stays short. The tenet
# binary is built too: it writes the schedule and MSCCL seeds.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=None \
      -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DTENET_FUZZ=ON -DTENET_WARNINGS_AS_ERRORS=ON \
      -DBUILD_TESTING=OFF -DTENET_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "fuzz_$target" tenet

# Longer inputs than the largest seed only slow the fuzzer down: every seed fits.
case "$target" in
  topology) max_len=4096 ;;
  schedule) max_len=16384 ;;
  msccl) max_len=16384 ;;
esac
seeds="build-fuzz/seeds/$target"
corpus="build-fuzz/corpus/$target"
findings="build-fuzz/findings/$target"
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$findings"
tenet=build-fuzz/tenet
topologies=topologies
write() {  # write NAME TENET-ARGS...: a file tenet writes, as a seed
  local name=$1
  shift
  "$tenet" "$@" -o "$seeds/$name" >/dev/null
}
case "$target" in
  topology)
    cp topologies/*.json tests/cli/good/*.json tests/cli/bad/*.json tests/cli/msccl/*.json "$seeds/"
    ;;
  schedule)
    # The harness reads every input against torus-4x4 and two-level-switch-8x4.
    for collective in allgather reducescatter allreduce; do
      write "synth-torus-$collective.json" synth -t $topologies/torus-4x4.json -c $collective --members 0,1,4,5 --size 1KiB
      write "synth-switch-$collective.json" synth -t $topologies/two-level-switch-8x4.json -c $collective --members 0,1,8,9 --size 1KiB
    done
    write ring-torus.json baseline -t $topologies/torus-4x4.json -a ring -c allreduce --members 0,1,2,3 --size 1KiB
    write direct-switch.json baseline -t $topologies/two-level-switch-8x4.json -a direct -c allgather --members 0,8,16 --size 1KiB
    write chunks-torus.json synth -t $topologies/torus-4x4.json -c allgather --members 0,5 --chunks-per-npu 4 --size 1KiB
    ;;
  msccl)
    cp tests/cli/msccl/*.xml "$seeds/"
    write pair-allreduce.xml synth -t tests/cli/msccl/pair.json -c allreduce --chunks-per-npu 2
    write ring-reducescatter.xml baseline -t tests/cli/msccl/ring-3.json -a ring -c reducescatter --proto LL --out-of-place
    write torus-reducescatter.xml synth -t $topologies/torus-4x4.json -c reducescatter --members 0,1 --proto LL128
    write failed-allreduce.xml synth -t $topologies/mesh-4x4-failed-7-9.json -c allreduce --members 0,1,4,5 --channels 2
    ;;
esac
for seed in "$seeds"/*; do
  [ "$(stat -c %s "$seed")" -le "$max_len" ] || rm "$seed"
done

echo "fuzzing $target for $seconds s ($(ls "$seeds" | wc -l) seeds, corpus in $corpus)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "build-fuzz/fuzz/fuzz_$target" "$corpus" "$seeds" -dict="fuzz/$target.dict" -max_total_time="$seconds" \
  -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$findings/" -print_final_stats=1
