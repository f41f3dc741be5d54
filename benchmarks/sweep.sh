#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Synthesized versus classic algorithms over every topology file, collective and size.
#   benchmarks/sweep.sh [-o out.tsv] [path/to/tenet] [max_npus]
# Defaults: build/tenet, 256 NPUs (topologies/*.json with more NPUs are skipped), sweep.tsv in the
# current directory. Each case is one `tenet compare --json --threads $THREADS`; its row gives the
# synthesized time, the best baseline (the fastest verified non-synth algorithm), synth/best and
# the synthesis time. Rows print as they come; the TSV is written to a temporary file beside the
# output and moved there at the end. A compare that fails or times out is a failed row, not the
# end of the sweep. The summary follows the rows.
# Subsets and knobs (environment):
#   TOPOLOGIES="torus-8x8 mesh-8x8"   topology names (file stems in topologies/) or paths
#   COLLECTIVES="allreduce"           default: allgather reducescatter allreduce
#   SIZES="4KiB 64KiB"                default: 4KiB 64KiB 1MiB 16MiB 256MiB 1GiB
#   THREADS=2                         compare's --threads
#   TIMEOUT=0                         seconds per compare, 0 for none
#   WORST=15                          how many of the worst cases the summary lists
#   EXTRA_ARGS="--seed 3"             more compare options
# Not part of the test suite. Needs python3 to read compare's JSON.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

out=sweep.tsv
# shellcheck source=cases.sh
source "$root/benchmarks/cases.sh"
parse_case_arguments 256 "$@"
timeout_s=${TIMEOUT:-0}
worst=${WORST:-15}
extra=${EXTRA_ARGS:-}

select_topology_files
open_output

# One row from compare's JSON (stdin). Columns as in the header below.
row_py='
import json, sys
topology, npus, collective, size, wall = sys.argv[1:6]
try:
    doc = json.load(sys.stdin)
    rows = [r for r in doc["results"] if r.get("applicable") and r.get("verified") and r.get("time_us") is not None]
except Exception as e:
    print("\t".join([topology, npus, collective, size, "", "failed(bad json)", "", "", "", "", "", wall]))
    sys.exit(0)
synth = next((r for r in doc["results"] if r["algorithm"] == "synth"), None)
bases = [r for r in rows if r["algorithm"] != "synth"]
best = min(bases, key=lambda r: r["time_us"]) if bases else None
size_bytes = str((synth or best or {}).get("size_bytes", ""))
if synth is None or not synth.get("applicable"):
    status = "no-synth"
elif not synth.get("verified"):
    status = "synth-unverified"
elif best is None:
    status = "no-baseline"
else:
    status = "ok"
st = synth.get("time_us") if synth else None
bt = best["time_us"] if best else None
ratio = "%.4f" % (st / bt) if status == "ok" else ""
fmt = lambda x: "" if x is None else "%.3f" % x
print("\t".join([topology, npus, collective, size, size_bytes, status, fmt(st),
                 best["algorithm"] if best else "", fmt(bt), ratio,
                 fmt(synth.get("synthesis_ms") if synth else None), wall]))
'

# One case: compare's row (run_cases in cases.sh).
run_case() {
  local file=$1 topology=$2 npus=$3 collective=$4 size=$5 started rc=0 json wall why
  started=$(date +%s.%N)
  local cmd=("$tenet" compare -t "$file" -c "$collective" --size "$size" --json --threads "$threads")
  [ "$timeout_s" != 0 ] && cmd=(timeout "$timeout_s" "${cmd[@]}")
  # shellcheck disable=SC2086
  json=$("${cmd[@]}" $extra 2>"$errors") || rc=$?
  wall=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" -ne 0 ]; then
    why="failed(rc=$rc)"
    [ "$rc" -eq 124 ] && [ "$timeout_s" != 0 ] && why="failed(timeout ${timeout_s}s)"
    printf '%s\t%s\t%s\t%s\t\t%s\t\t\t\t\t\t%s\n' "$topology" "$npus" "$collective" "$size" "$why" "$wall"
    sed 's/^/  | /' "$errors" | head -5 >&2
  else
    python3 -c "$row_py" "$topology" "$npus" "$collective" "$size" "$wall" <<<"$json"
  fi
}

run_cases "topology	npus	collective	size	size_bytes	status	synth_us	best_baseline	baseline_us	ratio	synthesis_ms	wall_s"
finish_output

python3 - "$out" "$worst" <<'EOF'
import csv, sys
path, worst = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(path), delimiter="\t"))
ok = [r for r in rows if r["status"] == "ok"]
bad = [r for r in rows if r["status"] != "ok"]
for r in ok:
    r["r"] = float(r["ratio"])
name = lambda r: "%s %s %s" % (r["topology"], r["collective"], r["size"])
pct = lambda a, b: "%.1f%%" % (100.0 * a / b) if b else "-"
print("cases                        %d (%d compared, %d not: %s)" % (
    len(rows), len(ok), len(bad),
    ", ".join(sorted({r["status"] for r in bad})) or "none"))
if not ok:
    sys.exit(0)
within = [r for r in ok if r["r"] <= 1.05]
behind = [r for r in ok if r["r"] > 1.25]
w = max(ok, key=lambda r: r["r"])
big = [r for r in ok if r["size_bytes"] and int(r["size_bytes"]) >= 1 << 20]
faster = [r for r in big if r["r"] < 1.0]
print("synth within 1.05x of best   %d of %d (%s)" % (len(within), len(ok), pct(len(within), len(ok))))
print("synth behind by > 1.25x      %d of %d (%s)" % (len(behind), len(ok), pct(len(behind), len(ok))))
print("worst ratio                  %.4f (%s: synth %s us, %s %s us)" % (
    w["r"], name(w), w["synth_us"], w["best_baseline"], w["baseline_us"]))
print("synth beats every baseline   %d of %d cases >= 1 MiB (%s)" % (len(faster), len(big), pct(len(faster), len(big))))
tot = sum(float(r["synthesis_ms"]) for r in ok if r["synthesis_ms"])
print("synthesis time               total %.2f s, max %.2f s (%s)" % (
    tot / 1000, max(float(r["synthesis_ms"] or 0) for r in ok) / 1000,
    name(max(ok, key=lambda r: float(r["synthesis_ms"] or 0)))))
print()
print("%d worst cases:" % min(worst, len(ok)))
print("%-28s %-13s %7s %8s %12s %-10s %12s" % ("topology", "collective", "size", "ratio", "synth_us", "best", "best_us"))
for r in sorted(ok, key=lambda r: -r["r"])[:worst]:
    print("%-28s %-13s %7s %8.4f %12s %-10s %12s" % (
        r["topology"], r["collective"], r["size"], r["r"], r["synth_us"], r["best_baseline"], r["baseline_us"]))
if bad:
    print()
    print("not compared:")
    for r in bad:
        print("  %s: %s" % (name(r), r["status"]))
EOF
