/* The example of docs/c_abi.md (kept identical to it by the capi_example_doc test). */
#include <stdio.h>
#include "tenferro/c/tenferro.h"

#define TRY(call)                                                             \
  do {                                                                        \
    if ((call) != TF_OK) {                                                    \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, tf_last_error_message(), \
              tf_status_name(tf_last_error_status()));                        \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main(void) {
  /* C arrays are row-major: pass their strides (in elements). */
  double a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  double b[3][2] = {{1, 0}, {0, 1}, {1, 1}};
  double c[2][2];                       /* the result, written in place */
  const int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sc[2] = {2, 2};
  const int64_t ra[2] = {3, 1}, rb[2] = {2, 1}, rc[2] = {2, 1};

  tf_backend* backend = NULL;
  tf_session* s = NULL;
  tf_tensor *ta = NULL, *tb = NULL, *tc = NULL, *u = NULL, *sv = NULL, *vh = NULL;
  tf_einsum_plan* plan = NULL;

  TRY(tf_backend_create(0, &backend));
  TRY(tf_session_open(backend, &s));
  /* Zero-copy tensors over the arrays (no release callback: they live on the stack). */
  TRY(tf_tensor_wrap(a, TF_FLOAT64, 2, sa, ra, NULL, NULL, 1, &ta));
  TRY(tf_tensor_wrap(b, TF_FLOAT64, 2, sb, rb, NULL, NULL, 1, &tb));
  TRY(tf_tensor_wrap(c, TF_FLOAT64, 2, sc, rc, NULL, NULL, 0, &tc));

  /* A prepared matrix product, run straight into c. */
  const size_t ranks[2] = {2, 2};
  const int64_t* shapes[2] = {sa, sb};
  const tf_dtype dtypes[2] = {TF_FLOAT64, TF_FLOAT64};
  const tf_tensor* ops[2] = {ta, tb};
  TRY(tf_einsum_plan_create("ij,jk->ik", 2, ranks, shapes, dtypes, NULL, &plan));
  TRY(tf_einsum_plan_execute_into(plan, s, ops, 2, tc));
  printf("c = [[%g, %g], [%g, %g]]\n", c[0][0], c[0][1], c[1][0], c[1][1]);  /* [[4, 5], [10, 11]] */

  /* Singular values of a. */
  double svals[2];
  TRY(tf_svd(s, ta, &u, &sv, &vh));
  TRY(tf_tensor_copy_to(sv, svals, sizeof svals, NULL));
  printf("singular values of a: %g %g\n", svals[0], svals[1]);

  /* An error: the status says which class, the message says what. */
  tf_tensor* bad = NULL;
  if (tf_einsum(s, "ij,jk->iq", ops, 2, NULL, &bad) != TF_OK)
    printf("expected failure: %s\n", tf_last_error_message());

  tf_tensor_free(u);
  tf_tensor_free(sv);
  tf_tensor_free(vh);
  tf_tensor_free(ta);
  tf_tensor_free(tb);
  tf_tensor_free(tc);
  tf_einsum_plan_free(plan);
  TRY(tf_session_close(s));
  tf_session_free(s);
  tf_backend_free(backend);
  return 0;
}
