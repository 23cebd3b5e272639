#!/usr/bin/env bash
# A model repository written for Triton's ONNX Runtime backend (examples/serve/triton_repository: config.pbtxt
# files as Triton users write them, version folders) loads unchanged in `ferry serve` and serves: both models
# ready (every version of the batched one), the ignored Triton fields reported as warnings and nothing refused,
# metadata and config as the configs say, inference over HTTP matching models/quickstart_cnn_expected.npy on every
# model and version, and `ferry bench --server` running against both without errors. The repository is copied to
# a temporary folder and filled with models/quickstart_cnn.onnx (batch dim made dynamic for the batched model).
# Usage: serve_triton_repo_test.sh path/to/ferry. Exit 77 (skipped) when /usr/bin/python3 lacks onnx or numpy.
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
if ! "$PY" -c 'import onnx, numpy' >/dev/null 2>&1; then
  echo "SKIP: $PY lacks onnx or numpy"
  exit 77
fi
TMP="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -KILL "$SERVER_PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

R="$TMP/triton_repository"
cp -r "$ROOT/examples/serve/triton_repository" "$R"
cp "$ROOT/models/quickstart_cnn.onnx" "$R/quickstart_cnn/1/model.onnx"
"$PY" - "$ROOT/models/quickstart_cnn.onnx" "$R/quickstart_cnn_batched" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
for v in list(m.graph.input) + list(m.graph.output):
    d = v.type.tensor_type.shape.dim[0]
    d.ClearField("dim_value")
    d.dim_param = "batch"
for version in ("1", "2"):
    onnx.save(m, f"{sys.argv[2]}/{version}/model.onnx")
PY

"$FERRY" serve "$R" --http-port 0 --grpc-port 0 >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
PORT=""
for _ in $(seq 1 300); do
  PORT="$(grep -oE 'HTTP on [0-9.]+:[0-9]+' "$TMP/serve.log" | grep -oE '[0-9]+$')"
  [ -n "$PORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$PORT" ]; then
  echo "FAIL the Triton repository did not load:"
  cat "$TMP/serve.log"
  exit 1
fi
URL="http://127.0.0.1:$PORT"
LOG="$(cat "$TMP/serve.log")"

expect triton_unbatched_ready 0 "model 'quickstart_cnn' version 1 ready: 1 instance\(s\), max_batch_size 0" -- echo "$LOG"
expect triton_batched_ready 0 "model 'quickstart_cnn_batched' version 1,2 ready: 2 instance\(s\), max_batch_size 8, dynamic batching, level 2" -- \
  echo "$LOG"
expect triton_ignored_fields_warned 0 "config.pbtxt: parameters 'inter_op_thread_count' is ignored by Ferry" -- echo "$LOG"
expect triton_model_warmup_runs 0 "model 'quickstart_cnn_batched' version 1,2 ready: .*, warm-up 'zeros'" -- echo "$LOG"
expect triton_nothing_refused 0 '^none$' -- bash -c "grep -iE 'error|failed|refused' '$TMP/serve.log' || echo none"

expect triton_endpoints 0 '^triton ok$' -- "$PY" - "$URL" "$ROOT" <<'PY'
import json, sys, urllib.request
import numpy as np
url, root = sys.argv[1], sys.argv[2]
get = lambda p: json.load(urllib.request.urlopen(url + p))
m = get("/v2/models/quickstart_cnn")
assert m["platform"] == "onnxruntime_onnx", m
assert m["inputs"] == [{"datatype": "FP32", "name": "input", "shape": [1, 3, 32, 32]}], m
b = get("/v2/models/quickstart_cnn_batched")
assert b["inputs"][0]["shape"] == [-1, 3, 32, 32] and sorted(b["versions"]) == ["1", "2"], b
c = get("/v2/models/quickstart_cnn_batched/config")
assert c["max_batch_size"] == 8, c
assert c["instance_group"][0]["count"] == 2, c
assert c["dynamic_batching"]["preferred_batch_size"] == [4, 8], c
x = np.load(root + "/models/quickstart_cnn_input.npy").astype(np.float32)
want = np.load(root + "/models/quickstart_cnn_expected.npy")
for path in ("/v2/models/quickstart_cnn", "/v2/models/quickstart_cnn_batched/versions/1",
             "/v2/models/quickstart_cnn_batched/versions/2"):
    urllib.request.urlopen(url + path + "/ready")  # 200, or raises
    body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": list(x.shape),
                                   "data": x.ravel().tolist()}]}).encode()
    r = json.load(urllib.request.urlopen(urllib.request.Request(url + path + "/infer", body)))
    out = np.array(r["outputs"][0]["data"], dtype=np.float32).reshape(r["outputs"][0]["shape"])
    assert out.shape == want.shape, (path, out.shape)
    assert np.allclose(out, want, rtol=1e-4, atol=1e-4), (path, out, want)
print("triton ok")
PY

expect triton_bench_batched 0 'batch +conc' -- \
  "$FERRY" bench --server "$URL" --model quickstart_cnn_batched --batch 1,8 --concurrency 2 --iterations 4 --warmup 1
expect triton_bench_unbatched 0 'max_batch_size 0' -- \
  "$FERRY" bench --server "$URL" --model quickstart_cnn --iterations 4 --warmup 1

kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
