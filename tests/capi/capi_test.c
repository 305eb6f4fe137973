/* The C ABI from plain C99 (tests/capi/capi_test*.c): values against reference loops,
 * zero-copy wrapping and its release callback, views keeping owners alive, einsum
 * (string, labels, plans), linear algebra by reconstruction, and every error path:
 * status, last-error status and message, and out-pointers left untouched.
 * This file: the helpers, metadata, creation, wrapping, errors, sessions and threads,
 * and main. Exit status 0 when every check passed. */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

int failures = 0;
int checks = 0;

void expect_fail(tf_status got, tf_status code, const char* text, const char* call, const char* file, int line) {
  ++checks;
  if (got != code || tf_last_error_status() != code || strstr(tf_last_error_message(), text) == NULL) {
    ++failures;
    fprintf(stderr, "%s:%d: %s: expected %s with \"%s\", got %s (last %s): \"%s\"\n", file, line, call,
            tf_status_name(code), text, tf_status_name(got), tf_status_name(tf_last_error_status()),
            tf_last_error_message());
  }
}

int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(b)); }

static uint64_t rng_state = 12345;
double rnd(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

tf_tensor* f64_tensor(size_t rank, const int64_t* shape, const double* data) {
  tf_tensor* t = NULL;
  OK(tf_tensor_create(TF_FLOAT64, rank, shape, NULL, data, &t));
  return t;
}

void read_f64(const tf_tensor* t, double* dst, size_t n) { OK(tf_tensor_copy_to(t, dst, n * sizeof(double), NULL)); }

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
