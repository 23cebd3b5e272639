"""DLPack: torch tensors feed a session without a copy; outputs reach torch without a copy."""
import numpy as np
import pytest

import ferry

torch = pytest.importorskip("torch")


def test_torch_inputs(models):
    sess = ferry.InferenceSession(models["add"])
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    (z,) = sess.run(None, {"X": x, "Y": x})
    np.testing.assert_array_equal(z, (x + x).numpy())


def test_strided_torch_input_is_copied(models):
    sess = ferry.InferenceSession(models["add"])
    x = torch.arange(12, dtype=torch.float32).reshape(2, 6)[:, ::2]
    assert not x.is_contiguous()
    (z,) = sess.run(None, {"X": x, "Y": torch.zeros(2, 3)})
    np.testing.assert_array_equal(z, x.numpy())


def test_torch_int64_and_bool(models):
    (z,) = ferry.InferenceSession(models["add_int64"]).run(None, {"X": torch.ones(2, 3, dtype=torch.int64),
                                                                   "Y": torch.ones(2, 3, dtype=torch.int64)})
    assert z.dtype == np.int64 and (z == 2).all()


def test_outputs_to_torch_without_a_copy(models):
    sess = ferry.InferenceSession(models["add"])
    (z,) = sess.run(None, {"X": np.ones((2, 3), np.float32), "Y": np.ones((2, 3), np.float32)})
    t = torch.from_dlpack(z)
    assert t.data_ptr() == z.ctypes.data
    back = ferry.from_dlpack(t)
    assert np.shares_memory(back, z)


def test_wrong_dlpack_dtype(models):
    sess = ferry.InferenceSession(models["add"])
    with pytest.raises(ferry.InvalidArgumentError, match="input 'X'.*expected dtype float32, got float64"):
        sess.run(None, {"X": torch.ones(2, 3, dtype=torch.float64), "Y": torch.ones(2, 3)})
