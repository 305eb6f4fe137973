// The CPU conversion kernel (cpu/convert.hpp): every conversion row of the catalogue
// (convert, cast, copy, reshape) runs it with validated arguments.
#include "cpu/convert.hpp"

#include "core/convert.hpp"
#include "cpu/elementwise.hpp"
#include "cpu/transpose_copy.hpp"

namespace tenferro::cpu {

void convert_kernel(Session& s, const Tensor& x, const Tensor& out) {
  if (x.dtype() == out.dtype()) return detail::copy_same_dtype(s, x, out);
  const int r = out.rank();
  std::int64_t shape[kMaxRank], so[kMaxRank], sx[kMaxRank];
  for (int i = 0; i < r; ++i) shape[i] = out.extent(i);
  detail::broadcast_byte_strides(out, r, so);
  detail::broadcast_byte_strides(x, r, sx);
  const std::int64_t* strides[2] = {so, sx};
  char* ptrs[2] = {static_cast<char*>(const_cast<void*>(out.data())), static_cast<char*>(const_cast<void*>(x.data()))};
  detail::LoopPlan<2> plan;
  plan.build(r, shape, strides, ptrs);
  visit_dtype("convert", x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype("convert", out.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      detail::run_plan(s, plan, 1, [](char** p, const std::int64_t* st, std::int64_t n) {
        detail::line1<To, From>(p, st, n, [](From v) { return detail::cast_value<To>(v); });
      });
    });
  });
}

}  // namespace tenferro::cpu
