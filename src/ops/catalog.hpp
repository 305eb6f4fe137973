#pragma once
// The op catalogue (see catalog.def): enum, names, dtype sets and AD status derive from
// the one table.
#include "core/internal_check.hpp"

#include <string_view>

#include "tenferro/dtype.hpp"

namespace tenferro::detail {

/// Whether an op has derivative rules.
enum class AdStatus : std::uint8_t { pending, none, jvp_vjp };

/// Every primitive.
enum class OpId : std::uint16_t {
#define TENFERRO_OP(name, arity, dtypes, ad) name,
#include "ops/catalog.def"
#undef TENFERRO_OP
};

/// One row of the catalogue.
struct OpInfo {
  std::string_view name;
  int arity;
  DTypeSet dtypes;
  AdStatus ad;
};

inline constexpr OpInfo kOps[] = {
#define TENFERRO_OP(name, arity, dtypes, ad) {#name, arity, DTypeSet::dtypes, AdStatus::ad},
#include "ops/catalog.def"
#undef TENFERRO_OP
};

/// Number of primitives; the static_assert catches a table edited in one place only.
inline constexpr int kNumOps = 96;
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps, "op catalogue changed: update kNumOps");

constexpr const OpInfo& op_info(OpId id) noexcept { return kOps[static_cast<int>(id)]; }
constexpr std::string_view op_name(OpId id) noexcept { return op_info(id).name; }

}  // namespace tenferro::detail
