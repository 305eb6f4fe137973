// The deterministic sum of the ranks' partial results.
//
// Note [Deterministic reduction]
// MPI_Reduce with MPI_SUM may combine the ranks' buffers in any order the implementation
// likes (Open MPI picks among linear, binomial, pipelined and Rabenseifner algorithms by
// message size and communicator size, and may split a buffer into segments), so the
// floating-point result could change with the message size or the library version. We
// fix the order ourselves with point-to-point messages in a binomial tree over the ranks
// relative to the root, v = (rank - root) mod P:
//
//   for mask = 1, 2, 4, ...  (while mask < P)
//     v & mask != 0:  send my buffer to v - mask, stop
//     v + mask < P:   receive v + mask's buffer, then  mine = mine + received
//
// Example, P = 4, root 0: rank 0 computes (b0 + b1) + (b2 + b3), where each b_r is the
// sum of rank r's slices in ascending slice order (EinsumPlan::execute_slices_into with
// accumulate, slice by slice). P = 3: (b0 + b1) + b2. The tree depends only on P and the
// root, so for a given rank count the result is the same on every run; it differs from
// the single-process einsum only by summation order (the tests bound the difference at
// 1e-12 relative). Reduction::all reduces to rank 0 and then broadcasts rank 0's buffer
// (MPI_Bcast copies bytes, so every rank holds bit-identical values). The additions run
// in the result's dtype (complex as two real additions, as std::complex does).
// Messages are typed (MPI_FLOAT, MPI_DOUBLE, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX)
// and at most 2^27 elements each, so counts fit MPI's int.
#include <algorithm>

#include "mpi/comm.hpp"
#include "tenferro/error.hpp"

namespace tenferro::mpi::detail {

namespace {

constexpr int kTag = 0x7e50;
constexpr std::int64_t kChunk = kReduceChunk;

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::c64: return MPI_C_FLOAT_COMPLEX;
    case DType::c128: return MPI_C_DOUBLE_COMPLEX;
    default: break;
  }
  throw DTypeError(kOp, "cannot reduce dtype " + std::string(dtype_name(d)) + "; the result must be f32, f64, c64 or c128");
}

template <class T> void add(void* dst, const void* src, std::int64_t n) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (std::int64_t i = 0; i < n; ++i) d[i] += s[i];
}

void add_into(DType d, void* dst, const void* src, std::int64_t n) {
  switch (d) {
    case DType::f32: return add<float>(dst, src, n);
    case DType::f64: return add<double>(dst, src, n);
    case DType::c64: return add<c64>(dst, src, n);
    case DType::c128: return add<c128>(dst, src, n);
    default: throw InternalError(kOp, "add_into: dtype " + std::string(dtype_name(d)));
  }
}

}  // namespace

bool reduce_receives(const Comm& c, int root) noexcept {
  const int P = c.size(), v = (c.rank() - root + P) % P;
  return P > 1 && (v & 1) == 0 && v + 1 < P;
}

void reduce_sum(const Comm& c, void* buffer, std::int64_t count, DType dtype, int root, bool all, void* scratch) {
  const int P = c.size(), v = (c.rank() - root + P) % P;
  const MPI_Datatype type = mpi_type(dtype);
  const std::size_t esize = dtype_size(dtype);
  auto* buf = static_cast<unsigned char*>(buffer);
  for (int mask = 1; mask < P; mask <<= 1) {
    if (v & mask) {
      const int to = (v - mask + root) % P;
      for (std::int64_t i = 0; i < count; i += kChunk)
        check(MPI_Send(buf + i * esize, static_cast<int>(std::min(kChunk, count - i)), type, to, kTag, c.get()), "MPI_Send");
      break;
    }
    if (v + mask < P) {
      const int from = (v + mask + root) % P;
      for (std::int64_t i = 0; i < count; i += kChunk) {
        const std::int64_t n = std::min(kChunk, count - i);
        check(MPI_Recv(scratch, static_cast<int>(n), type, from, kTag, c.get(), MPI_STATUS_IGNORE), "MPI_Recv");
        add_into(dtype, buf + i * esize, scratch, n);
      }
    }
  }
  if (all) bcast_bytes(c, buffer, static_cast<std::size_t>(count) * esize, root);
}

}  // namespace tenferro::mpi::detail
