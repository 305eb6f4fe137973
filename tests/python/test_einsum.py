"""einsum, einsum_path, EinsumPlan and matmul vs NumPy."""
import numpy as np
import pytest

import tenferro as tf
from conftest import LAYOUTS, assert_close, layouts, random_array

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]),
    ("abc,cd,de,ea->b", [(2, 3, 4), (4, 3), (3, 2), (2, 2)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ji->", [(3, 4), (4, 3)]),
    ("ba,cb", [(3, 4), (2, 3)]),
    ("i,i,i->i", [(4,), (4,), (4,)]),
    (" ij , jk -> ki ", [(3, 4), (4, 2)]),
]


@pytest.mark.parametrize("subscripts,shapes", CASES, ids=[c[0].replace(" ", "_") for c in CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_einsum_string_form(session, subscripts, shapes, dtype):
    rng = np.random.default_rng(4)
    ops = [random_array(s, dtype, rng) for s in shapes]
    r = tf.einsum(session, subscripts, *ops)
    ref = np.einsum(subscripts, *ops)
    assert np.asarray(r).flags.c_contiguous
    assert_close(r, np.asarray(ref), scale=10)


ELLIPSIS = [
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ii->...i", [(3, 4, 4)]),
    ("i...->...", [(3, 2, 4)]),
    ("...j,j", [(2, 3, 4), (4,)]),
    ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]),
    ("...", [(2, 3)]),
    ("a...b->b...a", [(2, 3, 4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", ELLIPSIS, ids=[f"{c[0]}-{i}" for i, c in enumerate(ELLIPSIS)])
def test_einsum_ellipsis(session, subscripts, shapes):
    rng = np.random.default_rng(5)
    ops = [random_array(s, np.float64, rng) for s in shapes]
    assert_close(tf.einsum(session, subscripts, *ops), np.asarray(np.einsum(subscripts, *ops)))


@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", ["c", "f", "neg_rows", "broadcast"])
def test_einsum_layouts(session, la, lb):
    a = layouts((3, 4), np.float64, np.random.default_rng(1))[la]
    b = layouts((4, 3), np.float64, np.random.default_rng(2))[lb]
    assert_close(tf.einsum(session, "ij,jk->ik", a, b), a @ b)
    assert_close(tf.einsum(session, "ij,ji->i", a, b), np.einsum("ij,ji->i", a, b))


def test_einsum_interleaved_form(session):
    rng = np.random.default_rng(6)
    a = random_array((3, 4), np.float64, rng)
    b = random_array((4, 5), np.float64, rng)
    c = random_array((5, 2), np.float64, rng)
    assert_close(tf.einsum(session, a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    assert_close(tf.einsum(session, a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    assert_close(tf.einsum(session, a, [0, 1], b, [1, 2], c, [2, 3], [3, 0]),
                 np.einsum(a, [0, 1], b, [1, 2], c, [2, 3], [3, 0]))
    assert_close(tf.einsum(session, a, [30, 51], [51, 30]), np.einsum(a, [30, 51], [51, 30]))
    d = random_array((2, 3, 4), np.float64, rng)
    assert_close(tf.einsum(session, d, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2]),
                 np.einsum(d, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2]))
    with pytest.raises(ValueError):
        tf.einsum(session, a, [0, 52])


@pytest.mark.parametrize("optimize", [None, True, False, "auto", "greedy", "optimal", "anneal", "chain", "eliminate",
                                      "partition"])
def test_einsum_optimize(session, optimize):
    rng = np.random.default_rng(7)
    ops = [random_array(s, np.float64, rng) for s in [(4, 5), (5, 6), (6, 3), (3, 4)]]
    sub = "ab,bc,cd,da->"
    if optimize == "chain":  # a ring is no chain: the chain optimizer refuses it
        with pytest.raises(ValueError):
            tf.einsum(session, sub, *ops, optimize=optimize)
    else:
        r = tf.einsum(session, sub, *ops, optimize=optimize)
        assert_close(r, np.asarray(np.einsum(sub, *ops)), scale=10)
    sub2 = "ab,bc,cd->ad"
    assert_close(tf.einsum(session, sub2, *ops[:3], optimize=optimize), np.einsum(sub2, *ops[:3]), scale=10)


def test_einsum_explicit_path_and_numpy_path(session):
    rng = np.random.default_rng(8)
    ops = [random_array(s, np.complex128, rng) for s in [(4, 5), (5, 6), (6, 3)]]
    sub = "ab,bc,cd->ad"
    ref = np.einsum(sub, *ops)
    for path in (["einsum_path", (1, 2), (0, 1)], ["einsum_path", (0, 1), (0, 1)], [(0, 2), (0, 1)]):
        assert_close(tf.einsum(session, sub, *ops, optimize=path), ref, scale=10)
    np_path, _ = np.einsum_path(sub, *ops, optimize="optimal")
    assert_close(tf.einsum(session, sub, *ops, optimize=np_path), ref, scale=10)
    tf_path, _ = tf.einsum_path(sub, *ops, optimize="greedy")
    assert_close(tf.einsum(session, sub, *ops, optimize=tf_path), ref, scale=10)
    with pytest.raises(ValueError):
        tf.einsum(session, sub, *ops, optimize=[(0, 1, 2)])
    with pytest.raises(ValueError):
        tf.einsum(session, sub, *ops, optimize="bogus")


@pytest.mark.parametrize("optimize", ["greedy", "optimal", "auto"])
@pytest.mark.parametrize(
    "subscripts,shapes",
    [("ab,bc,cd->ad", [(8, 2), (2, 9), (9, 3)]), ("ij,jk,kl,lm->im", [(3, 4), (4, 5), (5, 6), (6, 2)]),
     ("ab,ab->", [(3, 3), (3, 3)]), ("abc,bd,cd->a", [(2, 3, 4), (3, 5), (4, 5)])],
)
def test_einsum_path_structure(subscripts, shapes, optimize):
    ops = [np.ones(s) for s in shapes]
    path, report = tf.einsum_path(subscripts, *ops, optimize=optimize)
    np_path, _ = np.einsum_path(subscripts, *ops, optimize="optimal" if optimize == "optimal" else "greedy")
    assert path[0] == "einsum_path"
    assert len(path) == len(np_path)  # the same number of contractions
    n = len(shapes)
    for step in path[1:]:  # a linear path: indices into the current operand list
        assert isinstance(step, tuple) and 1 <= len(step) <= 2
        assert all(0 <= i < n for i in step)
        n -= len(step) - 1
    assert n == 1
    assert isinstance(report, str)
    assert subscripts in report
    flops = float(report.split("Multiply-adds:")[1].split()[0])
    assert flops > 0
    assert "Largest intermediate" in report and "Optimizer" in report


def test_einsum_path_optimal_matches_numpy_cost_order():
    # A chain where the order matters: the optimal path contracts the small pair first.
    ops = [np.ones((10, 2)), np.ones((2, 10)), np.ones((10, 2))]
    path, _ = tf.einsum_path("ab,bc,cd->ad", *ops, optimize="optimal")
    np_path, _ = np.einsum_path("ab,bc,cd->ad", *ops, optimize="optimal")
    assert [tuple(sorted(p)) for p in path[1:]] == [tuple(sorted(p)) for p in np_path[1:]]


@pytest.mark.parametrize("memory_limit", [None, 16, 1000])
def test_einsum_memory_limit(session, memory_limit):
    rng = np.random.default_rng(9)
    ops = [random_array(s, np.float64, rng) for s in [(6, 8), (8, 7), (7, 6)]]
    sub = "ab,bc,cd->ad"
    assert_close(tf.einsum(session, sub, *ops, memory_limit=memory_limit), np.einsum(sub, *ops), scale=10)


def test_einsum_out(session):
    rng = np.random.default_rng(10)
    a = random_array((3, 4), np.float64, rng)
    b = random_array((4, 5), np.float64, rng)
    out = np.zeros((5, 3)).T  # a Fortran-ordered out
    r = tf.einsum(session, "ij,jk->ik", a, b, out=out)
    assert r is out
    assert_close(out, a @ b)
    bad = np.full((3, 4), 2.0)
    with pytest.raises(ValueError):
        tf.einsum(session, "ij,jk->ik", a, b, out=bad)
    np.testing.assert_array_equal(bad, np.full((3, 4), 2.0))
    with pytest.raises(TypeError):
        tf.einsum(session, "ij,jk->ik", a, b, bogus=1)


def test_einsum_errors(session):
    a = np.ones((3, 4))
    with pytest.raises(ValueError) as e:
        tf.einsum(session, "ij,jk->ik", a, np.ones((5, 2)))
    assert "einsum" in str(e.value)
    with pytest.raises(ValueError):
        tf.einsum(session, "ij,jk->ik", a)
    with pytest.raises(ValueError):
        tf.einsum(session, "ijk->i", a)
    with pytest.raises(ValueError):
        tf.einsum(session, "i.j->i", a)
    with pytest.raises(ValueError):
        tf.einsum(session, "ij->q", a)


def test_einsum_dtype_promotion(session):
    a = random_array((3, 4), np.float32)
    b = random_array((4, 2), np.float64)
    c = random_array((4, 2), np.complex64)
    assert_close(tf.einsum(session, "ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b), dtype=np.float32)
    assert_close(tf.einsum(session, "ij,jk->ik", a, c), np.einsum("ij,jk->ik", a, c))


def test_einsum_large_releases_gil(session):
    rng = np.random.default_rng(11)
    a = random_array((150, 120), np.float64, rng)
    b = random_array((120, 140), np.float64, rng)
    assert_close(tf.einsum(session, "ij,jk->ik", a, b), a @ b, scale=100)


def test_einsum_plan(session):
    rng = np.random.default_rng(12)
    shapes = [(3, 4), (4, 5), (5, 2)]
    ops = [random_array(s, np.complex128, rng) for s in shapes]
    sub = "ab,bc,cd->da"
    plan = tf.EinsumPlan(sub, *ops)
    assert plan.shape == (2, 3)
    assert plan.path[0] == "einsum_path" and len(plan.path) == 3
    assert plan.path == tf.einsum_path(sub, *ops)[0]
    assert isinstance(plan.report, str) and len(plan.report) > 0
    one = tf.EinsumPlan("ab->ba", np.ones((3, 4)))
    assert one.path[0] == "einsum_path"
    assert plan.num_slices >= 1
    for _ in range(3):
        ops = [random_array(s, np.complex128, rng) for s in shapes]
        assert_close(plan(session, *ops), np.einsum(sub, *ops), scale=10)
    out = tf.zeros((2, 3), dtype=np.complex128)
    assert plan(session, *ops, out=out) is out
    assert_close(out, np.einsum(sub, *ops), scale=10)
    with pytest.raises(ValueError):
        plan(session, np.ones((3, 4), complex), np.ones((4, 6), complex), np.ones((6, 2), complex))
    with pytest.raises(TypeError):
        plan(session, np.ones((3, 4)), np.ones((4, 5)), np.ones((5, 2)))
    with pytest.raises(ValueError):
        plan(session, ops[0], ops[1])
    p2 = tf.EinsumPlan(sub, *ops, optimize="optimal", memory_limit=4)
    assert_close(p2(session, *ops), np.einsum(sub, *ops), scale=10)
    pi = tf.EinsumPlan(ops[0], [0, 1], ops[1], [1, 2], [2, 0])
    assert_close(pi(session, ops[0], ops[1]), np.einsum("ab,bc->ca", ops[0], ops[1]), scale=10)



def test_calibrated_cost_model_plans_and_contracts(session, rng):
    """calibrate_cost_model's text form plans through einsum_path and EinsumPlan."""
    text = tf.calibrate_cost_model(session, 0.05)
    fields = dict(f.split("=") for f in text.split())
    assert set(fields) == {"gemm_rate", "gemm_half_extent", "bytes_rate", "read_factor", "write_factor",
                           "step_seconds", "element_bytes"}
    assert float(fields["gemm_rate"]) > 0 and float(fields["bytes_rate"]) > 0
    sub = "ab,bc,cd,de->ae"
    ops = [rng.standard_normal(s) for s in [(3, 9), (9, 4), (4, 7), (7, 2)]]
    path, report = tf.einsum_path(sub, *ops, cost_model=text)
    assert path[0] == "einsum_path" and len(path) == 4
    plan = tf.EinsumPlan(sub, *ops, cost_model=text)
    assert_close(plan(session, *ops), np.einsum(sub, *ops), scale=10)
    partial = tf.EinsumPlan(sub, *ops, optimize="optimal", cost_model="step_seconds=1e-7, gemm_rate=5e10")
    assert_close(partial(session, *ops), np.einsum(sub, *ops), scale=10)
    assert_close(tf.einsum(session, sub, *ops, cost_model=text), np.einsum(sub, *ops), scale=10)
    with pytest.raises(ValueError, match="parse_cost_model: unknown field 'gemm_speed'"):
        tf.einsum_path(sub, *ops, cost_model="gemm_speed=1e10")
    with pytest.raises(ValueError, match="parse_cost_model: .*cost_model.gemm_rate is 0"):
        tf.EinsumPlan(sub, *ops, cost_model="gemm_rate=0")
    with pytest.raises(ValueError, match="parse_cost_model: field step_seconds has value 'x'"):
        tf.einsum(session, sub, *ops, cost_model="step_seconds=x")
    with pytest.raises(ValueError, match="calibrate_cost_model: seconds is"):
        tf.calibrate_cost_model(session, 0.0)


MATMUL = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((6, 4), (2, 3, 4, 1)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("sa,sb", MATMUL, ids=[f"{a}@{b}" for a, b in MATMUL])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_matmul_vs_numpy(session, sa, sb, dtype):
    rng = np.random.default_rng(13)
    a = random_array(sa, dtype, rng)
    b = random_array(sb, dtype, rng)
    ref = np.matmul(a, b)
    assert_close(tf.matmul(session, a, b), np.asarray(ref), scale=10)
    ta = tf.asarray(a)
    assert_close(tf.matmul(session, ta.T.T, b), np.asarray(ref), scale=10)


def test_matmul_operator_and_out(backend):
    a = random_array((2, 3, 4), np.complex64)
    b = random_array((4, 2), np.complex64)
    with backend.session() as s:
        assert_close(tf.asarray(a) @ b, a @ b)
        assert_close(a @ tf.asarray(b), a @ b)
        out = tf.zeros((2, 3, 2), dtype=np.complex64)
        assert tf.matmul(s, a, b, out=out) is out
        assert_close(out, a @ b)


def test_matmul_errors(session):
    with pytest.raises(ValueError):
        tf.matmul(session, np.ones(3), 2.0)
    with pytest.raises(ValueError):
        tf.matmul(session, np.ones((3, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError):
        tf.matmul(session, np.ones((2, 3, 4)), np.ones((3, 4, 5)))
