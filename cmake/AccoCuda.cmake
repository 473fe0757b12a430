# ACCO_WITH_CUDA = AUTO (default: the CUDA backend is built when the toolkit is found), ON (the
# toolkit is required; configuring fails without it) or OFF. Sets ACCO_HAVE_CUDA to ON or OFF for
# modules/dev and for the package config; with it on, CUDA::cudart_static exists.
set(ACCO_WITH_CUDA AUTO CACHE STRING
    "Build the CUDA backend: AUTO (when the toolkit is found), ON, OFF")
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
if(NOT acco_with_cuda STREQUAL "OFF")
  # 11.0: cudaPointerAttributes::type and cudaLaunchHostFunc as the backend uses them.
  find_package(CUDAToolkit 11.0 QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart_static)
    set(acco_have_cuda ON)
  elseif(acco_with_cuda STREQUAL "ON")
    message(FATAL_ERROR
      "ACCO_WITH_CUDA=ON but no usable CUDA toolkit (>= 11.0 with the static runtime) was found. "
      "Put nvcc on the PATH or set CUDAToolkit_ROOT, or configure with -DACCO_WITH_CUDA=AUTO|OFF.")
  endif()
endif()

# A cache entry so scripts (scripts/gpu-check) can tell from CMakeCache.txt what was built;
# INTERNAL implies FORCE, so every configure rewrites it.
set(ACCO_HAVE_CUDA ${acco_have_cuda} CACHE INTERNAL "Whether the CUDA backend is built")
if(ACCO_HAVE_CUDA)
  message(STATUS "acco: CUDA backend on (ACCO_WITH_CUDA=${ACCO_WITH_CUDA}, CUDA "
                 "${CUDAToolkit_VERSION} in ${CUDAToolkit_LIBRARY_DIR})")
elseif(acco_with_cuda STREQUAL "OFF")
  message(STATUS "acco: CUDA backend off (ACCO_WITH_CUDA=${ACCO_WITH_CUDA})")
else()
  message(STATUS "acco: CUDA backend off (ACCO_WITH_CUDA=AUTO and no CUDA toolkit >= 11.0 found)")
endif()
