"""ONNX Runtime as an oracle for the Python tests: one-node (or small) models run in onnxruntime-node
(bench/ort/node_modules, installed by scripts/test.sh when npm can reach its registry) and in Ferry, outputs
compared. Tests that need it call `require_ort()`, which skips them where ONNX Runtime is not installed.

    from ort_oracle import contrib_model, check_against_ort
    m = contrib_model("FusedMatMul", ["A", "B"], ["Y"], {"A": a}, initializers={"B": b}, transB=1, alpha=0.5)
    check_against_ort(m, {"A": a}, rtol=1e-5, atol=1e-6)

`contrib_model` writes a model whose node is in `domain` (com.microsoft by default) with the ONNX opset `opset`;
`check_against_ort` runs it on Ferry's `cpu,ref` (the cpu kernel where there is one), on `ref` alone and on ONNX
Runtime with its optimizations disabled, and asserts every output matches ONNX Runtime's (dtype, shape, values).
A providers list without "ref" (["cpu"]) runs with fallback off: every node must run on those backends. Each
runs twice: optimized (the default level) and at level 0 (the kernels of the ops as written).
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_DIR = os.path.join(ROOT, "bench", "ort")
ORT_RUN = os.path.join(ORT_DIR, "ort_run.js")


def ort_available():
    return shutil.which("node") is not None and os.path.isdir(os.path.join(ORT_DIR, "node_modules",
                                                                           "onnxruntime-node"))


def require_ort():
    if not ort_available():
        pytest.skip("onnxruntime-node is not installed in bench/ort (scripts/test.sh installs it with npm)")


def _vi(name, arr):
    return helper.make_tensor_value_info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype], list(arr.shape))


def contrib_model(op, node_inputs, outputs, feeds, initializers=None, domain="com.microsoft", opset=17, **attrs):
    """A model of one `domain`::`op` node. `node_inputs`: the node's input names in order ("" = omitted); `feeds`:
    name -> array of the graph inputs (static shapes); `initializers`: name -> array, constant inputs; `outputs`:
    the node's output names ("" = omitted), all of them graph outputs. Attributes as keyword arguments."""
    initializers = initializers or {}
    node = helper.make_node(op, list(node_inputs), list(outputs), domain=domain, name=op.lower() + "_node", **attrs)
    graph_inputs = [_vi(n, a) for n, a in feeds.items()]
    inits = [numpy_helper.from_array(a, n) for n, a in initializers.items()]
    graph_outputs = [helper.make_empty_tensor_value_info(n) for n in outputs if n]
    graph = helper.make_graph([node], op.lower() + "_graph", graph_inputs, graph_outputs, initializer=inits)
    opsets = [helper.make_opsetid("", opset)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    return helper.make_model(graph, opset_imports=opsets, producer_name="ferry-tests")


def run_ort(model_path, feeds, level="disabled"):
    """Runs `model_path` once in onnxruntime-node (1 thread) and returns its outputs by name."""
    with tempfile.TemporaryDirectory() as d:
        args = ["node", ORT_RUN, str(model_path), "--repeat", "1", "--save-dir", d, "--graph-optimization", level]
        for name, arr in feeds.items():
            f = os.path.join(d, "in_%d.npy" % len(args))
            np.save(f, np.ascontiguousarray(arr))
            args += ["--input", "%s=%s" % (name, f)]
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("ONNX Runtime failed on %s: %s" % (model_path, p.stderr.strip()[-2000:]))
        names = list(json.loads(p.stdout.strip().splitlines()[-1])["outputs"].keys())
        return {n: np.load(os.path.join(d, n.replace("/", "_").replace("\\", "_").replace(":", "_") + ".npy"))
                for n in names}


def run_ferry(model_path, feeds, providers, optimize=True):
    """Runs the model on Ferry's backends `providers`; without "ref" among them, fallback is off, so the session
    fails unless those backends run every node (a ["cpu"] check really runs the cpu kernels). `optimize` False:
    the graph as written (optimization level 0), so the kernels of the ops in the file run, not what the passes
    make of them."""
    import ferry
    options = ferry.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ferry.GraphOptimizationLevel.ORT_DISABLE_ALL
    if "ref" not in providers:
        options.add_session_config_entry("ferry.allow_fallback", "0")
    sess = ferry.InferenceSession(str(model_path), sess_options=options, providers=providers)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def assert_outputs_match(got, want, rtol, atol, what):
    assert sorted(got) == sorted(want), "%s: outputs %s, ONNX Runtime's %s" % (what, sorted(got), sorted(want))
    for name, w in want.items():
        g = np.asarray(got[name])
        assert g.dtype == w.dtype, "%s: output %s dtype %s, ONNX Runtime %s" % (what, name, g.dtype, w.dtype)
        assert g.shape == w.shape, "%s: output %s shape %s, ONNX Runtime %s" % (what, name, g.shape, w.shape)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg="%s: output %s" % (what, name))
        else:
            np.testing.assert_array_equal(g, w, err_msg="%s: output %s" % (what, name))


def check_against_ort(model, feeds, rtol=1e-5, atol=1e-6, providers_list=(["cpu", "ref"], ["ref"]), ort_model=None):
    """Runs `model` (a ModelProto or a path) on Ferry with each providers list and on ONNX Runtime, and asserts
    the outputs match. `ort_model`: another model for ONNX Runtime (e.g. where the node is ORT's own form)."""
    require_ort()
    with tempfile.TemporaryDirectory() as d:
        path = model
        if isinstance(model, onnx.ModelProto):
            path = os.path.join(d, "model.onnx")
            onnx.save(model, path)
        ort_path = path
        if ort_model is not None:
            ort_path = os.path.join(d, "ort_model.onnx")
            onnx.save(ort_model, ort_path)
        want = run_ort(ort_path, feeds)
        for providers in providers_list:
            for optimize in (True, False):
                got = run_ferry(path, feeds, providers, optimize)
                assert_outputs_match(got, want, rtol, atol, "Ferry on %s%s" % (",".join(providers),
                                                                               "" if optimize else " at level 0"))
    return want
