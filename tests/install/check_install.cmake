# SPDX-License-Identifier: MIT
# Installs the build into PREFIX and runs the installed tenet on the README's example.
#   cmake -DBUILD_DIR=... -DPREFIX=... -DBINDIR=bin -DDATADIR=share -DMANDIR=share/man -P check_install.cmake
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status}):\n${output}")
endif()

set(tenet "${PREFIX}/${BINDIR}/tenet")
set(topology "${PREFIX}/${DATADIR}/tenet/topologies/ring-fc-switch-2x4x8.json")
foreach(path "${tenet}" "${topology}" "${PREFIX}/${MANDIR}/man1/tenet.1")
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "not installed: ${path}\n${output}")
  endif()
endforeach()

execute_process(COMMAND "${tenet}" synth -t "${topology}" -c allreduce --size 1GiB -o "${PREFIX}/allreduce.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 300)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "installed tenet failed (${status}):\n${stdout}\n${stderr}")
endif()
string(FIND "${stdout}" "verified             yes" at)
if(at EQUAL -1 OR NOT EXISTS "${PREFIX}/allreduce.json")
  message(FATAL_ERROR "installed tenet did not verify and write its schedule:\n${stdout}\n${stderr}")
endif()
