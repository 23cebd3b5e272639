#!/usr/bin/env python3
"""A KServe v2 (Open Inference Protocol) REST client using only the Python standard library. Works against
`ferry serve` and Triton. With NumPy installed, tensors are numpy arrays; without it, `Tensor`s (a dtype name, a
shape and the values in row-major order) and .npy files are read by `load_npy`.

    python3 kserve_client.py http://127.0.0.1:8000 MODEL input.npy [--binary]

prints each output's name, shape and first values.
"""
import ast
import http.client
import json
import struct
import sys
import urllib.parse

try:
    import numpy as np
except ImportError:  # the client then speaks Tensor
    np = None

DTYPES = {"FP32": "float32", "FP64": "float64", "FP16": "float16", "INT8": "int8", "INT16": "int16",
          "INT32": "int32", "INT64": "int64", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32",
          "UINT64": "uint64", "BOOL": "bool"}
# dtype -> (struct format letter, bytes per element, .npy descr)
FORMATS = {"float32": ("f", 4, "<f4"), "float64": ("d", 8, "<f8"), "float16": ("e", 2, "<f2"),
           "int8": ("b", 1, "|i1"), "int16": ("h", 2, "<i2"), "int32": ("i", 4, "<i4"), "int64": ("q", 8, "<i8"),
           "uint8": ("B", 1, "|u1"), "uint16": ("H", 2, "<u2"), "uint32": ("I", 4, "<u4"), "uint64": ("Q", 8, "<u8"),
           "bool": ("?", 1, "|b1")}


class Tensor:
    """A tensor without NumPy: `dtype` a name of FORMATS ("float32"), `shape` a tuple, `values` a list in
    row-major order."""

    def __init__(self, dtype, shape, values):
        if dtype not in FORMATS:
            raise ValueError(f"unsupported dtype {dtype!r} (supported: {', '.join(FORMATS)})")
        count = 1
        for d in shape:
            count *= d
        if count != len(values):
            raise ValueError(f"shape {list(shape)} holds {count} values, got {len(values)}")
        self.dtype, self.shape, self.values = dtype, tuple(shape), list(values)

    def tobytes(self):
        return struct.pack("<%d%s" % (len(self.values), FORMATS[self.dtype][0]), *self.values)

    @staticmethod
    def frombytes(dtype, shape, raw):
        letter, size, _ = FORMATS[dtype]
        if len(raw) % size:
            raise ValueError(f"{len(raw)} bytes are not a whole number of {dtype} values")
        return Tensor(dtype, shape, struct.unpack("<%d%s" % (len(raw) // size, letter), raw))

    def flatten(self):
        return self.values

    def __repr__(self):
        return f"Tensor({self.dtype}, {list(self.shape)}, {self.values[:5]}{'...' if len(self.values) > 5 else ''})"


def load_npy(path):
    """Reads a .npy file (format 1.0-3.0, C order, a dtype of FORMATS) into a Tensor; ValueError naming the file
    and what is wrong otherwise."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY" or len(raw) < 10:
        raise ValueError(f"{path}: not a .npy file")
    major = raw[6]
    if major == 1:
        n, at = struct.unpack("<H", raw[8:10])[0], 10
    elif major in (2, 3):
        n, at = struct.unpack("<I", raw[8:12])[0], 12
    else:
        raise ValueError(f"{path}: .npy format {major} is not supported")
    try:
        header = ast.literal_eval(raw[at:at + n].decode("latin1" if major < 3 else "utf8"))
        descr, fortran, shape = header["descr"], header["fortran_order"], tuple(header["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: bad .npy header ({e})") from None
    dtype = next((k for k, v in FORMATS.items() if v[2] == descr or v[2].replace("<", "|") == descr), None)
    if dtype is None:
        raise ValueError(f"{path}: dtype {descr!r} is not supported without NumPy")
    if fortran and len(shape) > 1:
        raise ValueError(f"{path}: Fortran-ordered arrays are not supported without NumPy")
    return Tensor.frombytes(dtype, shape, raw[at + n:])


def _make(dtype, shape, values=None, raw=None):
    if np is not None:
        if raw is not None:
            return np.frombuffer(raw, dtype=dtype).reshape(shape)
        return np.array(values, dtype=dtype).reshape(shape)
    if raw is not None:
        return Tensor.frombytes(dtype, shape, raw)
    return Tensor(dtype, shape, values)


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
        """inputs: {name: numpy array or Tensor}. Returns (status, {name: numpy array (Tensor without NumPy)} or the
        error message)."""
        path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
        dtype_names = {v: k for k, v in DTYPES.items()}
        req = {"inputs": [], "parameters": dict(parameters or {})}
        blobs = []
        for name, a in inputs.items():
            t = {"name": name, "datatype": dtype_names[str(a.dtype)], "shape": list(a.shape)}
            if binary:
                blob = a.tobytes() if isinstance(a, Tensor) else np.ascontiguousarray(a).tobytes()
                t["parameters"] = {"binary_data_size": len(blob)}
                blobs.append(blob)
            else:
                t["data"] = a.values if isinstance(a, Tensor) else a.flatten().tolist()
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
                result[o["name"]] = _make(dtype, o["shape"], values=o["data"])
            else:
                size = o["parameters"]["binary_data_size"]
                result[o["name"]] = _make(dtype, o["shape"], raw=body[at:at + size])
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
    x = np.load(argv[3]) if np is not None else load_npy(argv[3])
    status, out = client.infer(argv[2], {meta["inputs"][0]["name"]: x}, binary="--binary" in argv)
    if status != 200:
        print(f"HTTP {status}: {out}")
        return 1
    for name, a in out.items():
        print(name, a.dtype, list(a.shape), a.flatten()[:5])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
