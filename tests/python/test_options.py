"""SessionOptions and RunOptions: ORT's fields mapped onto Ferry's options, Ferry's own config entries, what has
no effect warned about, profiling, optimized_model_filepath, free dimension overrides, run_async, IOBinding."""
import json
import os
import threading

import numpy as np
import onnx
import pytest

import ferry


def conv_feed(n=1):
    return {"X": np.random.default_rng(0).standard_normal((n, 3, 8, 8)).astype(np.float32)}


def test_optimization_levels(models):
    outs = {}
    irs = {}
    for level in ferry.GraphOptimizationLevel:
        so = ferry.SessionOptions()
        so.graph_optimization_level = level
        sess = ferry.InferenceSession(models["conv"], so)
        outs[level] = sess.run(None, conv_feed())[0]
        irs[level] = sess.dump_ir()
    assert "Relu" in irs[ferry.GraphOptimizationLevel.ORT_DISABLE_ALL]
    assert "FusedConv" in irs[ferry.GraphOptimizationLevel.ORT_ENABLE_EXTENDED]
    for level, y in outs.items():
        np.testing.assert_allclose(y, outs[ferry.GraphOptimizationLevel.ORT_DISABLE_ALL], rtol=1e-5, atol=1e-5)


def test_threads(models):
    so = ferry.SessionOptions()
    so.intra_op_num_threads = 1
    y1 = ferry.InferenceSession(models["conv"], so).run(None, conv_feed())[0]
    so.intra_op_num_threads = 2
    y2 = ferry.InferenceSession(models["conv"], so).run(None, conv_feed())[0]
    np.testing.assert_allclose(y1, y2, rtol=1e-6, atol=1e-6)
    so.intra_op_num_threads = -1
    with pytest.raises(ferry.InvalidArgumentError, match="intra_op_num_threads"):
        ferry.InferenceSession(models["conv"], so)


def test_deterministic_needs_threads(models):
    so = ferry.SessionOptions()
    so.use_deterministic_compute = True
    with pytest.raises(ferry.InvalidArgumentError, match="deterministic"):
        ferry.InferenceSession(models["conv"], so)
    so.intra_op_num_threads = 1
    a = ferry.InferenceSession(models["conv"], so).run(None, conv_feed())[0]
    b = ferry.InferenceSession(models["conv"], so).run(None, conv_feed())[0]
    np.testing.assert_array_equal(a, b)


def test_ferry_config_entries(models):
    so = ferry.SessionOptions()
    so.add_session_config_entry("ferry.input_shapes", "X=2x3x8x8")
    so.add_session_config_entry("ferry.pins", "Relu=ref")
    so.add_session_config_entry("ferry.memory_limit", str(1 << 30))
    assert so.get_session_config_entry("ferry.pins") == "Relu=ref"
    so.graph_optimization_level = ferry.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ferry.InferenceSession(models["conv"], so)
    assert sess.get_inputs()[0].shape == [2, 3, 8, 8]
    placed = {n["name"]: n["backend"] for n in sess.placement()["nodes"]}
    assert placed["relu"] == "ref"
    with pytest.raises(ferry.InvalidArgumentError, match="unknown session config entry 'ferry.nope'"):
        so.add_session_config_entry("ferry.nope", "1")
    with pytest.raises(ferry.InvalidArgumentError, match="ferry.deterministic"):
        so.add_session_config_entry("ferry.deterministic", "maybe")


def test_adapt_threads_entry(models):
    so = ferry.SessionOptions()
    so.add_session_config_entry("ferry.adapt_threads", "off")
    ferry.InferenceSession(models["conv"], so)
    so.add_session_config_entry("ferry.adapt_threads", "sometimes")
    with pytest.raises(ferry.InvalidArgumentError,
                       match="ferry.adapt_threads: expected auto, on or off, got 'sometimes'"):
        ferry.InferenceSession(models["conv"], so)


def test_memory_limit_is_enforced(models):
    so = ferry.SessionOptions()
    so.add_session_config_entry("ferry.memory_limit", "16")
    with pytest.raises(ferry.ResourceExhaustedError):
        ferry.InferenceSession(models["conv"], so)


def test_what_has_no_effect_is_warned_about(models):
    so = ferry.SessionOptions()
    so.inter_op_num_threads = 4
    so.execution_mode = ferry.ExecutionMode.ORT_PARALLEL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    with pytest.warns(ferry.FerryWarning) as record:
        ferry.InferenceSession(models["add"], so)
    text = " ".join(str(w.message) for w in record)
    assert "inter_op_num_threads" in text and "ORT_PARALLEL" in text and "allow_spinning" in text
    so.log_severity_level = 3  # errors only: no warnings
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ferry.InferenceSession(models["add"], so)


def test_free_dimension_override(models):
    so = ferry.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 4)
    sess = ferry.InferenceSession(models["add"], so)
    assert sess.get_inputs()[0].shape == [4, 3]
    assert sess.get_outputs()[0].shape == [4, 3]
    x = np.ones((4, 3), np.float32)
    np.testing.assert_array_equal(sess.run(None, {"X": x, "Y": x})[0], 2)
    with pytest.raises(ferry.InvalidArgumentError, match="dimension 0 must be 4"):
        sess.run(None, {"X": x[:2], "Y": x[:2]})


def test_profiling(models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    so = ferry.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = "prof"
    sess = ferry.InferenceSession(models["conv"], so)
    assert sess.get_profiling_start_time_ns() > 0
    for _ in range(3):
        sess.run(None, conv_feed())
    name = sess.end_profiling()
    assert name.startswith("prof_") and name.endswith(".json")
    with open(tmp_path / name) as f:
        trace = json.load(f)
    runs = [e for e in trace["traceEvents"] if e.get("cat") == "run"]
    nodes = [e for e in trace["traceEvents"] if e.get("cat") == "node"]
    assert len(runs) == 3 and nodes and all("op" in e["args"] for e in nodes)
    assert ferry.InferenceSession(models["conv"]).end_profiling() == ""
    # The trace records the model as `ferry run --profile` does, so `ferry check --html --profile` can tell.
    with open(models["conv"], "rb") as f:
        data = f.read()
    assert trace["otherData"]["model"] == "fnv1a64:%016x:%d" % (fnv1a64(data), len(data))
    from_bytes = ferry.InferenceSession(data, so)
    from_bytes.run(None, conv_feed())
    with open(tmp_path / from_bytes.end_profiling()) as f:
        assert json.load(f)["otherData"]["model"] == trace["otherData"]["model"]


def fnv1a64(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def test_optimized_model_filepath(models, tmp_path):
    so = ferry.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.graph_optimization_level = ferry.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    ferry.InferenceSession(models["conv"], so)
    m = onnx.load(str(tmp_path / "opt.onnx"))
    assert [n.op_type for n in m.graph.node] == ["FusedConv"]
    with open(models["conv"], "rb") as f:  # from bytes too
        so.optimized_model_filepath = str(tmp_path / "opt2.onnx")
        ferry.InferenceSession(f.read(), so)
    assert os.path.exists(tmp_path / "opt2.onnx")


def test_run_options_terminate(models):
    ro = ferry.RunOptions()
    ro.terminate = True
    with pytest.raises(ferry.InvalidArgumentError, match="terminate"):
        ferry.InferenceSession(models["conv"]).run(None, conv_feed(), ro)
    ro.terminate = False
    ro.add_run_config_entry("k", "v")
    assert ro.get_run_config_entry("k") == "v"
    assert ferry.InferenceSession(models["conv"]).run(None, conv_feed(), ro)[0].shape == (1, 4, 8, 8)


def test_run_async(models):
    sess = ferry.InferenceSession(models["conv"])
    done = threading.Event()
    got = {}

    def callback(outputs, user_data, error):
        got["outputs"], got["user_data"], got["error"] = outputs, user_data, error
        done.set()

    sess.run_async(None, conv_feed(), callback, "data")
    assert done.wait(60)
    assert got["error"] == "" and got["user_data"] == "data"
    np.testing.assert_array_equal(got["outputs"][0], sess.run(None, conv_feed())[0])
    done.clear()
    sess.run_async(None, {"X": np.ones((1, 2), np.float32)}, callback, None)
    assert done.wait(60)
    assert got["outputs"] is None and "input 'X'" in got["error"]


def test_io_binding(models):
    sess = ferry.InferenceSession(models["add"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.empty((2, 3), np.float32)
    b = sess.io_binding()
    b.bind_cpu_input("X", x)
    b.bind_input("Y", "cpu", 0, np.float32, [2, 3], x.ctypes.data)
    b.bind_output("Z", "cpu", 0, np.float32, [2, 3], out.ctypes.data)
    sess.run_with_iobinding(b)
    np.testing.assert_array_equal(out, x + x)
    (result,) = b.get_outputs()
    assert np.shares_memory(result, out)
    b.clear_binding_outputs()
    b.bind_output_array("Z", out)
    x[:] = 1
    sess.run_with_iobinding(b)
    assert np.shares_memory(b.get_outputs()[0], out)
    np.testing.assert_array_equal(out, 2)
    b.clear_binding_outputs()
    b.bind_output("Z")
    sess.run_with_iobinding(b)
    np.testing.assert_array_equal(b.copy_outputs_to_cpu()[0], 2)
    wrong = np.empty((3, 3), np.float32)
    b.clear_binding_outputs()
    b.bind_output_array("Z", wrong)
    with pytest.raises(ferry.InvalidArgumentError, match="output 'Z'.*bound buffer"):
        sess.run_with_iobinding(b)
    with pytest.raises(ferry.InvalidArgumentError, match="host memory"):
        b.bind_output("Z", "cuda", 0, np.float32, [2, 3], out.ctypes.data)


def test_custom_ops_library_must_exist(tmp_path):
    so = ferry.SessionOptions()
    with pytest.raises(ferry.InvalidArgumentError, match="no such file"):
        so.register_custom_ops_library(str(tmp_path / "libnope.so"))
