"""Bad input raises the right ferry.Error subclass with a message naming what is wrong; the process stays usable."""
import numpy as np
import pytest

import ferry


def good_feed():
    return {"X": np.ones((2, 3), np.float32), "Y": np.ones((2, 3), np.float32)}


def test_error_classes():
    for cls in (ferry.InvalidModelError, ferry.UnsupportedError, ferry.InvalidArgumentError,
                ferry.ResourceExhaustedError, ferry.InternalError):
        assert issubclass(cls, ferry.Error) and issubclass(cls, RuntimeError)


def test_wrong_input_name(models):
    sess = ferry.InferenceSession(models["add"])
    f = good_feed()
    f["W"] = f.pop("Y")
    with pytest.raises(ferry.InvalidArgumentError, match="unknown input 'W'.*X, Y"):
        sess.run(None, f)


def test_missing_input(models):
    with pytest.raises(ferry.InvalidArgumentError, match="required input 'Y'.*missing"):
        ferry.InferenceSession(models["add"]).run(None, {"X": np.ones((2, 3), np.float32)})


def test_wrong_dtype(models):
    f = good_feed()
    f["X"] = f["X"].astype(np.float64)
    with pytest.raises(ferry.InvalidArgumentError, match="input 'X'.*expected dtype float32, got float64"):
        ferry.InferenceSession(models["add"]).run(None, f)


def test_wrong_rank(models):
    f = good_feed()
    f["Y"] = np.ones(3, np.float32)
    with pytest.raises(ferry.InvalidArgumentError, match="input 'Y'.*expected rank 2"):
        ferry.InferenceSession(models["add"]).run(None, f)


def test_wrong_static_dim(models):
    f = good_feed()
    f["X"] = np.ones((2, 4), np.float32)
    with pytest.raises(ferry.InvalidArgumentError, match="input 'X'.*dimension 1 must be 3"):
        ferry.InferenceSession(models["add"]).run(None, f)


def test_dtype_numpy_cannot_name(models):
    with pytest.raises(ferry.InvalidArgumentError, match="input 'X'.*datetime64|input 'X'.*has no ONNX"):
        ferry.InferenceSession(models["add"]).run(None, {"X": np.array(["2020-01-01"], "datetime64[D]"),
                                                         "Y": np.ones((2, 3), np.float32)})


def test_truncated_model_bytes(models):
    with open(models["add"], "rb") as f:
        data = f.read()
    with pytest.raises(ferry.InvalidModelError):
        ferry.InferenceSession(data[: len(data) // 2])


def test_missing_file(tmp_path):
    with pytest.raises(ferry.Error, match="nope.onnx"):
        ferry.InferenceSession(str(tmp_path / "nope.onnx"))


def test_not_a_model(tmp_path):
    p = tmp_path / "garbage.onnx"
    p.write_bytes(b"\x00\xff garbage" * 10)
    with pytest.raises(ferry.InvalidModelError, match="garbage.onnx"):
        ferry.InferenceSession(str(p))


def test_bad_arguments(models):
    sess = ferry.InferenceSession(models["add"])
    with pytest.raises(ferry.InvalidArgumentError, match="input_feed must be a dict"):
        sess.run(None, [np.ones((2, 3), np.float32)])
    with pytest.raises(ferry.InvalidArgumentError, match="output_names must be a list"):
        sess.run("Z", good_feed())
    with pytest.raises(ferry.InvalidArgumentError, match="a model path"):
        ferry.InferenceSession(42)
    with pytest.raises(ferry.InvalidArgumentError, match="unexpected keyword"):
        ferry.InferenceSession(models["add"], bogus=1)


def test_sequence_input_needs_a_list(models):
    sess = ferry.InferenceSession(models["sequence"])
    x = np.ones(2, np.float32)
    with pytest.raises(ferry.InvalidArgumentError, match="input 'Q'.*list"):
        sess.run(None, {"X": x, "Y": x, "Q": x})


def test_session_usable_after_errors(models):
    sess = ferry.InferenceSession(models["add"])
    for _ in range(3):
        with pytest.raises(ferry.InvalidArgumentError):
            sess.run(None, {"X": np.ones((2, 3), np.float64), "Y": np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(sess.run(None, good_feed())[0], 2)
