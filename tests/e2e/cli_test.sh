#!/usr/bin/env bash
# End-to-end tests of the `ferry` CLI: outputs, files written, exit codes (DESIGN.md: 0 ok, 1 error, 2 usage).
# Usage: cli_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
passes=0

expect() {  # expect NAME WANT_RC PATTERN -- CMD...
  local name="$1" want="$2" pattern="$3"
  shift 4
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, want $want"; echo "$out" | head -20; fails=$((fails + 1)); return
  fi
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: output does not match /$pattern/"; echo "$out" | head -20; fails=$((fails + 1)); return
  fi
  echo "PASS $name"; passes=$((passes + 1))
}

M="$ROOT/models/quickstart_cnn.onnx"
expect run_with_input 0 'logits: float32 \[1,10\]  min' -- \
  "$FERRY" run "$M" --input "input=$ROOT/models/quickstart_cnn_input.npy" --output-dir "$TMP/out"
expect output_matches_pytorch 0 'max abs diff' -- /usr/bin/python3 -c "
import numpy as np, sys
a = np.load('$TMP/out/logits.npy'); b = np.load('$ROOT/models/quickstart_cnn_expected.npy')
d = float(np.abs(a - b).max()); print('max abs diff', d); sys.exit(0 if d < 1e-4 else 1)"
expect run_repeat_reports_median 0 'runs 3: median [0-9.]+ ms, p90' -- "$FERRY" run "$M" --random --seed 1 --repeat 3
expect run_json 0 '"latency_ms"' -- "$FERRY" run "$M" --random --json
expect run_random_is_seeded 0 '^same$' -- bash -c "a=\$('$FERRY' run '$M' --random --seed 7 --json | grep -A8 logits | grep mean); b=\$('$FERRY' run '$M' --random --seed 7 --json | grep -A8 logits | grep mean); [ \"\$a\" = \"\$b\" ] && echo same"
expect run_pb_input 0 'y: float32 \[3,4,5\]' -- \
  "$FERRY" run "$ROOT/../shared/onnx-tests/node/test_abs/model.onnx" \
  --input "x=$ROOT/../shared/onnx-tests/node/test_abs/test_data_set_0/input_0.pb"
expect usage_no_model 2 'model' -- "$FERRY" run
expect usage_unknown_flag 2 'nope' -- "$FERRY" run "$M" --nope
expect missing_model_file 1 'no such file' -- "$FERRY" run "$TMP/missing.onnx" --random
printf 'garbage' >"$TMP/garbage.onnx"
expect garbage_model 1 'InvalidModel.*garbage.onnx' -- "$FERRY" run "$TMP/garbage.onnx" --random
expect wrong_input_name 1 "no input 'nope'" -- "$FERRY" run "$M" --input "nope=$ROOT/models/quickstart_cnn_input.npy"
expect missing_input 1 "input 'input' has no value" -- "$FERRY" run "$M"
expect bad_shape_flag 1 "bad dimension" -- "$FERRY" run "$M" --random --shape input=1xAx3
expect unknown_backend 1 "unknown backend 'gpu'" -- "$FERRY" run "$M" --random --backend gpu

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
