#pragma once
// The backend-neutral part of a thread's entry record (Note [Neutral session] in
// tenferro/session.hpp). A backend derives its context from it and owns the
// thread-local instance; a Session points to it.
#include "core/internal_check.hpp"

#include <cstdint>

#include "tenferro/session.hpp"

namespace tenferro::detail {

struct TraceRecorder;  // src/runtime/trace.hpp

struct SessionContext {
  std::uint64_t epoch = 0;  ///< the active session's epoch (0: none)
  Session* active = nullptr;  ///< the active session, for operator sugar
  TraceRecorder* tracer = nullptr;  ///< the graph being traced while the active session is a trace session
};

}  // namespace tenferro::detail
