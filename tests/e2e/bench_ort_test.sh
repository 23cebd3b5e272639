#!/usr/bin/env bash
# The ONNX Runtime comparison scripts end to end on the quickstart model: bench/compare_ort.py (Ferry and ORT in
# lock step) and bench/profile_ort.py (both profilers, nodes matched through the ONNX graph). Skipped (77) where
# bench/compare_ort.sh has not installed onnxruntime-node.
# Usage: bench_ort_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
if [ ! -d "$ROOT/bench/ort/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: onnxruntime-node is not installed (./bench/compare_ort.sh installs it)"; exit 77
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

mkdir -p "$TMP/models/quick"
cp "$ROOT/models/quickstart_cnn.onnx" "$TMP/models/quick/model.onnx"
cp "$ROOT/models/quickstart_cnn_input.npy" "$TMP/models/quick/input_b1.npy"
echo '{"name": "quick", "input": "input", "outputs": ["logits"]}' >"$TMP/models/quick/info.json"

expect compare_ort_lockstep 0 '^\| quick \| 1 \| 1 \| [0-9.]+ \|' -- \
  "$PY" "$ROOT/bench/compare_ort.py" --ferry "$FERRY" --models "$TMP/models" --batches 1 --threads 1 --rounds 2 \
  --runs 3 --json "$TMP/r.json"
expect compare_ort_json 0 '^runs 6 paired ok$' -- "$PY" -c "
import json
r = json.load(open('$TMP/r.json'))['rows'][0]
assert r['paired_ratio_median'] > 0 and r['ratio'] > 0, r
print('runs', r['runs'], 'paired ok')"
expect compare_ort_outputs_agree 0 '^\| quick \| [0-9.e+-]+ \| [0-9.e+-]+ \|$' -- bash -c "grep -E '^\| quick \| [0-9]' <<<\"\$(
  '$PY' '$ROOT/bench/compare_ort.py' --ferry '$FERRY' --models '$TMP/models' --batches 1 --threads 1 --rounds 1 --runs 1)\" | tail -1"
# The model's convolutions are matched on both sides (a Conv row in the per-op table).
expect profile_ort_matches_convs 0 'Conv +[0-9]+ ' -- \
  "$PY" "$ROOT/bench/profile_ort.py" --ferry "$FERRY" --models "$TMP/models" --model quick --runs 4 --top 3
expect profile_ort_header 0 'quick batch 1, 1 thread\(s\), 4 runs each in lock step: p50 Ferry [0-9.]+ ms, ORT' -- \
  "$PY" "$ROOT/bench/profile_ort.py" --ferry "$FERRY" --models "$TMP/models" --model quick --runs 4
expect profile_ort_bad_model 1 "^profile_ort: no model 'nope' in .*models \\(no info.json" -- \
  "$PY" "$ROOT/bench/profile_ort.py" --ferry "$FERRY" --models "$TMP/models" --model nope

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
