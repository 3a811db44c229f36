// SPDX-License-Identifier: BSD-2-Clause
// The in-kernel vGIC (v3 or v2): create, place, size, initialise; then the
// VM's routing (GSI n -> SPI n) and queued irqfds go live.
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <cstring>

#include "kvmmio/arch/arm64.h"
#include "kvmmio/base/error.h"
#include "kvmmio/vm.h"

namespace kvmmio::arm64 {
namespace {

uint32_t device_type(GicVersion v) {
  return v == GicVersion::kV3 ? KVM_DEV_TYPE_ARM_VGIC_V3 : KVM_DEV_TYPE_ARM_VGIC_V2;
}

void set_attr(int fd, uint32_t group, uint64_t attr, const void* value, const char* what) {
  kvm_device_attr a{};
  a.group = group;
  a.attr = attr;
  a.addr = reinterpret_cast<uint64_t>(value);
  if (::ioctl(fd, KVM_SET_DEVICE_ATTR, &a) != 0) throw_errno(std::string("vGIC: ") + what);
}

}  // namespace

const char* gic_name(GicVersion v) { return v == GicVersion::kV3 ? "GICv3" : "GICv2"; }

bool vgic_supported(Vm& vm, GicVersion v) {
  kvm_create_device cd{};
  cd.type = device_type(v);
  cd.flags = KVM_CREATE_DEVICE_TEST;
  return ::ioctl(vm.fd(), KVM_CREATE_DEVICE, &cd) == 0;
}

Vgic::Vgic(Vm& vm, GicVersion version, const GicLayout& layout, uint32_t nr_irqs)
    : version_(version), nr_irqs_(nr_irqs) {
  vm.kvm().require(KVM_CAP_DEVICE_CTRL, "KVM_CAP_DEVICE_CTRL", "the in-kernel vGIC");
  if (nr_irqs < 64 || nr_irqs > 1024 || nr_irqs % 32)
    throw std::invalid_argument("vGIC: nr_irqs must be a multiple of 32 in [64, 1024]");

  kvm_create_device cd{};
  cd.type = device_type(version);
  if (::ioctl(vm.fd(), KVM_CREATE_DEVICE, &cd) != 0) {
    const int err = errno;
    if (err == ENODEV || err == ENXIO) {
      const GicVersion other = version == GicVersion::kV3 ? GicVersion::kV2 : GicVersion::kV3;
      throw UserError(std::string(gic_name(version)) +
                      " is not available on this host: KVM_CREATE_DEVICE failed with " +
                      std::strerror(err) + " (the host's interrupt controller cannot present a "
                      "virtual " + gic_name(version) + "; use " + gic_name(other) +
                      " instead)");
    }
    errno = err;
    throw_errno(std::string("KVM_CREATE_DEVICE ") + gic_name(version));
  }
  fd_ = UniqueFd(static_cast<int>(cd.fd));

  if (version == GicVersion::kV3) {
    set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST, &layout.dist_base,
             "distributor address");
    set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST,
             &layout.redist_base, "redistributor address");
  } else {
    set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V2_ADDR_TYPE_DIST, &layout.dist_base,
             "distributor address");
    set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V2_ADDR_TYPE_CPU, &layout.cpu_base,
             "CPU interface address");
  }
  set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &nr_irqs, "number of IRQs");
  set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, nullptr, "init");

  // KVM installed GSI n -> SPI n for every SPI; keep the same in the VM's
  // table, since each later commit replaces KVM's table with ours.
  for (uint32_t spi = 0; spi < nr_irqs - kSpiBase; ++spi) vm.routing().add_irqchip(spi, 0, spi);
  vm.set_irqchip_ready();
}

void Vgic::clear_spis() {
  // The same offsets in GICv2's and GICv3's distributor (GICD_ICENABLERn,
  // GICD_ICPENDRn, GICD_ICACTIVERn), one bit per interrupt; word 0 is the
  // SGIs' and PPIs'. The attribute is the offset (GICv2: vCPU 0's view in
  // bits 39:32, the same for every vCPU for an SPI; GICv3: the
  // distributor's, with no MPIDR); the data 32 bits.
  struct Reg {
    uint32_t offset;
    const char* name;
  };
  const Reg regs[] = {{0x180, "GICD_ICENABLER"}, {0x280, "GICD_ICPENDR"}, {0x380, "GICD_ICACTIVER"}};
  const uint32_t all = 0xffffffffu;
  for (const Reg& r : regs)
    for (uint32_t word = 1; word < nr_irqs_ / 32; ++word)
      set_attr(fd_.get(), KVM_DEV_ARM_VGIC_GRP_DIST_REGS, r.offset + 4 * word, &all,
               (std::string("clearing SPIs through ") + r.name).c_str());
}

}  // namespace kvmmio::arm64
