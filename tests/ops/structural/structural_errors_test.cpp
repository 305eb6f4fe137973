// Structural ops: every bad input throws the documented error type, with a message that
// starts with the op name and shows the offending values, and leaves the output (and
// every input sharing its storage) untouched.
#include <gmock/gmock.h>

#include <climits>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::structural_errors_test {
namespace {

using testing::random_tensor;
using testing::snapshot;
using testing::strided;

/// Expects f() to throw exactly E, with a message starting with "<op>: " and containing
/// `contains`, and `watched`'s storage to be unchanged.
template <class E, class F>
void expect_error(F&& f, const std::string& op, const Tensor& watched, const std::string& contains = "") {
  const std::vector<unsigned char> before = snapshot(watched);
  const std::string what = testing::expect_error<E>(f, op);
  if (!contains.empty() && !what.empty()) {
    EXPECT_THAT(what, ::testing::HasSubstr(contains));
  }
  testing::expect_untouched(watched, before);
}

struct Fixture : ::testing::Test {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng{11};
  Tensor rnd(const Shape& shape, DType dt = DType::f64) { return random_tensor(rng, shape, dt); }
};

using StructuralErrors = Fixture;

// The output checks every `_into` form shares (dtype, shape, read-only, self-overlap),
// run through one op each.
template <class Into> void common_out_errors(Fixture& f, const std::string& op, const Shape& shape, DType dt, Into into) {
  SCOPED_TRACE(op);
  const Tensor wrong_dtype = f.rnd(shape, dt == DType::f64 ? DType::f32 : DType::f64);
  expect_error<DTypeError>([&] { into(wrong_dtype); }, op, wrong_dtype, "dtype");
  Shape bigger = shape;
  if (bigger.empty()) bigger.push_back(2);
  else bigger[0] += 1;
  const Tensor wrong_shape = f.rnd(bigger, dt);
  expect_error<ShapeError>([&] { into(wrong_shape); }, op, wrong_shape, bigger.to_string());
  const Tensor base = f.rnd({1}, dt);
  const Tensor read_only = base.broadcast_view(shape);
  expect_error<ArgumentError>([&] { into(read_only); }, op, base, "read-only");
  // Every element at the same address: writable (nonzero strides) but self-overlapping.
  if (!shape.empty()) {
    const Tensor buf = f.rnd({64}, dt);
    Dims strides(shape.size(), 1);
    const Tensor overlapping = buf.as_strided_view(shape, strides, 0);
    expect_error<ArgumentError>([&] { into(overlapping); }, op, buf, "overlapping");
  }
  expect_error<ArgumentError>([&] { into(Tensor()); }, op, base, "undefined");
}

TEST_F(StructuralErrors, Transpose) {
  const Tensor x = rnd({3, 4}), out = rnd({4, 3});
  expect_error<RankError>([&] { transpose(s, x, {0}); }, "transpose", x, "[0]");
  expect_error<AxisError>([&] { transpose(s, x, {0, 2}); }, "transpose", x, "[0, 2]");
  expect_error<AxisError>([&] { transpose_into(s, x, {1, 1}, out); }, "transpose", out, "[1, 1]");
  expect_error<AxisError>([&] { transpose_into(s, x, {-1, 0}, out); }, "transpose", out);
  expect_error<ArgumentError>([&] { transpose(s, Tensor(), {}); }, "transpose", out, "undefined");
  common_out_errors(*this, "transpose", {4, 3}, DType::f64, [&](const Tensor& o) { transpose_into(s, x, {1, 0}, o); });
  // A square matrix transposed onto itself partially overlaps its input.
  const Tensor sq = rnd({3, 3});
  expect_error<ArgumentError>([&] { transpose_into(s, sq, {1, 0}, sq); }, "transpose", sq, "overlaps");
}

TEST_F(StructuralErrors, BroadcastInDim) {
  const Tensor x = rnd({2, 3}), out = rnd({3, 4, 2});
  expect_error<RankError>([&] { broadcast_in_dim(s, x, {3, 4, 2}, {2}); }, "broadcast_in_dim", x, "[2]");
  expect_error<AxisError>([&] { broadcast_in_dim(s, x, {3, 4, 2}, {2, 3}); }, "broadcast_in_dim", x, "3");
  expect_error<AxisError>([&] { broadcast_in_dim_into(s, x, {2, 2}, out); }, "broadcast_in_dim", out, "[2, 2]");
  expect_error<ShapeError>([&] { broadcast_in_dim_into(s, x, {1, 0}, out); }, "broadcast_in_dim", out, "extent");
  expect_error<ShapeError>([&] { broadcast_in_dim(s, x, {2, -3}, {0, 1}); }, "broadcast_in_dim", x, "-3");
  expect_error<RankError>([&] { broadcast_in_dim(s, rnd({2, 1, 3}), {2, 3}, {0, 1, 1}); }, "broadcast_in_dim", x);
  expect_error<IndexError>([&] { broadcast_in_dim(s, x, {2, 3, INT64_MAX / 2}, {0, 1}); }, "broadcast_in_dim", x, "overflow");
  expect_error<AxisError>([&] { broadcast_in_dim_view(x, {2, 3}, {0, 0}); }, "broadcast_in_dim_view", x);
  // The result shape comes from out: a wrong out shape fails the extent check.
  common_out_errors(*this, "broadcast_in_dim", {3, 4, 2}, DType::f64, [&](const Tensor& o) { broadcast_in_dim_into(s, x, {2, 0}, o); });
}

TEST_F(StructuralErrors, Diagonals) {
  const Tensor x = rnd({3, 4, 2}), out = rnd({2, 3});
  expect_error<RankError>([&] { extract_diagonal(s, rnd({3})); }, "extract_diagonal", x, "[3]");
  expect_error<AxisError>([&] { extract_diagonal_into(s, x, 0, 3, out); }, "extract_diagonal", out, "3");
  expect_error<AxisError>([&] { extract_diagonal_into(s, x, 1, -2, out); }, "extract_diagonal", out, "same axis");
  expect_error<AxisError>([&] { extract_diagonal_view(x, 2, 2); }, "extract_diagonal_view", x);
  common_out_errors(*this, "extract_diagonal", {2, 3}, DType::f64, [&](const Tensor& o) { extract_diagonal_into(s, x, 0, 1, o); });

  const Tensor v = rnd({2, 3}), eout = rnd({3, 3, 2});
  expect_error<RankError>([&] { embed_diagonal(s, rnd({})); }, "embed_diagonal", v, "[]");
  expect_error<AxisError>([&] { embed_diagonal_into(s, v, 0, 3, eout); }, "embed_diagonal", eout, "3");
  expect_error<AxisError>([&] { embed_diagonal_into(s, v, 2, -1, eout); }, "embed_diagonal", eout, "same axis");
  common_out_errors(*this, "embed_diagonal", {3, 3, 2}, DType::f64, [&](const Tensor& o) { embed_diagonal_into(s, v, 0, 1, o); });
  // embed writes zeros first: any overlap with the input is refused, even in a corner.
  const Tensor big = rnd({40});
  const Tensor in = big.slice_view(0, 0, 3), o = strided(big, {3, 3}, {1, 3}, 2);
  expect_error<ArgumentError>([&] { embed_diagonal_into(s, in, 0, 1, o); }, "embed_diagonal", big, "overlaps");
}

TEST_F(StructuralErrors, Triangles) {
  const Tensor x = rnd({4, 4}), out = rnd({4, 4});
  expect_error<RankError>([&] { tril(s, rnd({4})); }, "tril", x, "[4]");
  expect_error<RankError>([&] { triu_into(s, rnd({}), 0, out); }, "triu", out);
  common_out_errors(*this, "tril", {4, 4}, DType::f64, [&](const Tensor& o) { tril_into(s, x, 0, o); });
  common_out_errors(*this, "triu", {4, 4}, DType::f64, [&](const Tensor& o) { triu_into(s, x, 1, o); });
  // In place is fine, a shifted view of the same storage is not.
  const Tensor buf = rnd({20});
  const Tensor a = strided(buf, {4, 4}, {1, 4}, 0), b = strided(buf, {4, 4}, {1, 4}, 1);
  expect_error<ArgumentError>([&] { tril_into(s, a, 0, b); }, "tril", buf, "overlaps");
  expect_error<ArgumentError>([&] { triu_into(s, a, 0, a.transpose_view()); }, "triu", buf, "overlaps");
}

TEST_F(StructuralErrors, Concatenate) {
  const Tensor a = rnd({2, 3}), b = rnd({4, 3}), out = rnd({6, 3});
  const std::vector<Tensor> none;
  expect_error<ArgumentError>([&] { concatenate(s, none, 0); }, "concatenate", out, "at least one");
  expect_error<RankError>([&] { concatenate_into(s, {a, rnd({2, 3, 1})}, 0, out); }, "concatenate", out, "rank");
  expect_error<ShapeError>([&] { concatenate_into(s, {a, rnd({4, 2})}, 0, out); }, "concatenate", out, "[4, 2]");
  expect_error<AxisError>([&] { concatenate_into(s, {a, b}, 2, out); }, "concatenate", out, "2");
  expect_error<AxisError>([&] { concatenate(s, {rnd({}), rnd({})}, 0); }, "concatenate", out, "rank 0");
  expect_error<ArgumentError>([&] { concatenate_into(s, {a, Tensor()}, 0, out); }, "concatenate", out, "input 1");
  common_out_errors(*this, "concatenate", {6, 3}, DType::f64, [&](const Tensor& o) { concatenate_into(s, {a, b}, 0, o); });
  // Promotion decides the output dtype: f32 + f64 needs an f64 out.
  const Tensor f32out = rnd({6, 3}, DType::f32);
  expect_error<DTypeError>([&] { concatenate_into(s, {a, rnd({4, 3}, DType::f32)}, 0, f32out); }, "concatenate", f32out, "f64");
  // out overlapping an input.
  const Tensor buf = rnd({30});
  const Tensor in = strided(buf, {2, 3}, {1, 2}, 0), o = strided(buf, {6, 3}, {1, 6}, 4);
  expect_error<ArgumentError>([&] { concatenate_into(s, {in, b}, 0, o); }, "concatenate", buf, "overlaps");
}

TEST_F(StructuralErrors, Stack) {
  const Tensor a = rnd({2, 3}), out = rnd({2, 2, 3});
  const std::vector<Tensor> none;
  expect_error<ArgumentError>([&] { stack(s, none, 0); }, "stack", out, "at least one");
  expect_error<ShapeError>([&] { stack_into(s, {a, rnd({3, 2})}, 0, out); }, "stack", out, "[3, 2]");
  expect_error<ShapeError>([&] { stack_into(s, {a, rnd({2, 3, 1})}, 0, out); }, "stack", out, "[2, 3, 1]");
  expect_error<AxisError>([&] { stack_into(s, {a, a}, 3, out); }, "stack", out, "3");
  expect_error<AxisError>([&] { stack_into(s, {a, a}, -4, out); }, "stack", out, "-4");
  common_out_errors(*this, "stack", {2, 2, 3}, DType::f64, [&](const Tensor& o) { stack_into(s, {a, a}, 0, o); });
  expect_error<ArgumentError>([&] { stack_into(s, {a, out.slice_view(0, 0, 1).reshape_view({2, 3})}, 0, out); }, "stack", out, "overlaps");
}

TEST_F(StructuralErrors, Reverse) {
  const Tensor x = rnd({3, 4}), out = rnd({3, 4});
  expect_error<AxisError>([&] { reverse_into(s, x, {0, 0}, out); }, "reverse", out, "repeated");
  expect_error<AxisError>([&] { reverse_into(s, x, {0, -2}, out); }, "reverse", out, "repeated");
  expect_error<AxisError>([&] { reverse_into(s, x, {2}, out); }, "reverse", out, "2");
  expect_error<AxisError>([&] { reverse_view(x, {-3}); }, "reverse_view", x, "-3");
  common_out_errors(*this, "reverse", {3, 4}, DType::f64, [&](const Tensor& o) { reverse_into(s, x, {1}, o); });
  // Reversing onto itself reads elements after overwriting them: refused.
  expect_error<ArgumentError>([&] { reverse_into(s, x, {0}, x); }, "reverse", x, "overlaps");
}

TEST_F(StructuralErrors, Pad) {
  const Tensor x = rnd({3, 2}), out = rnd({5, 2});
  expect_error<RankError>([&] { pad_into(s, x, 0.0, {1}, {1, 0}, {0, 0}, out); }, "pad", out, "edge_padding_low");
  expect_error<RankError>([&] { pad_into(s, x, 0.0, {1, 0}, {1}, {0, 0}, out); }, "pad", out, "edge_padding_high");
  expect_error<RankError>([&] { pad_into(s, x, 0.0, {1, 0}, {1, 0}, {0}, out); }, "pad", out, "interior_padding");
  expect_error<ArgumentError>([&] { pad_into(s, x, 0.0, {0, 0}, {0, 0}, {-1, 0}, out); }, "pad", out, "[-1, 0]");
  expect_error<ShapeError>([&] { pad_into(s, x, 0.0, {-2, 0}, {-2, 0}, {0, 0}, out); }, "pad", out, "-1");
  expect_error<IndexError>([&] { pad(s, x, 0.0, {INT64_MAX, 0}, {1, 0}, {0, 0}); }, "pad", x, "overflow");
  expect_error<IndexError>([&] { pad(s, x, 0.0, {0, 0}, {0, 0}, {INT64_MAX, 0}); }, "pad", x, "overflow");
  const Tensor xi = rnd({3, 2}, DType::i32), outi = rnd({5, 2}, DType::i32);
  expect_error<ArgumentError>([&] { pad_into(s, xi, 2.5, {1, 0}, {1, 0}, {0, 0}, outi); }, "pad", outi, "2.5");
  expect_error<ArgumentError>([&] { pad_into(s, xi, INT64_MAX, {1, 0}, {1, 0}, {0, 0}, outi); }, "pad", outi, "i32");
  const Tensor xb = rnd({3, 2}, DType::b8), outb = rnd({5, 2}, DType::b8);
  expect_error<ArgumentError>([&] { pad_into(s, xb, 2, {1, 0}, {1, 0}, {0, 0}, outb); }, "pad", outb, "bool");
  expect_error<ArgumentError>([&] { pad_into(s, x, c128(1, 1), {1, 0}, {1, 0}, {0, 0}, out); }, "pad", out, "imaginary");
  common_out_errors(*this, "pad", {5, 2}, DType::f64, [&](const Tensor& o) { pad_into(s, x, 0.0, {1, 0}, {1, 0}, {0, 0}, o); });
  const Tensor buf = rnd({40});
  const Tensor in = strided(buf, {3, 2}, {1, 3}, 0), o = strided(buf, {5, 2}, {1, 5}, 4);
  expect_error<ArgumentError>([&] { pad_into(s, in, 0.0, {1, 0}, {1, 0}, {0, 0}, o); }, "pad", buf, "overlaps");
}

TEST_F(StructuralErrors, Iota) {
  const Tensor out = rnd({2, 3}, DType::i32);
  expect_error<AxisError>([&] { iota(s, {2, 3}, DType::f64, 2); }, "iota", out, "2");
  expect_error<AxisError>([&] { iota(s, {}, DType::f64, 0); }, "iota", out, "rank 0");
  expect_error<AxisError>([&] { iota_into(s, -3, out); }, "iota", out, "-3");
  expect_error<ShapeError>([&] { iota(s, {2, -1}, DType::f64, 0); }, "iota", out, "-1");
  expect_error<IndexError>([&] { iota(s, {INT64_MAX, 3}, DType::f64, 0); }, "iota", out, "overflow");
  const Tensor base = rnd({1}, DType::i32);
  const Tensor read_only = base.broadcast_view({2, 3});
  expect_error<ArgumentError>([&] { iota_into(s, 0, read_only); }, "iota", base, "read-only");
  expect_error<ArgumentError>([&] { iota_into(s, 0, Tensor()); }, "iota", base, "undefined");
}

TEST_F(StructuralErrors, ClosedSession) {
  const Tensor x = rnd({2, 2}), out = rnd({2, 2});
  s.close();
  EXPECT_THROW(transpose(s, x, {1, 0}), SessionEntryError);
  try {
    tril_into(s, x, 0, out);
    ADD_FAILURE() << "no throw";
  } catch (const SessionEntryError& e) {
    EXPECT_EQ(e.kind(), SessionEntryKind::Poisoned);
  }
  EXPECT_THROW(concatenate(s, {x, x}, 0), SessionEntryError);
  EXPECT_THROW(iota(s, {3}, DType::i64, 0), SessionEntryError);
  // Views are metadata only: they need no session, closed or not.
  EXPECT_EQ(reverse_view(x, {0}).item<double>({0, 0}), x.item<double>({x.extent(0) - 1, 0}));
  EXPECT_THROW(pad(s, x, 0.0, {1, 1}, {0, 0}, {0, 0}), SessionEntryError);
}

TEST(StructuralViews, NeedNoSessionAndRefuseUndefinedInputs) {
  const Tensor x = Tensor::arange(6, DType::f64).reshape_view({2, 3});
  EXPECT_EQ(broadcast_in_dim_view(x, {2, 3, 4}, {0, 1}).item<double>({1, 2, 3}), 5.0);
  EXPECT_EQ(extract_diagonal_view(x).item<double>({1}), 3.0);
  EXPECT_EQ(reverse_view(x, {1}).item<double>({0, 0}), 4.0);
  const Tensor u;
  expect_error<ArgumentError>([&] { broadcast_in_dim_view(u, {2}, {0}); }, "broadcast_in_dim_view", x);
  expect_error<ArgumentError>([&] { extract_diagonal_view(u); }, "extract_diagonal_view", x);
  expect_error<ArgumentError>([&] { reverse_view(u, {0}); }, "reverse_view", x);
}

}  // namespace
}  // namespace tenferro::structural_errors_test
