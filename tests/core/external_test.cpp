// Tensor::from_external: zero-copy tensors over caller memory, their lifetime (the
// owner's release runs once, after the last view), read-only memory, and bad layouts.
#include <atomic>
#include <complex>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::expect_error;

// Counts releases of one buffer.
struct Counter {
  std::atomic<int> releases{0};
  static void release(void* c) { static_cast<Counter*>(c)->releases.fetch_add(1); }
  ExternalOwner owner(bool read_only = false) { return {this, &Counter::release, read_only}; }
};

TEST(FromExternal, SharesMemoryAndReleasesOnceAfterTheLastView) {
  std::vector<double> buf = {1, 2, 3, 4, 5, 6};
  Counter c;
  {
    Tensor v;
    {
      const std::int64_t shape[] = {2, 3};
      Tensor t = Tensor::from_external(buf.data(), shape, {}, DType::f64, c.owner());
      EXPECT_EQ(t.data(), buf.data());
      EXPECT_TRUE(t.is_contiguous());
      EXPECT_EQ(t.item<double>({1, 2}), 6.0);
      t.set<double>({0, 1}, 30.0);  // writes reach the caller's memory
      EXPECT_EQ(buf[2], 30.0);
      v = t.slice_view(1, 1, Tensor::kSliceEnd);  // a view keeps the memory alive
    }
    EXPECT_EQ(c.releases.load(), 0);
    EXPECT_EQ(v.item<double>({1, 0}), 4.0);
  }
  EXPECT_EQ(c.releases.load(), 1);
}

TEST(FromExternal, ReleaseRunsOnTheThreadDroppingTheLastReference) {
  std::vector<float> buf(8, 1.0f);
  Counter c;
  const std::int64_t shape[] = {8};
  Tensor t = Tensor::from_external(buf.data(), shape, {}, DType::f32, c.owner());
  std::thread th([u = std::move(t)]() mutable { u.reset(); });
  th.join();
  EXPECT_EQ(c.releases.load(), 1);
}

TEST(FromExternal, OpsReadAndWriteItInASessionWithoutPoolingIt) {
  CpuBackend backend;
  std::vector<double> a = {1, 2, 3, 4}, out(4, -7.0);
  Counter ca, co;
  const std::int64_t shape[] = {2, 2};
  {
    HeldSession s = backend.open_session();
    const BufferPoolStats before = s.pool_stats();
    {
      Tensor ta = Tensor::from_external(a.data(), shape, {}, DType::f64, ca.owner(true));
      Tensor to = Tensor::from_external(out.data(), shape, {}, DType::f64, co.owner());
      add_into(s, ta, ta, to);
      EXPECT_EQ(out, (std::vector<double>{2, 4, 6, 8}));
      EXPECT_EQ(sum(s, ta).item<double>(), 10.0);
    }
    EXPECT_EQ(ca.releases.load(), 1);  // released inside the session, not cached
    EXPECT_EQ(co.releases.load(), 1);
    EXPECT_EQ(s.pool_stats().cached_blocks - before.cached_blocks, 1u);  // only sum's result went to the pool
  }
}

TEST(FromExternal, ReadOnlyMemoryRefusesWrites) {
  CpuBackend backend;
  const std::vector<double> a = {1, 2, 3};
  const std::int64_t shape[] = {3};
  Tensor t = Tensor::from_external(const_cast<double*>(a.data()), shape, {}, DType::f64, {nullptr, nullptr, true});
  EXPECT_TRUE(t.read_only());
  expect_error<ArgumentError>([&] { (void)t.mutable_data(); }, "mutable_data");
  expect_error<ArgumentError>([&] { t.set<double>({0}, 9.0); }, "set");
  backend.with_session([&](Session& s) { expect_error<ArgumentError>([&] { neg_into(s, t, t); }, "neg"); });
  EXPECT_EQ(a, (std::vector<double>{1, 2, 3}));
  EXPECT_TRUE(t.slice_view(0, 1, 3).read_only());  // views stay read-only
}

TEST(FromExternal, RowMajorAndNegativeStrides) {
  // A C-ordered 2×3 array: element (i, j) at i*3 + j.
  std::vector<std::int32_t> buf = {0, 1, 2, 10, 11, 12};
  const std::int64_t shape[] = {2, 3};
  const std::int64_t rm[] = {3, 1};
  Tensor t = Tensor::from_external(buf.data(), shape, rm, DType::i32, {});
  EXPECT_EQ(t.item<std::int32_t>({1, 2}), 12);
  EXPECT_FALSE(t.is_contiguous());
  // Reversed along axis 1: element (i, j) at buf[i*3 + 2 - j].
  const std::int64_t rev[] = {3, -1};
  Tensor r = Tensor::from_external(buf.data() + 2, shape, rev, DType::i32, {});
  EXPECT_EQ(r.item<std::int32_t>({0, 0}), 2);
  EXPECT_EQ(r.item<std::int32_t>({1, 2}), 10);
  EXPECT_EQ(r.offset(), 2);  // storage starts at the lowest address reached
  CpuBackend backend;
  backend.with_session([&](Session& s) { EXPECT_EQ(sum(s, r).item<std::int32_t>(), 36); });
}

TEST(FromExternal, OverlappingAndZeroStrides) {
  CpuBackend backend;
  std::vector<double> buf = {1, 2, 3, 4};
  // Overlapping (element (i, j) at i + j): readable, refused as an output.
  const std::int64_t shape[] = {3, 2};
  const std::int64_t over[] = {1, 1};
  Tensor o = Tensor::from_external(buf.data(), shape, over, DType::f64, {});
  EXPECT_FALSE(o.read_only());
  backend.with_session([&](Session& s) {
    EXPECT_EQ(sum(s, o).item<double>(), 1 + 2 + 3 + 2 + 3 + 4);
    Tensor x = Tensor::ones({3, 2}, DType::f64);
    expect_error<ArgumentError>([&] { add_into(s, x, x, o); }, "add");
  });
  EXPECT_EQ(buf, (std::vector<double>{1, 2, 3, 4}));
  // A zero stride on an extent > 1 is a broadcast: read-only.
  const std::int64_t zero[] = {0, 1};
  Tensor z = Tensor::from_external(buf.data(), shape, zero, DType::f64, {});
  EXPECT_TRUE(z.read_only());
  EXPECT_EQ(z.item<double>({2, 1}), 2.0);
}

TEST(FromExternal, TwoTensorsOverTheSameMemoryAreSeenToOverlap) {
  CpuBackend backend;
  std::vector<double> buf = {1, 2, 3, 4, 5, 6};
  const std::int64_t three[] = {3};
  Tensor a = Tensor::from_external(buf.data(), three, {}, DType::f64, {});
  Tensor b = Tensor::from_external(buf.data() + 1, three, {}, DType::f64, {});  // shifted by one element
  Tensor c = Tensor::from_external(buf.data() + 3, three, {}, DType::f64, {});  // disjoint from a
  EXPECT_TRUE(a.shares_storage(b));
  EXPECT_FALSE(a.shares_storage(c));
  backend.with_session([&](Session& s) {
    expect_error<ArgumentError>([&] { neg_into(s, a, b); }, "neg");
    EXPECT_EQ(buf, (std::vector<double>{1, 2, 3, 4, 5, 6}));
    neg_into(s, a, c);  // disjoint: fine
    EXPECT_EQ(buf, (std::vector<double>{1, 2, 3, -1, -2, -3}));
  });
}

TEST(FromExternal, BadLayoutsThrowAndLeaveOwnershipWithTheCaller) {
  Counter c;
  alignas(16) double buf[8] = {};
  const std::int64_t shape[] = {2, 2};
  const std::int64_t bad_rank[] = {1};
  expect_error<RankError>([&] { Tensor::from_external(buf, shape, bad_rank, DType::f64, c.owner()); }, "from_external");
  const std::int64_t neg[] = {2, -1};
  expect_error<ShapeError>([&] { Tensor::from_external(buf, neg, {}, DType::f64, c.owner()); }, "from_external");
  expect_error<ArgumentError>([&] { Tensor::from_external(nullptr, shape, {}, DType::f64, c.owner()); }, "from_external");
  auto* misaligned = reinterpret_cast<double*>(reinterpret_cast<char*>(buf) + 1);
  expect_error<ArgumentError>([&] { Tensor::from_external(misaligned, shape, {}, DType::f64, c.owner()); }, "from_external");
  auto* half = reinterpret_cast<std::complex<double>*>(reinterpret_cast<char*>(buf) + 8);  // 8-aligned is enough for c128
  EXPECT_NO_THROW(Tensor::from_external(half, shape, {}, DType::c128, {}));
  expect_error<DTypeError>([&] { Tensor::from_external(buf, shape, {}, static_cast<DType>(42), c.owner()); }, "from_external");
  const std::int64_t big_shape[] = {2, 2};
  const std::int64_t huge[] = {INT64_MAX / 2, 1};
  expect_error<IndexError>([&] { Tensor::from_external(buf, big_shape, huge, DType::f64, c.owner()); }, "from_external");
  std::vector<std::int64_t> deep(kMaxRank + 1, 1);
  expect_error<RankError>([&] { Tensor::from_external(buf, deep, {}, DType::f64, c.owner()); }, "from_external");
  EXPECT_EQ(c.releases.load(), 0);
  // No elements: null data is fine, and release still runs once.
  const std::int64_t empty[] = {0, 3};
  { Tensor e = Tensor::from_external(nullptr, empty, {}, DType::f64, c.owner()); EXPECT_EQ(e.numel(), 0); }
  EXPECT_EQ(c.releases.load(), 1);
}

}  // namespace
}  // namespace tenferro
