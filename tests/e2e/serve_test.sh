#!/usr/bin/env bash
# End-to-end tests of `ferry serve` through its real HTTP and gRPC transports on loopback: every KServe v2 endpoint,
# JSON and binary inference, gRPC inference (serve_grpc_client.py), dynamic batching visible in metrics and
# statistics, queue-full 503s, timeouts, client-disconnect cancellation, bad requests, path traversal, model control
# (explicit load/unload, poll reload, refusal in none mode), reload under load with memory back to baseline, many
# keep-alive connections with a stalled client, SIGTERM drain (and requests sent just before SIGTERM all answered),
# models loading behind the listener (a model whose external data is a FIFO blocks no one), warm-up failures on
# zeros as warnings, invalid UTF-8 and unsupported Transfer-Encoding refused, and bad configs refused at startup
# with file, line and field. The checks are in serve_test.py.
# Usage: serve_test.sh path/to/ferry     Exit 77 (skipped) when /usr/bin/python3 lacks onnx or numpy.
set -uo pipefail
FERRY="$1"
# A sanitizer build (FERRY_SANITIZE=1 ./scripts/test.sh) links AddressSanitizer's runtime; serve_test.py then skips
# the resident-memory check, which quarantined memory makes meaningless.
if ldd "$FERRY" 2>/dev/null | grep -c libasan >/dev/null; then export FERRY_SANITIZED=1; fi
SRC="${FERRY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PY=/usr/bin/python3
if ! "$PY" -c 'import onnx, numpy' >/dev/null 2>&1; then
  echo "SKIP: $PY lacks onnx or numpy"
  exit 77
fi
TMP="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

fails=0
passes=0
pass() { echo "PASS $1"; passes=$((passes + 1)); }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# The repository: the quickstart CNN with a dynamic batch dim, under several configs.
"$PY" - "$SRC/models/quickstart_cnn.onnx" "$TMP/cnn_dyn.onnx" <<'PYEOF'
import sys, onnx
m = onnx.load(sys.argv[1])
for v in list(m.graph.input) + list(m.graph.output):
    d = v.type.tensor_type.shape.dim[0]
    d.ClearField("dim_value")
    d.dim_param = "N"
onnx.save(m, sys.argv[2])
PYEOF
R="$TMP/repo"
model() {  # model NAME VERSION...: the CNN in each version folder; config.pbtxt from stdin when given
  local name="$1"; shift
  for v in "$@"; do mkdir -p "$R/$name/$v" && cp "$TMP/cnn_dyn.onnx" "$R/$name/$v/model.onnx"; done
}
model cnn 1 2
cat >"$R/cnn/config.pbtxt" <<'CFG'
name: "cnn"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "input" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 32, 32 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
version_policy: { all: { } }
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching { max_queue_delay_microseconds: 20000 }
CFG
model auto 1                      # no config.pbtxt: auto-completed
model slow 1                      # waits 400 ms for a batch; a queue of 2
cat >"$R/slow/config.pbtxt" <<'CFG'
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 400000 default_queue_policy { max_queue_size: 2 } }
CFG
model timeout 1                   # requests time out after 30 ms in a queue that waits 1 s
cat >"$R/timeout/config.pbtxt" <<'CFG'
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 1000000 default_queue_policy { default_timeout_microseconds: 30000 } }
CFG
mkdir -p "$R/later/1" && cp "$TMP/cnn_dyn.onnx" "$R/later/1/model.onnx"   # loaded only through the API

# serve_until REGEX NAME ARGS...: starts `ferry serve` in the background (log in $TMP/NAME.log) and waits
# (bounded) for a log line matching REGEX, whose last number is the HTTP port; sets PORT and PID.
serve_until() {
  local regex="$1" name="$2"; shift 2
  "$FERRY" serve "$@" --http-port 0 --grpc-port 0 >"$TMP/$name.log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  PORT=""
  for _ in $(seq 1 300); do
    PORT="$(grep -oE "$regex" "$TMP/$name.log" | grep -oE '[0-9]+$')"
    [ -n "$PORT" ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server $name did not reach '$regex':"; cat "$TMP/$name.log"; return 1
}
# start NAME ARGS...: starts `ferry serve` and waits until every startup model has loaded ("HTTP on").
start() { serve_until 'HTTP on [0-9.]+:[0-9]+' "$@"; }

# 1. Everything over one server in explicit mode (load/unload enabled), with gRPC on: the resident-memory check
# over 20 reloads also covers the malloc arenas of gRPC's threads (ferry serve bounds them, --malloc-arenas);
# gRPC requests are checked on the next server.
if start main "$R" --model-control-mode explicit --load-model cnn --load-model auto --load-model slow \
     --load-model timeout --max-body-bytes 2000000 --max-json-depth 16 --threads 1; then
  "$PY" "$SRC/tests/e2e/serve_test.py" "$PORT" "$SRC" main "$R"
  rc=$?
  [ "$rc" = 0 ] && pass "main server checks" || fail "main server checks (see above)"
  # SIGTERM drain: a request waiting in the slow model's queue is still answered, then the server exits 0.
  "$PY" "$SRC/tests/e2e/serve_test.py" "$PORT" "$SRC" drain "$R" &
  client=$!
  for _ in $(seq 1 100); do [ -f "$TMP/sent" ] && break; sleep 0.05; done
  sleep 0.05
  kill -TERM "$PID"
  wait "$client" && pass "request in flight at SIGTERM answered" || fail "request in flight at SIGTERM answered"
  if wait "$PID" && grep -q "ferry serve: stopped" "$TMP/main.log"; then pass "SIGTERM drains and exits 0"
  else fail "SIGTERM drains and exits 0"; tail -5 "$TMP/main.log"; fi
  # The 100 requests with invalid UTF-8 (serve_test.py main) were all answered: none is left in flight.
  grep -q "still in flight" "$TMP/main.log" && fail "no request left in flight at SIGTERM" \
    || pass "no request left in flight at SIGTERM"
else
  fail "main server starts"
fi

# 2. Mode none: no model control API; gRPC.
if start none "$R" --threads 1; then
  "$PY" "$SRC/tests/e2e/serve_test.py" "$PORT" "$SRC" none "$R" && pass "mode none refuses load/unload" \
    || fail "mode none refuses load/unload"
  # gRPC through the real binary: protobuf messages from protoc's Python classes, framed and sent over HTTP/2 by
  # curl (Debian has no python3-grpcio); same models, same messages as the REST checks.
  GRPC_PORT="$(grep -oE 'gRPC on [0-9.]+:[0-9]+' "$TMP/none.log" | grep -oE '[0-9]+$')"
  mkdir -p "$TMP/gen"
  if ! command -v curl >/dev/null || ! curl -V | grep -q nghttp2; then
    echo "SKIP gRPC checks: no curl with HTTP/2"
  elif [ -n "$GRPC_PORT" ] && protoc -I "$SRC" --python_out="$TMP/gen" "$SRC/src/server/grpc_service.proto" \
       "$SRC/src/server/model_config.proto" && "$PY" "$SRC/tests/e2e/serve_grpc_client.py" "$GRPC_PORT" "$TMP/gen" \
       "$SRC/models/quickstart_cnn_input.npy" "$SRC/models/quickstart_cnn_expected.npy"; then
    pass "gRPC checks"
  else
    fail "gRPC checks (see above)"
  fi
  kill -TERM "$PID"; wait "$PID"
fi

# 3. Poll mode: a new version folder is picked up without a restart; a broken config keeps the old load serving.
P="$TMP/poll"
mkdir -p "$P/m/1" && cp "$TMP/cnn_dyn.onnx" "$P/m/1/model.onnx"
if start poll "$P" --model-control-mode poll --repository-poll-secs 1 --threads 1; then
  "$PY" "$SRC/tests/e2e/serve_test.py" "$PORT" "$SRC" poll "$P" && pass "poll mode reloads changes" \
    || { fail "poll mode reloads changes"; tail -5 "$TMP/poll.log"; }
  kill -TERM "$PID"; wait "$PID"
fi

# exits PID SECONDS [EACH]: waits (bounded) for PID to exit, running EACH every tick; sets RC (124: still running,
# then killed).
exits() {
  local pid="$1" secs="$2" each="${3:-true}"
  for _ in $(seq 1 $((secs * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    $each
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" 2>/dev/null; RC=124; else wait "$pid"; RC=$?; fi
}

# 2b. SIGTERM race: requests sent back to back on keep-alive and new connections while the test sends SIGTERM:
# every request whose bytes were sent before the signal is answered; nothing is left in flight.
if start race "$R" --threads 1 --no-grpc; then
  FERRY_SERVE_PID="$PID" timeout 120 "$PY" "$SRC/tests/e2e/serve_test.py" "$PORT" "$SRC" sigterm_race "$R" \
    && pass "SIGTERM race: requests sent before it answered" || fail "SIGTERM race: requests sent before it answered"
  exits "$PID" 60
  if [ "$RC" = 0 ] && ! grep -q "still in flight" "$TMP/race.log"; then pass "SIGTERM race: drained, exit 0"
  else fail "SIGTERM race: drained, exit 0 (exit $RC)"; tail -5 "$TMP/race.log"; fi
fi

# 2c. Models load behind the listener: a model whose external data is a FIFO (its load blocks opening it, or the
# importer refuses it at once) keeps neither the listener nor the other models from serving, --keep-going or not;
# a model whose warm-up on zeros fails (a Resize's scales must be positive) serves with a warning.
L="$TMP/loading"
mkdir -p "$L/cnn/1" && cp "$TMP/cnn_dyn.onnx" "$L/cnn/1/model.onnx"
"$PY" - "$TMP/cnn_dyn.onnx" "$L" <<'PYEOF'
import os, sys, onnx
from onnx import helper, TensorProto
src, repo = sys.argv[1], sys.argv[2]
os.makedirs(f"{repo}/a_fifo/1")
m = onnx.load(src)
onnx.save(m, f"{repo}/a_fifo/1/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
          location="weights.bin", size_threshold=0)
os.makedirs(f"{repo}/resize/1")
g = helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["y"])], "resize",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
                       helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c", "d"])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f"{repo}/resize/1/model.onnx")
PYEOF
rm -f "$L/a_fifo/1/weights.bin" && mkfifo "$L/a_fifo/1/weights.bin"
# Lets a load blocked opening the FIFO go on: it reads end-of-file and fails (opening read-write never blocks).
unblock() { timeout 5 bash -c "exec 3<>'$L/a_fifo/1/weights.bin'; exec 3>&-" 2>/dev/null; }
# listening NAME ARGS...: starts `ferry serve` and waits only for its "listening" line (models may still load).
listening() { serve_until 'listening \(HTTP port [0-9]+' "$@"; }
if listening loading "$L" --threads 1 --keep-going; then
  timeout 120 "$PY" "$SRC/tests/e2e/serve_test.py" "$PORT" "$SRC" loading "$L" \
    && pass "loading: the listener and the other models serve while a_fifo loads" \
    || { fail "loading: the listener and the other models serve while a_fifo loads"; tail -5 "$TMP/loading.log"; }
  grep -q "warning: model 'resize' version 1: the warm-up run with zeros failed" "$TMP/loading.log" \
    && pass "loading: resize serves with a warning about its warm-up" \
    || fail "loading: resize serves with a warning about its warm-up"
  unblock
  kill -TERM "$PID"
  exits "$PID" 60 unblock
  [ "$RC" = 0 ] && pass "loading: --keep-going server exits 0 on SIGTERM" \
    || { fail "loading: --keep-going server exits 0 on SIGTERM (exit $RC)"; tail -5 "$TMP/loading.log"; }
else
  fail "loading: the server listens while a_fifo loads (--keep-going)"
fi
# Without --keep-going: it listens (live answers) until a_fifo's load fails, then exits 1.
if listening loading_strict "$L" --threads 1 --no-grpc; then
  live="$(timeout 10 "$PY" -c "import sys, urllib.request as u
try: print(u.urlopen('http://127.0.0.1:$PORT/v2/health/live', timeout=5).status)
except Exception as e: print(e)")"
  exits "$PID" 60 unblock
  if [ "$RC" = 1 ] && grep -q "1 model(s) failed to load; exiting" "$TMP/loading_strict.log" &&
     { [ "$live" = 200 ] || grep -q "model 'a_fifo' failed to load" "$TMP/loading_strict.log"; }; then
    pass "loading: without --keep-going it listens, then exits 1 when a_fifo fails"
  else
    fail "loading: without --keep-going it listens, then exits 1 when a_fifo fails (exit $RC, live $live)"
    tail -5 "$TMP/loading_strict.log"
  fi
else
  fail "loading: the server listens while a_fifo loads (without --keep-going)"
fi

# 4. Bad configs are refused at startup with the file, line and field (exit 1).
bad() {  # bad NAME EXPECTED_TEXT: a repository holding only model NAME with config.pbtxt from stdin
  local name="$1" want="$2" B="$TMP/bad_$1"
  mkdir -p "$B/$name/1" && cp "$TMP/cnn_dyn.onnx" "$B/$name/1/model.onnx"
  cat >"$B/$name/config.pbtxt"
  local out rc
  out="$(timeout 60 "$FERRY" serve "$B" --http-port 0 2>&1)"; rc=$?
  if [ "$rc" = 1 ] && grep -qF -- "$want" <<<"$out"; then pass "bad config $name"
  else fail "bad config $name: exit $rc, want 1 and '$want'"; echo "$out" | head -5; fi
}
bad typo "$TMP/bad_typo/typo/config.pbtxt:2:16: Message type \"inference.ModelConfig\" has no field named \"max_batch_sizes\"" <<'CFG'
name: "typo"
max_batch_sizes: 4
CFG
bad dtype "$TMP/bad_dtype/dtype/config.pbtxt:3: input[0] 'input': data_type TYPE_INT64 does not match the model's float32 (TYPE_FP32)" <<'CFG'
max_batch_size: 4
input [ {
  name: "input" data_type: TYPE_INT64 dims: [ 3, 32, 32 ] } ]
CFG
bad preferred "$TMP/bad_preferred/preferred/config.pbtxt:2: dynamic_batching.preferred_batch_size: 16 is outside 1..4 (max_batch_size)" <<'CFG'
max_batch_size: 4
dynamic_batching { preferred_batch_size: [ 2, 16 ] }
CFG
mkdir -p "$TMP/bad_fixed/fixed/1" && cp "$SRC/models/quickstart_cnn.onnx" "$TMP/bad_fixed/fixed/1/model.onnx"
echo "max_batch_size: 4" >"$TMP/bad_fixed/fixed/config.pbtxt"   # the original model has a fixed batch of 1
out="$(timeout 60 "$FERRY" serve "$TMP/bad_fixed" --http-port 0 2>&1)"; rc=$?
if [ "$rc" = 1 ] && grep -qF "$TMP/bad_fixed/fixed/config.pbtxt:1: max_batch_size 4 needs a dynamic first dim on 'input', but the model has [1,3,32,32]" <<<"$out"; then
  pass "bad config fixed batch dim"
else
  fail "bad config fixed batch dim: exit $rc"; echo "$out" | head -5
fi

echo "serve_test: $passes passed, $fails failed"
[ "$fails" = 0 ]
