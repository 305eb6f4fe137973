#pragma once
// The CPU backend's structural kernels (ops/kernel_table.hpp: IotaKernel,
// TriangleKernel, PlaceKernel), listed in src/cpu/kernel_table.cpp. The re-indexing and
// joining ops need none of their own: they are views copied by the conversion kernel.
#include "core/internal_check.hpp"

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// IotaKernel: out[idx] = idx[d] (out validated; d normalized).
void iota_kernel(Session& s, const Tensor& out, int d);

/// TriangleKernel of tril: keeps the elements with row >= column - offset.
void tril_kernel(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset);
/// TriangleKernel of triu: keeps the elements with row <= column - offset.
void triu_kernel(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset);

/// PlaceKernel (embed_diagonal, pad): fills out with `fill` (unless nullptr), then
/// copies x into dst, a view of out's memory.
void place_kernel(Session& s, const Tensor& out, const unsigned char* fill, const Tensor& x, const Tensor& dst);

}  // namespace tenferro::cpu
