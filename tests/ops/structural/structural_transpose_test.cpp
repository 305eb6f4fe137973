// The blocked transpose copy (transpose_copy.hpp, Note [Blocked transpose copy]): which
// plans take it, and bit-exact results for every element size through every entry
// point that routes same-dtype copies to it (transpose, transpose_into, copy_into,
// to_contiguous), with full blocks, edges, streaming stores (outputs >= 8 MiB with
// line-aligned columns), outer axes, strided destinations, one and two threads.
#include <gmock/gmock.h>

#include <algorithm>
#include <cstring>

#include "cpu/op_common.hpp"
#include "cpu/strided_loop.hpp"
#include "cpu/transpose_copy.hpp"
#include "support/test_util.hpp"

namespace tenferro::structural_transpose_test {
namespace {

using testing::for_each_index;
using testing::random_tensor;
using testing::snapshot;
using testing::value_at;

const DType kSizes[] = {DType::b8, DType::f32, DType::f64, DType::c128};  // 1, 4, 8, 16 bytes

/// A compact tensor with random bytes (random 0/1 for bool): every bit pattern,
/// NaN payloads included, must come through unchanged.
Tensor random_bits(std::mt19937_64& rng, const Shape& shape, DType dt) {
  if (dt == DType::b8) return random_tensor(rng, shape, dt);
  Tensor t = Tensor::empty(shape.span(), dt);
  auto* p = static_cast<unsigned char*>(t.mutable_data());
  const auto bytes = static_cast<std::size_t>(t.numel()) * dtype_size(dt);
  for (std::size_t k = 0; k < bytes; ++k) p[k] = static_cast<unsigned char>(rng());
  return t;
}

const unsigned char* element(const Tensor& t, std::int64_t i, std::int64_t j) {
  return static_cast<const unsigned char*>(t.data()) + (i * t.stride(0) + j * t.stride(1)) * static_cast<std::int64_t>(dtype_size(t.dtype()));
}

/// Rank-2 `got` equals `want` element for element, bit for bit.
bool same_bits(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  if (got.shape() != want.shape()) return false;
  const std::size_t es = dtype_size(got.dtype());
  int bad = 0;
  for (std::int64_t j = 0; j < got.extent(1); ++j)
    for (std::int64_t i = 0; i < got.extent(0); ++i)
      if (std::memcmp(element(got, i, j), element(want, i, j), es) != 0 && bad++ < 5) ADD_FAILURE() << "differs at (" << i << ", " << j << ")";
  return bad == 0;
}

/// The copy plan from `src` into `dst`, handed to `kernel` (a try_* entry point).
template <class K> bool takes_kernel(Session& s, const Tensor& src, const Tensor& dst, K kernel) {
  using namespace detail;
  const int r = dst.rank();
  std::int64_t shape[kMaxRank], sd[kMaxRank], ss[kMaxRank];
  for (int i = 0; i < r; ++i) shape[i] = dst.extent(i);
  broadcast_byte_strides(dst, r, sd);
  broadcast_byte_strides(src, r, ss);
  const std::int64_t* strides[2] = {sd, ss};
  char* ptrs[2] = {static_cast<char*>(dst.mutable_data()), static_cast<char*>(const_cast<void*>(src.data()))};
  LoopPlan<2> plan;
  plan.build(r, shape, strides, ptrs);
  return kernel(s, plan, dtype_size(dst.dtype()));
}

bool takes_blocked_kernel(Session& s, const Tensor& src, const Tensor& dst) {
  return takes_kernel(s, src, dst, detail::try_blocked_transpose_copy);
}

/// `r` is `x` permuted by `perm` (r axis i = x axis perm[i]), bit for bit, any strides.
void same_permuted_bits(const Tensor& r, const Tensor& x, const Dims& perm) {
  const auto es = static_cast<std::int64_t>(dtype_size(x.dtype()));
  int bad = 0;
  for_each_index(r.shape(), [&](const Dims& idx) {
    std::int64_t ro = r.offset(), xo = x.offset();
    for (int i = 0; i < r.rank(); ++i) {
      ro += idx[i] * r.stride(i);
      xo += idx[i] * x.stride(static_cast<int>(perm[i]));
    }
    const auto* rb = static_cast<const char*>(r.data()) - r.offset() * es;
    const auto* xb = static_cast<const char*>(x.data()) - x.offset() * es;
    if (std::memcmp(rb + ro * es, xb + xo * es, static_cast<std::size_t>(es)) && bad++ < 5) ADD_FAILURE() << "differs at " << idx.to_string();
  });
}

/// Runs `f` in a session of a one-thread backend and of a default (parallel) one.
template <class F> void on_one_and_two_threads(F f) {
  CpuBackendOptions one;
  one.num_threads = 1;
  CpuBackend serial(one), parallel;
  for (CpuBackend* backend : {&serial, &parallel}) {
    auto s = backend->open_session();
    f(s);
  }
}

/// x permuted by `perm` through copy_into, bit for bit; `tiled`: the plan takes the tiled
/// kernel (Note [Tiled copy of short axes]).
void expect_permuted_copy(Session& s, const Tensor& x, const Dims& perm, bool tiled) {
  const Tensor v = x.permute_view(perm.span());
  const Tensor out = Tensor::empty(v.shape().span(), x.dtype());
  if (tiled) EXPECT_TRUE(takes_kernel(s, v, out, detail::try_tiled_copy));
  copy_into(s, v, out);
  same_permuted_bits(out, x, perm);
}

TEST(BlockedTranspose, WhichPlansQualify) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(1);
  const Tensor x = random_tensor(rng, {64, 48}, DType::f64);
  EXPECT_TRUE(takes_blocked_kernel(s, x.transpose_view(), Tensor::empty({48, 64}, DType::f64)));
  // Same memory order, broadcast source, tiny or thin matrices: the plain loop.
  EXPECT_FALSE(takes_blocked_kernel(s, x, Tensor::empty({64, 48}, DType::f64)));
  EXPECT_FALSE(takes_blocked_kernel(s, x.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1), Tensor::empty({64, 48}, DType::f64)));
  EXPECT_FALSE(takes_blocked_kernel(s, random_tensor(rng, {1, 48}, DType::f64).broadcast_view({64, 48}), Tensor::empty({64, 48}, DType::f64)));
  EXPECT_FALSE(takes_blocked_kernel(s, random_tensor(rng, {8, 8}, DType::f64).transpose_view(), Tensor::empty({8, 8}, DType::f64)));
  EXPECT_FALSE(takes_blocked_kernel(s, random_tensor(rng, {9, 4000}, DType::f64).transpose_view(), Tensor::empty({4000, 9}, DType::f64)));
  // Rank 3 with the transposed pair not adjacent, and a negative-stride source.
  const Tensor y = random_tensor(rng, {20, 3, 30}, DType::f32);
  EXPECT_TRUE(takes_blocked_kernel(s, y.permute_view({2, 1, 0}), Tensor::empty({30, 3, 20}, DType::f32)));
  EXPECT_TRUE(takes_blocked_kernel(s, x.transpose_view().slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1),
                                   Tensor::empty({48, 64}, DType::f64)));
}

TEST(BlockedTranspose, EveryElementSizeAndShape) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(2);
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{16, 16}, {17, 33}, {100, 37}, {256, 300}, {129, 1}, {33, 257}};
  for (DType dt : kSizes)
    for (auto [m, n] : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + std::to_string(m) + "x" + std::to_string(n));
      const Tensor base = random_bits(rng, {n, m}, dt);
      const Tensor v = base.transpose_view();
      same_bits(transpose(s, base, {1, 0}), v);
      same_bits(to_contiguous(s, v), v);
      const Tensor out = Tensor::empty({m, n}, dt);
      copy_into(s, v, out);
      same_bits(out, v);
      // Negative strides on the source.
      const Tensor neg = v.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1).slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
      transpose_into(s, neg, {0, 1}, out);
      same_bits(out, neg);
    }
}

TEST(BlockedTranspose, LargeOutputs) {
  // Outputs of >= 8 MiB whose columns start on cache lines take streaming stores; the
  // extents leave a partial strip and partial blocks at the edges (ordinary stores into
  // lines of their own). Odd extents put columns off line boundaries: ordinary stores
  // throughout. The default backend splits the blocks over its threads.
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(3);
  const std::tuple<DType, std::int64_t, std::int64_t> cases[] = {
      {DType::f64, 1032, 1030}, {DType::f32, 1520, 1499}, {DType::c128, 740, 733}, {DType::b8, 2880, 2999},  // streamed
      {DType::f64, 1031, 1029}, {DType::f32, 1501, 1499}, {DType::c128, 733, 731}, {DType::b8, 2901, 2899}};
  for (auto [dt, m, n] : cases) {
    SCOPED_TRACE(std::string(dtype_name(dt)) + " " + std::to_string(m) + "x" + std::to_string(n));
    const Tensor base = random_bits(rng, {n, m}, dt);
    const Tensor r = transpose(s, base, {1, 0});
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.data()) % 64, 0u);  // owners are line-aligned
    same_bits(r, base.transpose_view());
  }
}

TEST(BlockedTranspose, ResultDoesNotDependOnThreads) {
  std::mt19937_64 rng(4);
  const Tensor base = random_bits(rng, {700, 900}, DType::f64);
  CpuBackendOptions one;
  one.num_threads = 1;
  CpuBackend serial(one), parallel;
  const Tensor a = serial.with_session([&](Session& s) { return transpose(s, base, {1, 0}); });
  const Tensor b = parallel.with_session([&](Session& s) { return transpose(s, base, {1, 0}); });
  EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.numel()) * 8), 0);
  same_bits(a, base.transpose_view());
}

TEST(BlockedTranspose, OuterAxesAndPermutations) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(5);
  const std::pair<Shape, Dims> cases[] = {{{20, 30, 7}, {2, 0, 1}}, {{20, 30, 7}, {1, 0, 2}}, {{7, 40, 33}, {0, 2, 1}},
                                          {{33, 5, 40}, {2, 1, 0}}, {{17, 2, 3, 19}, {3, 1, 2, 0}}};
  for (DType dt : kSizes)
    for (const auto& [shape, perm] : cases) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape.to_string() + " perm " + perm.to_string());
      const Tensor x = random_bits(rng, shape, dt);
      same_permuted_bits(transpose(s, x, perm), x, perm);
    }
}

TEST(BlockedTranspose, StridedDestinationAndSource) {
  // Destination every other row of a larger buffer (not unit stride along its fast
  // axis) and a source with a step along its fast axis: the general tiles.
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(6);
  for (DType dt : kSizes) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor base = random_bits(rng, {2 * 50, 70}, dt);
    const Tensor src = base.slice_view(0, 0, 100, 2).transpose_view();  // [70, 50], step 2 along its fast axis
    const Tensor buf = random_bits(rng, {141, 50}, dt);
    const Tensor dst = buf.slice_view(0, 1, 141, 2);  // [70, 50], row stride 2
    const std::vector<unsigned char> before = snapshot(buf);
    copy_into(s, src, dst);
    same_bits(dst, src);
    const Tensor even = buf.slice_view(0, 0, 141, 2);
    const std::vector<unsigned char> after = snapshot(buf);
    const std::size_t es = dtype_size(dt);
    int changed = 0;
    for (std::int64_t j = 0; j < 50; ++j)
      for (std::int64_t i = 0; i < even.extent(0); ++i) {
        const auto off = static_cast<std::size_t>((i * even.stride(0) + j * even.stride(1)) + even.offset()) * es;
        changed += std::memcmp(after.data() + off, before.data() + off, es) != 0;
      }
    EXPECT_EQ(changed, 0);
  }
}

// Note [Tiled copy of short axes]
TEST(TiledCopy, WhichPlansQualify) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(7);
  auto tiled = [&](const Tensor& src, const Tensor& dst) { return takes_kernel(s, src, dst, detail::try_tiled_copy); };
  const Tensor x = random_tensor(rng, Shape(12, 2), DType::f64);
  const Dims perm{3, 7, 0, 11, 5, 1, 9, 2, 10, 4, 8, 6};
  EXPECT_TRUE(tiled(x.permute_view(perm.span()), Tensor::empty(Shape(12, 2).span(), DType::f64)));
  // Same memory order (one line), a broadcast source, too few elements, long fast axes.
  EXPECT_FALSE(tiled(x, Tensor::empty(Shape(12, 2).span(), DType::f64)));
  EXPECT_FALSE(tiled(random_tensor(rng, {1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, DType::f64).broadcast_view(Shape(12, 2).span()),
                     Tensor::empty(Shape(12, 2).span(), DType::f64)));
  const Tensor small = random_tensor(rng, Shape(8, 2), DType::f64);
  EXPECT_FALSE(tiled(small.permute_view({7, 6, 5, 4, 3, 2, 1, 0}), Tensor::empty(Shape(8, 2).span(), DType::f64)));
  // Long lines along the source's fastest axis (every other element): the line loop.
  const Tensor y = random_tensor(rng, {128, 40}, DType::f32);
  EXPECT_FALSE(tiled(y.slice_view(0, 0, 128, 2), Tensor::empty({64, 40}, DType::f32)));
  // A long destination axis over a short source side (9 × n transposed): split into
  // tiles. The other way round (short destination lines, a long source axis) stays with
  // the line loop.
  const Tensor z = random_tensor(rng, {9, 5000}, DType::f64);
  EXPECT_TRUE(tiled(z.transpose_view(), Tensor::empty({5000, 9}, DType::f64)));
  const Tensor w = random_tensor(rng, {5000, 9}, DType::f64);
  EXPECT_FALSE(tiled(w.transpose_view(), Tensor::empty({9, 5000}, DType::f64)));
}

TEST(TiledCopy, ShortSidesAndSplitAxesBitExact) {
  // 2-D and 3-D transposes with a short side, including extents with no small divisor
  // (a prime: the axis is taken whole or the plan declines), through copy_into.
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(9);
  const std::pair<Shape, Dims> cases[] = {{{9, 5000}, {1, 0}},     {{5000, 9}, {1, 0}},       {{3, 4099}, {1, 0}},
                                          {{4099, 5}, {1, 0}},     {{3402, 9, 8}, {1, 0, 2}}, {{7, 730, 57}, {0, 2, 1}},
                                          {{6, 1000, 7}, {2, 1, 0}}, {{2, 3, 1000}, {2, 0, 1}}};
  for (DType dt : kSizes)
    for (const auto& [shape, perm] : cases) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape.to_string() + " perm " + perm.to_string());
      expect_permuted_copy(s, random_bits(rng, shape, dt), perm, false);
    }
}

TEST(TiledCopy, ShortAxesPermutationsBitExact) {
  // Random permutations of tensors of extents 2 and 3, every element size, through
  // transpose and copy_into: compact, a negative-stride source, a strided destination
  // (every other element of a larger buffer, the rest untouched), one and two threads.
  std::mt19937_64 rng(8);
  on_one_and_two_threads([&](Session& s) {
    for (DType dt : kSizes)
      for (int trial = 0; trial < 4; ++trial) {
        const int rank = 10 + trial;
        Shape shape;
        for (int i = 0; i < rank; ++i) shape.push_back(2 + static_cast<std::int64_t>(rng() % 4 == 0));
        Dims perm;
        for (int i = 0; i < rank; ++i) perm.push_back(i);
        std::shuffle(perm.begin(), perm.end(), rng);
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape.to_string() + " perm " + perm.to_string());
        const Tensor x = random_bits(rng, shape, dt);
        const Tensor v = x.permute_view(perm.span());
        EXPECT_TRUE(takes_kernel(s, v, Tensor::empty(v.shape().span(), dt), detail::try_tiled_copy));
        same_permuted_bits(transpose(s, x, perm), x, perm);
        // Negative strides on the source's first and last axes.
        const Tensor neg = x.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1).slice_view(rank - 1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
        const Tensor out = Tensor::empty(v.shape().span(), dt);
        copy_into(s, neg.permute_view(perm.span()), out);
        same_permuted_bits(out, neg, perm);
        // A strided destination: axis 0 of a buffer twice as long, odd positions.
        Shape big = v.shape();
        big[0] = 2 * big[0];
        const Tensor buf = random_bits(rng, big, dt);
        const std::vector<unsigned char> before = snapshot(buf);
        const Tensor dst = buf.slice_view(0, 1, big[0], 2);
        copy_into(s, v, dst);
        same_permuted_bits(dst, x, perm);
        const Tensor even = buf.slice_view(0, 0, big[0], 2);
        const std::vector<unsigned char> after = snapshot(buf);
        const auto es = static_cast<std::int64_t>(dtype_size(dt));
        int changed = 0;
        for_each_index(even.shape(), [&](const Dims& idx) {
          std::int64_t off = even.offset();
          for (int i = 0; i < even.rank(); ++i) off += idx[i] * even.stride(i);
          changed += std::memcmp(after.data() + off * es, before.data() + off * es, static_cast<std::size_t>(es)) != 0;
        });
        EXPECT_EQ(changed, 0);
      }
  });
}

// Note [Transposed tiles]
TEST(TiledCopy, ShortExtentPermutationsThroughTransposedTiles) {
  // Tensors of extent-2 or extent-3 axes only, where the tiles are transposes of small
  // blocks: random permutations, permutations that keep the fastest axis (folded into
  // 16-byte units at extent 2) or the two fastest (32-byte units), ranks 12 and 18 of
  // extent 2 and 7 and 11 of extent 3 (2 MiB and more: the larger tiles), every element
  // size, one and two threads, bit-exact.
  std::mt19937_64 rng(11);
  const std::pair<std::int64_t, int> shapes[] = {{2, 12}, {2, 18}, {3, 7}, {3, 11}};
  on_one_and_two_threads([&](Session& s) {
    for (DType dt : kSizes)
      for (const auto& [extent, rank] : shapes) {
        const Tensor x = random_bits(rng, Shape(rank, extent), dt);
        for (int keep = 0; keep < 3; ++keep)
          for (int trial = 0; trial < 2; ++trial) {
            Dims perm;
            for (int i = 0; i < rank; ++i) perm.push_back(i);
            // Row-major: the fastest axes are the last ones; `keep` of them stay last.
            std::shuffle(perm.begin(), perm.end() - keep, rng);
            SCOPED_TRACE(std::string(dtype_name(dt)) + " " + x.shape().to_string() + " perm " + perm.to_string());
            // Kept extent-3 axes coalesce into destination lines of 9 or 27 elements that
            // the line loop copies whole (too few axes left for B at rank 7).
            expect_permuted_copy(s, x, perm, extent == 2 || keep == 0);
          }
      }
  });
}

// Note [Transposed tiles]: units of 24 to 48 bytes go column by column, 64 and more in
// blocks. An 81 × 81 transpose of units (a folded fastest axis of extent u kept by the
// permutation) under two outer indices, as in gm_queen5_5_3's packing copy.
TEST(TiledCopy, FoldedUnitsOfEverySize) {
  std::mt19937_64 rng(12);
  const std::pair<DType, std::int64_t> units[] = {{DType::f64, 3}, {DType::f64, 4}, {DType::f64, 6},
                                                  {DType::f64, 9}, {DType::c128, 3}};  // 24, 32, 48, 72, 48 bytes
  on_one_and_two_threads([&](Session& s) {
    for (const auto& [dt, u] : units) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " unit extent " + std::to_string(u));
      expect_permuted_copy(s, random_bits(rng, {u, 81, 3, 3, 3, 3, 2}, dt), Dims{0, 2, 3, 4, 5, 1, 6}, true);
    }
  });
}

// Small transposes repeated over a batch axis (tiled_copy_plan: B's second axis may be
// split): [e, e, 288] and [e, e, e, 288] with the first two axes swapped (A cannot take
// the batch axis whole), extents 2, 3 and 4, every element size, one and two threads.
TEST(TiledCopy, BatchedSmallTransposes) {
  std::mt19937_64 rng(13);
  on_one_and_two_threads([&](Session& s) {
    for (DType dt : kSizes)
      for (std::int64_t e : {2, 3, 4})
        for (const bool rank4 : {false, true}) {
          const Shape shape = rank4 ? Shape{e, e, e, 288} : Shape{e, e, 288};
          const Dims perm = rank4 ? Dims{1, 0, 2, 3} : Dims{1, 0, 2};
          SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape.to_string());
          expect_permuted_copy(s, random_bits(rng, shape, dt), perm, true);
        }
  });
}
}  // namespace
}  // namespace tenferro::structural_transpose_test
