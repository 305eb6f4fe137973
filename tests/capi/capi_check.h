/* Shared by the C ABI's C test program (capi_test.c, capi_test_ops.c,
 * capi_test_einsum_linalg.c): the check macros and helpers. */
#ifndef TENFERRO_TESTS_CAPI_CHECK_H
#define TENFERRO_TESTS_CAPI_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tenferro/c/tenferro.h"

extern int failures;  /* failed checks */
extern int checks;    /* all checks */

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
void expect_fail(tf_status got, tf_status code, const char* text, const char* call, const char* file, int line);
#define FAILS(call, code, text) expect_fail((call), (code), (text), #call, __FILE__, __LINE__)

/* Out-pointers must keep this value when a call fails. */
#define SENTINEL ((tf_tensor*)0x1)

/* |a - b| <= tol (1 + |b|). */
int near(double a, double b, double tol);
/* Deterministic pseudo-random values in [-1, 1). */
double rnd(void);
/* A new f64 tensor of `rank` extents from column-major data. */
tf_tensor* f64_tensor(size_t rank, const int64_t* shape, const double* data);
/* Copies a tensor out column-major into `dst` (n doubles). */
void read_f64(const tf_tensor* t, double* dst, size_t n);

/* capi_test_ops.c */
void test_elementwise(tf_session* s);
void test_reductions(tf_session* s);
void test_structural(tf_session* s);
/* capi_test_einsum_linalg.c */
void test_einsum(tf_session* s);
void test_linalg(tf_session* s);

#endif
