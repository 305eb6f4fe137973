#pragma once
/// \file export.hpp
/// Symbol visibility: the library is built with hidden visibility; public API is marked.
#if defined(TENFERRO_STATIC)
#define TENFERRO_API
#else
#define TENFERRO_API __attribute__((visibility("default")))
#endif
