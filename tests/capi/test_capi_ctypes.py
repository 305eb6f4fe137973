#!/usr/bin/env python3
"""The C ABI (include/tenferro/c/tenferro.h) from Python through ctypes only.

Usage: test_capi_ctypes.py /path/to/libtenferro.so [/path/to/tenferro/c/tenferro.h]

Exercises creation (copy and zero-copy wrap with a Python release callback), ops,
read-back, einsum (string, labels, plans), linear algebra, sessions across threads and
the error paths (status, thread-local message, untouched out-pointers). With NumPy
importable it also round-trips C-ordered, Fortran-ordered and transposed arrays and
compares results with NumPy; without it those checks are skipped. Prints
"N passed, N failed" and exits non-zero on any failure.
"""
import ctypes as C
import math
import re
import sys
import threading
import traceback

try:
    import numpy as np
except ImportError:  # the NumPy checks are skipped
    np = None

# ---------------------------------------------------------------- the library

STATUS = ["TF_OK", "TF_SHAPE", "TF_RANK", "TF_AXIS", "TF_DTYPE", "TF_ARGUMENT", "TF_INDEX", "TF_UNSUPPORTED",
          "TF_UNSUPPORTED_AD_RULE", "TF_NUMERICAL", "TF_BACKEND", "TF_RUNTIME_STATE", "TF_SESSION_ENTRY",
          "TF_INTERNAL", "TF_OUT_OF_MEMORY", "TF_UNKNOWN"]
S = {name: code for code, name in enumerate(STATUS)}
BOOL, INT32, INT64, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128 = range(7)

P = C.c_void_p            # every handle is an opaque pointer
PP = C.POINTER(C.c_void_p)
I64P = C.POINTER(C.c_int64)
SIZEP = C.POINTER(C.c_size_t)
RELEASE = C.CFUNCTYPE(None, C.c_void_p)


class EinsumOptions(C.Structure):
    _fields_ = [("optimizer", C.c_int32), ("max_intermediate_elements", C.c_double),
                ("path", C.POINTER(C.c_int32)), ("path_steps", C.c_size_t)]


SIGNATURES = {
    "tf_last_error_message": (C.c_char_p, []),
    "tf_last_error_status": (C.c_int32, []),
    "tf_status_name": (C.c_char_p, [C.c_int32]),
    "tf_dtype_name": (C.c_char_p, [C.c_int32]),
    "tf_dtype_size": (C.c_size_t, [C.c_int32]),
    "tf_backend_create": (C.c_int32, [C.c_int32, PP]),
    "tf_backend_num_threads": (C.c_int32, [P, C.POINTER(C.c_int32)]),
    "tf_backend_free": (None, [P]),
    "tf_session_open": (C.c_int32, [P, PP]),
    "tf_session_try_open": (C.c_int32, [P, PP]),
    "tf_session_close": (C.c_int32, [P]),
    "tf_session_free": (None, [P]),
    "tf_tensor_create": (C.c_int32, [C.c_int32, C.c_size_t, I64P, I64P, C.c_void_p, PP]),
    "tf_tensor_zeros": (C.c_int32, [C.c_int32, C.c_size_t, I64P, PP]),
    "tf_tensor_wrap": (C.c_int32, [C.c_void_p, C.c_int32, C.c_size_t, I64P, I64P, RELEASE, C.c_void_p, C.c_int,
                                   PP]),
    "tf_tensor_free": (None, [P]),
    "tf_tensor_rank": (C.c_int32, [P, SIZEP]),
    "tf_tensor_shape": (C.c_int32, [P, I64P, C.c_size_t]),
    "tf_tensor_strides": (C.c_int32, [P, I64P, C.c_size_t]),
    "tf_tensor_numel": (C.c_int32, [P, I64P]),
    "tf_tensor_dtype": (C.c_int32, [P, C.POINTER(C.c_int32)]),
    "tf_tensor_data": (C.c_int32, [P, PP]),
    "tf_tensor_is_read_only": (C.c_int32, [P, C.POINTER(C.c_int)]),
    "tf_tensor_copy_to": (C.c_int32, [P, C.c_void_p, C.c_size_t, I64P]),
    "tf_tensor_permute_view": (C.c_int32, [P, I64P, C.c_size_t, PP]),
    "tf_tensor_reshape_view": (C.c_int32, [P, I64P, C.c_size_t, PP]),
    "tf_tensor_slice_view": (C.c_int32, [P, C.c_int64, C.c_int64, C.c_int64, C.c_int64, PP]),
    "tf_tensor_broadcast_view": (C.c_int32, [P, I64P, C.c_size_t, PP]),
    "tf_scale": (C.c_int32, [P, P, C.c_double, PP]),
    "tf_scale_complex": (C.c_int32, [P, P, C.c_double, C.c_double, PP]),
    "tf_transpose": (C.c_int32, [P, P, I64P, C.c_size_t, PP]),
    "tf_reshape": (C.c_int32, [P, P, I64P, C.c_size_t, PP]),
    "tf_broadcast_in_dim": (C.c_int32, [P, P, I64P, C.c_size_t, I64P, C.c_size_t, PP]),
    "tf_convert": (C.c_int32, [P, P, C.c_int32, PP]),
    "tf_cast": (C.c_int32, [P, P, C.c_int32, PP]),
    "tf_contiguous": (C.c_int32, [P, P, PP]),
    "tf_copy_into": (C.c_int32, [P, P, P]),
    "tf_einsum": (C.c_int32, [P, C.c_char_p, C.POINTER(P), C.c_size_t, C.POINTER(EinsumOptions), PP]),
    "tf_einsum_labels": (C.c_int32, [P, C.POINTER(P), C.c_size_t, C.POINTER(I64P), SIZEP, I64P, C.c_size_t,
                                     C.POINTER(EinsumOptions), PP]),
    "tf_einsum_plan_create": (C.c_int32, [C.c_char_p, C.c_size_t, SIZEP, C.POINTER(I64P), C.POINTER(C.c_int32),
                                          C.POINTER(EinsumOptions), PP]),
    "tf_einsum_plan_create_labels": (C.c_int32, [C.c_size_t, C.POINTER(I64P), SIZEP, I64P, C.c_size_t,
                                                 C.POINTER(I64P), C.POINTER(C.c_int32), C.POINTER(EinsumOptions),
                                                 PP]),
    "tf_einsum_plan_execute": (C.c_int32, [P, P, C.POINTER(P), C.c_size_t, PP]),
    "tf_einsum_plan_execute_into": (C.c_int32, [P, P, C.POINTER(P), C.c_size_t, P]),
    "tf_einsum_plan_output_rank": (C.c_int32, [P, SIZEP]),
    "tf_einsum_plan_output_shape": (C.c_int32, [P, I64P, C.c_size_t]),
    "tf_einsum_plan_output_dtype": (C.c_int32, [P, C.POINTER(C.c_int32)]),
    "tf_einsum_plan_free": (None, [P]),
    "tf_svd": (C.c_int32, [P, P, PP, PP, PP]),
    "tf_qr": (C.c_int32, [P, P, C.c_int, PP, PP]),
    "tf_eigh": (C.c_int32, [P, P, C.c_int, PP, PP]),
    "tf_solve": (C.c_int32, [P, P, P, PP]),
}
for _name in ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]:
    SIGNATURES["tf_" + _name] = (C.c_int32, [P, P, P, PP])
for _name in ["neg", "conj", "abs", "exp", "log", "sin", "cos", "tanh", "sqrt"]:
    SIGNATURES["tf_" + _name] = (C.c_int32, [P, P, PP])
for _name in ["sum", "prod", "max", "min", "mean"]:
    SIGNATURES["tf_" + _name] = (C.c_int32, [P, P, I64P, C.c_size_t, C.c_int, PP])


def load(path):
    lib = C.CDLL(path)
    for name, (res, args) in SIGNATURES.items():
        fn = getattr(lib, name)  # AttributeError when a declared symbol is not exported
        fn.restype = res
        fn.argtypes = args
    return lib


class TfError(Exception):
    def __init__(self, status, message):
        super().__init__(f"{STATUS[status]}: {message}")
        self.status = status
        self.message = message


def i64s(values):
    return (C.c_int64 * max(len(values), 1))(*values)


# ---------------------------------------------------------------- a thin wrapper


class Api:
    def __init__(self, lib):
        self.lib = lib

    def call(self, name, *args):
        st = getattr(self.lib, name)(*args)
        if st != 0:
            raise TfError(st, self.lib.tf_last_error_message().decode())

    def out(self, name, *args):
        """Calls a function whose last argument is a tf_tensor** (or other handle**)."""
        h = C.c_void_p()
        self.call(name, *args, C.byref(h))
        return h.value

    def create(self, dtype, shape, values, strides=None):
        ctype = {BOOL: C.c_bool, INT32: C.c_int32, INT64: C.c_int64, FLOAT32: C.c_float, FLOAT64: C.c_double}[dtype]
        buf = (ctype * max(len(values), 1))(*values)
        st = i64s(strides) if strides is not None else None
        return self.out("tf_tensor_create", dtype, len(shape), i64s(shape), st, C.cast(buf, C.c_void_p))

    def create_complex(self, shape, values):
        flat = [p for z in values for p in (z.real, z.imag)]
        buf = (C.c_double * max(len(flat), 1))(*flat)
        return self.out("tf_tensor_create", COMPLEX128, len(shape), i64s(shape), None, C.cast(buf, C.c_void_p))

    def shape(self, t):
        r = C.c_size_t()
        self.call("tf_tensor_rank", t, C.byref(r))
        sh = (C.c_int64 * max(r.value, 1))()
        self.call("tf_tensor_shape", t, sh, r.value)
        return [sh[k] for k in range(r.value)]

    def strides(self, t):
        r = len(self.shape(t))
        st = (C.c_int64 * max(r, 1))()
        self.call("tf_tensor_strides", t, st, r)
        return [st[k] for k in range(r)]

    def dtype(self, t):
        d = C.c_int32()
        self.call("tf_tensor_dtype", t, C.byref(d))
        return d.value

    def read(self, t):
        """Elements in column-major order as a Python list (complex as complex)."""
        n = C.c_int64()
        self.call("tf_tensor_numel", t, C.byref(n))
        d = self.dtype(t)
        ctype = {BOOL: C.c_bool, INT32: C.c_int32, INT64: C.c_int64, FLOAT32: C.c_float, FLOAT64: C.c_double,
                 COMPLEX64: C.c_float, COMPLEX128: C.c_double}[d]
        count = n.value * (2 if d in (COMPLEX64, COMPLEX128) else 1)
        buf = (ctype * max(count, 1))()
        self.call("tf_tensor_copy_to", t, buf, C.sizeof(buf), None)
        vals = list(buf)[:count]
        if d in (COMPLEX64, COMPLEX128):
            return [complex(vals[2 * k], vals[2 * k + 1]) for k in range(n.value)]
        return vals

    def free(self, *ts):
        for t in ts:
            self.lib.tf_tensor_free(t)


def handles(*ts):
    return (C.c_void_p * len(ts))(*ts)


# ---------------------------------------------------------------- checks

results = {"passed": 0, "failed": 0}


def check(cond, what):
    if cond:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print("FAILED:", what, file=sys.stderr)


def expect_error(api, status, text, fn, *args):
    try:
        fn(*args)
    except TfError as e:
        check(e.status == S[status] and text in e.message and api.lib.tf_last_error_status() == S[status],
              f"expected {status} with {text!r}, got {STATUS[e.status]}: {e.message!r}")
        return
    check(False, f"expected {status} with {text!r}, got success")


def close(a, b, tol=1e-12):
    return all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b)) and len(a) == len(b)


def cm_matmul(a, b, m, k, n):  # column-major lists
    return [sum(a[i + l * m] * b[l + j * k] for l in range(k)) for j in range(n) for i in range(m)]


# ---------------------------------------------------------------- tests


def test_tables(api, s):
    lib = api.lib
    check(lib.tf_status_name(S["TF_NUMERICAL"]) == b"TF_NUMERICAL", "status name")
    check(lib.tf_dtype_name(COMPLEX64) == b"c64" and lib.tf_dtype_size(COMPLEX128) == 16, "dtype tables")
    check(lib.tf_dtype_size(12) == 0 and lib.tf_dtype_name(12) == b"?", "dtype outside the enum")


def test_create_ops_readback(api, s):
    a = api.create(FLOAT64, [2, 3], [1, 2, 3, 4, 5, 6])
    b = api.create(FLOAT64, [2, 3], [1, 3, 5, 2, 4, 6], strides=[3, 1])  # C order
    check(api.read(b) == [1, 2, 3, 4, 5, 6], "row-major source becomes column-major")
    check(api.shape(a) == [2, 3] and api.strides(a) == [1, 2], "shape and strides")
    c = api.out("tf_add", s, a, b)
    check(api.read(c) == [2, 4, 6, 8, 10, 12], "add")
    e = api.out("tf_exp", s, a)
    check(close(api.read(e), [math.exp(x) for x in range(1, 7)], 1e-15), "exp")
    m = api.out("tf_max", s, a, i64s([0]), 1, 0)
    check(api.read(m) == [2, 4, 6], "max over axis 0")
    tot = api.out("tf_mean", s, a, None, 0, 1)
    check(api.shape(tot) == [1, 1] and api.read(tot) == [3.5], "mean over all, keepdims")
    t = api.out("tf_tensor_permute_view", a, i64s([1, 0]), 2)
    check(api.shape(t) == [3, 2] and api.read(t) == [1, 3, 5, 2, 4, 6], "permute view")
    p = C.c_void_p()
    q = C.c_void_p()
    api.call("tf_tensor_data", a, C.byref(p))
    api.call("tf_tensor_data", t, C.byref(q))
    check(p.value == q.value, "a view shares the data")
    api.free(a)  # the view keeps the owner alive
    check(api.read(t) == [1, 3, 5, 2, 4, 6], "view outlives its source handle")
    f = api.create(FLOAT32, [3], [1.5, -2, 4])
    sc = api.out("tf_scale", s, f, 2.0)
    check(api.dtype(sc) == FLOAT32 and api.read(sc) == [3, -4, 8], "scale keeps f32")
    z = api.create_complex([2], [1 + 2j, 3 - 1j])
    zc = api.out("tf_conj", s, z)
    check(api.read(zc) == [1 - 2j, 3 + 1j], "conj of complex128")
    zs = api.out("tf_scale_complex", s, z, 0.0, 1.0)
    check(api.read(zs) == [1j * (1 + 2j), 1j * (3 - 1j)], "scale by i")
    cv = api.out("tf_cast", s, f, INT64)
    check(api.dtype(cv) == INT64 and api.read(cv) == [1, -2, 4], "cast to int64")
    api.free(b, c, e, m, tot, t, f, sc, z, zc, zs, cv)


def test_wrap(api, s):
    released = []

    @RELEASE
    def on_release(ctx):
        released.append(ctx)

    buf = (C.c_double * 6)(1, 2, 3, 4, 5, 6)
    w = api.out("tf_tensor_wrap", C.cast(buf, C.c_void_p), FLOAT64, 2, i64s([2, 3]), None, on_release, 1234, 0)
    p = C.c_void_p()
    api.call("tf_tensor_data", w, C.byref(p))
    check(p.value == C.addressof(buf), "wrap is zero-copy")
    sl = api.out("tf_tensor_slice_view", w, 1, 1, (1 << 63) - 1, 1)  # columns 1..2
    api.free(w)
    check(released == [], "release waits for the last view")
    buf[2] = 30.0  # (0, 1) seen through the view
    check(api.read(sl) == [30, 4, 5, 6], "the view reads caller memory")
    out_buf = (C.c_double * 6)()
    o = api.out("tf_tensor_wrap", C.cast(out_buf, C.c_void_p), FLOAT64, 2, i64s([2, 3]), None, RELEASE(), None, 0)
    src = api.create(FLOAT64, [2, 3], [6, 5, 4, 3, 2, 1])
    api.call("tf_copy_into", s, src, o)
    check(list(out_buf) == [6, 5, 4, 3, 2, 1], "copy_into writes caller memory")
    api.free(sl)
    check(released == [1234], "release called exactly once with its ctx")
    api.free(o, src)
    check(released == [1234], "no second release")
    # failed wraps release nothing and leave the out-pointer alone
    h = C.c_void_p(7)
    st = api.lib.tf_tensor_wrap(C.cast(buf, C.c_void_p), FLOAT64, 1, i64s([-1]), None, on_release, 99, 0, C.byref(h))
    check(st == S["TF_SHAPE"] and h.value == 7 and released == [1234], "failed wrap")


def test_einsum(api, s):
    a_vals = [0.5 * k - 1 for k in range(12)]
    b_vals = [1.0 / (k + 1) for k in range(8)]
    a = api.create(FLOAT64, [3, 4], a_vals)
    b = api.create(FLOAT64, [4, 2], b_vals)
    ref = cm_matmul(a_vals, b_vals, 3, 4, 2)
    ops = handles(a, b)
    r = api.out("tf_einsum", s, b"ij,jk->ik", ops, 2, None)
    check(close(api.read(r), ref), "einsum string form")
    la, lb = i64s([0, 1]), i64s([1, 2])
    labels = (I64P * 2)(C.cast(la, I64P), C.cast(lb, I64P))
    counts = (C.c_size_t * 2)(2, 2)
    rl = api.out("tf_einsum_labels", s, ops, 2, labels, counts, i64s([0, 2]), 2, None)
    check(close(api.read(rl), ref), "einsum label form")
    opts = EinsumOptions(optimizer=2)  # optimal
    ro = api.out("tf_einsum", s, b"ij,jk->ik", ops, 2, C.byref(opts))
    check(close(api.read(ro), ref), "einsum with options")
    shapes = (I64P * 2)(C.cast(i64s([3, 4]), I64P), C.cast(i64s([4, 2]), I64P))
    ranks = (C.c_size_t * 2)(2, 2)
    dts = (C.c_int32 * 2)(FLOAT64, FLOAT64)
    plan = api.out("tf_einsum_plan_create", b"ij,jk->ik", 2, ranks, shapes, dts, None)
    rank = C.c_size_t()
    api.call("tf_einsum_plan_output_rank", plan, C.byref(rank))
    osh = (C.c_int64 * 2)()
    api.call("tf_einsum_plan_output_shape", plan, osh, 2)
    check(rank.value == 2 and list(osh) == [3, 2], "plan output shape")
    for _ in range(3):
        rp = api.out("tf_einsum_plan_execute", plan, s, ops, 2)
        check(close(api.read(rp), ref), "plan execute")
        api.free(rp)
    expect_error(api, "TF_ARGUMENT", "einsum", api.out, "tf_einsum", s, b"ij,jk->i$", ops, 2, None)
    expect_error(api, "TF_SHAPE", "", api.out, "tf_einsum_plan_execute", plan, s, handles(b, a), 2)
    api.lib.tf_einsum_plan_free(plan)
    api.free(a, b, r, rl, ro)


def test_linalg(api, s):
    vals = [math.sin(k + 1.0) for k in range(12)]  # 4x3
    a = api.create(FLOAT64, [4, 3], vals)
    u, sv, vh = C.c_void_p(), C.c_void_p(), C.c_void_p()
    api.call("tf_svd", s, a, C.byref(u), C.byref(sv), C.byref(vh))
    U, Sv, Vh = api.read(u.value), api.read(sv.value), api.read(vh.value)
    rec = [sum(U[i + l * 4] * Sv[l] * Vh[l + j * 3] for l in range(3)) for j in range(3) for i in range(4)]
    check(close(rec, vals, 1e-12) and Sv == sorted(Sv, reverse=True), "svd reconstructs")
    q, r = C.c_void_p(), C.c_void_p()
    api.call("tf_qr", s, a, 0, C.byref(q), C.byref(r))
    check(close(cm_matmul(api.read(q.value), api.read(r.value), 4, 3, 3), vals, 1e-12), "qr reconstructs")
    h = api.create(FLOAT64, [2, 2], [2, 1, 1, 2])
    w, v = C.c_void_p(), C.c_void_p()
    api.call("tf_eigh", s, h, 0, C.byref(w), C.byref(v))
    check(close(api.read(w.value), [1, 3]), "eigh eigenvalues")
    rhs = api.create(FLOAT64, [2], [3, 3])
    x = api.out("tf_solve", s, h, rhs)
    check(close(api.read(x), [1, 1]), "solve")
    sing = api.create(FLOAT64, [2, 2], [1, 2, 2, 4])
    keep = C.c_void_p(5)
    st = api.lib.tf_solve(s, sing, rhs, C.byref(keep))
    msg = api.lib.tf_last_error_message().decode()
    check(st == S["TF_NUMERICAL"] and "getrf" in msg and keep.value == 5, f"singular solve: {msg}")
    api.free(a, u.value, sv.value, vh.value, q.value, r.value, h, w.value, v.value, rhs, x, sing)


def test_errors(api, s):
    a = api.create(FLOAT64, [2, 3], [1] * 6)
    b = api.create(FLOAT64, [3, 2], [1] * 6)
    expect_error(api, "TF_SHAPE", "add", api.out, "tf_add", s, a, b)
    expect_error(api, "TF_ARGUMENT", "tf_add: session is null", api.out, "tf_add", None, a, b)
    expect_error(api, "TF_ARGUMENT", "tf_neg: x is null", api.out, "tf_neg", s, None)
    expect_error(api, "TF_DTYPE", "dtype 42", api.out, "tf_tensor_zeros", 42, 1, i64s([2]))
    expect_error(api, "TF_AXIS", "", api.out, "tf_sum", s, a, i64s([2]), 1, 0)
    expect_error(api, "TF_RANK", "", api.out, "tf_transpose", s, a, i64s([0]), 1)
    i = api.create(INT32, [2], [1, 2])
    expect_error(api, "TF_DTYPE", "sqrt", api.out, "tf_sqrt", s, i)
    expect_error(api, "TF_ARGUMENT", "2.5", api.out, "tf_convert", s, api.create(FLOAT64, [1], [2.5]), INT32)
    keep = C.c_void_p(3)
    st = api.lib.tf_mul(s, a, b, C.byref(keep))
    check(st == S["TF_SHAPE"] and keep.value == 3, "out-pointer untouched on failure")
    ok = api.out("tf_neg", s, a)
    check(api.lib.tf_last_error_status() == S["TF_SHAPE"], "success keeps the last error")
    api.free(a, b, i, ok)


def test_threads(api, backend, s):
    """A second thread cannot enter while we hold the CPUs; its error stays its own."""
    seen = {}

    def worker():
        h = C.c_void_p(9)
        seen["status"] = api.lib.tf_session_try_open(backend, C.byref(h))
        seen["message"] = api.lib.tf_last_error_message().decode()
        seen["untouched"] = h.value == 9
        x = api.create(FLOAT64, [1], [1.0])
        o = C.c_void_p()
        seen["foreign"] = api.lib.tf_neg(s, x, C.byref(o))  # our session, their thread
        api.free(x)

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    check(seen["status"] == S["TF_SESSION_ENTRY"] and "Contended" in seen["message"] and seen["untouched"],
          f"try_open contends: {seen}")
    check(seen["foreign"] == S["TF_SESSION_ENTRY"], "a session is thread-affine")
    check(api.lib.tf_last_error_status() != S["TF_SESSION_ENTRY"] or "Contended" not in
          api.lib.tf_last_error_message().decode(), "the last error is per thread")


def test_numpy(api, s):
    """Zero-copy wrapping of NumPy arrays in any layout; results against NumPy."""
    rng = np.random.default_rng(7)
    owners = {}

    @RELEASE
    def release(ctx):
        owners.pop(ctx)

    def wrap(arr):
        key = id(arr)
        owners[key] = arr  # keeps the array alive until tenferro releases it
        strides = [st // arr.itemsize for st in arr.strides]
        code = {np.float32: FLOAT32, np.float64: FLOAT64, np.complex64: COMPLEX64, np.complex128: COMPLEX128,
                np.int32: INT32, np.int64: INT64, np.bool_: BOOL}[arr.dtype.type]
        return api.out("tf_tensor_wrap", C.c_void_p(arr.ctypes.data), code, arr.ndim, i64s(arr.shape), i64s(strides),
                       release, key, 0 if arr.flags.writeable else 1)

    def to_numpy(t, dtype):
        shape = api.shape(t)
        out = np.empty(shape, dtype=dtype, order="F")
        api.call("tf_tensor_copy_to", t, C.c_void_p(out.ctypes.data), out.nbytes, None)
        return out

    a = rng.standard_normal((4, 5))           # C order
    f = np.asfortranarray(rng.standard_normal((5, 3)))
    tr = rng.standard_normal((5, 4)).T        # a transposed view
    ta, tf, ttr = wrap(a), wrap(f), wrap(tr)
    p = C.c_void_p()
    api.call("tf_tensor_data", ta, C.byref(p))
    check(p.value == a.ctypes.data, "numpy wrap is zero-copy")
    mm = api.out("tf_einsum", s, b"ij,jk->ik", handles(ta, tf), 2, None)
    check(np.allclose(to_numpy(mm, np.float64), a @ f), "einsum on C- and F-ordered arrays")
    ad = api.out("tf_add", s, ta, ttr)
    check(np.allclose(to_numpy(ad, np.float64), a + tr), "add with a transposed view")
    # C-order read-back with explicit strides
    c_out = np.empty((4, 5))
    api.call("tf_tensor_copy_to", ad, C.c_void_p(c_out.ctypes.data), c_out.nbytes, i64s([5, 1]))
    check(np.allclose(c_out, a + tr), "read back in C order")
    z = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))).astype(np.complex128)
    tz = wrap(z)
    u, sv, vh = C.c_void_p(), C.c_void_p(), C.c_void_p()
    api.call("tf_svd", s, tz, C.byref(u), C.byref(sv), C.byref(vh))
    check(np.allclose(to_numpy(sv.value, np.float64), np.linalg.svd(z, compute_uv=False)), "svd values vs numpy")
    rev = a[::-1, ::2]  # negative and step strides
    trev = wrap(rev)
    red = api.out("tf_sum", s, trev, i64s([1]), 1, 0)
    check(np.allclose(to_numpy(red, np.float64), rev.sum(axis=1)), "sum over a negative-stride view")
    api.free(ta, tf, ttr, mm, ad, tz, u.value, sv.value, vh.value, trev, red)
    check(owners == {}, "every wrapped array released")


def test_header_matches(header):
    """Every function the header declares has a signature here (and so is exported)."""
    with open(header, encoding="utf-8") as f:
        declared = set(re.findall(r"^TF_API [^(]*?\b(tf_[a-z0-9_]+)\(", f.read(), re.M))
    check(len(declared) > 60 and declared == set(SIGNATURES),
          f"header vs ctypes signatures: missing {sorted(declared - set(SIGNATURES))}, "
          f"extra {sorted(set(SIGNATURES) - declared)}")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    api = Api(load(sys.argv[1]))
    if len(sys.argv) == 3:
        test_header_matches(sys.argv[2])
    backend = api.out("tf_backend_create", 1)
    s = api.out("tf_session_open", backend)
    tests = [test_tables, test_create_ops_readback, test_wrap, test_einsum, test_linalg, test_errors]
    for t in tests:
        try:
            t(api, s)
        except Exception:  # a raised TfError is a failed call: report and go on
            results["failed"] += 1
            print(f"FAILED: {t.__name__} raised:", file=sys.stderr)
            traceback.print_exc()
    try:
        test_threads(api, backend, s)
    except Exception:
        results["failed"] += 1
        traceback.print_exc()
    if np is not None:
        try:
            test_numpy(api, s)
        except Exception:
            results["failed"] += 1
            traceback.print_exc()
    else:
        print("numpy not importable: NumPy checks skipped")
    api.call("tf_session_close", s)
    api.lib.tf_session_free(s)
    api.lib.tf_backend_free(backend)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
