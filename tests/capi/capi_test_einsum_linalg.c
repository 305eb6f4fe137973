/* The C ABI's einsum (string, labels, options, plans) and linear algebra (svd, qr,
 * eigh, solve by reconstruction, and their errors) (part of capi_test; see capi_test.c). */
#include <complex.h>
#include <string.h>

#include "capi_check.h"

/* ------------------------------------------------------------------ einsum */

static void matmul_ref(const double* a, const double* b, double* c, int m, int k, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int l = 0; l < k; ++l) acc += a[i + l * m] * b[l + j * k];
      c[i + j * m] = acc;
    }
}

void test_einsum(tf_session* s) {
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
  tf_tensor* re = NULL;
  opt.optimizer = TF_OPTIMIZE_ELIMINATE;
  OK(tf_einsum(s, "ij,jk,kl->il", three, 3, &opt, &re));
  read_f64(re, out, M * P);
  for (int k = 0; k < M * P; ++k) CHECK(near(out[k], abc[k], 1e-13));
  tf_tensor_free(re);
  opt.optimizer = TF_OPTIMIZE_PARTITION;
  OK(tf_einsum(s, "ij,jk,kl->il", three, 3, &opt, &re));
  read_f64(re, out, M * P);
  for (int k = 0; k < M * P; ++k) CHECK(near(out[k], abc[k], 1e-13));
  tf_tensor_free(re);
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
  opt.optimizer = (tf_einsum_optimizer)7;  /* one past TF_OPTIMIZE_PARTITION */
  FAILS(tf_einsum(s, "ij,jk->ik", two, 2, &opt, &bad), TF_ARGUMENT, "optimizer 7");
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

void test_linalg(tf_session* s) {
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

