#!/usr/bin/env bash
# `ferry check --memory`: the JIT code oneDNN generated for the kernels (measured while the session was built) in
# the text report, the JSON and the total that --memory-limit compares; none on `ref` (docs/memory.md). And
# `ferry run --json`: its peak RSS stays near what the prediction counts (the first run does not keep what it
# frees in the buffer pool).
# Usage: memory_jit_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
M="$ROOT/models/quickstart_cnn.onnx"

expect jit_line 0 'JIT code +[0-9.]+ [KM]iB  generated for the kernels while the session was built \(measured\)' -- \
  "$FERRY" check "$M" --memory
expect jit_ref_none 0 'JIT code +0 B' -- "$FERRY" check "$M" --memory --backends ref
expect jit_json 0 '^sums ok$' -- bash -c "'$FERRY' check '$M' --memory --json | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)[\"memory\"]
parts = sum(m[k] for k in (\"weights_bytes\", \"kernel_bytes\", \"arena_bytes\", \"io_bytes\", \"workspace_bytes\",
                           \"jit_code_bytes\"))
print(\"sums ok\" if m[\"jit_code_bytes\"] > 0 and m[\"total_bytes\"] == parts else m)'"
TOTAL="$("$FERRY" check "$M" --memory --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["total_bytes"])')"
expect jit_in_limit 3 "CHECK FAILED: predicted memory .* exceeds --memory-limit .*JIT code [0-9.]+ KiB, kernels' workspace" -- \
  "$FERRY" check "$M" --memory-limit "$((TOTAL - 1))"
expect jit_limit_at_total 0 'total' -- "$FERRY" check "$M" --memory-limit "$TOTAL"
expect run_json_jit 0 '^jit ok$' -- bash -c "'$FERRY' run '$M' --random --threads 1 --repeat 2 --json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(\"jit ok\" if j[\"memory\"][\"predicted\"][\"jit_code_bytes\"] > 0 and j[\"peak_rss_kb\"] > 0 else j[\"memory\"])'"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
