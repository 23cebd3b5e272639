#!/usr/bin/env bash
# `cmake --install` makes a usable package: examples/cpp configures with find_package(Ferry) against the
# installed prefix, builds against libferry_runtime.so and libferry_runtime.a, and both programs run the shipped
# quick-start model to the same sums, which the `ref` backend agrees with.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1" build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
for f in include/ferry/session.h include/ferry/plugin.h lib/cmake/Ferry/FerryConfig.cmake \
         lib/cmake/Ferry/FerryTargets.cmake lib/libferry_runtime.a bin/ferry; do
  [ -e "$tmp/prefix/$f" ] || fail "the install has no $f"
done
ls "$tmp/prefix"/lib/libferry_runtime.so.* >/dev/null || fail "the install has no libferry_runtime.so"
# Nothing of src/ is installed: the public headers are self-contained.
[ "$(ls "$tmp/prefix/include")" = "ferry" ] || fail "unexpected headers: $(ls "$tmp/prefix/include")"

model="$src/models/quickstart_cnn.onnx"
for variant in OFF ON; do
  dir="$tmp/example-$variant"
  cmake -S "$src/examples/cpp" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DFERRY_EXAMPLE_STATIC="$variant" >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure ($variant)"; }
  cmake --build "$dir" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build (static=$variant)"; }
  "$dir/run_model" "$model" >"$dir/out.txt" || fail "run_model (static=$variant) exited $?"
  cat "$dir/out.txt"
  grep -q '^output ' "$dir/out.txt" || fail "run_model printed no output"
done
if [ "$(ldd "$tmp/example-OFF/run_model" | grep -c 'libferry_runtime.so')" != 1 ]; then
  fail "the shared example does not load libferry_runtime.so: $(ldd "$tmp/example-OFF/run_model")"
fi
ldd "$tmp/example-ON/run_model" | grep -q libferry_runtime && fail "the static example loads libferry_runtime.so"
cmp -s "$tmp/example-OFF/out.txt" "$tmp/example-ON/out.txt" || fail "shared and static builds disagree"
# The default backends (cpu, ref fallback) and `ref` alone agree.
"$tmp/example-OFF/run_model" "$model" ref > "$tmp/ref.txt"
python3 - "$tmp/example-OFF/out.txt" "$tmp/ref.txt" <<'PY' || fail "cpu and ref outputs differ"
import re, sys
def sums(p):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r'^output (\S+) .* sum=(\S+)$', open(p).read(), re.M)}
a, b = sums(sys.argv[1]), sums(sys.argv[2])
assert a and a.keys() == b.keys(), (a, b)
for k in a:
    assert abs(a[k] - b[k]) <= 1e-3 * max(1.0, abs(b[k])), (k, a[k], b[k])
PY
echo "install: the package builds examples/cpp (shared and static) and runs the quick-start model"
