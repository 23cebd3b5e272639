"""Values in and out: every NumPy dtype Ferry has, strings, non-contiguous arrays (copied, not rejected), zero copy
of inputs, outputs that own Ferry's buffers, outputs that cannot write through to the model's constants."""
import sys

import numpy as np
import pytest

import ferry


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8", "uint8", "int32", "int64"])
def test_dtypes(models, dtype):
    sess = ferry.InferenceSession(models["add_" + dtype])
    x = (np.arange(6).reshape(2, 3) % 5).astype(dtype)
    y = np.ones((2, 3), dtype)
    (z,) = sess.run(None, {"X": x, "Y": y})
    assert z.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(z, x + y)


def test_float32(models):
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    (z,) = ferry.InferenceSession(models["add"]).run(None, {"X": x, "Y": x})
    np.testing.assert_array_equal(z, x + x)


def test_bool(models):
    a = np.array([[True, False, True], [False, False, True]])
    b = np.array([[True, True, False], [False, True, True]])
    (z,) = ferry.InferenceSession(models["and_bool"]).run(None, {"X": a, "Y": b})
    assert z.dtype == np.bool_
    np.testing.assert_array_equal(z, a & b)


@pytest.mark.parametrize("make", [lambda v: np.array(v, dtype=object), lambda v: np.array(v), lambda v: np.array(
    [s.encode() for s in v])])
def test_strings(models, make):
    values = ["ferry", "", "ünïcode", "a longer string than the small-string buffer"]
    (y,) = ferry.InferenceSession(models["string"]).run(None, {"X": make(values)})
    assert y.dtype == object
    assert list(y) == values


def test_non_contiguous_inputs_are_copied(models):
    big = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = big[:, ::2]  # strided
    y = np.asfortranarray(np.ones((4, 3), np.float32))
    assert not x.flags.c_contiguous
    (z,) = ferry.InferenceSession(models["add"]).run(None, {"X": x, "Y": y})
    np.testing.assert_array_equal(z, x + 1)


def test_big_endian_input(models):
    x = np.arange(6, dtype=">f4").reshape(2, 3)
    (z,) = ferry.InferenceSession(models["add"]).run(None, {"X": x, "Y": np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(z, x.astype(np.float32))


def test_lists_and_scalars_are_read_as_arrays(models):
    (z,) = ferry.InferenceSession(models["add"]).run(None, {"X": [[1.0, 2.0, 3.0]],
                                                              "Y": np.zeros((1, 3), np.float32)})
    np.testing.assert_array_equal(z, [[1, 2, 3]])


def test_input_is_read_in_place_and_released(models):
    sess = ferry.InferenceSession(models["add"])
    x = np.ones((2, 3), np.float32)
    before = sys.getrefcount(x)
    sess.run(None, {"X": x, "Y": x})
    assert sys.getrefcount(x) == before  # the session holds no reference after the run


def test_outputs_own_ferrys_buffer(models):
    (z,) = ferry.InferenceSession(models["add"]).run(None, {"X": np.ones((2, 3), np.float32),
                                                              "Y": np.ones((2, 3), np.float32)})
    assert not z.flags.owndata and z.base is not None  # a view of the capsule holding Ferry's tensor
    assert type(z.base).__name__ == "PyCapsule"
    assert z.flags.writeable and z.flags.c_contiguous
    z[0, 0] = 5  # writable, and the caller's alone


def test_outputs_never_write_through_to_constants(models):
    sess = ferry.InferenceSession(models["const_out"])
    x = np.ones((2, 2), np.float32)
    n, k = sess.run(None, {"X": x})
    k[:] = 0
    n[:] = 0
    _, k2 = sess.run(None, {"X": x})
    np.testing.assert_array_equal(k2, [[1, 2], [3, 4]])


def test_output_asked_twice_gives_two_arrays(models):
    sess = ferry.InferenceSession(models["add"])
    f = {"X": np.ones((2, 3), np.float32), "Y": np.ones((2, 3), np.float32)}
    a, b = sess.run(["Z", "Z"], f)
    assert not np.shares_memory(a, b)
    np.testing.assert_array_equal(a, b)


def test_results_of_earlier_runs_stay_valid(models):
    sess = ferry.InferenceSession(models["add"])
    first = sess.run(None, {"X": np.ones((2, 3), np.float32), "Y": np.ones((2, 3), np.float32)})[0]
    for _ in range(5):
        sess.run(None, {"X": np.zeros((2, 3), np.float32), "Y": np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(first, 2)


def test_empty_tensors(models):
    (z,) = ferry.InferenceSession(models["add"]).run(None, {"X": np.zeros((0, 3), np.float32),
                                                              "Y": np.zeros((0, 3), np.float32)})
    assert z.shape == (0, 3)


def test_memory_is_stable_over_10000_runs(models):
    def rss_kb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    sess = ferry.InferenceSession(models["add"])
    f = {"X": np.ones((8, 3), np.float32), "Y": np.ones((8, 3), np.float32)}
    for _ in range(500):
        sess.run(None, f)
    before = rss_kb()
    for _ in range(10000):
        sess.run(None, f)
    grown = rss_kb() - before
    assert grown < 4096, "RSS grew by %d KiB over 10,000 runs" % grown
