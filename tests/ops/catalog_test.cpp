// The op catalogue as a public query (tenferro/op_catalog.hpp) and the per-backend
// kernel tables behind `supports` (Note [Kernel tables]).
#include <set>
#include <string>

#include "ops/kernel_table.hpp"
#include "support/expect_error.hpp"

namespace tenferro {
namespace {

TEST(Catalog, CountAndNamesDeriveFromTheTable) {
  EXPECT_EQ(kNumOps, static_cast<int>(sizeof(kOps) / sizeof(kOps[0])));
  std::set<std::string> names;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = kOps[i];
    EXPECT_TRUE(names.insert(std::string(info.name)).second) << "repeated op name " << info.name;
    EXPECT_EQ(op_name(static_cast<OpId>(i)), info.name);
    EXPECT_EQ(find_op(info.name), static_cast<OpId>(i)) << info.name;
    EXPECT_GE(info.outputs, 1) << info.name;
    EXPECT_GE(info.inputs, -1) << info.name;
    EXPECT_NE(op_family_name(info.family), "?") << info.name;
  }
  EXPECT_EQ(find_op("no_such_op"), std::nullopt);
  EXPECT_EQ(find_op(""), std::nullopt);
}

TEST(Catalog, MultiOutputRowsListEveryOutput) {
  EXPECT_EQ(op_info(OpId::svd).outputs, 3);
  EXPECT_EQ(op_info(OpId::qr).outputs, 2);
  EXPECT_EQ(op_info(OpId::eigh).outputs, 2);
  EXPECT_EQ(op_info(OpId::eig).outputs, 2);
  EXPECT_EQ(op_info(OpId::lu).outputs, 3);
  EXPECT_EQ(op_info(OpId::lu_factor).outputs, 2);
  EXPECT_EQ(op_info(OpId::slogdet).outputs, 2);
  EXPECT_EQ(op_info(OpId::lstsq).outputs, 3);
  EXPECT_EQ(op_info(OpId::add).outputs, 1);
  EXPECT_EQ(op_info(OpId::einsum).inputs, -1);
  EXPECT_EQ(op_info(OpId::grouped_gemm).inputs, 3);
  EXPECT_EQ(op_info(OpId::svd).family, OpFamily::linalg);
  EXPECT_EQ(op_info(OpId::tanh).family, OpFamily::analytic);
}

TEST(Catalog, SupportsFollowsDtypeSetsOnTheCpu) {
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op = static_cast<OpId>(i);
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dt = static_cast<DType>(d);
      EXPECT_EQ(supports(op, dt, DeviceKind::cpu), in_set(dt, kOps[i].dtypes)) << kOps[i].name << " " << dtype_name(dt);
    }
  }
  EXPECT_TRUE(supports(OpId::add, DType::i32, DeviceKind::cpu));
  EXPECT_FALSE(supports(OpId::add, DType::b8, DeviceKind::cpu));
  EXPECT_FALSE(supports(OpId::exp, DType::i64, DeviceKind::cpu));
  EXPECT_TRUE(supports(OpId::svd, DType::c64, DeviceKind::cpu));
}

TEST(Catalog, SupportsRejectsValuesOutsideTheEnums) {
  EXPECT_FALSE(supports(static_cast<OpId>(kNumOps), DType::f64, DeviceKind::cpu));
  EXPECT_FALSE(supports(static_cast<OpId>(60000), DType::f64, DeviceKind::cpu));
  EXPECT_FALSE(supports(OpId::add, static_cast<DType>(42), DeviceKind::cpu));
  EXPECT_FALSE(supports(OpId::add, DType::f64, static_cast<DeviceKind>(9)));
  EXPECT_EQ(device_name(static_cast<DeviceKind>(9)), "?");
}

TEST(Catalog, CudaHasNoKernelsYet) {
  // With TENFERRO_ENABLE_CUDA every entry is a stub; without it the table is absent.
  const detail::KernelTable* t = detail::kernel_table(DeviceKind::cuda);
  if (t) {
    for (const detail::KernelEntry& e : *t) EXPECT_EQ(e.kind, detail::KernelEntry::Kind::stub);
  }
  for (int i = 0; i < kNumOps; ++i) EXPECT_FALSE(supports(static_cast<OpId>(i), DType::f64, DeviceKind::cuda));
  for (const detail::KernelEntry& e : detail::cpu_kernel_table()) EXPECT_EQ(e.kind, detail::KernelEntry::Kind::kernel);
}

TEST(Catalog, UnsupportedDeviceNamesOpAndDevice) {
  const std::string msg = testing::expect_error<UnsupportedError>([] { detail::throw_unsupported_on(OpId::svd, DeviceKind::cuda); }, "svd");
  EXPECT_NE(msg.find("cuda"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tenferro
