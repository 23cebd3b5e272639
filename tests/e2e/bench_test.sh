#!/usr/bin/env bash
# End-to-end tests of `ferry bench` (docs/bench.md) on models/quickstart_cnn.onnx with its batch dim made
# symbolic: the table's knee lines, the JSON's documented fields (parsed), the CSV header and rows, the SVG chart
# (parsed as XML: root, both panels, one line per series and percentile, finite coordinates), concurrency and
# duration modes, no progress line when stderr is not a terminal, bad arguments (exit 2) or models (exit 1), and
# models that fix their batch or take scalars (benched at their own shapes).
# Usage: bench_test.sh path/to/ferry. Exit 77 (skipped) when /usr/bin/python3 lacks onnx.
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
if ! "$PY" -c 'import onnx' >/dev/null 2>&1; then
  echo "SKIP: $PY lacks onnx"
  exit 77
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

M="$ROOT/models/quickstart_cnn.onnx"
DYN="$TMP/cnn_dyn.onnx"
"$PY" -c "
import onnx
m = onnx.load('$M')
for v in list(m.graph.input) + list(m.graph.output):
    v.type.tensor_type.shape.dim[0].dim_param = 'N'
onnx.save(m, '$DYN')"

FAST=(--threads 1 --iterations 3 --warmup 1)
expect bench_table 0 'knee \(threads 1, concurrency 1\): batch [124]' -- \
  "$FERRY" bench "$DYN" --batch 1,2,4 "${FAST[@]}"
expect bench_table_header 0 'batch +threads +conc +p50 ms +p90 ms +p99 ms +mean ± std ms +inf/s +session ms +peak RSS MiB' -- \
  "$FERRY" bench "$DYN" "${FAST[@]}"
expect bench_max_latency_none 0 'best under p99 <= 0.00 ms \(threads 1, concurrency 1\): none; the lowest p99 was' -- \
  "$FERRY" bench "$DYN" --batch 1,2 "${FAST[@]}" --max-latency 0.000001
expect bench_max_latency 0 'best under p99 <= 100000.00 ms \(threads 1, concurrency 1\): batch [12],' -- \
  "$FERRY" bench "$DYN" --batch 1,2 "${FAST[@]}" --max-latency 100000

"$FERRY" bench "$DYN" --batch 1,2,4 --threads 1 --concurrency 1,2 --iterations 4 --warmup 1 --percentiles 50,99.9 \
  --max-latency 1000 --json --plot "$TMP/chart.svg" >"$TMP/b.json" 2>"$TMP/b.err"
expect bench_json_fields 0 '^json ok$' -- "$PY" -c "
import json, math
j = json.load(open('$TMP/b.json'))
for k in ('model', 'backends', 'server', 'iterations', 'duration_s', 'warmup', 'seed', 'percentiles',
          'peak_rss_scope', 'errors', 'configurations', 'analysis'):
    assert k in j, k
assert j['server'] is None and j['errors'] == 0, j
assert j['iterations'] == 4 and j['duration_s'] is None and j['percentiles'] == [50, 99.9], j
assert j['peak_rss_scope'] in ('configuration', 'process')
cs = j['configurations']
assert [(c['batch'], c['concurrency']) for c in cs] == [(1, 1), (1, 2), (2, 1), (2, 2), (4, 1), (4, 2)], cs
for c in cs:
    for k in ('batch', 'threads', 'concurrency', 'requests', 'errors', 'first_error', 'inferences', 'wall_s',
              'throughput_per_s', 'latency_ms', 'session_ms', 'session_peak_rss_bytes', 'peak_rss_bytes', 'memory'):
        assert k in c, k
    assert c['errors'] == 0 and c['first_error'] is None, c
    assert set(c['latency_ms']) == {'mean', 'stddev', 'min', 'max', 'p50', 'p99.9'}, c['latency_ms']
    assert set(c['memory']) == {'arena_bytes', 'arena_blocks', 'kernel_bytes', 'weights_bytes'}, c['memory']
    assert c['requests'] == 4 and c['inferences'] == 4 * c['batch'] and c['threads'] == 1
    assert c['throughput_per_s'] > 0 and c['peak_rss_bytes'] > 0 and c['memory']['weights_bytes'] > 0
    l = c['latency_ms']
    assert 0 < l['min'] <= l['p50'] <= l['p99.9'] <= l['max'] and l['stddev'] >= 0, l
a = j['analysis']
assert a['knee_threshold'] == 0.1 and a['latency_percentile'] == 99.9 and a['max_latency_ms'] == 1000, a
assert [(s['threads'], s['concurrency']) for s in a['series']] == [(1, 1), (1, 2)]
for s in a['series']:
    assert s['batches'] == [1, 2, 4]
    for key in ('best_throughput', 'best_under_latency'):
        assert set(s[key]) == {'batch', 'throughput_per_s', 'latency_ms'}, s
    # The knee and the best batches recomputed from the configurations (docs/bench.md's definitions).
    mine = [c for c in cs if c['concurrency'] == s['concurrency']]
    tp = [c['throughput_per_s'] for c in mine]
    knee, ref, best = 1, None, 0
    for i in range(1, 3):
        if tp[i] / tp[best] - 1 > 0.1:
            knee, ref = mine[i]['batch'], mine[best]['batch']
        if tp[i] > tp[best]:
            best = i
    k = s['knee']
    assert set(k) == {'batch', 'gain', 'over_batch', 'saturated'}, k
    assert (k['batch'], k['over_batch'], k['saturated']) == (knee, ref, knee != 4), (k, tp)
    assert (k['gain'] is None) == (ref is None)
    assert s['best_throughput']['batch'] == mine[best]['batch'], (s, tp)
    under = [c for c in mine if c['latency_ms']['p99.9'] <= 1000]
    top = max(under, key=lambda c: c['throughput_per_s'])
    assert s['best_under_latency']['batch'] == top['batch']
    assert s['best_under_latency']['latency_ms'] == top['latency_ms']['p99.9']
print('json ok')"
expect bench_no_progress_off_terminal 0 '^clean$' -- bash -c "grep -q \$'\r' '$TMP/b.err' && echo progress || echo clean"

expect bench_svg_parses 0 '^svg ok$' -- "$PY" -c "
import math, re, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
root = ET.parse('$TMP/chart.svg').getroot()
assert root.tag == ns + 'svg', root.tag
panels = {g.get('id'): g for g in root.iter(ns + 'g')}
assert {'latency', 'throughput', 'legend'} <= set(panels), panels
lines = lambda cls: [p for p in root.iter(ns + 'polyline') if p.get('class') == cls]
assert len(lines('latency-line')) == 2 * 2 and len(lines('throughput-line')) == 2  # series x percentiles
for p in root.iter(ns + 'polyline'):
    pts = [tuple(map(float, xy.split(','))) for xy in p.get('points').split()]
    assert len(pts) == 3 and all(math.isfinite(v) for xy in pts for v in xy), p.get('points')
    assert p.find(ns + 'title') is not None
for c in root.iter(ns + 'circle'):
    assert math.isfinite(float(c.get('cx'))) and math.isfinite(float(c.get('cy')))
texts = [t.text or '' for t in root.iter(ns + 'text')]
assert 'batch size' in texts and 'latency (ms)' in texts and 'throughput (inferences/s)' in texts, texts
assert 'p99.9 latency' in texts and 'threads 1, concurrency 2' in texts, texts
assert any(re.match(r'max-latency 1000 ms \(p99.9\)', t) for t in texts), texts
print('svg ok')"

"$FERRY" bench "$DYN" --batch 2 "${FAST[@]}" --plot "$TMP/one.svg" >/dev/null 2>&1
expect bench_svg_single_batch 0 '^one ok$' -- "$PY" -c "
import math, xml.etree.ElementTree as ET
root = ET.parse('$TMP/one.svg').getroot()
vals = [float(v) for e in root.iter() for k, v in e.attrib.items() if k in ('cx', 'cy', 'x1', 'x2', 'y1', 'y2')]
assert vals and all(math.isfinite(v) for v in vals)
print('one ok')"

expect bench_csv 0 '^batch,threads,concurrency,requests,inferences,wall_s,throughput_per_s,mean_ms,stddev_ms,min_ms,max_ms,p50_ms,p90_ms,p99_ms,session_ms,session_peak_rss_bytes,peak_rss_bytes,arena_bytes,arena_blocks,kernel_bytes,weights_bytes,errors$' -- \
  "$FERRY" bench "$DYN" --batch 1,2 "${FAST[@]}" --csv
expect bench_csv_rows 0 '^rows 2 cols ok$' -- bash -c "'$FERRY' bench '$DYN' --batch 1,2 --threads 1 --iterations 3 --warmup 1 --csv | $PY -c '
import csv, sys
r = list(csv.DictReader(sys.stdin))
assert all(len(x) == 22 and float(x[\"throughput_per_s\"]) > 0 and x[\"errors\"] == \"0\" for x in r)
print(\"rows\", len(r), \"cols ok\")'"
expect bench_duration 0 '"duration_s": 0.1' -- "$FERRY" bench "$DYN" --threads 1 --warmup 0 --duration 0.1 --json

# Errors: usage (exit 2) and model or input problems (exit 1), each naming what is wrong.
expect bench_batch_zero 2 '--batch: 0 is below 1' -- "$FERRY" bench "$DYN" --batch 0
expect bench_batch_word 2 "--batch: 'a' is not an integer" -- "$FERRY" bench "$DYN" --batch 1,a
expect bench_concurrency_zero 2 '--concurrency: 0 is below 1' -- "$FERRY" bench "$DYN" --concurrency 0
expect bench_percentile_bad 2 '--percentiles: 101 is not in \(0, 100\]' -- "$FERRY" bench "$DYN" --percentiles 50,101
expect bench_duration_and_iterations 2 'excludes' -- "$FERRY" bench "$DYN" --duration 1 --iterations 2
expect bench_json_and_csv 2 'excludes' -- "$FERRY" bench "$DYN" --json --csv
expect bench_missing_model 1 'no/such/model.onnx' -- "$FERRY" bench "$TMP/no/such/model.onnx" --iterations 1
expect bench_plot_unwritable 1 "--plot: cannot write '.*/no/dir/c.svg'" -- \
  "$FERRY" bench "$DYN" --iterations 1 --plot "$TMP/no/dir/c.svg"
expect bench_shape_unknown_input 2 "ferry bench: --shape: the model has no input 'nope'" -- \
  "$FERRY" bench "$DYN" --iterations 1 --shape nope=1x2
expect bench_shape_twice 2 "ferry bench: --shape input is given twice \('1x3x32x32' and '2x3x32x32'\)" -- \
  "$FERRY" bench "$DYN" --iterations 1 --shape input=1x3x32x32 --shape input=2x3x32x32
expect bench_range_twice 2 "ferry bench: --range input is given twice \('0,1' and '2,3'\)" -- \
  "$FERRY" bench "$DYN" --iterations 1 --range input=0,1 --range input=2,3
expect bench_threads_above_max 2 '--threads: 1025 is above 1024' -- "$FERRY" bench "$DYN" --threads 1,1025
expect bench_threads_negative 2 '--threads: -1 is below 0' -- "$FERRY" bench "$DYN" --threads=-1
expect bench_concurrency_above_max 2 '--concurrency: 100000 is above 1024' -- "$FERRY" bench "$DYN" --concurrency 100000

# Models whose inputs have no batch dim bench at their own shapes: the quickstart CNN as shipped (input fixed at
# 1x3x32x32), one fixed at batch 4 with a scalar input, and a symbolic batch beside a scalar (swept as usual).
expect bench_static_batch 0 'batch 1, fixed by the model: no input has a symbolic dim 0 \(input: 1x3x32x32\); --batch does not apply' -- \
  "$FERRY" bench "$M" --batch 1,2 "${FAST[@]}"
"$PY" -c "
import onnx
from onnx import helper, TensorProto as T
def save(batch, path):
    g = helper.make_graph([helper.make_node('Mul', ['x', 's'], ['y'])], 'g',
                          [helper.make_tensor_value_info('x', T.FLOAT, [batch, 3]),
                           helper.make_tensor_value_info('s', T.FLOAT, [])],
                          [helper.make_tensor_value_info('y', T.FLOAT, [batch, 3])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), path)
save(4, '$TMP/fixed4.onnx')
save('N', '$TMP/sym_scalar.onnx')"
expect bench_fixed_batch_scalar 0 '^batch 4, fixed by the model: no input has a symbolic dim 0 \(x: 4x3, s: scalar\); --batch does not apply$' -- \
  "$FERRY" bench "$TMP/fixed4.onnx" "${FAST[@]}"
expect bench_fixed_batch_json 0 '^fixed 4 rows 2 inferences 12$' -- bash -c "'$FERRY' bench '$TMP/fixed4.onnx' --batch 1,2,8 \
  --concurrency 1,2 ${FAST[*]} --json | $PY -c '
import json, sys
j = json.load(sys.stdin)
c = j[\"configurations\"]
assert [x[\"batch\"] for x in c] == [4, 4], c
assert j[\"analysis\"][\"series\"][0][\"batches\"] == [4]
print(\"fixed\", j[\"fixed_batch\"][\"batch\"], \"rows\", len(c), \"inferences\", c[0][\"inferences\"])'"
expect bench_symbolic_beside_scalar 0 '^batches \[1, 3\] fixed None$' -- bash -c "'$FERRY' bench '$TMP/sym_scalar.onnx' \
  --batch 1,3 ${FAST[*]} --json | $PY -c '
import json, sys
j = json.load(sys.stdin)
print(\"batches\", [x[\"batch\"] for x in j[\"configurations\"]], \"fixed\", j[\"fixed_batch\"])'"

echo "bench e2e: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
