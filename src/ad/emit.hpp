#pragma once
// The eager emitter's in-place services (Note [Eager emitter]).
#include "core/internal_check.hpp"

#include "tenferro/ad.hpp"

namespace tenferro::ad::detail {

// Note [Eager emitter]
// AD rules are written against ops: they call the public ops on the context's session
// (which executes each one at once: the eager tape's emitter) and never loop over
// elements or read tensor data. Two eager-only services keep the cost work of Note [In-place
// cotangents] without a full op call per node, and live here rather than in the rules:
// a traced-graph emitter records them as the ops named below (their meaning), while the
// eager one runs them on the compact buffer directly.
//   scale_in_place(g, c)  ≡  g ← mul(g, c)            (g compact, writable, owned)
//   filled_like(x, g)     ≡  broadcast_in_dim(g, x.shape, {})   (g one element)

/// g ← g·c in place (g compact, writable, inexact, exclusively owned by the caller;
/// c's dtype promotes into g's). On a session of another device (a trace): mul_into.
void scale_in_place(Session& s, const Tensor& g, const Scalar& c);
/// A fresh compact tensor of x's shape and g's dtype, every element g's single value.
/// On a session of another device (a trace): broadcast_in_dim.
Tensor filled_like(Session& s, const Tensor& x, const Tensor& g);
/// An uninitialized compact tensor on the session's device (a fresh symbolic tensor on a
/// trace session).
Tensor empty_on(Session& s, std::span<const std::int64_t> shape, DType dtype);
/// Zeros of `shape` and `dtype` on the session's device (a traced broadcast of a host
/// zero on a trace session).
Tensor zeros_on(Session& s, std::span<const std::int64_t> shape, DType dtype);

}  // namespace tenferro::ad::detail
