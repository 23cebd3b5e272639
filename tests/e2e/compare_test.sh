#!/usr/bin/env bash
# End-to-end tests of `ferry compare`: configurations that agree (exit 0), a real divergence (the cpu backend's
# convolution against ref's at zero tolerance, in the middle of a chain of exact ops: exit 3, the right first
# divergent node), the bisection's model (onnx.checker, and it reproduces), stored references (.npy, with a
# perturbed element and a NaN), --ops, --json, and usage errors (exit 2 naming the token).
# Usage: compare_test.sh path/to/ferry. Exit 77 (skipped) when /usr/bin/python3 lacks onnx or numpy.
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
if ! "$PY" -c 'import onnx, numpy' >/dev/null 2>&1; then
  echo "SKIP: $PY lacks onnx or numpy"
  exit 77
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

# chain.onnx: x -> add_in (Add) -> relu_in (Relu) -> conv_mid (Conv 16->16, 3x3) -> relu_out (Relu) -> add_out (Add)
# -> y. Add and Relu are exact on every backend; the convolution's sums are ordered differently by cpu and ref.
cat >"$TMP/make.py" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(0)
w = numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.2).astype(np.float32), 'w')
b1 = numpy_helper.from_array(rng.standard_normal((1, 16, 1, 1)).astype(np.float32), 'b1')
b2 = numpy_helper.from_array(rng.standard_normal((1, 16, 1, 1)).astype(np.float32), 'b2')
nodes = [
    helper.make_node('Add', ['x', 'b1'], ['t1'], name='add_in'),
    helper.make_node('Relu', ['t1'], ['t2'], name='relu_in'),
    helper.make_node('Conv', ['t2', 'w'], ['t3'], name='conv_mid', pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['t3'], ['t4'], name='relu_out'),
    helper.make_node('Add', ['t4', 'b2'], ['y'], name='add_out'),
]
g = helper.make_graph(nodes, 'chain', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 16, 12, 12])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 16, 12, 12])], [w, b1, b2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
EOF
"$PY" "$TMP/make.py" "$TMP/chain.onnx" || { echo "FAIL setup: make.py"; exit 1; }

M="$ROOT/models/quickstart_cnn.onnx"
C="$TMP/chain.onnx"
EXACT=(--a cpu,ref:opt=0 --b ref:opt=0 --atol 0 --rtol 0)

# Agreement: the defaults (cpu,ref at opt 3 against ref at opt 0) on the shipped model, several trials.
expect agree_default 0 'PASS: 1 output within tolerance in all 3 trials' -- "$FERRY" compare "$M" --trials 3 --range input=-1,1
expect agree_same_config 0 'logits +0 +0 +0 +1\.000000' -- "$FERRY" compare "$M" --a ref:opt=0 --b ref:opt=0
expect agree_layerwise 0 'no divergence' -- "$FERRY" compare "$C" --layerwise
expect agree_ones 0 'inputs: ones' -- "$FERRY" compare "$C" --inputs ones

# Level 3 (the default) keeps most of the shipped model in the cpu backend's blocked layout: those values are
# compared through their blocked twins (13 of 23 compared; the other 10 are fused away), and they agree.
"$FERRY" compare "$M" --layerwise --json >"$TMP/twins.json"
TWINS=0
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then TWINS=10; fi
expect layerwise_twins 0 'ok' -- "$PY" -c '
import json, sys
l = json.load(open(sys.argv[1]))["layerwise"]
assert l["compared"] == 13 and l["not_compared"] == 10 and l["failed"] == 0, (l["compared"], l["failed"])
assert l["through_twin"] == int(sys.argv[2]), l["through_twin"]
twins = [v for v in l["values"] if "twin_a" in v]
assert len(twins) == l["through_twin"] and all(v["compared"] and v["stats"]["pass"] for v in twins)
print("ok")' "$TMP/twins.json" "$TWINS"
if [ "$TWINS" = 10 ]; then  # a block of 8 (AVX2), where the first convolution differs at zero tolerance
  expect layerwise_twins_block8 3 "as '/stem/stem.2/Relu_output_0_blocked' \(blocked by 8\)" -- "$FERRY" compare "$M" --a cpu,ref:isa=avx2,fma --atol 0 --rtol 0 --layerwise
fi

# Divergence: at zero tolerance the first node that differs is the convolution, and it introduced the error.
expect diverge_exit3 3 'FAIL: 1 of 1 output beyond tolerance' -- "$FERRY" compare "$C" "${EXACT[@]}"
expect diverge_first_node 3 "first divergence: node 'conv_mid' \(Conv\)" -- "$FERRY" compare "$C" "${EXACT[@]}" --layerwise
expect diverge_introduced 3 'introduced here: every input is within tolerance' -- "$FERRY" compare "$C" "${EXACT[@]}" --layerwise
expect diverge_input_agrees 3 "input 't2': max abs 0, within tolerance" -- "$FERRY" compare "$C" "${EXACT[@]}" --layerwise
"$FERRY" compare "$C" "${EXACT[@]}" --layerwise --json >"$TMP/lw.json"
expect diverge_json 0 'ok' -- "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
f = j["layerwise"]["first_divergence"]
assert j["pass"] is False and f["node"] == "conv_mid" and f["op"] == "Conv" and not f["inherited"], f
assert [v["node"] for v in j["layerwise"]["values"]] == ["add_in", "relu_in", "conv_mid", "relu_out", "add_out"]
assert all(v["stats"]["pass"] for v in j["layerwise"]["values"][:2])
print("ok")' "$TMP/lw.json"

# Bisection: the convolution alone reproduces; the written model passes onnx.checker and reproduces exit 3.
expect bisect_runs 3 'smallest reproducer: 1 node \(conv_mid\)' -- "$FERRY" compare "$C" "${EXACT[@]}" --bisect "$TMP/sub.onnx"
expect bisect_command 3 'reproduce: ferry compare .*/sub.onnx --inputs .*/sub_data .* --atol 0 --rtol 0' -- "$FERRY" compare "$C" "${EXACT[@]}" --bisect "$TMP/sub.onnx"
expect bisect_checker 0 'checker ok' -- "$PY" -c '
import sys, onnx
m = onnx.load(sys.argv[1]); onnx.checker.check_model(m, full_check=True)
assert [n.name for n in m.graph.node] == ["conv_mid"] and [i.name for i in m.graph.input] == ["t2"]
print("checker ok")' "$TMP/sub.onnx"
expect bisect_reproduces 3 'FAIL: 1 of 1 output' -- "$FERRY" compare "$TMP/sub.onnx" --inputs "$TMP/sub_data" "${EXACT[@]}"
expect bisect_reference 0 'B: the outputs stored in' -- "$FERRY" compare "$TMP/sub.onnx" --reference "$TMP/sub_data" --a ref:opt=0 --atol 0 --rtol 0

# Stored references: ferry run's outputs as .npy; then one element perturbed, then a NaN.
mkdir -p "$TMP/in"
cp "$ROOT/models/quickstart_cnn_input.npy" "$TMP/in/input.npy"
"$FERRY" run "$M" --input "input=$TMP/in/input.npy" -O 0 --backends ref --output-dir "$TMP/ref" >/dev/null || { echo "FAIL setup: ferry run"; exit 1; }
expect reference_agrees 0 'PASS' -- "$FERRY" compare "$M" --reference "$TMP/ref" --inputs "$TMP/in"
"$PY" -c '
import sys, numpy as np
y = np.load(sys.argv[1]); y[0, 3] += 0.5; np.save(sys.argv[2] + "/logits.npy", y)
y[0, 7] = np.nan; np.save(sys.argv[3] + "/logits.npy", y)' "$TMP/ref/logits.npy" "$(mkdir -p "$TMP/bad" && echo "$TMP/bad")" "$(mkdir -p "$TMP/nan" && echo "$TMP/nan")"
expect reference_perturbed 3 'FAIL \(1 of 10\)  worst \[0,3\]' -- "$FERRY" compare "$M" --reference "$TMP/bad" --inputs "$TMP/in"
expect reference_nan 3 '0/1 +0/0 +FAIL \(2 of 10\)  worst \[0,7\]' -- "$FERRY" compare "$M" --reference "$TMP/nan" --inputs "$TMP/in"
expect reference_per_output 3 "'logits': \|a-b\| <= 0.6" -- "$FERRY" compare "$M" --reference "$TMP/nan" --inputs "$TMP/in" --per-output logits=0.6

# The numbered layout scripts/gen_test_models.py writes (input_0.npy, output_0.npy): inputs and reference in one.
mkdir -p "$TMP/numbered"
cp "$TMP/in/input.npy" "$TMP/numbered/input_0.npy"
cp "$TMP/ref/logits.npy" "$TMP/numbered/output_0.npy"
expect reference_numbered_npy 0 'PASS' -- "$FERRY" compare "$M" --reference "$TMP/numbered"
cp "$TMP/bad/logits.npy" "$TMP/numbered/output_0.npy"
expect reference_numbered_npy_differs 3 'FAIL \(1 of 10\)  worst \[0,3\]' -- "$FERRY" compare "$M" --reference "$TMP/numbered"

# The op-focused mode.
expect ops_conv_flagged 3 'conv_mid \(Conv\) +cpu/ref' -- "$FERRY" compare "$C" "${EXACT[@]}" --ops Conv
expect ops_relu_pass 0 'PASS: 2 nodes within tolerance' -- "$FERRY" compare "$C" "${EXACT[@]}" --ops Relu,Softmax
expect ops_absent 1 'has no node of those op types' -- "$FERRY" compare "$C" --ops Softmax

# Usage errors name the token; bad files are errors, not crashes.
expect usage_unknown_option 2 "unknown option 'fast'" -- "$FERRY" compare "$M" --a cpu:fast
expect usage_bad_level 2 "bad value in 'opt=9'" -- "$FERRY" compare "$M" --b ref:opt=9
expect usage_deterministic 2 'needs a fixed thread count' -- "$FERRY" compare "$M" --a cpu,ref:deterministic
expect usage_reference_layerwise 2 'do not take --reference' -- "$FERRY" compare "$M" --reference "$TMP/ref" --layerwise
expect usage_inputs 2 "is neither random, zeros, ones nor a folder" -- "$FERRY" compare "$M" --inputs "$TMP/none"
expect usage_per_output 2 'expected NAME=ATOL' -- "$FERRY" compare "$M" --per-output logits
expect usage_unknown_backend 2 "ferry compare: --a 'nosuch': unknown backend 'nosuch' \\(available: " -- "$FERRY" compare "$M" --a nosuch
expect error_model 1 'error' -- "$FERRY" compare "$TMP/none.onnx"

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
