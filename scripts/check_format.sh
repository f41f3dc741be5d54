#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exits non-zero when a C++ file differs from .clang-format's layout, and lists each difference.
#   scripts/check_format.sh              every file of src/ include/ tests/ fuzz/ benchmarks/
#   scripts/check_format.sh FILE...      only these
# CLANG_FORMAT picks the binary (default: clang-format-14, else clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."

clang_format=${CLANG_FORMAT:-}
if [ -z "$clang_format" ]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null; then clang_format=$candidate; break; fi
  done
fi
if [ -z "$clang_format" ]; then
  echo "check_format: clang-format not found (apt-get install clang-format)" >&2
  exit 2
fi

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- src include tests fuzz benchmarks | grep -E '\.(cpp|hpp|h)$')
fi
"$clang_format" --dry-run -Werror --style=file "${files[@]}"
