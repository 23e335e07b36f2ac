#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over ncast's library and program sources, the headers they include
# checked with them; fails on any finding. Tests and CUDA sources are not checked: GoogleTest's macros
# trip the size checks by design, and clang-tidy 14 cannot parse CUDA 13.
#
#   tools/tidy.sh [-p BUILD_DIR] [--since REV] [FILE...]
#     BUILD_DIR  a configured build with compile_commands.json (default: build)
#     --since    only the translation units changed since REV (git diff REV), and those that include a
#                changed header of the same folder
#     FILE...    only these translation units
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${NCAST_BUILD_DIR:-build}
since=
files=()
while [ $# -gt 0 ]; do
  case $1 in
    -p) build=$2; shift 2 ;;
    --since) since=$2; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "tidy.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
command -v clang-tidy >/dev/null || { echo "tidy.sh: clang-tidy not found (Debian package clang-tidy)" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "tidy.sh: no $build/compile_commands.json; configure a build first (tools/build.sh)" >&2; exit 1; }

# Every checked translation unit that the build knows, as paths relative to the root.
mapfile -t known < <(python3 - "$build/compile_commands.json" "$root" <<'PY'
import json, os, sys
root = sys.argv[2]
for entry in json.load(open(sys.argv[1])):
    path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
    top = path.split("/", 1)[0]
    if top in ("coding", "gpu", "protocol", "net", "server", "peer", "tools", "cli") and path.endswith(".cpp"):
        print(path)
PY
)
if [ -n "$since" ]; then
  mapfile -t changed < <(git diff --name-only "$since" -- '*.cpp' '*.hpp' '*.h')
  for tu in "${known[@]}"; do
    for c in "${changed[@]}"; do
      if [ "$tu" = "$c" ] || { [[ $c == *.hpp || $c == *.h ]] && [ "$(dirname "$tu")" = "$(dirname "$c")" ]; }; then
        files+=("$tu")
        break
      fi
    done
  done
elif [ ${#files[@]} -eq 0 ]; then
  files=("${known[@]}")
fi
[ ${#files[@]} -eq 0 ] && { echo "tidy.sh: nothing to check"; exit 0; }

echo "tidy.sh: checking ${#files[@]} translation units"
# GCC builds the GF(2^8) product table at compile time within its own limits; clang needs more steps.
extra=(--extra-arg=-fconstexpr-steps=100000000)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\n' "${files[@]}" | sort -u |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet "${extra[@]}" >"$log" 2>/dev/null || status=$?
if [ $status -ne 0 ] || grep -q ': \(warning\|error\):' "$log"; then
  grep -A3 ': \(warning\|error\):' "$log" >&2 || cat "$log" >&2
  echo "tidy.sh: clang-tidy findings above" >&2
  exit 1
fi
echo "tidy.sh: no findings"
