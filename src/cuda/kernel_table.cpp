// The CUDA backend's kernel table (Note [Kernel tables]). Built with
// TENFERRO_ENABLE_CUDA=ON; every primitive is a stub until its kernel lands, so an op
// on a CUDA session answers UnsupportedError naming the op and the device. To land a
// kernel: replace the op's stub_entry() with its entry, and add the kernel beside it.
#include "ops/kernel_table.hpp"

namespace tenferro::detail {
namespace {

constexpr KernelTable make_cuda_table() {
  KernelTable t{};
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) t[static_cast<int>(OpId::name)] = stub_entry();
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
  return t;
}

constexpr KernelTable kCudaTable = make_cuda_table();
static_assert(table_complete(kCudaTable), "a catalogue op has no CUDA entry");

}  // namespace

const KernelTable* cuda_kernel_table() noexcept { return &kCudaTable; }

}  // namespace tenferro::detail
