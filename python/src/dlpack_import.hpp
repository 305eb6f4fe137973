#pragma once
// The DLPack import's descriptor checks, without Python: tenferro.from_dlpack
// (dlpack.cpp) calls import_dltensor on the capsule's DLTensor, and the fuzz target
// tests/fuzz/fuzz_external.cpp calls it on random descriptors (so this header needs
// only DLPack's and tenferro's headers, no pybind11).
#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tfpy::dlpack {

/// DLPack >= 0.8 names bool kDLBool = 6 (8 bits); the 0.6 header predates it.
inline constexpr std::uint8_t kDLBoolCode = 6;

/// The tenferro dtype of a DLPack dtype; DTypeError (op "from_dlpack") when there is none.
inline tenferro::DType from_dl_dtype(DLDataType t) {
  using tenferro::DType;
  if (t.lanes == 1) {
    if (t.code == kDLBoolCode && t.bits == 8) return DType::b8;
    if (t.code == kDLInt && t.bits == 32) return DType::i32;
    if (t.code == kDLInt && t.bits == 64) return DType::i64;
    if (t.code == kDLFloat && t.bits == 32) return DType::f32;
    if (t.code == kDLFloat && t.bits == 64) return DType::f64;
    if (t.code == kDLComplex && t.bits == 64) return DType::c64;
    if (t.code == kDLComplex && t.bits == 128) return DType::c128;
  }
  throw tenferro::DTypeError("from_dlpack", "DLPack dtype (code " + std::to_string(t.code) + ", bits " +
                                                std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) +
                                                ") has no tenferro counterpart");
}

/// A tensor over the memory `d` describes (zero copy; Note [Reversed axes] in bind.hpp:
/// DLPack axis k is tenferro axis ndim-1-k). `owner` is handed to Tensor::from_external
/// and, as there, nothing is taken on error. Throws UnsupportedError for a device other
/// than the CPU, DTypeError for a dtype without counterpart, RankError for ndim outside
/// [0, kMaxRank], ArgumentError for a null shape with ndim > 0, a byte_offset that is
/// not a multiple of the element size or that does not give an address (null data,
/// wrap-around), and whatever from_external throws for the layout
/// (negative extent, overflow, null or misaligned data). Null strides mean C order.
inline tenferro::Tensor import_dltensor(const DLTensor& d, tenferro::ExternalOwner owner) {
  const char* op = "from_dlpack";
  if (d.device.device_type != kDLCPU)
    throw tenferro::UnsupportedError(op, "DLPack device type " + std::to_string(d.device.device_type) + " is not the CPU");
  const tenferro::DType dtype = from_dl_dtype(d.dtype);
  if (d.ndim < 0 || d.ndim > tenferro::kMaxRank)
    throw tenferro::RankError(op, "DLPack rank " + std::to_string(d.ndim) + " is outside [0, " +
                                      std::to_string(tenferro::kMaxRank) + "]");
  const int r = d.ndim;
  if (r > 0 && d.shape == nullptr) throw tenferro::ArgumentError(op, "DLPack shape is null for rank " + std::to_string(r));
  std::vector<std::int64_t> shape(static_cast<std::size_t>(r)), strides;
  for (int i = 0; i < r; ++i) shape[static_cast<std::size_t>(r - 1 - i)] = d.shape[i];
  // Null strides mean C order, which reversed is compact column-major: from_external's
  // empty strides, computed there with overflow checks (a product formed here would
  // overflow, undefined behaviour, for extents such as [2^40, 2^40]).
  if (d.strides != nullptr) {
    strides.resize(static_cast<std::size_t>(r));
    for (int i = 0; i < r; ++i) strides[static_cast<std::size_t>(r - 1 - i)] = d.strides[i];
  }
  if (d.byte_offset % tenferro::dtype_size(dtype) != 0)
    throw tenferro::ArgumentError(op, "DLPack byte_offset " + std::to_string(d.byte_offset) +
                                          " is not a multiple of the element size");
  // data + byte_offset as an address: a null `data` with an offset (pointer arithmetic
  // on null) and an offset that wraps the address space are refused, not formed.
  const auto base = reinterpret_cast<std::uintptr_t>(d.data);
  if (d.byte_offset != 0 && (d.data == nullptr || d.byte_offset > UINTPTR_MAX - base))
    throw tenferro::ArgumentError(op, "DLPack byte_offset " + std::to_string(d.byte_offset) + " from data " +
                                          (d.data == nullptr ? std::string("NULL") : std::to_string(base)) +
                                          " is not an address");
  void* data = reinterpret_cast<void*>(base + d.byte_offset);
  return tenferro::Tensor::from_external(data, shape, strides, dtype, owner);
}

}  // namespace tfpy::dlpack
