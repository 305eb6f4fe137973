#pragma once
// The one cache type of the library (Note [Bounded caches]).
//
// Note [Bounded caches]
// Every cache a session checks out (dot_general plans, LAPACK workspace sizes, FFTW
// plans, einsum programs) is a BoundedCache<V>: keys are serialized into int64 words
// with a hash computed by the family; lookup is set associative (4 ways by default:
// index by hash, compare hash, length and words), so a hit costs a handful of compares;
// a cache whose misses are very expensive (FFTW plans) is fully associative, so the
// least recently used entry overall is the one replaced. Eviction is least-recently-used
// within the set, and globally when the entry or byte limit would be exceeded. Counters:
// hits, misses, evictions, entries, bytes. find_recent probes the entry last used with
// a caller's comparison before any key is built (a repeated call's hit). A value
// too large for the byte limit (or any value when the limit is 0 entries) is kept in a
// scratch slot that the next insert replaces: the caller can use it right away, but it
// is never counted as cached. Values are destroyed by their destructor (an FFTW plan's
// destructor takes the planner lock: ErasedHandle below).
#include "core/internal_check.hpp"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "tenferro/session.hpp"

namespace tenferro::detail {

/// An owned object of a type the holder does not know (a family's plan or program):
/// destroyed through `destroy`. Lets a backend hold family caches without including
/// family headers.
class ErasedHandle {
 public:
  ErasedHandle() noexcept = default;
  ErasedHandle(void* p, void (*destroy)(void*) noexcept) noexcept : p_(p), destroy_(destroy) {}
  ErasedHandle(ErasedHandle&& o) noexcept : p_(o.p_), destroy_(o.destroy_) { o.p_ = nullptr; }
  ErasedHandle& operator=(ErasedHandle&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = o.p_;
      destroy_ = o.destroy_;
      o.p_ = nullptr;
    }
    return *this;
  }
  ErasedHandle(const ErasedHandle&) = delete;
  ErasedHandle& operator=(const ErasedHandle&) = delete;
  ~ErasedHandle() { reset(); }
  void reset() noexcept {
    if (p_) destroy_(p_);
    p_ = nullptr;
  }
  void* get() const noexcept { return p_; }
  template <class T> T* as() const noexcept { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  void (*destroy_)(void*) noexcept = nullptr;
};

/// Bounded, set-associative LRU cache of V keyed by int64 words (Note [Bounded caches]).
template <class V> class BoundedCache {
 public:
  /// Ways per set by default; `kFullyAssociative` makes one set of every entry.
  static constexpr std::size_t kWays = 4, kFullyAssociative = 0;

  BoundedCache(std::size_t max_entries, std::size_t max_bytes, std::size_t ways = kWays) : ways_(ways) {
    set_limits(max_entries, max_bytes);
  }
  BoundedCache(const BoundedCache&) = delete;
  BoundedCache& operator=(const BoundedCache&) = delete;

  /// The value cached for the key, or null (counts a hit or a miss).
  V* find(const std::int64_t* key, int len, std::uint64_t hash) noexcept {
    Slot* set = set_of(hash);
    for (std::size_t w = 0; w < set_ways_; ++w) {
      Slot& e = set[w];
      if (e.value && e.hash == hash && e.len == len && same_words(e.key.get(), key, len)) {
        e.last_use = ++clock_;
        ++stats_.hits;
        recent_ = &e;
        return &*e.value;
      }
    }
    ++stats_.misses;
    return nullptr;
  }

  /// The entry last found or inserted, when `same(key, len)` accepts its key words (a
  /// hit, counted as find counts it), else null (nothing counted: follow with find). A
  /// caller that repeats one call checks its live arguments against the stored key
  /// instead of serializing and hashing them (the one-shot einsum: Note [Einsum program
  /// cache]).
  template <class Same> V* find_recent(Same&& same) noexcept {
    Slot* e = recent_;
    if (!e || !e->value || !same(static_cast<const std::int64_t*>(e->key.get()), e->len)) return nullptr;
    e->last_use = ++clock_;
    ++stats_.hits;
    return &*e->value;
  }

  /// Stores `value` for the key (which must not be cached already) and returns it. `bytes`
  /// is the value's footprint beyond the key (for the byte limit).
  V* insert(const std::int64_t* key, int len, std::uint64_t hash, V&& value, std::size_t bytes = sizeof(V)) {
    const std::size_t total = bytes + static_cast<std::size_t>(len) * sizeof(std::int64_t);
    if (max_entries_ == 0 || total > max_bytes_) {
      recent_ = nullptr;
      scratch_.emplace(std::move(value));
      return &*scratch_;
    }
    std::unique_ptr<std::int64_t[]> k(new std::int64_t[static_cast<std::size_t>(len > 0 ? len : 1)]);
    std::memcpy(k.get(), key, static_cast<std::size_t>(len) * sizeof(std::int64_t));
    while (stats_.entries > 0 && (stats_.entries >= max_entries_ || stats_.bytes + total > max_bytes_)) evict(*oldest(nullptr), true);
    Slot* set = set_of(hash);
    Slot* victim = oldest(set);
    if (victim->value) evict(*victim, true);
    victim->hash = hash;
    victim->len = len;
    victim->bytes = total;
    victim->last_use = ++clock_;
    victim->key = std::move(k);
    victim->value.emplace(std::move(value));
    ++stats_.entries;
    stats_.bytes += total;
    recent_ = victim;
    return &*victim->value;
  }

  /// Drops every entry (and the scratch value).
  void clear() noexcept {
    for (Slot& e : slots_)
      if (e.value) evict(e, false);
    scratch_.reset();
    recent_ = nullptr;
  }

  /// New limits; drops every entry (the set count depends on the entry limit).
  void set_limits(std::size_t max_entries, std::size_t max_bytes) {
    clear();
    std::size_t sets = 1;
    set_ways_ = ways_ == kFullyAssociative ? std::max<std::size_t>(max_entries, 1) : ways_;
    while (sets * set_ways_ < max_entries) sets *= 2;
    slots_ = std::vector<Slot>(sets * set_ways_);
    mask_ = sets - 1;
    max_entries_ = max_entries;
    max_bytes_ = max_bytes;
  }

  /// Counters and limits.
  PlanCacheStats stats() const noexcept {
    PlanCacheStats s = stats_;
    s.entry_limit = max_entries_;
    s.byte_limit = max_bytes_;
    return s;
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint64_t last_use = 0;
    int len = 0;
    std::size_t bytes = 0;
    std::unique_ptr<std::int64_t[]> key;
    std::optional<V> value;
  };
  /// Word-by-word compare: keys are a few dozen words, for which an inlined loop is
  /// cheaper than a memcmp call.
  static bool same_words(const std::int64_t* a, const std::int64_t* b, int len) noexcept {
    for (int i = 0; i < len; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  Slot* set_of(std::uint64_t hash) noexcept {
    const std::uint64_t h = hash ^ (hash >> 31);
    return &slots_[static_cast<std::size_t>(h & mask_) * set_ways_];
  }
  /// The least recently used slot of `set` (an empty one first), or of the whole cache
  /// among occupied slots when `set` is null.
  Slot* oldest(Slot* set) noexcept {
    Slot* first = set ? set : slots_.data();
    const std::size_t n = set ? set_ways_ : slots_.size();
    Slot* best = nullptr;
    for (std::size_t i = 0; i < n; ++i) {
      Slot& e = first[i];
      if (!e.value) {
        if (set) return &e;
        continue;
      }
      if (!best || e.last_use < best->last_use) best = &e;
    }
    return best;
  }
  void evict(Slot& e, bool counted) noexcept {
    e.value.reset();
    e.key.reset();
    --stats_.entries;
    stats_.bytes -= e.bytes;
    if (counted) ++stats_.evictions;
  }

  std::vector<Slot> slots_;
  std::size_t ways_;          ///< as constructed (kFullyAssociative or a way count)
  std::size_t set_ways_ = 1;  ///< ways of each set now
  std::size_t mask_ = 0;
  std::size_t max_entries_ = 0, max_bytes_ = 0;
  std::uint64_t clock_ = 0;
  PlanCacheStats stats_;
  std::optional<V> scratch_;
  Slot* recent_ = nullptr;  ///< last found or inserted (find_recent); null after clear
};

}  // namespace tenferro::detail
