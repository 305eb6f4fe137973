#pragma once
/// \file tensor.hpp
/// `Tensor`: a dynamically typed, strided, reference-counted dense tensor handle.
///
/// Owners are compact column-major (first axis fastest). Views share storage and carry
/// signed element strides and an offset. Copying a Tensor copies the handle, not the
/// data. A broadcast view (zero stride on an extent > 1) is read-only.

#include <complex>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <type_traits>

#include "tenferro/dtype.hpp"
#include "tenferro/error.hpp"
#include "tenferro/export.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/shape.hpp"
#include "tenferro/storage.hpp"

namespace tenferro {

class Generator;

/// Who owns the memory behind Tensor::from_external, and how to give it back.
struct ExternalOwner {
  /// Passed to `release`.
  void* context = nullptr;
  /// Called exactly once, on whichever thread drops the last tensor (or view) over the
  /// memory; null when nothing needs to be called. Must not throw.
  void (*release)(void* context) = nullptr;
  /// Tensors over the memory refuse writes (mutable_data, set, `_into` outputs).
  bool read_only = false;
};

/// Dynamically typed dense tensor handle.
class TENFERRO_API Tensor {
 public:
  // Note [Inline handle moves]: construction, copies, moves and destruction are inline (they
  // are a few loads and stores plus one atomic on release); out of line they were a
  // measurable share of small-op and AD-tape costs.
  /// An undefined tensor (no storage; `defined()` is false).
  Tensor() noexcept = default;
  Tensor(const Tensor& o)
      : block_(o.block_), data_(o.data_), dtype_(o.dtype_), rank_(o.rank_), flags_(o.flags_), small_(o.small_) {
    if (o.big_) copy_big_layout(o);
    detail::retain_block(block_);
  }
  Tensor(Tensor&& o) noexcept
      : block_(o.block_), data_(o.data_), big_(o.big_), dtype_(o.dtype_), rank_(o.rank_), flags_(o.flags_), small_(o.small_) {
    o.block_ = nullptr;
    o.data_ = nullptr;
    o.big_ = nullptr;
    o.rank_ = 0;
  }
  Tensor& operator=(const Tensor& o) {
    if (this != &o) {
      Tensor tmp(o);
      *this = std::move(tmp);
    }
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      detail::release_block(block_);
      delete[] big_;
      block_ = o.block_;
      data_ = o.data_;
      big_ = o.big_;
      dtype_ = o.dtype_;
      rank_ = o.rank_;
      flags_ = o.flags_;
      small_ = o.small_;
      o.block_ = nullptr;
      o.data_ = nullptr;
      o.big_ = nullptr;
      o.rank_ = 0;
    }
    return *this;
  }
  ~Tensor() {
    detail::release_block(block_);
    delete[] big_;
  }
  /// Drops this handle's reference: the tensor becomes undefined (same as assigning
  /// `Tensor()`, without building one).
  void reset() noexcept {
    detail::release_block(block_);
    delete[] big_;
    block_ = nullptr;
    data_ = nullptr;
    big_ = nullptr;
    rank_ = 0;
  }

  // ---- constructors (host memory; they need no session) ----
  /// Uninitialized compact tensor. Throws ShapeError for a negative extent, IndexError on
  /// overflow, RankError above kMaxRank.
  static Tensor empty(std::span<const std::int64_t> shape, DType dtype);
  static Tensor empty(std::initializer_list<std::int64_t> shape, DType dtype) { return empty(std::span(shape.begin(), shape.size()), dtype); }
  /// Uninitialized compact tensor on `device`, through the device kind's allocator
  /// (Note [Per-device allocation]); the CPU's is empty(shape, dtype). UnsupportedError
  /// for a device kind without a registered allocator.
  static Tensor empty(std::span<const std::int64_t> shape, DType dtype, Device device);
  /// All zeros.
  static Tensor zeros(std::span<const std::int64_t> shape, DType dtype);
  static Tensor zeros(std::initializer_list<std::int64_t> shape, DType dtype) { return zeros(std::span(shape.begin(), shape.size()), dtype); }
  /// All ones.
  static Tensor ones(std::span<const std::int64_t> shape, DType dtype);
  static Tensor ones(std::initializer_list<std::int64_t> shape, DType dtype) { return ones(std::span(shape.begin(), shape.size()), dtype); }
  /// Every element `value` converted to `dtype`. Integer and bool dtypes need an exact
  /// value (2.5 into i32 or 2 into bool throws ArgumentError); float dtypes round
  /// (0.1 into f32) but refuse overflow to infinity (1e40 into f32); complex into real
  /// needs a zero imaginary part.
  static Tensor full(std::span<const std::int64_t> shape, Scalar value, DType dtype);
  static Tensor full(std::initializer_list<std::int64_t> shape, Scalar value, DType dtype) { return full(std::span(shape.begin(), shape.size()), value, dtype); }
  /// A rank-0 tensor holding `value` in its natural dtype (bool, i64, f64, c128) or `dtype`.
  static Tensor scalar(Scalar value);
  static Tensor scalar(Scalar value, DType dtype);
  /// Copies column-major `data` (first index fastest). ShapeError if sizes differ.
  template <class T> static Tensor from_data(std::span<const std::int64_t> shape, std::span<const T> data) {
    return from_raw(shape, dtype_of<T>, data.data(), static_cast<std::int64_t>(data.size()), false);
  }
  template <class T> static Tensor from_data(std::initializer_list<std::int64_t> shape, std::initializer_list<T> data) {
    return from_raw(std::span(shape.begin(), shape.size()), dtype_of<T>, data.begin(), static_cast<std::int64_t>(data.size()), false);
  }
  /// Copies row-major (C order, last index fastest) `data` into a column-major owner.
  template <class T> static Tensor from_row_major(std::span<const std::int64_t> shape, std::span<const T> data) {
    return from_raw(shape, dtype_of<T>, data.data(), static_cast<std::int64_t>(data.size()), true);
  }
  template <class T> static Tensor from_row_major(std::initializer_list<std::int64_t> shape, std::initializer_list<T> data) {
    return from_raw(std::span(shape.begin(), shape.size()), dtype_of<T>, data.begin(), static_cast<std::int64_t>(data.size()), true);
  }
  /// A zero-copy tensor over memory the library does not own (host memory): element
  /// (i0, i1, ...) is at `data` + Σ ik·strides[k] elements. Empty `strides` means compact
  /// column-major. Strides may be negative or zero (zero on an extent > 1 makes the
  /// tensor read-only, as a broadcast view) and may overlap (reads are fine; ops refuse
  /// such a tensor as an output). The owner's `release` runs once when the last tensor
  /// over the memory is gone. Nothing is copied and nothing is released on error: the
  /// caller keeps ownership. Throws DTypeError for a dtype outside the enum, RankError
  /// for a rank above kMaxRank or strides of another length, ShapeError for a negative
  /// extent, IndexError when the byte span overflows, ArgumentError for a null `data`
  /// with elements or a `data` not aligned to the element type.
  static Tensor from_external(void* data, std::span<const std::int64_t> shape, std::span<const std::int64_t> strides, DType dtype,
                              ExternalOwner owner);
  /// Rank-1 tensor start, start+step, ... (< stop for step > 0, > stop for step < 0).
  /// ArgumentError for step 0 or a non-finite bound; DTypeError for a bool dtype.
  static Tensor arange(Scalar start, Scalar stop, Scalar step, DType dtype);
  /// arange(0, n, 1).
  static Tensor arange(std::int64_t n, DType dtype);
  /// n×m matrix with ones on the diagonal (m = n when negative).
  static Tensor eye(std::int64_t n, DType dtype, std::int64_t m = -1);
  /// Uniform values in [low, high) from `gen` (complex: real and imaginary parts each
  /// uniform). Float and complex dtypes only. Advances `gen` by the element count.
  static Tensor uniform(Generator& gen, std::span<const std::int64_t> shape, DType dtype, double low = 0.0, double high = 1.0);
  static Tensor uniform(Generator& gen, std::initializer_list<std::int64_t> shape, DType dtype, double low = 0.0, double high = 1.0) {
    return uniform(gen, std::span(shape.begin(), shape.size()), dtype, low, high);
  }
  /// Normal values N(mean, stddev²) (complex: E|z-mean|² = stddev², real and imaginary
  /// parts each with variance stddev²/2, as PyTorch). Float and complex dtypes only.
  static Tensor normal(Generator& gen, std::span<const std::int64_t> shape, DType dtype, double mean = 0.0, double stddev = 1.0);
  static Tensor normal(Generator& gen, std::initializer_list<std::int64_t> shape, DType dtype, double mean = 0.0, double stddev = 1.0) {
    return normal(gen, std::span(shape.begin(), shape.size()), dtype, mean, stddev);
  }

  // ---- metadata ----
  bool defined() const noexcept { return block_ != nullptr; }
  DType dtype() const noexcept { return dtype_; }
  int rank() const noexcept { return rank_; }
  std::int64_t extent(int axis) const noexcept { return big_ ? big_[axis] : small_.ext[axis]; }
  std::int64_t stride(int axis) const noexcept { return big_ ? big_[rank_ + axis] : small_.str[axis]; }
  Shape shape() const;
  Dims strides() const;
  /// Number of elements: the product of the extents (1 at rank 0).
  std::int64_t numel() const noexcept {
    // Unsigned: an empty tensor may have other extents whose product exceeds int64
    // ([2^62, 3, 0]); the product wraps on the way to its 0 instead of overflowing (UB),
    // and a tensor with elements never wraps (its count fits).
    std::uint64_t n = 1;
    if (big_) {
      for (int i = 0; i < rank_; ++i) n *= static_cast<std::uint64_t>(big_[i]);
    } else {
      for (int i = 0; i < rank_; ++i) n *= static_cast<std::uint64_t>(small_.ext[i]);
    }
    return static_cast<std::int64_t>(n);
  }
  /// Element offset of element (0,...,0) from the start of the storage.
  std::int64_t offset() const noexcept;
  Device device() const noexcept { return block_ ? block_->device : Device{}; }
  /// Compact column-major (strides 1, e0, e0*e1, ...; any stride on extent-1 axes).
  bool is_contiguous() const noexcept {
    if (big_) return is_contiguous_slow();
    std::uint64_t expect = 1;  // unsigned as in numel(): only an empty tensor wraps
    bool ok = true;
    for (int i = 0; i < rank_; ++i) {
      const std::int64_t e = small_.ext[i];
      if (e == 0) return true;  // no elements: any strides describe it
      ok = ok && (e == 1 || static_cast<std::uint64_t>(static_cast<std::int64_t>(small_.str[i])) == expect);
      expect *= static_cast<std::uint64_t>(e);
    }
    return ok;
  }
  /// True for broadcast views and views of them: writing through them is refused.
  bool read_only() const noexcept { return (flags_ & kReadOnly) != 0; }
  // Note [Version counters]
  // Every storage block counts the writes the library's ops make into it (each `_into`
  // op's output, in-place updates, set(), mutable_data()); views share their block's
  // count. Eager AD compares the counts of the tensors a node saved for its backward
  // with those at recording, so a saved input overwritten in place afterwards raises a
  // typed error at backward instead of giving a wrong gradient (PyTorch's check). Writes
  // from outside the library (NumPy or DLPack through wrapped memory, raw pointers) are
  // not seen unless the writer calls note_write(). The increment is a relaxed load and
  // store, not a read-modify-write: concurrent writers may lose a count, never undo one.
  /// The write count of this tensor's storage (0 for an undefined tensor).
  std::uint32_t version() const noexcept { return block_ ? block_->version.load(std::memory_order_relaxed) : 0; }
  /// Records a write into this tensor's storage (ops call it; so should code that
  /// writes through a raw pointer into a tensor eager AD may have saved).
  void note_write() const noexcept {
    if (block_) block_->version.store(block_->version.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  /// Same storage block, or blocks over overlapping bytes (external tensors over the
  /// same memory, Tensor::from_external): the test every overlap check starts from.
  bool shares_storage(const Tensor& o) const noexcept {
    if (!block_ || !o.block_) return false;
    if (block_ == o.block_) return true;
    return (block_->external || o.block_->external) && block_->data() < o.block_->data() + o.block_->bytes &&
           o.block_->data() < block_->data() + block_->bytes;
  }

  /// Pointer to element (0,...,0). `mutable_data` throws ArgumentError on a read-only view.
  const void* data() const noexcept { return data_; }
  void* mutable_data(std::string_view op = "mutable_data") const;
  /// Typed pointer to element (0,...,0); DTypeError when T does not match.
  template <class T> const T* data_ptr() const {
    check_dtype(dtype_of<T>, "data_ptr");
    return reinterpret_cast<const T*>(data_);
  }
  template <class T> T* mutable_data_ptr() const {
    check_dtype(dtype_of<T>, "mutable_data_ptr");
    return static_cast<T*>(mutable_data("mutable_data_ptr"));
  }

  // ---- element access (host) ----
  /// Element at `index` (one entry per axis, negative counts from the end); IndexError when
  /// out of range, DTypeError when T is not the dtype.
  template <class T> T item(std::span<const std::int64_t> index) const {
    return *static_cast<const T*>(element_ptr(index, dtype_of<T>));
  }
  template <class T> T item(std::initializer_list<std::int64_t> index = {}) const {
    return item<T>(std::span(index.begin(), index.size()));
  }
  /// Element as a Scalar of the tensor's kind.
  Scalar at(std::span<const std::int64_t> index) const;
  Scalar at(std::initializer_list<std::int64_t> index = {}) const { return at(std::span(index.begin(), index.size())); }
  /// Writes one element; ArgumentError on a read-only view.
  template <class T> void set(std::span<const std::int64_t> index, T value) const {
    *static_cast<T*>(const_cast<void*>(element_ptr(index, dtype_of<T>, true))) = value;
  }
  template <class T> void set(std::initializer_list<std::int64_t> index, T value) const {
    set<T>(std::span(index.begin(), index.size()), value);
  }

  // ---- views (metadata only; share storage) ----
  /// Axes reordered: result axis i is input axis perm[i]. AxisError for a bad permutation.
  Tensor permute_view(std::span<const std::int64_t> perm) const;
  Tensor permute_view(std::initializer_list<std::int64_t> perm) const { return permute_view(std::span(perm.begin(), perm.size())); }
  /// Swaps two axes (default: the first two). AxisError when out of range; RankError below rank 2 with defaults.
  Tensor transpose_view(int axis0 = 0, int axis1 = 1) const;
  /// Elements start, start+step, ... of one axis, stopping before `stop` (Python slice
  /// rules: negative start/stop count from the end and clamp; step may be negative;
  /// step 0 is ArgumentError). Use kSliceEnd for "to the end" in either direction.
  Tensor slice_view(int axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  static constexpr std::int64_t kSliceEnd = INT64_MAX;
  /// Same elements with a new shape, column-major order, without copying. ShapeError when
  /// the element counts differ; ArgumentError when the strides do not allow a view (the
  /// allocating `reshape` op copies instead). One extent may be -1 (inferred).
  Tensor reshape_view(std::span<const std::int64_t> shape) const;
  Tensor reshape_view(std::initializer_list<std::int64_t> shape) const { return reshape_view(std::span(shape.begin(), shape.size())); }
  /// Read-only view broadcast to `shape` (see broadcast rule in ops.hpp: axes align at the
  /// first axis; missing trailing axes and extents of 1 stretch). ShapeError otherwise.
  Tensor broadcast_view(std::span<const std::int64_t> shape) const;
  Tensor broadcast_view(std::initializer_list<std::int64_t> shape) const { return broadcast_view(std::span(shape.begin(), shape.size())); }
  /// Real or imaginary part of a complex tensor as a strided real view (writable when the
  /// tensor is). DTypeError for a real dtype.
  Tensor real_view() const;
  Tensor imag_view() const;
  /// View with explicit shape, strides (elements, signed) and element offset into this
  /// tensor's storage. IndexError when any element would fall outside the storage.
  Tensor as_strided_view(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides, std::int64_t offset) const;

  /// NumPy-like text: "tensor([[1, 3],\n        [2, 4]], dtype=f64, shape=[2, 2])".
  /// Rows are the first axis, columns the second; higher axes are printed as blocks.
  std::string to_string() const;

  /// Internal: storage block (for backends).
  detail::StorageHeader* block() const noexcept { return block_; }
  /// Internal: a writable compact tensor of `shape` and `dtype` over this tensor's
  /// block, starting `byte_offset` bytes into the block's data. The caller guarantees
  /// the range lies inside the block and the offset suits the dtype's alignment
  /// (compiled graphs carve their intermediates from one arena: Note [Arena plan] in
  /// src/runtime/compile.cpp).
  Tensor carve_view(std::size_t byte_offset, std::span<const std::int64_t> shape, DType dtype) const;
  /// Internal: the inline layout (Note [Compact layout]: extents at [0, 8), strides at
  /// [8, 16), int32) when the tensor has one, else null: fixed-cost paths read it once
  /// instead of testing the layout on every extent() and stride().
  const std::int32_t* inline_layout() const noexcept { return big_ ? nullptr : small_.ext; }

 private:
  static constexpr std::uint8_t kReadOnly = 1;
  bool is_contiguous_slow() const noexcept;
  static Tensor from_raw(std::span<const std::int64_t> shape, DType dtype, const void* data, std::int64_t count, bool row_major);
  void check_dtype(DType d, std::string_view op) const;
  const void* element_ptr(std::span<const std::int64_t> index, DType d, bool write = false) const;
  /// Builds a view of this tensor's storage (shared block, same read-only flag).
  Tensor make_view(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides, std::byte* data, bool read_only) const;
  void set_layout(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides);
  void free_layout() noexcept;
  /// Copies `o`'s heap layout (`big_`) into this handle (copy construction).
  void copy_big_layout(const Tensor& o);
  void copy_layout_from(const Tensor& o);
  friend struct TensorAccess;

  // Note [Compact layout]
  // Extents and strides are stored inline as int32 when the rank is <= 8 and every value
  // fits (any tensor below 2^31 elements); otherwise in one heap array of int64 (`big_`).
  // This keeps sizeof(Tensor) at 96 bytes with rank-8 layouts inline; int64 inline arrays
  // alone would take 128 bytes.
  detail::StorageHeader* block_ = nullptr;
  std::byte* data_ = nullptr;
  std::int64_t* big_ = nullptr;
  DType dtype_ = DType::f64;
  std::uint8_t rank_ = 0;
  std::uint8_t flags_ = 0;
  struct Small {
    std::int32_t ext[8];
    std::int32_t str[8];
  } small_{};
};
static_assert(sizeof(Tensor) <= 128, "Tensor handle must stay small");

/// Prints `t.to_string()`.
TENFERRO_API std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tenferro
