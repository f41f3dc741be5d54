# SPDX-License-Identifier: MIT
# Runs the tenet binary once and checks its exit code and output. Invoked by CTest as
#   cmake -DTENET=... -DARGS=a;b;c -DEXIT=2 [-DSTDERR=text] [-DSTDOUT=text] [-DNO_FILE=path]
#         [-DWORKDIR=dir] [-DEMPTY_LAST=1] -P run_case.cmake
# STDERR / STDOUT must appear verbatim in the stream (a substring, so long tables need not be
# repeated whole). NO_FILE must not exist afterwards: failed runs leave nothing behind.
string(REPLACE "@@" ";" ARGS "${ARGS}")
foreach(stream STDERR STDOUT)
  if(DEFINED ${stream})
    string(REPLACE "@SEMI@" ";" ${stream} "${${stream}}")
  endif()
endforeach()
if(DEFINED NO_FILE)
  file(REMOVE "${NO_FILE}")
endif()
if(NOT DEFINED WORKDIR)
  set(WORKDIR "${CMAKE_CURRENT_BINARY_DIR}")
endif()
# A list drops empty elements, so an empty last argument (-o "") is asked for with EMPTY_LAST.
if(EMPTY_LAST)
  set(empty_last "")
  execute_process(COMMAND "${TENET}" ${ARGS} "${empty_last}"
    WORKING_DIRECTORY "${WORKDIR}"
    RESULT_VARIABLE actual_exit OUTPUT_VARIABLE actual_stdout ERROR_VARIABLE actual_stderr
    TIMEOUT 120)
else()
  execute_process(COMMAND "${TENET}" ${ARGS}
    WORKING_DIRECTORY "${WORKDIR}"
    RESULT_VARIABLE actual_exit OUTPUT_VARIABLE actual_stdout ERROR_VARIABLE actual_stderr
    TIMEOUT 120)
endif()
set(report "command: tenet ${ARGS}\nexit: ${actual_exit}\nstdout:\n${actual_stdout}\nstderr:\n${actual_stderr}")
if(NOT "${actual_exit}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "expected exit ${EXIT}\n${report}")
endif()
if(DEFINED STDERR)
  string(FIND "${actual_stderr}" "${STDERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks:\n${STDERR}\n${report}")
  endif()
endif()
if(DEFINED STDOUT)
  string(FIND "${actual_stdout}" "${STDOUT}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stdout lacks:\n${STDOUT}\n${report}")
  endif()
endif()
if(DEFINED NO_FILE AND EXISTS "${NO_FILE}")
  message(FATAL_ERROR "${NO_FILE} was written by a failing run\n${report}")
endif()
