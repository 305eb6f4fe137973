#pragma once
/// \file indexing.hpp
/// Indexing operations (being written).
#include "tenferro/ops.hpp"
