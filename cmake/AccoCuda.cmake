# ACCO_WITH_CUDA = AUTO (default) or ON: the CUDA backend is built. It is on the driver API, which
# acco loads with dlopen at run time (modules/device/src/cuda/driver.cpp), so it needs no toolkit:
# ON and AUTO are the same. OFF leaves the backend out. Sets ACCO_HAVE_CUDA to ON or OFF for
# modules/device and for the package config, and ACCO_HAVE_CUDA_TOOLKIT when the toolkit is found
# (then NVTX ranges are compiled in).
set(ACCO_WITH_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO (= ON), ON, OFF")
set_property(CACHE ACCO_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)

string(TOUPPER "${ACCO_WITH_CUDA}" acco_with_cuda)
if(acco_with_cuda MATCHES "^(ON|YES|TRUE|Y|1)$")
  set(acco_with_cuda ON)
elseif(acco_with_cuda MATCHES "^(OFF|NO|FALSE|N|0)$")
  set(acco_with_cuda OFF)
elseif(NOT acco_with_cuda STREQUAL "AUTO")
  message(FATAL_ERROR "ACCO_WITH_CUDA must be AUTO, ON or OFF (got '${ACCO_WITH_CUDA}')")
endif()

set(acco_have_cuda OFF)
set(acco_have_cuda_toolkit OFF)
if(NOT acco_with_cuda STREQUAL "OFF")
  set(acco_have_cuda ON)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(acco_have_cuda_toolkit ON)
  endif()
endif()

# Cache entries so scripts (scripts/gpu-check) can tell from CMakeCache.txt what was built;
# INTERNAL implies FORCE, so every configure rewrites them.
set(ACCO_HAVE_CUDA ${acco_have_cuda} CACHE INTERNAL "Whether the CUDA backend is built")
set(ACCO_HAVE_CUDA_TOOLKIT ${acco_have_cuda_toolkit} CACHE INTERNAL
    "Whether the CUDA toolkit was found (NVTX ranges)")
if(ACCO_HAVE_CUDA AND ACCO_HAVE_CUDA_TOOLKIT)
  message(STATUS "acco: CUDA backend on, driver loaded at run time (toolkit ${CUDAToolkit_VERSION}"
                 " found: NVTX ranges on)")
elseif(ACCO_HAVE_CUDA)
  message(STATUS "acco: CUDA backend on, driver loaded at run time (no toolkit: NVTX ranges off)")
else()
  message(STATUS "acco: CUDA backend off (ACCO_WITH_CUDA=${ACCO_WITH_CUDA})")
endif()
