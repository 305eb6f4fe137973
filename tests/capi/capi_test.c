/* The C ABI from plain C99 (tests/capi/capi_test.c): values against reference loops,
 * zero-copy wrapping and its release callback, views keeping owners alive, einsum
 * (string, labels, plans), linear algebra by reconstruction, and every error path:
 * status, last-error status and message, and out-pointers left untouched.
 * Exit status 0 when every check passed. */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenferro/c/tenferro.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    ++checks;                                                              \
    if (!(cond)) {                                                         \
      ++failures;                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                      \
  } while (0)

/* A call that must succeed; prints the last error otherwise. */
#define OK(call)                                                                             \
  do {                                                                                       \
    tf_status st_ = (call);                                                                  \
    ++checks;                                                                                \
    if (st_ != TF_OK) {                                                                      \
      ++failures;                                                                            \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, tf_status_name(st_), \
              tf_last_error_message());                                                      \
    }                                                                                        \
  } while (0)

/* A call that must fail with `code`, recording the same code as the last error, with a
 * message containing `text`. */
static void expect_fail(tf_status got, tf_status code, const char* text, const char* call, int line) {
  ++checks;
  if (got != code || tf_last_error_status() != code || strstr(tf_last_error_message(), text) == NULL) {
    ++failures;
    fprintf(stderr, "%s:%d: %s: expected %s with \"%s\", got %s (last %s): \"%s\"\n", __FILE__, line, call,
            tf_status_name(code), text, tf_status_name(got), tf_status_name(tf_last_error_status()),
            tf_last_error_message());
  }
}
#define FAILS(call, code, text) expect_fail((call), (code), (text), #call, __LINE__)

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(b)); }

/* Deterministic pseudo-random values in [-1, 1). */
static uint64_t rng_state = 12345;
static double rnd(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A new f64 tensor of `rank` extents from column-major data. */
static tf_tensor* f64_tensor(size_t rank, const int64_t* shape, const double* data) {
  tf_tensor* t = NULL;
  OK(tf_tensor_create(TF_FLOAT64, rank, shape, NULL, data, &t));
  return t;
}

/* Copies a tensor out column-major into `dst` (n doubles). */
static void read_f64(const tf_tensor* t, double* dst, size_t n) { OK(tf_tensor_copy_to(t, dst, n * sizeof(double), NULL)); }

static tf_tensor* const SENTINEL = (tf_tensor*)0x1;  /* out-pointers must keep this on failure */

/* ------------------------------------------------------------------ helpers and metadata */

static void test_tables(void) {
  CHECK(strcmp(tf_status_name(TF_OK), "TF_OK") == 0);
  CHECK(strcmp(tf_status_name(TF_SESSION_ENTRY), "TF_SESSION_ENTRY") == 0);
  CHECK(strcmp(tf_status_name((tf_status)99), "TF_?") == 0);
  CHECK(strcmp(tf_dtype_name(TF_COMPLEX128), "c128") == 0);
  CHECK(strcmp(tf_dtype_name(TF_BOOL), "bool") == 0);
  CHECK(strcmp(tf_dtype_name((tf_dtype)-3), "?") == 0);
  CHECK(tf_dtype_size(TF_BOOL) == 1 && tf_dtype_size(TF_INT32) == 4 && tf_dtype_size(TF_INT64) == 8);
  CHECK(tf_dtype_size(TF_FLOAT32) == 4 && tf_dtype_size(TF_FLOAT64) == 8);
  CHECK(tf_dtype_size(TF_COMPLEX64) == 8 && tf_dtype_size(TF_COMPLEX128) == 16 && tf_dtype_size((tf_dtype)7) == 0);
  CHECK(tf_last_error_status() == TF_OK && strcmp(tf_last_error_message(), "") == 0);  /* nothing failed yet */
  tf_backend_free(NULL);
  tf_session_free(NULL);
  tf_tensor_free(NULL);
  tf_einsum_plan_free(NULL);
}

static void test_create_and_read(void) {
  const int64_t shape[2] = {2, 3};
  const double cm[6] = {1, 2, 3, 4, 5, 6};           /* column-major: (i, j) at i + 2j */
  const double rm[6] = {1, 3, 5, 2, 4, 6};           /* the same matrix in C order */
  const int64_t rm_strides[2] = {3, 1};
  tf_tensor *a = f64_tensor(2, shape, cm), *b = NULL;
  OK(tf_tensor_create(TF_FLOAT64, 2, shape, rm_strides, rm, &b));
  size_t rank = 0;
  int64_t sh[4] = {0}, st[4] = {0}, numel = 0;
  tf_dtype dt = TF_BOOL;
  int ro = -1;
  OK(tf_tensor_rank(a, &rank));
  OK(tf_tensor_shape(a, sh, 4));
  OK(tf_tensor_strides(b, st, 2));
  OK(tf_tensor_numel(a, &numel));
  OK(tf_tensor_dtype(a, &dt));
  OK(tf_tensor_is_read_only(a, &ro));
  CHECK(rank == 2 && sh[0] == 2 && sh[1] == 3 && numel == 6 && dt == TF_FLOAT64 && ro == 0);
  CHECK(st[0] == 1 && st[1] == 2);  /* the copy is compact column-major whatever the source layout */
  double out[6], out_rm[6];
  read_f64(b, out, 6);
  for (int k = 0; k < 6; ++k) CHECK(out[k] == cm[k]);
  OK(tf_tensor_copy_to(a, out_rm, sizeof out_rm, rm_strides));  /* read back in C order */
  for (int k = 0; k < 6; ++k) CHECK(out_rm[k] == rm[k]);
  void* p = NULL;
  OK(tf_tensor_data(a, &p));
  CHECK(p != NULL && ((double*)p)[5] == 6.0);

  /* rank 0 with a NULL shape; zeros; an empty tensor with NULL data */
  const int32_t seven = 7;
  tf_tensor *sc = NULL, *z = NULL, *e = NULL;
  OK(tf_tensor_create(TF_INT32, 0, NULL, NULL, &seven, &sc));
  int32_t got = 0;
  OK(tf_tensor_copy_to(sc, &got, sizeof got, NULL));
  CHECK(got == 7);
  OK(tf_tensor_zeros(TF_COMPLEX64, 2, shape, &z));
  float complex zc[6];
  OK(tf_tensor_copy_to(z, zc, sizeof zc, NULL));
  for (int k = 0; k < 6; ++k) CHECK(zc[k] == 0);
  const int64_t empty_shape[2] = {0, 4};
  OK(tf_tensor_create(TF_FLOAT32, 2, empty_shape, NULL, NULL, &e));
  OK(tf_tensor_numel(e, &numel));
  CHECK(numel == 0);
  OK(tf_tensor_copy_to(e, NULL, 0, NULL));

  /* a strided source with a negative stride: element (i) at data + 5 - i */
  const double rev_src[6] = {10, 11, 12, 13, 14, 15};
  const int64_t n6[1] = {6}, neg[1] = {-1};
  tf_tensor* rev = NULL;
  OK(tf_tensor_create(TF_FLOAT64, 1, n6, neg, rev_src + 5, &rev));
  read_f64(rev, out, 6);
  for (int k = 0; k < 6; ++k) CHECK(out[k] == rev_src[5 - k]);

  tf_tensor_free(a);
  tf_tensor_free(b);
  tf_tensor_free(sc);
  tf_tensor_free(z);
  tf_tensor_free(e);
  tf_tensor_free(rev);
}

/* ------------------------------------------------------------------ zero-copy wrapping */

static int releases = 0;
static void count_release(void* ctx) {
  ++releases;
  CHECK(ctx == (void*)&releases);
}

static void test_wrap(tf_session* s) {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[2] = {2, 3};
  tf_tensor *w = NULL, *view = NULL, *sum = NULL;
  releases = 0;
  OK(tf_tensor_wrap(buf, TF_FLOAT64, 2, shape, NULL, count_release, &releases, 0, &w));
  void* p = NULL;
  OK(tf_tensor_data(w, &p));
  CHECK(p == (void*)buf);  /* zero copy */
  const int64_t perm[2] = {1, 0};
  OK(tf_tensor_permute_view(w, perm, 2, &view));
  OK(tf_tensor_data(view, &p));
  CHECK(p == (void*)buf);
  tf_tensor_free(w);  /* the view keeps the memory alive */
  CHECK(releases == 0);
  OK(tf_sum(s, view, NULL, 0, 0, &sum));
  double total = 0;
  read_f64(sum, &total, 1);
  CHECK(total == 21.0);
  buf[0] = 100;  /* the view reads the caller's memory */
  int64_t vs[2];
  OK(tf_tensor_strides(view, vs, 2));
  CHECK(vs[0] == 2 && vs[1] == 1);
  tf_tensor_free(view);
  CHECK(releases == 1);  /* exactly once, after the last view */
  tf_tensor_free(sum);
  CHECK(releases == 1);

  /* ops write into wrapped memory through tf_copy_into; read-only memory refuses it */
  double dst[6] = {0};
  const double src_data[6] = {6, 5, 4, 3, 2, 1};
  tf_tensor *d = NULL, *src = f64_tensor(2, shape, src_data), *ro = NULL;
  OK(tf_tensor_wrap(dst, TF_FLOAT64, 2, shape, NULL, NULL, NULL, 0, &d));
  OK(tf_copy_into(s, src, d));
  for (int k = 0; k < 6; ++k) CHECK(dst[k] == src_data[k]);
  releases = 0;
  OK(tf_tensor_wrap(dst, TF_FLOAT64, 2, shape, NULL, count_release, &releases, 1, &ro));
  int is_ro = 0;
  OK(tf_tensor_is_read_only(ro, &is_ro));
  CHECK(is_ro == 1);
  FAILS(tf_copy_into(s, src, ro), TF_ARGUMENT, "read-only");
  tf_tensor_free(ro);
  CHECK(releases == 1);

  /* C-order memory wrapped with strides, then read by an op */
  double rm[6] = {1, 3, 5, 2, 4, 6};  /* the matrix [[1, 3, 5], [2, 4, 6]] in C order */
  const int64_t rm_strides[2] = {3, 1};
  tf_tensor *wr = NULL, *col = NULL;
  OK(tf_tensor_wrap(rm, TF_FLOAT64, 2, shape, rm_strides, NULL, NULL, 0, &wr));
  const int64_t ax1[1] = {1};
  OK(tf_sum(s, wr, ax1, 1, 0, &col));  /* row sums: 1+3+5, 2+4+6 */
  double cs[2];
  read_f64(col, cs, 2);
  CHECK(cs[0] == 9 && cs[1] == 12);

  /* a failed wrap calls no release and leaves the out-pointer alone */
  tf_tensor* bad = SENTINEL;
  releases = 0;
  const int64_t neg_shape[1] = {-2};
  FAILS(tf_tensor_wrap(buf, TF_FLOAT64, 1, neg_shape, NULL, count_release, &releases, 0, &bad), TF_SHAPE, "");
  FAILS(tf_tensor_wrap(NULL, TF_FLOAT64, 2, shape, NULL, count_release, &releases, 0, &bad), TF_ARGUMENT, "null");
  FAILS(tf_tensor_wrap((char*)buf + 1, TF_FLOAT64, 2, shape, NULL, count_release, &releases, 0, &bad), TF_ARGUMENT,
        "align");
  CHECK(releases == 0 && bad == SENTINEL);

  tf_tensor_free(d);
  tf_tensor_free(src);
  tf_tensor_free(wr);
  tf_tensor_free(col);
}

/* ------------------------------------------------------------------ elementwise */

typedef tf_status (*binary_fn)(tf_session*, const tf_tensor*, const tf_tensor*, tf_tensor**);
typedef tf_status (*unary_fn)(tf_session*, const tf_tensor*, tf_tensor**);

static void test_elementwise(tf_session* s) {
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

static void test_reductions(tf_session* s) {
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

static void test_structural(tf_session* s) {
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

/* ------------------------------------------------------------------ einsum */

static void matmul_ref(const double* a, const double* b, double* c, int m, int k, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int l = 0; l < k; ++l) acc += a[i + l * m] * b[l + j * k];
      c[i + j * m] = acc;
    }
}

static void test_einsum(tf_session* s) {
  enum { M = 3, K = 4, N = 2, P = 5 };
  double a[M * K], b[K * N], c[N * P], ab[M * N], abc[M * P], out[M * P];
  for (int k = 0; k < M * K; ++k) a[k] = rnd();
  for (int k = 0; k < K * N; ++k) b[k] = rnd();
  for (int k = 0; k < N * P; ++k) c[k] = rnd();
  matmul_ref(a, b, ab, M, K, N);
  matmul_ref(ab, c, abc, M, N, P);
  const int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {N, P};
  tf_tensor *ta = f64_tensor(2, sa, a), *tb = f64_tensor(2, sb, b), *tc = f64_tensor(2, sc, c);
  const tf_tensor* two[2] = {ta, tb};
  const tf_tensor* three[3] = {ta, tb, tc};

  tf_tensor *r = NULL, *rl = NULL, *r3 = NULL, *rp = NULL, *tr = NULL;
  OK(tf_einsum(s, "ij,jk->ik", two, 2, NULL, &r));
  read_f64(r, out, M * N);
  for (int k = 0; k < M * N; ++k) CHECK(near(out[k], ab[k], 1e-13));
  /* integer labels (NumPy's sublist form), implicit output: labels occurring once, ascending */
  const int64_t la[2] = {0, 1}, lb[2] = {1, 2};
  const int64_t* labels[2] = {la, lb};
  const size_t counts[2] = {2, 2};
  OK(tf_einsum_labels(s, two, 2, labels, counts, NULL, 0, NULL, &rl));
  read_f64(rl, out, M * N);
  for (int k = 0; k < M * N; ++k) CHECK(near(out[k], ab[k], 1e-13));
  /* three operands with the optimizer set, and with a fixed linear path */
  tf_einsum_options opt;
  memset(&opt, 0, sizeof opt);
  opt.optimizer = TF_OPTIMIZE_GREEDY;
  OK(tf_einsum(s, "ij,jk,kl->il", three, 3, &opt, &r3));
  read_f64(r3, out, M * P);
  for (int k = 0; k < M * P; ++k) CHECK(near(out[k], abc[k], 1e-13));
  const int32_t path[4] = {1, 2, 0, 1};  /* (b c) first, then a with it */
  opt.path = path;
  opt.path_steps = 2;
  OK(tf_einsum(s, "ij,jk,kl->il", three, 3, &opt, &rp));
  read_f64(rp, out, M * P);
  for (int k = 0; k < M * P; ++k) CHECK(near(out[k], abc[k], 1e-13));
  /* trace with an explicit empty output in label form */
  {
    const int64_t sq[2] = {3, 3};
    double m[9], t = 0, got = 0;
    for (int k = 0; k < 9; ++k) m[k] = rnd();
    for (int i = 0; i < 3; ++i) t += m[i + 3 * i];
    tf_tensor* tm = f64_tensor(2, sq, m);
    const tf_tensor* one[1] = {tm};
    const int64_t lii[2] = {7, 7};
    const int64_t* ll[1] = {lii};
    const size_t cc[1] = {2};
    const int64_t no_output[1] = {0};
    OK(tf_einsum_labels(s, one, 1, ll, cc, no_output, 0, NULL, &tr));
    read_f64(tr, &got, 1);
    CHECK(near(got, t, 1e-14));
    tf_tensor_free(tm);
  }
  /* errors: parse error, unknown output label, extent mismatch, integer operands, bad optimizer */
  tf_tensor* bad = SENTINEL;
  FAILS(tf_einsum(s, "ij,jk->i1", two, 2, NULL, &bad), TF_ARGUMENT, "einsum");
  FAILS(tf_einsum(s, "ij,jk->iz", two, 2, NULL, &bad), TF_ARGUMENT, "z");
  FAILS(tf_einsum(s, "ij,jk->ik", two, 1, NULL, &bad), TF_ARGUMENT, "operand");
  FAILS(tf_einsum(s, "ij,kj->ik", two, 2, NULL, &bad), TF_SHAPE, "j");
  FAILS(tf_einsum(s, NULL, two, 2, NULL, &bad), TF_ARGUMENT, "subscripts is null");
  opt.path = NULL;
  opt.path_steps = 0;
  opt.optimizer = (tf_einsum_optimizer)9;
  FAILS(tf_einsum(s, "ij,jk->ik", two, 2, &opt, &bad), TF_ARGUMENT, "optimizer 9");
  {
    const int32_t iv[4] = {1, 2, 3, 4};
    const int64_t s22[2] = {2, 2};
    tf_tensor* ti = NULL;
    OK(tf_tensor_create(TF_INT32, 2, s22, NULL, iv, &ti));
    const tf_tensor* ii[2] = {ti, ti};
    FAILS(tf_einsum(s, "ij,jk->ik", ii, 2, NULL, &bad), TF_DTYPE, "");
    tf_tensor_free(ti);
  }
  CHECK(bad == SENTINEL);

  /* prepared plans: string form, run twice, into wrapped memory; label form */
  {
    const size_t ranks[2] = {2, 2};
    const int64_t* shapes[2] = {sa, sb};
    const tf_dtype dts[2] = {TF_FLOAT64, TF_FLOAT64};
    tf_einsum_plan *plan = NULL, *lplan = NULL, *pbad = (tf_einsum_plan*)0x1;
    OK(tf_einsum_plan_create("ij,jk->ik", 2, ranks, shapes, dts, NULL, &plan));
    size_t orank = 0;
    int64_t osh[2];
    tf_dtype odt = TF_BOOL;
    OK(tf_einsum_plan_output_rank(plan, &orank));
    OK(tf_einsum_plan_output_shape(plan, osh, 2));
    OK(tf_einsum_plan_output_dtype(plan, &odt));
    CHECK(orank == 2 && osh[0] == M && osh[1] == N && odt == TF_FLOAT64);
    FAILS(tf_einsum_plan_output_shape(plan, osh, 1), TF_ARGUMENT, "capacity 1");
    for (int rep = 0; rep < 3; ++rep) {
      tf_tensor* e = NULL;
      OK(tf_einsum_plan_execute(plan, s, two, 2, &e));
      read_f64(e, out, M * N);
      for (int k = 0; k < M * N; ++k) CHECK(near(out[k], ab[k], 1e-13));
      tf_tensor_free(e);
    }
    double dst[M * N];
    tf_tensor* wd = NULL;
    OK(tf_tensor_wrap(dst, TF_FLOAT64, 2, osh, NULL, NULL, NULL, 0, &wd));
    OK(tf_einsum_plan_execute_into(plan, s, two, 2, wd));
    for (int k = 0; k < M * N; ++k) CHECK(near(dst[k], ab[k], 1e-13));
    const tf_tensor* swapped[2] = {tb, ta};
    FAILS(tf_einsum_plan_execute(plan, s, swapped, 2, &bad), TF_SHAPE, "");
    FAILS(tf_einsum_plan_execute_into(plan, s, two, 2, ta), TF_SHAPE, "");
    FAILS(tf_einsum_plan_create("ij,jk->ik", 2, ranks, shapes, dts, NULL, NULL), TF_ARGUMENT, "out is null");
    const int64_t sbad[2] = {5, N};
    const int64_t* shapes_bad[2] = {sa, sbad};
    FAILS(tf_einsum_plan_create("ij,jk->ik", 2, ranks, shapes_bad, dts, NULL, &pbad), TF_SHAPE, "");
    CHECK(pbad == (tf_einsum_plan*)0x1 && bad == SENTINEL);

    const int64_t lc[2] = {2, 3};
    const int64_t* lab3[3] = {la, lb, lc};
    const size_t cnt3[3] = {2, 2, 2};
    const int64_t outl[2] = {0, 3};
    const int64_t* shapes3[3] = {sa, sb, sc};
    const tf_dtype dts3[3] = {TF_FLOAT64, TF_FLOAT64, TF_FLOAT64};
    OK(tf_einsum_plan_create_labels(3, lab3, cnt3, outl, 2, shapes3, dts3, NULL, &lplan));
    tf_tensor* e3 = NULL;
    OK(tf_einsum_plan_execute(lplan, s, three, 3, &e3));
    read_f64(e3, out, M * P);
    for (int k = 0; k < M * P; ++k) CHECK(near(out[k], abc[k], 1e-13));
    tf_tensor_free(e3);
    tf_tensor_free(wd);
    tf_einsum_plan_free(plan);
    tf_einsum_plan_free(lplan);
  }
  tf_tensor* frees[] = {ta, tb, tc, r, rl, r3, rp, tr};
  for (size_t k = 0; k < sizeof frees / sizeof frees[0]; ++k) tf_tensor_free(frees[k]);
}

/* ------------------------------------------------------------------ linear algebra */

static void test_linalg(tf_session* s) {
  enum { M = 5, N = 3 };
  const int64_t shape[2] = {M, N};
  double a[M * N];
  for (int k = 0; k < M * N; ++k) a[k] = rnd();
  tf_tensor* ta = f64_tensor(2, shape, a);
  /* SVD: U [M, N], S [N] descending, Vh [N, N]; U diag(S) Vh == A */
  {
    tf_tensor *u = NULL, *sv = NULL, *vh = NULL;
    OK(tf_svd(s, ta, &u, &sv, &vh));
    double U[M * N], S[N], Vh[N * N];
    int64_t su[2], ss[1], sv2[2];
    OK(tf_tensor_shape(u, su, 2));
    OK(tf_tensor_shape(sv, ss, 1));
    OK(tf_tensor_shape(vh, sv2, 2));
    CHECK(su[0] == M && su[1] == N && ss[0] == N && sv2[0] == N && sv2[1] == N);
    read_f64(u, U, M * N);
    read_f64(sv, S, N);
    read_f64(vh, Vh, N * N);
    for (int k = 1; k < N; ++k) CHECK(S[k - 1] >= S[k] && S[k] >= 0);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int l = 0; l < N; ++l) acc += U[i + l * M] * S[l] * Vh[l + j * N];
        CHECK(fabs(acc - a[i + j * M]) < 1e-12);
      }
    tf_tensor_free(u);
    tf_tensor_free(sv);
    tf_tensor_free(vh);
  }
  /* QR: Q [M, N] orthonormal columns, R [N, N] upper with diag >= 0; Q R == A */
  {
    tf_tensor *q = NULL, *r = NULL;
    OK(tf_qr(s, ta, 1, &q, &r));
    double Q[M * N], R[N * N];
    read_f64(q, Q, M * N);
    read_f64(r, R, N * N);
    for (int i = 0; i < N; ++i) {
      CHECK(R[i + i * N] >= 0);
      for (int j = 0; j < i; ++j) CHECK(R[i + j * N] == 0);
    }
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int l = 0; l < N; ++l) acc += Q[i + l * M] * R[l + j * N];
        CHECK(fabs(acc - a[i + j * M]) < 1e-12);
      }
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int l = 0; l < M; ++l) acc += Q[l + i * M] * Q[l + j * M];
        CHECK(fabs(acc - (i == j)) < 1e-12);
      }
    tf_tensor_free(q);
    tf_tensor_free(r);
  }
  /* eigh of a symmetric matrix: A V = V diag(w), w ascending; solve: A x = b */
  {
    enum { K = 4 };
    const int64_t sq[2] = {K, K}, vk[1] = {K};
    double h[K * K], rhs[K];
    for (int i = 0; i < K; ++i) {
      rhs[i] = rnd();
      for (int j = 0; j <= i; ++j) h[i + j * K] = h[j + i * K] = rnd() + (i == j ? 4 : 0);
    }
    tf_tensor *th = f64_tensor(2, sq, h), *tb = f64_tensor(1, vk, rhs), *w = NULL, *v = NULL, *x = NULL;
    OK(tf_eigh(s, th, 0, &w, &v));
    double W[K], V[K * K], X[K];
    read_f64(w, W, K);
    read_f64(v, V, K * K);
    for (int k = 1; k < K; ++k) CHECK(W[k - 1] <= W[k]);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) {
        double av = 0;
        for (int l = 0; l < K; ++l) av += h[i + l * K] * V[l + j * K];
        CHECK(fabs(av - V[i + j * K] * W[j]) < 1e-12);
      }
    tf_tensor_free(w);
    tf_tensor_free(v);
    OK(tf_eigh(s, th, 1, &w, &v));  /* the upper triangle holds the same matrix */
    double W2[K];
    read_f64(w, W2, K);
    for (int k = 0; k < K; ++k) CHECK(fabs(W2[k] - W[k]) < 1e-12);
    OK(tf_solve(s, th, tb, &x));
    read_f64(x, X, K);
    for (int i = 0; i < K; ++i) {
      double acc = 0;
      for (int l = 0; l < K; ++l) acc += h[i + l * K] * X[l];
      CHECK(fabs(acc - rhs[i]) < 1e-12);
    }
    /* singular solve: TF_NUMERICAL naming getrf; every out-pointer untouched */
    double zero[K * K];
    memset(zero, 0, sizeof zero);
    tf_tensor *tz = f64_tensor(2, sq, zero), *bad = SENTINEL, *b2 = SENTINEL;
    FAILS(tf_solve(s, tz, tb, &bad), TF_NUMERICAL, "getrf");
    CHECK(bad == SENTINEL);
    /* multi-output errors: non-square eigh, repeated out-pointers, NaN input to svd */
    FAILS(tf_eigh(s, ta, 0, &bad, &b2), TF_SHAPE, "");
    FAILS(tf_eigh(s, th, 0, &bad, &bad), TF_ARGUMENT, "same");
    double nan_m[K * K];
    memcpy(nan_m, h, sizeof nan_m);
    nan_m[5] = NAN;
    tf_tensor *tn = f64_tensor(2, sq, nan_m), *b3 = SENTINEL;
    FAILS(tf_svd(s, tn, &bad, &b2, &b3), TF_ARGUMENT, "");
    FAILS(tf_qr(s, tb, 0, &bad, &b2), TF_RANK, "");
    CHECK(bad == SENTINEL && b2 == SENTINEL && b3 == SENTINEL);
    tf_tensor* frees[] = {th, tb, w, v, x, tz, tn};
    for (size_t k = 0; k < sizeof frees / sizeof frees[0]; ++k) tf_tensor_free(frees[k]);
  }
  tf_tensor_free(ta);
}

/* ------------------------------------------------------------------ errors */

static void test_errors(tf_session* s) {
  const int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
  const double d[6] = {1, 2, 3, 4, 5, 6};
  tf_tensor *a = f64_tensor(2, s23, d), *b = f64_tensor(2, s32, d), *out = SENTINEL;
  /* bad shape */
  FAILS(tf_add(s, a, b, &out), TF_SHAPE, "add");
  const int64_t neg[2] = {2, -3};
  FAILS(tf_tensor_zeros(TF_FLOAT64, 2, neg, &out), TF_SHAPE, "-3");
  /* bad dtype: outside the enum, and outside an op's set */
  FAILS(tf_tensor_create((tf_dtype)99, 2, s23, NULL, d, &out), TF_DTYPE, "dtype 99");
  FAILS(tf_tensor_zeros((tf_dtype)-1, 2, s23, &out), TF_DTYPE, "dtype -1");
  {
    const int32_t iv[2] = {1, 2};
    const int64_t n2[1] = {2};
    tf_tensor* ti = NULL;
    OK(tf_tensor_create(TF_INT32, 1, n2, NULL, iv, &ti));
    FAILS(tf_exp(s, ti, &out), TF_DTYPE, "exp");
    tf_tensor_free(ti);
  }
  /* null handles and pointers */
  FAILS(tf_add(NULL, a, b, &out), TF_ARGUMENT, "tf_add: session is null");
  FAILS(tf_add(s, NULL, b, &out), TF_ARGUMENT, "tf_add: a is null");
  FAILS(tf_neg(s, a, NULL), TF_ARGUMENT, "tf_neg: out is null");
  FAILS(tf_tensor_create(TF_FLOAT64, 2, NULL, NULL, d, &out), TF_ARGUMENT, "shape is null");
  FAILS(tf_tensor_create(TF_FLOAT64, 2, s23, NULL, NULL, &out), TF_ARGUMENT, "null");
  FAILS(tf_tensor_rank(NULL, NULL), TF_ARGUMENT, "tensor is null");
  FAILS(tf_session_close(NULL), TF_ARGUMENT, "session is null");
  FAILS(tf_backend_create(1, NULL), TF_ARGUMENT, "out is null");
  FAILS(tf_backend_num_threads(NULL, NULL), TF_ARGUMENT, "backend is null");
  FAILS(tf_session_open(NULL, NULL), TF_ARGUMENT, "backend is null");
  FAILS(tf_sum(s, a, NULL, 2, 0, &out), TF_ARGUMENT, "axes is null");
  FAILS(tf_einsum_plan_execute(NULL, s, NULL, 0, &out), TF_ARGUMENT, "plan is null");
  {
    const tf_tensor* ops[2] = {a, NULL};
    FAILS(tf_einsum(s, "ij,jk->ik", ops, 2, NULL, &out), TF_ARGUMENT, "operand 1 is null");
  }
  /* wrong axis, wrong rank, index overflow */
  const int64_t ax5[1] = {5}, rep[2] = {0, 0}, p3[3] = {0, 1, 2};
  FAILS(tf_sum(s, a, ax5, 1, 0, &out), TF_AXIS, "5");
  FAILS(tf_max(s, a, rep, 2, 0, &out), TF_AXIS, "");
  FAILS(tf_tensor_slice_view(a, 2, 0, 1, 1, &out), TF_AXIS, "axis 2");
  FAILS(tf_tensor_slice_view(a, 0, 0, 1, 0, &out), TF_ARGUMENT, "step");
  FAILS(tf_transpose(s, a, p3, 3, &out), TF_RANK, "");
  FAILS(tf_tensor_permute_view(a, rep, 2, &out), TF_AXIS, "");
  const int64_t huge[2] = {INT64_MAX / 2, 4};
  FAILS(tf_tensor_zeros(TF_FLOAT64, 2, huge, &out), TF_INDEX, "");
  /* buffers too small, bad dst layouts */
  int64_t sh[1];
  double small[5];
  const int64_t negst[2] = {-1, 2}, overlap[2] = {1, 1};
  FAILS(tf_tensor_shape(a, sh, 1), TF_ARGUMENT, "capacity 1 is below the rank 2");
  FAILS(tf_tensor_copy_to(a, small, sizeof small, NULL), TF_ARGUMENT, "40 bytes");
  FAILS(tf_tensor_copy_to(a, small, sizeof small, negst), TF_ARGUMENT, "negative");
  FAILS(tf_tensor_copy_to(a, small, sizeof small, overlap), TF_ARGUMENT, "overlap");
  /* integer division by zero is numerical */
  {
    const int64_t n2[1] = {2};
    const int64_t iv[2] = {4, 0};
    tf_tensor* ti = NULL;
    OK(tf_tensor_create(TF_INT64, 1, n2, NULL, iv, &ti));
    FAILS(tf_div(s, ti, ti, &out), TF_NUMERICAL, "");
    tf_tensor_free(ti);
  }
  CHECK(out == SENTINEL);
  /* a successful call leaves the last error as it was */
  tf_tensor* fine = NULL;
  OK(tf_neg(s, a, &fine));
  CHECK(tf_last_error_status() == TF_NUMERICAL);
  tf_tensor_free(fine);
  tf_tensor_free(a);
  tf_tensor_free(b);
}

/* ------------------------------------------------------------------ sessions and threads */

struct thread_args {
  tf_backend* backend;
  tf_session* session;  /* the main thread's */
  const tf_tensor* x;
  tf_status try_open, foreign_use, foreign_close;
  int contended_in_message, foreign_in_message;
  tf_tensor* untouched;
};

static void* other_thread(void* p) {
  struct thread_args* t = (struct thread_args*)p;
  tf_session* s = (tf_session*)0x1;
  t->try_open = tf_session_try_open(t->backend, &s);
  t->contended_in_message = strstr(tf_last_error_message(), "Contended") != NULL;
  t->untouched = (tf_tensor*)s;
  tf_tensor* out = SENTINEL;
  t->foreign_use = tf_neg(t->session, t->x, &out);
  t->foreign_in_message = strstr(tf_last_error_message(), "IncompatibleContext") != NULL;
  if (out != SENTINEL) t->untouched = out;
  t->foreign_close = tf_session_close(t->session);
  return NULL;
}

static void test_sessions(tf_backend* backend) {
  tf_session *s = NULL, *s2 = (tf_session*)0x1;
  OK(tf_session_open(backend, &s));
  /* re-entry on the same thread is refused before anything waits */
  FAILS(tf_session_open(backend, &s2), TF_SESSION_ENTRY, "Reentered");
  FAILS(tf_session_try_open(backend, &s2), TF_SESSION_ENTRY, "Reentered");
  CHECK(s2 == (tf_session*)0x1);
  const int64_t n2[1] = {2};
  const double d[2] = {1, 2};
  tf_tensor* x = f64_tensor(1, n2, d);
  /* another thread: try_open contends; using or closing our session there is refused */
  struct thread_args args;
  memset(&args, 0, sizeof args);
  args.backend = backend;
  args.session = s;
  args.x = x;
  args.untouched = (tf_tensor*)0x1;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, other_thread, &args) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(args.try_open == TF_SESSION_ENTRY && args.contended_in_message);
  CHECK(args.foreign_use == TF_SESSION_ENTRY && args.foreign_in_message);
  CHECK(args.foreign_close == TF_SESSION_ENTRY);
  CHECK(args.untouched == (tf_tensor*)0x1);
  /* the last error is per thread: ours is still the Reentered one */
  CHECK(tf_last_error_status() == TF_SESSION_ENTRY && strstr(tf_last_error_message(), "Reentered") != NULL);
  /* the session still works here; after close ops are refused; closing twice is fine */
  tf_tensor *y = NULL, *z = SENTINEL;
  OK(tf_neg(s, x, &y));
  OK(tf_session_close(s));
  OK(tf_session_close(s));
  FAILS(tf_neg(s, x, &z), TF_SESSION_ENTRY, "");
  CHECK(z == SENTINEL);
  tf_session_free(s);
  /* try_open succeeds once the CPUs are free; a session freed while open releases them */
  tf_session* s3 = NULL;
  OK(tf_session_try_open(backend, &s3));
  tf_session_free(s3);
  OK(tf_session_try_open(backend, &s3));
  tf_session_free(s3);
  tf_tensor_free(x);
  tf_tensor_free(y);
  /* a negative thread count is refused */
  tf_backend* nb = (tf_backend*)0x1;
  FAILS(tf_backend_create(-2, &nb), TF_ARGUMENT, "");
  CHECK(nb == (tf_backend*)0x1);
}

int main(void) {
  test_tables();
  test_create_and_read();
  tf_backend* backend = NULL;
  OK(tf_backend_create(2, &backend));
  int32_t nt = 0;
  OK(tf_backend_num_threads(backend, &nt));
  CHECK(nt == 2);
  tf_session* s = NULL;
  OK(tf_session_open(backend, &s));
  test_wrap(s);
  test_elementwise(s);
  test_reductions(s);
  test_structural(s);
  test_einsum(s);
  test_linalg(s);
  test_errors(s);
  OK(tf_session_close(s));
  tf_session_free(s);
  test_sessions(backend);
  tf_backend_free(backend);
  printf("capi_test: %d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
