#include <sys/mman.h>

#include "core/thread_allocator.hpp"

#include <atomic>
#include <bit>
#include <cstdlib>
#include <new>
#include <string>

#include "tenferro/error.hpp"

namespace tenferro::detail {

constinit thread_local BlockAllocator* tls_block_allocator = nullptr;

BlockAllocator* set_thread_allocator(BlockAllocator* a) noexcept { return swap_thread_allocator(a); }

BlockAllocator* thread_allocator() noexcept { return tls_block_allocator; }

// Size classes: 64 bytes, then four steps per power of two (1, 1.25, 1.5, 1.75 × 2^k),
// so rounding wastes at most 25%.
std::size_t size_class_bytes(std::size_t bytes) noexcept {
  if (bytes <= 64) return 64;
  const int hi = 63 - std::countl_zero(bytes - 1);  // 2^hi < bytes <= 2^(hi+1)
  const std::size_t quarter = std::size_t{1} << (hi - 2);
  return ((bytes + quarter - 1) / quarter) * quarter;
}

// Note [Huge pages for large blocks]
// A fresh large block is page-faulted in on first write; with 4 KiB pages that is one
// fault per 4 KiB (a 128 MiB result: 32768 faults, ~90 ms here, several times the cost
// of filling it). Blocks of 4 MiB and more are aligned to 2 MiB and advised as
// transparent huge pages (MADV_HUGEPAGE; the kernel default is often "madvise"), so
// they fault in 2 MiB at a time, as NumPy does for its large arrays. The advice is a
// hint: where the kernel refuses it, nothing changes.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeThreshold = std::size_t{4} << 20;

StorageHeader* heap_allocate_block(std::size_t bytes) {
  const std::size_t cap = size_class_bytes(bytes);
  if (cap > (std::size_t{1} << 62)) throw BackendError("allocate", "request of " + std::to_string(bytes) + " bytes is too large");
  const std::size_t align = cap >= kHugeThreshold ? kHugePage : 64;
  // aligned_alloc needs a size that is a multiple of the alignment.
  const std::size_t total = (sizeof(StorageHeader) + cap + align - 1) / align * align;
  void* p = std::aligned_alloc(align, total);
  if (!p) throw BackendError("allocate", "out of memory allocating " + std::to_string(bytes) + " bytes");
  if (align == kHugePage) (void)madvise(p, total, MADV_HUGEPAGE);
  auto* h = new (p) StorageHeader();
  h->capacity = cap;
  h->bytes = bytes;
  h->base = reinterpret_cast<std::byte*>(h + 1);
  return h;
}

void heap_free_block(StorageHeader* block) noexcept {
  block->~StorageHeader();
  std::free(block);
}

StorageHeader* allocate_block(std::size_t bytes) {
  if (tls_block_allocator) return tls_block_allocator->allocate(bytes);
  return heap_allocate_block(bytes);
}

namespace {
// Note [Per-device allocation]: one slot per device kind (the CPU's stays null).
std::atomic<DeviceAllocator*> device_allocators[kNumDeviceKinds];
}  // namespace

DeviceAllocator* set_device_allocator(DeviceKind k, DeviceAllocator* a) noexcept {
  const int i = static_cast<int>(k);
  if (k == DeviceKind::cpu || i < 0 || i >= kNumDeviceKinds) return nullptr;
  return device_allocators[i].exchange(a, std::memory_order_acq_rel);
}

StorageHeader* allocate_block_on(Device device, std::size_t bytes, std::string_view op) {
  if (device.kind == DeviceKind::cpu) return allocate_block(bytes);
  const int i = static_cast<int>(device.kind);
  DeviceAllocator* a = i >= 0 && i < kNumDeviceKinds ? device_allocators[i].load(std::memory_order_acquire) : nullptr;
  if (!a) throw UnsupportedError(op, "no allocator for device " + std::string(device_name(device.kind)) + " (no backend of that kind registered one)");
  StorageHeader* b = a->allocate(bytes, device);
  b->device = device;
  return b;
}

void release_block_slow(StorageHeader* b) noexcept {
  if (b->external) {  // the owner's memory: hand it back, drop only our header
    if (b->release_external) b->release_external(b->external_context);
    delete b;
    return;
  }
  if (b->device.kind != DeviceKind::cpu) {
    if (DeviceAllocator* a = device_allocators[static_cast<int>(b->device.kind)].load(std::memory_order_acquire)) a->release(b);
    return;
  }
  if (tls_block_allocator)
    tls_block_allocator->release(b);
  else
    heap_free_block(b);
}

}  // namespace tenferro::detail
