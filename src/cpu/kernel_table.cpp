// The CPU backend's kernel table (Note [Kernel tables]): every primitive has a CPU
// kernel over its whole catalogue dtype set. A new catalogue row must be added here
// (as a kernel or a stub), or the static_assert below fails.
#include "cpu/axis_ops.hpp"
#include "cpu/blas1.hpp"
#include "cpu/convert.hpp"
#include "cpu/dot_plan.hpp"
#include "cpu/elementwise_kernels.hpp"
#include "cpu/index_common.hpp"
#include "cpu/provider_kernels.hpp"
#include "cpu/reduce.hpp"
#include "cpu/structural.hpp"
#include "ops/kernel_table.hpp"

namespace tenferro::detail {
namespace {

constexpr KernelTable make_cpu_table() {
  KernelTable t{};
  // elementwise and analytic: every row, with its kernel (cpu/elementwise_kernels.hpp;
  // the front end in src/ops/elementwise.cpp dispatches through these entries)
  for (int i = 0; i < kNumOps; ++i)
    if (kOps[i].family == OpFamily::elementwise || kOps[i].family == OpFamily::analytic)
      t[i] = kernel_entry(static_cast<OpId>(i), cpu::elementwise_kernel(static_cast<OpId>(i)));
  // conversion: one kernel (cpu/convert.hpp; the front end in src/ops/conversion.cpp)
  for (OpId op : {
    OpId::convert, OpId::cast, OpId::copy, OpId::reshape
  }) t[static_cast<int>(op)] = kernel_entry(op, {.convert = &cpu::convert_kernel});
  // reduction: every row, with its kernel (cpu/reduce.hpp; the front end in src/ops/reduce.cpp
  // dispatches through these entries)
  for (int i = 0; i < kNumOps; ++i)
    if (kOps[i].family == OpFamily::reduction) t[i] = kernel_entry(static_cast<OpId>(i), {.reduce = cpu::reduce_kernel(static_cast<OpId>(i))});
  // along one axis: every row, with its kernel (cpu/axis_ops.hpp; the front end in
  // src/ops/along_axis.cpp)
  for (int i = 0; i < kNumOps; ++i)
    if (kOps[i].family == OpFamily::along_axis)
      t[i] = kernel_entry(static_cast<OpId>(i), {.along_axis = cpu::along_axis_kernel_of(static_cast<OpId>(i))});
  // blas1 (cpu/blas1.hpp; the front end in src/ops/blas1.cpp)
  t[static_cast<int>(OpId::vdot)] = kernel_entry(OpId::vdot, {.vdot = &cpu::vdot_kernel});
  t[static_cast<int>(OpId::norm_squared)] = kernel_entry(OpId::norm_squared, {.reduce = &cpu::norm_squared_kernel});
  t[static_cast<int>(OpId::axpby)] = kernel_entry(OpId::axpby, {.axpby = &cpu::axpby_kernel});
  // structural (cpu/structural.hpp; the front ends in src/ops/structural*.cpp): the
  // re-indexing and joining ops are views plus the conversion kernel
  for (OpId op : {
    OpId::transpose, OpId::broadcast_in_dim, OpId::extract_diagonal, OpId::reverse, OpId::concatenate, OpId::stack
  }) t[static_cast<int>(op)] = kernel_entry(op, {.convert = &cpu::convert_kernel});
  t[static_cast<int>(OpId::iota)] = kernel_entry(OpId::iota, {.iota = &cpu::iota_kernel});
  t[static_cast<int>(OpId::tril)] = kernel_entry(OpId::tril, {.triangle = &cpu::tril_kernel});
  t[static_cast<int>(OpId::triu)] = kernel_entry(OpId::triu, {.triangle = &cpu::triu_kernel});
  for (OpId op : {
    OpId::embed_diagonal, OpId::pad
  }) t[static_cast<int>(op)] = kernel_entry(op, {.place = &cpu::place_kernel});
  // indexing (cpu/index_common.hpp; the front ends in src/ops/indexing.cpp and
  // gather_scatter.cpp): slice is a view plus the conversion kernel
  t[static_cast<int>(OpId::slice)] = kernel_entry(OpId::slice, {.convert = &cpu::convert_kernel});
  t[static_cast<int>(OpId::dynamic_slice)] = kernel_entry(OpId::dynamic_slice, {.window = &cpu::dynamic_slice_kernel});
  t[static_cast<int>(OpId::dynamic_update_slice)] =
      kernel_entry(OpId::dynamic_update_slice, {.update_window = &cpu::dynamic_update_slice_kernel});
  t[static_cast<int>(OpId::take_along_axis)] = kernel_entry(OpId::take_along_axis, {.take = &cpu::take_along_axis_kernel});
  t[static_cast<int>(OpId::index_select)] = kernel_entry(OpId::index_select, {.take = &cpu::index_select_kernel});
  t[static_cast<int>(OpId::gather)] = kernel_entry(OpId::gather, {.gather = &cpu::gather_kernel});
  t[static_cast<int>(OpId::scatter)] = kernel_entry(OpId::scatter, {.scatter = &cpu::scatter_kernel});
  // contraction (cpu/dot_plan.hpp; the front ends in src/ops/contraction.cpp)
  t[static_cast<int>(OpId::dot_general)] = kernel_entry(OpId::dot_general, {.dot = &cpu::dot_kernel});
  t[static_cast<int>(OpId::grouped_gemm)] = kernel_entry(OpId::grouped_gemm, {.grouped_gemm = &cpu::grouped_gemm_kernel});
  // fft: FFTW (cpu/provider_kernels.hpp; the front ends in src/ops/fft.cpp)
  for (OpId op : {
    OpId::fft, OpId::ifft, OpId::rfft, OpId::irfft
  }) t[static_cast<int>(op)] = kernel_entry(op, {.fft = &cpu::fft_kernel});
  // linalg: LAPACK (cpu/provider_kernels.hpp; the front ends in src/ops/linalg_*.cpp)
  t[static_cast<int>(OpId::svd)] = kernel_entry(OpId::svd, {.svd = &cpu::svd_kernel});
  t[static_cast<int>(OpId::eigh)] = kernel_entry(OpId::eigh, {.eigh = &cpu::eigh_kernel});
  t[static_cast<int>(OpId::eig)] = kernel_entry(OpId::eig, {.eig = &cpu::eig_kernel});
  t[static_cast<int>(OpId::qr)] = kernel_entry(OpId::qr, {.qr = &cpu::qr_kernel});
  t[static_cast<int>(OpId::qr_pivoted)] = kernel_entry(OpId::qr_pivoted, {.qr_pivoted = &cpu::qr_pivoted_kernel});
  t[static_cast<int>(OpId::qr_append_columns)] = kernel_entry(OpId::qr_append_columns, {.qr_append = &cpu::qr_append_columns_kernel});
  t[static_cast<int>(OpId::solve)] = kernel_entry(OpId::solve, {.solve = &cpu::solve_kernel});
  t[static_cast<int>(OpId::triangular_solve)] = kernel_entry(OpId::triangular_solve, {.triangular_solve = &cpu::triangular_solve_kernel});
  t[static_cast<int>(OpId::cholesky)] = kernel_entry(OpId::cholesky, {.cholesky = &cpu::cholesky_kernel});
  t[static_cast<int>(OpId::inv)] = kernel_entry(OpId::inv, {.inv = &cpu::inv_kernel});
  t[static_cast<int>(OpId::lstsq)] = kernel_entry(OpId::lstsq, {.lstsq = &cpu::lstsq_kernel});
  t[static_cast<int>(OpId::pinv)] = kernel_entry(OpId::pinv, {.pinv = &cpu::pinv_kernel});
  t[static_cast<int>(OpId::matrix_norm)] = kernel_entry(OpId::matrix_norm, {.matrix_norm = &cpu::matrix_norm_kernel});
  t[static_cast<int>(OpId::vector_norm)] = kernel_entry(OpId::vector_norm, {.vector_norm = &cpu::vector_norm_kernel});
  t[static_cast<int>(OpId::matrix_exp)] = kernel_entry(OpId::matrix_exp, {.matrix_exp = &cpu::matrix_exp_kernel});
  t[static_cast<int>(OpId::lu_pivots_to_permutation)] =
      kernel_entry(OpId::lu_pivots_to_permutation, {.pivots = &cpu::pivots_to_permutation_kernel});
  t[static_cast<int>(OpId::lu)] = kernel_entry(OpId::lu, {.lu = &cpu::lu_kernel});
  t[static_cast<int>(OpId::lu_factor)] = kernel_entry(OpId::lu_factor, {.lu_factor = &cpu::lu_factor_kernel});
  t[static_cast<int>(OpId::lu_solve)] = kernel_entry(OpId::lu_solve, {.lu_solve = &cpu::lu_solve_kernel});
  t[static_cast<int>(OpId::lu_full_pivot)] = kernel_entry(OpId::lu_full_pivot, {.lu_full_pivot = &cpu::lu_full_pivot_kernel});
  for (OpId op : {
    OpId::det, OpId::slogdet
  }) t[static_cast<int>(op)] = kernel_entry(op, {.det = &cpu::det_kernel});
  // einsum
  for (OpId op : {
    OpId::einsum
  }) t[static_cast<int>(op)] = kernel_entry(op);
  return t;
}

}  // namespace

extern constexpr KernelTable kCpuKernelTable = make_cpu_table();
static_assert(table_complete(kCpuKernelTable), "a catalogue op has no CPU entry: add it to src/cpu/kernel_table.cpp");

}  // namespace tenferro::detail
