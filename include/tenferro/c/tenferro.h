/*
 * tenferro/c/tenferro.h — the C ABI of tenferro (C99; usable from C++, Python ctypes,
 * Julia ccall and any FFI). See docs/c_abi.md for a walk-through and examples.
 *
 * Conventions shared by every function here:
 * - Handles are opaque pointers: tf_backend, tf_session (a held session), tf_tensor,
 *   tf_einsum_plan. Each is created by a function writing it to an out-pointer and
 *   destroyed by its *_free function (NULL is a no-op there).
 * - Every function that can fail returns a tf_status: TF_OK (0) or the code of the
 *   error class. No C++ exception ever crosses this boundary. On failure the
 *   thread-local last error holds the message (tf_last_error_message) and the code
 *   (tf_last_error_status), and every out-pointer is left untouched. Only the *_free
 *   functions and the constant-table helpers (tf_status_name, tf_dtype_name,
 *   tf_dtype_size, tf_last_error_*) return something else: they cannot fail.
 * - A NULL handle or a NULL pointer where an array or out-pointer is needed is a
 *   TF_ARGUMENT error, never a crash. An array pointer may be NULL only where its
 *   length is 0 or where a declaration says so.
 * - Memory layout: tensors are column-major like the C++ library (the FIRST index is
 *   the fastest: element (i, j) of an M x N tensor is at i + j*M). Strides are signed
 *   and counted in ELEMENTS, not bytes. Row-major (C-order) data is passed with
 *   explicit strides: for shape {M, N} use strides {N, 1}.
 * - Complex elements are interleaved (re, im) pairs, the layout of C99's
 *   float _Complex / double _Complex (and of std::complex, NumPy's complex64/128).
 * - Threading: a tf_session is thread-affine: open it, use it and close it on one
 *   thread (a call on another thread fails with TF_SESSION_ENTRY). A thread is inside
 *   at most one session at a time (opening a second one fails with TF_SESSION_ENTRY).
 *   Tensors and plans may be passed between threads; freeing them on any thread is
 *   fine. Concurrent calls on one tensor are fine as long as none writes to it.
 */
#ifndef TENFERRO_C_TENFERRO_H
#define TENFERRO_C_TENFERRO_H

#include <stddef.h>
#include <stdint.h>

#if defined(TENFERRO_STATIC)
#define TF_API
#else
#define TF_API __attribute__((visibility("default")))
#endif

/* In C++ the enums get int32_t as fixed underlying type, so any int32 a C caller
   passes (even one outside the enum) is a valid value that the library rejects with a
   status instead of undefined behaviour. In C an enum is a 32-bit integer already. */
#ifdef __cplusplus
#define TF_ENUM_INT32 : int32_t
extern "C" {
#else
#define TF_ENUM_INT32
#endif

/* ------------------------------------------------------------------ status codes */

/// Result of every fallible call: TF_OK or the class of the error (one code per class
/// of tenferro's C++ error hierarchy, include/tenferro/error.hpp).
typedef enum tf_status TF_ENUM_INT32 {
  TF_OK = 0,                   ///< success
  TF_SHAPE = 1,                ///< shapes that do not match or broadcast (ShapeError)
  TF_RANK = 2,                 ///< wrong number of axes (RankError)
  TF_AXIS = 3,                 ///< axis out of range or repeated (AxisError)
  TF_DTYPE = 4,                ///< dtype not supported by the op or wrong (DTypeError)
  TF_ARGUMENT = 5,             ///< any other bad argument, NULL handles included (ArgumentError)
  TF_INDEX = 6,                ///< index out of range, extent overflow (IndexError)
  TF_UNSUPPORTED = 7,          ///< valid request this build does not support (UnsupportedError)
  TF_UNSUPPORTED_AD_RULE = 8,  ///< no AD rule for an op (UnsupportedAdRule)
  TF_NUMERICAL = 9,            ///< singular matrix, no convergence (NumericalError)
  TF_BACKEND = 10,             ///< a backend or provider failed (BackendError)
  TF_RUNTIME_STATE = 11,       ///< the runtime cannot act now (RuntimeStateError)
  TF_SESSION_ENTRY = 12,       ///< session refused: contended, re-entered, wrong thread, closed (SessionEntryError)
  TF_INTERNAL = 13,            ///< a broken internal invariant, a bug in tenferro (InternalError)
  TF_OUT_OF_MEMORY = 14,       ///< an allocation failed (std::bad_alloc)
  TF_UNKNOWN = 15              ///< any other exception
} tf_status;

/// The full message of the last failing call on this thread (the C++ what() text,
/// "op: detail"), or "" when no call has failed on this thread yet. Valid until the
/// next failing call on this thread; successful calls do not change it. Never NULL.
TF_API const char* tf_last_error_message(void);
/// The status of the last failing call on this thread (TF_OK when none has failed).
TF_API tf_status tf_last_error_status(void);
/// The name of a status code ("TF_OK", "TF_SHAPE", ...; "TF_?" outside the enum).
/// A static string; never NULL.
TF_API const char* tf_status_name(tf_status status);

/* ------------------------------------------------------------------ dtypes */

/// Element types, one to one with tenferro::DType (same order and values).
typedef enum tf_dtype TF_ENUM_INT32 {
  TF_BOOL = 0,        ///< 1 byte, 0 or 1
  TF_INT32 = 1,       ///< int32_t
  TF_INT64 = 2,       ///< int64_t
  TF_FLOAT32 = 3,     ///< float
  TF_FLOAT64 = 4,     ///< double
  TF_COMPLEX64 = 5,   ///< float _Complex: interleaved (re, im) floats
  TF_COMPLEX128 = 6   ///< double _Complex: interleaved (re, im) doubles
} tf_dtype;

/// Name as tenferro prints it: "bool", "i32", "i64", "f32", "f64", "c64", "c128"
/// ("?" outside the enum). A static string; never NULL.
TF_API const char* tf_dtype_name(tf_dtype dtype);
/// Bytes per element (0 outside the enum).
TF_API size_t tf_dtype_size(tf_dtype dtype);

/* ------------------------------------------------------------------ handles */

/// A CPU backend: a thread budget and the resources its sessions use.
typedef struct tf_backend tf_backend;
/// A held session on a backend: the capability every op takes. Thread-affine.
typedef struct tf_session tf_session;
/// A tensor handle (owned data, a view of another tensor, or wrapped caller memory).
typedef struct tf_tensor tf_tensor;
/// A prepared einsum: parsed and planned once for fixed operand shapes and dtypes.
typedef struct tf_einsum_plan tf_einsum_plan;

/* ------------------------------------------------------------------ backends */

/// Creates a CPU backend whose sessions may use `num_threads` worker threads (0: the
/// default, TENFERRO_NUM_THREADS, else OMP_NUM_THREADS, else the process's CPUs).
/// TF_ARGUMENT for a negative count or a NULL `out`.
TF_API tf_status tf_backend_create(int32_t num_threads, tf_backend** out);
/// The thread budget of the backend's sessions. TF_ARGUMENT for NULL pointers.
TF_API tf_status tf_backend_num_threads(const tf_backend* backend, int32_t* out);
/// Destroys the handle. Allowed while sessions of it are open or tensors made in them
/// live: the shared state lives until the last session ends. NULL is a no-op.
TF_API void tf_backend_free(tf_backend* backend);

/* ------------------------------------------------------------------ sessions */

/// Opens a held session on the calling thread, waiting (FIFO) while another thread
/// holds the backend's CPUs. TF_SESSION_ENTRY when this thread is already inside a
/// session; TF_ARGUMENT for NULL pointers.
TF_API tf_status tf_session_open(tf_backend* backend, tf_session** out);
/// Like tf_session_open, but fails at once with TF_SESSION_ENTRY (message names
/// "Contended") instead of waiting when the CPUs are busy.
TF_API tf_status tf_session_try_open(tf_backend* backend, tf_session** out);
/// Ends the session (returns its resources, releases admission); the handle stays
/// valid for tf_session_free, and ops on it fail with TF_SESSION_ENTRY. Closing twice
/// is a no-op. TF_SESSION_ENTRY when called from a thread other than the one that
/// opened it (the session stays open); TF_ARGUMENT for NULL.
TF_API tf_status tf_session_close(tf_session* session);
/// Frees the handle, closing the session best-effort if still open (on a foreign
/// thread nothing is released until the owning thread exits). NULL is a no-op.
TF_API void tf_session_free(tf_session* session);

/* ------------------------------------------------------------------ tensors */

/// Creates a tensor owning a copy of `data`: `rank` extents in `shape` (rank 0 is a
/// scalar; `shape` may then be NULL). `strides` (elements, signed, `rank` entries)
/// give the layout of `data`: element (i0, i1, ...) is at data + sum(ik * strides[k])
/// elements; NULL means compact column-major. The new tensor is compact column-major
/// whatever `strides` were. `data` must be aligned to the element type; it may be NULL
/// only when the tensor has no elements.
/// TF_DTYPE for a dtype outside the enum; TF_SHAPE for a negative extent; TF_RANK above
/// rank 64; TF_INDEX when the element count or byte span overflows; TF_ARGUMENT for
/// NULL pointers or misaligned data.
TF_API tf_status tf_tensor_create(tf_dtype dtype, size_t rank, const int64_t* shape, const int64_t* strides,
                                  const void* data, tf_tensor** out);
/// Creates a compact column-major tensor of zeros. Errors as tf_tensor_create.
TF_API tf_status tf_tensor_zeros(tf_dtype dtype, size_t rank, const int64_t* shape, tf_tensor** out);
/// Wraps caller memory without copying: element (i0, i1, ...) is at
/// data + sum(ik * strides[k]) elements (`strides` NULL: compact column-major). Strides
/// may be negative, or zero (which makes the tensor read-only). With `read_only`
/// non-zero, ops refuse to write into it. `release(release_ctx)` is called exactly
/// once, on whichever thread drops the last tensor or view over the memory (views made
/// from it keep it alive); `release` may be NULL. On failure nothing is wrapped and
/// `release` is NOT called: the caller keeps ownership.
/// Errors as tf_tensor_create; TF_ARGUMENT also for a NULL `data` with elements.
TF_API tf_status tf_tensor_wrap(void* data, tf_dtype dtype, size_t rank, const int64_t* shape, const int64_t* strides,
                                void (*release)(void* release_ctx), void* release_ctx, int read_only, tf_tensor** out);
/// Frees the handle (the data lives on while other handles or views use it). Any
/// thread. NULL is a no-op.
TF_API void tf_tensor_free(tf_tensor* tensor);

/// Number of axes.
TF_API tf_status tf_tensor_rank(const tf_tensor* tensor, size_t* out);
/// Writes the `rank` extents to `shape` (capacity: entries available there).
/// TF_ARGUMENT when `capacity` is below the rank or for NULL pointers (`shape` may be
/// NULL for rank 0).
TF_API tf_status tf_tensor_shape(const tf_tensor* tensor, int64_t* shape, size_t capacity);
/// Writes the `rank` strides (elements, signed) to `strides`. Errors as tf_tensor_shape.
TF_API tf_status tf_tensor_strides(const tf_tensor* tensor, int64_t* strides, size_t capacity);
/// Number of elements (1 for rank 0).
TF_API tf_status tf_tensor_numel(const tf_tensor* tensor, int64_t* out);
/// Element type.
TF_API tf_status tf_tensor_dtype(const tf_tensor* tensor, tf_dtype* out);
/// Host pointer to element (0, 0, ...); with tf_tensor_strides it addresses every
/// element. Valid while the tensor (or a view of its data) lives. Do not write through
/// it when tf_tensor_is_read_only says 1.
TF_API tf_status tf_tensor_data(const tf_tensor* tensor, void** out);
/// 1 when writes are refused (broadcast views, read-only wrapped memory), else 0.
TF_API tf_status tf_tensor_is_read_only(const tf_tensor* tensor, int* out);
/// Copies every element into `dst` (`dst_bytes` bytes available). `dst_strides`
/// (elements, `rank` entries, >= 0) give dst's layout; NULL means compact column-major.
/// TF_ARGUMENT for NULL pointers, a negative stride, a zero stride on an extent > 1,
/// or a `dst` too small for the layout.
TF_API tf_status tf_tensor_copy_to(const tf_tensor* tensor, void* dst, size_t dst_bytes, const int64_t* dst_strides);

/* ------------------------------------------------------------------ views (no session) */

/// The end of an axis for tf_tensor_slice_view (INT64_MAX).
#define TF_SLICE_END INT64_MAX

/// View with axes reordered: result axis i is axis perm[i]. Shares the data (and keeps
/// it alive). TF_AXIS for a bad permutation (TF_RANK for a wrong length).
TF_API tf_status tf_tensor_permute_view(const tf_tensor* tensor, const int64_t* perm, size_t rank, tf_tensor** out);
/// View with a new shape (column-major element order; one extent may be -1).
/// TF_SHAPE when element counts differ; TF_ARGUMENT when the strides do not allow a
/// view (tf_reshape copies instead).
TF_API tf_status tf_tensor_reshape_view(const tf_tensor* tensor, const int64_t* shape, size_t rank, tf_tensor** out);
/// View of elements start, start+step, ... of one axis, stopping before `stop` (Python
/// slice rules: negative start/stop count from the end; step may be negative; use
/// TF_SLICE_END for "to the end"). TF_AXIS for a bad axis; TF_ARGUMENT for step 0.
TF_API tf_status tf_tensor_slice_view(const tf_tensor* tensor, int64_t axis, int64_t start, int64_t stop, int64_t step,
                                      tf_tensor** out);
/// Read-only view broadcast to `shape` (axes align at the FIRST axis; missing trailing
/// axes and extents of 1 stretch). TF_SHAPE otherwise.
TF_API tf_status tf_tensor_broadcast_view(const tf_tensor* tensor, const int64_t* shape, size_t rank, tf_tensor** out);

/* ------------------------------------------------------------------ elementwise ops */
/* Each writes a new compact tensor to `out`. Operands broadcast (aligned at the first
   axis, see tf_tensor_broadcast_view) and promote (i32 + f32 -> f32, f32 + f64 -> f64,
   real + complex -> complex). Common errors of every op: TF_ARGUMENT for NULL
   pointers, TF_SESSION_ENTRY for a session that is closed or used on another thread,
   TF_SHAPE for shapes that do not broadcast, TF_DTYPE for a dtype outside the op's set. */

/// a + b (integers wrap).
TF_API tf_status tf_add(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);
/// a - b.
TF_API tf_status tf_sub(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);
/// a * b.
TF_API tf_status tf_mul(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);
/// a / b (integers truncate; TF_NUMERICAL for an integer division by zero).
TF_API tf_status tf_div(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);
/// max(a, b), NaN propagating; real dtypes.
TF_API tf_status tf_maximum(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);
/// min(a, b), NaN propagating; real dtypes.
TF_API tf_status tf_minimum(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);
/// a ** b (integers need exponents >= 0: TF_ARGUMENT otherwise).
TF_API tf_status tf_pow(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out);

/// -x (numeric dtypes).
TF_API tf_status tf_neg(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// Complex conjugate (a copy for real dtypes).
TF_API tf_status tf_conj(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// |x| (complex input gives the real dtype of the same precision).
TF_API tf_status tf_abs(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// e^x (float and complex dtypes; TF_DTYPE for integer and bool: convert first).
TF_API tf_status tf_exp(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// Natural logarithm (float and complex).
TF_API tf_status tf_log(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// sin x (float and complex).
TF_API tf_status tf_sin(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// cos x (float and complex).
TF_API tf_status tf_cos(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// tanh x (float and complex).
TF_API tf_status tf_tanh(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// Square root (float and complex; NaN for negative reals).
TF_API tf_status tf_sqrt(tf_session* session, const tf_tensor* x, tf_tensor** out);

/// alpha * x. The scalar is weak: an f32 tensor stays f32; an integer or bool tensor
/// gives f64.
TF_API tf_status tf_scale(tf_session* session, const tf_tensor* x, double alpha, tf_tensor** out);
/// (alpha_re + i alpha_im) * x: a real float tensor gives the complex dtype of its
/// precision; integer and bool give complex128.
TF_API tf_status tf_scale_complex(tf_session* session, const tf_tensor* x, double alpha_re, double alpha_im,
                                  tf_tensor** out);

/* ------------------------------------------------------------------ reductions */
/* Over `num_axes` axes (negative counts from the end; TF_AXIS for a bad or repeated
   axis). `axes` NULL (with num_axes 0) reduces every axis; a non-NULL `axes` with
   num_axes 0 reduces none. keepdims non-zero keeps reduced axes with extent 1.
   sum/prod of bool give i64; mean of integers gives f64; max/min need real dtypes and
   fail with TF_SHAPE on an empty axis. */

/// Sum over the axes.
TF_API tf_status tf_sum(tf_session* session, const tf_tensor* x, const int64_t* axes, size_t num_axes, int keepdims,
                        tf_tensor** out);
/// Product over the axes.
TF_API tf_status tf_prod(tf_session* session, const tf_tensor* x, const int64_t* axes, size_t num_axes, int keepdims,
                         tf_tensor** out);
/// Maximum over the axes (NaN propagates).
TF_API tf_status tf_max(tf_session* session, const tf_tensor* x, const int64_t* axes, size_t num_axes, int keepdims,
                        tf_tensor** out);
/// Minimum over the axes.
TF_API tf_status tf_min(tf_session* session, const tf_tensor* x, const int64_t* axes, size_t num_axes, int keepdims,
                        tf_tensor** out);
/// Mean over the axes (NaN for an empty reduction).
TF_API tf_status tf_mean(tf_session* session, const tf_tensor* x, const int64_t* axes, size_t num_axes, int keepdims,
                         tf_tensor** out);

/* ------------------------------------------------------------------ structural */

/// Compact copy with axes reordered: result axis i is x's axis perm[i] (the view form
/// is tf_tensor_permute_view). TF_RANK for a wrong length, TF_AXIS for a bad entry.
TF_API tf_status tf_transpose(tf_session* session, const tf_tensor* x, const int64_t* perm, size_t rank,
                              tf_tensor** out);
/// New shape in column-major element order (one extent may be -1): a view sharing x's
/// data when the strides allow, else a compact copy. TF_SHAPE when counts differ.
TF_API tf_status tf_reshape(tf_session* session, const tf_tensor* x, const int64_t* shape, size_t rank,
                            tf_tensor** out);
/// StableHLO broadcast_in_dim into a new compact tensor of `shape`: x's axis i becomes
/// result axis dims[i] (num_dims must be x's rank); x's extent there must match or be
/// 1. TF_SHAPE, TF_RANK or TF_AXIS otherwise.
TF_API tf_status tf_broadcast_in_dim(tf_session* session, const tf_tensor* x, const int64_t* shape, size_t rank,
                                     const int64_t* dims, size_t num_dims, tf_tensor** out);
/// Checked conversion to `dtype`: TF_ARGUMENT naming the first element that does not
/// convert exactly (2.5 to int32, 1e40 to float32, 3+1i to float64).
TF_API tf_status tf_convert(tf_session* session, const tf_tensor* x, tf_dtype dtype, tf_tensor** out);
/// Lossy conversion: float to integer truncates and saturates (NaN to 0), complex to
/// real keeps the real part, to bool tests != 0.
TF_API tf_status tf_cast(tf_session* session, const tf_tensor* x, tf_dtype dtype, tf_tensor** out);
/// A compact column-major copy of x (x itself, shared, when already compact and
/// writable).
TF_API tf_status tf_contiguous(tf_session* session, const tf_tensor* x, tf_tensor** out);
/// Copies src into dst, any writable strided tensor of the same shape and dtype (src
/// broadcasts): the way to write a result into wrapped caller memory. TF_ARGUMENT for
/// a read-only dst; TF_DTYPE / TF_SHAPE for mismatches.
TF_API tf_status tf_copy_into(tf_session* session, const tf_tensor* src, tf_tensor* dst);

/* ------------------------------------------------------------------ einsum */

/// How einsum chooses the contraction order (ignored for one or two operands and for
/// parenthesised subscripts).
typedef enum tf_einsum_optimizer TF_ENUM_INT32 {
  TF_OPTIMIZE_AUTO = 0,     ///< chosen by network size and predicted time
  TF_OPTIMIZE_GREEDY = 1,   ///< best pair by size/cost, repeatedly
  TF_OPTIMIZE_OPTIMAL = 2,  ///< exact dynamic programming (up to ~16 operands)
  TF_OPTIMIZE_ANNEAL = 3,   ///< randomized search for large networks (1 s budget)
  TF_OPTIMIZE_CHAIN = 4,    ///< matrix-chain DP (TF_ARGUMENT if the network is no chain)
  TF_OPTIMIZE_ELIMINATE = 5, ///< variable elimination, one summed label at a time
  TF_OPTIMIZE_PARTITION = 6  ///< recursive bisection where the bonds are thinnest
} tf_einsum_optimizer;

/// Options of the einsum functions; pass NULL for the defaults. A zero-initialized
/// struct is the defaults too.
typedef struct tf_einsum_options {
  /// The optimizer (used when `path` is NULL).
  tf_einsum_optimizer optimizer;
  /// Memory limit: the largest intermediate may hold at most this many elements;
  /// labels are sliced to meet it (TF_ARGUMENT when impossible). 0: no limit.
  double max_intermediate_elements;
  /// A fixed contraction order as an opt_einsum "linear" path: `path_steps` pairs
  /// (path[2k], path[2k+1]) of positions in the current operand list; both are
  /// removed and their result appended. NULL: use the optimizer.
  const int32_t* path;
  /// Number of pairs in `path`.
  size_t path_steps;
} tf_einsum_options;

/// Einstein summation from subscripts ("ij,jk->ik"; column-major: the first label
/// names axis 0) over `num_operands` operands. Implicit output, repeated labels
/// (diagonals), "..." and parentheses follow include/tenferro/einsum.hpp. Dtypes
/// float32/64 and complex64/128, promoting. TF_ARGUMENT for a parse error or a wrong
/// operand count; TF_SHAPE for mismatched extents or ranks; TF_DTYPE for integer or
/// bool operands.
TF_API tf_status tf_einsum(tf_session* session, const char* subscripts, const tf_tensor* const* operands,
                           size_t num_operands, const tf_einsum_options* options, tf_tensor** out);
/// Integer-label form (NumPy's sublist form): labels[i] holds label_counts[i] labels
/// (any integers >= 0) naming the axes of operands[i]; `output` the `output_count`
/// labels of the result, or NULL for the implicit output (labels occurring once,
/// ascending). A non-NULL `output` with output_count 0 gives a scalar (full
/// contraction). Errors as tf_einsum.
TF_API tf_status tf_einsum_labels(tf_session* session, const tf_tensor* const* operands, size_t num_operands,
                                  const int64_t* const* labels, const size_t* label_counts, const int64_t* output,
                                  size_t output_count, const tf_einsum_options* options, tf_tensor** out);

/// Prepares subscripts for `num_operands` operands of these shapes (operand i has
/// ranks[i] extents at shapes[i]) and dtypes: parsing, validation and the contraction
/// order are done once. Needs no session. Errors as tf_einsum.
TF_API tf_status tf_einsum_plan_create(const char* subscripts, size_t num_operands, const size_t* ranks,
                                       const int64_t* const* shapes, const tf_dtype* dtypes,
                                       const tf_einsum_options* options, tf_einsum_plan** out);
/// Prepares the integer-label form (as tf_einsum_labels; operand i has label_counts[i]
/// extents at shapes[i]).
TF_API tf_status tf_einsum_plan_create_labels(size_t num_operands, const int64_t* const* labels,
                                              const size_t* label_counts, const int64_t* output, size_t output_count,
                                              const int64_t* const* shapes, const tf_dtype* dtypes,
                                              const tf_einsum_options* options, tf_einsum_plan** out);
/// Runs the plan on operands of the prepared shapes and dtypes (any strides) into a new
/// tensor. TF_SHAPE / TF_DTYPE when an operand differs from the prepared ones,
/// TF_ARGUMENT for a wrong operand count.
TF_API tf_status tf_einsum_plan_execute(const tf_einsum_plan* plan, tf_session* session,
                                        const tf_tensor* const* operands, size_t num_operands, tf_tensor** out);
/// Runs the plan into `out`, a writable tensor of the output shape and dtype (any
/// strides, e.g. wrapped caller memory) that does not overlap an operand. `out` is
/// untouched on any error. Errors of tf_einsum_plan_execute, then TF_SHAPE / TF_DTYPE
/// / TF_ARGUMENT for a bad `out`.
TF_API tf_status tf_einsum_plan_execute_into(const tf_einsum_plan* plan, tf_session* session,
                                             const tf_tensor* const* operands, size_t num_operands, tf_tensor* out);
/// Rank of the plan's result.
TF_API tf_status tf_einsum_plan_output_rank(const tf_einsum_plan* plan, size_t* out);
/// Extents of the plan's result (capacity: entries available; TF_ARGUMENT when short).
TF_API tf_status tf_einsum_plan_output_shape(const tf_einsum_plan* plan, int64_t* shape, size_t capacity);
/// Dtype of the plan's result.
TF_API tf_status tf_einsum_plan_output_dtype(const tf_einsum_plan* plan, tf_dtype* out);
/// Frees the plan. NULL is a no-op.
TF_API void tf_einsum_plan_free(tf_einsum_plan* plan);

/* ------------------------------------------------------------------ linear algebra */
/* Matrices are the first two axes; batch axes TRAIL ([M, N, B...]). Dtypes float32/64
   and complex64/128 (TF_DTYPE otherwise); TF_RANK below rank 2; TF_SHAPE for
   non-square input where square is needed or mismatched extents. All outputs are
   written only on success. */

/// Reduced SVD A = U diag(S) Vh (LAPACK gesdd): U [M, K], S [K] (real, descending),
/// Vh [K, N], K = min(M, N). TF_ARGUMENT for non-finite input; TF_NUMERICAL when it
/// does not converge.
TF_API tf_status tf_svd(tf_session* session, const tf_tensor* a, tf_tensor** u, tf_tensor** s, tf_tensor** vh);
/// Reduced QR A = Q R (LAPACK geqrf + orgqr/ungqr): Q [M, K], R [K, N]. With
/// positive_diagonal non-zero, diag(R) is made real and >= 0 (unique for full rank).
TF_API tf_status tf_qr(tf_session* session, const tf_tensor* a, int positive_diagonal, tf_tensor** q, tf_tensor** r);
/// Hermitian eigendecomposition A = V diag(W) V^H (LAPACK syevd/heevd) reading the
/// lower triangle (upper when `upper` is non-zero): W [N] real ascending, V [N, N].
/// TF_ARGUMENT for non-finite input; TF_NUMERICAL when it does not converge.
TF_API tf_status tf_eigh(tf_session* session, const tf_tensor* a, int upper, tf_tensor** w, tf_tensor** v);
/// Solves A X = B (LAPACK getrf + getrs): A [N, N], B [N, K] or a vector [N].
/// TF_NUMERICAL for an exactly singular A (the message names getrf and the pivot).
TF_API tf_status tf_solve(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** x);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TENFERRO_C_TENFERRO_H */
