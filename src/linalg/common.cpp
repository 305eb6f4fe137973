// Operand validation and helpers shared by the linalg family (see common.hpp).
#include "linalg/common.hpp"

#include "ops/kernel_table.hpp"

#include <climits>

namespace tenferro::detail::linalg {

std::int64_t batch_offset(const Tensor& a, std::int64_t b) noexcept {
  std::int64_t off = 0;
  for (int i = 2; i < a.rank() && b; ++i) {
    const std::int64_t e = a.extent(i);
    off += (b % e) * a.stride(i);
    b /= e;
  }
  return off;
}

void throw_numerical(std::string_view op, std::string_view routine, std::string_view what, const BatchFailure& f) {
  if (f.info < 0 && f.info != kNotFinite)
    throw BackendError(op, std::string(routine) + ": argument " + std::to_string(-f.info) + " had an illegal value (info " +
                               std::to_string(f.info) + ") in batch " + std::to_string(f.batch));
  throw NumericalError(op, std::string(routine) + ": " + std::string(what) + " (info " + std::to_string(f.info) + ") in batch " +
                               std::to_string(f.batch),
                       f.info, f.batch);
}

namespace {
// The LAPACK routine a Routine id names (a switch: -Wswitch flags a new id left out).
std::string_view routine_name(Routine r) noexcept {
  switch (r) {
    case Routine::gesdd: return "gesdd";
    case Routine::geqrf: return "geqrf";
    case Routine::orgqr: return "orgqr";
    case Routine::syevd: return "syevd";
    case Routine::geev: return "geev";
    case Routine::getri: return "getri";
    case Routine::gels: return "gels";
    case Routine::gelsd: return "gelsd";
    case Routine::geqp3: return "geqp3";
  }
  return "?";
}
}  // namespace

void throw_query_failed(std::string_view op, Routine r, std::int64_t info) {
  throw BackendError(op, std::string(routine_name(r)) + ": workspace query failed (info " + std::to_string(info) + ")");
}

}  // namespace tenferro::detail::linalg

namespace tenferro {

PlanCacheStats linalg_plan_cache_stats(Session& s) {
  s.check("linalg_plan_cache_stats");
  return detail::cpu_context(s).resources->linalg_plans.stats();
}

}  // namespace tenferro
