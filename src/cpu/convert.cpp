// convert (checked), cast (lossy), copy_into, to_contiguous, reshape.
#include "core/convert.hpp"

#include "cpu/elementwise.hpp"
#include "cpu/transpose_copy.hpp"

namespace tenferro {
namespace detail {
namespace {

// Copies x into out converting each element From → To. With `checked`, first scans for
// an element that does not convert exactly and throws before writing.
void convert_impl(Session& s, std::string_view op, const Tensor& x, const Tensor* out, DType to, bool checked, Tensor& result,
                  bool broadcast_ok = false) {
  require_valid_dtype(to, op);  // Note [Enums at the API boundary]
  EwArgs<1> args;
  args.op = op;
  const Operand in(x);
  const Operand* ins[1] = {&in};
  promote_operands(s, args, ins);
  if (out && broadcast_ok) args.shape = out->shape();
  args.compute = args.in_dtype[0] = x.dtype();
  if (out && broadcast_ok) {  // copy_into: the source broadcasts to the destination
    require_output(*out, op, to, out->shape());
    if (broadcast_shapes(out->shape(), x.shape(), op) != out->shape())
      throw ShapeError(op, "source shape " + x.shape().to_string() + " does not broadcast to destination " + out->shape().to_string());
    check_overlap(*out, x, op, true);
  }
  const Tensor& o = broadcast_ok && out ? *out : prepare_output(args, to, out, result);
  const LoopPlan<2> plan = make_plan(args, o);
  visit_dtype(op, x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(op, to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      if (checked && !std::is_same_v<To, From>) {
        bool bad = false;
        plan.run(0, plan.numel, [&](char** p, const std::int64_t* st, std::int64_t n) {
          const char* q = p[1];
          for (std::int64_t i = 0; i < n && !bad; ++i, q += st[1]) bad = !exact_value<To>(*reinterpret_cast<const From*>(q));
        });
        if (bad) {
          // Slow path for the message: the first offending element in index order.
          Dims idx(x.rank(), 0);
          for (std::int64_t k = 0; k < x.numel(); ++k) {
            const From v = x.item<From>(idx.span());
            if (!exact_value<To>(v))
              throw ArgumentError(op, "element " + idx.to_string() + " = " + x.at(idx.span()).to_string() + " does not convert exactly to " +
                                          std::string(dtype_name(to)) + " (use cast for a lossy conversion)");
            for (int i = 0; i < x.rank() && ++idx[i] == x.extent(i); ++i) idx[i] = 0;
          }
        }
      }
      // Same-dtype copies that change memory order take the blocked kernel
      // (Note [Blocked transpose copy]).
      if constexpr (std::is_same_v<To, From>)
        if (try_blocked_transpose_copy(s, plan, sizeof(To))) return;
      run_plan(s, plan, 1, [](char** p, const std::int64_t* st, std::int64_t n) {
        line1<To, From>(p, st, n, [](From v) { return cast_value<To>(v); });
      });
    });
  });
}

}  // namespace
}  // namespace detail

Tensor convert(Session& s, const Tensor& x, DType dtype) {
  Tensor r;
  detail::convert_impl(s, "convert", x, nullptr, dtype, true, r);
  return r;
}
void convert_into(Session& s, const Tensor& x, const Tensor& out) {
  Tensor r;
  if (!out.defined()) throw ArgumentError("convert", "out tensor is undefined");
  detail::convert_impl(s, "convert", x, &out, out.dtype(), true, r);
}
Tensor cast(Session& s, const Tensor& x, DType dtype) {
  Tensor r;
  detail::convert_impl(s, "cast", x, nullptr, dtype, false, r);
  return r;
}
void cast_into(Session& s, const Tensor& x, const Tensor& out) {
  Tensor r;
  if (!out.defined()) throw ArgumentError("cast", "out tensor is undefined");
  detail::convert_impl(s, "cast", x, &out, out.dtype(), false, r);
}

void copy_into(Session& s, const Tensor& src, const Tensor& dst) {
  Tensor r;
  s.check("copy_into");
  detail::require_cpu_tensor(src, "copy_into", "src");
  detail::require_cpu_tensor(dst, "copy_into", "dst");
  if (src.dtype() != dst.dtype())
    throw DTypeError("copy_into", "src dtype " + std::string(dtype_name(src.dtype())) + " differs from dst dtype " +
                                      std::string(dtype_name(dst.dtype())) + " (use convert_into or cast_into)");
  detail::convert_impl(s, "copy_into", src, &dst, dst.dtype(), false, r, true);
}

Tensor to_contiguous(Session& s, const Tensor& x) {
  s.check("to_contiguous");
  detail::require_cpu_tensor(x, "to_contiguous", "input");
  if (x.is_contiguous() && !x.read_only()) return x;
  Tensor r;
  detail::convert_impl(s, "to_contiguous", x, nullptr, x.dtype(), false, r);
  return r;
}

void to_contiguous_into(Session& s, const Tensor& x, const Tensor& out) {
  constexpr std::string_view op = "to_contiguous";
  s.check(op);
  detail::require_cpu_tensor(x, op, "input");
  detail::require_output(out, op, x.dtype(), x.shape());
  detail::check_overlap(out, x, op, /*same_ok=*/false);
  Tensor r;
  detail::convert_impl(s, op, x, &out, x.dtype(), false, r);
}

Tensor reshape(Session& s, const Tensor& x, std::span<const std::int64_t> shape) {
  s.check("reshape");
  detail::require_cpu_tensor(x, "reshape", "input");
  const Dims target = detail::infer_reshape(shape, x.numel(), "reshape");
  Dims strides;
  if (detail::reshape_strides(x.shape(), x.strides(), target, strides) && !x.read_only()) return x.reshape_view(target);
  Tensor r;
  detail::convert_impl(s, "reshape", x, nullptr, x.dtype(), false, r);
  return r.reshape_view(target);
}

void reshape_into(Session& s, const Tensor& x, std::span<const std::int64_t> shape, const Tensor& out) {
  constexpr std::string_view op = "reshape";
  s.check(op);
  detail::require_cpu_tensor(x, op, "input");
  const Dims target = detail::infer_reshape(shape, x.numel(), op);
  detail::require_output(out, op, x.dtype(), target);
  detail::check_overlap(out, x, op, /*same_ok=*/false);
  // One strided copy when either side can be viewed in the other's shape (metadata
  // only); otherwise the allocating form's compact copy of x (pooled), then a copy.
  Dims strides;
  Tensor r;
  if (detail::reshape_strides(x.shape(), x.strides(), target, strides)) {
    detail::convert_impl(s, op, x.reshape_view(target), &out, x.dtype(), false, r);
  } else if (const Shape xs = x.shape(); detail::reshape_strides(out.shape(), out.strides(), xs, strides)) {
    const Tensor dst = out.reshape_view(xs);
    detail::convert_impl(s, op, x, &dst, x.dtype(), false, r);
  } else {
    detail::convert_impl(s, op, reshape(s, x, target), &out, x.dtype(), false, r);
  }
}

}  // namespace tenferro
