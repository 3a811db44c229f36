// SPDX-License-Identifier: BSD-2-Clause
// CTransportWindow: a C API transport (kvmmio_transport) as an MmioDevice,
// so the test driver (MmioDriver) and a test machine's register window can
// reach it the way an embedder's vCPU loop does, through
// kvmmio_transport_mmio(). A failed access is a test failure.
#pragma once

#include <gtest/gtest.h>

#include "kvmmio/kvmmio.h"
#include "kvmmio/mmio_bus.h"

namespace kvmmio::virtio::test {

class CTransportWindow : public MmioDevice {
 public:
  explicit CTransportWindow(kvmmio_transport* transport) : transport_(transport) {}
  void mmio_read(uint64_t offset, std::span<uint8_t> data) override { access(offset, data.data(), data.size(), 0); }
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override {
    access(offset, const_cast<uint8_t*>(data.data()), data.size(), 1);
  }

 private:
  void access(uint64_t offset, uint8_t* data, size_t len, int is_write) {
    EXPECT_EQ(kvmmio_transport_mmio(transport_, offset, data, static_cast<uint32_t>(len), is_write), KVMMIO_OK)
        << kvmmio_last_error();
  }
  kvmmio_transport* transport_;
};

}  // namespace kvmmio::virtio::test
