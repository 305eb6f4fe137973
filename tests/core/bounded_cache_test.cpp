// BoundedCache (Note [Bounded caches]): hits and misses, LRU eviction within a set and
// under the entry and byte limits, the scratch slot, clear and new limits, and
// ErasedHandle destruction.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/bounded_cache.hpp"

namespace tenferro::detail {
namespace {

// A key of `n` words starting at `v`; the hash is chosen by the test (to force sets).
struct Key {
  std::vector<std::int64_t> w;
  std::uint64_t hash;
};
Key key(std::int64_t v, std::uint64_t hash, int n = 2) {
  Key k{std::vector<std::int64_t>(static_cast<std::size_t>(n), v), hash};
  return k;
}

TEST(BoundedCache, HitMissAndStats) {
  BoundedCache<std::string> c(8, 1 << 20);
  const Key a = key(1, 11), b = key(2, 12);
  EXPECT_EQ(c.find(a.w.data(), 2, a.hash), nullptr);
  EXPECT_EQ(*c.insert(a.w.data(), 2, a.hash, "a"), "a");
  ASSERT_NE(c.find(a.w.data(), 2, a.hash), nullptr);
  EXPECT_EQ(*c.find(a.w.data(), 2, a.hash), "a");
  EXPECT_EQ(c.find(b.w.data(), 2, b.hash), nullptr);
  // Same hash, different words or length: a miss, never a false hit.
  const Key a2 = key(9, 11);
  EXPECT_EQ(c.find(a2.w.data(), 2, a2.hash), nullptr);
  EXPECT_EQ(c.find(a.w.data(), 1, a.hash), nullptr);
  const PlanCacheStats s = c.stats();
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.bytes, sizeof(std::string) + 2 * sizeof(std::int64_t));
  EXPECT_EQ(s.entry_limit, 8u);
  EXPECT_EQ(s.byte_limit, std::size_t{1} << 20);
}

TEST(BoundedCache, FindRecentProbesTheLastEntryUsed) {
  BoundedCache<int> c(8, 1 << 20);
  const Key a = key(1, 11), b = key(2, 12);
  const auto is = [](std::int64_t v) {
    return [v](const std::int64_t* k, int len) { return len == 2 && k[0] == v && k[1] == v; };
  };
  EXPECT_EQ(c.find_recent(is(1)), nullptr);  // nothing used yet
  c.insert(a.w.data(), 2, a.hash, 10);
  ASSERT_NE(c.find_recent(is(1)), nullptr);
  EXPECT_EQ(*c.find_recent(is(1)), 10);
  EXPECT_EQ(c.find_recent(is(2)), nullptr);  // a rejected probe counts nothing
  c.insert(b.w.data(), 2, b.hash, 20);
  EXPECT_EQ(c.find_recent(is(1)), nullptr);  // b is the last used now
  EXPECT_NE(c.find(a.w.data(), 2, a.hash), nullptr);
  EXPECT_EQ(*c.find_recent(is(1)), 10);      // and a again after find
  EXPECT_EQ(c.stats().hits, 4u);
  EXPECT_EQ(c.stats().misses, 0u);
  c.clear();
  EXPECT_EQ(c.find_recent(is(1)), nullptr);
  c.insert(a.w.data(), 2, a.hash, 10);
  c.set_limits(0, 0);                         // new slots: no stale probe
  EXPECT_EQ(c.find_recent(is(1)), nullptr);
  c.insert(a.w.data(), 2, a.hash, 30);        // the scratch value is never found
  EXPECT_EQ(c.find_recent(is(1)), nullptr);
}

TEST(BoundedCache, LeastRecentlyUsedOfASetIsEvicted) {
  BoundedCache<int> c(8, 1 << 20);  // 2 sets of 4 ways
  std::vector<Key> ks;
  for (int i = 0; i < 4; ++i) ks.push_back(key(i, 2 * static_cast<std::uint64_t>(i)));  // even hashes: one set
  for (int i = 0; i < 4; ++i) c.insert(ks[i].w.data(), 2, ks[i].hash, int{i});
  EXPECT_NE(c.find(ks[0].w.data(), 2, ks[0].hash), nullptr);  // 0 is now the most recent
  const Key extra = key(4, 8);
  c.insert(extra.w.data(), 2, extra.hash, 4);
  EXPECT_NE(c.find(ks[0].w.data(), 2, ks[0].hash), nullptr);
  EXPECT_EQ(c.find(ks[1].w.data(), 2, ks[1].hash), nullptr);  // the oldest went
  EXPECT_EQ(c.stats().evictions, 1u);
  EXPECT_EQ(c.stats().entries, 4u);
}

TEST(BoundedCache, FullyAssociativeReplacesTheOldestOverall) {
  BoundedCache<int> c(4, 1 << 20, BoundedCache<int>::kFullyAssociative);
  std::vector<Key> ks;
  for (int i = 0; i < 6; ++i) ks.push_back(key(i, 0));  // every hash equal: a set cache would thrash
  for (int i = 0; i < 4; ++i) c.insert(ks[i].w.data(), 2, ks[i].hash, int{i});
  EXPECT_EQ(c.stats().entries, 4u);
  EXPECT_NE(c.find(ks[0].w.data(), 2, ks[0].hash), nullptr);
  c.insert(ks[4].w.data(), 2, ks[4].hash, 4);
  EXPECT_EQ(c.find(ks[1].w.data(), 2, ks[1].hash), nullptr);
  for (int i : {0, 2, 3, 4}) EXPECT_NE(c.find(ks[i].w.data(), 2, ks[i].hash), nullptr) << i;
  EXPECT_EQ(c.stats().evictions, 1u);
}

TEST(BoundedCache, EntryAndByteLimitsEvictGlobally) {
  BoundedCache<int> c(3, 1 << 20);
  std::vector<Key> ks;
  for (int i = 0; i < 5; ++i) ks.push_back(key(i, static_cast<std::uint64_t>(i) * 7));
  for (int i = 0; i < 5; ++i) c.insert(ks[i].w.data(), 2, ks[i].hash, int{i});
  EXPECT_EQ(c.stats().entries, 3u);
  EXPECT_EQ(c.find(ks[0].w.data(), 2, ks[0].hash), nullptr);
  EXPECT_EQ(c.find(ks[1].w.data(), 2, ks[1].hash), nullptr);
  EXPECT_NE(c.find(ks[4].w.data(), 2, ks[4].hash), nullptr);

  const std::size_t one = sizeof(int) + 2 * sizeof(std::int64_t);
  BoundedCache<int> b(64, 2 * one);  // room for two entries by bytes
  for (int i = 0; i < 5; ++i) b.insert(ks[i].w.data(), 2, ks[i].hash, int{i});
  EXPECT_EQ(b.stats().entries, 2u);
  EXPECT_LE(b.stats().bytes, 2 * one);
  EXPECT_NE(b.find(ks[3].w.data(), 2, ks[3].hash), nullptr);
  EXPECT_NE(b.find(ks[4].w.data(), 2, ks[4].hash), nullptr);
}

TEST(BoundedCache, TooLargeOrDisabledGoesToTheScratchSlot) {
  BoundedCache<std::string> c(0, 1 << 20);
  const Key a = key(1, 1);
  std::string* v = c.insert(a.w.data(), 2, a.hash, "kept until the next insert");
  EXPECT_EQ(*v, "kept until the next insert");
  EXPECT_EQ(c.find(a.w.data(), 2, a.hash), nullptr);
  EXPECT_EQ(c.stats().entries, 0u);
  BoundedCache<std::string> d(8, 4);  // no entry fits in 4 bytes
  d.insert(a.w.data(), 2, a.hash, "x");
  EXPECT_EQ(d.stats().entries, 0u);
  EXPECT_EQ(d.stats().bytes, 0u);
}

TEST(BoundedCache, ClearAndNewLimitsDestroyValues) {
  int destroyed = 0;
  struct Probe {
    int* n;
    explicit Probe(int* p) : n(p) {}
    Probe(Probe&& o) noexcept : n(o.n) { o.n = nullptr; }
    ~Probe() {
      if (n) ++*n;
    }
  };
  {
    BoundedCache<Probe> c(8, 1 << 20);
    for (int i = 0; i < 3; ++i) {
      const Key k = key(i, static_cast<std::uint64_t>(i));
      c.insert(k.w.data(), 2, k.hash, Probe(&destroyed));
    }
    c.clear();
    EXPECT_EQ(destroyed, 3);
    EXPECT_EQ(c.stats().entries, 0u);
    EXPECT_EQ(c.stats().bytes, 0u);
    EXPECT_EQ(c.stats().evictions, 0u);  // clearing is not evicting
    const Key k = key(7, 7);
    c.insert(k.w.data(), 2, k.hash, Probe(&destroyed));
    c.set_limits(16, 1 << 10);
    EXPECT_EQ(destroyed, 4);
    EXPECT_EQ(c.stats().entry_limit, 16u);
    c.insert(k.w.data(), 2, k.hash, Probe(&destroyed));
  }
  EXPECT_EQ(destroyed, 5);  // the destructor drops what is left
}

TEST(ErasedHandle, DestroysOnceThroughItsFunction) {
  static int calls = 0;
  calls = 0;
  auto destroy = [](void* p) noexcept {
    ++calls;
    delete static_cast<int*>(p);
  };
  {
    ErasedHandle h(new int(5), +destroy);
    EXPECT_EQ(*h.as<int>(), 5);
    ErasedHandle m(std::move(h));
    EXPECT_EQ(h.get(), nullptr);
    ErasedHandle n;
    n = std::move(m);
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace tenferro::detail
