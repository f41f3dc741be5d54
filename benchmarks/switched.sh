#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Switched networks: the synthesized algorithm against every baseline and the lower bound, all
# times on the real network (tenet compare). One row per topology, collective and size.
#   benchmarks/switched.sh [path/to/tenet] [sizes, default 64MiB,256MiB,1GiB]
# Not part of the test suite. Needs python3 to read compare's JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
tenet=${1:-build/tenet}
sizes=${2:-64MiB,256MiB,1GiB}
[ -x "$tenet" ] || { echo "build tenet first (scripts/bootstrap.sh)" >&2; exit 2; }

topologies=(switch-8 two-level-switch-8x4 ring-fc-switch-2x4x8 ring-fc-switch-2x4x16 tree-2x2x4 tree-4x8 fat-tree-8x4
            pod-2x4-handwritten hammingmesh-hx2-4x4)
[ -n "${EXTRA_TOPOLOGIES:-}" ] && topologies+=($EXTRA_TOPOLOGIES)

printf '%-24s %-13s %7s %11s %9s %11s %-10s %8s %11s %7s %-24s\n' \
  topology collective size synth_us algbw best_us best synth/best bound_us /bound "won"
for topology in "${topologies[@]}"; do
  file=topologies/$topology.json
  [ -f "$file" ] || file=$topology
  for collective in allgather reducescatter allreduce; do
    for size in ${sizes//,/ }; do
      "$tenet" compare -t "$file" -c "$collective" --size "$size" --json |
        python3 -c '
import json, sys
doc = json.load(sys.stdin)
rows = [r for r in doc["results"] if r.get("applicable") and r.get("verified")]
synth = next(r for r in rows if r["algorithm"] == "synth")
base = min((r for r in rows if r["algorithm"] != "synth"), key=lambda r: r["time_us"])
x = synth.get("switches", "")
won = "%s, %s chunk(s)%s" % (x, synth.get("chunks_per_npu"), ", " + synth["sender_order"] if "sender_order" in synth else "")
print("%-24s %-13s %7s %11.1f %9.2f %11.1f %-10s %8.3f %11.1f %7.3f %s" % (
    sys.argv[1], sys.argv[2], sys.argv[3], synth["time_us"], synth["algbw_GBps"], base["time_us"], base["algorithm"],
    synth["time_us"] / base["time_us"], synth["lower_bound_us"], synth["time_us"] / synth["lower_bound_us"], won))
' "$topology" "$collective" "$size"
    done
  done
done
