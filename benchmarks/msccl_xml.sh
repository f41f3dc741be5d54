#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MSCCL XML against the schedule it came from, and the best algorithm's XML: for each topology,
# collective and size, `tenet compare -o best.xml` writes every verified algorithm's XML, times it
# on the runtime model (tenet simulate's), and writes the fastest. One row per case:
#   synth_us      the synthesized schedule on the real network
#   synth_xml_us  its MSCCL XML as the runtime runs it; xml/plan is the ratio of the two
#   base_us       the fastest baseline's schedule; base_xml_us the fastest baseline XML
#   wrote         the algorithm compare -o wrote (the fastest file)
#   benchmarks/msccl_xml.sh [path/to/tenet] [sizes, default 1MiB,64MiB]
# Not part of the test suite. Needs python3 to read compare's JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
tenet=${1:-build/tenet}
sizes=${2:-1MiB,64MiB}
[ -x "$tenet" ] || { echo "build tenet first (scripts/bootstrap.sh)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

topologies=(torus-8x8 mesh-8x8 hypercube-6 torus-4x4x4 dgx1-8 switch-8 two-level-switch-8x4 ring-fc-switch-2x4x8
            tree-4x8 fat-tree-8x4 a100-2x8-ib a100-4x8-ib mi250-2x16-ib h100-4x8-rail)
[ -n "${EXTRA_TOPOLOGIES:-}" ] && topologies+=($EXTRA_TOPOLOGIES)

printf '%-22s %-13s %6s %10s %12s %8s %10s %12s %-6s %-10s\n' \
  topology collective size synth_us synth_xml_us xml/plan base_us base_xml_us xml_win wrote
for topology in "${topologies[@]}"; do
  file=topologies/$topology.json
  [ -f "$file" ] || file=$topology
  for collective in allgather reducescatter allreduce; do
    for size in ${sizes//,/ }; do
      "$tenet" compare -t "$file" -c "$collective" --size "$size" -o "$scratch/best.xml" --json |
        python3 -c '
import json, sys
doc = json.load(sys.stdin)
out = doc["output"]
cands = {c["algorithm"]: c for c in out["candidates"]}
synth = cands.get("synth")
bases = [c for n, c in cands.items() if n != "synth"]
base = min(bases, key=lambda c: c["schedule_time_us"]) if bases else None
base_xml = min((c for c in bases if "file_time_us" in c), key=lambda c: c["file_time_us"], default=None)
sx = synth.get("file_time_us") if synth else None
def f(v): return "%.2f" % v if v is not None else "-"
ratio = "%.3f" % (sx / synth["schedule_time_us"]) if sx else "-"
# Where the schedule beats the best baseline schedule, does its XML beat the best baseline XML?
win = "-"
if synth and base and synth["schedule_time_us"] <= base["schedule_time_us"]:
    win = "yes" if sx and (base_xml is None or sx <= base_xml["file_time_us"]) else "NO"
print("%-22s %-13s %6s %10s %12s %8s %10s %12s %-6s %-10s" % (sys.argv[1], sys.argv[2], sys.argv[3],
      f(synth["schedule_time_us"] if synth else None), f(sx), ratio, f(base["schedule_time_us"] if base else None),
      f(base_xml["file_time_us"] if base_xml else None), win, out["algorithm"]))
' "$topology" "$collective" "$size"
    done
  done
done
