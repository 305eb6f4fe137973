#pragma once
// Internal headers include this first: they are not part of the installed API and
// refuse inclusion from outside the library's own build (tests and benchmarks define
// TENFERRO_BUILDING_LIBRARY through the tenferro_internal target).
#if !defined(TENFERRO_BUILDING_LIBRARY)
#error "tenferro internal header included from outside src/; include <tenferro/tenferro.hpp> instead"
#endif
