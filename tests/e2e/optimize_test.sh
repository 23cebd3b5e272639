#!/usr/bin/env bash
# End-to-end tests of `ferry optimize`: models/quickstart_cnn.onnx optimized portably (no --target) and for
# cpu,ref at every level; each output reloads in Ferry and computes what the original does (1e-4), the portable
# ones also pass onnx.checker (and run under ONNX Runtime when bench/ort has it installed); external data, IR dumps,
# the report, --shape, the pass list, `ferry run --opt-level/--dump-ir`, and bad inputs (exit 1 or 2, a message
# naming the problem, never a crash).
# Usage: optimize_test.sh path/to/ferry. Exit 77 (skipped) when /usr/bin/python3 lacks onnx or numpy.
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

# same.py DIR_A DIR_B: every .npy in A has a twin in B within 1e-4.
cat >"$TMP/same.py" <<'EOF'
import glob, os, sys
import numpy as np
a_dir, b_dir = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(a_dir, '*.npy')))
if not files:
    sys.exit('no outputs in ' + a_dir)
worst = 0.0
for f in files:
    a, b = np.load(f), np.load(os.path.join(b_dir, os.path.basename(f)))
    if a.shape != b.shape:
        sys.exit('%s: shape %s vs %s' % (os.path.basename(f), a.shape, b.shape))
    worst = max(worst, float(np.abs(a.astype(np.float64) - b).max()))
print('max abs diff', worst)
sys.exit(0 if worst < 1e-4 else 1)
EOF
# check.py MODEL: onnx.checker, and neither the opset imports nor the nodes use a non-standard domain.
cat >"$TMP/check.py" <<'EOF'
import sys
import onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
domains = {o.domain for o in m.opset_import} | {n.domain for n in m.graph.node}
assert domains <= {'', 'ai.onnx'}, domains
print('checker ok')
EOF

M="$ROOT/models/quickstart_cnn.onnx"
IN="$ROOT/models/quickstart_cnn_input.npy"
"$FERRY" run "$M" --input "input=$IN" --output-dir "$TMP/ref" -O 0 >/dev/null || { echo "FAIL setup: ferry run"; exit 1; }

ORT_JS="$ROOT/bench/ort/ort_run.js"
HAVE_ORT=0
[ -d "$ROOT/bench/ort/node_modules/onnxruntime-node" ] && command -v node >/dev/null && HAVE_ORT=1

for level in 0 1 2 3; do
  out="$TMP/portable_O$level.onnx"
  expect "portable_O${level}_writes" 0 "at level $level for no target \(portable" -- "$FERRY" optimize "$M" "$out" --level "$level"
  expect "portable_O${level}_checker" 0 'checker ok' -- "$PY" "$TMP/check.py" "$out"
  expect "portable_O${level}_reloads_same_outputs" 0 'max abs diff' -- bash -c "
    '$FERRY' run '$out' --input 'input=$IN' --output-dir '$TMP/p$level' >/dev/null && '$PY' '$TMP/same.py' '$TMP/ref' '$TMP/p$level'"
  if [ "$HAVE_ORT" = 1 ]; then
    mkdir -p "$TMP/ort$level"
    expect "portable_O${level}_onnxruntime" 0 'max abs diff' -- bash -c "
      node '$ORT_JS' '$out' --input 'input=$IN' --repeat 1 --save-dir '$TMP/ort$level' >/dev/null && '$PY' '$TMP/same.py' '$TMP/ref' '$TMP/ort$level'"
  fi
  tout="$TMP/target_O$level.onnx"
  expect "target_O${level}_writes" 0 "at level $level for cpu,ref" -- "$FERRY" optimize "$M" "$tout" --level "$level" --target cpu,ref
  expect "target_O${level}_reloads_same_outputs" 0 'max abs diff' -- bash -c "
    '$FERRY' run '$tout' --input 'input=$IN' --output-dir '$TMP/t$level' >/dev/null && '$PY' '$TMP/same.py' '$TMP/ref' '$TMP/t$level'"
done
expect target_fuses 0 'fuse_conv_add +2 +yes .*-3 Add, -3 Conv, \+3 ai\.ferry::FusedConv' -- \
  "$FERRY" optimize "$M" "$TMP/t.onnx" --target cpu,ref --level 2
expect portable_makes_no_ferry_ops 0 '^0$' -- bash -c "'$FERRY' optimize '$M' '$TMP/p.onnx' | grep -c ai.ferry; true"
expect target_uses_ferry_domain 0 'ai.ferry' -- "$PY" -c "
import onnx; print({o.domain for o in onnx.load('$TMP/target_O3.onnx').opset_import})"

# --external-data: OUT.data beside OUT, and the model reloads.
expect external_data_written 0 "external data: $TMP/ext.onnx.data \([0-9]+ initializers" -- \
  "$FERRY" optimize "$M" "$TMP/ext.onnx" --external-data
expect external_data_file 0 '^ok$' -- bash -c "[ -s '$TMP/ext.onnx.data' ] && echo ok"
expect external_data_reloads 0 'max abs diff' -- bash -c "
  '$FERRY' run '$TMP/ext.onnx' --input 'input=$IN' --output-dir '$TMP/ext' >/dev/null && '$PY' '$TMP/same.py' '$TMP/ref' '$TMP/ext'"
expect external_data_checker 0 'checker ok' -- "$PY" "$TMP/check.py" "$TMP/ext.onnx"

# The report as JSON; IR dumps.
expect json_report 0 '^nodes 23 -> 14, fuse_conv_add ai.ferry::FusedConv \+3$' -- bash -c "
  '$FERRY' optimize '$M' '$TMP/j.onnx' --target cpu,ref --json | '$PY' -c '
import json, sys
j = json.load(sys.stdin)
run = [p for p in j[\"passes\"] if p[\"name\"] == \"fuse_conv_add\"][0]
print(\"nodes %d -> %d, fuse_conv_add ai.ferry::FusedConv +%d\" % (j[\"nodes_before\"], j[\"nodes_after\"], run[\"op_delta\"][\"ai.ferry::FusedConv\"]))'"
expect dump_ir 0 'ai\.ferry::FusedConv' -- bash -c "'$FERRY' optimize '$M' '$TMP/d.onnx' --target cpu,ref --level 2 --dump-ir '$TMP/d.ir' >/dev/null && cat '$TMP/d.ir'"
expect dump_ir_each 0 '^00_input.ir 01_fuse_conv_add.ir 02_fuse_conv_activation.ir$' -- bash -c "
  '$FERRY' optimize '$M' '$TMP/e.onnx' --target cpu,ref --level 2 --dump-ir-each '$TMP/each' >/dev/null && echo \$(ls '$TMP/each')"
expect dump_ir_each_input_unfused 0 '^0$' -- bash -c "grep -c 'ai.ferry' '$TMP/each/00_input.ir'; true"

# --shape: a symbolic input becomes static in the written model.
"$PY" -c "
import onnx
from onnx import helper, TensorProto as T
g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g',
                      [helper.make_tensor_value_info('x', T.FLOAT, ['N', 4])],
                      [helper.make_tensor_value_info('y', T.FLOAT, ['N', 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, '$TMP/sym.onnx')"
expect shape_fixes_symbolic_dims 0 '^\[2, 4\] \[2, 4\]$' -- bash -c "
  '$FERRY' optimize '$TMP/sym.onnx' '$TMP/sym_out.onnx' --shape x=2,4 >/dev/null && '$PY' -c '
import onnx
m = onnx.load(\"$TMP/sym_out.onnx\")
dims = lambda v: [d.dim_value for d in v.type.tensor_type.shape.dim]
print(dims(m.graph.input[0]), dims(m.graph.output[0]))'"
expect shape_static_matching_ok 0 'nodes: 23' -- "$FERRY" optimize "$M" "$TMP/s.onnx" --shape input=1,3,32,32

# The pass list.
expect list_passes 0 '^fuse_conv_add +2 ' -- "$FERRY" optimize --list-passes
expect list_passes_md 0 '^\| [0-9]+ \| `blocked_layout` \| 3 \|' -- "$FERRY" optimize --list-passes --md

# ferry run: --opt-level (the long -O) and --dump-ir (the graph the session optimized).
expect run_opt_level 0 'placement on ref: 23 nodes, 23 native' -- "$FERRY" run "$M" --random --backends ref --report --opt-level 0
expect run_dump_ir 0 'ai\.ferry::' -- bash -c "'$FERRY' run '$M' --random --dump-ir '$TMP/run.ir' >/dev/null && cat '$TMP/run.ir'"
expect run_dump_ir_O0 0 '^0$' -- bash -c "'$FERRY' run '$M' --random -O 0 --dump-ir '$TMP/run0.ir' >/dev/null && { grep -c ai.ferry '$TMP/run0.ir'; true; }"

# --opset: the model converted (before the passes) reloads with the same outputs; below 18 it passes the checker.
for opset in 13 21; do
  expect "opset_${opset}_writes" 0 "opset 17 -> $opset: " -- "$FERRY" optimize "$M" "$TMP/op$opset.onnx" --opset "$opset"
  expect "opset_${opset}_imports" 0 "^$opset$" -- "$PY" -c "
import onnx; print([o.version for o in onnx.load('$TMP/op$opset.onnx').opset_import if o.domain in ('', 'ai.onnx')][0])"
  expect "opset_${opset}_same_outputs" 0 'max abs diff' -- bash -c "
    '$FERRY' run '$TMP/op$opset.onnx' --input 'input=$IN' --output-dir '$TMP/op$opset' >/dev/null && '$PY' '$TMP/same.py' '$TMP/ref' '$TMP/op$opset'"
done
expect opset_13_checker 0 'checker ok' -- "$PY" "$TMP/check.py" "$TMP/op13.onnx"
"$PY" -c "
import onnx
from onnx import helper, TensorProto as T
g = helper.make_graph([helper.make_node('ReduceSum', ['x', 'axes'], ['y'], name='sum')], 'g',
                      [helper.make_tensor_value_info('x', T.FLOAT, [2, 3]), helper.make_tensor_value_info('axes', T.INT64, [1])],
                      [helper.make_tensor_value_info('y', T.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
m.ir_version = 7
onnx.save(m, '$TMP/dyn_axes.onnx')"
expect opset_names_unconvertible_node 2 "node 'sum' \(ReduceSum\): cannot be expressed in opset 12: its axes come from a non-constant input" -- \
  "$FERRY" optimize "$TMP/dyn_axes.onnx" "$TMP/x.onnx" --opset 12
expect opset_out_of_range 2 'converts between opsets 7\.\.' -- "$FERRY" optimize "$M" "$TMP/x.onnx" --opset 5

# Bad inputs: a message naming the problem, exit 1 (model/file) or 2 (usage), never a crash.
expect missing_file 1 "model '$TMP/missing.onnx': no such file" -- "$FERRY" optimize "$TMP/missing.onnx" "$TMP/x.onnx"
printf 'garbage' >"$TMP/garbage.onnx"
expect garbage_model 1 'InvalidModel.*garbage.onnx' -- "$FERRY" optimize "$TMP/garbage.onnx" "$TMP/x.onnx"
expect shape_unknown_input 2 "no input 'nope' \(its inputs: input float32\[1,3,32,32\]\)" -- \
  "$FERRY" optimize "$M" "$TMP/x.onnx" --shape nope=1,2
expect shape_wrong_rank 2 "input 'input': expected rank 4 .* got 2 dims" -- "$FERRY" optimize "$M" "$TMP/x.onnx" --shape input=1,2
expect shape_static_disagrees 2 "input 'input': expected dimension 2 to be 32 .* got 64" -- \
  "$FERRY" optimize "$M" "$TMP/x.onnx" --shape input=1,3,64,64
expect shape_malformed 2 'bad dimension' -- "$FERRY" optimize "$M" "$TMP/x.onnx" --shape input=1xAx3
expect level_out_of_range 2 'level' -- "$FERRY" optimize "$M" "$TMP/x.onnx" --level 7
expect unknown_pass 2 "unknown pass 'nosuchpass'" -- "$FERRY" optimize "$M" "$TMP/x.onnx" --disable nosuchpass
expect unknown_target 2 "unknown backend 'gpu9'" -- "$FERRY" optimize "$M" "$TMP/x.onnx" --target gpu9
expect missing_out 2 'expected IN and OUT' -- "$FERRY" optimize "$M"
expect md_without_list 2 '--md goes with --list-passes' -- "$FERRY" optimize "$M" "$TMP/x.onnx" --md
expect unwritable_out 1 "cannot write model to '$TMP/no/such/dir/x.onnx'" -- "$FERRY" optimize "$M" "$TMP/no/such/dir/x.onnx"
expect disabled_pass_skipped 0 '^  nodes: 23 -> 20$' -- \
  "$FERRY" optimize "$M" "$TMP/x.onnx" --target cpu,ref --level 2 --disable fuse_conv_activation

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
