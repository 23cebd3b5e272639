#!/usr/bin/env python3
"""Checks of a running `ferry serve` (started by serve_test.sh): serve_test.py PORT SOURCE_DIR MODE REPO.
MODE main: every endpoint and behaviour on the explicit-mode server; drain: one slow request (SIGTERM is sent
meanwhile); none: the control API is refused; poll: a new version folder is picked up; sigterm_race: requests sent
back to back while this process sends SIGTERM (to $FERRY_SERVE_PID) are all answered; loading: the listener and
the other models serve while one model's load blocks."""
import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import numpy as np

PORT, SRC, MODE, REPO = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, os.path.join(SRC, "examples", "serve"))
from kserve_client import Client  # noqa: E402

URL = f"http://127.0.0.1:{PORT}"
X = np.load(os.path.join(SRC, "models", "quickstart_cnn_input.npy")).astype(np.float32)
EXPECTED = np.load(os.path.join(SRC, "models", "quickstart_cnn_expected.npy"))
failures = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def metric(text, name, labels):
    m = re.search(re.escape(name + "{" + labels + "}") + r" (\S+)", text)
    return float(m.group(1)) if m else None


def metrics():
    return Client(URL).request("GET", "/metrics")[2].decode()


def close(a):
    return a.shape == EXPECTED.shape and np.allclose(a, EXPECTED, rtol=1e-4, atol=1e-4)


def main_checks():
    c = Client(URL)
    s, b = c.get_json("/v2/health/live")
    check("health live", s == 200, s)
    s, b = c.get_json("/v2/health/ready")
    check("health ready", s == 200, (s, b))
    s, b = c.get_json("/v2")
    check("server metadata", s == 200 and b["name"] == "ferry" and "binary_tensor_data" in b["extensions"], b)
    s, b = c.get_json("/v2/models/cnn")
    check("model metadata", s == 200 and b["versions"] == ["1", "2"] and b["inputs"][0] ==
          {"name": "input", "datatype": "FP32", "shape": [-1, 3, 32, 32]}, b)
    s, b = c.get_json("/v2/models/cnn/versions/1/ready")
    check("model version ready", s == 200 and b["ready"], (s, b))
    s, b = c.get_json("/v2/models/cnn/versions/7/ready")
    check("absent version not ready (400)", s == 400, (s, b))
    s, b = c.get_json("/v2/models/cnn/config")
    check("model config", s == 200 and b["max_batch_size"] == 8 and b["input"][0]["dims"] == [3, 32, 32] and
          b["dynamic_batching"]["max_queue_delay_microseconds"] == 20000, b)
    s, b = c.get_json("/v2/models/auto/config")
    check("auto-completed config", s == 200 and b["max_batch_size"] == 4 and b["output"][0]["name"] == "logits" and
          "dynamic_batching" in b, b)

    s, out = c.infer("cnn", {"input": X})
    check("infer JSON", s == 200 and close(out["logits"]), out)
    s, out = c.infer("cnn", {"input": X}, binary=True)
    check("infer binary in and out", s == 200 and close(out["logits"]) and out["logits"].dtype == np.float32, out)
    s, out = c.infer("cnn", {"input": X}, version=1, outputs=["logits"])
    check("infer a given version", s == 200 and close(out["logits"]), out)
    s, out = c.infer("auto", {"input": np.concatenate([X, X, X])}, binary=True)
    check("infer batch of 3", s == 200 and out["logits"].shape == (3, 10) and close(out["logits"][2:]), out)

    # The example client without NumPy: its own .npy reader and Tensor, JSON and binary, same numbers.
    for binary in (False, True):
        code = ("import sys; sys.modules['numpy'] = None; sys.path.insert(0, sys.argv[1]); import kserve_client as k; "
                "c = k.Client(sys.argv[2]); x = k.load_npy(sys.argv[3]); "
                "s, out = c.infer('cnn', {'input': x}, binary=sys.argv[4] == '1'); "
                "print(s, type(out['logits']).__name__, out['logits'].dtype, list(out['logits'].shape), "
                "repr(list(out['logits'].values)))")
        p = subprocess.run([sys.executable, "-c", code, os.path.join(SRC, "examples", "serve"), URL,
                            os.path.join(SRC, "models", "quickstart_cnn_input.npy"), "1" if binary else "0"],
                           capture_output=True, text=True, timeout=60)
        head = p.stdout.split(" [", 1)[0] if p.returncode == 0 else p.stderr
        ok = head == "200 Tensor float32" and p.stdout.split(" ", 3)[3].startswith("[1, 10] ")
        ok = ok and close(np.array(ast.literal_eval(p.stdout.split("] ", 1)[1]), dtype=np.float32).reshape(1, 10))
        check("client without NumPy%s" % (", binary" if binary else ""), ok, (p.stdout, p.stderr))

    # Bad requests: 400 with a KServe error body naming the input and expected vs received.
    s, err = c.infer("cnn", {"input": X.astype(np.float64)})
    check("wrong dtype 400", s == 400 and "input 'input': datatype FP64 does not match the model's FP32" in err, err)
    s, err = c.infer("cnn", {"input": X[:, :, :30]})
    check("wrong shape 400", s == 400 and "shape [1,3,30,32] does not match the model's [-1,3,32,32]" in err, err)
    s, err = c.infer("cnn", {"x": X})
    check("wrong input name 400", s == 400 and "unexpected input 'x'" in err, err)
    s, err = c.infer("cnn", {"input": np.concatenate([X] * 9)})
    check("batch over max_batch_size 400", s == 400 and "batch size 9 is outside 1..8" in err, err)
    s, h, body = c.request("POST", "/v2/models/cnn/infer", "{not json")
    check("malformed JSON 400", s == 400 and b"not valid JSON" in body, body)
    deep = '{"inputs":[{"name":"input","datatype":"FP32","shape":[1],"data":' + "[" * 30 + "]" * 30 + "}]}"
    s, h, body = c.request("POST", "/v2/models/cnn/infer", deep)
    check("JSON depth limit 400", s == 400 and b"nests deeper than 16" in body, body)
    # The limit applies before the body is read: send only the header and read the answer.
    sock = socket.create_connection(("127.0.0.1", PORT))
    sock.sendall(b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2100000\r\n\r\n")
    answer = sock.recv(4096)
    sock.close()
    check("body size limit 413", answer.startswith(b"HTTP/1.1 413") and b"exceeds the limit of 2000000 bytes" in answer,
          answer)
    # Invalid UTF-8 in the JSON (in a string, or tensor bytes read as JSON when Inference-Header-Content-Length is
    # too long): 400 with a valid JSON error body, 100 times; the drain at SIGTERM then finds none in flight.
    q = Client(URL, timeout=10)  # an answer that never comes fails here instead of hanging
    bad = b'{"inputs":[{"name":"input\xff\xfe","datatype":"FP32","shape":[1,3,32,32],"data":[1]}]}'
    header = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                     "parameters": {"binary_data_size": X.nbytes}}]}).encode()
    binary = header + b"\xff\xc3" + X.tobytes()[2:]
    answers = []
    try:
        for i in range(100):
            s, h, body = (q.request("POST", "/v2/models/cnn/infer", bad) if i % 2 else
                          q.request("POST", "/v2/models/cnn/infer", binary,
                                    {"Inference-Header-Content-Length": str(len(header) + 8)}))
            answers.append(s == 400 and "not valid JSON" in json.loads(body)["error"])
    except (OSError, ValueError) as e:
        answers.append(repr(e))
    check("invalid UTF-8 in the JSON: 100 x 400", answers == [True] * 100, answers[-3:])
    # Transfer codings other than a single final chunked: refused from the header, and the connection closed.
    for te, want in [(b"gzip", b"HTTP/1.1 400"), (b"gzip, chunked", b"HTTP/1.1 501")]:
        sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        sock.sendall(b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te +
                     b"\r\nContent-Length: 5\r\n\r\nhello" if te == b"gzip" else
                     b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te + b"\r\n\r\n0\r\n\r\n")
        answer = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except OSError as e:
            answer += repr(e).encode()
        sock.close()
        check(f"Transfer-Encoding {te.decode()} refused and closed", answer.startswith(want) and
              answer.count(b"HTTP/1.1") == 1 and b"Connection: close" in answer, answer[:300])
    s, err = c.infer("cnn", {"input": X}, outputs=["logits", "logits"])
    check("an output requested twice 400", s == 400 and "output 'logits' is requested more than once" in err, (s, err))
    s, h, body = c.request("GET", "/v2/models/cnn/infer")
    check("wrong method 405", s == 405, (s, body))
    s, h, body = c.request("GET", "/v2/nothing")
    check("unknown endpoint 404", s == 404, (s, body))
    s, h, body = c.request("GET", "/v2/models/nope")
    check("unknown model 404", s == 404 and b"'nope' is not loaded" in body, (s, body))
    for path in ["/v2/repository/models/..%2F..%2Fetc/load", "/v2/repository/models/../load",
                 "/v2/models/.hidden/ready"]:
        s, h, body = c.request("POST" if "repository" in path else "GET", path)
        check(f"path traversal refused: {path}", s in (400, 404) and b"error" in body, (s, body))

    # Dynamic batching: 16 concurrent clients form batches larger than 1 (metrics and statistics show them).
    results = []

    def one():
        s, out = Client(URL).infer("cnn", {"input": X}, binary=True)
        results.append(s == 200 and close(out["logits"]))

    threads = [threading.Thread(target=one) for _ in range(16)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    check("16 concurrent requests answered correctly", results == [True] * 16, results)
    text = metrics()
    lab = 'model="cnn",version="2"'
    le1 = metric(text, "ferry_batch_size_bucket", lab + ',le="1"')
    count = metric(text, "ferry_batch_size_count", lab)
    check("batches larger than 1 in ferry_batch_size histogram", le1 is not None and count and le1 < count, (le1, count))
    inf, execs = metric(text, "nv_inference_count", lab), metric(text, "nv_inference_exec_count", lab)
    check("nv_inference_count > nv_inference_exec_count", inf and execs and inf > execs, (inf, execs))
    for name in ["nv_inference_request_success", "nv_inference_request_duration_us", "nv_inference_queue_duration_us",
                 "nv_inference_compute_input_duration_us", "nv_inference_compute_infer_duration_us",
                 "nv_inference_compute_output_duration_us", "nv_inference_pending_request_count",
                 "ferry_model_memory_bytes"]:
        check(f"metric {name}", metric(text, name, lab) is not None, name)
    check("failure counter with reason label",
          metric(text, "nv_inference_request_failure", lab + ',reason="OTHER"') is not None, "")
    s, b = c.get_json("/v2/models/cnn/versions/2/stats")
    sizes = [x["batch_size"] for x in b["model_stats"][0]["batch_stats"]] if s == 200 else []
    check("statistics show batch sizes > 1", s == 200 and max(sizes) > 1, b)
    s, b = c.get_json("/v2/models/stats")
    check("statistics of all models", s == 200 and len(b["model_stats"]) == 5, s)

    # Queue full: `slow` queues at most 2 requests while it waits 400 ms for a batch.
    codes, errors = [], []

    def slow():
        s, out = Client(URL).infer("slow", {"input": X})
        codes.append(s)
        if s != 200:
            errors.append(out)

    threads = [threading.Thread(target=slow) for _ in range(5)]
    for t in threads:
        t.start()
        time.sleep(0.02)
    [t.join() for t in threads]
    check("queue full: 503 with a message", sorted(codes) == [200, 200, 503, 503, 503] and
          all("the queue is full (2 requests waiting" in e for e in errors), (codes, errors))

    # Timeout: `timeout` waits 1 s for a batch but requests time out after 30 ms.
    start = time.time()
    s, err = c.infer("timeout", {"input": X})
    check("queue timeout 503", s == 503 and "request timed out after" in err and time.time() - start < 0.9, (s, err))

    # A client that disconnects while queued cancels its request.
    body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                   "data": X.flatten().tolist()}]}).encode()
    sock = socket.create_connection(("127.0.0.1", PORT))
    sock.sendall(b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(0.05)
    sock.close()
    time.sleep(0.6)
    canceled = metric(metrics(), "nv_inference_request_failure", 'model="slow",version="1",reason="CANCELED"')
    check("client disconnect cancels the queued request", canceled == 1, canceled)

    # Many keep-alive connections and a stalled client do not starve others.
    stalled = socket.create_connection(("127.0.0.1", PORT))
    stalled.sendall(b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"inp")
    clients = [Client(URL) for _ in range(200)]
    ok = 0
    start = time.time()
    for rounds in range(2):
        for cl in clients:
            s, b = cl.get_json("/v2/health/live")
            ok += s == 200
    s, out = c.infer("cnn", {"input": X})
    elapsed = time.time() - start
    check("200 keep-alive connections x 2 requests with a stalled client", ok == 400 and s == 200 and elapsed < 10,
          (ok, s, elapsed))
    stalled.close()
    for cl in clients:
        cl.conn.close()

    # Model control: unload, load, index; reload under load with no failures and memory back to baseline.
    s, b = c.post_json("/v2/repository/index")
    names = {(e["name"], e.get("version"), e["state"]) for e in b}
    check("repository index", s == 200 and ("cnn", "1", "READY") in names and ("later", None, "UNAVAILABLE") in names, b)
    s, b = c.post_json("/v2/repository/models/later/load")
    check("load", s == 200 and c.get_json("/v2/models/later/ready")[0] == 200, (s, b))
    s, b = c.post_json("/v2/repository/models/later/unload")
    check("unload", s == 200 and c.get_json("/v2/models/later/ready")[0] == 400, (s, b))
    s, err = c.infer("later", {"input": X})
    check("infer after unload 404", s == 404, (s, err))
    s, b = c.post_json("/v2/repository/models/absent/load")
    check("load of a missing model 400", s == 400 and "not in the repository" in b["error"], (s, b))
    s, b = c.post_json("/v2/repository/models/auto/load", {"parameters": {"config": "{}"}})
    check("load with config override refused", s == 400 and "not supported" in b["error"], (s, b))

    stop = threading.Event()
    outcomes = []

    def load():
        cl = Client(URL)
        while not stop.is_set():
            s, out = cl.infer("auto", {"input": X}, binary=True)
            outcomes.append(s == 200 and close(out["logits"]))

    lab = 'model="auto",version="1"'

    def rss():
        m = re.search(r"^ferry_process_resident_memory_bytes (\S+)$", metrics(), re.M)
        return float(m.group(1))

    s, b = c.post_json("/v2/repository/models/auto/load")
    quiet_gauge = metric(metrics(), "ferry_model_memory_bytes", lab)  # after a reload with no traffic
    gauges, resident = [], []
    workers = [threading.Thread(target=load) for _ in range(2)]
    [w.start() for w in workers]
    for i in range(20):
        s, b = c.post_json("/v2/repository/models/auto/load")
        if s != 200:
            check("reload", False, b)
            break
        gauges.append(metric(metrics(), "ferry_model_memory_bytes", lab))
        resident.append(rss())
    stop.set()
    [w.join() for w in workers]
    check("reload under load: no failed request", len(outcomes) > 10 and all(outcomes),
          (len(outcomes), outcomes.count(False)))
    s, b = c.post_json("/v2/repository/models/auto/load")
    # Under traffic the gauge also counts the arenas of the batch sizes that ran; after a quiet reload it is back.
    check("model memory gauge back to its value after 20 reloads under load",
          s == 200 and metric(metrics(), "ferry_model_memory_bytes", lab) == quiet_gauge and
          all(g and g >= quiet_gauge for g in gauges), (quiet_gauge, gauges))
    # Resident memory after the 20th reload against after the 2nd (allocator warm): a leaked load would add its
    # weights, packed kernels and arenas (the gauge) every time.
    growth = resident[-1] - resident[1]
    print(f"  model memory {quiet_gauge / 2**20:.2f} MiB; resident after reload 2: {resident[1] / 2**20:.1f} MiB, "
          f"after reload 20: {resident[-1] / 2**20:.1f} MiB")
    if os.environ.get("FERRY_SANITIZED") == "1":
        # AddressSanitizer keeps freed memory in quarantine: resident memory says nothing about leaks there (LSan
        # checks those at exit instead).
        print("  SKIP resident memory check: the server is built with a sanitizer")
    else:
        check("resident memory back to baseline after 20 reloads (growth < 4 x one load)", growth < 4 * quiet_gauge,
              [round(r / 2**20, 1) for r in resident])


def drain():
    # Sends a request to `slow` (answered after its 400 ms batching delay), then tells the script to send SIGTERM.
    body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                   "data": X.flatten().tolist()}]}).encode()
    sock = socket.create_connection(("127.0.0.1", PORT))
    sock.sendall(b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    open(os.path.join(REPO, "..", "sent"), "w").close()
    answer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    ok = head.startswith(b"HTTP/1.1 200") and close(np.array(json.loads(payload)["outputs"][0]["data"]).reshape(1, 10))
    print(("PASS" if ok else "FAIL") + " drain: the queued request got its answer")
    sys.exit(0 if ok else 1)


def read_response(sock):
    """(status, keep-alive) of one HTTP answer with a Content-Length body, or None when the connection ends first."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
        while len(rest) < n:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
    except OSError:
        return None
    return int(head.split(b" ")[1]), b"connection: close" not in head.lower()


def sigterm_race():
    # Clients send requests back to back (keep-alive, and a new connection per request), and this process sends
    # the server SIGTERM: every request whose bytes were all sent before the signal gets an answer (200, or 503).
    pid = int(os.environ["FERRY_SERVE_PID"])
    body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                   "data": X.flatten().tolist()}]}).encode()
    request = b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    killed = []  # the time SIGTERM was sent
    lost, bad, answered = [], [], [0]

    def client(fresh):
        sock = None
        end = time.monotonic() + 30
        while time.monotonic() < end:
            if killed and time.monotonic() > killed[0] + 5:
                break
            try:
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
                sock.sendall(request)
            except OSError:
                if not killed:
                    bad.append("send failed before SIGTERM")
                break
            sent = time.monotonic()
            answer = read_response(sock)
            if answer is None:
                if not killed or sent < killed[0] - 0.001:
                    lost.append(sent - killed[0] if killed else "before SIGTERM")
                break
            status, keep_alive = answer
            answered[0] += 1
            if status not in (200, 503):
                bad.append(status)
            if fresh or not keep_alive:
                sock.close()
                sock = None
        if sock is not None:
            sock.close()

    threads = [threading.Thread(target=client, args=(i % 4 == 3,)) for i in range(8)]
    [t.start() for t in threads]
    time.sleep(1.5)
    killed.append(time.monotonic())
    os.kill(pid, 15)
    [t.join() for t in threads]
    check("SIGTERM: every request sent before it answered", not lost and not bad, (lost, bad))
    check("SIGTERM race: requests were being answered", answered[0] > 20, answered[0])


def loading():
    # The repository holds a_fifo (its external data is a FIFO: the load blocks on it, or fails at once), cnn and
    # resize (zeros are not a valid input for its warm-up; it serves anyway). The listener answers from the start,
    # and the other models serve whatever a_fifo does.
    c = Client(URL, timeout=10)
    s, b = c.get_json("/v2/health/live")
    check("loading: live while models load", s == 200, (s, b))
    deadline = time.time() + 60
    ready = False
    while time.time() < deadline and not ready:
        ready = c.get_json("/v2/models/cnn/ready")[0] == 200 and c.get_json("/v2/models/resize/ready")[0] == 200
        if not ready:
            time.sleep(0.2)
    check("loading: cnn and resize serve while a_fifo does not", ready, "")
    s, out = c.infer("cnn", {"input": X})
    check("loading: cnn infers", s == 200 and close(out["logits"]), (s, out))
    s, out = c.infer("resize", {"x": np.ones((1, 1, 2, 2), np.float32), "scales": np.array([1, 1, 2, 2], np.float32)})
    check("loading: resize infers", s == 200 and out["y"].shape == (1, 1, 4, 4), (s, out))
    s, b = c.get_json("/v2/models/a_fifo/ready")
    check("loading: a_fifo not ready (400)", s == 400, (s, b))
    s, b = c.get_json("/v2/health/ready")
    check("loading: server not ready while a model is loading or failed (503)", s == 503, (s, b))
    s, b = c.post_json("/v2/repository/index")
    state = {e["name"]: e["state"] for e in b}
    check("loading: index says a_fifo is LOADING or UNAVAILABLE", state.get("a_fifo") in ("LOADING", "UNAVAILABLE") and
          state.get("cnn") == "READY", b)
    s, err = c.infer("a_fifo", {"input": X})
    check("loading: infer on a_fifo 503 (loading) or 404 (failed)", s in (503, 404), (s, err))


def none_mode():
    c = Client(URL)
    s, b = c.post_json("/v2/repository/models/cnn/unload")
    check("unload refused in mode none (403)", s == 403 and "model control is disabled" in b["error"], (s, b))
    s, out = c.infer("cnn", {"input": X})
    check("still serving", s == 200, s)


def poll_mode():
    c = Client(URL)
    s, b = c.get_json("/v2/models/m")
    check("poll: version 1 served", s == 200 and b["versions"] == ["1"], b)
    shutil.copytree(os.path.join(REPO, "m", "1"), os.path.join(REPO, "m", "2"))
    deadline = time.time() + 10
    while time.time() < deadline:
        s, b = c.get_json("/v2/models/m")
        if b.get("versions") == ["2"]:
            break
        time.sleep(0.2)
    check("poll: new version folder served", b.get("versions") == ["2"], b)
    with open(os.path.join(REPO, "m", "config.pbtxt"), "w") as f:
        f.write("max_batch_size: -1\n")
    time.sleep(2.5)
    s, out = c.infer("m", {"input": X})
    check("poll: a broken config keeps the previous load serving", s == 200, (s, out))


{"main": main_checks, "drain": drain, "none": none_mode, "poll": poll_mode, "sigterm_race": sigterm_race,
 "loading": loading}[MODE]()
sys.exit(1 if failures else 0)
