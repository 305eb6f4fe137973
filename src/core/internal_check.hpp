#pragma once
// Internal headers include this first: they are not part of the installed API and
// refuse inclusion from outside the library's own build (tests and benchmarks define
// TENFERRO_BUILDING_LIBRARY through the tenferro_internal target).
#if !defined(TENFERRO_BUILDING_LIBRARY)
#error "tenferro internal header included from outside src/; include <tenferro/tenferro.hpp> instead"
#endif

/// Forces inlining of a small helper on a fixed-cost path, where GCC's heuristics keep
/// it out of line (an out-of-line call there costs a measurable share of a tiny op).
#if defined(__GNUC__) || defined(__clang__)
#define TENFERRO_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TENFERRO_ALWAYS_INLINE inline
#endif
