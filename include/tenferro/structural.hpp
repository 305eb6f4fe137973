#pragma once
/// \file structural.hpp
/// Structural operations (being written).
#include "tenferro/ops.hpp"
