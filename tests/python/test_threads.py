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
    """While one long run is in flight on another thread, this thread keeps running Python code: the longest
    pause between its clock reads stays far below the run's duration (a run holding the GIL would stall it)."""
    import time
    sess = ferry.InferenceSession(models["conv"], providers=["ref"])
    x = np.ones((256, 3, 8, 8), np.float32)
    t0 = time.perf_counter()
    sess.run(None, {"X": x})
    duration = time.perf_counter() - t0
    while duration < 0.05:  # make the run long enough to see a stall
        x = np.concatenate([x, x])
        t0 = time.perf_counter()
        sess.run(None, {"X": x})
        duration = time.perf_counter() - t0
    t = threading.Thread(target=lambda: sess.run(None, {"X": x}))
    last = time.perf_counter()
    gap = 0.0
    t.start()
    while t.is_alive():
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
    t.join()
    assert gap < duration / 2, "this thread stalled %.3f s during a %.3f s run" % (gap, duration)
