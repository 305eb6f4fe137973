#pragma once
/// \file op_catalog.hpp
/// The op catalogue as a public query: every primitive's id, name, family, arity,
/// dtype set and AD status, derived from the one table (op_catalog.def), and
/// `supports(op, dtype, device)`, answered from the backends' kernel tables.

#include <cstdint>
#include <optional>
#include <string_view>

#include "tenferro/dtype.hpp"
#include "tenferro/export.hpp"
#include "tenferro/storage.hpp"

// Note [Family lists from the catalogue]
// Code that declares, defines or registers the same thing for every op of a family
// (the analytic functions' declarations, definitions, AD wrappers, rule registration)
// expands the catalogue through TENFERRO_ONLY_<family>, so a new row needs no list
// edits there. Usage:
//   #define TENFERRO_ANALYTIC_ITEM(name) DECLARE(name)
//   #define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
//   #include "tenferro/op_catalog.def"
//   #undef TENFERRO_OP
//   #undef TENFERRO_ANALYTIC_ITEM
#define TENFERRO_ONLY_analytic(name) TENFERRO_ANALYTIC_ITEM(name)
#define TENFERRO_ONLY_elementwise(name)
#define TENFERRO_ONLY_conversion(name)
#define TENFERRO_ONLY_reduction(name)
#define TENFERRO_ONLY_along_axis(name)
#define TENFERRO_ONLY_blas1(name)
#define TENFERRO_ONLY_structural(name)
#define TENFERRO_ONLY_indexing(name)
#define TENFERRO_ONLY_contraction(name)
#define TENFERRO_ONLY_fft(name)
#define TENFERRO_ONLY_linalg(name)
#define TENFERRO_ONLY_einsum(name)

namespace tenferro {

/// Every primitive, in catalogue order.
enum class OpId : std::uint16_t {
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) name,
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
  count_  ///< not an op: the number of primitives
};
/// Number of primitives (derived from the table, never typed by hand).
inline constexpr int kNumOps = static_cast<int>(OpId::count_);

/// Where a primitive's front end lives (src/ops/<family>, and its family folder).
enum class OpFamily : std::uint8_t {
  elementwise, analytic, conversion, reduction, blas1, structural, indexing, contraction, fft, linalg, einsum,
  along_axis,  ///< scans and normalizations along one axis (cumsum, softmax, ...)
};
/// "elementwise", "linalg", ...
TENFERRO_API std::string_view op_family_name(OpFamily f) noexcept;

/// Whether an op has derivative rules.
enum class AdStatus : std::uint8_t {
  pending,  ///< differentiable, no rule yet (recording it throws UnsupportedAdRule)
  none,     ///< not differentiable (integer/bool or piecewise-constant outputs)
  jvp_vjp,  ///< JVP and VJP rules in src/ad/
};

/// One row of the catalogue.
struct OpInfo {
  std::string_view name;
  OpFamily family;
  int inputs;   ///< tensor operands; -1: variadic
  int outputs;  ///< results of the primitive
  DTypeSet dtypes;
  AdStatus ad;
  std::string_view attrs;  ///< the typed attribute struct (tenferro/op_attrs.hpp)
};

/// The catalogue, indexed by OpId.
inline constexpr OpInfo kOps[] = {
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) \
  {#name, OpFamily::family, inputs, outputs, DTypeSet::dtypes, AdStatus::ad, #attrs},
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<std::size_t>(kNumOps));

/// The row of `id` (id must be a catalogue op).
constexpr const OpInfo& op_info(OpId id) noexcept { return kOps[static_cast<int>(id)]; }
/// The catalogue name of `id` ("add", "svd", ...).
constexpr std::string_view op_name(OpId id) noexcept { return op_info(id).name; }
/// The op named `name`, or nullopt.
TENFERRO_API std::optional<OpId> find_op(std::string_view name) noexcept;

/// Whether `op` runs for inputs of dtype `dtype` on `device` in this build: the dtype
/// is in the op's set and the device's kernel table has a kernel (not a stub) for it.
/// False for ids or dtypes outside their enums.
TENFERRO_API bool supports(OpId op, DType dtype, DeviceKind device) noexcept;

}  // namespace tenferro
