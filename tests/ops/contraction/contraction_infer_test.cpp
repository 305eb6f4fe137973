// The contraction family's inference alone (ops/contraction.hpp): dot_infer's signature
// and every error from shapes and dtypes (no session, no tensor), matmul's DotDims, and
// the short form (Note [dot fast path]) agreeing with the general path on the calls it
// takes and refusing the ones it must not.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

#include "ops/contraction.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;
using V = std::vector<std::int64_t>;

V shape_of(const DotSignature& s) { return {s.out_shape().begin(), s.out_shape().end()}; }
template <class A> V axes(const A* a, int n) { return V(a, a + n); }

void expect_same(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  testing::for_each_index(got.shape(), [&](const Dims& i) {
    ASSERT_TRUE(testing::close(testing::value_at(got, i), testing::value_at(want, i), tol)) << "at " << i.to_string();
  });
}

DotSignature infer(const V& l, DType ld, const V& r, DType rd, const DotDims& d) {
  DotSignature s;
  dot_infer("dot_general", l, ld, r, rd, d, s);
  return s;
}

TEST(ContractionInfer, GroupsAxesAndOrdersTheResult) {
  // lhs [i, b, j, k] · rhs [k, b, l, j]: contract j, k; batch b. Result [i, l, b].
  const DotDims d{.lhs_contracting = {2, -1}, .rhs_contracting = {3, 0}, .lhs_batch = {1}, .rhs_batch = {1}, .conj_lhs = true};
  const DotSignature s = infer({2, 5, 3, 4}, DType::f32, {4, 5, 6, 3}, DType::c64, d);
  EXPECT_EQ(s.dtype, DType::c64);
  EXPECT_TRUE(s.conj_lhs);
  EXPECT_FALSE(s.conj_rhs);
  EXPECT_EQ(s.nm, 1);
  EXPECT_EQ(s.nn, 1);
  EXPECT_EQ(s.nk, 2);
  EXPECT_EQ(s.nb, 1);
  EXPECT_EQ(axes(s.lhs_contracting, 2), (V{2, 3}));  // -1 normalized, in DotDims order
  EXPECT_EQ(axes(s.rhs_contracting, 2), (V{3, 0}));
  EXPECT_EQ(axes(s.lhs_free, 1), (V{0}));
  EXPECT_EQ(axes(s.rhs_free, 1), (V{2}));
  EXPECT_EQ(shape_of(s), (V{2, 6, 5}));
  // Conjugation flags mean nothing for a real result.
  const DotSignature real = infer({2, 3}, DType::f64, {3}, DType::f32, {.lhs_contracting = {1}, .rhs_contracting = {0}, .conj_lhs = true});
  EXPECT_EQ(real.dtype, DType::f64);
  EXPECT_FALSE(real.conj_lhs);
  EXPECT_EQ(shape_of(real), (V{2}));
  // A full contraction is rank 0; an outer product keeps every axis.
  EXPECT_EQ(shape_of(infer({3}, DType::f64, {3}, DType::f64, {.lhs_contracting = {0}, .rhs_contracting = {0}})), V{});
  EXPECT_EQ(shape_of(infer({2, 0}, DType::f64, {4}, DType::f64, {})), (V{2, 0, 4}));
}

TEST(ContractionInfer, RejectsBadDimsWithTheTypedError) {
  const V l{3, 4}, r{4, 2};
  const DotDims ok{.lhs_contracting = {1}, .rhs_contracting = {0}};
  auto bad = [&](const V& a, DType ad, const V& b, DType bd, const DotDims& d) { return [=] { infer(a, ad, b, bd, d); }; };
  expect_error<DTypeError>(bad(l, DType::i32, r, DType::f64, ok), "dot_general");
  expect_error<DTypeError>(bad(l, DType::f64, r, DType::b8, ok), "dot_general");
  expect_error<ShapeError>(bad(l, DType::f64, r, DType::f64, {.lhs_contracting = {1}, .rhs_contracting = {}}), "dot_general");
  expect_error<ShapeError>(bad(l, DType::f64, {5, 2}, DType::f64, ok), "dot_general");
  expect_error<AxisError>(bad(l, DType::f64, r, DType::f64, {.lhs_contracting = {2}, .rhs_contracting = {0}}), "dot_general");
  expect_error<AxisError>(bad(l, DType::f64, r, DType::f64, {.lhs_contracting = {-3}, .rhs_contracting = {0}}), "dot_general");
  expect_error<AxisError>(bad(l, DType::f64, r, DType::f64, {.lhs_contracting = {1, 1}, .rhs_contracting = {0, 1}}), "dot_general");
  expect_error<AxisError>(
      bad(l, DType::f64, r, DType::f64, {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {1}, .rhs_batch = {1}}), "dot_general");
  expect_error<AxisError>(bad({3}, DType::f64, {3}, DType::f64, {.lhs_contracting = {0, 0}, .rhs_contracting = {0, 0}}), "dot_general");
  const std::string why =
      expect_error<ShapeError>(bad({3, 4, 2}, DType::f64, {4, 3}, DType::f64, {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {1}}),
                               "dot_general");
  EXPECT_NE(why.find("batch extents differ"), std::string::npos) << why;
  // The result's element count must fit int64.
  const std::int64_t big = std::int64_t{1} << 40;
  expect_error<IndexError>(bad({big, 1}, DType::f64, {1, big}, DType::f64, ok), "dot_general");
}

TEST(ContractionInfer, MatmulDims) {
  const DotDims mv = matmul_dims(V{3, 4}, V{4});
  EXPECT_EQ(mv.lhs_contracting, Dims{1});
  EXPECT_EQ(mv.rhs_contracting, Dims{0});
  EXPECT_TRUE(mv.lhs_batch.empty());
  const DotDims vm = matmul_dims(V{4}, V{4, 2});
  EXPECT_EQ(vm.lhs_contracting, Dims{0});
  const DotDims batched = matmul_dims(V{3, 4, 5, 6}, V{4, 2, 5, 6});
  EXPECT_EQ(batched.lhs_batch, (Dims{2, 3}));
  EXPECT_EQ(batched.rhs_batch, (Dims{2, 3}));
  EXPECT_TRUE(matmul_dims(V{3, 4, 5}, V{4, 2}).lhs_batch.empty());  // a matrix rhs: lhs's trailing axes stay free
  expect_error<RankError>([] { matmul_dims(V{}, V{3}); }, "matmul");
  expect_error<RankError>([] { matmul_dims(V{3, 4, 5}, V{4, 2, 5, 1}); }, "matmul");
}

TEST(ContractionInfer, ShortFormSignatureIsDotInfersAnswer) {
  for (int lr : {1, 2})
    for (int rr : {1, 2})
      for (std::int8_t cl = 0; cl < lr; ++cl)
        for (std::int8_t cr = 0; cr < rr; ++cr) {
          V l(lr, 0), r(rr, 0);
          l[cl] = 5;
          r[cr] = 5;
          if (lr == 2) l[1 - cl] = 3;
          if (rr == 2) r[1 - cr] = 7;
          MatrixForm f{lr == 2 ? 3 : 1, rr == 2 ? 7 : 1, 5, 0, 0, 0, 0, 0, 0, DType::c128, true, false,
                       static_cast<std::int8_t>(lr), static_cast<std::int8_t>(rr), cl, cr};
          DotSignature got;
          matrix_form_signature(f, got);
          const DotSignature want = infer(l, DType::c128, r, DType::c128, {.lhs_contracting = {cl}, .rhs_contracting = {cr}, .conj_lhs = true});
          EXPECT_EQ(shape_of(got), shape_of(want));
          EXPECT_EQ(got.nm, want.nm);
          EXPECT_EQ(got.nn, want.nn);
          EXPECT_EQ(got.nk, 1);
          EXPECT_EQ(got.nb, 0);
          EXPECT_EQ(got.lhs_contracting[0], want.lhs_contracting[0]);
          EXPECT_EQ(got.rhs_contracting[0], want.rhs_contracting[0]);
          if (want.nm) {
            EXPECT_EQ(got.lhs_free[0], want.lhs_free[0]);
          }
          if (want.nn) {
            EXPECT_EQ(got.rhs_free[0], want.rhs_free[0]);
          }
          EXPECT_EQ(got.conj_lhs, want.conj_lhs);
        }
}

// The short form and the general path must compute the same thing: the same product
// through a negative contracting axis (which only the general path takes), and calls the
// short form refuses (self-overlapping out, out sharing an operand, a complex alpha on a
// real result, an empty product) must get the general path's answer or error.
TEST(ContractionInfer, ShortFormAgreesWithTheGeneralPath) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(7);
  for (DType d : {DType::f32, DType::f64, DType::c64, DType::c128}) {
    const Tensor a = testing::random_tensor(rng, {3, 4}, d), b = testing::random_tensor(rng, {4, 2}, d);
    const Tensor fast = dot_general(s, a, b, {.lhs_contracting = {1}, .rhs_contracting = {0}, .conj_rhs = true});
    const Tensor general = dot_general(s, a, b, {.lhs_contracting = {-1}, .rhs_contracting = {-2}, .conj_rhs = true});
    expect_same(fast, general, 1e-6);
    const Tensor vec = dot_general(s, a, b.slice_view(1, 0, 1).reshape_view({4}), {.lhs_contracting = {1}, .rhs_contracting = {0}});
    const Tensor vec_general = dot_general(s, a, b.slice_view(1, 0, 1).reshape_view({4}), {.lhs_contracting = {-1}, .rhs_contracting = {0}});
    expect_same(vec, vec_general, 1e-6);
  }
  const Tensor a = Tensor::ones({3, 4}, DType::f64), b = Tensor::ones({4, 2}, DType::f64);
  const DotDims ok{.lhs_contracting = {1}, .rhs_contracting = {0}};
  // A complex alpha with a zero imaginary part is a real alpha.
  Tensor out = Tensor::zeros({3, 2}, DType::f64);
  dot_general_into(s, a, b, ok, out, Scalar(std::complex<double>(2, 0)));
  EXPECT_EQ(out.item<double>({2, 1}), 8.0);
  expect_error<ArgumentError>([&] { dot_general_into(s, a, b, ok, out, Scalar(std::complex<double>(2, 1))); }, "dot_general");
  // out sharing storage with an operand goes the general path: fine when disjoint,
  // ArgumentError when the bytes overlap.
  Tensor storage = Tensor::ones({3, 6}, DType::f64);
  dot_general_into(s, storage.slice_view(1, 0, 4), b, ok, storage.slice_view(1, 4, 6));
  EXPECT_EQ(storage.item<double>({2, 5}), 4.0);
  expect_error<ArgumentError>([&] { dot_general_into(s, storage.slice_view(1, 0, 4), b, ok, storage.slice_view(1, 2, 4)); }, "dot_general");
  // A self-overlapping out (stride 0 on an axis of extent 3).
  expect_error<ArgumentError>(
      [&] { dot_general_into(s, a, b, ok, Tensor::zeros({1, 2}, DType::f64).as_strided_view(V{3, 2}, V{0, 1}, 0)); }, "dot_general");
  // Empty products go through the general path: K = 0 gives beta·out.
  Tensor filled = Tensor::full({3, 2}, Scalar(5.0), DType::f64);
  dot_general_into(s, Tensor::zeros({3, 0}, DType::f64), Tensor::zeros({0, 2}, DType::f64), ok, filled, 1.0, 0.5);
  EXPECT_EQ(filled.item<double>({1, 1}), 2.5);
  // A negative-stride out is written correctly (the short form's BLAS branch refuses it).
  const Tensor big_a = testing::random_tensor(rng, {70, 40}, DType::f64), big_b = testing::random_tensor(rng, {40, 30}, DType::f64);
  Tensor flipped_storage = Tensor::zeros({70, 30}, DType::f64);
  const Tensor flipped = flipped_storage.slice_view(0, Tensor::kSliceEnd, -Tensor::kSliceEnd, -1);
  dot_general_into(s, big_a, big_b, ok, flipped);
  expect_same(flipped, dot_general(s, big_a, big_b, ok), 1e-12);
}

}  // namespace
}  // namespace tenferro::detail
