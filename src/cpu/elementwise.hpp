#pragma once
// The CPU elementwise loops: typed line kernels along one inner line of a LoopPlan, the
// flat contiguous loops, and the runners that split them over the session's threads.
// Validation lives in the op layer (src/ops/elementwise.cpp, src/ops/conversion.cpp).
#include "core/internal_check.hpp"

#include <algorithm>
#include <cstring>

#include "cpu/elementwise_functors.hpp"
#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/strided_loop.hpp"

namespace tenferro::detail {

// ---- line kernels: o[i] = f(a[i], ...) along one inner line ----

/// Elements a strided line of a functor with a line form (HasLine) is gathered in.
inline constexpr std::int64_t kLineChunk = 128;

template <class O, class A, class F> void line1(char** p, const std::int64_t* st, std::int64_t n, F f) {
  if constexpr (HasLine<F, A> && std::is_same_v<O, A>) {
    if (st[0] == sizeof(O) && st[1] == sizeof(A)) return F::line(reinterpret_cast<const A*>(p[1]), reinterpret_cast<O*>(p[0]), n);
    A buf[kLineChunk];  // gathered, computed in place, scattered: the same values as a contiguous line
    for (std::int64_t i0 = 0; i0 < n; i0 += kLineChunk) {
      const std::int64_t m = std::min(kLineChunk, n - i0);
      for (std::int64_t i = 0; i < m; ++i) buf[i] = *reinterpret_cast<const A*>(p[1] + (i0 + i) * st[1]);
      F::line(buf, buf, m);
      for (std::int64_t i = 0; i < m; ++i) *reinterpret_cast<O*>(p[0] + (i0 + i) * st[0]) = buf[i];
    }
    return;
  }
  if (st[0] == sizeof(O) && st[1] == sizeof(A)) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    return;
  }
  char* o = p[0];
  const char* a = p[1];
  for (std::int64_t i = 0; i < n; ++i, o += st[0], a += st[1]) *reinterpret_cast<O*>(o) = f(*reinterpret_cast<const A*>(a));
}

template <class O, class A, class B, class F> void line2(char** p, const std::int64_t* st, std::int64_t n, F f) {
  if (st[0] == sizeof(O)) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    const B* b = reinterpret_cast<const B*>(p[2]);
    if (st[1] == sizeof(A) && st[2] == sizeof(B)) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
      return;
    }
    if (st[1] == sizeof(A) && st[2] == 0) {
      const B bv = *b;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
      return;
    }
    if (st[1] == 0 && st[2] == sizeof(B)) {
      const A av = *a;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
      return;
    }
  }
  char* o = p[0];
  const char *a = p[1], *b = p[2];
  for (std::int64_t i = 0; i < n; ++i, o += st[0], a += st[1], b += st[2])
    *reinterpret_cast<O*>(o) = f(*reinterpret_cast<const A*>(a), *reinterpret_cast<const B*>(b));
}

template <class O, class A, class B, class C, class F> void line3(char** p, const std::int64_t* st, std::int64_t n, F f) {
  char* o = p[0];
  const char *a = p[1], *b = p[2], *c = p[3];
  for (std::int64_t i = 0; i < n; ++i, o += st[0], a += st[1], b += st[2], c += st[3])
    *reinterpret_cast<O*>(o) = f(*reinterpret_cast<const A*>(a), *reinterpret_cast<const B*>(b), *reinterpret_cast<const C*>(c));
}

/// Runs o[i] = f(a[i], b[i]) (o[i] = f(a[i])) over n contiguous elements, inline or
/// across the session's threads.
template <class O, class A, class B, class F> void run_contiguous2(const Session& s, O* o, const A* a, const B* b, std::int64_t n, std::int64_t cost, F f) {
  if (n * cost < kForkThreshold) {  // never forks (Note [Fork cost model]): skip the decision call
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
    return;
  }
  parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) o[i] = f(a[i], b[i]);
  });
}
template <class O, class A, class F> void run_contiguous1(const Session& s, O* o, const A* a, std::int64_t n, std::int64_t cost, F f) {
  if constexpr (HasLine<F, A> && std::is_same_v<O, A>) {
    if (n * cost < kForkThreshold) return F::line(a, o, n);
    return parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) { F::line(a + lo, o + lo, hi - lo); });
  }
  if (n * cost < kForkThreshold) {  // as run_contiguous2
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    return;
  }
  parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) o[i] = f(a[i]);
  });
}

/// Runs `line` over the plan, inline or across the session's threads (Note [Fork cost model]).
template <int N, class Line> void run_plan(const Session& s, const LoopPlan<N>& plan, std::int64_t cost, Line line) {
  parallel_for(s, plan.numel, cost, [&](std::int64_t b, std::int64_t e) { plan.run(b, e, line); });
}

}  // namespace tenferro::detail
