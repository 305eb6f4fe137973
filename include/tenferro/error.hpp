#pragma once
/// \file error.hpp
/// The one error hierarchy. Every error names the op that failed; messages start with
/// "<op>: " and show the offending values.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tenferro/export.hpp"

namespace tenferro {

/// Root of every tenferro error.
class TENFERRO_API Error : public std::runtime_error {
 public:
  /// `op` is the failing operation's name; `message` the detail. what() is "op: message".
  Error(std::string_view op, std::string_view message);
  ~Error() override;
  /// The failing operation's name.
  const std::string& op() const noexcept { return op_; }

 private:
  std::string op_;
};

/// Bad user input, detected before anything was written.
class TENFERRO_API ValidationError : public Error { public: using Error::Error; ~ValidationError() override; };
/// Shapes that do not match or cannot broadcast; wrong output shape.
class TENFERRO_API ShapeError : public ValidationError { public: using ValidationError::ValidationError; ~ShapeError() override; };
/// Wrong number of axes.
class TENFERRO_API RankError : public ValidationError { public: using ValidationError::ValidationError; ~RankError() override; };
/// Axis out of range or repeated.
class TENFERRO_API AxisError : public ValidationError { public: using ValidationError::ValidationError; ~AxisError() override; };
/// Dtype not supported by the op, or a wrong output dtype.
class TENFERRO_API DTypeError : public ValidationError { public: using ValidationError::ValidationError; ~DTypeError() override; };
/// Any other bad argument (aliasing output, bad step, lossy convert, ...).
class TENFERRO_API ArgumentError : public ValidationError { public: using ValidationError::ValidationError; ~ArgumentError() override; };
/// Element index out of range; extent/offset arithmetic overflow.
class TENFERRO_API IndexError : public ValidationError { public: using ValidationError::ValidationError; ~IndexError() override; };

/// A valid request this build or device does not support.
class TENFERRO_API UnsupportedError : public Error { public: using Error::Error; ~UnsupportedError() override; };
/// Automatic differentiation reached an op (or an op configuration) that has no JVP or
/// VJP rule. Raised when the op would be recorded on a tape or given a tangent, never
/// replaced by a silent zero. The op name is the primitive's catalogue name.
class TENFERRO_API UnsupportedAdRule : public UnsupportedError { public: using UnsupportedError::UnsupportedError; ~UnsupportedAdRule() override; };

/// Numerical failure: singular matrix, no convergence, integer division by zero.
class TENFERRO_API NumericalError : public Error {
 public:
  /// `info` is the provider's info code (0 when none); `batch` the batch index (-1 when none).
  NumericalError(std::string_view op, std::string_view message, std::int64_t info = 0,
                 std::int64_t batch = -1);
  ~NumericalError() override;
  std::int64_t info() const noexcept { return info_; }
  std::int64_t batch_index() const noexcept { return batch_; }

 private:
  std::int64_t info_;
  std::int64_t batch_;
};

/// A backend or provider failed (allocation, worker pool, library call).
class TENFERRO_API BackendError : public Error { public: using Error::Error; ~BackendError() override; };

/// A management call found the runtime in a state where it cannot act without waiting
/// (resources checked out by an open session), or a call needs state that is absent.
class TENFERRO_API RuntimeStateError : public Error { public: using Error::Error; ~RuntimeStateError() override; };

/// Why a session could not be entered or used.
enum class SessionEntryKind : std::uint8_t {
  Reentered,           ///< nested entry on the same thread
  Contended,           ///< a try_ entry found the CPU set busy
  IncompatibleContext, ///< wrong thread, wrong backend, wrong device
  Poisoned,            ///< session closed, moved-from, or its backend gone
  Executor,            ///< the worker pool failed
};
/// Name of a SessionEntryKind ("Reentered", ...).
TENFERRO_API std::string_view session_entry_kind_name(SessionEntryKind k) noexcept;

/// Session entry or use refused.
class TENFERRO_API SessionEntryError : public Error {
 public:
  SessionEntryError(SessionEntryKind kind, std::string_view op, std::string_view message);
  ~SessionEntryError() override;
  SessionEntryKind kind() const noexcept { return kind_; }

 private:
  SessionEntryKind kind_;
};

/// A broken internal invariant (a bug in tenferro).
class TENFERRO_API InternalError : public Error { public: using Error::Error; ~InternalError() override; };

}  // namespace tenferro
