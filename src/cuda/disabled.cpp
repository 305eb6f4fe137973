// Built when TENFERRO_ENABLE_CUDA is OFF: the CUDA backend is not compiled in, so
// kernel_table(DeviceKind::cuda) is null and every op reports it as absent.
#include "ops/kernel_table.hpp"

namespace tenferro::detail {

const KernelTable* cuda_kernel_table() noexcept { return nullptr; }

}  // namespace tenferro::detail
