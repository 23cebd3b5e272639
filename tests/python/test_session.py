"""InferenceSession against ONNX Runtime's API: run with and without output names, the inputs' and outputs'
NodeArgs, metadata, providers, overridable initializers, sequences and optionals, models from bytes."""
import numpy as np
import pytest

import ferry


def feed(batch=2):
    x = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
    return {"X": x, "Y": np.full((batch, 3), 0.5, np.float32)}


def test_run_all_outputs(models):
    sess = ferry.InferenceSession(models["add"])
    f = feed()
    out = sess.run(None, f)
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_array_equal(out[0], f["X"] + f["Y"])
    assert out[0].dtype == np.float32
    assert sess.run([], f)[0].shape == (2, 3)


def test_run_named_outputs_in_the_order_asked(models):
    sess = ferry.InferenceSession(models["const_out"])
    x = np.ones((2, 2), np.float32)
    k, n = sess.run(["K", "N"], {"X": x})
    np.testing.assert_array_equal(n, -x)
    np.testing.assert_array_equal(k, [[1, 2], [3, 4]])
    (only,) = sess.run(["N"], {"X": x})
    np.testing.assert_array_equal(only, -x)


def test_unknown_output_name(models):
    sess = ferry.InferenceSession(models["add"])
    with pytest.raises(ferry.InvalidArgumentError, match="unknown output 'nope'.*Z"):
        sess.run(["nope"], feed())


def test_node_args(models):
    sess = ferry.InferenceSession(models["add"])
    inputs = sess.get_inputs()
    assert [i.name for i in inputs] == ["X", "Y"]
    assert inputs[0].type == "tensor(float)"
    assert inputs[0].shape == ["batch", 3]
    (z,) = sess.get_outputs()
    assert (z.name, z.type) == ("Z", "tensor(float)")
    assert ferry.InferenceSession(models["add_int64"]).get_inputs()[0].type == "tensor(int64)"
    assert ferry.InferenceSession(models["string"]).get_inputs()[0].type == "tensor(string)"
    assert ferry.InferenceSession(models["string"]).get_inputs()[0].shape == [None]


def test_model_metadata(models):
    meta = ferry.InferenceSession(models["add"]).get_modelmeta()
    assert meta.producer_name == "ferry-tests"
    assert meta.graph_name == "add_graph"
    assert meta.graph_description == "adds two tensors"
    assert meta.description == "a test model"
    assert meta.domain == "ai.ferry.tests"
    assert meta.version == 7
    assert meta.custom_metadata_map == {"author": "tests", "purpose": "metadata"}


def test_providers(models):
    assert "CPUExecutionProvider" in ferry.get_available_providers()
    assert ferry.get_device() in ("CPU", "GPU")
    sess = ferry.InferenceSession(models["add"], providers=["CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    assert sess.placement()["backends"][:2] == ["cpu", "ref"]
    ref = ferry.InferenceSession(models["add"], providers=["ref"])
    assert ref.placement()["backends"] == ["ref"]
    np.testing.assert_array_equal(ref.run(None, feed())[0], sess.run(None, feed())[0])
    sess.set_providers(["ref"])
    assert sess.get_providers() == ["ref"]
    with pytest.raises(ferry.InvalidArgumentError, match="unknown provider 'TensorrtExecutionProvider'"):
        ferry.InferenceSession(models["add"], providers=["TensorrtExecutionProvider"])


def test_provider_options_are_warned_about(models):
    with pytest.warns(ferry.FerryWarning, match="provider options"):
        ferry.InferenceSession(models["add"], providers=[("CPUExecutionProvider", {"arena_extend_strategy": "x"})])


def test_overridable_initializers(models):
    sess = ferry.InferenceSession(models["overridable"])
    assert [i.name for i in sess.get_inputs()] == ["X"]
    (b,) = sess.get_overridable_initializers()
    assert (b.name, b.type, b.shape) == ("B", "tensor(float)", [3])
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], [11, 21, 31])
    np.testing.assert_array_equal(sess.run(None, {"X": x, "B": np.zeros(3, np.float32)})[0], x)


def test_sequences(models):
    sess = ferry.InferenceSession(models["sequence"])
    assert sess.get_inputs()[2].type == "seq(tensor(float))"
    assert sess.get_outputs()[0].type == "seq(tensor(float))"
    x, y = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    s, length, t = sess.run(None, {"X": x, "Y": y, "Q": [np.array([7, 8, 9], np.float32)]})
    assert isinstance(s, list) and len(s) == 2
    np.testing.assert_array_equal(s[0], x)
    np.testing.assert_array_equal(s[1], y)
    assert length == 2 and length.dtype == np.int64
    np.testing.assert_array_equal(t, [7, 8, 9])


def test_optional_input(models):
    sess = ferry.InferenceSession(models["optional"])
    assert sess.get_inputs()[0].type == "optional(tensor(float))"
    assert sess.run(None, {"O": np.zeros(2, np.float32)})[0] == np.True_
    assert sess.run(None, {"O": None})[0] == np.False_


def test_model_from_bytes(models):
    with open(models["add"], "rb") as f:
        data = f.read()
    sess = ferry.InferenceSession(data)
    np.testing.assert_array_equal(sess.run(None, feed())[0], feed()["X"] + 0.5)
    assert ferry.InferenceSession(bytearray(data)).get_inputs()[0].name == "X"


def test_path_like(models, tmp_path):
    import pathlib
    sess = ferry.InferenceSession(pathlib.Path(models["add"]))
    assert sess.get_outputs()[0].name == "Z"


def test_quickstart_model_matches_the_cli(quickstart_model, ferry_cli, tmp_path):
    """The Python session's output equals what `ferry run` writes for the same input (the C++ Session)."""
    import subprocess
    sess = ferry.InferenceSession(quickstart_model)
    inp = sess.get_inputs()[0]
    rng = np.random.default_rng(1)
    x = rng.standard_normal([d if isinstance(d, int) else 1 for d in inp.shape]).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([ferry_cli, "run", quickstart_model, "--input", "%s=%s" % (inp.name, tmp_path / "x.npy"),
                    "--output-dir", str(tmp_path / "out")], check=True, capture_output=True)
    name = sess.get_outputs()[0].name
    expected = np.load(tmp_path / "out" / (name + ".npy"))
    np.testing.assert_array_equal(sess.run(None, {inp.name: x})[0], expected)


def test_version():
    assert isinstance(ferry.__version__, str) and ferry.__version__.count(".") == 2
