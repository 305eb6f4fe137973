#pragma once
// Elementwise fusion of compiled graphs (Note [Elementwise fusion] in fuse.cpp).
#include "core/internal_check.hpp"

#include <cstdint>
#include <vector>

#include "ops/catalog.hpp"
#include "tenferro/shape.hpp"
#include "tenferro/dtype.hpp"

namespace tenferro::graph::detail {

/// out[i] = f(a[i·sa], b[i·sb], c[i·sc]) for i < n, every pointer of the group's dtype
/// and every stride 0 (a scalar) or 1; unused operands are ignored.
using ChunkFn = void (*)(const void* a, std::int64_t sa, const void* b, std::int64_t sb, const void* c, std::int64_t sc, void* out,
                         std::int64_t n);

/// The chunk function of elementwise op `op` on operands and a result all of dtype `d`
/// (an inexact dtype of the op's catalogue set), or nullptr when the op changes the
/// dtype (real, imag, abs, angle, compare, select) or does not take `d`.
ChunkFn chunk_fn(tenferro::detail::OpId op, DType d) noexcept;

/// Where a fused op reads an operand or writes its result.
struct FusedRef {
  enum class Kind : std::uint8_t { none, slot, scalar, temp };
  Kind kind = Kind::none;
  int index = -1;  ///< slot (run slot: an external compact operand or a group result), scalar (into `scalars`), temp
};

/// An external operand read through strides (broadcast, transposed, reversed, sliced):
/// each chunk gathers its elements, in the group's element order, into chunk buffer
/// `temp` first.
struct FusedGather {
  int slot = -1;
  int temp = -1;
  Dims strides;  ///< element strides along the result's axes (0 where it broadcasts)
};

/// One op of a fused group.
struct FusedOp {
  ChunkFn fn = nullptr;
  FusedRef in[3];
  FusedRef out;
};

/// Chunk buffers a fused step keeps on the stack; a group needing more allocates them on
/// the heap once per run.
inline constexpr int kFusedStackTemps = 8;

/// A connected run of elementwise ops over one shape and dtype, evaluated chunk by chunk
/// (Note [Elementwise fusion]).
struct FusedGroup {
  DType dtype = DType::f64;
  std::int64_t numel = 0;
  std::vector<FusedOp> ops;
  std::vector<unsigned char> scalars;  ///< the scalar operands as values of `dtype`, one element each
  int temps = 0;                       ///< chunk buffers for the values only the group reads
  std::vector<int> results;            ///< run slots the group allocates and writes (values read outside it)
  std::vector<FusedGather> gathers;    ///< strided external operands
  Dims shape;                          ///< the result shape (the gathers' index space)
};

}  // namespace tenferro::graph::detail
