#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes tenet's file readers with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/fuzz.sh topology|schedule|msccl SECONDS   one harness for SECONDS
#   scripts/fuzz.sh all SECONDS                       the three at once, each for SECONDS of wall
#                                                     time: on 2 cores they share the cores, so each
#                                                     gets about two thirds of one
# Installs what is missing from Debian's packages (as bootstrap.sh does), builds the harnesses of
# fuzz/ in build-fuzz/, seeds them from the shipped files (topologies/, tests/cli/) and from
# schedules and MSCCL files tenet writes, then runs them. TENET_FUZZ_BUILD=DIR uses DIR, a build
# already configured with -DTENET_FUZZ=ON (bootstrap.sh --test's build-asan/), instead of
# configuring build-fuzz/; TENET_BINARY=FILE writes the seeds with that tenet instead of building
# one there. The corpus each harness grows is kept in DIR/corpus/TARGET for the next
# run. Exit status 0: nothing found. Otherwise the input that crashed, leaked, hung (10 s) or took
# more than 2 GiB is in DIR/findings/TARGET/; replay it with DIR/fuzz/fuzz_TARGET FILE.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/fuzz.sh topology|schedule|msccl|all SECONDS" >&2
  exit 2
}
[ $# -eq 2 ] || usage
case "$1" in
  topology | schedule | msccl) targets=("$1") ;;
  all) targets=(topology schedule msccl) ;;
  *) usage ;;
esac
seconds=$2
[[ "$seconds" =~ ^[0-9]+$ ]] || usage

build=${TENET_FUZZ_BUILD:-}
if [ -z "$build" ]; then
  packages=(cmake ninja-build clang-14 libfuzzer-14-dev libboost-graph-dev libcli11-dev nlohmann-json3-dev
            libtbb-dev libpugixml-dev)
  scripts/install_packages.sh "${packages[@]}"
  build=build-fuzz
  # -O1 with line tables: sanitizer reports name file and line, and the build stays short.
  cmake -S . -B $build -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=None \
        -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DTENET_FUZZ=ON -DTENET_WARNINGS_AS_ERRORS=ON \
        -DBUILD_TESTING=OFF -DTENET_BUILD_BENCHMARKS=OFF >/dev/null
elif ! grep -q '^TENET_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz.sh: TENET_FUZZ_BUILD=$build is not a build configured with -DTENET_FUZZ=ON" >&2
  exit 2
fi
# The tenet binary writes the schedule and MSCCL seeds: TENET_BINARY, else the one built here.
tenet=${TENET_BINARY:-$build/tenet}
tools=()
[ -n "${TENET_BINARY:-}" ] || tools=(tenet)
cmake --build $build -j "$(nproc)" --target "${targets[@]/#/fuzz_}" "${tools[@]}"

topologies=topologies
max_len() {  # max_len TARGET: the longest input tried; every seed fits, longer inputs only slow it down
  case "$1" in
    topology) echo 4096 ;;
    schedule | msccl) echo 16384 ;;
  esac
}
seed() {  # seed TARGET: fills $build/seeds/TARGET
  local target=$1 seeds=$build/seeds/$1
  write() {  # write NAME TENET-ARGS...: a file tenet writes, as a seed
    local name=$1
    shift
    "$tenet" "$@" -o "$seeds/$name" >/dev/null
  }
  rm -rf "$seeds"
  mkdir -p "$seeds"
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
  for file in "$seeds"/*; do
    [ "$(stat -c %s "$file")" -le "$(max_len "$target")" ] || rm "$file"
  done
}
fuzz() {  # fuzz TARGET: runs the harness for $seconds
  local target=$1 corpus=$build/corpus/$1 findings=$build/findings/$1
  mkdir -p "$corpus" "$findings"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/fuzz_$target" "$corpus" "$build/seeds/$target" -dict="fuzz/$target.dict" \
    -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$findings/" -print_final_stats=1
}

for target in "${targets[@]}"; do
  seed "$target"
  echo "fuzzing $target for $seconds s ($(ls "$build/seeds/$target" | wc -l) seeds, corpus in $build/corpus/$target)"
done
if [ ${#targets[@]} -eq 1 ]; then
  fuzz "${targets[0]}"
  exit
fi
# Side by side, each into its own log: a harness that fails prints its whole log (the report and
# the input's name), one that passes its final statistics.
pids=()
for target in "${targets[@]}"; do
  fuzz "$target" >"$build/fuzz-$target.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if wait "${pids[$i]}"; then
    echo "== fuzz_$target: nothing found =="
    grep -E '^(Done|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))' \
      "$build/fuzz-$target.log"
  else
    echo "== fuzz_$target: FAILED =="
    cat "$build/fuzz-$target.log"
    failed+=("$target")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz.sh: findings from ${failed[*]}" >&2; exit 1; }
