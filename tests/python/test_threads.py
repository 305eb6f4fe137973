"""Python threads: each with its own session, on one shared backend or one backend each."""
import threading
import time

import numpy as np
import pytest

import tenferro as tf
from conftest import assert_close, random_array

N_THREADS = 4
JOIN_TIMEOUT = 120


def _work(s, seed):
    """A mix of ops (some above the GIL-release threshold), each checked against NumPy."""
    rng = np.random.default_rng(seed)
    a = random_array((130, 130), np.float64, rng)  # 16900 elements: the GIL is released
    b = random_array((130, 130), np.float64, rng)
    assert_close(tf.einsum(s, "ij,jk->ik", a, b), a @ b, scale=100)
    assert_close(tf.add(s, a, b), a + b)
    assert_close(tf.exp(s, a), np.exp(a))
    assert_close(tf.sum(s, a, axis=0), np.sum(a, axis=0), scale=10)
    small = a[:8, :8] + 8 * np.eye(8)
    assert_close(tf.linalg.inv(s, small), np.linalg.inv(small), scale=100)
    assert_close(tf.fft.fft(s, a[:4]), np.fft.fft(a[:4]), scale=100)
    out = np.zeros((130, 130))
    tf.multiply(s, a, 2.0, out=out)
    assert_close(out, a * 2.0)
    with pytest.raises(ValueError):
        tf.add(s, a, np.ones(3))
    ta = tf.asarray(a)
    assert_close(ta * 3.0 - b, a * 3.0 - b)  # the operators use this thread's session


def _run_threads(target, n):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
        assert not t.is_alive(), "a thread did not finish"
    assert errors == []


def test_threads_share_one_backend(backend):
    done = []

    def target(i):
        for k in range(3):
            with backend.session() as s:
                _work(s, 100 * i + k)
        done.append(i)

    _run_threads(target, N_THREADS)
    assert sorted(done) == list(range(N_THREADS))


def test_threads_with_a_backend_each():
    backends = [tf.CpuBackend(num_threads=1) for _ in range(N_THREADS)]

    def target(i):
        with backends[i].session() as s:
            for k in range(3):
                _work(s, 7 + 10 * i + k)

    _run_threads(target, N_THREADS)


def test_waiting_for_a_session_releases_the_gil(backend):
    entered = threading.Event()
    result = {}

    def waiter():
        with backend.session() as s:  # waits while the main thread holds the CPUs
            entered.set()
            result["v"] = np.asarray(tf.add(s, np.arange(3.0), 1.0)).copy()

    with backend.session() as s:
        th = threading.Thread(target=waiter)
        th.start()
        # Python code keeps running in this thread while the other one waits for admission.
        counter = 0
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.2:
            counter += 1
        assert counter > 1000
        assert_close(tf.add(s, np.ones(2), 1.0), np.full(2, 2.0))
        assert not entered.is_set()  # the other session waits (FIFO) while this one holds the CPUs
        assert "v" not in result
    th.join(JOIN_TIMEOUT)
    assert not th.is_alive()
    assert entered.is_set()
    np.testing.assert_array_equal(result["v"], np.arange(3.0) + 1.0)


def test_current_session_is_per_thread(backend):
    seen = {}

    def other():
        try:
            tf.asarray(np.ones(2)) + 1.0
        except tf.SessionEntryError as e:
            seen["kind"] = e.kind

    with backend.session():
        th = threading.Thread(target=other)
        th.start()
        th.join(JOIN_TIMEOUT)
        assert_close(tf.asarray(np.ones(2)) + 1.0, np.full(2, 2.0))  # this thread's session
    assert seen == {"kind": "Poisoned"}  # the other thread has none of its own


def test_gil_released_during_large_op(backend):
    """While one thread runs a long einsum, another thread's Python code makes progress."""
    rng = np.random.default_rng(0)
    a = random_array((400, 400), np.float64, rng)
    other = tf.CpuBackend(num_threads=1)
    ticks = []
    windows = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.0005)

    th = threading.Thread(target=ticker)
    with other.session() as s:
        th.start()
        try:
            time.sleep(0.01)
            for _ in range(3):
                t0 = time.monotonic()
                r = tf.einsum(s, "ij,jk->ik", a, a)
                windows.append((t0, time.monotonic()))
        finally:
            stop.set()
            th.join(JOIN_TIMEOUT)
    assert_close(r, a @ a, scale=1000)
    inside = sum(1 for t in ticks for lo, hi in windows if lo < t < hi)
    assert inside >= 3, (inside, windows)  # a GIL held throughout would allow none


def test_backends_on_disjoint_cpus_run_concurrently():
    """Sessions of backends on disjoint CPUs are held at once; on shared CPUs they take turns."""
    import os

    cpus = sorted(os.sched_getaffinity(0))
    barrier = threading.Barrier(2, timeout=30)
    inside = []

    if len(cpus) >= 2:
        backends = [tf.CpuBackend(num_threads=1, cpus=[cpus[0]]), tf.CpuBackend(num_threads=1, cpus=[cpus[1]])]
        assert backends[0].cpus == [cpus[0]] and backends[1].cpus == [cpus[1]]

        def target(i):
            with backends[i].session() as s:
                barrier.wait()  # both sessions are held at the same time
                inside.append(i)
                _work(s, 1000 + i)

        _run_threads(target, 2)
        assert sorted(inside) == [0, 1]
    # Backends over the same CPUs: the second session waits for the first.
    a = tf.CpuBackend(num_threads=1, cpus=[cpus[0]])
    b = tf.CpuBackend(num_threads=1, cpus=[cpus[0]])
    entered = threading.Event()

    def waiter():
        with b.session() as s:
            entered.set()
            _work(s, 5)

    with a.session() as s:
        th = threading.Thread(target=waiter)
        th.start()
        time.sleep(0.05)
        assert not entered.is_set()
        _work(s, 6)
    th.join(JOIN_TIMEOUT)
    assert not th.is_alive() and entered.is_set()
