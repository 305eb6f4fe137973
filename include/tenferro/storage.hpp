#pragma once
/// \file storage.hpp
/// Reference-counted storage blocks and the allocator hook sessions install.
/// A block is one allocation: a 64-byte header followed by the data (64-byte aligned).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tenferro/export.hpp"

namespace tenferro {

/// Where a tensor's bytes live and a session's kernels run.
enum class DeviceKind : std::uint8_t {
  cpu,   ///< host memory, CPU kernels (OpenBLAS, LAPACK, FFTW)
  cuda,  ///< NVIDIA GPU (build switch TENFERRO_ENABLE_CUDA; no kernels yet)
  trace, ///< symbolic values of a traced graph (graph.hpp): shape and dtype, no memory
};
/// Number of device kinds.
inline constexpr int kNumDeviceKinds = 3;
/// "cpu", "cuda" (or "?" for a value outside the enum).
TENFERRO_API std::string_view device_name(DeviceKind d) noexcept;

/// A device: kind and ordinal.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  std::int16_t index = 0;
  friend bool operator==(Device a, Device b) noexcept { return a.kind == b.kind && a.index == b.index; }
};

namespace detail {

/// Header of a storage block. `capacity` is the data bytes the block holds (its size
/// class), `bytes` what was asked for. The data need not follow the header: a block
/// over external memory (Tensor::from_external) points at the caller's bytes and
/// releases them through the owner's callback instead of freeing them.
struct alignas(64) StorageHeader {
  std::atomic<std::int64_t> refs{1};
  std::size_t capacity = 0;
  std::size_t bytes = 0;
  std::byte* base = nullptr;  ///< first data byte (right after the header for owned blocks)
  void (*release_external)(void* context) = nullptr;  ///< external blocks: the owner's callback (may be null)
  void* external_context = nullptr;                   ///< its argument
  Device device{};
  bool external = false;  ///< memory the library does not own (never pooled, never freed)
  /// Writes by the library's ops into this block (Note [Version counters] in tensor.hpp).
  std::atomic<std::uint32_t> version{0};
  std::byte* data() noexcept { return base; }
};
static_assert(sizeof(StorageHeader) == 64);

// Note [Storage and the session pool]
// Blocks allocated while the calling thread is inside a CPU session come from that
// session's buffer pool (a hit when a block of the size class is cached), and blocks
// whose last reference drops on a thread inside a session go back to that session's
// pool. Elsewhere they come from and go to the heap. The hook is per thread, installed
// by the backend on entry and removed before admission is released, so core code knows
// no backend and never touches a pool another thread has checked out.

/// Per-thread allocator hook (implemented by backends).
class BlockAllocator {
 public:
  virtual StorageHeader* allocate(std::size_t bytes) = 0;
  virtual void release(StorageHeader* block) noexcept = 0;

 protected:
  ~BlockAllocator() = default;
};

/// Installs `a` (or nullptr) as this thread's allocator; returns the previous one.
TENFERRO_API BlockAllocator* set_thread_allocator(BlockAllocator* a) noexcept;
/// This thread's allocator, or nullptr.
TENFERRO_API BlockAllocator* thread_allocator() noexcept;

/// Size class (data bytes) a request of `bytes` is rounded up to.
TENFERRO_API std::size_t size_class_bytes(std::size_t bytes) noexcept;
/// A fresh block from the heap (data uninitialized); throws BackendError when out of memory.
TENFERRO_API StorageHeader* heap_allocate_block(std::size_t bytes);
/// Frees a block to the heap.
TENFERRO_API void heap_free_block(StorageHeader* block) noexcept;

/// A block for `bytes` of data through this thread's allocator (or the heap).
TENFERRO_API StorageHeader* allocate_block(std::size_t bytes);

// Note [Per-device allocation]
// Every owned block records its device. A CPU block comes from the thread's hook (the
// session's pool) or the heap; a block of another device kind comes from the
// DeviceAllocator its backend registered for that kind (a CUDA backend: device memory
// behind a host header), and goes back to it when its last reference drops. Nothing
// allocates on a device without a registered allocator (UnsupportedError), so no
// caller ever gets host memory labelled as device memory.

/// A device kind's block allocator, registered by its backend.
class DeviceAllocator {
 public:
  /// A block for `bytes` of data on `device` (header on the host, `base` on the
  /// device, `device` set); throws BackendError when out of memory.
  virtual StorageHeader* allocate(std::size_t bytes, Device device) = 0;
  /// Frees a block this allocator returned.
  virtual void release(StorageHeader* block) noexcept = 0;

 protected:
  ~DeviceAllocator() = default;
};

/// Registers `a` (nullptr: none) as the allocator of device kind `k` other than the CPU
/// (whose allocation is built in); returns the previous one. Blocks allocated through
/// an allocator must be released before it is replaced.
TENFERRO_API DeviceAllocator* set_device_allocator(DeviceKind k, DeviceAllocator* a) noexcept;
/// A block for `bytes` on `device`: allocate_block on the CPU, else the kind's
/// registered allocator (UnsupportedError naming `op` when there is none).
TENFERRO_API StorageHeader* allocate_block_on(Device device, std::size_t bytes, std::string_view op);
/// Drops one reference; the last one releases the block.
inline void retain_block(StorageHeader* b) noexcept {
  if (b) b->refs.fetch_add(1, std::memory_order_relaxed);
}
TENFERRO_API void release_block_slow(StorageHeader* b) noexcept;
inline void release_block(StorageHeader* b) noexcept {
  if (b && b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) release_block_slow(b);
}

}  // namespace detail
}  // namespace tenferro
