#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How long synthesis takes, case by case: `tenet synth --json` (no baselines, no file) on every
# topology file of at most max_npus NPUs, for each collective and size. The target it tracks:
# synthesis under 1 s on networks of up to 64 NPUs.
#   benchmarks/synth_times.sh [-o out.tsv] [path/to/tenet] [max_npus]
# Defaults: build/tenet, 64 NPUs, synth_times.tsv in the current directory. Rows print as they
# come; the TSV is written to a temporary file beside the output and moved there at the end. A
# synth that fails is a failed row, not the end of the run. The summary follows the rows: total
# and longest synthesis, the cases over 1 s, and with BEFORE= a run of another binary to compare
# with, case by case (synthesis time, and whether the schedule's time moved).
# Subsets and knobs (environment):
#   TOPOLOGIES="tree-4x8 mesh-8x8"   topology names (file stems in topologies/) or paths
#   COLLECTIVES="allreduce"          default: allgather reducescatter allreduce
#   SIZES="16MiB 1GiB"               default: 4KiB 64KiB 1MiB 16MiB 256MiB 1GiB
#   THREADS=2                        synth's --threads
#   BEFORE=old.tsv                   an earlier run of this script to compare with
# Not part of the test suite. Needs python3 to read synth's JSON. Times vary by up to 30% from run
# to run on a shared machine: compare binaries side by side, on an idle one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

out=synth_times.tsv
# shellcheck source=cases.sh
source "$root/benchmarks/cases.sh"
parse_case_arguments 64 "$@"
before=${BEFORE:-}
[ -z "$before" ] || [ -f "$before" ] || { echo "BEFORE: no file '$before'" >&2; exit 2; }

select_topology_files
open_output

# One row from synth's JSON (stdin). Columns as in the header below.
row_py='
import json, sys
topology, npus, collective, size = sys.argv[1:5]
try:
    doc = json.load(sys.stdin)
    print("\t".join([topology, npus, collective, size, "ok", "%.1f" % doc["synthesis_ms"],
                     repr(doc["time_us"]), doc.get("method", "")]))
except Exception:
    print("\t".join([topology, npus, collective, size, "failed(bad json)", "", "", ""]))
'

# One case: synth's row (run_cases in cases.sh).
run_case() {
  local file=$1 topology=$2 npus=$3 collective=$4 size=$5 rc=0 json
  json=$("$tenet" synth -t "$file" -c "$collective" --size "$size" --json --threads "$threads" 2>"$errors") || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf '%s\t%s\t%s\t%s\tfailed(rc=%s)\t\t\t\n' "$topology" "$npus" "$collective" "$size" "$rc"
    sed 's/^/  | /' "$errors" | head -5 >&2
  else
    python3 -c "$row_py" "$topology" "$npus" "$collective" "$size" <<<"$json"
  fi
}

run_cases "topology	npus	collective	size	status	synthesis_ms	time_us	method"
finish_output

python3 - "$out" "$before" <<'EOF'
import csv, sys
path, before_path = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path), delimiter="\t"))
ok = [r for r in rows if r["status"] == "ok"]
bad = [r for r in rows if r["status"] != "ok"]
key = lambda r: (r["topology"], r["collective"], r["size"])
name = lambda r: "%s %s %s" % key(r)
ms = lambda r: float(r["synthesis_ms"])
print("cases                 %d (%d synthesized, %d failed)" % (len(rows), len(ok), len(bad)))
if not ok:
    sys.exit(0)
slow = sorted((r for r in ok if ms(r) > 1000.0), key=lambda r: -ms(r))
longest = max(ok, key=ms)
print("synthesis             total %.1f s, longest %.2f s (%s)" % (sum(map(ms, ok)) / 1000, ms(longest) / 1000, name(longest)))
print("over 1 s              %d of %d" % (len(slow), len(ok)))
for r in slow:
    print("  %-24s %-14s %-7s %7.2f s  %s" % (r["topology"], r["collective"], r["size"], ms(r) / 1000, r["method"]))
if before_path:
    old = {key(r): r for r in csv.DictReader(open(before_path), delimiter="\t") if r["status"] == "ok"}
    both = [r for r in ok if key(r) in old]
    moved = [r for r in both if float(r["time_us"]) != float(old[key(r)]["time_us"])]
    rel = lambda r: float(r["time_us"]) / float(old[key(r)]["time_us"]) - 1.0
    print()
    print("against %s: %d cases in both" % (before_path, len(both)))
    print("synthesis             total %.1f -> %.1f s, over 1 s %d -> %d" % (
        sum(ms(old[key(r)]) for r in both) / 1000, sum(map(ms, both)) / 1000,
        sum(1 for r in both if ms(old[key(r)]) > 1000.0), sum(1 for r in both if ms(r) > 1000.0)))
    print("schedule time         %d the same to the bit, %d faster, %d slower" % (
        len(both) - len(moved), sum(1 for r in moved if rel(r) < 0), sum(1 for r in moved if rel(r) > 0)))
    for r in sorted(moved, key=lambda r: -abs(rel(r)))[:10]:
        print("  %-24s %-14s %-7s %14s -> %-14s %+.2e" % (
            r["topology"], r["collective"], r["size"], old[key(r)]["time_us"], r["time_us"], rel(r)))
if bad:
    print()
    print("failed:")
    for r in bad:
        print("  %s: %s" % (name(r), r["status"]))
EOF
