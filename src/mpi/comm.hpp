#pragma once
// Internal to the tenferro::mpi component (src/mpi): checked MPI calls on a private
// communicator, agreement on errors, and the deterministic reduction. Not installed.
#if !defined(TENFERRO_BUILDING_MPI)
#error "src/mpi/comm.hpp is internal to the tenferro::mpi component; include <tenferro/mpi.hpp>"
#endif

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tenferro/dtype.hpp"

namespace tenferro::mpi::detail {

inline constexpr std::string_view kOp = "distributed_einsum";

/// Throws BackendError naming `call` and MPI's error string when rc != MPI_SUCCESS (only
/// reachable under MPI_ERRORS_RETURN; the default handler aborts first).
void check(int rc, const char* call);

/// A private duplicate of the caller's communicator (MPI_Comm_dup), so that the call's
/// messages never match the caller's own; freed on destruction.
class Comm {
 public:
  explicit Comm(MPI_Comm user);
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm();
  MPI_Comm get() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

/// A rank's failure, captured from an exception so that it can be sent to every rank
/// and rethrown there with the same type (Note [Agreed errors] in comm.cpp).
struct Failure {
  bool failed = false;
  std::int64_t kind = 0;     // ErrorKind in comm.cpp
  std::int64_t sub = 0;      // SessionEntryKind for session-entry errors
  std::int64_t info = 0;     // NumericalError::info
  std::int64_t batch = -1;   // NumericalError::batch_index
  std::string what;          // the original what()
};

/// The exception being handled (call inside a catch block) as a Failure.
Failure capture_current_exception() noexcept;

/// Collective: when some rank failed, every rank throws the lowest failing rank's error
/// (same type; message "rank R of P: <what>"); otherwise returns.
void agree(const Comm& c, const Failure& local);

/// Runs f() on this rank, then agree()s: an exception on any rank is thrown on all.
template <class F> void run_agreed(const Comm& c, F&& f) {
  Failure local;
  try {
    f();
  } catch (...) {
    local = capture_current_exception();
  }
  agree(c, local);
}

/// MPI_Bcast of `bytes` bytes from `root`, in messages of at most 1 GiB.
void bcast_bytes(const Comm& c, void* data, std::size_t bytes, int root);

/// Broadcasts a string from `root` (its length first).
std::string bcast_string(const Comm& c, std::string s, int root);

/// Elements per reduction message (counts fit MPI's int); the scratch of reduce_sum
/// holds min(count, kReduceChunk) elements.
inline constexpr std::int64_t kReduceChunk = std::int64_t{1} << 27;

/// Whether this rank receives a message in reduce_sum towards `root` (needs scratch).
bool reduce_receives(const Comm& c, int root) noexcept;

/// Sums the ranks' buffers of `count` elements of `dtype` (f32, f64, c64, c128) into
/// root's buffer in a fixed binomial tree (Note [Deterministic reduction] in reduce.cpp).
/// `scratch` holds min(count, kReduceChunk) elements on ranks where reduce_receives() is true. With `all`
/// the tree's root is 0 and its buffer is then broadcast to every rank. Other ranks'
/// buffers hold partial sums afterwards.
void reduce_sum(const Comm& c, void* buffer, std::int64_t count, DType dtype, int root, bool all, void* scratch);

}  // namespace tenferro::mpi::detail
