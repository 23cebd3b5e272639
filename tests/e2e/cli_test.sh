#!/usr/bin/env bash
# End-to-end tests of the `ferry` CLI: outputs, files written, exit codes (DESIGN.md: 0 ok, 1 error, 2 usage).
# Usage: cli_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

M="$ROOT/models/quickstart_cnn.onnx"
expect run_with_input 0 'logits: float32 \[1,10\]  min' -- \
  "$FERRY" run "$M" --input "input=$ROOT/models/quickstart_cnn_input.npy" --output-dir "$TMP/out"
expect output_matches_pytorch 0 'max abs diff' -- /usr/bin/python3 -c "
import numpy as np, sys
a = np.load('$TMP/out/logits.npy'); b = np.load('$ROOT/models/quickstart_cnn_expected.npy')
d = float(np.abs(a - b).max()); print('max abs diff', d); sys.exit(0 if d < 1e-4 else 1)"
expect run_repeat_reports_median 0 'runs 3: first [0-9.]+ ms, then median [0-9.]+ ms, p90 [0-9.]+ ms over 2 runs' -- "$FERRY" run "$M" --random --seed 1 --repeat 3
expect run_json 0 '"latency_ms"' -- "$FERRY" run "$M" --random --json
# --lockstep: "ready", then one run (and one latency line) per line read on stdin, then the summary.
expect run_lockstep 0 '^ready [0-9.]+ [0-9.]+ [0-9.]+ runs=3$' -- bash -c "printf 'a\nb\nc\n' | '$FERRY' run '$M' --random \
  --lockstep --json | /usr/bin/python3 -c '
import json, sys
lines = sys.stdin.read().split(chr(10))
j = json.loads(chr(10).join(lines[4:]))
assert all(abs(float(x) - y) < 1e-5 for x, y in zip(lines[1:4], j[\"latencies_ms\"], strict=True)), lines[:4]
print(lines[0], *lines[1:4], \"runs=%d\" % j[\"runs\"])'"
# The first lock-step run is the warm-up and stays out of the profile, as with --repeat.
expect run_lockstep_profile_skips_warmup 0 'profile: median of 2 runs' -- \
  bash -c "printf 'a\nb\nc\n' | '$FERRY' run '$M' --random --lockstep --profile-summary"
expect run_lockstep_no_steps 1 '--lockstep: standard input ended before the first run was asked for' -- \
  bash -c "'$FERRY' run '$M' --random --lockstep </dev/null"
expect run_report 0 'placement on cpu,ref: [0-9]+ nodes, [0-9]+ native, 0 fallback, 0 pinned' -- "$FERRY" run "$M" --random --report
expect run_report_verbose 0 "-> cpu \[native\] native on cpu" -- "$FERRY" run "$M" --random --report -v
expect run_report_json 0 '^segments 1 copies 0$' -- bash -c "'$FERRY' run '$M' --random --report --json | /usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin)[\"placement\"]; print(\"segments\", len(p[\"segments\"]), \"copies\", p[\"summary\"][\"copies_per_run\"])'"
expect run_pin 0 '[0-9]+ pinned' -- "$FERRY" run "$M" --random --report --pin Conv=ref
expect run_pin_no_match 1 "--pin Nope=ref: the model has no node named 'Nope'" -- "$FERRY" run "$M" --random --pin Nope=ref
expect run_pin_bad_backend 2 "ferry run: --pin Conv=gpu: unknown backend 'gpu'" -- "$FERRY" run "$M" --random --pin Conv=gpu
expect run_pin_malformed 2 "expected NODE_OR_OP=BACKEND" -- "$FERRY" run "$M" --random --pin Conv
expect run_no_fallback_ok 0 'logits' -- "$FERRY" run "$M" --random --no-fallback
expect run_ref_only 0 'placement on ref: 23 nodes, 23 native' -- "$FERRY" run "$M" --random --backends ref --report -O 0
expect run_ref_only_fused 0 'ai.ferry::FusedConv' -- "$FERRY" run "$M" --random --backends ref --report -v
expect run_level_bad 2 'level' -- "$FERRY" run "$M" --random -O 4
expect run_disable_pass_unknown 2 "ferry run: --disable-pass: unknown pass 'nope'" -- "$FERRY" run "$M" --random --disable-pass nope
expect run_profile_summary 0 'profile: median of 2 runs' -- "$FERRY" run "$M" --random --repeat 3 --profile-summary
expect run_profile_summary_backend 0 ' cpu +/stem/stem.0/Conv \(ai.ferry::BlockedConv\)' -- "$FERRY" run "$M" --random --profile-summary --profile-top 0
expect run_profile_json 0 '"by_op"' -- "$FERRY" run "$M" --random --profile-summary --json
expect run_profile_trace 0 'profile trace of 2 runs written to .*t.json' -- \
  "$FERRY" run "$M" --random --repeat 3 --profile "$TMP/t.json" --profile-summary
expect run_profile_trace_valid 0 '^events ok$' -- /usr/bin/python3 -c "
import json, sys
t = json.load(open('$TMP/t.json'))
ev = t['traceEvents']
runs = [e for e in ev if e.get('cat') == 'run']
steps = [e for e in ev if e['ph'] == 'X' and e.get('cat') != 'run']
assert len(runs) == 2 and steps and len(steps) % 2 == 0, (len(runs), len(steps))
for e in steps:
    a = e['args']
    assert e['dur'] >= 0 and a['backend'] in ('cpu', 'ref', 'copy'), e
    assert {'op', 'node', 'graph', 'inputs', 'outputs', 'input_bytes', 'output_bytes'} <= set(a), e
    r = runs[a['run'] - 1]
    assert r['ts'] <= e['ts'] and e['ts'] + e['dur'] <= r['ts'] + r['dur'], (e, r)
assert any(e['ph'] == 'M' and e['name'] == 'process_name' for e in ev)
print('events ok')"
expect run_profile_trace_json 0 '"profile_trace"' -- "$FERRY" run "$M" --random --profile "$TMP/t2.json" --json
expect run_profile_needs_file 2 'profile' -- "$FERRY" run "$M" --random --profile
expect run_profile_unwritable 1 "cannot open '$TMP/no/such/dir/t.json'" -- "$FERRY" run "$M" --random --profile "$TMP/no/such/dir/t.json"
expect check_html_profile 0 'HTML report written' -- "$FERRY" check "$M" --html "$TMP/p.html" --profile "$TMP/t.json"
expect check_html_profile_overlay 0 'time-legend' -- grep -o 'time-legend' "$TMP/p.html"
expect check_html_profile_fused 0 'fused into /stem/stem.0/Conv' -- grep -o 'fused into /stem/stem.0/Conv' "$TMP/p.html"
# A trace records its model's fingerprint: one of another model is refused, naming both.
OTHER="$ROOT/../shared/onnx-tests/node/test_abs/model.onnx"
expect check_profile_of_another_model 1 "profile trace '.*t.json' was recorded on another model \(fnv1a64:[0-9a-f]{16}:[0-9]+\), \
not on '.*test_abs/model.onnx' \(fnv1a64:" -- "$FERRY" check "$OTHER" --html "$TMP/p3.html" --profile "$TMP/t.json"
expect run_profile_records_the_model 0 '^fnv1a64:[0-9a-f]{16}:[0-9]+$' -- /usr/bin/python3 -c "
import json; print(json.load(open('$TMP/t.json'))['otherData']['model'])"
printf '{"traceEvents": [' >"$TMP/bad_trace.json"
expect check_profile_bad_trace 1 "profile trace '.*bad_trace.json': not valid JSON" -- \
  "$FERRY" check "$M" --html "$TMP/p2.html" --profile "$TMP/bad_trace.json"
expect check_profile_missing_trace 1 "profile trace '.*missing.json': cannot open" -- \
  "$FERRY" check "$M" --html "$TMP/p2.html" --profile "$TMP/missing.json"
expect check_profile_needs_html 2 'give --html too' -- "$FERRY" check "$M" --profile "$TMP/t.json"
# Memory: the prediction, the limit as a gate, the arena measured by runs.
expect check_memory 0 'activation arena +[0-9.]+ [KM]iB  lower bound' -- "$FERRY" check "$M" --memory
expect check_memory_json 0 '^arena ok$' -- bash -c "'$FERRY' check '$M' --memory --json | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin)[\"memory\"]; print(\"arena ok\" if m[\"arena_bytes\"] >= m[\"lower_bound_bytes\"] > 0 and m[\"total_bytes\"] > m[\"weights_bytes\"] else m)'"
expect check_memory_limit 3 'CHECK FAILED: predicted memory .* exceeds --memory-limit 1.0 KiB \(weights' -- "$FERRY" check "$M" --memory-limit 1K
expect check_memory_limit_ok 0 'total' -- "$FERRY" check "$M" --memory-limit 1G
expect check_memory_limit_bad 2 "--memory-limit: expected a positive size" -- "$FERRY" check "$M" --memory-limit lots
expect run_memory_arena_json 0 '^planned$' -- bash -c "'$FERRY' run '$M' --random --repeat 2 --json | /usr/bin/python3 -c 'import json,sys; a=json.load(sys.stdin)[\"memory\"][\"arenas\"]; print(\"planned\" if len(a) == 1 and a[0][\"arena_bytes\"] >= a[0][\"lower_bound_bytes\"] > 0 else a)'"
expect run_no_memory_arena 0 '^none$' -- bash -c "'$FERRY' run '$M' --random --repeat 2 --no-memory-arena --json | /usr/bin/python3 -c 'import json,sys; print(\"none\" if not json.load(sys.stdin)[\"memory\"][\"arenas\"] else \"planned\")'"
expect run_random_is_seeded 0 '^same$' -- bash -c "a=\$('$FERRY' run '$M' --random --seed 7 --json | grep -A8 logits | grep mean); b=\$('$FERRY' run '$M' --random --seed 7 --json | grep -A8 logits | grep mean); [ \"\$a\" = \"\$b\" ] && echo same"
expect run_pb_input 0 'y: float32 \[3,4,5\]' -- \
  "$FERRY" run "$ROOT/../shared/onnx-tests/node/test_abs/model.onnx" \
  --input "x=$ROOT/../shared/onnx-tests/node/test_abs/test_data_set_0/input_0.pb"
expect usage_no_model 2 'model' -- "$FERRY" run
expect usage_unknown_flag 2 'nope' -- "$FERRY" run "$M" --nope
expect missing_model_file 1 'no such file' -- "$FERRY" run "$TMP/missing.onnx" --random
printf 'garbage' >"$TMP/garbage.onnx"
expect garbage_model 1 'InvalidModel.*garbage.onnx' -- "$FERRY" run "$TMP/garbage.onnx" --random
expect wrong_input_name 2 "ferry run: --input: the model has no input 'nope' \(inputs: input\)" -- "$FERRY" run "$M" --input "nope=$ROOT/models/quickstart_cnn_input.npy"
expect missing_input 2 "ferry run: input 'input' has no value: give --input input=FILE or use --random" -- "$FERRY" run "$M"
expect bad_shape_flag 2 "ferry run: --shape input: bad dimension" -- "$FERRY" run "$M" --random --shape input=1xAx3
# A NAME given twice in --input, --shape, --range (or compare's --per-output) is a usage error naming it, in
# every command taking them: which value would win is not for the command to guess.
IN="$ROOT/models/quickstart_cnn_input.npy"
expect run_input_twice 2 "ferry run: --input input is given twice \('$IN' and '$TMP/other.npy'\)" -- \
  "$FERRY" run "$M" --input "input=$IN" --input "input=$TMP/other.npy"
expect run_shape_twice 2 "ferry run: --shape input is given twice \('1x3x32x32' and '2x3x32x32'\)" -- \
  "$FERRY" run "$M" --random --shape input=1x3x32x32 --shape input=2x3x32x32
expect run_range_twice 2 "ferry run: --range input is given twice \('0,1' and '-1,1'\)" -- \
  "$FERRY" run "$M" --random --range input=0,1 --range input=-1,1
expect run_two_inputs_once_each 0 'logits: float32 \[1,10\]' -- "$FERRY" run "$M" --input "input=$IN" --range input=0,1
expect compare_shape_twice 2 "ferry compare: --shape input is given twice" -- \
  "$FERRY" compare "$M" --shape input=1x3x32x32 --shape input=1x3x32x32
expect compare_range_twice 2 "ferry compare: --range input is given twice" -- \
  "$FERRY" compare "$M" --range input=0,1 --range input=0,2
expect compare_per_output_twice 2 "ferry compare: --per-output logits is given twice" -- \
  "$FERRY" compare "$M" --per-output logits=1e-3 --per-output logits=1e-2
expect check_shape_twice 2 "ferry check: --shape input is given twice" -- \
  "$FERRY" check "$M" --shape input=1x3x32x32 --shape input=2x3x32x32
expect unknown_backend 2 "ferry run: --backends: unknown backend 'gpu' \\(available: " -- "$FERRY" run "$M" --random --backend gpu

# Usage errors exit 2 in every verb that takes them (DESIGN.md), before the model is read.
expect run_bad_isa 2 "ferry run: .*nope" -- "$FERRY" run "$M" --random --isa nope
expect run_missing_model_unknown_backend 2 "unknown backend 'gpu'" -- "$FERRY" run "$TMP/missing.onnx" --backends gpu
expect bench_unknown_backend 2 "ferry bench: --backends: unknown backend 'gpu'" -- "$FERRY" bench "$M" --backends gpu
expect bench_unknown_pass 2 "ferry bench: --disable-pass: unknown pass 'nope'" -- "$FERRY" bench "$M" --disable-pass nope
expect compare_unknown_backend 2 "ferry compare: --b 'gpu': unknown backend 'gpu'" -- "$FERRY" compare "$M" --b gpu
expect run_output_dir_blocked 1 "InvalidArgument.*--output-dir: cannot create the directory '$M/out'" -- \
  "$FERRY" run "$M" --random --output-dir "$M/out"
# The session-creation time is printed, as with --json ("session_ms").
expect run_prints_session_time 0 '^session created in [0-9.]+ ms$' -- "$FERRY" run "$M" --random
# --repeat: the first (cold) run apart, the median and p90 over the others.
expect run_json_first_apart 0 '^warm 2 of 3$' -- bash -c "'$FERRY' run '$M' --random --repeat 3 --json | \
  /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); l=j[\"latency_ms\"]; w=sorted(j[\"latencies_ms\"][1:])
assert l[\"first\"] == j[\"latencies_ms\"][0] and l[\"median\"] == w[0] and l[\"p90\"] == w[1], (l, w)
print(\"warm\", l[\"warm_runs\"], \"of\", j[\"runs\"])'"
# --shape and --batch fix the model's free dims at session creation, as `ferry optimize --shape` does: the Shape
# node folds into a constant.
/usr/bin/python3 - "$TMP/dyn.onnx" <<'PYEOF'
import sys
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
shape = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Shape", ["y"], ["s"])]
g = helper.make_graph(nodes, "dyn", [x], [y, shape])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PYEOF
expect run_shape_fixes_the_graph 0 '^folded$' -- bash -c "'$FERRY' run '$TMP/dyn.onnx' --random --shape x=3x4 \
  --dump-ir '$TMP/dyn_shape.ir' >/dev/null && ! grep -q 'Shape(' '$TMP/dyn_shape.ir' && echo folded"
expect run_batch_fixes_the_graph 0 'y: float32 \[5,4\]' -- bash -c "'$FERRY' run '$TMP/dyn.onnx' --random --batch 5 \
  --dump-ir '$TMP/dyn_batch.ir' && ! grep -q 'Shape(' '$TMP/dyn_batch.ir'"
# (The control: without them the graph keeps its Shape node, and random inputs cannot be sized.)
expect run_without_shape_keeps_symbolic 0 '^symbolic graph$' -- bash -c "'$FERRY' run '$TMP/dyn.onnx' --random \
  --dump-ir '$TMP/dyn_none.ir' 2>&1 | grep -q 'is symbolic; give --shape x=DIMS or --batch N' && \
  grep -q 'Shape(' '$TMP/dyn_none.ir' && echo symbolic graph"
expect run_batch_on_fixed_batch 2 "ferry run: --batch 2: no input has a symbolic leading dim: the \
model's batch is fixed \(inputs 'input' \[1,3,32,32\]\)" -- "$FERRY" run "$M" --random --batch 2
expect run_shape_against_static_dim 2 "ferry run: --shape input=2x3x32x32: dimension 0 is 1 in the model \
\(\[1,3,32,32\]\), got 2" -- "$FERRY" run "$M" --random --shape input=2x3x32x32
expect run_shape_no_such_input 2 "ferry run: --shape nope=1x2: the model has no input 'nope' \(inputs 'input' \
\[1,3,32,32\]\)" -- "$FERRY" run "$M" --random --shape nope=1x2
expect run_shape_wrong_rank 2 "ferry run: --shape input=1x3x32: expected rank 4" -- \
  "$FERRY" run "$M" --random --shape input=1x3x32
# --isa and FERRY_ISA cap oneDNN's code too (its verbose log names each primitive's implementation): with AVX but
# without AVX2, no oneDNN primitive may run AVX2 or AVX-512 code.
expect run_isa_caps_onednn 0 '^capped [1-9][0-9]*$' -- bash -c "ONEDNN_VERBOSE=1 '$FERRY' run '$M' --random -O 0 \
  --isa sse4.1,avx | grep '^onednn_verbose,exec,cpu' >'$TMP/verbose_isa.txt'; ! grep -qE 'avx2|avx512' \
  '$TMP/verbose_isa.txt' && echo capped \$(wc -l <'$TMP/verbose_isa.txt')"
expect ferry_isa_caps_onednn 0 '^capped [1-9][0-9]*$' -- bash -c "FERRY_ISA=sse4.1,avx ONEDNN_VERBOSE=1 '$FERRY' run \
  '$M' --random -O 0 | grep '^onednn_verbose,exec,cpu' >'$TMP/verbose_env.txt'; ! grep -qE 'avx2|avx512' \
  '$TMP/verbose_env.txt' && echo capped \$(wc -l <'$TMP/verbose_env.txt')"
# Both: the session's target is this CPU narrowed by FERRY_ISA, then by --isa; so is oneDNN's cap.
expect isa_and_ferry_isa_intersect 0 '^capped [1-9][0-9]*$' -- bash -c "FERRY_ISA=sse4.1,avx ONEDNN_VERBOSE=1 \
  '$FERRY' run '$M' --random -O 0 --isa sse4.1,avx,avx2,fma | grep '^onednn_verbose,exec,cpu' >'$TMP/verbose_both.txt'; \
  ! grep -qE 'avx2|avx512' '$TMP/verbose_both.txt' && echo capped \$(wc -l <'$TMP/verbose_both.txt')"
expect check_names_the_onednn_isa 0 'isa sse4.1,avx; oneDNN kernels avx \([1-9][0-9]* nodes\)$' -- \
  "$FERRY" check "$M" --isa sse4.1,avx
expect check_onednn_isa_json 0 '^avx2$' -- bash -c "'$FERRY' check '$M' --target-isa avx2,fma --json | \
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[\"target\"][\"onednn_isa\"])'"
# ... and per node: a node whose kernel runs in oneDNN names the ISA it uses there; Ferry's own kernels none.
expect check_node_onednn_isa_json 0 '^Conv avx$' -- bash -c "'$FERRY' check '$M' --target-isa sse4.1,avx --json | \
  /usr/bin/python3 -c 'import json,sys; n=json.load(sys.stdin)[\"nodes\"]; \
  print(*sorted({(x[\"op\"], x[\"onednn_isa\"]) for x in n if x[\"onednn_isa\"]})[0]); \
  assert all(x[\"onednn_isa\"] is None for x in n if x[\"op\"] == \"Relu\")'"
# ferry ops: a kernel running in oneDNN says so, with the ISA oneDNN uses on this host (FERRY_ISA narrows it).
expect ops_names_onednn_isa 0 'runs on oneDNN \(its avx code here\)' -- bash -c "FERRY_ISA=sse4.1,avx '$FERRY' ops \
  --op Conv --backend cpu"
expect ops_onednn_isa_json 0 '^oneDNN avx$' -- bash -c "FERRY_ISA=sse4.1,avx '$FERRY' ops --op MatMul --backend cpu \
  --json | /usr/bin/python3 -c 'import json,sys; k=json.load(sys.stdin)[\"ops\"][0][\"support\"][0][\"kernels\"][0]; \
  print(k[\"library\"], k[\"library_isa\"])'"
# ferry help [COMMAND]: the app's help, or a command's.
expect help_lists_commands 0 'run .*run a model' -- "$FERRY" help
expect help_command 0 '--output-dir' -- "$FERRY" help run
expect help_unknown_command 2 "ferry help: no command 'nope' \(commands: run, ops" -- "$FERRY" help nope

# ferry ops: the support matrix from the registries.
expect ops_relu_ranges 0 'ref: 1-5, 6-12, 13, 14\+ \(all versions up to 14\)' -- "$FERRY" ops --op Relu
expect ops_json_parses 0 '^Relu ref 1$' -- bash -c "'$FERRY' ops --op Relu --json | /usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); o = j[\"ops\"][0]; print(o[\"op\"], o[\"support\"][0][\"backend\"], o[\"support\"][0][\"kernels\"][0][\"since\"])'"
expect ops_unknown_backend 2 "unknown backend 'nope'" -- "$FERRY" ops --backend nope
expect ops_no_match 1 'no op matches --op NoSuchOp' -- "$FERRY" ops --op NoSuchOp
expect ops_json_md_exclusive 2 'excludes' -- "$FERRY" ops --json --md

# ferry check: the report is the product (exit 0 even when not runnable); gates exit 3; unreadable model 1.
/usr/bin/python3 -c "
import onnx
from onnx import helper, TensorProto as T
nodes = [helper.make_node('Relu', ['x'], ['r'], name='relu'),
         helper.make_node('Foo', ['r'], ['y'], name='foo', domain='com.example')]
g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('x', T.FLOAT, ['N', 3])],
                      [helper.make_tensor_value_info('y', T.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('com.example', 1)])
m.ir_version = 8
onnx.save(m, '$TMP/custom.onnx')"
expect check_runnable 0 'RUNNABLE: 23 native on cpu' -- "$FERRY" check "$M"
expect check_gates_pass 0 'problems: none' -- "$FERRY" check "$M" --fail-on fallback --max-fallback 0
expect check_json_parses 0 '^nodes 23 runnable True$' -- bash -c "'$FERRY' check '$M' --json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(\"nodes\", len(d[\"nodes\"]), \"runnable\", d[\"summary\"][\"runnable\"])'"
expect check_unsupported_reported 0 'plugin that implements com.example::Foo \(opset 1\) with --plugin' -- "$FERRY" check "$TMP/custom.onnx"
expect check_fail_on_unsupported 3 'CHECK FAILED: 1 node\(s\) unsupported' -- "$FERRY" check "$TMP/custom.onnx" --fail-on unsupported
expect check_fail_on_fallback 3 'CHECK FAILED' -- "$FERRY" check "$TMP/custom.onnx" --fail-on fallback
expect check_max_fallback 3 'fallback ratio 50.0% of nodes exceeds --max-fallback 10%' -- \
  "$FERRY" check "$TMP/custom.onnx" --max-fallback 10
expect check_max_fallback_ok 0 'NOT RUNNABLE' -- "$FERRY" check "$TMP/custom.onnx" --max-fallback 50
expect check_json_gate 3 '"exit_code": 3' -- "$FERRY" check "$TMP/custom.onnx" --json --fail-on unsupported
expect check_shape 0 'float32\[2,3\]' -- bash -c "'$FERRY' check '$TMP/custom.onnx' --shape x=2x3 --json | grep -m1 float32"
expect check_shape_unknown_input 2 "no input 'nope'" -- "$FERRY" check "$TMP/custom.onnx" --shape nope=2x3
expect check_shape_wrong_rank 2 "rank 2" -- "$FERRY" check "$TMP/custom.onnx" --shape x=2x3x4
expect check_unknown_backend 2 "unknown backend 'gpu'" -- "$FERRY" check "$M" --backends gpu
expect check_bad_isa 2 "unknown ISA 'avx9'" -- "$FERRY" check "$M" --isa avx9
expect check_bad_fail_on 2 'fail-on' -- "$FERRY" check "$M" --fail-on sometimes
expect check_garbage_model 1 'InvalidModel.*garbage.onnx' -- "$FERRY" check "$TMP/garbage.onnx"
expect check_missing_model 1 'no such file' -- "$FERRY" check "$TMP/missing.onnx"
expect check_html 0 'HTML report written' -- "$FERRY" check "$M" --html "$TMP/check.html"
expect check_html_file 0 '^ok$' -- bash -c "grep -q '<html' '$TMP/check.html' && echo ok"

# The model-file boundary (issue 22). Only regular files are read, and refusing anything else never blocks: a
# FIFO as the model, its external data or an --input file hung run and check forever (`timeout 20` turns such a
# regression into a failure). check validates external data as run does, even for weights it does not load; a
# node reading its own output is a cycle; a declared output type the graph does not produce and an opset Ferry
# does not know are refused, whatever the optimizer would fold away.
mkdir -p "$TMP/bad"
/usr/bin/python3 -c "
import onnx
from onnx import helper, TensorProto as T
def save(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, 'g', inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    open('$TMP/bad/' + name, 'wb').write(m.SerializeToString())
x = helper.make_tensor_value_info('x', T.FLOAT, [2048])
y = helper.make_tensor_value_info('y', T.FLOAT, [2048])
for name, location in [('ext_fifo.onnx', 'pipe.bin'), ('ext_passwd.onnx', '/etc/passwd'),
                       ('ext_zero.onnx', 'zero.bin')]:
    w = onnx.TensorProto(name='w', data_type=T.FLOAT, dims=[2048], data_location=T.EXTERNAL)
    w.external_data.add(key='location', value=location)
    save(name, [helper.make_node('Add', ['x', 'w'], ['y'], name='add')], [x], [y], [w])
save('self_loop.onnx', [helper.make_node('Identity', ['y'], ['y'], name='self')], [x], [y])
save('out_type.onnx', [helper.make_node('Relu', ['x'], ['y'], name='relu')], [x],
     [helper.make_tensor_value_info('y', T.INT64, [2048])])
save('opset_huge.onnx', [helper.make_node('Shape', ['x'], ['s'], name='shape')], [x],
     [helper.make_tensor_value_info('s', T.INT64, [1])], opset=1000000)"
mkfifo "$TMP/bad/pipe.bin" "$TMP/bad/pipe.onnx" "$TMP/bad/pipe.npy" "$TMP/bad/pipe.pb"
ln -s /dev/zero "$TMP/bad/zero.bin"
expect run_external_fifo 1 "initializer 'w'.*pipe.bin' is a FIFO, not a regular file" -- \
  timeout 20 "$FERRY" run "$TMP/bad/ext_fifo.onnx" --random
expect check_external_fifo 1 "initializer 'w'.*pipe.bin' is a FIFO, not a regular file" -- \
  timeout 20 "$FERRY" check "$TMP/bad/ext_fifo.onnx"
expect run_model_fifo 1 "pipe.onnx': is a FIFO, not a regular file" -- timeout 20 "$FERRY" run "$TMP/bad/pipe.onnx" --random
expect check_model_fifo 1 "pipe.onnx': is a FIFO, not a regular file" -- timeout 20 "$FERRY" check "$TMP/bad/pipe.onnx"
expect optimize_model_fifo 1 "pipe.onnx': is a FIFO, not a regular file" -- \
  timeout 20 "$FERRY" optimize "$TMP/bad/pipe.onnx" "$TMP/bad/optimized.onnx"
expect optimize_model_missing 1 "nothing.onnx': no such file" -- "$FERRY" optimize "$TMP/bad/nothing.onnx" "$TMP/bad/o.onnx"
expect run_input_npy_fifo 1 "input 'input': npy file '.*pipe.npy': is a FIFO, not a regular file" -- \
  timeout 20 "$FERRY" run "$M" --input "input=$TMP/bad/pipe.npy"
expect run_input_pb_fifo 1 "input 'input': '.*pipe.pb' is a FIFO, not a regular file" -- \
  timeout 20 "$FERRY" run "$M" --input "input=$TMP/bad/pipe.pb"
expect check_external_passwd 1 "external data path '/etc/passwd' is absolute" -- "$FERRY" check "$TMP/bad/ext_passwd.onnx"
expect check_external_dev_zero 1 "'zero.bin' leaves the model's directory" -- "$FERRY" check "$TMP/bad/ext_zero.onnx"
expect run_self_loop 1 "cycle: node 'self' \(Identity\) reads its own output 'y'" -- \
  "$FERRY" run "$TMP/bad/self_loop.onnx" --random
expect check_self_loop 1 "cycle: node 'self' \(Identity\) reads its own output 'y'" -- "$FERRY" check "$TMP/bad/self_loop.onnx"
expect run_output_type 1 "graph output 'y' is declared int64\[2048\], but node 'relu' \(Relu\) produces float32" -- \
  "$FERRY" run "$TMP/bad/out_type.onnx" --random
expect check_output_type 0 "NOT RUNNABLE" -- "$FERRY" check "$TMP/bad/out_type.onnx"
expect run_opset_unknown 1 "opset 1000000 of domain 'ai.onnx' is newer than Ferry knows" -- \
  "$FERRY" run "$TMP/bad/opset_huge.onnx" --random
expect check_opset_unknown 1 "opset 1000000 of domain 'ai.onnx' is newer than Ferry knows" -- \
  "$FERRY" check "$TMP/bad/opset_huge.onnx"

# --legalize: an op the target lacks, rewritten into ops it runs (ferry check says so first). cpu's RotaryEmbedding
# kernel needs AVX2 (hardware layer), so under --isa none cpu cannot run it, while its rewrite (Gather, Unsqueeze,
# Slice, Mul, Sub, Add, Concat) has scalar kernels everywhere.
ROPE="$ROOT/../shared/onnx-tests/node/test_rotary_embedding/model.onnx"
expect check_rewrite_available 0 '1 unsupported \(1 with a rewrite available: --legalize\)' -- \
  "$FERRY" check "$ROPE" --backends cpu --isa none
expect run_unsupported_without_legalize 1 "kernel cpu.f32_rotary_embedding__avx2.23 needs avx2,fma" -- \
  "$FERRY" run "$ROPE" --random --range position_ids=0,49 --backends cpu --isa none
expect run_legalize 0 'placement on cpu: 13 nodes, 13 native' -- \
  "$FERRY" run "$ROPE" --random --range position_ids=0,49 --backends cpu --isa none --legalize --report
expect optimize_legalize_needs_target 2 '--legalize needs a --target' -- \
  "$FERRY" optimize "$ROPE" "$TMP/rope_legal.onnx" --legalize
expect optimize_legalize 0 'legalize +0 +yes .*-1 RotaryEmbedding' -- \
  "$FERRY" optimize "$ROPE" "$TMP/rope_legal.onnx" --target cpu --isa none --legalize
expect optimize_legalized_runs_on_cpu 0 'placement on cpu: 13 nodes, 13 native' -- \
  "$FERRY" run "$TMP/rope_legal.onnx" --random --range position_ids=0,49 --backends cpu --isa none --no-fallback \
  --report

# The most intra-op threads a session takes (ferry/limits.h): it runs, more than two cores' worth or not.
expect run_threads_max 0 'logits: float32 \[1,10\]' -- "$FERRY" run "$M" --random --threads 1024

# --deterministic (docs/determinism.md): needs a fixed thread count; two processes give bitwise-identical outputs.
expect run_deterministic_needs_threads 1 'deterministic mode needs a fixed thread count' -- \
  "$FERRY" run "$M" --random --deterministic
expect run_deterministic 0 'logits: float32 \[1,10\]' -- \
  "$FERRY" run "$M" --random --seed 5 --deterministic --threads 2 --repeat 2 --output-dir "$TMP/det1"
expect run_deterministic_again 0 'logits: float32 \[1,10\]' -- \
  "$FERRY" run "$M" --random --seed 5 --deterministic --threads 2 --output-dir "$TMP/det2"
expect run_deterministic_bitwise 0 '^identical$' -- \
  bash -c "cmp '$TMP/det1/logits.npy' '$TMP/det2/logits.npy' && echo identical"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
