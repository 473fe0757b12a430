// The PCI ID database of the generated machines (see machines.hpp).
#include "machines.hpp"

namespace acco::testing {

std::string_view pci_ids_fixture() {
  return R"PCIIDS(#
#	List of PCI ID's
#
#	Version: 2023.04.10
#	Date:    2023-04-10 20:08:02
#
#	The lines of the PCI ID Project's database (https://pci-ids.ucw.cz/, as Debian's pci.ids
#	package ships it) for the ids of acco's generated test machines. 10de:2335 (H200) and
#	10de:22a3 (NVSwitch) were not listed yet in this version.
#
#	The database can be distributed under either the GNU General Public License (version 2
#	or higher) or the 3-clause BSD License; its copyright is held by Martin Mares and Albert
#	Pool.
#

# Vendors, devices and subsystems. Please keep sorted.

1000  Broadcom / LSI
	c010  PEX880xx PCIe Gen 4 Switch
		1000 100b  PEX88000 PCIe Gen 4 Virtual Upstream/Downstream Port
	c030  PEX890xx PCIe Gen 5 Switch
		1000 100b  PEX89000 PCIe Gen 5 Virtual Upstream/Downstream Port
1002  Advanced Micro Devices, Inc. [AMD/ATI]
	740f  Aldebaran/MI200 [Instinct MI210]
1013  Cirrus Logic
	00b8  GD 5446
		1af4 1100  QEMU Virtual Machine
1022  Advanced Micro Devices, Inc. [AMD]
	1480  Starship/Matisse Root Complex
	1483  Starship/Matisse GPP Bridge
104c  Texas Instruments
	8232  XIO3130 PCI Express Switch (Upstream)
	8233  XIO3130 PCI Express Switch (Downstream)
10de  NVIDIA Corporation
	20f1  GA100 [A100 PCIe 40GB]
	2330  GH100[H100 SXM5 80GB]
	26b1  AD102GL [L6000 / RTX 6000 Ada Generation]
144d  Samsung Electronics Co Ltd
	a80a  NVMe SSD Controller PM9A1/PM9A3/980PRO
15b3  Mellanox Technologies
	1015  MT27710 Family [ConnectX-4 Lx]
		15b3 0003  Stand-up ConnectX-4 Lx EN, 25GbE dual-port SFP28, PCIe3.0 x8, MCX4121A-ACAT
	101b  MT28908 Family [ConnectX-6]
	101d  MT2892 Family [ConnectX-6 Dx]
	1021  MT2910 Family [ConnectX-7]
	673c  MT25408A0-FCC-QI ConnectX, Dual Port 40Gb/s InfiniBand / 10GigE Adapter IC with PCIe 2.0 x8 5.0GT/s Interface
1a03  ASPEED Technology, Inc.
	2000  ASPEED Graphics Family
1af4  Red Hat, Inc.
	1041  Virtio 1.0 network device
	1042  Virtio 1.0 block device
	1044  Virtio 1.0 RNG
	1045  Virtio 1.0 memory balloon
	1053  Virtio 1.0 socket
1b36  Red Hat, Inc.
	000c  QEMU PCIe Root port
8086  Intel Corporation
	09a2  Ice Lake Memory Map/VT-d
	2250  Xeon Phi coprocessor 5100 series
	29c0  82G33/G31/P35/P31 Express DRAM Controller
	37d3  Ethernet Connection X722 for 10GbE SFP+
	a194  C620 Series Chipset Family PCI Express Root Port #5

# List of known device classes, subclasses and programming interfaces

C 02  Network controller
	00  Ethernet controller
	07  Infiniband controller
C 03  Display controller
	00  VGA compatible controller
		00  VGA controller
	02  3D controller
)PCIIDS";
}

}  // namespace acco::testing
