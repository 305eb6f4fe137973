// Einsum entry points: one-shot calls (programs cached in the session's resources, or
// built in thread-local scratch for non-default options), the prepared EinsumPlan, and
// einsum_path.
#include <cstring>
#include <memory>
#include <string>

#include "core/bounded_cache.hpp"
#include "cpu/context.hpp"
#include "cpu/op_common.hpp"
#include "einsum/program.hpp"
#include "tenferro/error.hpp"

namespace tenferro {
namespace detail::einsum {
namespace {

constexpr std::string_view kOp = "einsum";

/// An operand on the CPU, or a symbolic one while tracing (Note [Tracing] in tenferro/graph.hpp).
void require_operand(const Tensor& t) {
  if (!(t.defined() && t.device().kind == DeviceKind::trace)) require_cpu_tensor(t, kOp, "operand");
}

void fill_operands(std::span<const Tensor> operands, EinsumProgram& p) {
  p.shapes.resize(operands.size());
  p.dtypes.resize(operands.size());
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const Tensor& t = operands[k];
    require_operand(t);
    Shape& sh = p.shapes[k];
    sh.clear();
    for (int a = 0; a < t.rank(); ++a) sh.push_back(t.extent(a));
    p.dtypes[k] = t.dtype();
  }
}

// Note [Einsum program cache]
// Sweeps call the same one-shot einsum with the same shapes thousands of times. The
// programs of string-form calls made with default options live in the session's
// checked-out resources (CpuResources::einsum_programs, a BoundedCache of ErasedHandles:
// the CPU backend never sees EinsumProgram; Note [Bounded caches]), keyed by the
// subscripts, the operands' shapes and their dtypes. A repeat skips parsing, validation
// of the labels and planning, and only checks the operands (devices, and what the run
// itself checks). Programs hold no tensors, so caching them is invisible to the caller:
// with a limit of 0 entries every call plans afresh (the cache's scratch slot holds the
// program for the call) and returns the same result. Like the other caches it is
// shared by the sessions of one backend held one after another, and managed through
// CpuBackend::cache_stats / clear_cache / set_cache_limits (CacheKind::einsum_programs).
// Key, for "ij,jk->ik" on two f64 [2, 2]: word 0 = subscript bytes (9) | operands (2) << 32,
// the subscripts packed 8 bytes a word (2 words, zero padded), then per operand
// dtype | rank << 8 and its extents: 1 + 2 + 2 · 3 = 9 words, hashed FNV-1a. A repeat
// of the session's last call is recognised by comparing its arguments with the stored
// key (BoundedCache::find_recent), without serializing or hashing them.

/// Most key words: longer calls (very long subscripts, many operands) are not cached.
constexpr int kMaxProgramKey = 96;

/// Calls word(w) for each word of the cache key of a one-shot string call, in order,
/// until it returns false; returns whether every word was accepted. Whole subscript
/// words are one (inlined) 8-byte copy each and the tail goes byte by byte: a
/// variable-length memcpy call would cost as much as the rest of the key.
template <class Word> bool for_key_words(std::string_view subs, std::span<const Tensor> operands, Word&& word) noexcept {
  const std::size_t chars = subs.size(), full = chars / 8;
  if (!word(static_cast<std::int64_t>(chars | operands.size() << 32))) return false;
  const char* c = subs.data();
  for (std::size_t w = 0; w < full; ++w) {
    std::int64_t v;
    std::memcpy(&v, c + 8 * w, 8);
    if (!word(v)) return false;
  }
  if (chars > 8 * full) {
    std::uint64_t v = 0;
    for (std::size_t i = 8 * full; i < chars; ++i) v |= std::uint64_t{static_cast<unsigned char>(c[i])} << (8 * (i - 8 * full));
    if (!word(static_cast<std::int64_t>(v))) return false;
  }
  for (const Tensor& t : operands) {
    const int r = t.rank();
    if (!word(static_cast<std::int64_t>(t.dtype()) | std::int64_t{r} << 8)) return false;
    for (int a = 0; a < r; ++a)
      if (!word(t.extent(a))) return false;
  }
  return true;
}

/// Serializes the cache key into key[0..len) and returns len, or 0 when it does not
/// fit in kMaxProgramKey words.
int program_key(std::string_view subs, std::span<const Tensor> operands, std::int64_t* key, std::uint64_t& hash) noexcept {
  int n = 0;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  const bool fits = for_key_words(subs, operands, [&](std::int64_t w) {
    if (n == kMaxProgramKey) return false;
    key[n++] = w;
    h = (h ^ static_cast<std::uint64_t>(w)) * 1099511628211ull;
    return true;
  });
  hash = h;
  return fits ? n : 0;
}

/// Whether the stored key words k[0..len) are this call's.
bool same_key(const std::int64_t* k, int len, std::string_view subs, std::span<const Tensor> operands) noexcept {
  int n = 0;
  return for_key_words(subs, operands, [&](std::int64_t w) { return n < len && k[n++] == w; }) && n == len;
}

/// What a program accounts for in the cache's byte limit (its vectors, roughly).
std::size_t program_bytes(const EinsumProgram& p) noexcept {
  return sizeof(EinsumProgram) + p.shapes.size() * (sizeof(Shape) + sizeof(DType)) + p.leaves.size() * sizeof(LeafPrep) +
         p.steps.size() * sizeof(Step);
}

/// A program as the session's cache holds it (destroyed through the handle).
ErasedHandle owned_program(std::unique_ptr<EinsumProgram> p) noexcept {
  constexpr auto destroy = [](void* q) noexcept { delete static_cast<EinsumProgram*>(q); };
  return ErasedHandle(p.release(), +destroy);
}

// Only calls whose plan depends on nothing but the subscripts and shapes are cached: no
// path or tree, the automatic optimizer, no memory limit, and (for 3+ operands, where
// they steer the planner) the default objective, budgets and cost model. The 2-operand
// call pays only the first five comparisons (the 2×2 fixed cost: docs/benchmarks.md);
// a function-local static PlanOptions would add a guard check to every call, so the
// defaults are compared against a value-initialised CostModel and PlanOptions'
// initialisers.
constexpr CostModel kDefaultModel{};
bool default_options(const EinsumOptions& o, std::size_t num_operands) noexcept {
  const PlanOptions& p = o.plan;
  if (!(o.path.empty() && !o.tree && p.optimizer == EinsumOptimizer::automatic && p.max_intermediate_elements == 0 &&
        p.max_intermediate_bytes == 0))
    return false;
  if (num_operands < 3) return true;
  const CostModel& m = p.cost_model;
  return p.objective == PlanObjective::time && p.planning_fraction == 0.1 && p.time_budget_s == 1.0 && p.max_trials == 0 &&
         p.seed == 0 && m.gemm_rate == kDefaultModel.gemm_rate && m.gemm_half_extent == kDefaultModel.gemm_half_extent &&
         m.bytes_rate == kDefaultModel.bytes_rate && m.read_factor == kDefaultModel.read_factor &&
         m.write_factor == kDefaultModel.write_factor && m.step_seconds == kDefaultModel.step_seconds &&
         m.element_bytes == kDefaultModel.element_bytes;
}

/// The thread's parse scratch (reused across calls: a warm parse allocates nothing).
Parsed& parse_scratch() noexcept {
  thread_local Parsed parsed;
  return parsed;
}

/// One-shot: parse, build in scratch, run.
template <class Parse>
void one_shot(Session& s, Parse&& parse, std::span<const Tensor> operands, const EinsumOptions& options, const Tensor* out, Tensor& result) {
  s.check(kOp);
  thread_local EinsumProgram prog;
  Parsed& parsed = parse_scratch();
  parse(parsed);
  fill_operands(operands, prog);
  build_program(parsed, options, false, prog);
  run_program(s, prog, operands, out, result);
}

/// One-shot string form through the program cache (Note [Einsum program cache]).
void one_shot_string(Session& s, std::string_view subs, std::span<const Tensor> operands, const EinsumOptions& options, const Tensor* out,
                     Tensor& result) {
  const auto parse = [&](Parsed& p) { parse_subscripts(subs, p); };
  if (!default_options(options, operands.size()) || s.device() == DeviceKind::trace) {  // a trace caches nothing
    one_shot(s, parse, operands, options, out, result);
    return;
  }
  s.check(kOp);
  BoundedCache<ErasedHandle>& cache = cpu_context(s).resources->einsum_programs;
  // A repeat of the last call compares its arguments with the stored key directly.
  ErasedHandle* hit = cache.find_recent([&](const std::int64_t* k, int n) { return same_key(k, n, subs, operands); });
  std::int64_t key[kMaxProgramKey];
  std::uint64_t hash = 0;
  int len = 0;
  if (!hit) {
    len = program_key(subs, operands, key, hash);
    if (len == 0) {  // too long to cache
      one_shot(s, parse, operands, options, out, result);
      return;
    }
    hit = cache.find(key, len, hash);
  }
  const EinsumProgram* prog = nullptr;
  if (hit) {
    for (const Tensor& t : operands)
      if (!t.defined() || t.device().kind != DeviceKind::cpu) [[unlikely]] require_cpu_tensor(t, kOp, "operand");
    prog = hit->as<EinsumProgram>();
  } else {
    Parsed& parsed = parse_scratch();
    parse(parsed);
    auto fresh = std::make_unique<EinsumProgram>();
    fill_operands(operands, *fresh);
    build_program(parsed, options, false, *fresh);
    const std::size_t bytes = program_bytes(*fresh);
    prog = cache.insert(key, len, hash, owned_program(std::move(fresh)), bytes)->as<EinsumProgram>();
  }
  run_program(s, *prog, operands, out, result);
}

void check_prepared(const EinsumProgram& p, std::span<const Tensor> operands) {
  if (static_cast<int>(operands.size()) != p.n)
    throw ArgumentError(kOp, "plan prepared for " + std::to_string(p.n) + " operands, got " + std::to_string(operands.size()));
  for (int k = 0; k < p.n; ++k) {
    const Tensor& t = operands[static_cast<std::size_t>(k)];
    require_operand(t);
    const Shape& sh = p.shapes[static_cast<std::size_t>(k)];
    bool same = t.rank() == sh.size();
    for (int a = 0; same && a < sh.size(); ++a) same = t.extent(a) == sh[a];
    if (!same)
      throw ShapeError(kOp, "operand " + std::to_string(k) + " has shape " + t.shape().to_string() + "; the plan was prepared for " +
                                sh.to_string());
    if (t.dtype() != p.dtypes[static_cast<std::size_t>(k)])
      throw DTypeError(kOp, "operand " + std::to_string(k) + " has dtype " + std::string(dtype_name(t.dtype())) +
                                "; the plan was prepared for " + std::string(dtype_name(p.dtypes[static_cast<std::size_t>(k)])));
  }
}

}  // namespace
}  // namespace detail::einsum

using namespace detail::einsum;

Tensor einsum(Session& s, std::string_view subscripts, std::span<const Tensor> operands, const EinsumOptions& options) {
  Tensor result;
  one_shot_string(s, subscripts, operands, options, nullptr, result);
  return result;
}

void einsum_into(Session& s, std::string_view subscripts, std::span<const Tensor> operands, const Tensor& out, const EinsumOptions& options) {
  Tensor unused;
  one_shot_string(s, subscripts, operands, options, &out, unused);
}

Tensor einsum(Session& s, std::span<const Tensor> operands, EinsumLabels labels, std::optional<std::span<const std::int64_t>> output,
              const EinsumOptions& options) {
  Tensor result;
  one_shot(s, [&](Parsed& p) { parse_labels(labels, output, p); }, operands, options, nullptr, result);
  return result;
}

void einsum_into(Session& s, std::span<const Tensor> operands, EinsumLabels labels, std::optional<std::span<const std::int64_t>> output,
                 const Tensor& out, const EinsumOptions& options) {
  Tensor unused;
  one_shot(s, [&](Parsed& p) { parse_labels(labels, output, p); }, operands, options, &out, unused);
}

PlanCacheStats einsum_program_cache_stats(Session& s) {
  s.check("einsum_program_cache_stats");
  return detail::cpu_context(s).resources->einsum_programs.stats();
}

EinsumPathInfo einsum_path(std::string_view subscripts, std::span<const Shape> shapes, const EinsumOptions& options) {
  Parsed parsed;
  parse_subscripts(subscripts, parsed);
  EinsumProgram p;
  p.shapes.assign(shapes.begin(), shapes.end());
  p.dtypes.assign(shapes.size(), DType::f64);  // the order does not depend on dtypes
  build_program(parsed, options, true, p);
  return p.path;
}

// ------------------------------------------------------------------ EinsumPlan

EinsumPlan::EinsumPlan(EinsumPlan&&) noexcept = default;
EinsumPlan& EinsumPlan::operator=(EinsumPlan&&) noexcept = default;
EinsumPlan::~EinsumPlan() = default;

namespace {
std::unique_ptr<EinsumProgram> prepare(const Parsed& parsed, std::span<const Shape> shapes, std::span<const DType> dtypes,
                                       const EinsumOptions& options) {
  if (shapes.size() != dtypes.size())
    throw ArgumentError("einsum", "got " + std::to_string(shapes.size()) + " shapes but " + std::to_string(dtypes.size()) + " dtypes");
  auto p = std::make_unique<EinsumProgram>();
  p->shapes.assign(shapes.begin(), shapes.end());
  p->dtypes.assign(dtypes.begin(), dtypes.end());
  build_program(parsed, options, true, *p);
  return p;
}
}  // namespace

EinsumPlan::EinsumPlan(std::string_view subscripts, std::span<const Shape> shapes, std::span<const DType> dtypes,
                       const EinsumOptions& options) {
  Parsed parsed;
  parse_subscripts(subscripts, parsed);
  p_ = prepare(parsed, shapes, dtypes, options);
}

EinsumPlan::EinsumPlan(EinsumLabels labels, std::optional<std::span<const std::int64_t>> output, std::span<const Shape> shapes,
                       std::span<const DType> dtypes, const EinsumOptions& options) {
  Parsed parsed;
  parse_labels(labels, output, parsed);
  p_ = prepare(parsed, shapes, dtypes, options);
}

EinsumPlan EinsumPlan::for_operands(std::string_view subscripts, std::span<const Tensor> operands, const EinsumOptions& options) {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor& t : operands) {
    if (!(t.defined() && t.device().kind == DeviceKind::trace)) detail::require_cpu_tensor(t, "einsum", "operand");
    shapes.push_back(t.shape());
    dtypes.push_back(t.dtype());
  }
  return EinsumPlan(subscripts, shapes, dtypes, options);
}

Tensor EinsumPlan::execute(Session& s, std::span<const Tensor> operands) const {
  s.check("einsum");
  check_prepared(*p_, operands);
  Tensor result;
  run_program(s, *p_, operands, nullptr, result);
  return result;
}

void EinsumPlan::execute_into(Session& s, std::span<const Tensor> operands, const Tensor& out) const {
  s.check("einsum");
  check_prepared(*p_, operands);
  Tensor unused;
  run_program(s, *p_, operands, &out, unused);
}

void EinsumPlan::execute_slices_into(Session& s, std::span<const Tensor> operands, std::int64_t begin, std::int64_t end,
                                     const Tensor& out, bool accumulate) const {
  s.check("einsum");
  if (!(0 <= begin && begin <= end && end <= p_->num_slices))
    throw ArgumentError("einsum", "slices [" + std::to_string(begin) + ", " + std::to_string(end) + ") of a plan with " +
                                      std::to_string(p_->num_slices) + " slices; need 0 <= begin <= end <= " +
                                      std::to_string(p_->num_slices));
  check_prepared(*p_, operands);
  Tensor unused;
  run_slices(s, *p_, operands, &out, unused, begin, end, accumulate);
}

std::int64_t EinsumPlan::num_slices() const noexcept { return p_->num_slices; }
const Shape& EinsumPlan::output_shape() const noexcept { return p_->out_shape; }
DType EinsumPlan::output_dtype() const noexcept { return p_->dtype; }
const EinsumPathInfo& EinsumPlan::path() const noexcept { return p_->path; }

}  // namespace tenferro
