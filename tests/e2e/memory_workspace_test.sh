#!/usr/bin/env bash
# `ferry check --memory`: the kernels' workspace (scratch buffers kept per thread) in the text report, one line
# per device, in the JSON and in the total that --memory-limit compares; none for a model whose kernels keep no
# scratch; per-thread buffers follow --threads (docs/memory.md).
# Usage: memory_workspace_test.sh path/to/ferry     (exit 77 = skipped: no /usr/bin/python3 with onnx)
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
if ! /usr/bin/python3 -c "import onnx" 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no onnx module"; exit 77
fi

M="$ROOT/models/quickstart_cnn.onnx"
# Relu only (no kernel keeps scratch), and one 256x256x256 MatMul (the ref GEMM's per-thread packing panels).
/usr/bin/python3 - "$TMP" <<'EOF'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
d = sys.argv[1]
f = TensorProto.FLOAT
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                      [helper.make_tensor_value_info("x", f, [4, 64])], [helper.make_tensor_value_info("y", f, [4, 64])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), d + "/relu.onnx")
b = numpy_helper.from_array(np.full((256, 256), 0.01, np.float32), "b")
g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "mm",
                      [helper.make_tensor_value_info("a", f, ["N", 256])],
                      [helper.make_tensor_value_info("y", f, ["N", 256])], [b])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), d + "/matmul.onnx")
EOF

# On cpu which buffers the convolutions keep depends on the layouts oneDNN picks for this CPU; on ref the GEMM's
# packing panels are always there.
expect workspace_line 0 'workspace \(cpu\) +[0-9.]+ [KM]iB  [a-zA-Z]' -- "$FERRY" check "$M" --memory
expect workspace_json 0 '^sums ok$' -- bash -c "'$FERRY' check '$M' --memory --json --backends ref | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)[\"memory\"]
parts = sum(m[k] for k in (\"weights_bytes\", \"kernel_bytes\", \"arena_bytes\", \"io_bytes\", \"workspace_bytes\"))
ok = m[\"workspace_bytes\"] > 0 and m[\"workspace_bytes\"] == sum(b[\"bytes\"] for b in m[\"workspace\"]) \
    and m[\"total_bytes\"] == parts and all(b[\"device\"] == \"cpu\" for b in m[\"workspace\"])
print(\"sums ok\" if ok else m)'"
# A limit one byte below the total fails, naming the workspace; at the total it passes.
TOTAL="$("$FERRY" check "$M" --memory --json --backends ref | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["total_bytes"])')"
expect workspace_in_limit 3 "CHECK FAILED: predicted memory .* exceeds --memory-limit .*kernels' workspace [0-9.]+ KiB\)" -- \
  "$FERRY" check "$M" --backends ref --memory-limit "$((TOTAL - 1))"
expect workspace_limit_at_total 0 'total' -- "$FERRY" check "$M" --backends ref --memory-limit "$TOTAL"
expect workspace_none 0 'workspace +0 B  no kernel keeps scratch buffers at these shapes' -- \
  "$FERRY" check "$TMP/relu.onnx" --memory
expect workspace_ref_gemm_threads 0 'workspace \(cpu\) .*ref GEMM B panels [0-9.]+ KiB \(2 threads\)' -- \
  "$FERRY" check "$TMP/matmul.onnx" --memory --backends ref --shape a=256x256 --threads 2
expect workspace_ref_gemm_one_thread 0 'workspace \(cpu\) .*ref GEMM A panels [0-9.]+ KiB$' -- \
  "$FERRY" check "$TMP/matmul.onnx" --memory --backends ref --shape a=256x256 --threads 1
expect workspace_symbolic 0 'workspace +0 B' -- "$FERRY" check "$TMP/matmul.onnx" --memory --backends ref
expect workspace_threads_bad 2 '--threads' -- "$FERRY" check "$M" --memory --threads -1

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
