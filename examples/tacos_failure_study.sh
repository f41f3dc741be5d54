#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TACOS Fig. 23a / Table VI: a 4x4 mesh with NPUs 7 and 9 failed. Synthesizes the all-reduce for
# the failed mesh, compares it with ring and direct, and shows what the failures cost against the
# healthy mesh.
#   examples/tacos_failure_study.sh [path/to/tenet]
set -euo pipefail
cd "$(dirname "$0")/.."
tenet=${1:-build/tenet}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cat > "$out/fig23a.json" <<'JSON'
{"scenarios": [{"name": "fig23a-npus-7-9", "failed": {"npus": [7, 9]}}]}
JSON
"$tenet" topo generate mesh --dims 4x4 --name mesh-4x4 -o "$out/mesh-4x4.json" 2>/dev/null
"$tenet" batch -t "$out/mesh-4x4.json" -c allreduce --size 64MiB --scenarios "$out/fig23a.json" --baselines ring,direct
