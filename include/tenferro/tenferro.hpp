#pragma once
/// \file tenferro.hpp
/// Umbrella header: everything public.
#include "tenferro/cpu_backend.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/dtype.hpp"
#include "tenferro/einsum_path.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/error.hpp"
#include "tenferro/fft.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/random.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/shape.hpp"
#include "tenferro/structural.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/typed_tensor.hpp"
