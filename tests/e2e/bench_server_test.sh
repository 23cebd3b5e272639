#!/usr/bin/env bash
# End-to-end tests of `ferry bench --server` (docs/bench.md, "Benchmarking a server") against a real `ferry serve`
# on loopback (free ports) serving the quickstart CNN: HTTP with binary and JSON tensors, gRPC, the table, JSON
# and CSV reports, the server's own statistics counting the requests the benchmark sent, failed requests (a queue
# of one, 503s) counted, reported and exiting 1, and bad arguments (exit 2) or targets (exit 1). The server is
# killed by its PID on exit. Usage: bench_server_test.sh path/to/ferry. Exit 77 (skipped) when /usr/bin/python3
# lacks onnx.
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
if ! "$PY" -c 'import onnx' >/dev/null 2>&1; then
  echo "SKIP: $PY lacks onnx"
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

# A repository: the CNN with a dynamic batch dim as `cnn` (max_batch_size 8) and as `tiny_queue`, whose queue
# holds one request for up to 300 ms, so concurrent requests find it full.
R="$TMP/repo"
mkdir -p "$R/cnn/1" "$R/tiny_queue/1"
"$PY" -c "
import onnx
m = onnx.load('$ROOT/models/quickstart_cnn.onnx')
for v in list(m.graph.input) + list(m.graph.output):
    d = v.type.tensor_type.shape.dim[0]
    d.ClearField('dim_value')
    d.dim_param = 'N'
onnx.save(m, '$R/cnn/1/model.onnx')"
cp "$R/cnn/1/model.onnx" "$R/tiny_queue/1/model.onnx"
cat >"$R/cnn/config.pbtxt" <<'CFG'
name: "cnn"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "input" data_type: TYPE_FP32 dims: [ 3, 32, 32 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
dynamic_batching { max_queue_delay_microseconds: 500 }
CFG
cat >"$R/tiny_queue/config.pbtxt" <<'CFG'
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 300000 default_queue_policy { max_queue_size: 1 } }
CFG

"$FERRY" serve "$R" --http-port 0 --grpc-port 0 --threads 1 >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
PORT=""
GPORT=""
for _ in $(seq 1 300); do
  PORT="$(grep -oE 'HTTP on [0-9.]+:[0-9]+' "$TMP/serve.log" | grep -oE '[0-9]+$')"
  GPORT="$(grep -oE 'gRPC on [0-9.]+:[0-9]+' "$TMP/serve.log" | grep -oE '[0-9]+$')"
  [ -n "$PORT" ] && [ -n "$GPORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$PORT" ] || [ -z "$GPORT" ]; then
  echo "FAIL server did not start:"
  cat "$TMP/serve.log"
  exit 1
fi
URL="http://127.0.0.1:$PORT"
FAST=(--iterations 6 --warmup 1)

expect server_table 0 'model cnn at http://127\.0\.0\.1:[0-9]+ \(http, binary tensors, max_batch_size 8\)' -- \
  "$FERRY" bench --server "$URL" --model cnn --batch 1,4 --concurrency 1,2 "${FAST[@]}"
expect server_table_columns 0 'batch +conc +p50 ms +p90 ms +p99 ms +mean ± std ms +inf/s +errors' -- \
  "$FERRY" bench --server "$URL" --model cnn "${FAST[@]}"
expect server_knee 0 'knee \(concurrency 1\): batch [12]' -- \
  "$FERRY" bench --server "$URL" --model cnn --batch 1,2 "${FAST[@]}"

# What the server counted before and after a run of known size: 2 batches x 2 concurrency levels x (1 warm-up
# + 6 measured) requests, inferences = requests x batch.
count() { "$PY" -c "
import json, urllib.request
s = json.load(urllib.request.urlopen('$URL/v2/models/cnn/stats'))['model_stats'][0]['inference_stats']['success']
print(s['count'])"; }
before="$(count)"
"$FERRY" bench --server "$URL" --model cnn --batch 1,3 --concurrency 1,2 "${FAST[@]}" --tensors json --json \
  >"$TMP/http.json" 2>"$TMP/http.err"
rc=$?
after="$(count)"
expect server_json_fields 0 '^json ok$' -- "$PY" -c "
import json
assert $rc == 0, open('$TMP/http.err').read()
j = json.load(open('$TMP/http.json'))
assert j['model'] == 'cnn' and j['errors'] == 0 and j['backends'] == [], j
s = j['server']
assert s['url'] == '$URL' and s['protocol'] == 'http' and s['tensors'] == 'json' and s['max_batch_size'] == 8, s
assert j['peak_rss_scope'] is None
cs = j['configurations']
assert [(c['batch'], c['concurrency']) for c in cs] == [(1, 1), (1, 2), (3, 1), (3, 2)], cs
for c in cs:
    assert c['requests'] == 6 and c['errors'] == 0 and c['first_error'] is None and c['inferences'] == 6 * c['batch'], c
    assert c['threads'] is None and c['session_ms'] is None and c['memory'] is None, c
    l = c['latency_ms']
    assert 0 < l['min'] <= l['p50'] <= l['p99'] <= l['max'] and c['throughput_per_s'] > 0, c
assert [s['concurrency'] for s in j['analysis']['series']] == [1, 2]
print('json ok')"
# Each configuration's requests are counted by the server as successful requests (one per request, whatever its
# batch); the warm-up ones too. The health checks that open each connection are not inferences.
expect server_counted_the_requests 0 '^counted 28$' -- echo "counted $((after - before))"

expect server_grpc 0 'model cnn at 127\.0\.0\.1:[0-9]+ \(grpc, binary tensors, max_batch_size 8\)' -- \
  "$FERRY" bench --server "127.0.0.1:$GPORT" --protocol grpc --model cnn --batch 1,4 --concurrency 1,2 "${FAST[@]}"
"$FERRY" bench --server "127.0.0.1:$GPORT" --protocol grpc --model cnn --batch 2 "${FAST[@]}" --csv >"$TMP/grpc.csv" 2>&1
expect server_grpc_csv 0 '^csv ok$' -- "$PY" -c "
import csv
rows = list(csv.DictReader(open('$TMP/grpc.csv')))
assert len(rows) == 1, rows
r = rows[0]
assert r['batch'] == '2' and r['threads'] == '' and r['requests'] == '6' and r['inferences'] == '12', r
assert r['errors'] == '0' and r['session_ms'] == '' and float(r['p50_ms']) > 0, r
print('csv ok')"

# Failed requests: four clients on a queue of one get 503s; they are counted, reported, and the exit status is 1.
expect server_errors_reported 1 'errors \(batch 1, concurrency 4\): [0-9]+ of 8 measured requests failed; the first: HTTP 503: .*queue is full' -- \
  "$FERRY" bench --server "$URL" --model tiny_queue --concurrency 4 --iterations 8 --warmup 0
expect server_errors_exit 1 'ferry bench: [0-9]+ measured request\(s\) failed \(see the report\); exit 1' -- \
  "$FERRY" bench --server "$URL" --model tiny_queue --concurrency 4 --iterations 8 --warmup 0

# Bad targets (exit 1) and bad arguments (exit 2).
expect server_unknown_model 1 "--model 'nope': GET /v2/models/nope on http://127\.0\.0\.1:[0-9]+ answered HTTP 404" -- \
  "$FERRY" bench --server "$URL" --model nope "${FAST[@]}"
expect server_grpc_unknown_model 1 "--model 'nope': ModelMetadata answered gRPC" -- \
  "$FERRY" bench --server "127.0.0.1:$GPORT" --protocol grpc --model nope "${FAST[@]}"
expect server_batch_too_large 1 "--batch 16: model 'cnn' takes batches of at most 8 \(max_batch_size of its config\)" -- \
  "$FERRY" bench --server "$URL" --model cnn --batch 1,16 "${FAST[@]}"
expect server_refused 1 'cannot connect to 127\.0\.0\.1:1: Connection refused' -- \
  "$FERRY" bench --server http://127.0.0.1:1 --model cnn "${FAST[@]}"
expect server_https 1 'https is not supported' -- "$FERRY" bench --server https://127.0.0.1:1 --model cnn "${FAST[@]}"
expect server_needs_model 2 '--server needs --model NAME' -- "$FERRY" bench --server "$URL" "${FAST[@]}"
expect server_no_threads 2 '--threads does not apply to --server' -- \
  "$FERRY" bench --server "$URL" --model cnn --threads 1 "${FAST[@]}"
expect server_no_backends 2 '--backends does not apply to --server' -- \
  "$FERRY" bench --server "$URL" --model cnn --backends ref "${FAST[@]}"
expect server_model_needs_server 2 '--model needs --server URL' -- "$FERRY" bench "$R/cnn/1/model.onnx" --model cnn
expect server_file_and_server 2 'give either a MODEL file or --server URL --model NAME, not both' -- \
  "$FERRY" bench "$R/cnn/1/model.onnx" --server "$URL" --model cnn
expect server_grpc_json_tensors 2 '--tensors json is for --protocol http' -- \
  "$FERRY" bench --server "127.0.0.1:$GPORT" --protocol grpc --model cnn --tensors json
expect server_bad_protocol 2 'protocol' -- "$FERRY" bench --server "$URL" --model cnn --protocol udp

kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
