// The C ABI's core: the error boundary (Note [C ABI error boundary] in capi_common.hpp),
// dtype helpers, backends, held sessions, tensor creation / wrapping / queries /
// read-back, and the metadata-only views.
#include "capi/capi_common.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "core/layout.hpp"
#include "tenferro/dtype.hpp"
#include "tenferro/shape.hpp"

namespace tenferro::capi {
namespace {

// The thread's last error. `fallback` is set when even storing the message failed
// (no memory for the string): the message then is that static text.
struct LastError {
  tf_status status = TF_OK;
  std::string message;
  const char* fallback = nullptr;
};
thread_local LastError last_error;

tf_status record(tf_status status, const char* message) noexcept {
  last_error.status = status;
  try {
    last_error.message.assign(message);
    last_error.fallback = nullptr;
  } catch (...) {
    last_error.message.clear();
    last_error.fallback = "out of memory while recording an error message";
  }
  return status;
}

}  // namespace

tf_status translate_current_exception() noexcept {
  try {
    throw;
  } catch (const UnsupportedAdRule& e) {
    return record(TF_UNSUPPORTED_AD_RULE, e.what());
  } catch (const UnsupportedError& e) {
    return record(TF_UNSUPPORTED, e.what());
  } catch (const ShapeError& e) {
    return record(TF_SHAPE, e.what());
  } catch (const RankError& e) {
    return record(TF_RANK, e.what());
  } catch (const AxisError& e) {
    return record(TF_AXIS, e.what());
  } catch (const DTypeError& e) {
    return record(TF_DTYPE, e.what());
  } catch (const IndexError& e) {
    return record(TF_INDEX, e.what());
  } catch (const ValidationError& e) {  // ArgumentError and any other validation error
    return record(TF_ARGUMENT, e.what());
  } catch (const NumericalError& e) {
    return record(TF_NUMERICAL, e.what());
  } catch (const BackendError& e) {
    return record(TF_BACKEND, e.what());
  } catch (const RuntimeStateError& e) {
    return record(TF_RUNTIME_STATE, e.what());
  } catch (const SessionEntryError& e) {
    return record(TF_SESSION_ENTRY, e.what());
  } catch (const InternalError& e) {
    return record(TF_INTERNAL, e.what());
  } catch (const std::bad_alloc& e) {
    return record(TF_OUT_OF_MEMORY, e.what());
  } catch (const std::exception& e) {  // tenferro::Error itself and foreign exceptions
    return record(TF_UNKNOWN, e.what());
  } catch (...) {
    return record(TF_UNKNOWN, "unknown exception (not derived from std::exception)");
  }
}

void throw_null(const char* op, const char* what) { throw ArgumentError(op, std::string(what) + " is null"); }

DType to_dtype(tf_dtype d, const char* op) {
  const auto v = static_cast<std::int32_t>(d);
  if (v < 0 || v >= kNumDTypes)
    throw DTypeError(op, "dtype " + std::to_string(v) + " is outside the enum (TF_BOOL .. TF_COMPLEX128, 0 .. " +
                             std::to_string(kNumDTypes - 1) + ")");
  return static_cast<DType>(v);
}

std::vector<Tensor> operand_list(const tf_tensor* const* operands, std::size_t n, const char* op) {
  if (n > 0) need(operands, op, "operands");
  std::vector<Tensor> list;
  list.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (operands[i] == nullptr) throw ArgumentError(op, "operand " + std::to_string(i) + " is null");
    list.push_back(operands[i]->tensor);
  }
  return list;
}

void check_outputs(std::initializer_list<tf_tensor**> outs, std::initializer_list<const char*> names, const char* op) {
  auto name = names.begin();
  for (auto o = outs.begin(); o != outs.end(); ++o, ++name) {
    need(*o, op, *name);
    for (auto p = outs.begin(); p != o; ++p)
      if (*p == *o) throw ArgumentError(op, std::string("out-pointers ") + names.begin()[p - outs.begin()] + " and " + *name + " are the same");
  }
}

void publish_all(std::initializer_list<tf_tensor**> outs, std::initializer_list<Tensor*> results) {
  std::unique_ptr<tf_tensor> handles[4];  // the most results of any call here is 3 (svd)
  if (results.size() > 4 || outs.size() != results.size()) throw InternalError("publish_all", "bad result count");
  std::size_t k = 0;
  for (Tensor* r : results) handles[k++] = std::make_unique<tf_tensor>(tf_tensor{std::move(*r)});
  k = 0;
  for (tf_tensor** o : outs) *o = handles[k++].release();
}

void write_dims(std::span<const std::int64_t> values, std::int64_t* dst, std::size_t capacity, const char* op,
                const char* what) {
  if (values.empty()) return;
  need(dst, op, what);
  if (capacity < values.size())
    throw ArgumentError(op, "capacity " + std::to_string(capacity) + " is below the rank " + std::to_string(values.size()));
  std::memcpy(dst, values.data(), values.size() * sizeof(std::int64_t));
}

namespace {

// Copies every element of (shape, src strides) to (shape, dst strides), E bytes each.
// Axis 0 is the inner loop; the other axes advance an odometer of byte offsets (kept as
// integers, so no pointer is formed outside the element range).
template <std::size_t E>
void copy_elements_sized(const std::byte* src, const std::int64_t* ss, std::byte* dst, const std::int64_t* ds,
                         const std::int64_t* shape, int rank) {
  if (rank == 0) {
    std::memcpy(dst, src, E);
    return;
  }
  constexpr auto e = static_cast<std::int64_t>(E);
  // An extent-1 axis never steps, and its stride may be anything (a huge one overflowed
  // stride * E: found by fuzz_external); it counts as 0. The other strides' byte steps
  // fit: the caller checked the offset range of both layouts.
  std::int64_t sst[kMaxRank], dst_st[kMaxRank];
  for (int k = 0; k < rank; ++k) {
    sst[k] = shape[k] == 1 ? 0 : ss[k];
    dst_st[k] = shape[k] == 1 ? 0 : ds[k];
  }
  ss = sst;
  ds = dst_st;
  std::int64_t idx[kMaxRank] = {};
  std::int64_t so = 0, dof = 0;  // byte offsets of element (0, idx[1], idx[2], ...)
  const std::int64_t n0 = shape[0], s0 = ss[0] * e, d0 = ds[0] * e;
  while (true) {
    for (std::int64_t i = 0; i < n0; ++i) std::memcpy(dst + dof + i * d0, src + so + i * s0, E);
    int k = 1;
    for (; k < rank; ++k) {
      if (++idx[k] < shape[k]) {
        so += ss[k] * e;
        dof += ds[k] * e;
        break;
      }
      so -= ss[k] * e * (shape[k] - 1);
      dof -= ds[k] * e * (shape[k] - 1);
      idx[k] = 0;
    }
    if (k == rank) return;
  }
}

// Copies the elements of `src` (any strided host tensor) to `dst` laid out with
// `dst_strides` (elements). Compact-to-compact is one memcpy.
void copy_elements(const Tensor& src, std::byte* dst, std::span<const std::int64_t> dst_strides) {
  const std::int64_t n = src.numel();
  if (n == 0) return;
  const std::size_t esize = dtype_size(src.dtype());
  const Dims shape = src.shape();
  const Dims strides = src.strides();
  const Dims compact = detail::compact_strides(shape);
  if (src.is_contiguous() && std::equal(dst_strides.begin(), dst_strides.end(), compact.begin())) {
    std::memcpy(dst, src.data(), static_cast<std::size_t>(n) * esize);
    return;
  }
  const auto* s = static_cast<const std::byte*>(src.data());
  const int r = src.rank();
  switch (esize) {
    case 1: return copy_elements_sized<1>(s, strides.data(), dst, dst_strides.data(), shape.data(), r);
    case 4: return copy_elements_sized<4>(s, strides.data(), dst, dst_strides.data(), shape.data(), r);
    case 8: return copy_elements_sized<8>(s, strides.data(), dst, dst_strides.data(), shape.data(), r);
    default: return copy_elements_sized<16>(s, strides.data(), dst, dst_strides.data(), shape.data(), r);
  }
}

// Host tensors only: the C ABI reads and writes memory directly.
void require_host(const Tensor& t, const char* op) {
  if (t.device().kind != DeviceKind::cpu)
    throw UnsupportedError(op, std::string("the tensor is on device ") + std::string(device_name(t.device().kind)) +
                                   "; the C ABI reads host memory only");
}

}  // namespace
}  // namespace tenferro::capi

using namespace tenferro;
using namespace tenferro::capi;

// ------------------------------------------------------------------ errors and dtypes

const char* tf_last_error_message(void) {
  return last_error.fallback != nullptr ? last_error.fallback : last_error.message.c_str();
}

tf_status tf_last_error_status(void) { return last_error.status; }

const char* tf_status_name(tf_status status) {
  switch (status) {
    case TF_OK: return "TF_OK";
    case TF_SHAPE: return "TF_SHAPE";
    case TF_RANK: return "TF_RANK";
    case TF_AXIS: return "TF_AXIS";
    case TF_DTYPE: return "TF_DTYPE";
    case TF_ARGUMENT: return "TF_ARGUMENT";
    case TF_INDEX: return "TF_INDEX";
    case TF_UNSUPPORTED: return "TF_UNSUPPORTED";
    case TF_UNSUPPORTED_AD_RULE: return "TF_UNSUPPORTED_AD_RULE";
    case TF_NUMERICAL: return "TF_NUMERICAL";
    case TF_BACKEND: return "TF_BACKEND";
    case TF_RUNTIME_STATE: return "TF_RUNTIME_STATE";
    case TF_SESSION_ENTRY: return "TF_SESSION_ENTRY";
    case TF_INTERNAL: return "TF_INTERNAL";
    case TF_OUT_OF_MEMORY: return "TF_OUT_OF_MEMORY";
    case TF_UNKNOWN: return "TF_UNKNOWN";
  }
  return "TF_?";
}

// The C enum mirrors the DType table one to one.
static_assert(static_cast<int>(DType::b8) == TF_BOOL && static_cast<int>(DType::i32) == TF_INT32 &&
              static_cast<int>(DType::i64) == TF_INT64 && static_cast<int>(DType::f32) == TF_FLOAT32 &&
              static_cast<int>(DType::f64) == TF_FLOAT64 && static_cast<int>(DType::c64) == TF_COMPLEX64 &&
              static_cast<int>(DType::c128) == TF_COMPLEX128 && kNumDTypes == TF_COMPLEX128 + 1,
              "tf_dtype must mirror tenferro::DType");

const char* tf_dtype_name(tf_dtype dtype) {
  const auto v = static_cast<std::int32_t>(dtype);
  if (v < 0 || v >= kNumDTypes) return "?";
  return dtype_name(static_cast<DType>(v)).data();  // the names are string literals
}

size_t tf_dtype_size(tf_dtype dtype) {
  const auto v = static_cast<std::int32_t>(dtype);
  if (v < 0 || v >= kNumDTypes) return 0;
  return dtype_size(static_cast<DType>(v));
}

// ------------------------------------------------------------------ backends

tf_status tf_backend_create(int32_t num_threads, tf_backend** out) {
  return guard([&] {
    need(out, "tf_backend_create", "out");
    CpuBackendOptions options;
    options.num_threads = num_threads;  // CpuBackend rejects a negative count
    *out = new tf_backend(std::move(options));
  });
}

tf_status tf_backend_num_threads(const tf_backend* backend, int32_t* out) {
  return guard([&] {
    const tf_backend* b = need(backend, "tf_backend_num_threads", "backend");
    *need(out, "tf_backend_num_threads", "out") = b->backend.num_threads();
  });
}

void tf_backend_free(tf_backend* backend) { delete backend; }

// ------------------------------------------------------------------ sessions

tf_status tf_session_open(tf_backend* backend, tf_session** out) {
  return guard([&] {
    tf_backend* b = need(backend, "tf_session_open", "backend");
    need(out, "tf_session_open", "out");
    // The handle is allocated before the session opens (new-expression order), so an
    // allocation failure never leaves a session open.
    *out = new tf_session{b->backend.open_session()};
  });
}

tf_status tf_session_try_open(tf_backend* backend, tf_session** out) {
  return guard([&] {
    tf_backend* b = need(backend, "tf_session_try_open", "backend");
    need(out, "tf_session_try_open", "out");
    *out = new tf_session{b->backend.try_open_session()};
  });
}

tf_status tf_session_close(tf_session* session) {
  return guard([&] { need(session, "tf_session_close", "session")->session.close(); });
}

void tf_session_free(tf_session* session) { delete session; }  // ~HeldSession never throws

// ------------------------------------------------------------------ tensors

tf_status tf_tensor_create(tf_dtype dtype, size_t rank, const int64_t* shape, const int64_t* strides, const void* data,
                           tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_create";
    const DType dt = to_dtype(dtype, op);
    const auto ext = int_array(shape, rank, op, "shape");
    const auto str = strides != nullptr ? int_array(strides, rank, op, "strides") : std::span<const std::int64_t>{};
    need(out, op, "out");
    // The source as a read-only external tensor: this validates the layout (rank,
    // extents, overflow of the byte span, alignment, null data) exactly as
    // tf_tensor_wrap does; nothing is released (no owner).
    const Tensor src = Tensor::from_external(const_cast<void*>(data), ext, str, dt, ExternalOwner{nullptr, nullptr, true});
    Tensor dst = Tensor::empty(ext, dt);
    copy_elements(src, static_cast<std::byte*>(dst.mutable_data(op)), dst.strides());
    publish(out, std::move(dst));
  });
}

tf_status tf_tensor_zeros(tf_dtype dtype, size_t rank, const int64_t* shape, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_zeros";
    const DType dt = to_dtype(dtype, op);
    const auto ext = int_array(shape, rank, op, "shape");
    need(out, op, "out");
    publish(out, Tensor::zeros(ext, dt));
  });
}

tf_status tf_tensor_wrap(void* data, tf_dtype dtype, size_t rank, const int64_t* shape, const int64_t* strides,
                         void (*release)(void* release_ctx), void* release_ctx, int read_only, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_wrap";
    const DType dt = to_dtype(dtype, op);
    const auto ext = int_array(shape, rank, op, "shape");
    const auto str = strides != nullptr ? int_array(strides, rank, op, "strides") : std::span<const std::int64_t>{};
    need(out, op, "out");
    // The handle is allocated before from_external runs (new-expression order): once
    // the memory is wrapped nothing can fail, so `release` runs only for a successful
    // wrap, when the last tensor over the memory goes.
    *out = new tf_tensor{Tensor::from_external(data, ext, str, dt, ExternalOwner{release_ctx, release, read_only != 0})};
  });
}

void tf_tensor_free(tf_tensor* tensor) { delete tensor; }

tf_status tf_tensor_rank(const tf_tensor* tensor, size_t* out) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_rank", "tensor");
    *need(out, "tf_tensor_rank", "out") = static_cast<size_t>(t.rank());
  });
}

tf_status tf_tensor_shape(const tf_tensor* tensor, int64_t* shape, size_t capacity) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_shape", "tensor");
    write_dims(t.shape(), shape, capacity, "tf_tensor_shape", "shape");
  });
}

tf_status tf_tensor_strides(const tf_tensor* tensor, int64_t* strides, size_t capacity) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_strides", "tensor");
    write_dims(t.strides(), strides, capacity, "tf_tensor_strides", "strides");
  });
}

tf_status tf_tensor_numel(const tf_tensor* tensor, int64_t* out) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_numel", "tensor");
    *need(out, "tf_tensor_numel", "out") = t.numel();
  });
}

tf_status tf_tensor_dtype(const tf_tensor* tensor, tf_dtype* out) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_dtype", "tensor");
    *need(out, "tf_tensor_dtype", "out") = from_dtype(t.dtype());
  });
}

tf_status tf_tensor_data(const tf_tensor* tensor, void** out) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_data", "tensor");
    need(out, "tf_tensor_data", "out");
    require_host(t, "tf_tensor_data");
    *out = const_cast<void*>(t.data());
  });
}

tf_status tf_tensor_is_read_only(const tf_tensor* tensor, int* out) {
  return guard([&] {
    const Tensor& t = tensor_of(tensor, "tf_tensor_is_read_only", "tensor");
    *need(out, "tf_tensor_is_read_only", "out") = t.read_only() ? 1 : 0;
  });
}

tf_status tf_tensor_copy_to(const tf_tensor* tensor, void* dst, size_t dst_bytes, const int64_t* dst_strides) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_copy_to";
    const Tensor& t = tensor_of(tensor, op, "tensor");
    require_host(t, op);
    const Dims shape = t.shape();
    const Dims strides = dst_strides != nullptr ? Dims(int_array(dst_strides, shape.size(), op, "dst_strides"))
                                                : detail::compact_strides(shape);
    const std::int64_t n = t.numel();
    if (n == 0) return;
    need(dst, op, "dst");
    const std::size_t esize = dtype_size(t.dtype());
    for (int k = 0; k < shape.size(); ++k) {
      if (strides[k] < 0)
        throw ArgumentError(op, "dst stride " + std::to_string(strides[k]) + " on axis " + std::to_string(k) +
                                    " is negative (dst points at element 0; strides must be >= 0)");
    }
    // The range first: offsets beyond int64 are an IndexError, not an overlap.
    const std::int64_t last = detail::offset_range(shape, strides, op).second;  // largest offset, >= 0
    if (!detail::is_non_overlapping(shape, strides))
      throw ArgumentError(op, "dst strides " + dims_string(strides) + " make elements of shape " + dims_string(shape) +
                                  " overlap");
    const std::int64_t need_bytes = checked_mul(checked_add(last, 1, op), static_cast<std::int64_t>(esize), op);
    if (static_cast<std::uint64_t>(need_bytes) > dst_bytes)
      throw ArgumentError(op, "dst holds " + std::to_string(dst_bytes) + " bytes but the layout needs " +
                                  std::to_string(need_bytes));
    copy_elements(t, static_cast<std::byte*>(dst), strides);
  });
}

// ------------------------------------------------------------------ views

tf_status tf_tensor_permute_view(const tf_tensor* tensor, const int64_t* perm, size_t rank, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_permute_view";
    const Tensor& t = tensor_of(tensor, op, "tensor");
    const auto p = int_array(perm, rank, op, "perm");
    need(out, op, "out");
    publish(out, t.permute_view(p));
  });
}

tf_status tf_tensor_reshape_view(const tf_tensor* tensor, const int64_t* shape, size_t rank, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_reshape_view";
    const Tensor& t = tensor_of(tensor, op, "tensor");
    const auto s = int_array(shape, rank, op, "shape");
    need(out, op, "out");
    publish(out, t.reshape_view(s));
  });
}

tf_status tf_tensor_slice_view(const tf_tensor* tensor, int64_t axis, int64_t start, int64_t stop, int64_t step,
                               tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_slice_view";
    const Tensor& t = tensor_of(tensor, op, "tensor");
    need(out, op, "out");
    if (axis < -t.rank() || axis >= t.rank())  // also keeps the narrowing to int below exact
      throw AxisError(op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(t.rank()));
    publish(out, t.slice_view(static_cast<int>(axis), start, stop, step));
  });
}

tf_status tf_tensor_broadcast_view(const tf_tensor* tensor, const int64_t* shape, size_t rank, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_tensor_broadcast_view";
    const Tensor& t = tensor_of(tensor, op, "tensor");
    const auto s = int_array(shape, rank, op, "shape");
    need(out, op, "out");
    publish(out, t.broadcast_view(s));
  });
}
