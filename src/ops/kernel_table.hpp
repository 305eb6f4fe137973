#pragma once
// Per-backend kernel tables, indexed by OpId (Note [Kernel tables]).
//
// Note [Kernel tables]
// Every backend declares, for every catalogue row, either a kernel (with the dtypes it
// handles) or a stub. The table is built by naming each op explicitly in the backend's
// table file (src/cpu/kernel_table.cpp, src/cuda/kernel_table.cpp), and a static_assert
// there fails to compile when a row has no entry, so a new catalogue row cannot be
// forgotten by any backend. `supports()` reads the table, and a stub answers
// UnsupportedError naming the op and the device (throw_unsupported_on), never a silent
// fallback to another device. A kernel entry of a family whose front end lives in
// src/ops carries the kernel itself (KernelFn, one member per kernel signature), and
// that front end dispatches through kernel_for(session, op, dtype): every family
// but einsum, whose entry records capability only (its front end, src/einsum, plans
// and then calls the public contraction and elementwise ops). Kernels
// a provider library implements in its family folder (FFTW, LAPACK) are declared for
// the CPU table in src/cpu/provider_kernels.hpp. A backend's
// table is built at compile time from its per-family kernel lookups (e.g.
// cpu::reduce_kernel, cpu::elementwise_kernel), which fail to compile for a row of the
// family that lacks its kernel.
#include "core/internal_check.hpp"

#include <array>
#include <cstdint>
#include <string_view>

#include "ops/catalog.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/session.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

struct IndexMap;    // ops/indexing.hpp
struct FftRequest;  // ops/fft.hpp
struct DotCall;     // ops/contraction.hpp
namespace linalg {
struct Rhs;  // ops/linalg.hpp
}

/// A reduction kernel (src/ops/reduce.cpp's front end): reduces `x` over the axes in
/// `mask` into `out`. Receives validated arguments: x's dtype is in the op's set, out
/// has the inferred shape and dtype, is writable and does not overlap x, and no reduced
/// axis is empty for an op without an identity (max, min, argmax, argmin).
using ReduceKernel = void (*)(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);

/// A conversion kernel (src/ops/conversion.cpp: convert, cast, copy, reshape): copies x,
/// broadcast to out's shape, into out, converting each element to out's dtype (lossy:
/// convert's exactness is checked before). Receives validated arguments: out is
/// writable, has the inferred shape, and is disjoint from x or laid out exactly as it.
using ConvertKernel = void (*)(Session& s, const Tensor& x, const Tensor& out);

/// A kernel along one axis (src/ops/along_axis.cpp: cumsum cumprod softmax
/// log_softmax): out = op(x) along `axis` in [0, rank); out has x's shape and dtype.
using AxisKernel = void (*)(const Session& s, const Tensor& x, const Tensor& out, int axis);

/// iota's kernel (src/ops/structural.cpp): out[idx] = idx[d] (out validated, d in
/// [0, rank), the extent along d fits out's dtype).
using IotaKernel = void (*)(Session& s, const Tensor& out, int d);

/// tril's or triu's kernel (src/ops/structural_fill.cpp): out = x with every element
/// outside the kept triangle of each matrix (axes 0 and 1) zero, offset as the op's.
/// out is validated (x's shape and dtype) and either disjoint from x or exactly x (then
/// only the zeroed elements are written).
using TriangleKernel = void (*)(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset);

/// The kernel of the ops that place x inside a filled result (src/ops/structural_fill.cpp:
/// embed_diagonal, pad): every element of out set to the value whose bytes are `fill`
/// (out's dtype; nullptr: no fill, x covers out), then x copied into `dst`, a view of
/// out's memory with x's shape and dtype. out is validated and disjoint from x.
using PlaceKernel = void (*)(Session& s, const Tensor& out, const unsigned char* fill, const Tensor& x, const Tensor& dst);

/// dynamic_slice's kernel (src/ops/indexing.cpp): out = the window of x of out's shape
/// at `starts` (an i32/i64 vector, one entry per axis, read by the kernel), each start
/// clamped to [0, extent - size]. out validated and disjoint from x and starts.
using WindowKernel = void (*)(Session& s, const Tensor& x, const Tensor& starts, const Tensor& out);
/// dynamic_update_slice's kernel: out = x (nothing copied when out is x) with the window
/// of update's shape at the clamped starts replaced by update.
using UpdateWindowKernel = void (*)(Session& s, const Tensor& x, const Tensor& update, const Tensor& starts, const Tensor& out);
/// take_along_axis's and index_select's kernel: out = x at `indices` along `axis` (every
/// index checked in [-n, n); a negative one counts from the end).
using TakeKernel = void (*)(Session& s, const Tensor& x, const Tensor& indices, const Tensor& out, int axis);

/// gather's kernel (src/ops/gather_scatter.cpp): out[batch b, window w] =
/// operand[clamp(start(b)) + batching(b) + w] over the validated map `m` (Note
/// [Gather/scatter as batch × window]); out has the inferred shape and operand's dtype.
using GatherKernel = void (*)(Session& s, const IndexMap& m, const Tensor& operand, const Tensor& indices, const Dims& slice_sizes,
                              const Tensor& out);
/// scatter's kernel: out = operand (nothing copied when out is operand), then every
/// window of updates that fits combined into out in column-major order of its scatter
/// position (out-of-bounds windows skipped); operand's dtype is one the combiner accepts.
using ScatterKernel = void (*)(Session& s, const IndexMap& m, const Tensor& operand, const Tensor& indices, const Tensor& updates,
                               ScatterCombiner combiner, const Tensor& out);

/// The FFT kernel of fft, ifft, rfft and irfft (src/ops/fft.cpp; the n-dimensional
/// forms too): out = the transform `r` (resolved: kind, axes, lengths, norm) of x. out
/// has r's shape and dtype, is writable and disjoint from x; `op` names the public
/// function in messages.
using FftKernel = void (*)(Session& s, std::string_view op, const Tensor& x, const FftRequest& r, const Tensor& out);

/// svd's kernel (src/ops/linalg_svd.cpp): the decomposition of every matrix of `a`
/// (validated: a matrix operand of an inexact dtype, finite) in `mode`, as compact new
/// results (U and Vh undefined in SvdMode::values); NumericalError naming `op` when it
/// does not converge.
using SvdKernel = SvdResult (*)(Session& s, const Tensor& a, SvdMode mode, std::string_view op);

/// eigh's kernel (src/ops/linalg_eigen.cpp): eigenvalues (ascending) and, with
/// `vectors`, eigenvectors of every Hermitian matrix of `a` (validated: square, finite),
/// reading the `tri` triangle; compact new results.
using EighKernel = EighResult (*)(Session& s, const Tensor& a, Triangle tri, bool vectors, std::string_view op);
/// eig's kernel: complex eigenvalues and, with `vectors`, right eigenvectors of every
/// general square matrix of `a` (validated: square, finite).
using EigKernel = EigResult (*)(Session& s, const Tensor& a, bool vectors, std::string_view op);

/// qr's kernel (src/ops/linalg_qr.cpp): Q and R of every matrix of `a` (validated) in
/// `mode`, R's diagonal made non-negative when `positive_diagonal`.
using QrKernel = QrResult (*)(Session& s, const Tensor& a, QrMode mode, bool positive_diagonal);
/// qr_append_columns's kernel: the reduced QR of [Q·R, C] from Q, R and the new columns
/// C (validated: unbatched matrices of one dtype and matching extents).
using QrAppendKernel = QrResult (*)(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C);
/// qr_pivoted's kernel: Q, R, the column permutation and the numerical rank at `rtol`
/// (negative: max(m, n)·eps) of every matrix of `a` (validated, finite).
using PivotedQrKernel = PivotedQrResult (*)(Session& s, const Tensor& a, double rtol);

/// solve's kernel (src/ops/linalg_solve.cpp): x with a·x = b for every square matrix of
/// `a` (validated) and its right-hand side `rhs` (b as a matrix); a new compact result
/// of b's shape. NumericalError naming `op` for a singular matrix.
using SolveKernel = Tensor (*)(Session& s, const Tensor& a, const linalg::Rhs& rhs, const Tensor& b, std::string_view op);
/// triangular_solve's kernel: x with op(a)·x = b (or x·op(a) = b on the right side),
/// reading a's `tri` triangle.
using TriangularSolveKernel = Tensor (*)(Session& s, const Tensor& a, const linalg::Rhs& rhs, const Tensor& b,
                                         const TriangularSolveOptions& o);
/// cholesky's kernel: the `tri` Cholesky factor of every Hermitian positive-definite
/// matrix of `a` (the other triangle zero); NumericalError when one is not.
using CholeskyKernel = Tensor (*)(Session& s, const Tensor& a, Triangle tri);
/// inv's kernel: the inverse of every square matrix of `a`; NumericalError when singular.
using InvKernel = Tensor (*)(Session& s, const Tensor& a);

/// lstsq's kernel (src/ops/linalg_lstsq.cpp): the least-squares solution, rank (and, for
/// the SVD driver, singular values) of a·x = b for every matrix of `a` (validated,
/// finite, as is b), singular values below rcond·σ₁ treated as zero.
using LstsqKernel = LstsqResult (*)(Session& s, const Tensor& a, const linalg::Rhs& rhs, const Tensor& b, LstsqDriver driver, double rcond);
/// pinv's kernel: the pseudo-inverse of every matrix of `a` (validated, finite),
/// singular values below rtol·σ₁ (negative: max(m, n)·eps) treated as zero.
using PinvKernel = Tensor (*)(Session& s, const Tensor& a, double rtol);
/// matrix_norm's kernel (src/ops/linalg_norms.cpp): the `kind` norm of every matrix of
/// `a` (validated; finite for the SVD-based nuclear and spectral norms), real dtype.
using MatrixNormKernel = Tensor (*)(Session& s, const Tensor& a, MatrixNorm kind);
/// vector_norm's kernel: the p-norm along axis 0 (p may be ±inf or 0) of x (validated:
/// rank >= 1, inexact dtype), real dtype.
using VectorNormKernel = Tensor (*)(Session& s, const Tensor& x, double p);
/// lu's kernel (src/ops/linalg_lu.cpp): P, L, U with P·A = L·U (partial pivoting) of
/// every matrix of `a` (validated).
using LuKernel = LuResult (*)(Session& s, const Tensor& a);
/// lu_factor's kernel: the packed LU and the 0-based row interchanges (i64).
using LuFactorKernel = LuFactorResult (*)(Session& s, const Tensor& a);
/// lu_solve's kernel: x with A·x = b from A's packed LU (validated shapes and dtypes);
/// ArgumentError for a pivot value outside [i, n), checked before anything is computed.
using LuSolveKernel = Tensor (*)(Session& s, const LuFactorResult& f, const linalg::Rhs& rhs, const Tensor& b);
/// lu_full_pivot's kernel: P, L, U, Q with P·A·Q = L·U (complete pivoting).
using FullPivLuKernel = FullPivLuResult (*)(Session& s, const Tensor& a);
/// det's and slogdet's kernel: the determinant into *det, or its sign and log-magnitude
/// into *sign and *logabs (the other pointers null), of every square matrix of `a`.
using DetKernel = void (*)(Session& s, const Tensor& a, Tensor* det, Tensor* sign, Tensor* logabs, std::string_view op);
/// matrix_exp's kernel (src/ops/linalg_misc.cpp): e^A of every square, finite matrix.
using MatrixExpKernel = Tensor (*)(Session& s, const Tensor& a);
/// lu_pivots_to_permutation's kernel: the [m, batch...] permutation the i64 row
/// interchanges `pivots` apply; ArgumentError naming `op` for a pivot outside [i, m).
using PivotsKernel = Tensor (*)(Session& s, const Tensor& pivots, std::int64_t m, std::string_view op);

/// dot_general's and matmul's kernel (src/ops/contraction.cpp): out = alpha·(lhs·rhs)
/// + beta·out over the validated call `c` (Note [Contraction in the op layer]); beta = 0
/// never reads out.
using DotKernel = void (*)(Session& s, const DotCall& c);
/// grouped_gemm's kernel: every item's c = alpha·op(a)·op(b) + beta·c, items validated
/// (rank-2 operands of matching extents, c of the promoted dtype, writable, the c
/// tensors disjoint from each other and from every operand).
using GroupedGemmKernel = void (*)(Session& s, std::span<const GemmItem> items);

/// vdot's kernel (src/ops/blas1.cpp): out (rank 0, the promoted dtype, validated) =
/// Σ conj(a)·b over a and b of equal shape, numeric dtypes.
using VdotKernel = void (*)(Session& s, const Tensor& a, const Tensor& b, const Tensor& out);
/// axpby's kernel: y = alpha·x + beta·y in place (validated: y writable without
/// self-overlap, x of y's shape and a dtype promoting to y's, the scalars representable).
using AxpbyKernel = void (*)(Session& s, const Scalar& alpha, const Tensor& x, const Scalar& beta, const Tensor& y);

/// An elementwise call with N inputs after validation (src/ops/elementwise.cpp, Note
/// [Elementwise in the op layer]). `out` has the broadcast shape and the op's result
/// dtype, is writable, and each tensor input is either disjoint from it or laid out
/// exactly as it; tensor input k already has dtype in[k] and broadcasts to out's shape;
/// a scalar input is read as in[k] (it fits: inference checked). Integer divisors and
/// exponents are already checked.
template <int N> struct EwCall {
  const Tensor* out = nullptr;
  const Tensor* tensor[N] = {};  ///< tensor input k, or nullptr when input k is a scalar
  const Scalar* scalar[N] = {};  ///< scalar input k, or nullptr when input k is a tensor
  DType in[N] = {};              ///< the dtype input k is read as
  CompareOp cmp = CompareOp::eq; ///< compare's attribute
  /// out and every tensor input are compact column-major with out's extents (the
  /// layout fast path): the call is one flat loop over out.numel() elements.
  bool contiguous = false;
};
/// Elementwise kernels by arity.
using UnaryKernel = void (*)(const Session& s, const EwCall<1>& c);
using BinaryKernel = void (*)(const Session& s, const EwCall<2>& c);
using TernaryKernel = void (*)(const Session& s, const EwCall<3>& c);

/// The kernel of an entry, by signature: the member its family's front end reads
/// (`none` for entries that record capability only).
union KernelFn {
  void (*none)() = nullptr;
  ReduceKernel reduce;
  ConvertKernel convert;
  AxisKernel along_axis;
  IotaKernel iota;
  TriangleKernel triangle;
  PlaceKernel place;
  WindowKernel window;
  UpdateWindowKernel update_window;
  TakeKernel take;
  GatherKernel gather;
  ScatterKernel scatter;
  FftKernel fft;
  SvdKernel svd;
  EighKernel eigh;
  EigKernel eig;
  QrKernel qr;
  PivotedQrKernel qr_pivoted;
  QrAppendKernel qr_append;
  SolveKernel solve;
  TriangularSolveKernel triangular_solve;
  CholeskyKernel cholesky;
  InvKernel inv;
  MatrixExpKernel matrix_exp;
  LstsqKernel lstsq;
  PinvKernel pinv;
  MatrixNormKernel matrix_norm;
  VectorNormKernel vector_norm;
  LuKernel lu;
  LuFactorKernel lu_factor;
  LuSolveKernel lu_solve;
  FullPivLuKernel lu_full_pivot;
  DetKernel det;
  PivotsKernel pivots;
  DotKernel dot;
  GroupedGemmKernel grouped_gemm;
  VdotKernel vdot;
  AxpbyKernel axpby;
  UnaryKernel unary;
  BinaryKernel binary;
  TernaryKernel ternary;
};

/// The bit mask of the dtypes in `set` (bit d for dtype d).
constexpr std::uint16_t dtype_bits(DTypeSet set) noexcept {
  std::uint16_t bits = 0;
  for (int d = 0; d < kNumDTypes; ++d)
    if (in_set(static_cast<DType>(d), set)) bits = static_cast<std::uint16_t>(bits | 1u << d);
  return bits;
}

/// One backend's entry for one primitive.
struct KernelEntry {
  enum class Kind : std::uint8_t { unset, stub, kernel };
  Kind kind = Kind::unset;
  std::uint16_t dtypes = dtype_bits(DTypeSet::all);  ///< dtypes the kernel handles, one bit each (kernel entries)
  KernelFn fn{};                                      ///< the kernel, for families that dispatch through the table
  /// Whether this is a kernel that handles `d`.
  constexpr bool handles(DType d) const noexcept { return kind == Kind::kernel && (dtypes >> static_cast<int>(d) & 1u); }
};

/// A backend's table: one entry per catalogue row.
using KernelTable = std::array<KernelEntry, kNumOps>;

/// A stub entry.
constexpr KernelEntry stub_entry() noexcept { return {KernelEntry::Kind::stub}; }
/// A kernel over the op's whole catalogue dtype set.
constexpr KernelEntry kernel_entry(OpId op) noexcept { return {KernelEntry::Kind::kernel, dtype_bits(op_info(op).dtypes)}; }

/// A kernel over the op's whole catalogue dtype set.
constexpr KernelEntry kernel_entry(OpId op, KernelFn k) noexcept {
  return {KernelEntry::Kind::kernel, dtype_bits(op_info(op).dtypes), k};
}

/// True when every row has an entry (for the backends' static_asserts).
constexpr bool table_complete(const KernelTable& t) noexcept {
  for (const KernelEntry& e : t)
    if (e.kind == KernelEntry::Kind::unset) return false;
  return true;
}

/// The CPU backend's table (src/cpu/kernel_table.cpp; a constant, so a front end's
/// lookup on the CPU is a load).
extern const KernelTable kCpuKernelTable;
/// The CPU backend's table.
inline const KernelTable& cpu_kernel_table() noexcept { return kCpuKernelTable; }
/// The CUDA backend's table (src/cuda/kernel_table.cpp), or nullptr when not built.
const KernelTable* cuda_kernel_table() noexcept;
/// The trace device's table (src/runtime/trace_kernels.cpp: kernels that record graph
/// nodes, Note [Tracing] in tenferro/graph.hpp).
const KernelTable* trace_kernel_table() noexcept;
/// The table of a compiled-in backend, or nullptr (CUDA without TENFERRO_ENABLE_CUDA).
inline const KernelTable* kernel_table(DeviceKind device) noexcept {
  switch (device) {
    case DeviceKind::cpu: return &kCpuKernelTable;
    case DeviceKind::cuda: return cuda_kernel_table();
    case DeviceKind::trace: return trace_kernel_table();
  }
  return nullptr;
}

// Note [Data-dependent checks]
// Some validation reads data before any output is written: the finiteness scan before
// a LAPACK call, the zero-divisor scan before integer div/rem. Front ends name the
// check; each backend implements it (a device backend may run it as a kernel and read
// back one flag), so the front end never loops over elements itself.
struct DataChecks {
  /// Position of the first non-finite element of an inexact tensor in column-major
  /// element order (a complex element counts once), or -1 when every element is finite.
  std::int64_t (*first_nonfinite)(Session& s, const Tensor& t);
  /// Position of the first zero element of an integer tensor (any strides), or -1:
  /// integer div and rem by zero.
  std::int64_t (*first_zero)(Session& s, const Tensor& t);
  /// Position of the first negative element of an integer tensor, or -1: integer pow.
  std::int64_t (*first_negative)(Session& s, const Tensor& t);
  /// Position of the first element of t that does not convert exactly to dtype `to`
  /// (core/convert.hpp exact_value: 2.5 to i32, 1e40 to f32, 3+1j to f64), or -1.
  std::int64_t (*first_inexact)(Session& s, const Tensor& t, DType to);
  /// Position of the first element of an i32/i64 index tensor outside [-n, n), or -1:
  /// take_along_axis and index_select index an axis of extent n.
  std::int64_t (*first_out_of_range)(Session& s, const Tensor& t, std::int64_t n);
};

/// The data checks of the session's device (UnsupportedError naming `op` when its
/// backend has none).
const DataChecks& data_checks(const Session& s, std::string_view op);
/// The CPU backend's data checks (src/cpu/data_checks.cpp).
const DataChecks& cpu_data_checks() noexcept;

/// UnsupportedError "<op>: not supported on <device> (<why>)".
[[noreturn]] void throw_unsupported_on(OpId op, DeviceKind device);
/// UnsupportedError "<op>: dtype <d> not supported on <device> (...)".
[[noreturn]] void throw_unsupported_dtype_on(OpId op, DType dtype, DeviceKind device);
/// The UnsupportedError of kernel_for: the stub or missing backend, else the dtype.
[[noreturn]] void throw_no_kernel(OpId op, DType dtype, DeviceKind device);

/// The entry of the session's backend for `op` on inputs of dtype `dtype` (a front
/// end's dispatch): UnsupportedError naming the op and the device when the backend has
/// a stub for it (or is not built), or its kernel does not handle the dtype. Inline,
/// and on the CPU a constant table: a handful of instructions on the fixed-cost path.
TENFERRO_ALWAYS_INLINE const KernelEntry& kernel_for(const Session& s, OpId op, DType dtype) {
  const DeviceKind device = s.device();
  const KernelTable* t = device == DeviceKind::cpu ? &kCpuKernelTable : kernel_table(device);
  if (!t) [[unlikely]] throw_no_kernel(op, dtype, device);
  const KernelEntry& e = (*t)[static_cast<int>(op)];
  if (!e.handles(dtype)) [[unlikely]] throw_no_kernel(op, dtype, device);
  return e;
}

}  // namespace tenferro::detail
