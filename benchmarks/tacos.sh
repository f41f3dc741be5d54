#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The twelve cases of the TACOS repository's own test suite (astra-sim/tacos, tests/test_tacos_*.cpp;
# see benchmarks/tacos_cases.md), run with tenet: tenet's all-gather time against the time TACOS asserts.
#   benchmarks/tacos.sh [path/to/tenet] [work dir, default: a temporary one, removed at the end]
# Units: TACOS takes link bandwidth in GiB/s (2^30 bytes/s) and latency in us and times in us;
# tenet takes GB/s (10^9 bytes/s), so bandwidth_GBps = GiBps * 2^30 / 10^9. TACOS cuts each NPU's
# data into c chunks ("collectivesCount") of floor(M MiB / (npus * c)) bytes; tenet gets the same
# chunks with --size npus*c*chunk bytes and --chunks-per-npu c. TACOS asserts the minimum of 20
# randomized runs within 1%; tenet's columns: seed 1, the best of 20 seeds (--restarts 20), the best
# of 20 with the paper's matching rule (--policy tacos), and auto chunking (the fastest of 1,2,4,8).
# Not part of the test suite. Needs python3 to read tenet's JSON.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tenet=${1:-$root/build/tenet}
threads=${THREADS:-2}
[ -x "$tenet" ] || { echo "build tenet first (scripts/bootstrap.sh), or give its path" >&2; exit 2; }
if [ -n "${2:-}" ]; then
  dir=$2
  mkdir -p "$dir"
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi

# name  tenet-kind dims  GiB/s per dimension (x first)  latency_us  c  MiB  expected_us  source
cases=(
  "Mesh5x5          mesh  5x5    50     0.5 1 1024  9606.0   tests/test_tacos_mesh_2d.cpp"
  "Mesh10x10        mesh  10x10  100    1   2 1024  5049.0   tests/test_tacos_mesh_2d.cpp"
  "Mesh7x12         mesh  7x12   100    1   3 4096  19966.27 tests/test_tacos_mesh_2d.cpp"
  "Hypercube3x3x3   mesh  3x3x3  50     0.5 1 1024  6671.17  tests/test_tacos_hypercube_3d.cpp"
  "Hypercube3x4x5   mesh  3x4x5  50     0.5 2 2048  13353.33 tests/test_tacos_hypercube_3d.cpp"
  "Hypercube4x2x3   mesh  4x2x3  50     0.5 3 3072  19178.17 tests/test_tacos_hypercube_3d.cpp"
  "Torus3x3x3       torus 3x3x3  50     0.5 1 1024  3706.20  tests/test_tacos_torus_3d.cpp"
  "Torus3x4x5       torus 3x4x5  50     0.5 2 2048  6676.67  tests/test_tacos_torus_3d.cpp"
  "Torus4x2x3       torus 4x2x3  50     0.5 3 3072  11673.67 tests/test_tacos_torus_3d.cpp"
  "Mesh2DHetero5x5  mesh  5x5    50,75  0.5 1 1024  8005.0   tests/test_tacos_mesh_2d_hetero.cpp"
  "Mesh2DHetero8x5  mesh  8x5    80,35  1   2 1024  8595.43  tests/test_tacos_mesh_2d_hetero.cpp"
  "Mesh2DHetero7x10 mesh  7x10   16,73  1.5 3 4096  44612.47 tests/test_tacos_mesh_2d_hetero.cpp"
)

time_of() { python3 -c 'import json, sys; d = json.load(sys.stdin); print("%.2f %d %s" % (d["time_us"], d["chunks_per_npu"], "ok" if d["verified"] else "UNVERIFIED"))'; }

printf '%-17s %5s %2s %12s %10s | %10s %7s | %10s %7s | %10s %7s | %10s %7s %3s\n' \
  case npus c size_B expect_us seed1_us /exp best20_us /exp tacos20_us /exp auto_us /exp k
for entry in "${cases[@]}"; do
  read -r name kind dims gibps latency c mib expected _ <<<"$entry"
  gbps=$(python3 -c 'import sys; print(",".join("%.10g" % (float(b) * 2**30 / 1e9) for b in sys.argv[1].split(",")))' "$gibps")
  file=$dir/tacos-$name.json
  out=$("$tenet" topo generate "$kind" --dims "$dims" --bandwidth "$gbps" --latency "$latency" --name "tacos-$name" \
        --description "TACOS test $name: $kind $dims, $gibps GiB/s, $latency us" -o "$file" 2>&1) ||
    { echo "$out" >&2; exit 1; }
  npus=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["npus"])' "$file")
  chunk=$(( mib * 1048576 / (npus * c) ))
  size=$(( chunk * npus * c ))
  run() { "$tenet" synth -t "$file" -c allgather --size "${size}B" --threads "$threads" --json "$@" | time_of; }
  read -r t1 _ v1 < <(run --chunks-per-npu "$c")
  read -r t20 _ v20 < <(run --chunks-per-npu "$c" --restarts 20)
  read -r tt _ vt < <(run --chunks-per-npu "$c" --restarts 20 --policy tacos)
  read -r ta ka va < <(run)
  flags=""
  for v in "$v1" "$v20" "$vt" "$va"; do [ "$v" = ok ] || flags=" UNVERIFIED"; done
  awk -v n="$name" -v p="$npus" -v c="$c" -v s="$size" -v e="$expected" -v t1="$t1" -v t20="$t20" -v tt="$tt" \
      -v ta="$ta" -v ka="$ka" -v f="$flags" \
      'BEGIN { printf "%-17s %5d %2d %12s %10.2f | %10.2f %7.4f | %10.2f %7.4f | %10.2f %7.4f | %10.2f %7.4f %3d%s\n",
               n, p, c, s, e, t1, t1 / e, t20, t20 / e, tt, tt / e, ta, ta / e, ka, f }'
done
