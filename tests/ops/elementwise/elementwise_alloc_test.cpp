// The `_into` path performs no heap allocation inside a held session: every global
// operator new/delete of this executable is replaced by a counting version
// (support/alloc_counter.hpp), switched on only around the call under test (after a
// warm-up call). Tensor::shape() returns Dims with inline storage up to rank 8, and
// message strings are only built on error paths, so validation, broadcasting, planning
// and the kernels must all run allocation-free.
#include "support/alloc_counter.hpp"
#include "support/test_util.hpp"

namespace tenferro::ew_alloc_test {
namespace {

using testing::AllocCounts;
using testing::allocations_in;
using testing::random_tensor;

TEST(ElementwiseAlloc, CountingIsLive) {
  // The replacement is in effect (and the counter works): a vector allocates.
  const AllocCounts c = allocations_in([] {
    std::vector<int> v(100);
    testing::alloc::sink = v.data();  // keeps the allocation from being elided
  });
  EXPECT_GE(c.news, 1);
  EXPECT_GE(c.deletes, 1);
}

TEST(ElementwiseAlloc, IntoFormsDoNotAllocateInsideAHeldSession) {
  std::mt19937_64 rng(61);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  // 2x2 f64, compact.
  const Tensor a = random_tensor(rng, {2, 2}, DType::f64, 0.5, 2), b = random_tensor(rng, {2, 2}, DType::f64, 0.5, 2);
  const Tensor out = Tensor::empty({2, 2}, DType::f64);
  EXPECT_NO_ALLOCATION(add_into(s, a, b, out));
  EXPECT_NO_ALLOCATION(exp_into(s, a, out));
  // Strided views: a transposed operand, a negative-stride operand, a transposed slice of
  // a bigger tensor as out.
  const Tensor at = random_tensor(rng, {4, 3}, DType::f64, 0.5, 2).transpose_view();
  const Tensor bn = random_tensor(rng, {3, 4}, DType::f64, 0.5, 2).slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  const Tensor big = Tensor::zeros({6, 5}, DType::f64);
  const Tensor ov = big.slice_view(0, 1, 5).slice_view(1, 1, 4).transpose_view();  // [3, 4]
  EXPECT_NO_ALLOCATION(add_into(s, at, bn, ov));
  EXPECT_NO_ALLOCATION(exp_into(s, bn, ov));
  // Broadcasting and scalar operands, rank 3.
  const Tensor col = random_tensor(rng, {3}, DType::f64);
  const Tensor t3 = random_tensor(rng, {3, 4, 5}, DType::f64).permute_view({0, 2, 1}).permute_view({0, 2, 1});
  const Tensor o3 = Tensor::empty({3, 4, 5}, DType::f64);
  EXPECT_NO_ALLOCATION(add_into(s, at, col, ov));
  EXPECT_NO_ALLOCATION(add_into(s, a, 2.0, out));
  EXPECT_NO_ALLOCATION(mul_into(s, t3, col, o3));
  // In place.
  EXPECT_NO_ALLOCATION(add_into(s, ov, 1.0, ov));
  EXPECT_NO_ALLOCATION(exp_into(s, ov, ov));
  // The other families' `_into` forms, same rule.
  const Tensor flags = Tensor::empty({3, 4}, DType::b8);
  EXPECT_NO_ALLOCATION(compare_into(s, at, bn, CompareOp::lt, flags));
  EXPECT_NO_ALLOCATION(select_into(s, flags, at, 0.0, ov));
  EXPECT_NO_ALLOCATION(clamp_into(s, 0.75, bn, 1.5, ov));
  EXPECT_NO_ALLOCATION(sigmoid_into(s, bn, ov));
  EXPECT_NO_ALLOCATION(copy_into(s, col, ov));
  const Tensor ints = Tensor::empty({3, 4}, DType::i32);
  EXPECT_NO_ALLOCATION(cast_into(s, bn, ints));
  EXPECT_NO_ALLOCATION(convert_into(s, ints, ov));
  const Tensor ia = random_tensor(rng, {3, 4}, DType::i64, 1, 9), ib = random_tensor(rng, {3, 4}, DType::i64, 1, 9);
  const Tensor io = Tensor::empty({3, 4}, DType::i64);
  EXPECT_NO_ALLOCATION(div_into(s, ia, ib, io));  // includes the zero-divisor scan
  EXPECT_NO_ALLOCATION(pow_into(s, ia, 3, io));   // and the negative-exponent scan
}

}  // namespace
}  // namespace tenferro::ew_alloc_test
