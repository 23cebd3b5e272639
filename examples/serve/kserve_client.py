#!/usr/bin/env python3
"""A KServe v2 (Open Inference Protocol) REST client using only the Python standard library (and numpy for
tensors). Works against `ferry serve` and Triton.

    python3 kserve_client.py http://127.0.0.1:8000 MODEL input.npy [--binary]

prints each output's name, shape and first values.
"""
import http.client
import json
import sys
import urllib.parse

try:
    import numpy as np
except ImportError:  # metadata calls work without numpy
    np = None

DTYPES = {"FP32": "float32", "FP64": "float64", "FP16": "float16", "INT8": "int8", "INT16": "int16",
          "INT32": "int32", "INT64": "int64", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32",
          "UINT64": "uint64", "BOOL": "bool"}


class Client:
    def __init__(self, url, timeout=60):
        u = urllib.parse.urlparse(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)  # one keep-alive connection

    def request(self, method, path, body=None, headers=None):
        """Returns (status, headers, body bytes)."""
        self.conn.request(method, path, body=body, headers=headers or {})
        r = self.conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()

    def get_json(self, path):
        status, _, body = self.request("GET", path)
        return status, json.loads(body) if body else None

    def post_json(self, path, obj=None):
        status, _, body = self.request("POST", path, json.dumps(obj or {}))
        return status, json.loads(body) if body else None

    def infer(self, model, inputs, binary=False, version=None, outputs=None, parameters=None):
        """inputs: {name: numpy array}. Returns (status, {name: numpy array} or the error message)."""
        path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
        dtype_names = {v: k for k, v in DTYPES.items()}
        req = {"inputs": [], "parameters": dict(parameters or {})}
        blobs = []
        for name, a in inputs.items():
            t = {"name": name, "datatype": dtype_names[str(a.dtype)], "shape": list(a.shape)}
            if binary:
                blob = np.ascontiguousarray(a).tobytes()
                t["parameters"] = {"binary_data_size": len(blob)}
                blobs.append(blob)
            else:
                t["data"] = a.flatten().tolist()
            req["inputs"].append(t)
        if outputs:
            req["outputs"] = [{"name": n, "parameters": {"binary_data": binary}} for n in outputs]
        elif binary:
            req["parameters"]["binary_data_output"] = True
        header = json.dumps(req).encode()
        headers = {"Content-Type": "application/octet-stream" if binary else "application/json"}
        if binary:
            headers["Inference-Header-Content-Length"] = str(len(header))
        status, h, body = self.request("POST", path, header + b"".join(blobs), headers)
        if status != 200:
            return status, json.loads(body)["error"]
        n = int(h.get("inference-header-content-length", len(body)))
        resp = json.loads(body[:n])
        result, at = {}, n
        for o in resp["outputs"]:
            dtype = DTYPES[o["datatype"]]
            if "data" in o:
                result[o["name"]] = np.array(o["data"], dtype=dtype).reshape(o["shape"])
            else:
                size = o["parameters"]["binary_data_size"]
                result[o["name"]] = np.frombuffer(body[at:at + size], dtype=dtype).reshape(o["shape"])
                at += size
        return status, result


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    client = Client(argv[1])
    status, meta = client.get_json(f"/v2/models/{argv[2]}")
    if status != 200:
        print(meta["error"])
        return 1
    x = np.load(argv[3])
    status, out = client.infer(argv[2], {meta["inputs"][0]["name"]: x}, binary="--binary" in argv)
    if status != 200:
        print(f"HTTP {status}: {out}")
        return 1
    for name, a in out.items():
        print(name, a.dtype, list(a.shape), a.flatten()[:5])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
