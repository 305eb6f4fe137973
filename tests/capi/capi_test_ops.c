/* The C ABI's elementwise ops, reductions, structural ops and views against reference
 * loops (part of capi_test; see capi_test.c). */
#include <complex.h>
#include <string.h>

#include "capi_check.h"

/* ------------------------------------------------------------------ elementwise */

typedef tf_status (*binary_fn)(tf_session*, const tf_tensor*, const tf_tensor*, tf_tensor**);
typedef tf_status (*unary_fn)(tf_session*, const tf_tensor*, tf_tensor**);

void test_elementwise(tf_session* s) {
  enum { M = 3, N = 4 };
  const int64_t shape[2] = {M, N};
  double a[M * N], b[M * N], out[M * N];
  for (int k = 0; k < M * N; ++k) {
    a[k] = rnd() * 2;
    b[k] = 0.5 + fabs(rnd());  /* positive: div, pow and friends stay finite */
  }
  tf_tensor *ta = f64_tensor(2, shape, a), *tb = f64_tensor(2, shape, b);
  const struct { binary_fn fn; const char* name; } bins[] = {
      {tf_add, "add"}, {tf_sub, "sub"}, {tf_mul, "mul"}, {tf_div, "div"}, {tf_maximum, "maximum"}, {tf_minimum, "minimum"}};
  for (int f = 0; f < 6; ++f) {
    tf_tensor* r = NULL;
    OK(bins[f].fn(s, ta, tb, &r));
    read_f64(r, out, M * N);
    for (int k = 0; k < M * N; ++k) {
      const double x = a[k], y = b[k];
      const double want = f == 0 ? x + y : f == 1 ? x - y : f == 2 ? x * y : f == 3 ? x / y : f == 4 ? fmax(x, y) : fmin(x, y);
      if (!near(out[k], want, 1e-15)) {
        fprintf(stderr, "  %s at %d: %.17g vs %.17g\n", bins[f].name, k, out[k], want);
        CHECK(0);
      }
    }
    tf_tensor_free(r);
  }
  /* pow on a positive base */
  {
    tf_tensor *pa = NULL, *r = NULL;
    OK(tf_abs(s, ta, &pa));
    OK(tf_pow(s, pa, tb, &r));
    read_f64(r, out, M * N);
    for (int k = 0; k < M * N; ++k) CHECK(near(out[k], pow(fabs(a[k]), b[k]), 1e-13));
    tf_tensor_free(pa);
    tf_tensor_free(r);
  }
  const struct { unary_fn fn; double (*ref)(double); int positive; } uns[] = {
      {tf_abs, fabs, 0}, {tf_exp, exp, 0}, {tf_log, log, 1}, {tf_sin, sin, 0},
      {tf_cos, cos, 0},  {tf_tanh, tanh, 0}, {tf_sqrt, sqrt, 1}};
  for (size_t f = 0; f < sizeof uns / sizeof uns[0]; ++f) {
    tf_tensor* r = NULL;
    OK(uns[f].fn(s, uns[f].positive ? tb : ta, &r));
    read_f64(r, out, M * N);
    for (int k = 0; k < M * N; ++k) CHECK(near(out[k], uns[f].ref(uns[f].positive ? b[k] : a[k]), 1e-14));
    tf_tensor_free(r);
  }
  {
    tf_tensor* r = NULL;
    OK(tf_neg(s, ta, &r));
    read_f64(r, out, M * N);
    for (int k = 0; k < M * N; ++k) CHECK(out[k] == -a[k]);
    tf_tensor_free(r);
  }
  /* broadcasting aligns at the first axis: [M] + [M, N] adds a column to every column */
  {
    const int64_t m[1] = {M};
    const double col[M] = {10, 20, 30};
    tf_tensor *tc = f64_tensor(1, m, col), *r = NULL;
    OK(tf_add(s, ta, tc, &r));
    int64_t sh[2];
    OK(tf_tensor_shape(r, sh, 2));
    CHECK(sh[0] == M && sh[1] == N);
    read_f64(r, out, M * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) CHECK(out[i + j * M] == a[i + j * M] + col[i]);
    tf_tensor_free(tc);
    tf_tensor_free(r);
  }
  /* complex: interleaved (re, im) as double complex; conj, mul, abs */
  {
    const int64_t n3[1] = {3};
    const double complex z[3] = {1 + 2 * I, -3 + 0.5 * I, 0 - 1 * I};
    tf_tensor *tz = NULL, *c = NULL, *p = NULL, *ab = NULL;
    OK(tf_tensor_create(TF_COMPLEX128, 1, n3, NULL, z, &tz));
    OK(tf_conj(s, tz, &c));
    OK(tf_mul(s, tz, c, &p));
    OK(tf_abs(s, tz, &ab));
    double complex zc[3], zp[3];
    double za[3];
    OK(tf_tensor_copy_to(c, zc, sizeof zc, NULL));
    OK(tf_tensor_copy_to(p, zp, sizeof zp, NULL));
    tf_dtype dt;
    OK(tf_tensor_dtype(ab, &dt));
    CHECK(dt == TF_FLOAT64);
    read_f64(ab, za, 3);
    for (int k = 0; k < 3; ++k) {
      CHECK(zc[k] == conj(z[k]));
      CHECK(near(creal(zp[k]), creal(z[k] * conj(z[k])), 1e-15) && cimag(zp[k]) == 0);
      CHECK(near(za[k], cabs(z[k]), 1e-15));
    }
    tf_tensor* sc = NULL;
    OK(tf_scale_complex(s, tz, 0, 1, &sc));  /* multiply by i */
    OK(tf_tensor_copy_to(sc, zp, sizeof zp, NULL));
    for (int k = 0; k < 3; ++k) CHECK(zp[k] == I * z[k]);
    tf_tensor_free(tz);
    tf_tensor_free(c);
    tf_tensor_free(p);
    tf_tensor_free(ab);
    tf_tensor_free(sc);
  }
  /* scale: weak scalar (f32 stays f32; i32 gives f64); scale_complex of f32 gives c64 */
  {
    const int64_t n2[1] = {2};
    const float f[2] = {1.5f, -2};
    const int32_t iv[2] = {3, -4};
    tf_tensor *tf32 = NULL, *ti = NULL, *r1 = NULL, *r2 = NULL, *r3 = NULL;
    OK(tf_tensor_create(TF_FLOAT32, 1, n2, NULL, f, &tf32));
    OK(tf_tensor_create(TF_INT32, 1, n2, NULL, iv, &ti));
    OK(tf_scale(s, tf32, 2.0, &r1));
    OK(tf_scale(s, ti, 0.5, &r2));
    OK(tf_scale_complex(s, tf32, 1, -1, &r3));
    tf_dtype d1, d2, d3;
    OK(tf_tensor_dtype(r1, &d1));
    OK(tf_tensor_dtype(r2, &d2));
    OK(tf_tensor_dtype(r3, &d3));
    CHECK(d1 == TF_FLOAT32 && d2 == TF_FLOAT64 && d3 == TF_COMPLEX64);
    float o1[2];
    double o2[2];
    float complex o3[2];
    OK(tf_tensor_copy_to(r1, o1, sizeof o1, NULL));
    OK(tf_tensor_copy_to(r2, o2, sizeof o2, NULL));
    OK(tf_tensor_copy_to(r3, o3, sizeof o3, NULL));
    CHECK(o1[0] == 3.0f && o1[1] == -4.0f && o2[0] == 1.5 && o2[1] == -2.0);
    CHECK(o3[0] == 1.5f * (1 - I) && o3[1] == -2.0f * (1 - I));
    tf_tensor_free(tf32);
    tf_tensor_free(ti);
    tf_tensor_free(r1);
    tf_tensor_free(r2);
    tf_tensor_free(r3);
  }
  tf_tensor_free(ta);
  tf_tensor_free(tb);
}

/* ------------------------------------------------------------------ reductions */

void test_reductions(tf_session* s) {
  enum { M = 3, N = 5 };
  const int64_t shape[2] = {M, N};
  double a[M * N];
  for (int k = 0; k < M * N; ++k) a[k] = 0.5 + rnd();
  tf_tensor* ta = f64_tensor(2, shape, a);
  typedef tf_status (*red_fn)(tf_session*, const tf_tensor*, const int64_t*, size_t, int, tf_tensor**);
  const red_fn fns[5] = {tf_sum, tf_prod, tf_max, tf_min, tf_mean};
  for (int f = 0; f < 5; ++f) {
    /* over axis 1 (per row), over axis -2 (per column, keepdims), over all (NULL) */
    const int64_t ax1[1] = {1}, axm2[1] = {-2};
    tf_tensor *r1 = NULL, *r0 = NULL, *rall = NULL;
    OK(fns[f](s, ta, ax1, 1, 0, &r1));
    OK(fns[f](s, ta, axm2, 1, 1, &r0));
    OK(fns[f](s, ta, NULL, 0, 0, &rall));
    double o1[M], o0[N], oall;
    read_f64(r1, o1, M);
    read_f64(r0, o0, N);
    read_f64(rall, &oall, 1);
    size_t rank = 9;
    int64_t sh[2];
    OK(tf_tensor_rank(r0, &rank));
    OK(tf_tensor_shape(r0, sh, 2));
    CHECK(rank == 2 && sh[0] == 1 && sh[1] == N);
    OK(tf_tensor_rank(rall, &rank));
    CHECK(rank == 0);
    double total = f == 1 ? 1 : f == 2 ? -INFINITY : f == 3 ? INFINITY : 0;
    for (int i = 0; i < M; ++i) {
      double acc = f == 1 ? 1 : f == 2 ? -INFINITY : f == 3 ? INFINITY : 0;
      for (int j = 0; j < N; ++j) {
        const double x = a[i + j * M];
        acc = f == 1 ? acc * x : f == 2 ? fmax(acc, x) : f == 3 ? fmin(acc, x) : acc + x;
        total = f == 1 ? total * x : f == 2 ? fmax(total, x) : f == 3 ? fmin(total, x) : total + x;
      }
      if (f == 4) acc /= N;
      CHECK(near(o1[i], acc, 1e-14));
    }
    for (int j = 0; j < N; ++j) {
      double acc = f == 1 ? 1 : f == 2 ? -INFINITY : f == 3 ? INFINITY : 0;
      for (int i = 0; i < M; ++i) {
        const double x = a[i + j * M];
        acc = f == 1 ? acc * x : f == 2 ? fmax(acc, x) : f == 3 ? fmin(acc, x) : acc + x;
      }
      if (f == 4) acc /= M;
      CHECK(near(o0[j], acc, 1e-14));
    }
    if (f == 4) total /= M * N;
    CHECK(near(oall, total, 1e-13));
    tf_tensor_free(r1);
    tf_tensor_free(r0);
    tf_tensor_free(rall);
  }
  /* a non-NULL empty axis list reduces nothing */
  {
    const int64_t none[1] = {0};
    tf_tensor* r = NULL;
    double o[M * N];
    OK(tf_sum(s, ta, none, 0, 0, &r));
    read_f64(r, o, M * N);
    for (int k = 0; k < M * N; ++k) CHECK(o[k] == a[k]);
    tf_tensor_free(r);
  }
  tf_tensor_free(ta);
}

/* ------------------------------------------------------------------ structural and views */

void test_structural(tf_session* s) {
  const int64_t shape[3] = {2, 3, 4};
  double a[24], o[24];
  for (int k = 0; k < 24; ++k) a[k] = k;
  tf_tensor* ta = f64_tensor(3, shape, a);
  /* transpose copy: result axis i is axis perm[i] */
  const int64_t perm[3] = {2, 0, 1};
  tf_tensor *t = NULL, *v = NULL, *c = NULL;
  OK(tf_transpose(s, ta, perm, 3, &t));
  read_f64(t, o, 24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) CHECK(o[k + 4 * (i + 2 * j)] == a[i + 2 * (j + 3 * k)]);
  /* the view form shares data; contiguous() of it equals the copy */
  OK(tf_tensor_permute_view(ta, perm, 3, &v));
  void *pv = NULL, *pa = NULL;
  OK(tf_tensor_data(v, &pv));
  OK(tf_tensor_data(ta, &pa));
  CHECK(pv == pa);
  OK(tf_contiguous(s, v, &c));
  double oc[24];
  read_f64(c, oc, 24);
  read_f64(v, o, 24);  /* copy_to of a strided view reads it in column-major order */
  for (int k = 0; k < 24; ++k) CHECK(oc[k] == o[k]);
  read_f64(t, o, 24);
  for (int k = 0; k < 24; ++k) CHECK(oc[k] == o[k]);
  /* reshape (view when possible), reshape_view refusing a transposed layout */
  const int64_t flat[2] = {6, -1};
  tf_tensor *r = NULL, *rv = SENTINEL, *rc = NULL;
  OK(tf_reshape(s, ta, flat, 2, &r));
  int64_t sh[2];
  OK(tf_tensor_shape(r, sh, 2));
  CHECK(sh[0] == 6 && sh[1] == 4);
  OK(tf_tensor_data(r, &pv));
  CHECK(pv == pa);
  FAILS(tf_tensor_reshape_view(v, flat, 2, &rv), TF_ARGUMENT, "");
  CHECK(rv == SENTINEL);
  OK(tf_reshape(s, v, flat, 2, &rc));  /* copies instead */
  read_f64(rc, o, 24);
  for (int k = 0; k < 24; ++k) CHECK(o[k] == oc[k]);
  OK(tf_tensor_reshape_view(ta, flat, 2, &rv));
  tf_tensor_free(rv);
  /* slice view: axis 1, elements 2, 1, 0 (negative step) */
  tf_tensor* sl = NULL;
  OK(tf_tensor_slice_view(ta, 1, -1, TF_SLICE_END, -1, &sl));
  FAILS(tf_tensor_shape(sl, sh, 2), TF_ARGUMENT, "capacity 2 is below the rank 3");
  int64_t sh3[3];
  OK(tf_tensor_shape(sl, sh3, 3));
  CHECK(sh3[0] == 2 && sh3[1] == 3 && sh3[2] == 4);
  read_f64(sl, o, 24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) CHECK(o[i + 2 * (j + 3 * k)] == a[i + 2 * ((2 - j) + 3 * k)]);
  /* broadcast view: read-only, zero stride */
  const int64_t n2[1] = {2}, bshape[2] = {2, 5};
  const double col[2] = {7, 8};
  tf_tensor *tc = f64_tensor(1, n2, col), *bv = NULL, *bd = NULL;
  OK(tf_tensor_broadcast_view(tc, bshape, 2, &bv));
  int ro = 0;
  int64_t bst[2];
  OK(tf_tensor_is_read_only(bv, &ro));
  OK(tf_tensor_strides(bv, bst, 2));
  CHECK(ro == 1 && bst[0] == 1 && bst[1] == 0);
  /* broadcast_in_dim: x [2] to [5, 2] along result axis 1: r[i, j] = x[j] */
  const int64_t bid_shape[2] = {5, 2}, dims[1] = {1};
  OK(tf_broadcast_in_dim(s, tc, bid_shape, 2, dims, 1, &bd));
  double ob[10];
  read_f64(bd, ob, 10);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 2; ++j) CHECK(ob[i + 5 * j] == col[j]);
  /* convert (checked) and cast (lossy) */
  const double fr[3] = {1.0, -2.0, 2.75};
  const int64_t n3[1] = {3};
  tf_tensor *tfr = f64_tensor(1, n3, fr), *ci = NULL, *ok2 = NULL, *bad = SENTINEL;
  FAILS(tf_convert(s, tfr, TF_INT32, &bad), TF_ARGUMENT, "2.75");
  CHECK(bad == SENTINEL);
  OK(tf_cast(s, tfr, TF_INT32, &ci));
  int32_t oi[3];
  OK(tf_tensor_copy_to(ci, oi, sizeof oi, NULL));
  CHECK(oi[0] == 1 && oi[1] == -2 && oi[2] == 2);
  OK(tf_convert(s, ci, TF_COMPLEX64, &ok2));
  float complex oz[3];
  OK(tf_tensor_copy_to(ok2, oz, sizeof oz, NULL));
  CHECK(oz[0] == 1 && oz[1] == -2 && oz[2] == 2);
  FAILS(tf_convert(s, tfr, (tf_dtype)42, &bad), TF_DTYPE, "42");

  tf_tensor* frees[] = {ta, t, v, c, r, rc, sl, tc, bv, bd, tfr, ci, ok2};
  for (size_t k = 0; k < sizeof frees / sizeof frees[0]; ++k) tf_tensor_free(frees[k]);
}

