// Reads machine.software from a machine's files (sysfs_source.cpp calls it with the others).
#pragma once

#include "acco/core/sysfs_reader.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo::detail {

// The NVIDIA kernel module (/proc/driver/nvidia/version), CDI specs (/etc/cdi, /var/run/cdi)
// and the CUDA components installed: library files whose names carry their full version
// (libcudart.so.12.4.127, libnccl.so.2.21.5, libcudnn.so.9.1.0) in the system's library
// directories and each /usr/local/cuda*/{lib64,targets/*/lib}; the toolkit's version.json (or
// the older version.txt); wheels' *.dist-info directories (nvidia_cuda_runtime_cu12-12.4.127,
// nvidia_nccl_cu13-2.28.9, nvidia_cudnn_cu12-9.1.0.70) in Python's site directories and in
// /usr/local/cuda*/dist-info; torch's version.py (__version__ and cuda); forward-compatibility
// drivers (/usr/local/cuda*/compat/libcuda.so.580.65.06). A directory reached twice through a
// link (/usr/local/cuda -> cuda-13.0) is read once.
void read_software(core::SysfsReader& in, Machine& m);

}  // namespace acco::topo::detail
