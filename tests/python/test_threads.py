"""One session run from many Python threads at once: every result right (run releases the GIL)."""
import threading

import numpy as np

import ferry


def test_eight_threads_share_a_session(models):
    sess = ferry.InferenceSession(models["conv"])
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(8)]
    expected = [sess.run(None, {"X": x})[0] for x in inputs]
    errors = []

    def work(i):
        try:
            for _ in range(50):
                (y,) = sess.run(None, {"X": inputs[i]})
                np.testing.assert_array_equal(y, expected[i])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_run_releases_the_gil(models):
    """While a run is in flight on another thread, this thread keeps running Python code."""
    sess = ferry.InferenceSession(models["conv"])
    x = np.ones((64, 3, 8, 8), np.float32)
    stop = threading.Event()
    ticks = []

    def runner():
        while not stop.is_set():
            sess.run(None, {"X": x})

    t = threading.Thread(target=runner)
    t.start()
    for _ in range(200):
        ticks.append(sum(range(1000)))
    stop.set()
    t.join()
    assert len(ticks) == 200
