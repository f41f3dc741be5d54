#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every single-NPU failure of an 8x8 torus: all-reduce synthesized, verified and compared with
# ring and direct per scenario, then plotted (slowdown against the healthy torus per failed NPU).
#   examples/torus_npu_failures.sh [path/to/tenet] [output folder]
set -euo pipefail
cd "$(dirname "$0")/.."
tenet=${1:-build/tenet}
out=${2:-torus-8x8-npu-failures}
"$tenet" batch -t topologies/torus-8x8.json -c allreduce --size 64MiB --scenarios all-npus --out-dir "$out"

# A bar per scenario from summary.csv (columns: scenario,status,...,slowdown in column 9).
awk -F, 'NR > 1 && $2 == "ok" { name[++n] = $1; slow[n] = $9; if ($9 > max) max = $9 }
  END {
    width = 14 * n + 120; height = 360; base = 300; scale = (max > 1) ? 240 / (max - 1) : 1
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">8x8 torus all-reduce: slowdown per failed NPU (synthesized, vs healthy)</text>\n", width / 2
    for (i = 1; i <= n; i++) {
      h = (slow[i] - 1) * scale; x = 60 + 14 * (i - 1)
      printf "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"%.1f\" fill=\"#d62728\"><title>%s: %.3fx</title></rect>\n", x, base - h, h, name[i], slow[i]
    }
    printf "<line x1=\"55\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", base, width - 40, base
    printf "<text x=\"50\" y=\"%d\" text-anchor=\"end\">1.000</text>\n", base + 4
    printf "<text x=\"50\" y=\"%.1f\" text-anchor=\"end\">%.3f</text>\n", base - (max - 1) * scale + 4, max
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">scenarios, worst first (hover for the failed NPU)</text>\n", width / 2, base + 30
    printf "</svg>\n"
  }' "$out/summary.csv" > "$out/slowdown.svg"
echo "wrote $out/summary.json, $out/summary.csv, one schedule per scenario, and $out/slowdown.svg"
