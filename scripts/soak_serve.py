#!/usr/bin/python3
"""A server soak for `ferry serve`, on 127.0.0.1 only: load, model reloads, slow clients and malformed requests
at once for a fixed time, then SIGTERM. Not part of CI (scripts/fuzz_long.sh runs it; docs/reliability.md keeps
its figures).

    /usr/bin/python3 scripts/soak_serve.py [--ferry build/bin/ferry] [--seconds 600] [--json OUT]

What runs, all against one server on a repository of the quickstart CNN (models/) served twice, as `cnn` and as
`cnn_batched` (two instances; the one that is reloaded):
  - 8 keep-alive clients sending valid inferences (JSON and binary) whose outputs must match
    models/quickstart_cnn_expected.npy;
  - a reloader that unloads and loads cnn_batched every 2 s (explicit model control);
  - 40 slow clients (slowloris): each opens a connection and sends one header byte every second;
  - 2 clients sending malformed requests (invalid UTF-8 in the JSON, an Inference-Header-Content-Length past the
    JSON, binary_data_size lies, Transfer-Encoding: gzip, a 1,000-deep JSON, garbage bytes), each of which must
    get one 4xx/5xx answer (or a closed connection for bytes that are not HTTP).
Every second it samples the server's RSS. At the end: SIGTERM, and the server must exit 0 with nothing in flight.

Counted: valid requests that failed (status other than 200, wrong outputs, no answer), malformed requests that got
no answer or a 2xx, reload failures, RSS at start / after warm-up / peak / end. Exit 1 when anything failed.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
X = np.load(os.path.join(ROOT, "models", "quickstart_cnn_input.npy")).astype(np.float32)
EXPECTED = np.load(os.path.join(ROOT, "models", "quickstart_cnn_expected.npy"))


def make_repository(d):
    for name, config in (("cnn", 'max_batch_size: 0\n'),
                         ("cnn_batched", 'max_batch_size: 0\ninstance_group [ { count: 2 kind: KIND_CPU } ]\n')):
        os.makedirs(os.path.join(d, name, "1"))
        shutil.copy(os.path.join(ROOT, "models", "quickstart_cnn.onnx"), os.path.join(d, name, "1", "model.onnx"))
        with open(os.path.join(d, name, "config.pbtxt"), "w") as f:
            f.write(config)


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        return 0


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = {}
        self.errors = []

    def add(self, key, n=1, error=None):
        with self.lock:
            self.c[key] = self.c.get(key, 0) + n
            if error and len(self.errors) < 20:
                self.errors.append(f"{key}: {error}")


def infer_body(binary):
    if binary:
        blob = np.ascontiguousarray(X).tobytes()
        header = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": list(X.shape),
                                         "parameters": {"binary_data_size": len(blob)}}],
                             "parameters": {"binary_data_output": True}}).encode()
        return header + blob, {"Inference-Header-Content-Length": str(len(header)),
                               "Content-Type": "application/octet-stream"}
    body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": list(X.shape),
                                   "data": X.flatten().tolist()}]}).encode()
    return body, {"Content-Type": "application/json"}


def decode(status, headers, body):
    if status != 200:
        return None
    n = int(headers.get("inference-header-content-length", len(body)))
    out = json.loads(body[:n])["outputs"][0]
    if "data" in out:
        return np.array(out["data"], dtype=np.float32).reshape(out["shape"])
    return np.frombuffer(body[n:n + out["parameters"]["binary_data_size"]], dtype=np.float32).reshape(out["shape"])


def valid_client(port, stop, counters, k):
    bodies = [infer_body(False), infer_body(True)]
    conn = None
    i = 0
    while not stop.is_set():
        model = "cnn" if i % 2 == 0 else "cnn_batched"
        body, headers = bodies[(i // 2) % 2]
        i += 1
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", f"/v2/models/{model}/infer", body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            h = {a.lower(): b for a, b in r.getheaders()}
        except (OSError, http.client.HTTPException) as e:
            counters.add("valid_no_answer", error=repr(e))
            conn = None
            continue
        counters.add("valid_sent")
        if r.status == 200:
            out = decode(r.status, h, data)
            if out.shape == EXPECTED.shape and np.allclose(out, EXPECTED, rtol=1e-4, atol=1e-4):
                counters.add("valid_ok")
            else:
                counters.add("valid_wrong", error=f"{model}: outputs differ")
        elif r.status == 503 and model == "cnn_batched":
            counters.add("valid_unavailable_during_reload")  # the model was unloaded that instant
        elif r.status == 400 and b"unavailable" in data.lower() and model == "cnn_batched":
            counters.add("valid_unavailable_during_reload")
        elif r.status == 404 and model == "cnn_batched":
            counters.add("valid_unavailable_during_reload")
        else:
            counters.add("valid_failed", error=f"{model}: HTTP {r.status} {data[:200]!r}")


def reloader(port, stop, counters):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while not stop.wait(2.0):
        for action in ("unload", "load"):
            try:
                conn.request("POST", f"/v2/repository/models/cnn_batched/{action}", body=b"{}")
                r = conn.getresponse()
                data = r.read()
                counters.add("reloads" if action == "load" and r.status == 200 else
                             "unloads" if r.status == 200 else "reload_failed",
                             error=None if r.status == 200 else f"{action}: HTTP {r.status} {data[:200]!r}")
            except (OSError, http.client.HTTPException) as e:
                counters.add("reload_failed", error=repr(e))
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def slow_client(port, stop, counters):
    request = b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n"
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            counters.add("slow_connect_failed")
            stop.wait(1.0)
            continue
        counters.add("slow_connections")
        try:
            for b in request:
                if stop.wait(1.0):
                    break
                s.sendall(bytes([b]))
        except OSError:
            counters.add("slow_closed_by_server")  # the idle timeout did its job
        finally:
            s.close()


MALFORMED = [
    ("invalid_utf8", b'{"id": "\xff\xfe", "inputs": []}', {"Content-Type": "application/json"}),
    ("header_length_past_json", b'{"inputs": []}' + b"\xff" * 64, {"Inference-Header-Content-Length": "70"}),
    ("binary_size_lie", b'{"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3, 32, 32], '
                        b'"parameters": {"binary_data_size": 99999999}}]}', {"Inference-Header-Content-Length": "103"}),
    ("deep_json", b"[" * 1000 + b"]" * 1000, {"Content-Type": "application/json"}),
    ("wrong_shape", b'{"inputs": [{"name": "input", "datatype": "FP32", "shape": [2], "data": [1, 2]}]}', {}),
    ("duplicate_output", json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": list(X.shape),
                                                 "data": X.flatten().tolist()}],
                                     "outputs": [{"name": "logits"}, {"name": "logits"}]}).encode(), {}),
]
RAW = [
    ("gzip_te", b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
                b"Content-Length: 2\r\n\r\n{}"),
    ("garbage", b"\x00\x01\x02 not http at all\r\n\r\n"),
    ("bad_chunk", b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
]


def malformed_client(port, stop, counters):
    i = 0
    while not stop.is_set():
        i += 1
        if i % 3:
            name, body, headers = MALFORMED[i % len(MALFORMED)]
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("POST", "/v2/models/cnn/infer", body=body, headers=headers)
                r = conn.getresponse()
                r.read()
                conn.close()
            except (OSError, http.client.HTTPException) as e:
                counters.add("malformed_no_answer", error=f"{name}: {e!r}")
                continue
            counters.add("malformed_sent")
            if 400 <= r.status < 600:
                counters.add("malformed_refused")
            else:
                counters.add("malformed_accepted", error=f"{name}: HTTP {r.status}")
        else:
            name, data = RAW[i % len(RAW)]
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
                answer = s.recv(65536)
                s.close()
            except OSError as e:
                counters.add("malformed_no_answer", error=f"{name}: {e!r}")
                continue
            counters.add("malformed_sent")
            m = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
            if m and 400 <= int(m.group(1)) < 600:
                counters.add("malformed_refused")
            elif not answer and name == "garbage":
                counters.add("malformed_refused")  # not HTTP: closing the connection is the answer
            else:
                counters.add("malformed_accepted", error=f"{name}: {answer[:80]!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ferry", default=os.path.join(ROOT, "build", "bin", "ferry"))
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()

    repo = tempfile.mkdtemp(prefix="ferry-soak-")
    make_repository(repo)
    log = open(os.path.join(repo, "server.log"), "w")
    server = subprocess.Popen([a.ferry, "serve", repo, "--http-port", "0", "--no-grpc", "--model-control-mode",
                               "explicit", "--load-model", "*", "--threads", "1", "--drain-timeout-secs", "30"],
                              stdout=log, stderr=subprocess.STDOUT)
    port = None
    deadline = time.time() + 120
    while time.time() < deadline and port is None and server.poll() is None:
        with open(log.name) as f:
            m = re.search(r"HTTP on [\d.]+:(\d+)", f.read())
        port = int(m.group(1)) if m else None
        time.sleep(0.1)
    if port is None:
        print("soak: the server did not start (log: %s)" % log.name)
        return 1
    for _ in range(600):  # until both models are ready
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/v2/health/ready")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)

    counters = Counters()
    stop = threading.Event()
    rss_start = rss_kib(server.pid)
    threads = [threading.Thread(target=valid_client, args=(port, stop, counters, k)) for k in range(8)]
    threads += [threading.Thread(target=reloader, args=(port, stop, counters))]
    threads += [threading.Thread(target=slow_client, args=(port, stop, counters)) for _ in range(40)]
    threads += [threading.Thread(target=malformed_client, args=(port, stop, counters)) for _ in range(2)]
    for t in threads:
        t.start()
    samples = []
    t0 = time.time()
    while time.time() - t0 < a.seconds and server.poll() is None:
        time.sleep(1.0)
        samples.append(rss_kib(server.pid))
    stop.set()
    for t in threads:
        t.join(timeout=60)
    warm = samples[min(len(samples) - 1, 30)] if samples else 0
    rss_end = rss_kib(server.pid)
    server.send_signal(signal.SIGTERM)
    try:
        rc = server.wait(timeout=90)
    except subprocess.TimeoutExpired:
        server.kill()
        rc = "killed after 90 s"
    log.close()
    with open(log.name) as f:
        tail = f.read()[-4000:]
    c = counters.c
    result = {
        "seconds": round(time.time() - t0), "valid_requests": c.get("valid_sent", 0), "valid_ok": c.get("valid_ok", 0),
        "valid_failed": c.get("valid_failed", 0) + c.get("valid_wrong", 0) + c.get("valid_no_answer", 0),
        "unavailable_during_reload": c.get("valid_unavailable_during_reload", 0),
        "reloads": c.get("reloads", 0), "reload_failed": c.get("reload_failed", 0),
        "slow_connections": c.get("slow_connections", 0), "malformed_requests": c.get("malformed_sent", 0),
        "malformed_unanswered_or_accepted": c.get("malformed_no_answer", 0) + c.get("malformed_accepted", 0),
        "rss_mb_start": round(rss_start / 1024, 1), "rss_mb_after_30s": round(warm / 1024, 1),
        "rss_mb_peak": round(max(samples or [0]) / 1024, 1), "rss_mb_end": round(rss_end / 1024, 1),
        "exit": rc, "errors": counters.errors,
    }
    print(json.dumps(result, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f)
    ok = (result["valid_failed"] == 0 and result["malformed_unanswered_or_accepted"] == 0 and
          result["reload_failed"] == 0 and rc == 0)
    if not ok:
        print("soak: FAILED; server log tail:\n" + tail)
    shutil.rmtree(repo, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
