# SPDX-License-Identifier: MIT
# Shared by the benchmark scripts that run one tenet command per (topology, collective, size) and
# write a TSV (sweep.sh, synth_times.sh); sourced, not run. Each caller sets `root` (the
# repository) and `out` (the TSV's path) first.

# Parses [-o out.tsv] [path/to/tenet] [max_npus] into out, tenet and max_npus (default_npus when
# not given), reads the knobs both scripts share (COLLECTIVES, SIZES, THREADS) and checks what the
# scripts need.
parse_case_arguments() {
  local default_npus=$1
  shift
  if [ "${1:-}" = -o ]; then
    [ $# -ge 2 ] || { echo "usage: $0 [-o out.tsv] [path/to/tenet] [max_npus]" >&2; exit 2; }
    out=$2
    shift 2
  fi
  tenet=${1:-$root/build/tenet}
  max_npus=${2:-$default_npus}
  collectives=${COLLECTIVES:-allgather reducescatter allreduce}
  sizes=${SIZES:-4KiB 64KiB 1MiB 16MiB 256MiB 1GiB}
  threads=${THREADS:-2}
  [ -x "$tenet" ] || { echo "build tenet first (scripts/bootstrap.sh), or give its path" >&2; exit 2; }
  [[ $max_npus =~ ^[0-9]+$ ]] || { echo "max_npus must be a number (got '$max_npus')" >&2; exit 2; }
  command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }
}

# The topology files: TOPOLOGIES (names in topologies/ or paths), else every shipped one.
select_topology_files() {
  files=()
  if [ -n "${TOPOLOGIES:-}" ]; then
    for t in $TOPOLOGIES; do
      if [ -f "$t" ]; then files+=("$t")
      elif [ -f "$root/topologies/$t.json" ]; then files+=("$root/topologies/$t.json")
      else echo "no topology '$t' (neither a file nor topologies/$t.json)" >&2; exit 2
      fi
    done
  else
    files=("$root"/topologies/*.json)
  fi
}

# Prints a file's NPU count; fails when it cannot be read.
npus_of() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["npus"])' "$1" 2>/dev/null
}

# The TSV is written to a temporary file beside `out` (tmp, with the usual mode: mktemp makes it
# 0600), moved there by finish_output; errors collects a failing command's stderr.
open_output() {
  tmp=$(mktemp "$out.XXXXXX")
  chmod "$(printf '%o' $((0666 & ~0$(umask))))" "$tmp"
  errors=$(mktemp)
  trap 'rm -f "$tmp" "$errors"' EXIT
}

# Calls `run_case FILE TOPOLOGY NPUS COLLECTIVE SIZE` (the caller's) for every case of a file of at
# most max_npus NPUs; each row it prints goes to the TSV and to stdout, after `header`.
run_cases() {
  local header=$1 file npus topology collective size row
  echo "$header" >"$tmp"
  echo "$header"
  for file in "${files[@]}"; do
    npus=$(npus_of "$file") || { echo "skipping $file: cannot read its npus" >&2; continue; }
    [ "$npus" -le "$max_npus" ] || continue
    topology=$(basename "$file" .json)
    for collective in $collectives; do
      for size in $sizes; do
        row=$(run_case "$file" "$topology" "$npus" "$collective" "$size")
        echo "$row" >>"$tmp"
        echo "$row"
      done
    done
  done
}

finish_output() {
  mv "$tmp" "$out"
  trap 'rm -f "$errors"' EXIT
  echo
  echo "wrote $out"
}
