# ACCO_WITH_PYTHON = AUTO (default: on when Python 3 with its headers and pybind11 are found), ON
# (fails when either is missing) or OFF: the Python package `acco` (python/), a pybind11 extension
# `acco._core` beside pure-Python modules. The interpreter is /usr/bin/python3 unless
# Python3_EXECUTABLE says otherwise: Debian's python3-numpy and python3-torch are built for it,
# not for whichever python3 comes first on PATH. Sets ACCO_HAVE_PYTHON to ON or OFF.
set(ACCO_WITH_PYTHON AUTO CACHE STRING "Build the Python package: AUTO, ON, OFF")
set_property(CACHE ACCO_WITH_PYTHON PROPERTY STRINGS AUTO ON OFF)

string(TOUPPER "${ACCO_WITH_PYTHON}" acco_with_python)
if(acco_with_python MATCHES "^(ON|YES|TRUE|Y|1)$")
  set(acco_with_python ON)
elseif(acco_with_python MATCHES "^(OFF|NO|FALSE|N|0)$")
  set(acco_with_python OFF)
elseif(NOT acco_with_python STREQUAL "AUTO")
  message(FATAL_ERROR "ACCO_WITH_PYTHON must be AUTO, ON or OFF (got '${ACCO_WITH_PYTHON}')")
endif()

set(acco_have_python OFF)
set(acco_python_missing "")
if(NOT acco_with_python STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The interpreter the package is for")
  endif()
  find_package(Python3 3.9 QUIET COMPONENTS Interpreter Development.Module)
  if(NOT Python3_FOUND)
    set(acco_python_missing "Python 3 with its headers (Debian: python3-dev)")
  else()
    # pybind11's own FindPython path, on the interpreter found above.
    set(PYBIND11_FINDPYTHON ON)
    find_package(pybind11 2.10 CONFIG QUIET)
    if(NOT pybind11_FOUND)
      set(acco_python_missing "pybind11 (Debian: pybind11-dev)")
    else()
      set(acco_have_python ON)
    endif()
  endif()
  if(acco_with_python STREQUAL "ON" AND NOT acco_have_python)
    message(FATAL_ERROR "ACCO_WITH_PYTHON=ON but ${acco_python_missing} was not found")
  endif()
endif()

set(ACCO_HAVE_PYTHON ${acco_have_python} CACHE INTERNAL "Whether the Python package is built")
if(ACCO_HAVE_PYTHON)
  # Where `cmake --install` puts the package, relative to the prefix: Debian's interpreter looks in
  # lib/python3/dist-packages under /usr and lib/python3.X/dist-packages under /usr/local; others
  # in lib/python3.X/site-packages.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_path('platlib'))"
    OUTPUT_VARIABLE acco_python_platlib OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(acco_python_version "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
  if(acco_python_platlib MATCHES "dist-packages")
    if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
      set(acco_python_dir "lib/python3/dist-packages")
    else()
      set(acco_python_dir "lib/python${acco_python_version}/dist-packages")
    endif()
  else()
    set(acco_python_dir "lib/python${acco_python_version}/site-packages")
  endif()
  set(ACCO_PYTHON_INSTALL_DIR "${acco_python_dir}" CACHE STRING
      "Where cmake --install puts the Python package acco, relative to the prefix")
  message(STATUS "acco: Python package on (${Python3_EXECUTABLE} ${Python3_VERSION}, pybind11 "
                 "${pybind11_VERSION}), installed to ${ACCO_PYTHON_INSTALL_DIR}")
elseif(acco_with_python STREQUAL "OFF")
  message(STATUS "acco: Python package off (ACCO_WITH_PYTHON=OFF)")
else()
  message(STATUS "acco: Python package off (${acco_python_missing} not found)")
endif()
