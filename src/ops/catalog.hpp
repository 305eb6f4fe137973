#pragma once
// The op catalogue for the library's own code (the table itself is public:
// tenferro/op_catalog.hpp). Internal code names ops as detail::OpId::name.
#include "core/internal_check.hpp"

#include "tenferro/op_catalog.hpp"

namespace tenferro::detail {

using tenferro::AdStatus;
using tenferro::kNumOps;
using tenferro::kOps;
using tenferro::op_info;
using tenferro::op_name;
using tenferro::OpFamily;
using tenferro::OpId;
using tenferro::OpInfo;

}  // namespace tenferro::detail
