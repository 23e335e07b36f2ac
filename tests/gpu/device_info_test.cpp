#include "gpu/device_info.hpp"

#include <gtest/gtest.h>

namespace ncast::gpu {
namespace {

TEST(DeviceInfo, DescribesEveryUsableDevice) {
  std::string why;
  const auto devices = usable_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no usable CUDA device: " << why;
  for (const auto& d : devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.major, 7) << "CUDA 13 runs on sm_75 and newer only";
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_GT(d.memory_bytes, std::size_t{1} << 30);
    EXPECT_NE(describe(d).find("sm_"), std::string::npos);
  }
}

TEST(DeviceInfo, NoDeviceGivesAReason) {
  std::string why;
  if (!usable_devices(&why).empty()) GTEST_SKIP() << "a device is present; this case is for machines without one";
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace ncast::gpu
