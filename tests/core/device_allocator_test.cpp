// Per-device allocation (Note [Per-device allocation]): a block of a non-CPU device
// kind comes from the allocator its backend registered and goes back to it; without
// one, allocation is an UnsupportedError; the host never reads such a tensor's memory,
// and no CPU op takes it (nothing moves between devices implicitly).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::expect_error;

/// A stand-in device allocator: host memory behind the header, every call counted.
class CountingAllocator final : public detail::DeviceAllocator {
 public:
  detail::StorageHeader* allocate(std::size_t bytes, Device device) override {
    ++allocations;
    last_device = device;
    void* p = std::aligned_alloc(64, sizeof(detail::StorageHeader) + (bytes + 63) / 64 * 64 + 64);
    auto* h = new (p) detail::StorageHeader();
    h->capacity = h->bytes = bytes;
    h->base = reinterpret_cast<std::byte*>(h + 1);
    return h;
  }
  void release(detail::StorageHeader* block) noexcept override {
    ++releases;
    block->~StorageHeader();
    std::free(block);
  }
  int allocations = 0, releases = 0;
  Device last_device{};
};

/// Registers a CountingAllocator for the CUDA kind for one test.
struct Registered {
  Registered() : previous(detail::set_device_allocator(DeviceKind::cuda, &alloc)) {}
  ~Registered() { detail::set_device_allocator(DeviceKind::cuda, previous); }
  CountingAllocator alloc;
  detail::DeviceAllocator* previous;
};

TEST(DeviceAllocator, BlocksOfAKindGoThroughItsAllocatorAndBack) {
  Registered r;
  {
    const Tensor t = Tensor::empty(std::vector<std::int64_t>{3, 4}, DType::f32, Device{DeviceKind::cuda, 1});
    EXPECT_EQ(r.alloc.allocations, 1);
    EXPECT_EQ(r.alloc.last_device.index, 1);
    EXPECT_EQ(t.device().kind, DeviceKind::cuda);
    EXPECT_EQ(t.device().index, 1);
    EXPECT_EQ(t.shape(), (Shape{3, 4}));
    EXPECT_TRUE(t.is_contiguous());
    const Tensor view = t.transpose_view();  // views are metadata: the block is shared
    EXPECT_EQ(view.device().kind, DeviceKind::cuda);
    EXPECT_EQ(r.alloc.releases, 0);
  }
  EXPECT_EQ(r.alloc.releases, 1);  // the last reference returned it to its allocator
  // CPU tensors never touch it.
  const Tensor c = Tensor::empty(std::vector<std::int64_t>{2}, DType::f64, Device{});
  EXPECT_EQ(c.device().kind, DeviceKind::cpu);
  EXPECT_EQ(r.alloc.allocations, 1);
}

TEST(DeviceAllocator, TheHostNeverReadsDeviceMemory) {
  Registered r;
  const Tensor t = Tensor::empty(std::vector<std::int64_t>{2, 2}, DType::f64, Device{DeviceKind::cuda, 0});
  expect_error<UnsupportedError>([&] { (void)t.item<double>({0, 0}); }, "item");
  expect_error<UnsupportedError>([&] { t.set<double>({0, 0}, 1.0); }, "set");
  EXPECT_EQ(t.to_string(), "tensor(on cuda, dtype=f64, shape=[2, 2])");
  // A CPU session's ops refuse it before touching it.
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::ones({2, 2}, DType::f64);
  expect_error<SessionEntryError>([&] { (void)add(s, t, x); }, "add");
  expect_error<SessionEntryError>([&] { (void)dot_general(s, t, x, {.lhs_contracting = {1}, .rhs_contracting = {0}}); }, "dot_general");
  expect_error<SessionEntryError>([&] { add_into(s, x, x, t); }, "add");
}

TEST(DeviceAllocator, NoAllocatorIsAnUnsupportedError) {
  detail::DeviceAllocator* previous = detail::set_device_allocator(DeviceKind::cuda, nullptr);
  expect_error<UnsupportedError>([] { (void)Tensor::empty(std::vector<std::int64_t>{4}, DType::f32, Device{DeviceKind::cuda, 0}); }, "empty");
  detail::set_device_allocator(DeviceKind::cuda, previous);
  // The CPU's allocation is built in: registering for it is refused.
  CountingAllocator a;
  EXPECT_EQ(detail::set_device_allocator(DeviceKind::cpu, &a), nullptr);
  (void)Tensor::empty(std::vector<std::int64_t>{4}, DType::f32, Device{});
  EXPECT_EQ(a.allocations, 0);
}

}  // namespace
}  // namespace tenferro
