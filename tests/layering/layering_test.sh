#!/usr/bin/env bash
# The rooms of cmake/rooms.txt hold, and both of their guards catch an upward or sideways include:
#   1. scripts/check_layering.py passes on the tree;
#   2. it fails, naming the file, the line and both rooms, on a copy of src/ with such includes planted;
#   3. a file compiled with a room's include root (build/rooms/<room>/, as the build compiles that room) cannot
#      find a header of a room above or beside it, and does find those it builds on.
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
# A sideways include (cpu kernels using the cuda rooms) is one too.
printf '#include "kernels/cuda_defs/cuda_shapes.h"\n' > "$tmp/tree/src/kernels/cpu/planted.h"
out=$(python3 "$src/scripts/check_layering.py" --root "$tmp/tree") && fail "a sideways include passed"
want='src/kernels/cpu/planted.h:1: room kernels/cpu includes "kernels/cuda_defs/cuda_shapes.h" (room kernels/cuda_defs'
grep -qF "$want" <<<"$out" || fail "check_layering.py did not name the sideways include: $out"
rm "$tmp/tree/src/kernels/cpu/planted.h"
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
compile kernels_cpu kernels/ref/ref_kernels.h || fail "kernels/cpu cannot include kernels/ref: $(cat "$tmp/err")"
compile kernels_cpu kernels/cuda_defs/cuda_kernel_defs.h && fail "kernels/cpu compiled an include of cuda_defs"
compile backends kernels/cuda_defs/cuda_kernel_defs.h || fail "backends cannot include cuda_defs: $(cat "$tmp/err")"
compile runtime runtime/executor.h || fail "runtime cannot include its own header: $(cat "$tmp/err")"
compile runtime tools/check.h && fail "runtime compiled an include of tools/check.h"
echo "layering: the tree is clean; planted upward and sideways includes are refused by the script and the compiler"
