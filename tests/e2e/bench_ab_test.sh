#!/usr/bin/env bash
# bench/ab_ferry.py end to end on the quickstart model: one build against itself in lock step, and against itself
# with other `ferry run` options on side B; a missing model is reported by name.
# Usage: bench_ab_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

mkdir -p "$TMP/models/quick"
cp "$ROOT/models/quickstart_cnn.onnx" "$TMP/models/quick/model.onnx"
cp "$ROOT/models/quickstart_cnn_input.npy" "$TMP/models/quick/input_b1.npy"
echo '{"name": "quick", "input": "input", "outputs": ["logits"]}' >"$TMP/models/quick/info.json"

expect ab_same_build 0 '^quick b1 t1: A p50 [0-9.]+ ms, B p50 [0-9.]+ ms, paired B/A [0-9.]+ \(n=6\)$' -- \
  "$PY" "$ROOT/bench/ab_ferry.py" "$FERRY" "$FERRY" --models "$TMP/models" --model quick --runs 3 --rounds 2
expect ab_b_args 0 'paired B/A [0-9.]+ \(n=4\)$' -- \
  "$PY" "$ROOT/bench/ab_ferry.py" "$FERRY" "$FERRY" --models "$TMP/models" --model quick --runs 4 --rounds 1 \
  --b-args "-O 0"
expect ab_bad_model 1 "^ab_ferry: no model 'nope' in " -- \
  "$PY" "$ROOT/bench/ab_ferry.py" "$FERRY" "$FERRY" --models "$TMP/models" --model nope

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
