#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Synthesis benchmarks: the issue's reference cases, one process each so peak memory is per case.
#   benchmarks/run.sh [quick|all] [path/to/tenet]
# quick (default) skips the 128x128 mesh. Prints one row per case; not part of the test suite.
# synth_s is synthesis alone; total_s the whole command (load, synthesize, verify, bounds).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
tenet=${2:-build/tenet}
[ -x "$tenet" ] || { echo "build tenet first (scripts/bootstrap.sh)" >&2; exit 2; }

cases=(
  "mesh-32x32        allgather 64MiB 1 --threads 2"
  "mesh-64x64        allreduce 64MiB 1 --threads 2"
  "mesh-64x64        allreduce 64MiB 1 --threads 1"
  "torus-16x16       allgather 64MiB 1 --threads 2"
  "torus-64x64       allgather 64MiB 1 --threads 2"
  "ring-fc-switch-2x4x128 allreduce 64MiB 1 --threads 2"
  "ring-fc-switch-2x4x8   allreduce 1GiB 4 --threads 2"
  "two-level-switch-8x4   allreduce 1GiB 4 --threads 2"
  "dragonfly-7x8     allreduce 1GiB 4 --threads 2"
  "mesh-10x10        allreduce 64MiB 16 --threads 2"
)
[ "$mode" = all ] && cases+=("mesh-128x128      allgather 64MiB 1 --threads 2")

field() { grep -o "\"$1\": [^,}]*" <<<"$2" | head -1 | sed 's/.*: //; s/"//g'; }

printf '%-24s %-13s %6s %6s %10s %9s %8s %12s %9s %11s %8s\n' \
  topology collective npus chunks transfers synth_s total_s transfers/s peak_MiB time_us /bound
for entry in "${cases[@]}"; do
  read -r topology collective size chunks extra <<<"$entry"
  started=$(date +%s.%N)
  out=$("$tenet" synth -t "topologies/$topology.json" -c "$collective" --size "$size" \
        --chunks-per-npu "$chunks" $extra --json)
  total=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  ms=$(field synthesis_ms "$out")
  transfers=$(field transfers "$out")
  time=$(field time_us "$out")
  bound=$(field lower_bound_us "$out")
  awk -v t="$topology${extra:+ }$(sed 's/--threads /t/' <<<"$extra")" -v c="$collective" -v n="$(field npus "$out")" \
      -v k="$chunks" -v x="$transfers" -v ms="$ms" -v total="$total" -v m="$(field peak_memory_MiB "$out")" -v time="$time" \
      -v b="$bound" -v ok="$(field verified "$out")" \
      'BEGIN { printf "%-24s %-13s %6d %6d %10d %9.3f %8.2f %12.0f %9.0f %11.1f %8.3f%s\n",
               t, c, n, k, x, ms / 1000, total, x / (ms / 1000), m, time, time / b, ok == "true" ? "" : "  NOT VERIFIED" }'
done
