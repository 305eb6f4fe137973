// Tensor handle: layout (inline and heap), metadata, element access, copy/move and
// reference counting, contiguity, offsets, overflow checks, printing; Dims and storage.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::for_each_index;
using testing::iota_f64;
using testing::kAllDTypes;
using testing::value_at;

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kBig = 3000000000;  // > INT32_MAX

// Storage offset of `idx` computed from the tensor's strides.
std::int64_t linear(const Tensor& t, const Dims& idx) {
  std::int64_t o = t.offset();
  for (int i = 0; i < t.rank(); ++i) o += idx[i] * t.stride(i);
  return o;
}

// Installs a counting allocator on this thread for its lifetime.
struct CountingAllocator final : detail::BlockAllocator {
  int allocs = 0;
  int releases = 0;
  detail::StorageHeader* allocate(std::size_t bytes) override {
    ++allocs;
    return detail::heap_allocate_block(bytes);
  }
  void release(detail::StorageHeader* b) noexcept override {
    ++releases;
    detail::heap_free_block(b);
  }
};
struct AllocatorGuard {
  explicit AllocatorGuard(detail::BlockAllocator* a) : prev(detail::set_thread_allocator(a)) {}
  ~AllocatorGuard() { detail::set_thread_allocator(prev); }
  detail::BlockAllocator* prev;
};

// ------------------------------------------------------------------ handle basics

TEST(TensorHandle, SizeStaysSmall) {
  static_assert(sizeof(Tensor) <= 128);
  EXPECT_LE(sizeof(Tensor), 128u);
}

TEST(TensorHandle, UndefinedTensor) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.block(), nullptr);
  EXPECT_FALSE(t.shares_storage(t));
  EXPECT_EQ(t.to_string(), "tensor(undefined)");
  EXPECT_THROW(t.item<double>(), ArgumentError);
  EXPECT_THROW(t.at(), ArgumentError);
  EXPECT_THROW(t.set<double>({}, 1.0), ArgumentError);
  EXPECT_THROW(t.mutable_data_ptr<double>(), ArgumentError);
  EXPECT_THROW(t.permute_view({}), ArgumentError);
  EXPECT_THROW(t.slice_view(0, 0, 1), ArgumentError);
  EXPECT_THROW(t.reshape_view({1}), ArgumentError);
  EXPECT_THROW(t.broadcast_view({2}), ArgumentError);
  EXPECT_THROW(t.real_view(), ArgumentError);
  EXPECT_THROW(t.as_strided_view(Dims{1}, Dims{1}, 0), ArgumentError);
  Tensor u = t;  // copying and moving an undefined handle is fine
  Tensor w = std::move(u);
  EXPECT_FALSE(w.defined());
}

TEST(TensorHandle, MetadataOfACompactOwner) {
  Tensor t = Tensor::zeros({2, 3, 4}, DType::f32);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Dims{1, 2, 6}));
  EXPECT_EQ(t.extent(2), 4);
  EXPECT_EQ(t.stride(2), 6);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.read_only());
  EXPECT_TRUE(t.device() == Device{});
  EXPECT_EQ(t.device().kind, DeviceKind::cpu);
  EXPECT_EQ(t.data(), t.mutable_data());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u) << "storage data is 64-byte aligned";
  EXPECT_GE(t.block()->bytes, 24 * sizeof(float));
  EXPECT_GE(t.block()->capacity, t.block()->bytes);
}

TEST(TensorHandle, EveryDTypeOwner) {
  for (DType d : kAllDTypes) {
    Tensor t = Tensor::zeros({3, 2}, d);
    EXPECT_EQ(t.dtype(), d);
    EXPECT_EQ(t.numel(), 6);
    EXPECT_GE(t.block()->bytes, 6 * dtype_size(d));
    for_each_index(t.shape(), [&](const Dims& i) { EXPECT_EQ(value_at(t, i), std::complex<double>(0, 0)); });
  }
}

// ------------------------------------------------------------------ rank 0

TEST(TensorRank0, ItemSetAt) {
  Tensor t = Tensor::zeros({}, DType::f64);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_TRUE(t.shape().empty());
  EXPECT_TRUE(t.strides().empty());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.item<double>({}), 0.0);
  EXPECT_EQ(t.item<double>(), 0.0);
  t.set<double>({}, 3.5);
  EXPECT_EQ(t.item<double>(), 3.5);
  EXPECT_EQ(t.at().kind(), Scalar::Kind::floating);
  EXPECT_EQ(t.at().to<double>(), 3.5);
  EXPECT_THROW(t.item<double>({0}), RankError);
  EXPECT_THROW(t.set<double>({0}, 1.0), RankError);
  EXPECT_THROW(t.item<float>(), DTypeError);
  // Views of a rank-0 tensor.
  Tensor p = t.permute_view({});
  EXPECT_EQ(p.item<double>(), 3.5);
  EXPECT_TRUE(p.shares_storage(t));
  Tensor r = t.reshape_view({1, 1});
  EXPECT_EQ(r.item<double>({0, 0}), 3.5);
  Tensor b = t.broadcast_view({2, 3});
  EXPECT_TRUE(b.read_only());
  EXPECT_EQ(b.strides(), (Dims{0, 0}));
  EXPECT_EQ(b.item<double>({1, 2}), 3.5);
  EXPECT_THROW(t.slice_view(0, 0, 1), AxisError);
}

TEST(TensorRank0, ScalarConstructorDTypes) {
  EXPECT_EQ(Tensor::scalar(Scalar(5)).dtype(), DType::i64);
  EXPECT_EQ(Tensor::scalar(Scalar(5)).item<std::int64_t>(), 5);
  EXPECT_EQ(Tensor::scalar(Scalar(true)).dtype(), DType::b8);
  EXPECT_EQ(Tensor::scalar(Scalar(2.5f)).dtype(), DType::f64);
  EXPECT_EQ(Tensor::scalar(Scalar(c64(1, 2))).item<c128>(), c128(1, 2));
  EXPECT_EQ(Tensor::scalar(Scalar(7), DType::f32).item<float>(), 7.0f);
  EXPECT_EQ(Tensor::scalar(Scalar(7), DType::f32).rank(), 0);
}

// ------------------------------------------------------------------ zero extents

TEST(TensorZeroExtent, OwnersAndViews) {
  Tensor t = Tensor::zeros({3, 0, 2}, DType::f32);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.shape(), (Shape{3, 0, 2}));
  EXPECT_EQ(t.strides(), (Dims{1, 3, 3}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_THROW(t.item<float>({0, 0, 0}), IndexError);
  EXPECT_THROW(t.set<float>({0, 0, 0}, 1.f), IndexError);

  Tensor p = t.permute_view({2, 1, 0});
  EXPECT_EQ(p.shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(p.numel(), 0);
  Tensor s = t.slice_view(0, 1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 0, 2}));
  Tensor s2 = t.slice_view(1, 0, 5);
  EXPECT_EQ(s2.shape(), (Shape{3, 0, 2}));
  Tensor r = t.reshape_view({0});
  EXPECT_EQ(r.shape(), (Shape{0}));
  Tensor r2 = t.reshape_view({-1, 4});
  EXPECT_EQ(r2.shape(), (Shape{0, 4}));
  Tensor r3 = t.reshape_view({6, 0});
  EXPECT_EQ(r3.numel(), 0);
  EXPECT_THROW(t.reshape_view({0, -1}), ShapeError) << "-1 is ambiguous next to a 0 extent";
  Tensor b = t.broadcast_view({3, 0, 2, 5});
  EXPECT_EQ(b.numel(), 0);
  EXPECT_EQ(b.shape(), (Shape{3, 0, 2, 5}));
  // Extent 1 stretches to 0.
  Tensor one = Tensor::zeros({1}, DType::f64);
  EXPECT_EQ(one.broadcast_view({0}).numel(), 0);
  Tensor e = Tensor::zeros({0}, DType::i32);
  EXPECT_EQ(e.slice_view(0, 0, Tensor::kSliceEnd, -1).numel(), 0);
  EXPECT_EQ(e.slice_view(0, -5, 5, 2).numel(), 0);
}

TEST(TensorZeroExtent, ZeroSizeIsContiguousWhateverTheStrides) {
  // is_contiguous treats a zero extent as "trivially compact", but only when the 0 comes
  // before the first stride mismatch; the answer must not depend on the axis order.
  Tensor t = Tensor::zeros({3, 0, 2}, DType::f32);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.permute_view({1, 0, 2}).is_contiguous());  // {0,3,2}
  EXPECT_TRUE(t.permute_view({2, 1, 0}).is_contiguous());  // {2,0,3} strides {3,3,1}
  EXPECT_TRUE(Tensor::zeros({4, 0}, DType::f64).slice_view(0, 0, 4, 2).is_contiguous());
}

// ------------------------------------------------------------------ rank > 8 (heap layout)

TEST(TensorHeapLayout, Rank10) {
  const std::initializer_list<std::int64_t> shape = {2, 1, 2, 1, 2, 1, 2, 1, 2, 1};
  Tensor t = iota_f64(shape);
  EXPECT_EQ(t.rank(), 10);
  EXPECT_EQ(t.numel(), 32);
  EXPECT_EQ(t.shape(), Shape(shape));
  EXPECT_EQ(t.strides(), (Dims{1, 2, 2, 4, 4, 8, 8, 16, 16, 32}));
  EXPECT_TRUE(t.is_contiguous());
  for_each_index(t.shape(), [&](const Dims& i) { EXPECT_EQ(t.item<double>(i.span()), static_cast<double>(linear(t, i))); });
  Dims last(10, -1);
  EXPECT_EQ(t.item<double>(last.span()), 31.0);
  Dims bad(10, 0);
  bad[4] = 2;
  EXPECT_THROW(t.item<double>(bad.span()), IndexError);
  Dims nine(9, 0);
  EXPECT_THROW(t.item<double>(nine.span()), RankError);
  bad[4] = 1;
  t.set<double>(bad.span(), -1.0);
  EXPECT_EQ(static_cast<const double*>(t.data())[4], -1.0);
}

TEST(TensorHeapLayout, Rank10CopyDeepCopiesTheLayout) {
  Tensor c;
  {
    Tensor t = iota_f64({2, 1, 2, 1, 2, 1, 2, 1, 2, 1});
    c = t;  // copy-assign over an undefined handle
    EXPECT_TRUE(c.shares_storage(t));
    Tensor c2(t);
    t = Tensor::zeros({2}, DType::f64);  // big layout freed in t; copies keep theirs
    EXPECT_EQ(c2.rank(), 10);
    EXPECT_EQ(c2.strides(), (Dims{1, 2, 2, 4, 4, 8, 8, 16, 16, 32}));
    c2 = Tensor::zeros({2, 2, 2, 2, 2, 2, 2, 2, 2}, DType::i32);  // big over big
    EXPECT_EQ(c2.rank(), 9);
    EXPECT_EQ(c2.strides()[8], 256);
  }
  // The source handle is gone; the copy's layout and storage must still be valid.
  EXPECT_EQ(c.rank(), 10);
  EXPECT_EQ(c.shape(), (Shape{2, 1, 2, 1, 2, 1, 2, 1, 2, 1}));
  EXPECT_EQ(c.item<double>({1, 0, 1, 0, 1, 0, 1, 0, 1, 0}), 31.0);

  Tensor m(std::move(c));
  EXPECT_FALSE(c.defined());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(m.rank(), 10);
  EXPECT_EQ(m.item<double>({1, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 1.0);

  Tensor small = Tensor::zeros({2, 2}, DType::f64);
  small = m;  // inline ← heap
  EXPECT_EQ(small.rank(), 10);
  m = Tensor::zeros({3}, DType::f64);  // heap ← inline
  EXPECT_EQ(m.rank(), 1);
  EXPECT_EQ(small.item<double>({0, 0, 1, 0, 0, 0, 0, 0, 0, 0}), 2.0);
  Tensor& alias = small;
  small = alias;  // self copy-assignment
  EXPECT_EQ(small.rank(), 10);
  small = std::move(alias);  // self move-assignment
  EXPECT_EQ(small.rank(), 10);
  EXPECT_EQ(small.item<double>({1, 0, 1, 0, 1, 0, 1, 0, 1, 0}), 31.0);
}

TEST(TensorHeapLayout, Rank10Views) {
  Tensor t = iota_f64({2, 1, 2, 1, 2, 1, 2, 1, 2, 1});
  Tensor p = t.permute_view({9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_EQ(p.shape(), (Shape{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(p.strides(), (Dims{32, 16, 16, 8, 8, 4, 4, 2, 2, 1}));
  for_each_index(p.shape(), [&](const Dims& i) {
    Dims j(10, 0);
    for (int k = 0; k < 10; ++k) j[k] = i[9 - k];
    EXPECT_EQ(p.item<double>(i.span()), t.item<double>(j.span()));
  });
  Tensor tr = t.transpose_view(0, 8);
  EXPECT_EQ(tr.strides()[0], 16);
  EXPECT_EQ(tr.strides()[8], 1);
  EXPECT_EQ(tr.item<double>({1, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 16.0);
  Tensor s = t.slice_view(8, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  EXPECT_EQ(s.offset(), 16);
  EXPECT_EQ(s.strides()[8], -16);
  EXPECT_EQ(s.item<double>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 16.0);
  Tensor flat = t.reshape_view({32});
  EXPECT_EQ(flat.rank(), 1);
  EXPECT_EQ(flat.item<double>({31}), 31.0);
  Tensor back = flat.reshape_view({2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(back.rank(), 11);
  EXPECT_EQ(back.item<double>({1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}), 31.0);
  Tensor b = t.broadcast_view({2, 3, 2, 1, 2, 1, 2, 1, 2, 1, 4});
  EXPECT_TRUE(b.read_only());
  EXPECT_EQ(b.strides()[1], 0);
  EXPECT_EQ(b.strides()[10], 0);
  EXPECT_EQ(b.item<double>({1, 2, 1, 0, 1, 0, 1, 0, 1, 0, 3}), 31.0);
}

TEST(TensorHeapLayout, MaxRankAndAbove) {
  Dims ones64(64, 1);
  Tensor t = Tensor::zeros(ones64.span(), DType::f64);
  EXPECT_EQ(t.rank(), 64);
  EXPECT_EQ(t.numel(), 1);
  Dims idx(64, 0);
  t.set<double>(idx.span(), 2.0);
  EXPECT_EQ(t.item<double>(idx.span()), 2.0);
  Dims ones65(65, 1);
  EXPECT_THROW(Tensor::zeros(ones65.span(), DType::f64), RankError);
  EXPECT_THROW(Tensor::empty(ones65.span(), DType::f64), RankError);
  EXPECT_THROW(Tensor::full(ones65.span(), 1.0, DType::f64), RankError);
  EXPECT_THROW(t.reshape_view(ones65.span()), RankError);
  EXPECT_THROW(t.broadcast_view(ones65.span()), RankError);
}

TEST(TensorHeapLayout, BroadcastToExtentBeyondInt32) {
  Tensor one = Tensor::full({1}, 7.0, DType::f64);
  Tensor b = one.broadcast_view({kBig});
  EXPECT_EQ(b.rank(), 1);
  EXPECT_EQ(b.extent(0), kBig);
  EXPECT_EQ(b.stride(0), 0);
  EXPECT_EQ(b.shape(), (Shape{kBig}));
  EXPECT_EQ(b.strides(), (Dims{0}));
  EXPECT_EQ(b.numel(), kBig);
  EXPECT_TRUE(b.read_only());
  EXPECT_FALSE(b.is_contiguous());
  EXPECT_TRUE(b.shares_storage(one));
  EXPECT_EQ(b.item<double>({kBig - 1}), 7.0);
  EXPECT_EQ(b.item<double>({-1}), 7.0);
  EXPECT_EQ(b.item<double>({-kBig}), 7.0);
  EXPECT_THROW(b.item<double>({kBig}), IndexError);
  EXPECT_THROW(b.item<double>({-kBig - 1}), IndexError);
  EXPECT_THROW(b.set<double>({0}, 1.0), ArgumentError);

  // Copies and moves of a heap-layout handle.
  Tensor c = b;
  EXPECT_EQ(c.extent(0), kBig);
  EXPECT_TRUE(c.read_only());
  Tensor m = std::move(c);
  EXPECT_EQ(m.extent(0), kBig);
  b = Tensor();
  EXPECT_EQ(m.extent(0), kBig);
  EXPECT_EQ(m.item<double>({123456789012 % kBig}), 7.0);

  // Views of it.
  Tensor s = m.slice_view(0, 5, Tensor::kSliceEnd, 2);
  EXPECT_EQ(s.extent(0), (kBig - 5 - 1) / 2 + 1);
  EXPECT_EQ(s.stride(0), 0);
  EXPECT_TRUE(s.read_only());
  Tensor tail = m.slice_view(0, -10, Tensor::kSliceEnd);
  EXPECT_EQ(tail.extent(0), 10);
  Tensor r = m.reshape_view({kBig, 1});
  EXPECT_EQ(r.shape(), (Shape{kBig, 1}));
  EXPECT_TRUE(r.read_only());
  Tensor r2 = m.reshape_view({3, 1000000000});
  EXPECT_EQ(r2.strides(), (Dims{0, 0}));
  Tensor b2 = m.broadcast_view({kBig, 2});
  Tensor tr = b2.transpose_view();
  EXPECT_EQ(tr.shape(), (Shape{2, kBig}));
  EXPECT_EQ(tr.item<double>({1, kBig - 1}), 7.0);
  EXPECT_TRUE(tr.read_only());
  Tensor as = one.as_strided_view(Dims{kBig}, Dims{0}, 0);
  EXPECT_EQ(as.extent(0), kBig);
  EXPECT_TRUE(as.read_only());
}

TEST(TensorHeapLayout, StridesBeyondInt32) {
  // A zero-size owner with a huge extent: no allocation, heap layout.
  Tensor z = Tensor::zeros({kBig, 0}, DType::f64);
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(z.extent(0), kBig);
  EXPECT_EQ(z.strides(), (Dims{1, kBig}));
  EXPECT_TRUE(z.is_contiguous());
  Tensor zc = z;
  EXPECT_EQ(zc.stride(1), kBig);
  // A slice with a huge step: one element, stride beyond int32.
  Tensor t = iota_f64({5});
  Tensor s = t.slice_view(0, 1, Tensor::kSliceEnd, kBig);
  EXPECT_EQ(s.extent(0), 1);
  EXPECT_EQ(s.stride(0), kBig);
  EXPECT_EQ(s.item<double>({0}), 1.0);
  EXPECT_TRUE(s.is_contiguous()) << "stride of an extent-1 axis does not matter";
  // as_strided_view with a huge stride on an extent-1 axis.
  Tensor a = t.as_strided_view(Dims{1, 2}, Dims{5000000000, 1}, 3);
  EXPECT_EQ(a.stride(0), 5000000000);
  EXPECT_EQ(a.item<double>({0, 1}), 4.0);
  Tensor ac(a);
  Tensor am(std::move(ac));
  EXPECT_EQ(am.stride(0), 5000000000);
  EXPECT_EQ(am.transpose_view().item<double>({1, 0}), 4.0);
}

// ------------------------------------------------------------------ overflow-checked extents

TEST(TensorShapeChecks, OverflowNegativeAndRank) {
  EXPECT_THROW(Tensor::zeros({kI64Max, 2}, DType::f64), IndexError);
  EXPECT_THROW(Tensor::zeros({std::int64_t{1} << 62, 4}, DType::b8), IndexError);
  EXPECT_THROW(Tensor::zeros({std::int64_t{1} << 61}, DType::f64), IndexError) << "byte count overflows";
  EXPECT_THROW(Tensor::empty({kI64Max, 2}, DType::i32), IndexError);
  EXPECT_THROW(Tensor::ones({kI64Max, kI64Max}, DType::i32), IndexError);
  EXPECT_THROW(Tensor::zeros({-1}, DType::f64), ShapeError);
  EXPECT_THROW(Tensor::zeros({2, -3}, DType::f64), ShapeError);
  EXPECT_THROW(Tensor::empty({-1, 0}, DType::f64), ShapeError);
  EXPECT_THROW(Tensor::full({-2}, 1.0, DType::f64), ShapeError);
  Tensor one = Tensor::zeros({1}, DType::f64);
  EXPECT_THROW(one.broadcast_view({kI64Max, 2}), IndexError);
  EXPECT_THROW(one.broadcast_view({-1}), ShapeError);
}

TEST(TensorShapeChecks, ZeroExtentDoesNotHideOverflowOfTheOthers) {
  // numel is 0, but the compact strides of [0, 2^62, 4, 4] do not fit in int64
  // (NumPy also rejects such shapes as "too big").
  EXPECT_THROW(Tensor::zeros({0, std::int64_t{1} << 62, 4, 4}, DType::f64), IndexError);
  // Here every compact stride fits ({1, 1, INT64_MAX}); accepting the shape or refusing it
  // with IndexError are both fine, but computing the strides must not overflow (UBSan).
  try {
    Tensor e = Tensor::empty({0, kI64Max, 2}, DType::f64);
    EXPECT_EQ(e.numel(), 0);
    EXPECT_EQ(e.strides(), (Dims{1, 1, kI64Max}));
  } catch (const IndexError&) {
  }
}

// ------------------------------------------------------------------ element access

TEST(TensorElementAccess, NegativeIndicesRangeRankDType) {
  Tensor t = Tensor::from_data<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.item<double>({0, 0}), 1.0);
  EXPECT_EQ(t.item<double>({1, 0}), 2.0);
  EXPECT_EQ(t.item<double>({0, 1}), 3.0);
  EXPECT_EQ(t.item<double>({-1, -1}), 6.0);
  EXPECT_EQ(t.item<double>({-2, -3}), 1.0);
  EXPECT_EQ(t.item<double>({-1, 0}), 2.0);
  EXPECT_THROW(t.item<double>({2, 0}), IndexError);
  EXPECT_THROW(t.item<double>({0, 3}), IndexError);
  EXPECT_THROW(t.item<double>({-3, 0}), IndexError);
  EXPECT_THROW(t.item<double>({0, -4}), IndexError);
  EXPECT_THROW(t.item<double>({kI64Max, 0}), IndexError);
  EXPECT_THROW(t.item<double>({std::numeric_limits<std::int64_t>::min(), 0}), IndexError);
  EXPECT_THROW(t.item<double>({0}), RankError);
  EXPECT_THROW(t.item<double>({0, 0, 0}), RankError);
  EXPECT_THROW(t.item<double>(), RankError);
  EXPECT_THROW(t.item<float>({0, 0}), DTypeError);
  EXPECT_THROW(t.item<c128>({0, 0}), DTypeError);
  EXPECT_THROW(t.mutable_data_ptr<float>(), DTypeError);

  t.set<double>({-1, 0}, 9.0);
  EXPECT_EQ(t.item<double>({1, 0}), 9.0);
  t.set<double>({0, -1}, -5.0);
  EXPECT_EQ(t.item<double>({0, 2}), -5.0);
  EXPECT_THROW(t.set<double>({2, 0}, 1.0), IndexError);
  EXPECT_THROW(t.set<double>({0}, 1.0), RankError);
  EXPECT_THROW(t.set<float>({0, 0}, 1.0f), DTypeError);
  t.mutable_data_ptr<double>()[0] = 42.0;
  EXPECT_EQ(t.item<double>({0, 0}), 42.0);

  const Scalar s = t.at({-1, -1});
  EXPECT_EQ(s.kind(), Scalar::Kind::floating);
  EXPECT_EQ(s.to<double>(), 6.0);
  EXPECT_THROW(t.at({2, 0}), IndexError);
  EXPECT_THROW(t.at({0}), RankError);
}

TEST(TensorElementAccess, DataPtr) {
  Tensor t = Tensor::from_data<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.data_ptr<double>()[5], 6.0);
  EXPECT_EQ(t.data_ptr<double>(), t.data());
  EXPECT_THROW(t.data_ptr<std::int64_t>(), DTypeError);
  EXPECT_THROW(Tensor().data_ptr<double>(), ArgumentError);
  Tensor b = Tensor::from_data<double>({1}, {1.5}).broadcast_view({4});
  EXPECT_EQ(b.data_ptr<double>()[0], 1.5) << "reading a read-only view is fine";
  EXPECT_EQ(t.slice_view(1, 1, 3).data_ptr<double>(), t.mutable_data_ptr<double>() + 2);
}

TEST(TensorElementAccess, AtKindPerDType) {
  EXPECT_EQ(Tensor::ones({1}, DType::b8).at({0}).kind(), Scalar::Kind::boolean);
  EXPECT_EQ(Tensor::ones({1}, DType::b8).at({0}).to<bool>(), true);
  EXPECT_EQ(Tensor::ones({1}, DType::i32).at({0}).kind(), Scalar::Kind::integer);
  EXPECT_EQ(Tensor::ones({1}, DType::i64).at({0}).kind(), Scalar::Kind::integer);
  EXPECT_EQ(Tensor::ones({1}, DType::f32).at({0}).kind(), Scalar::Kind::floating);
  EXPECT_EQ(Tensor::ones({1}, DType::f64).at({0}).kind(), Scalar::Kind::floating);
  EXPECT_EQ(Tensor::ones({1}, DType::c64).at({0}).kind(), Scalar::Kind::complex);
  Tensor c = Tensor::from_data<c128>({1}, {c128(1, -2)});
  EXPECT_EQ(c.at({0}).kind(), Scalar::Kind::complex);
  EXPECT_EQ(c.at({0}).to<c128>(), c128(1, -2));
  Tensor i = Tensor::from_data<std::int64_t>({1}, {kI64Max});
  EXPECT_EQ(i.at({0}).to<std::int64_t>(), kI64Max);
}

TEST(TensorElementAccess, ReadOnlyBroadcastView) {
  Tensor base = Tensor::from_data<double>({1}, {1.5});
  Tensor b = base.broadcast_view({4});
  EXPECT_TRUE(b.read_only());
  EXPECT_FALSE(base.read_only());
  EXPECT_THROW(b.set<double>({0}, 2.0), ArgumentError);
  EXPECT_THROW(b.mutable_data(), ArgumentError);
  EXPECT_THROW(b.mutable_data_ptr<double>(), ArgumentError);
  try {
    b.mutable_data("my_kernel");
    ADD_FAILURE() << "no ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "my_kernel");
  }
  EXPECT_EQ(b.data(), base.data());
  EXPECT_EQ(b.item<double>({3}), 1.5);
  // Writes through the owner are visible in the view.
  base.set<double>({0}, 4.0);
  EXPECT_EQ(b.item<double>({2}), 4.0);
  // Views of a read-only view stay read-only.
  EXPECT_TRUE(b.slice_view(0, 0, 1).read_only());
  EXPECT_TRUE(b.slice_view(0, 0, 1).reshape_view({}).read_only());
  EXPECT_TRUE(b.reshape_view({2, 2}).read_only());
  EXPECT_TRUE(b.reshape_view({2, 2}).permute_view({1, 0}).read_only());
  EXPECT_TRUE(b.broadcast_view({4}).read_only());
  EXPECT_TRUE(b.as_strided_view(Dims{1}, Dims{1}, 0).read_only());
  EXPECT_THROW(b.slice_view(0, 0, 1).set<double>({0}, 1.0), ArgumentError);
  // Broadcasting that stretches nothing is not read-only.
  Tensor same = base.broadcast_view({1});
  EXPECT_FALSE(same.read_only());
  Tensor added_unit = base.broadcast_view({1, 1, 1});
  EXPECT_FALSE(added_unit.read_only());
  added_unit.set<double>({0, 0, 0}, 8.0);
  EXPECT_EQ(base.item<double>({0}), 8.0);
}

// ------------------------------------------------------------------ copy / move / refcount

TEST(TensorSemantics, CopyAndMoveShareStorage) {
  Tensor a = Tensor::zeros({3}, DType::i32);
  EXPECT_EQ(a.block()->refs.load(), 1);
  Tensor b = a;
  EXPECT_TRUE(b.shares_storage(a));
  EXPECT_TRUE(a.shares_storage(b));
  EXPECT_EQ(a.block()->refs.load(), 2);
  b.set<std::int32_t>({1}, 7);
  EXPECT_EQ(a.item<std::int32_t>({1}), 7) << "a copy is a handle, not a deep copy";
  Tensor c = std::move(b);
  EXPECT_FALSE(b.defined());  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(b.shares_storage(a));
  EXPECT_TRUE(c.shares_storage(a));
  EXPECT_EQ(a.block()->refs.load(), 2);
  b = a;  // assigning to a moved-from handle
  EXPECT_EQ(a.block()->refs.load(), 3);
  Tensor other = Tensor::zeros({3}, DType::i32);
  EXPECT_FALSE(other.shares_storage(a));
  b = other;
  EXPECT_EQ(a.block()->refs.load(), 2);
  EXPECT_EQ(other.block()->refs.load(), 2);
  c = std::move(other);
  EXPECT_EQ(a.block()->refs.load(), 1);
  Tensor v = a.slice_view(0, 1, 2);
  EXPECT_TRUE(v.shares_storage(a));
  EXPECT_EQ(a.block()->refs.load(), 2);
  Tensor& self = a;
  a = self;
  EXPECT_EQ(a.block()->refs.load(), 2);
  a = std::move(self);
  EXPECT_TRUE(a.defined());
  EXPECT_EQ(a.block()->refs.load(), 2);
}

TEST(TensorSemantics, LastHandleReleasesTheBlockOnce) {
  CountingAllocator alloc;
  {
    AllocatorGuard guard(&alloc);
    Tensor view;
    {
      Tensor a = Tensor::from_data<double>({4}, {1, 2, 3, 4});
      EXPECT_EQ(alloc.allocs, 1);
      Tensor b = a;
      view = a.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1).reshape_view({2, 2});
      Tensor moved = std::move(b);
      a = Tensor();
      EXPECT_EQ(alloc.releases, 0);
    }
    EXPECT_EQ(alloc.releases, 0) << "a view keeps the storage alive";
    EXPECT_EQ(view.item<double>({0, 0}), 4.0);
    EXPECT_EQ(view.item<double>({1, 1}), 1.0);
    view = Tensor();
    EXPECT_EQ(alloc.releases, 1);
    // Temporaries and views that die at once.
    (void)Tensor::zeros({100}, DType::c128).permute_view({0}).numel();
    EXPECT_EQ(alloc.allocs, 2);
    EXPECT_EQ(alloc.releases, 2);
  }
  EXPECT_EQ(detail::thread_allocator(), nullptr);
}

TEST(TensorSemantics, ManyHandlesStress) {
  Tensor base = iota_f64({8, 8});
  std::vector<Tensor> handles;
  for (int i = 0; i < 200; ++i) {
    handles.push_back(i % 3 == 0 ? base : i % 3 == 1 ? base.transpose_view() : base.slice_view(1, i % 8, 8));
  }
  EXPECT_EQ(base.block()->refs.load(), 201);
  handles.erase(handles.begin(), handles.begin() + 100);
  EXPECT_EQ(base.block()->refs.load(), 101);
  handles.clear();
  EXPECT_EQ(base.block()->refs.load(), 1);
}

// ------------------------------------------------------------------ contiguity and offsets

TEST(TensorLayout, IsContiguousRules) {
  Tensor t = iota_f64({2, 3});
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.transpose_view().is_contiguous());
  EXPECT_TRUE(iota_f64({1, 3}).transpose_view().is_contiguous()) << "{3,1} with strides {1,1}";
  EXPECT_TRUE(iota_f64({3, 1}).transpose_view().is_contiguous()) << "{1,3} with strides {3,1}";
  EXPECT_TRUE(t.slice_view(1, 0, 2).is_contiguous()) << "prefix of the last axis";
  EXPECT_TRUE(t.slice_view(1, 1, 3).is_contiguous()) << "suffix of the last axis, offset 2";
  EXPECT_FALSE(t.slice_view(0, 0, 1).is_contiguous()) << "{1,3} with strides {1,2}";
  EXPECT_FALSE(t.slice_view(1, 0, 3, 2).is_contiguous());
  EXPECT_FALSE(t.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1).is_contiguous());
  EXPECT_TRUE(t.slice_view(0, 1, 2).slice_view(1, 1, 2).is_contiguous()) << "single element";
  EXPECT_FALSE(Tensor::zeros({1}, DType::f64).broadcast_view({3}).is_contiguous());
  EXPECT_TRUE(Tensor::zeros({1}, DType::f64).broadcast_view({1, 1}).is_contiguous());
  EXPECT_TRUE(t.reshape_view({6}).is_contiguous());
  EXPECT_TRUE(t.slice_view(1, 1, 1).is_contiguous()) << "zero-size";
  EXPECT_TRUE(Tensor::scalar(Scalar(1.0)).is_contiguous());
  Tensor c = Tensor::zeros({3}, DType::c128);
  EXPECT_FALSE(c.real_view().is_contiguous());
  Tensor p = iota_f64({2, 3, 4}).permute_view({0, 2, 1});
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_TRUE(p.permute_view({0, 2, 1}).is_contiguous());
}

TEST(TensorLayout, Offsets) {
  Tensor t = iota_f64({4});
  EXPECT_EQ(t.offset(), 0);
  EXPECT_EQ(t.slice_view(0, 1, 3).offset(), 1);
  EXPECT_EQ(t.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1).offset(), 3);
  EXPECT_EQ(t.slice_view(0, -2, Tensor::kSliceEnd).offset(), 2);
  EXPECT_EQ(t.slice_view(0, 1, 3).slice_view(0, 1, 2).offset(), 2);
  Tensor m = iota_f64({2, 3});
  EXPECT_EQ(m.slice_view(1, 1, 3).offset(), 2);
  EXPECT_EQ(m.slice_view(1, 1, 3).slice_view(0, 1, 2).offset(), 3);
  EXPECT_EQ(m.slice_view(1, 1, 3).transpose_view().offset(), 2);
  Tensor c = Tensor::zeros({3}, DType::c128);
  EXPECT_EQ(c.real_view().offset(), 0);
  EXPECT_EQ(c.imag_view().offset(), 1) << "in units of the real dtype";
  EXPECT_EQ(c.slice_view(0, 2, 3).imag_view().offset(), 5);
  EXPECT_EQ(t.as_strided_view(Dims{2}, Dims{1}, 2).offset(), 2);
  // An empty slice keeps a valid offset.
  EXPECT_GE(t.slice_view(0, 3, 1).offset(), 0);
  // Element pointers follow offset and strides.
  Tensor s = m.slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -2);
  EXPECT_EQ(s.data(), static_cast<const double*>(m.data()) + s.offset());
  for_each_index(s.shape(), [&](const Dims& i) {
    EXPECT_EQ(s.item<double>(i.span()), static_cast<double>(linear(s, i)));
  });
}

// ------------------------------------------------------------------ printing

TEST(TensorPrint, Rank0) {
  EXPECT_EQ(Tensor::scalar(Scalar(5)).to_string(), "tensor(5, dtype=i64, shape=[])");
  EXPECT_EQ(Tensor::scalar(Scalar(2.5)).to_string(), "tensor(2.5, dtype=f64, shape=[])");
  EXPECT_EQ(Tensor::scalar(Scalar(1), DType::f32).to_string(), "tensor(1., dtype=f32, shape=[])");
  EXPECT_EQ(Tensor::scalar(Scalar(true)).to_string(), "tensor(true, dtype=bool, shape=[])");
  EXPECT_EQ(Tensor::scalar(Scalar(c128(0, -1))).to_string(), "tensor(0.-1.j, dtype=c128, shape=[])");
}

TEST(TensorPrint, Rank1) {
  EXPECT_EQ(Tensor::arange(3, DType::i32).to_string(), "tensor([0, 1, 2], dtype=i32, shape=[3])");
  EXPECT_EQ(Tensor::from_data<double>({3}, {1, -2.5, 0.1}).to_string(), "tensor([1., -2.5, 0.1], dtype=f64, shape=[3])");
  EXPECT_EQ(Tensor::from_data<bool>({3}, {true, false, true}).to_string(), "tensor([true, false, true], dtype=bool, shape=[3])");
  EXPECT_EQ(Tensor::from_data<std::int64_t>({2}, {-kI64Max, kI64Max}).to_string(),
            "tensor([-9223372036854775807, 9223372036854775807], dtype=i64, shape=[2])");
  EXPECT_EQ(Tensor::from_data<c128>({2}, {c128(1, 2), c128(-0.5, -1)}).to_string(),
            "tensor([1.+2.j, -0.5-1.j], dtype=c128, shape=[2])");
  EXPECT_EQ(Tensor::from_data<c64>({2}, {c64(1.5f, -0.0f), c64(0, 0.25f)}).to_string(),
            "tensor([1.5-0.j, 0.+0.25j], dtype=c64, shape=[2])");
}

TEST(TensorPrint, FloatFormatting) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Tensor::from_data<double>({6}, {-0.0, 1e-10, 1e20, inf, -inf, std::nan("")}).to_string(),
            "tensor([-0., 1e-10, 1e+20, inf, -inf, nan], dtype=f64, shape=[6])");
  EXPECT_EQ(Tensor::from_data<double>({2}, {1.0 / 3, 123456789.0}).to_string(),
            "tensor([0.33333333, 1.2345679e+08], dtype=f64, shape=[2])");
  EXPECT_EQ(Tensor::from_data<float>({2}, {1.0f / 3, 100.0f}).to_string(), "tensor([0.333333, 100.], dtype=f32, shape=[2])");
}

TEST(TensorPrint, Matrices) {
  EXPECT_EQ(Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4}).to_string(),
            "tensor([[1., 2.],\n"
            "        [3., 4.]], dtype=f64, shape=[2, 2])");
  EXPECT_EQ(Tensor::from_row_major<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).to_string(),
            "tensor([[1, 2, 3],\n"
            "        [4, 5, 6]], dtype=i32, shape=[2, 3])");
  // A view prints its logical elements.
  EXPECT_EQ(Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4}).transpose_view().to_string(),
            "tensor([[1., 3.],\n"
            "        [2., 4.]], dtype=f64, shape=[2, 2])");
  EXPECT_EQ(Tensor::from_data<bool>({1, 2}, {true, false}).to_string(), "tensor([[true, false]], dtype=bool, shape=[1, 2])");
  std::ostringstream os;
  os << Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(os.str(), Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4}).to_string());
}

TEST(TensorPrint, Rank3BlocksAreSlicesAlongTheLastAxis) {
  // Column-major data 0..7: element (i, j, k) = i + 2j + 4k; block k is t[:, :, k].
  std::vector<std::int32_t> v(8);
  for (int i = 0; i < 8; ++i) v[i] = i;
  Tensor t = Tensor::from_data<std::int32_t>(Dims{2, 2, 2}.span(), std::span<const std::int32_t>(v));
  EXPECT_EQ(t.to_string(),
            "tensor([[[0, 2],\n"
            "         [1, 3]],\n"
            "\n"
            "        [[4, 6],\n"
            "         [5, 7]]], dtype=i32, shape=[2, 2, 2])");
}

TEST(TensorPrint, ZeroSize) {
  EXPECT_EQ(Tensor::zeros({0}, DType::f64).to_string(), "tensor([], dtype=f64, shape=[0])");
  EXPECT_EQ(Tensor::zeros({0, 3}, DType::f64).to_string(), "tensor([], dtype=f64, shape=[0, 3])");
  EXPECT_EQ(Tensor::zeros({3, 0}, DType::i32).to_string(), "tensor([], dtype=i32, shape=[3, 0])");
  EXPECT_EQ(Tensor::zeros({2, 2, 0}, DType::b8).to_string(), "tensor([], dtype=bool, shape=[2, 2, 0])");
}

TEST(TensorPrint, ZeroSizeWithLongAxesStaysShort) {
  // numel is 0, but printing must not emit one "[]" per index of the long axis
  // (NumPy prints "array([], shape=(5000, 0), dtype=float64)").
  const std::string s = Tensor::zeros({5000, 0}, DType::f64).to_string();
  EXPECT_LT(s.size(), 200u) << s.substr(0, 200);
}

TEST(TensorPrint, Summarization) {
  EXPECT_EQ(Tensor::arange(2000, DType::i64).to_string(),
            "tensor([0, 1, 2, ..., 1997, 1998, 1999], dtype=i64, shape=[2000])");
  EXPECT_EQ(Tensor::arange(1000, DType::i64).to_string().find("..."), std::string::npos) << "1000 elements print in full";
  EXPECT_NE(Tensor::arange(1001, DType::i64).to_string().find("..."), std::string::npos);
  Tensor m = Tensor::arange(1600, DType::i32).reshape_view({40, 40});
  const std::string s = m.to_string();
  EXPECT_EQ(s.rfind("tensor([[0, 40, 80, ..., 1480, 1520, 1560],\n", 0), 0u) << s;
  EXPECT_NE(s.find("\n        ...,\n"), std::string::npos) << s;
  EXPECT_NE(s.find("[39, 79, 119, ..., 1519, 1559, 1599]], dtype=i32, shape=[40, 40])"), std::string::npos) << s;
  EXPECT_LT(s.size(), 400u);
  // A broadcast view of 3e9 elements prints instantly.
  Tensor b = Tensor::full({1}, 7.0, DType::f64).broadcast_view({kBig});
  EXPECT_EQ(b.to_string(), "tensor([7., 7., 7., ..., 7., 7., 7.], dtype=f64, shape=[3000000000])");
}

// ------------------------------------------------------------------ Dims, checked arithmetic, storage

TEST(DimsTest, InlineHeapCopyMove) {
  Dims a{1, 2, 3};
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(a.to_string(), "[1, 2, 3]");
  EXPECT_EQ(Dims{}.to_string(), "[]");
  EXPECT_EQ(a.back(), 3);
  Dims big(12, 7);
  EXPECT_EQ(big.size(), 12);
  EXPECT_EQ(big[11], 7);
  Dims big_copy = big;
  big_copy[0] = -1;
  EXPECT_EQ(big[0], 7) << "deep copy";
  Dims moved = std::move(big_copy);
  EXPECT_EQ(moved.size(), 12);
  EXPECT_EQ(moved[0], -1);
  for (int i = 0; i < 20; ++i) a.push_back(i);
  EXPECT_EQ(a.size(), 23);
  EXPECT_EQ(a[3], 0);
  EXPECT_EQ(a[22], 19);
  EXPECT_EQ(a[0], 1);
  a = moved;
  EXPECT_EQ(a, moved);
  a.resize(2);
  EXPECT_EQ(a, (Dims{-1, 7}));
  a.resize(4);
  EXPECT_EQ(a, (Dims{-1, 7, 0, 0}));
  EXPECT_FALSE(a == moved);
  std::vector<std::int64_t> v{4, 5};
  EXPECT_EQ(Dims(std::span<const std::int64_t>(v)), (Dims{4, 5}));
  EXPECT_THROW(a.resize(-1), ArgumentError);
  EXPECT_EQ(dims_string(std::span<const std::int64_t>(v)), "[4, 5]");
}

TEST(CheckedArithmetic, MulAddNumel) {
  EXPECT_EQ(checked_mul(3, 4, "op"), 12);
  EXPECT_EQ(checked_mul(kI64Max, 1, "op"), kI64Max);
  EXPECT_THROW(checked_mul(kI64Max, 2, "op"), IndexError);
  EXPECT_THROW(checked_mul(std::numeric_limits<std::int64_t>::min(), -1, "op"), IndexError);
  EXPECT_EQ(checked_add(kI64Max - 1, 1, "op"), kI64Max);
  EXPECT_THROW(checked_add(kI64Max, 1, "op"), IndexError);
  const std::int64_t s1[] = {2, 3, 4};
  EXPECT_EQ(checked_numel(s1, "op"), 24);
  EXPECT_EQ(checked_numel({}, "op"), 1);
  const std::int64_t s2[] = {kI64Max, 2};
  try {
    checked_numel(s2, "my_op");
    ADD_FAILURE() << "no IndexError";
  } catch (const IndexError& e) {
    EXPECT_EQ(e.op(), "my_op");
    EXPECT_NE(std::string(e.what()).find("overflow"), std::string::npos) << e.what();
  }
  const std::int64_t s3[] = {2, -1};
  EXPECT_THROW(checked_numel(s3, "op"), ShapeError);
  const std::int64_t s4[] = {kI64Max, -1};
  EXPECT_THROW(checked_numel(s4, "op"), ShapeError) << "a negative extent is a ShapeError even when others overflow";
}

TEST(StorageTest, SizeClassesAndBlocks) {
  EXPECT_EQ(detail::size_class_bytes(0), 64u);
  EXPECT_EQ(detail::size_class_bytes(1), 64u);
  EXPECT_EQ(detail::size_class_bytes(64), 64u);
  EXPECT_EQ(detail::size_class_bytes(65), 80u);
  EXPECT_EQ(detail::size_class_bytes(128), 128u);
  EXPECT_EQ(detail::size_class_bytes(129), 160u);
  for (std::size_t b = 1; b < 100000; b = b * 3 / 2 + 1) {
    const std::size_t c = detail::size_class_bytes(b);
    EXPECT_GE(c, b);
    EXPECT_LE(c, b < 64 ? 64 : b + b / 4 + 1) << b;
    EXPECT_EQ(detail::size_class_bytes(c), c) << "a size class maps to itself";
  }
  detail::StorageHeader* h = detail::heap_allocate_block(100);
  EXPECT_EQ(h->bytes, 100u);
  EXPECT_EQ(h->capacity, detail::size_class_bytes(100));
  EXPECT_EQ(h->refs.load(), 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(h->data()) % 64, 0u);
  detail::retain_block(h);
  EXPECT_EQ(h->refs.load(), 2);
  detail::release_block(h);
  EXPECT_EQ(h->refs.load(), 1);
  detail::release_block(h);  // frees
  detail::release_block(nullptr);
  detail::retain_block(nullptr);
}

}  // namespace
}  // namespace tenferro
