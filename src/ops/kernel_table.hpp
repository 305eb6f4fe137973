#pragma once
// Per-backend kernel tables, indexed by OpId (Note [Kernel tables]).
//
// Note [Kernel tables]
// Every backend declares, for every catalogue row, either a kernel (with the dtypes it
// handles) or a stub. The table is built by naming each op explicitly in the backend's
// table file (src/cpu/kernel_table.cpp, src/cuda/kernel_table.cpp), and a static_assert
// there fails to compile when a row has no entry, so a new catalogue row cannot be
// forgotten by any backend. `supports()` and the front ends' device check read the
// table; a stub answers UnsupportedError naming the op and the device, never a silent
// fallback to another device.
#include "core/internal_check.hpp"

#include <array>

#include "ops/catalog.hpp"
#include "tenferro/session.hpp"

namespace tenferro::detail {

/// One backend's entry for one primitive.
struct KernelEntry {
  enum class Kind : std::uint8_t { unset, stub, kernel };
  Kind kind = Kind::unset;
  DTypeSet dtypes = DTypeSet::all;  ///< dtypes the kernel handles (kernel entries)
};

/// A backend's table: one entry per catalogue row.
using KernelTable = std::array<KernelEntry, kNumOps>;

/// A stub entry.
constexpr KernelEntry stub_entry() noexcept { return {KernelEntry::Kind::stub, DTypeSet::all}; }
/// A kernel over the op's whole catalogue dtype set.
constexpr KernelEntry kernel_entry(OpId op) noexcept { return {KernelEntry::Kind::kernel, op_info(op).dtypes}; }

/// True when every row has an entry (for the backends' static_asserts).
constexpr bool table_complete(const KernelTable& t) noexcept {
  for (const KernelEntry& e : t)
    if (e.kind == KernelEntry::Kind::unset) return false;
  return true;
}

/// The table of a compiled-in backend, or nullptr (CUDA without TENFERRO_ENABLE_CUDA).
const KernelTable* kernel_table(DeviceKind device) noexcept;
/// The CPU backend's table (src/cpu/kernel_table.cpp).
const KernelTable& cpu_kernel_table() noexcept;
/// The CUDA backend's table (src/cuda/kernel_table.cpp), or nullptr when not built.
const KernelTable* cuda_kernel_table() noexcept;

/// UnsupportedError "<op>: not supported on <device> (<why>)".
[[noreturn]] void throw_unsupported_on(OpId op, DeviceKind device);

/// The front end's device check: UnsupportedError unless `s`'s device has a kernel for
/// `op`. A CPU session takes one compare (every CPU entry is a kernel).
inline void require_kernel(const Session& s, OpId op) {
  if (s.device() != DeviceKind::cpu) {
    const KernelTable* t = kernel_table(s.device());
    if (!t || (*t)[static_cast<int>(op)].kind != KernelEntry::Kind::kernel) throw_unsupported_on(op, s.device());
  }
}

}  // namespace tenferro::detail
