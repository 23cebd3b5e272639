#!/usr/bin/env bash
# The room order of cmake/rooms.txt holds, and both of its guards catch an upward include:
#   1. scripts/check_layering.py passes on the tree;
#   2. it fails, naming the file, the line and both rooms, on a copy of src/ with an upward include planted;
#   3. a file compiled with a room's include root (build/rooms/<room>/, as the build compiles that room) cannot
#      find a header of a room above it, and does find those below it.
# Usage: layering_test.sh SOURCE_DIR BUILD_DIR CXX
set -euo pipefail
src="$1" build="$2" cxx="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 "$src/scripts/check_layering.py" --root "$src" || fail "the tree has layering violations (above)"

mkdir -p "$tmp/tree/cmake"
cp "$src/cmake/rooms.txt" "$tmp/tree/cmake/"
cp -r "$src/src" "$src/include" "$tmp/tree/"
planted="$tmp/tree/src/kernels/ref/ref_kernels.cc"
printf '#include "runtime/executor.h"\n' >> "$planted"
line=$(wc -l < "$planted")
if out=$(python3 "$src/scripts/check_layering.py" --root "$tmp/tree"); then
  fail "check_layering.py passed a planted upward include: $out"
fi
grep -q "src/kernels/ref/ref_kernels.cc:$line: room kernels/ref includes \"runtime/executor.h\" (room runtime" \
  <<<"$out" || fail "check_layering.py did not name the planted include: $out"
# A relative path climbing out of the room is the same violation.
printf '#include "../backends/backend.h"\n' > "$tmp/tree/src/core/planted.h"
out=$(python3 "$src/scripts/check_layering.py" --root "$tmp/tree") && fail "a ../ include passed"
grep -q 'src/core/planted.h:1: room core includes "../backends/backend.h" (room backends' <<<"$out" \
  || fail "check_layering.py did not name the ../ include: $out"

compile() {  # compile ROOM_ID HEADER: syntax-check a file including HEADER with that room's include root
  printf '#include "%s"\n' "$2" > "$tmp/planted.cc"
  "$cxx" -std=c++20 -fsyntax-only -DONNX_NAMESPACE=onnx -DONNX_ML=1 -I"$src/include" -I"$build/rooms/$1" \
    "$tmp/planted.cc" 2>"$tmp/err"
}
[ -d "$build/rooms/kernels_ref" ] || fail "no include root $build/rooms/kernels_ref (configure the build first)"
compile kernels_ref kernels/kernel.h || fail "kernels/ref cannot include kernels/kernel.h: $(cat "$tmp/err")"
compile kernels_ref backends/backend.h && fail "kernels/ref compiled an include of backends/backend.h"
grep -q 'backends/backend.h: No such file' "$tmp/err" || fail "unexpected compiler error: $(cat "$tmp/err")"
compile core ir/graph.h && fail "core compiled an include of ir/graph.h"
compile runtime runtime/executor.h || fail "runtime cannot include its own header: $(cat "$tmp/err")"
compile runtime tools/check.h && fail "runtime compiled an include of tools/check.h"
echo "layering: the tree is clean; planted upward includes are refused by the script and by the compiler"
