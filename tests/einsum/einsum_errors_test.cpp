// Every einsum error: the type, the message (op name, the offending label/operands/
// position), and an untouched output. Also: prepared plans reject operands that differ
// from the prepared ones, and run allocation-free with execute_into in a held session.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::einsum_errors_test {
namespace {

/// Expects exactly E with a message "einsum: ..." containing every fragment.
template <class E, class F> void expect_error(F&& f, std::initializer_list<const char*> fragments) {
  const std::string msg = testing::expect_error<E>(std::forward<F>(f), "einsum");
  for (const char* frag : fragments) EXPECT_NE(msg.find(frag), std::string::npos) << "'" << frag << "' not in: " << msg;
}

struct Fixture : ::testing::Test {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng{5};
  Tensor a = testing::random_tensor(rng, {2, 3}, DType::f64);
  Tensor b = testing::random_tensor(rng, {3, 4}, DType::f64);
  Tensor out = Tensor::full({2, 4}, 9.0, DType::f64);
  std::vector<unsigned char> before = testing::snapshot(out);

  void into_fails_untouched(std::string_view subs, std::vector<Tensor> ops) {
    EXPECT_ANY_THROW(einsum_into(s, subs, ops, out));
    testing::expect_untouched(out, before);
  }
};

using EinsumErrors = Fixture;

TEST_F(EinsumErrors, BadCharactersAndSyntax) {
  expect_error<ArgumentError>([&] { einsum(s, "ij,j#->i", {a, b}); }, {"invalid character '#'", "position 4"});
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk-ik", {a, b}); }, {"'-' not followed by '>'"});
  expect_error<ArgumentError>([&] { einsum(s, "i..j,jk->ik", {a, b}); }, {"'.' that is not part of '...'"});
  expect_error<ArgumentError>([&] { einsum(s, "...i...,jk->ik", {a, b}); }, {"second ellipsis"});
  expect_error<ArgumentError>([&] { einsum(s, "(ij,jk->ik", {a, b}); }, {"unbalanced '('"});
  expect_error<ArgumentError>([&] { einsum(s, "ij),jk->ik", {a, b}); }, {"unbalanced ')'"});
  expect_error<ArgumentError>([&] { einsum(s, "i(j,jk)->ik", {a, b}); }, {"'(' inside an operand"});
  expect_error<ArgumentError>([&] { einsum(s, "(ij,jk)kl->il", {a, b}); }, {"after ')'"});
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk->i,k", {a, b}); }, {"invalid character ','", "output"});
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk->i(k)", {a, b}); }, {"invalid character '('"});
  expect_error<ArgumentError>([&] { einsum(s, std::string_view("ij,j\xff->ik"), {a, b}); }, {"UTF-8"});
  into_fails_untouched("ij,j#->ij", {a, b});
}

// UTF-8 labels must be well formed (RFC 3629): the shortest encoding, no UTF-16
// surrogate halves, nothing above U+10FFFF, in operands and in the output.
TEST_F(EinsumErrors, MalformedUtf8Labels) {
  const char* bad[] = {
      "\xc0\xaf",          // overlong '/' (2 bytes)
      "\xc1\xbf",          // overlong U+007F
      "\xe0\x80\xaf",      // overlong '/' (3 bytes)
      "\xe0\x9f\xbf",      // overlong U+07FF
      "\xf0\x80\x80\xaf",  // overlong '/' (4 bytes)
      "\xf0\x8f\xbf\xbf",  // overlong U+FFFF
      "\xed\xa0\x80",      // U+D800, a high surrogate
      "\xed\xbf\xbf",      // U+DFFF, a low surrogate
      "\xf4\x90\x80\x80",  // U+110000
      "\xf7\xbf\xbf\xbf",  // U+1FFFFF
  };
  for (const char* label : bad) {
    SCOPED_TRACE(::testing::PrintToString(std::string(label)));
    const std::string l(label);
    expect_error<ArgumentError>([&] { einsum(s, "i" + l + ",jk->ik", {a, b}); }, {"invalid UTF-8", "position 1"});
    expect_error<ArgumentError>([&] { einsum(s, "ij,jk->i" + l, {a, b}); }, {"invalid UTF-8"});
    into_fails_untouched("ij,j" + l + "->ik", {a, b});
  }
  // The boundary code points around each rule are labels.
  for (const char* label : {"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf",
                            "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"}) {
    SCOPED_TRACE(::testing::PrintToString(std::string(label)));
    const std::string l(label);
    const Tensor c = einsum(s, "i" + l + "," + l + "k->ik", {a, b});
    EXPECT_EQ(c.shape(), Shape({2, 4}));
  }
}

TEST_F(EinsumErrors, OperandCountAndRank) {
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk,kl->il", {a, b}); }, {"3 operands", "got 2"});
  expect_error<ArgumentError>([&] { einsum(s, "ij->ij", {a, b}); }, {"1 operand,", "got 2"});
  expect_error<ShapeError>([&] { einsum(s, "ijk,jk->ik", {a, b}); }, {"operand 0", "[2, 3]", "'ijk'", "3 axes"});
  expect_error<ShapeError>([&] { einsum(s, "ij,jkl...->ik", {a, b}); }, {"operand 1", "'jkl...'"});
  into_fails_untouched("ijk,jk->ik", {a, b});
}

TEST_F(EinsumErrors, LabelExtentsMustAgree) {
  const Tensor c = testing::random_tensor(rng, {4, 4}, DType::f64);
  expect_error<ShapeError>([&] { einsum(s, "ij,jk->ik", {a, c}); }, {"label 'j'", "extent 3 in operand 0", "4 in operand 1"});
  expect_error<ShapeError>([&] { einsum(s, "ii->i", {a}); }, {"label 'i'", "extent 2 in operand 0", "3 in operand 0"});
  const Tensor e1 = testing::random_tensor(rng, {2, 3, 5}, DType::f64), e2 = testing::random_tensor(rng, {3, 4, 6}, DType::f64);
  expect_error<ShapeError>([&] { einsum(s, "ij...,jk...->ik...", {e1, e2}); }, {"ellipsis axis 0", "do not broadcast"});
  expect_error<ShapeError>([&] { einsum(s, std::vector<Tensor>{a, c}, std::vector<std::vector<std::int64_t>>{{0, 1}, {1, 2}}, std::nullopt); },
                           {"label 1", "extent 3 in operand 0"});
  into_fails_untouched("ij,jk->ik", {a, c});
}

TEST_F(EinsumErrors, OutputLabels) {
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk->iz", {a, b}); }, {"output label 'z' appears in no operand"});
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk->ii", {a, b}); }, {"output label 'i' is repeated"});
  const std::vector<std::int64_t> bad_out = {0, 7};
  expect_error<ArgumentError>(
      [&] { einsum(s, std::vector<Tensor>{a, b}, std::vector<std::vector<std::int64_t>>{{0, 1}, {1, 2}}, std::span<const std::int64_t>(bad_out)); },
      {"output label label 7"});
  expect_error<ArgumentError>([&] { einsum(s, std::vector<Tensor>{a, b}, std::vector<std::vector<std::int64_t>>{{0, -1}, {-1, 2}}, std::nullopt); },
                              {"negative label -1"});
  into_fails_untouched("ij,jk->iz", {a, b});
}

TEST_F(EinsumErrors, DTypes) {
  const Tensor ai = Tensor::zeros({2, 3}, DType::i32);
  expect_error<DTypeError>([&] { einsum(s, "ij,jk->ik", {ai, b}); }, {"operand 0", "i32"});
  const Tensor wrong = Tensor::zeros({2, 4}, DType::f32);
  const auto snap = testing::snapshot(wrong);
  EXPECT_THROW(einsum_into(s, "ij,jk->ik", {a, b}, wrong), DTypeError);
  testing::expect_untouched(wrong, snap);
}

TEST_F(EinsumErrors, BadOutBuffer) {
  const Tensor small = Tensor::full({4, 2}, 9.0, DType::f64);
  const auto snap = testing::snapshot(small);
  EXPECT_THROW(einsum_into(s, "ij,jk->ik", {a, b}, small), ShapeError);
  testing::expect_untouched(small, snap);
  // out overlapping an operand.
  const Tensor sq = testing::random_tensor(rng, {3, 3}, DType::f64);
  const auto snap_sq = testing::snapshot(sq);
  EXPECT_THROW(einsum_into(s, "ij,jk->ik", {sq, sq}, sq), ArgumentError);
  testing::expect_untouched(sq, snap_sq);
  // Read-only (broadcast) out.
  const Tensor ro = Tensor::zeros({2, 1}, DType::f64).broadcast_view({2, 4});
  EXPECT_THROW(einsum_into(s, "ij,jk->ik", {a, b}, ro), ArgumentError);
}

TEST_F(EinsumErrors, BadPathsAndTrees) {
  const Tensor c = testing::random_tensor(rng, {4, 5}, DType::f64);
  EinsumOptions o;
  o.path = {{0, 5}, {0, 1}};
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk,kl->il", {a, b, c}, o); }, {});
  o.path = {{0, 1}};
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk,kl->il", {a, b, c}, o); }, {});
  o.path.clear();
  o.tree = ContractionTree{{{0, 1}, {0, 2}}};  // node 0 used twice
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk,kl->il", {a, b, c}, o); }, {});
  o.tree = ContractionTree{{{0, 1}}};  // too few steps
  expect_error<ArgumentError>([&] { einsum(s, "ij,jk,kl->il", {a, b, c}, o); }, {});
  const Tensor out3 = Tensor::full({2, 5}, 9.0, DType::f64);
  const auto snap = testing::snapshot(out3);
  EXPECT_THROW(einsum_into(s, "ij,jk,kl->il", {a, b, c}, out3, o), ArgumentError);
  testing::expect_untouched(out3, snap);
}

TEST_F(EinsumErrors, PreparedPlanChecksOperands) {
  const Shape shapes[] = {{2, 3}, {3, 4}};
  const DType dts[] = {DType::f64, DType::f64};
  const EinsumPlan plan("ij,jk->ik", shapes, dts);
  const Tensor b5 = testing::random_tensor(rng, {3, 5}, DType::f64);
  expect_error<ShapeError>([&] { plan.execute(s, {a, b5}); }, {"operand 1", "[3, 5]", "prepared for [3, 4]"});
  const Tensor bf = testing::random_tensor(rng, {3, 4}, DType::c128);
  expect_error<DTypeError>([&] { plan.execute(s, {a, bf}); }, {"operand 1", "c128", "prepared for f64"});
  expect_error<ArgumentError>([&] { plan.execute(s, {a}); }, {"prepared for 2 operands", "got 1"});
  EXPECT_THROW(plan.execute_into(s, {a, b5}, out), ShapeError);
  testing::expect_untouched(out, before);
  const DType one[] = {DType::f64};
  EXPECT_THROW(EinsumPlan("ij,jk->ik", shapes, std::span<const DType>(one)), ArgumentError);
}

TEST_F(EinsumErrors, PreparedIntoDoesNotAllocateInAHeldSession) {
  const Shape shapes[] = {{2, 2}, {2, 2}};
  const DType dts[] = {DType::f64, DType::f64};
  const EinsumPlan plan("ij,jk->ik", shapes, dts);
  const Tensor x = testing::random_tensor(rng, {2, 2}, DType::f64), y = testing::random_tensor(rng, {2, 2}, DType::f64);
  const Tensor o = Tensor::zeros({2, 2}, DType::f64);
  const Tensor ops2[] = {x, y};
  EXPECT_NO_ALLOCATION(plan.execute_into(s, ops2, o));
  // One-shot calls reuse thread-local scratch: warm, they do not allocate either.
  EXPECT_NO_ALLOCATION(einsum_into(s, "ij,jk->ik", ops2, o));
  // A chain with intermediates (pool blocks), a transposed output and a diagonal.
  const Tensor c = testing::random_tensor(rng, {2, 3, 3}, DType::f64);
  const Tensor o2 = Tensor::zeros({3, 2}, DType::f64);
  const Tensor ops3[] = {x, y, c};
  const Shape shapes3[] = {{2, 2}, {2, 2}, {2, 3, 3}};
  const DType dts3[] = {DType::f64, DType::f64, DType::f64};
  const EinsumPlan chain("ij,jk,kll->li", shapes3, dts3);
  EXPECT_NO_ALLOCATION(chain.execute_into(s, ops3, o2));
}

}  // namespace
}  // namespace tenferro::einsum_errors_test
