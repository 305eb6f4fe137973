// Fuzz target: the op front ends. The bytes pick an op from the catalogue's families
// (elementwise binary and unary, analytic, conversion, reductions, along-axis scans,
// BLAS-1, structural, indexing, dot_general), operands of random shapes and dtypes in
// every layout the ops must accept (compact, transposed, negative strides, broadcast
// views; values from a small pattern or from per-dtype edge values: INT_MIN, -1, ±0,
// ±inf, NaN, the largest finite value), axes and attributes up to the int64 edges, and
// the allocating or the `_into` form (an output of the right or a wrong shape or dtype,
// possibly a strided view). Checks: every refusal is a tenferro::Error (Note [Fuzz
// contract]); a result has the shape the op's rule gives (broadcast shape, reduced
// shape, x's shape for scans, ...) where the harness can say it cheaply. Sizes stay
// small (at most 4 axes of extent <= 4 per operand) so that one input runs in well
// under a millisecond; extents in attributes (broadcast and iota shapes, pads) are
// bounded before anything is allocated.
#include <cmath>
#include <complex>

#include "fuzz_support.hpp"

namespace tenferro::fuzz {
namespace {

constexpr const char* kHarness = "fuzz_ops";

Shape read_shape(Bytes& in, int max_rank = 4) {
  Shape s;
  const int r = static_cast<int>(in.range(0, max_rank));
  for (int i = 0; i < r; ++i) s.push_back(in.range(0, 4));
  return s;
}

// A second shape that usually broadcasts against `a`: a prefix of it (missing trailing
// axes count as 1) with some extents set to 1, or a fresh random shape.
Shape related_shape(Bytes& in, const Shape& a) {
  const std::uint8_t how = in.u8();
  if (how % 4 == 3) return read_shape(in);
  Shape s;
  const int r = how % 4 == 2 ? static_cast<int>(in.range(0, a.size())) : a.size();
  for (int i = 0; i < r; ++i) s.push_back(in.u8() % 3 == 0 ? 1 : a[i]);
  return s;
}

// Per-dtype edge values (all exactly representable in T: no out-of-range conversion).
template <class T> T edge_value(std::uint8_t k) {
  if constexpr (std::is_same_v<T, bool>) {
    return (k & 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    const T v[] = {T(0), T(1), T(-1), T(2), L::min(), L::max(), T(L::min() + 1), T(-7)};
    return v[k % 8];
  } else if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(edge_value<R>(k), edge_value<R>(static_cast<std::uint8_t>(k / 11 + 3)));
  } else {
    using L = std::numeric_limits<T>;
    const T v[] = {T(0), T(-0.0), T(1), T(-1.5), L::infinity(), -L::infinity(), L::quiet_NaN(), L::max(),
                   L::denorm_min(), T(2.5), L::lowest(), T(1e-3)};
    return v[k % 12];
  }
}

// An operand of `shape` and `dtype` in a layout chosen by the bytes.
Tensor make_operand(Bytes& in, const Shape& shape, DType dtype) {
  const std::uint8_t mode = in.u8();
  Tensor t;
  if (mode % 4 == 3) {
    t = Tensor::empty(shape.span(), dtype);
    visit_dtype("fuzz_ops", dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = static_cast<T*>(t.mutable_data());
      for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = edge_value<T>(in.u8());
    });
  } else {
    t = pattern_tensor(shape.span(), dtype, mode);
  }
  const int r = t.rank();
  switch ((mode >> 2) % 5) {
    case 1:  // transposed: a compact tensor of the reversed shape, permuted back
      if (r >= 2) {
        Dims perm;
        for (int i = r - 1; i >= 0; --i) perm.push_back(i);
        Tensor u = to_contiguous(session(), t.permute_view(perm.span()));
        t = u.permute_view(perm.span());
      }
      break;
    case 2:  // every axis reversed (negative strides)
      for (int i = 0; i < r; ++i) t = t.slice_view(i, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
      break;
    case 3: {  // a broadcast view: axes of extent 1 stretched from a smaller tensor
      if (r >= 1 && shape[0] > 1) {
        Dims small = shape;
        small[0] = 1;
        t = pattern_tensor(small.span(), dtype, mode).broadcast_view(shape.span());
      }
      break;
    }
    default: break;
  }
  return t;
}

DType read_dtype(Bytes& in) { return pick_dtype(in); }

// NumPy's broadcast read column-major (ops.hpp): shapes align at axis 0, missing
// trailing axes are 1. Returns false when they do not broadcast.
bool broadcast_shape(const Shape& a, const Shape& b, Shape& out) {
  out = Shape();
  const int r = std::max(a.size(), b.size());
  for (int i = 0; i < r; ++i) {
    const std::int64_t x = i < a.size() ? a[i] : 1, y = i < b.size() ? b[i] : 1;
    if (x != y && x != 1 && y != 1) return false;
    out.push_back(x == 1 ? y : x);
  }
  return true;
}

void expect_shape(const Tensor& r, const Shape& want, const char* op) {
  if (r.shape() != want)
    fail(kHarness, std::string(op) + ": result shape " + r.shape().to_string() + ", expected " + want.to_string());
}

// An output for an `_into` form: usually the right shape and dtype (possibly a strided
// view of a larger tensor), sometimes a wrong one.
Tensor make_out(Bytes& in, const Shape& shape, DType dtype) {
  const std::uint8_t k = in.u8();
  Shape s = shape;
  DType d = dtype;
  if (k % 8 == 6 && s.size() > 0) s[0] += 1;
  if (k % 8 == 7) d = read_dtype(in);
  if ((k >> 3) % 2 == 1 && s.size() > 0) {
    Shape big = s;
    big[0] = 2 * s[0] + 1;
    return Tensor::zeros(big.span(), d).slice_view(0, 2 * s[0], Tensor::kSliceEnd, -2);
  }
  return Tensor::zeros(s.span(), d);
}

Dims read_axes(Bytes& in, int rank) {
  Dims axes;
  const int n = static_cast<int>(in.range(0, std::max(1, rank)));
  for (int i = 0; i < n; ++i) axes.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-rank - 1, rank));
  return axes;
}

std::int64_t norm_axis(std::int64_t a, int rank) { return a < 0 ? a + rank : a; }

// ------------------------------------------------------------------ families

using Binary = Tensor (*)(Session&, const Operand&, const Operand&);
constexpr Binary kBinary[] = {&add, &sub, &mul, &div, &rem, &maximum, &minimum, &tenferro::pow};

void binary(Bytes& in, Session& s) {
  const std::uint8_t which = in.u8();
  const Shape sa = read_shape(in), sb = related_shape(in, sa);
  const Tensor a = make_operand(in, sa, read_dtype(in));
  const Tensor b = make_operand(in, sb, read_dtype(in));
  Shape want;
  const bool ok = broadcast_shape(sa, sb, want);
  const std::uint8_t scalar = in.u8();
  Tensor r;
  if (which % 10 == 9) {
    // compare, sometimes with a CompareOp outside the enum (must be a typed error).
    const auto op = static_cast<CompareOp>(in.u8() % 8);
    r = compare(s, a, b, op);
  } else if (which % 10 == 8) {
    const Tensor pred = make_operand(in, related_shape(in, sa), in.flag() ? DType::b8 : read_dtype(in));
    r = select(s, pred, a, b);
    const Shape ab = want;
    (void)broadcast_shape(ab, pred.shape(), want);
  } else if (scalar % 4 == 0) {
    // A Scalar operand (weak dtype): the tensor's shape comes out.
    const Scalar v = scalar % 8 == 0 ? Scalar(in.wide()) : Scalar(static_cast<double>(in.wide()) / 4);
    expect_shape(kBinary[which % 8](s, a, v), sa, "binary with a scalar");
    return;
  } else if (scalar % 4 == 1 && ok) {
    const Tensor probe = kBinary[which % 8](s, a, b);  // its dtype: the promoted one
    const Tensor out = make_out(in, want, probe.dtype());
    using Into = void (*)(Session&, const Operand&, const Operand&, const Tensor&);
    constexpr Into kInto[] = {&add_into, &sub_into, &mul_into, &div_into, &rem_into, &maximum_into, &minimum_into, &pow_into};
    kInto[which % 8](s, a, b, out);
    return;
  } else {
    r = kBinary[which % 8](s, a, b);
  }
  if (!ok) fail(kHarness, "a binary op accepted shapes " + sa.to_string() + " and " + sb.to_string());
  expect_shape(r, want, "binary");
}

using Unary = Tensor (*)(Session&, const Tensor&);
// The analytic functions straight from the catalogue (a new row joins the harness).
#define TENFERRO_ANALYTIC_ITEM(name) +[](Session& s, const Tensor& x) { return tenferro::name(s, x); },
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
constexpr Unary kUnary[] = {
    &neg, &conj, &tenferro::abs, &sign, &tenferro::real, &tenferro::imag, &angle,
#include "tenferro/op_catalog.def"
};
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
constexpr int kNumUnary = static_cast<int>(std::size(kUnary));

void unary(Bytes& in, Session& s) {
  const int which = static_cast<int>(in.range(0, kNumUnary - 1));
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  expect_shape(kUnary[which](s, x), sh, "unary");
}

void conversion(Bytes& in, Session& s) {
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  switch (in.u8() % 5) {
    case 0: expect_shape(convert(s, x, static_cast<DType>(in.u8() % 8)), sh, "convert"); break;  // 7: outside the enum
    case 1: expect_shape(cast(s, x, static_cast<DType>(in.u8() % 8)), sh, "cast"); break;
    case 2: expect_shape(to_contiguous(s, x), sh, "to_contiguous"); break;
    case 3: {
      Dims shape;
      const int r = static_cast<int>(in.range(0, 5));
      for (int i = 0; i < r; ++i) shape.push_back(in.u8() % 8 == 0 ? in.wide() : in.range(-1, 8));
      const Tensor y = reshape(s, x, shape.span());
      if (y.numel() != x.numel()) fail(kHarness, "reshape changed the element count");
      break;
    }
    default: copy_into(s, x, make_out(in, sh, x.dtype())); break;
  }
}

using Reduce = Tensor (*)(Session&, const Tensor&, std::span<const std::int64_t>, bool);
constexpr Reduce kReduce[] = {&sum, &prod, &max, &min, &mean, &sum_squares, &argmax, &argmin, &logsumexp};

void reduction(Bytes& in, Session& s) {
  const std::uint8_t which = in.u8();
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  const Dims axes = read_axes(in, sh.size());
  const bool keepdims = in.flag();
  const Tensor r = kReduce[which % 9](s, x, axes.span(), keepdims);
  // The reduced shape: reduced axes removed (or kept as 1).
  Shape want;
  for (int i = 0; i < sh.size(); ++i) {
    bool reduced = false;
    for (std::int64_t a : axes) reduced |= norm_axis(a, sh.size()) == i;
    if (!reduced) want.push_back(sh[i]);
    else if (keepdims) want.push_back(1);
  }
  expect_shape(r, want, "reduction");
}

using AlongAxis = Tensor (*)(Session&, const Tensor&, std::int64_t);
constexpr AlongAxis kAlong[] = {&cumsum, &cumprod, &softmax, &log_softmax};

void along_axis(Bytes& in, Session& s) {
  const std::uint8_t which = in.u8();
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  const std::int64_t axis = in.u8() % 16 == 0 ? in.wide() : in.range(-sh.size() - 1, sh.size());
  expect_shape(kAlong[which % 4](s, x, axis), sh, "along_axis");
}

void blas1(Bytes& in, Session& s) {
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  const Tensor y = make_operand(in, in.flag() ? sh : read_shape(in), read_dtype(in));
  switch (in.u8() % 3) {
    case 0: expect_shape(vdot(s, x, y), Shape(), "vdot"); break;
    case 1: expect_shape(norm_squared(s, x), Shape(), "norm_squared"); break;
    default: {
      const Tensor out = make_out(in, y.shape(), y.dtype());
      copy_into(s, y, out);
      axpby(s, Scalar(static_cast<double>(in.range(-4, 4))), x, Scalar(in.range(-2, 2)), out);
    }
  }
}

void structural(Bytes& in, Session& s) {
  const std::uint8_t which = in.u8();
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  const int r = sh.size();
  switch (which % 10) {
    case 0: {
      Dims perm;
      for (int i = 0; i < r; ++i) perm.push_back(i);
      for (int i = r - 1; i > 0; --i) std::swap(perm[i], perm[static_cast<int>(in.range(0, i))]);
      if (in.u8() % 8 == 0) perm.push_back(in.range(-1, r));
      const Tensor y = transpose(s, x, perm.span());
      for (int i = 0; i < r; ++i)
        if (y.extent(i) != sh[perm[i]]) fail(kHarness, "transpose: wrong extent");
      break;
    }
    case 1: {
      Dims shape, dims;
      const int rr = static_cast<int>(in.range(0, 5));
      for (int i = 0; i < rr; ++i) shape.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(0, 4));
      for (int i = 0; i < r; ++i) dims.push_back(in.range(-2, rr));
      // Allocates the result: only when it is small (a valid request for 2^62 elements
      // would be an out-of-memory error, not a bug).
      if (saturating_numel(shape.span()) > 4096) {
        (void)broadcast_in_dim_view(x, shape.span(), dims.span());
        return;
      }
      expect_shape(broadcast_in_dim(s, x, shape.span(), dims.span()), shape, "broadcast_in_dim");
      break;
    }
    case 2: (void)extract_diagonal(s, x, in.range(-r - 1, r), in.range(-r - 1, r)); break;
    case 3: (void)embed_diagonal(s, x, in.range(-r - 1, r), in.range(-r - 1, r)); break;
    case 4: expect_shape(in.flag() ? tril(s, x, in.wide()) : triu(s, x, in.wide()), sh, "tril/triu"); break;
    case 5:
    case 6: {
      std::vector<Tensor> list{x};
      const int n = static_cast<int>(in.range(0, 3));
      for (int i = 0; i < n; ++i) list.push_back(make_operand(in, related_shape(in, sh), in.flag() ? x.dtype() : read_dtype(in)));
      const std::int64_t axis = in.range(-r - 2, r + 1);
      (void)(which % 10 == 5 ? concatenate(s, list, axis) : stack(s, list, axis));
      break;
    }
    case 7: expect_shape(reverse(s, x, read_axes(in, r).span()), sh, "reverse"); break;
    case 8: {
      Dims lo, hi, interior;
      for (int i = 0; i < r; ++i) {
        lo.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-3, 3));
        hi.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-3, 3));
        interior.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-1, 2));
      }
      // The result's extents, to keep allocations small (128 bits: no overflow here).
      Wide n = 1;
      for (int i = 0; i < r; ++i) {
        const Wide e = Wide{lo[i]} + hi[i] + sh[i] + std::max<Wide>(sh[i] - 1, 0) * interior[i];
        n *= e < 0 ? 0 : (e > 4096 ? 4097 : e);
        if (n > 4096) return;
      }
      (void)pad(s, x, Scalar(in.range(-2, 2)), lo.span(), hi.span(), interior.span());
      break;
    }
    default: {
      const Shape shape = read_shape(in);
      (void)iota(s, shape.span(), static_cast<DType>(in.u8() % 8), in.range(-2, 5));
    }
  }
}

// An index tensor of `shape` (i32 or i64, sometimes another dtype) with values in
// [-extent - 1, extent] (so some are out of range) or at the int edges.
Tensor index_tensor(Bytes& in, const Shape& shape, std::int64_t extent) {
  const std::uint8_t k = in.u8();
  const DType d = k % 8 == 7 ? read_dtype(in) : (k % 2 ? DType::i32 : DType::i64);
  Tensor t = Tensor::empty(shape.span(), d);
  visit_dtype("fuzz_ops", d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.mutable_data());
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        p[i] = in.u8() % 16 == 0 ? edge_value<T>(in.u8()) : static_cast<T>(in.range(-extent - 1, extent));
      else
        p[i] = edge_value<T>(in.u8());
    }
  });
  return t;
}

void indexing(Bytes& in, Session& s) {
  const std::uint8_t which = in.u8();
  const Shape sh = read_shape(in);
  const Tensor x = make_operand(in, sh, read_dtype(in));
  const int r = sh.size();
  const std::int64_t axis = in.range(-r - 1, r);
  const std::int64_t ext = r > 0 ? sh[static_cast<int>(norm_axis(axis, r) < r && norm_axis(axis, r) >= 0 ? norm_axis(axis, r) : 0)] : 1;
  switch (which % 7) {
    case 0: {
      Dims starts, limits, strides;
      for (int i = 0; i < r; ++i) {
        starts.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-1, 4));
        limits.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-1, 5));
        strides.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-1, 3));
      }
      (void)slice(s, x, starts, limits, strides);
      break;
    }
    case 1:
    case 2: {
      Dims sizes;
      for (int i = 0; i < r; ++i) sizes.push_back(in.u8() % 16 == 0 ? in.wide() : in.range(-1, 4));
      const Tensor starts = index_tensor(in, Shape{in.flag() ? r : in.range(0, 5)}, 4);
      if (which % 7 == 1) {
        expect_shape(dynamic_slice(s, x, starts, sizes), sizes, "dynamic_slice");
      } else {
        const Tensor update = make_operand(in, sizes.size() == r && saturating_numel(sizes.span()) <= 256 ? sizes : Shape(),
                                           in.flag() ? x.dtype() : read_dtype(in));
        expect_shape(dynamic_update_slice(s, x, update, starts), sh, "dynamic_update_slice");
      }
      break;
    }
    case 3: {
      Shape ishape = related_shape(in, sh);
      if (ishape.size() > 0 && in.flag()) ishape[static_cast<int>(in.range(0, ishape.size() - 1))] = in.range(0, 4);
      (void)take_along_axis(s, x, index_tensor(in, ishape, ext), axis);
      break;
    }
    case 4: (void)index_select(s, x, axis, index_tensor(in, Shape{in.range(0, 5)}, ext)); break;
    case 5: {
      // gather with dimension numbers from the bytes (mostly malformed: the validation).
      GatherDims g;
      const Tensor idx = index_tensor(in, read_shape(in, 3), 4);
      for (int i = 0; i < static_cast<int>(in.range(0, 3)); ++i) g.offset_dims.push_back(in.range(-1, 4));
      for (int i = 0; i < static_cast<int>(in.range(0, 2)); ++i) g.collapsed_slice_dims.push_back(in.range(-1, r));
      for (int i = 0; i < static_cast<int>(in.range(0, 2)); ++i) g.start_index_map.push_back(in.range(-1, r));
      g.index_vector_dim = in.range(-1, idx.rank() + 1);
      Dims sizes;
      for (int i = 0; i < r; ++i) sizes.push_back(in.range(-1, 4));
      const Shape want = gather_shape(sh, idx.shape(), g, sizes);
      if (saturating_numel(want.span()) <= 4096) expect_shape(gather(s, x, idx, g, sizes), want, "gather");
      break;
    }
    default: {
      ScatterDims d;
      const Tensor idx = index_tensor(in, read_shape(in, 2), 4);
      const Tensor upd = make_operand(in, read_shape(in, 3), in.flag() ? x.dtype() : read_dtype(in));
      for (int i = 0; i < static_cast<int>(in.range(0, 3)); ++i) d.update_window_dims.push_back(in.range(-1, 3));
      for (int i = 0; i < static_cast<int>(in.range(0, 2)); ++i) d.inserted_window_dims.push_back(in.range(-1, r));
      for (int i = 0; i < static_cast<int>(in.range(0, 2)); ++i) d.scatter_dims_to_operand_dims.push_back(in.range(-1, r));
      d.index_vector_dim = in.range(-1, idx.rank() + 1);
      const auto combiner = static_cast<ScatterCombiner>(in.u8() % 6);  // 5: outside the enum
      expect_shape(scatter(s, x, idx, upd, d, combiner), sh, "scatter");
    }
  }
}

void contraction(Bytes& in, Session& s) {
  const Shape sa = read_shape(in), sb = related_shape(in, sa);
  const Tensor a = make_operand(in, sa, read_dtype(in));
  const Tensor b = make_operand(in, sb, read_dtype(in));
  DotDims d;
  const int nc = static_cast<int>(in.range(0, 2)), nb = static_cast<int>(in.range(0, 1));
  for (int i = 0; i < nc; ++i) {
    d.lhs_contracting.push_back(in.range(-1, sa.size()));
    d.rhs_contracting.push_back(in.range(-1, sb.size()));
  }
  for (int i = 0; i < nb; ++i) {
    d.lhs_batch.push_back(in.range(-1, sa.size()));
    d.rhs_batch.push_back(in.range(-1, sb.size()));
  }
  d.conj_lhs = in.flag();
  d.conj_rhs = in.flag();
  (void)dot_general(s, a, b, d);
}

}  // namespace
}  // namespace tenferro::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tenferro::fuzz;
  Bytes in(data, size);
  guarded(kHarness, [&] {
    tenferro::Session& s = session();
    switch (in.u8() % 10) {
      case 0: binary(in, s); break;
      case 1: unary(in, s); break;
      case 2: conversion(in, s); break;
      case 3: reduction(in, s); break;
      case 4: along_axis(in, s); break;
      case 5: blas1(in, s); break;
      case 6: structural(in, s); break;
      case 7: indexing(in, s); break;
      case 8: contraction(in, s); break;
      default: unary(in, s); break;  // analytic: the largest family, twice the weight
    }
  });
  return 0;
}
