#pragma once
// Rethrowing an error under another op's name (Note [Errors inside rules]).
#include <string_view>

#include "tenferro/error.hpp"

namespace tenferro::detail {

// Note [Errors inside rules]
// A derivative rule is built from ops: det's VJP runs an SVD, slogdet's an inverse. An
// error one of those raises names the inner op ("inv: getrf: singular"), which tells the
// user nothing about which of their ops failed. The AD runtime catches the rule's
// tenferro::Error and rethrows the same class (NumericalError keeps info and batch,
// SessionEntryError its kind) under the differentiated op, with the stage and the inner
// message kept: "slogdet: VJP: inv: getrf: singular matrix (info 2)". An error that
// already names the op is rethrown unchanged; anything that is not a tenferro::Error
// (std::bad_alloc) passes through untouched.

/// Throws an error of e's dynamic class whose op is `op` and whose message is
/// "<stage>: <e.what()>" (e itself when e.op() == op). Call it only inside the handler
/// that caught e.
[[noreturn]] void rethrow_under(const Error& e, std::string_view op, std::string_view stage);

/// Runs f() and returns what it returns; a tenferro::Error it throws is rethrown under
/// `op` (rethrow_under), anything else passes through.
template <class F> decltype(auto) under_op(std::string_view op, std::string_view stage, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    rethrow_under(e, op, stage);
  }
}

}  // namespace tenferro::detail
