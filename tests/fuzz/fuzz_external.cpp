// Fuzz target: importing external memory. One descriptor from the bytes (dtype, rank,
// extents, strides or none, start within a fixed buffer, read-only flag, null data) goes
// through the three ways memory enters the library:
// - Tensor::from_external (C++), then as_strided_view on the result and a write through
//   copy_into when the tensor is writable and its elements do not overlap;
// - the C ABI: tf_tensor_wrap, tf_tensor_create (a copy) and tf_tensor_copy_to into a
//   heap block of a size and layout from the bytes;
// - the DLPack import (python/src/dlpack_import.hpp, what tenferro.from_dlpack runs),
//   with DLPack's reversed axes, byte_offset, dtype codes and device types.
// from_external takes no buffer size (its caller vouches for the memory), so the harness
// computes, with 128-bit arithmetic, the bytes each descriptor reaches. Checks: a
// layout whose byte span overflows int64 is refused; an accepted one records exactly
// those bytes as its block; the release callback runs exactly once, and never after a
// refusal; the three paths accept the same descriptors; data is read and written only
// inside the buffer (the buffer is a heap block of its exact size, so ASan sees any byte
// beyond it), reads give the buffer's bytes and writes touch no byte outside the
// elements; tf_tensor_copy_to never writes past `dst_bytes`. Every refusal is a
// tenferro::Error or, through the C ABI, a typed status (Note [Fuzz contract]).
#include <memory>

#include "dlpack_import.hpp"
#include "fuzz_support.hpp"
#include "tenferro/c/tenferro.h"

namespace tenferro::fuzz {
namespace {

constexpr const char* kHarness = "fuzz_external";
constexpr std::size_t kBuf = 512;

struct Descriptor {
  int dtype = 0;  // may lie outside the enum
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // empty: compact
  bool has_strides = false;
  std::size_t start = 0;  // byte offset of element 0 within the buffer
  bool null_data = false;
  bool read_only = false;
};

// What the descriptor reaches, computed independently of the library.
struct Reach {
  bool valid_dtype = false;
  bool has_elements = false;
  bool overflows = false;  // the byte span does not fit in int64
  bool inside = false;     // every element's bytes lie inside the buffer
  Wide lo = 0, hi = 0; // byte offsets from element 0 of the first and past-the-last byte
};

Descriptor read_descriptor(Bytes& in) {
  Descriptor d;
  d.dtype = static_cast<int>(in.u8() % 9);  // 7, 8: outside the enum
  const std::uint8_t r = in.u8();
  const int rank = r % 32 == 31 ? 65 : r % 6;  // now and then above kMaxRank
  const bool wide = in.u8() % 4 == 0;
  for (int i = 0; i < rank; ++i) d.shape.push_back(wide && in.flag() ? in.wide() : in.range(0, 6));
  d.has_strides = in.u8() % 4 != 0;
  if (d.has_strides) {
    const int n = in.u8() % 16 == 0 ? rank + 1 : rank;  // sometimes the wrong length
    for (int i = 0; i < n; ++i) d.strides.push_back(wide && in.flag() ? in.wide() : in.range(-6, 12));
  }
  d.start = static_cast<std::size_t>(in.range(0, kBuf));
  d.null_data = in.u8() % 16 == 0;
  d.read_only = in.flag();
  return d;
}

Reach reach_of(const Descriptor& d) {
  Reach r;
  r.valid_dtype = d.dtype >= 0 && d.dtype < kNumDTypes;
  if (!r.valid_dtype || d.shape.size() > static_cast<std::size_t>(kMaxRank)) return r;
  if (d.has_strides && d.strides.size() != d.shape.size()) return r;
  const Wide es = static_cast<Wide>(dtype_size(static_cast<DType>(d.dtype)));
  Wide n = 1, compact = 1;
  for (std::size_t i = 0; i < d.shape.size(); ++i) {
    const std::int64_t e = d.shape[i];
    if (e < 0) return r;
    const Wide s = d.has_strides ? d.strides[i] : compact;
    n = n * e > (Wide{1} << 64) ? (Wide{1} << 64) : n * e;
    if (e > 0) {
      // Clamped far above any span that fits in int64, so that sums over 64 axes cannot
      // overflow 128 bits either.
      const Wide kClamp = Wide{1} << 100;
      const Wide step = std::max(-kClamp, std::min(kClamp, s * (e - 1)));
      (step < 0 ? r.lo : r.hi) += step;
    }
    compact = compact * (e > 0 ? e : 1);
    if (compact > (Wide{1} << 64)) compact = Wide{1} << 64;  // saturated: the span overflows anyway
  }
  r.has_elements = n > 0;
  if (!r.has_elements) return r;
  r.lo *= es;
  r.hi = r.hi * es + es;
  const Wide kMax = std::numeric_limits<std::int64_t>::max();
  // The element count, the byte span and the offset of the lowest byte must fit in
  // int64 (a broadcast of 2^62 elements over one f64 is fine: numel·size may exceed it).
  r.overflows = n > kMax || r.hi - r.lo > kMax || -r.lo > kMax;
  r.inside = !r.overflows && !d.null_data && static_cast<Wide>(d.start) + r.lo >= 0 &&
             static_cast<Wide>(d.start) + r.hi <= static_cast<Wide>(kBuf);
  return r;
}

// The buffer: every byte 0 or 1, so any element of any dtype is a valid value (bool
// loads of other bytes are undefined behaviour, which UBSan would report against us).
struct Buffer {
  std::unique_ptr<std::byte[]> bytes{new std::byte[kBuf]};
  Buffer() { reset(); }
  void reset() {
    for (std::size_t i = 0; i < kBuf; ++i) bytes[i] = static_cast<std::byte>((i * 7 >> 2) & 1);
  }
  std::byte* at(std::size_t i) { return bytes.get() + i; }
};

void count_release(void* ctx) { ++*static_cast<int*>(ctx); }

// Byte offsets (from element 0) of every element, column-major order.
std::vector<Wide> element_offsets(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides, std::int64_t es) {
  std::vector<Wide> out;
  const std::int64_t n = saturating_numel(shape);
  const int r = static_cast<int>(shape.size());
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    Wide off = 0;
    for (int i = 0; i < r; ++i) off += static_cast<Wide>(idx[i]) * strides[i] * es;
    out.push_back(off);
    for (int i = 0; i < r && ++idx[i] == shape[i]; ++i) idx[i] = 0;
  }
  return out;
}

// Reads every element of `t` through to_contiguous and compares it with the bytes at
// element 0 (`origin`) + its offset.
void check_reads(const Tensor& t, const std::byte* origin) {
  // A large layout over a small buffer (zero or overlapping strides) is checked by its
  // construction only: listing 2^27 offsets ran the harness itself out of memory.
  if (t.numel() > 4096) return;
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype()));
  const Dims shape = t.shape(), strides = t.strides();
  const std::vector<Wide> offs = element_offsets(shape.span(), strides.span(), es);
  const Tensor c = to_contiguous(session(), t);
  const auto* p = static_cast<const std::byte*>(c.data());
  for (std::size_t k = 0; k < offs.size(); ++k)
    if (std::memcmp(p + k * static_cast<std::size_t>(es), origin + static_cast<std::ptrdiff_t>(offs[k]), static_cast<std::size_t>(es)) != 0)
      fail(kHarness, "element " + std::to_string(k) + " read wrong bytes");
}

// Views of an external tensor must stay inside its block.
void check_strided_views(Bytes& in, const Tensor& t, const Reach& r) {
  for (int k = 0; k < 3 && !in.empty(); ++k) {
    guarded(kHarness, [&] {
      std::vector<std::int64_t> shape, strides;
      const int rank = static_cast<int>(in.range(0, 4));
      for (int i = 0; i < rank; ++i) {
        shape.push_back(in.range(0, 5));
        strides.push_back(in.u8() % 8 == 0 ? in.wide() : in.range(-8, 8));
      }
      const std::int64_t offset = in.u8() % 8 == 0 ? in.wide() : in.range(-16, 64);
      const Tensor v = t.as_strided_view(shape, strides, offset);
      const auto es = static_cast<Wide>(dtype_size(v.dtype()));
      const detail::StorageHeader* b = v.block();
      const std::byte* first = static_cast<const std::byte*>(v.data());
      for (Wide off : element_offsets(shape, strides, static_cast<std::int64_t>(es))) {
        const Wide at = (first - b->base) + off;
        if (at < 0 || at + es > static_cast<Wide>(b->bytes))
          fail(kHarness, "as_strided_view of an external tensor reaches outside its block");
      }
      if (r.inside) check_reads(v, first);
    });
  }
}

void cpp_path(Bytes& in, Buffer& buf, const Descriptor& d, const Reach& r, bool& accepted) {
  std::byte* data = d.null_data ? nullptr : buf.at(d.start);
  int released = 0;
  {
    Tensor t;
    try {
      t = Tensor::from_external(data, d.shape, d.strides, static_cast<DType>(d.dtype),
                                ExternalOwner{&released, &count_release, d.read_only});
    } catch (const Error&) {
      if (released != 0) fail(kHarness, "release ran after a refused from_external");
      return;
    }
    accepted = true;
    if (!r.valid_dtype) fail(kHarness, "from_external accepted a dtype outside the enum");
    if (r.overflows) fail(kHarness, "from_external accepted a layout whose byte span overflows int64");
    if (r.has_elements) {
      const detail::StorageHeader* b = t.block();
      if (b->base != data + static_cast<std::ptrdiff_t>(r.lo) || static_cast<Wide>(b->bytes) != r.hi - r.lo)
        fail(kHarness, "from_external of shape " + dims_string(d.shape) + ", strides " + dims_string(d.strides) +
                           " recorded the block [" + std::to_string(b->base - data) + ", +" + std::to_string(b->bytes) +
                           ") from element 0, the layout reaches [" + std::to_string(static_cast<long long>(r.lo)) +
                           ", " + std::to_string(static_cast<long long>(r.hi)) + ")");
    }
    if (r.inside) {
      check_reads(t, data);
      // A write through copy_into touches the elements' bytes and nothing else.
      guarded(kHarness, [&] {
        if (t.read_only()) return;
        const Tensor src = pattern_tensor(t.shape().span(), t.dtype(), 1);
        std::vector<unsigned char> before(kBuf);
        std::memcpy(before.data(), buf.at(0), kBuf);
        copy_into(session(), src, t);
        std::vector<bool> mine(kBuf, false);
        const auto es = static_cast<std::int64_t>(dtype_size(t.dtype()));
        for (Wide off : element_offsets(t.shape().span(), t.strides().span(), es))
          for (std::int64_t k = 0; k < es; ++k) mine[static_cast<std::size_t>(d.start + off + k)] = true;
        for (std::size_t i = 0; i < kBuf; ++i)
          if (!mine[i] && static_cast<unsigned char>(*buf.at(i)) != before[i])
            fail(kHarness, "copy_into an external tensor wrote byte " + std::to_string(i) + " outside its elements");
        check_reads(t, data);
      });
      buf.reset();
    }
    if (r.has_elements && !r.overflows) check_strided_views(in, t, r);
    if (released != 0) fail(kHarness, "release ran while a tensor was alive");
  }
  if (released != 1) fail(kHarness, "release ran " + std::to_string(released) + " times");
}

bool typed_status(tf_status s) {
  return s != TF_UNKNOWN && s != TF_INTERNAL && s != TF_OUT_OF_MEMORY;
}

void capi_path(Bytes& in, Buffer& buf, const Descriptor& d, const Reach& r, bool cpp_accepted) {
  void* data = d.null_data ? nullptr : buf.at(d.start);
  const std::size_t rank = d.shape.size();
  // tf_tensor_wrap reads `rank` strides: a wrong-length list cannot be passed through C.
  if (d.has_strides && d.strides.size() != rank) return;
  const std::int64_t* strides = d.has_strides ? d.strides.data() : nullptr;
  tf_tensor* t = nullptr;
  const tf_status s = tf_tensor_wrap(data, static_cast<tf_dtype>(d.dtype), rank, d.shape.data(), strides, nullptr, nullptr,
                                     d.read_only ? 1 : 0, &t);
  if (!typed_status(s)) fail(kHarness, std::string("tf_tensor_wrap: untyped status ") + tf_status_name(s) + ": " + tf_last_error_message());
  if ((s == TF_OK) != cpp_accepted) fail(kHarness, "tf_tensor_wrap and from_external disagree");
  if (s != TF_OK) return;
  if (r.inside) {
    // Copy out into a block of the bytes' choosing: never past dst_bytes.
    const std::size_t dst_bytes = static_cast<std::size_t>(in.range(0, 700));
    std::unique_ptr<std::byte[]> dst(new std::byte[dst_bytes]);  // exact size: ASan sees any byte past it
    std::vector<std::int64_t> dst_strides;
    const bool given = in.flag();
    for (std::size_t i = 0; given && i < rank; ++i) dst_strides.push_back(in.u8() % 8 == 0 ? in.wide() : in.range(-1, 40));
    const tf_status c = tf_tensor_copy_to(t, dst.get(), dst_bytes, given ? dst_strides.data() : nullptr);
    if (!typed_status(c)) fail(kHarness, std::string("tf_tensor_copy_to: untyped status ") + tf_last_error_message());
    // A copy (tf_tensor_create reads the same bytes), unless the layout holds more than
    // 2^16 elements (zero strides over a small buffer): that copy is a legitimate huge
    // allocation, which the fuzzer's memory limit would report.
    if (saturating_numel(d.shape) > (std::int64_t{1} << 16)) {
      tf_tensor_free(t);
      return;
    }
    tf_tensor* copy = nullptr;
    const tf_status cc = tf_tensor_create(static_cast<tf_dtype>(d.dtype), rank, d.shape.data(), strides, data, &copy);
    if (cc != TF_OK) fail(kHarness, std::string("tf_tensor_create refused what tf_tensor_wrap took: ") + tf_last_error_message());
    tf_tensor_free(copy);
  }
  tf_tensor_free(t);
}

void dlpack_path(Bytes& in, Buffer& buf, const Descriptor& d, const Reach& r, bool cpp_accepted) {
  const int rank = static_cast<int>(d.shape.size());
  if (d.has_strides && d.strides.size() != d.shape.size()) return;
  // DLPack order: axes reversed (Note [Reversed axes], python/src/bind.hpp).
  std::vector<std::int64_t> shape(d.shape.rbegin(), d.shape.rend()), strides(d.strides.rbegin(), d.strides.rend());
  DLTensor t{};
  const std::uint8_t how = in.u8();
  // Element 0 at buffer byte d.start, reached as data + byte_offset in one of three ways.
  std::size_t split = how % 3 == 0 ? 0 : how % 3 == 1 ? d.start : d.start / 2;
  t.data = d.null_data ? nullptr : buf.at(d.start - split);
  t.byte_offset = how % 64 == 63 ? static_cast<std::uint64_t>(in.wide()) : split;
  t.ndim = how % 32 == 30 ? -1 - static_cast<int>(in.range(0, 3)) : rank;
  t.shape = shape.data();
  t.strides = d.has_strides ? strides.data() : nullptr;
  t.device = {how % 16 == 15 ? kDLCUDA : kDLCPU, 0};
  static constexpr DLDataType kCodes[] = {{6, 8, 1}, {kDLInt, 32, 1}, {kDLInt, 64, 1}, {kDLFloat, 32, 1},
                                          {kDLFloat, 64, 1}, {kDLComplex, 64, 1}, {kDLComplex, 128, 1},
                                          {kDLFloat, 16, 1}, {kDLUInt, 8, 1}};
  t.dtype = kCodes[d.dtype % 9];
  if (in.u8() % 16 == 0) t.dtype.lanes = 4;
  int released = 0;
  {
    Tensor x;
    try {
      x = tfpy::dlpack::import_dltensor(t, ExternalOwner{&released, &count_release, false});
    } catch (const Error&) {
      return;
    }
    const bool plain = t.ndim == rank && t.byte_offset == split && t.device.device_type == kDLCPU && t.dtype.lanes == 1;
    if (plain && !cpp_accepted) fail(kHarness, "the DLPack import accepted what from_external refused");
    if (plain && r.inside) check_reads(x, buf.at(d.start));
  }
  if (released != 1) fail(kHarness, "the DLPack import's release ran " + std::to_string(released) + " times");
}

}  // namespace
}  // namespace tenferro::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tenferro::fuzz;
  static Buffer buf;
  Bytes in(data, size);
  const Descriptor d = read_descriptor(in);
  const Reach r = reach_of(d);
  bool accepted = false;
  guarded(kHarness, [&] { cpp_path(in, buf, d, r, accepted); });
  guarded(kHarness, [&] { capi_path(in, buf, d, r, accepted); });
  guarded(kHarness, [&] { dlpack_path(in, buf, d, r, accepted); });
  return 0;
}
