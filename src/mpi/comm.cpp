// Checked MPI calls, the private communicator, and agreement on errors.
//
// Note [Agreed errors]
// A rank that fails must not leave the others blocked in a collective it never reaches.
// So every phase of distributed_einsum that can fail on one rank (validation, planning,
// allocation, a slice) ends in agree(): an MPI_Allreduce(MIN) of "my rank if I failed,
// else P" tells every rank whether anyone failed and which failing rank is lowest; that
// rank then broadcasts its error's kind, codes and what(), and every rank throws the
// same type with the same message ("distributed_einsum: rank R of P: <what>"). Between
// two agreements a rank only runs local work, so no rank can wait on one that threw.
// Exceptions outside the tenferro hierarchy become tenferro::Error (std::bad_alloc:
// BackendError), so a caller can catch one type on every rank.
#include "mpi/comm.hpp"

#include <algorithm>
#include <climits>
#include <exception>
#include <new>
#include <vector>

#include "tenferro/error.hpp"

namespace tenferro::mpi::detail {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw BackendError(kOp, std::string(call) + " failed (" + std::to_string(rc) + "): " + std::string(text, static_cast<std::size_t>(len)));
}

Comm::Comm(MPI_Comm user) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw RuntimeStateError(kOp, initialized ? "MPI is already finalized" : "MPI is not initialized (call MPI_Init first)");
  if (user == MPI_COMM_NULL) throw ArgumentError(kOp, "the communicator is MPI_COMM_NULL");
  check(MPI_Comm_dup(user, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Comm::~Comm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

namespace {

// The error types, most derived first (capture tests them in this order).
enum class ErrorKind : std::int64_t {
  error, shape, rank, axis, dtype, argument, index, validation, unsupported_ad, unsupported, numerical,
  backend, runtime_state, session_entry, internal,
};

template <class E> bool is(const std::exception& e) { return dynamic_cast<const E*>(&e) != nullptr; }

ErrorKind kind_of(const std::exception& e) {
  if (is<ShapeError>(e)) return ErrorKind::shape;
  if (is<RankError>(e)) return ErrorKind::rank;
  if (is<AxisError>(e)) return ErrorKind::axis;
  if (is<DTypeError>(e)) return ErrorKind::dtype;
  if (is<ArgumentError>(e)) return ErrorKind::argument;
  if (is<IndexError>(e)) return ErrorKind::index;
  if (is<ValidationError>(e)) return ErrorKind::validation;
  if (is<UnsupportedAdRule>(e)) return ErrorKind::unsupported_ad;
  if (is<UnsupportedError>(e)) return ErrorKind::unsupported;
  if (is<NumericalError>(e)) return ErrorKind::numerical;
  if (is<BackendError>(e)) return ErrorKind::backend;
  if (is<RuntimeStateError>(e)) return ErrorKind::runtime_state;
  if (is<SessionEntryError>(e)) return ErrorKind::session_entry;
  if (is<InternalError>(e)) return ErrorKind::internal;
  if (is<std::bad_alloc>(e)) return ErrorKind::backend;
  return ErrorKind::error;
}

[[noreturn]] void throw_failure(const Failure& f, int failed_rank, int size) {
  const std::string m = "rank " + std::to_string(failed_rank) + " of " + std::to_string(size) + ": " + f.what;
  switch (static_cast<ErrorKind>(f.kind)) {
    case ErrorKind::shape: throw ShapeError(kOp, m);
    case ErrorKind::rank: throw RankError(kOp, m);
    case ErrorKind::axis: throw AxisError(kOp, m);
    case ErrorKind::dtype: throw DTypeError(kOp, m);
    case ErrorKind::argument: throw ArgumentError(kOp, m);
    case ErrorKind::index: throw IndexError(kOp, m);
    case ErrorKind::validation: throw ValidationError(kOp, m);
    case ErrorKind::unsupported_ad: throw UnsupportedAdRule(kOp, m);
    case ErrorKind::unsupported: throw UnsupportedError(kOp, m);
    case ErrorKind::numerical: throw NumericalError(kOp, m, f.info, f.batch);
    case ErrorKind::backend: throw BackendError(kOp, m);
    case ErrorKind::runtime_state: throw RuntimeStateError(kOp, m);
    case ErrorKind::session_entry: throw SessionEntryError(static_cast<SessionEntryKind>(f.sub), kOp, m);
    case ErrorKind::internal: throw InternalError(kOp, m);
    case ErrorKind::error: break;
  }
  throw Error(kOp, m);
}

}  // namespace

Failure capture_current_exception() noexcept {
  Failure f;
  f.failed = true;
  try {
    throw;
  } catch (const std::exception& e) {
    try {
      f.kind = static_cast<std::int64_t>(kind_of(e));
      if (const auto* n = dynamic_cast<const NumericalError*>(&e)) {
        f.info = n->info();
        f.batch = n->batch_index();
      }
      if (const auto* se = dynamic_cast<const SessionEntryError*>(&e)) f.sub = static_cast<std::int64_t>(se->kind());
      f.what = e.what();
    } catch (...) {
      f.what.clear();  // no memory for the message: the type still travels
    }
  } catch (...) {
    f.kind = static_cast<std::int64_t>(ErrorKind::error);
  }
  return f;
}

void agree(const Comm& c, const Failure& local) {
  int mine = local.failed ? c.rank() : c.size(), lowest = c.size();
  check(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, c.get()), "MPI_Allreduce");
  if (lowest == c.size()) return;
  std::int64_t head[4] = {local.kind, local.sub, local.info, local.batch};
  check(MPI_Bcast(head, 4, MPI_INT64_T, lowest, c.get()), "MPI_Bcast");
  Failure f;
  f.kind = head[0];
  f.sub = head[1];
  f.info = head[2];
  f.batch = head[3];
  f.what = bcast_string(c, c.rank() == lowest ? local.what : std::string(), lowest);
  throw_failure(f, lowest, c.size());
}

void bcast_bytes(const Comm& c, void* data, std::size_t bytes, int root) {
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t done = 0; done < bytes; done += kChunk) {
    const std::size_t n = std::min(kChunk, bytes - done);
    check(MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, c.get()), "MPI_Bcast");
  }
}

std::string bcast_string(const Comm& c, std::string s, int root) {
  std::uint64_t n = s.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, c.get()), "MPI_Bcast");
  s.resize(n);
  bcast_bytes(c, s.data(), n, root);
  return s;
}

}  // namespace tenferro::mpi::detail
