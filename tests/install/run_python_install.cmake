# ctest script (cmake -P) behind the `install_python` test: installs the build tree into
# WORK_DIR/prefix and imports the installed package with PYTHON from SITE (relative to
# the prefix), checking that it is the installed copy and that an op runs.
# Inputs (-D): TENFERRO_BINARY_DIR WORK_DIR PYTHON SITE [CONFIG]
cmake_minimum_required(VERSION 3.25)
foreach(var TENFERRO_BINARY_DIR WORK_DIR PYTHON SITE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_python_install.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${TENFERRO_BINARY_DIR}" --prefix "${prefix}" --config "${CONFIG}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "[install_python] install failed (${rc})")
endif()
set(check [=[
import sys, numpy as np, tenferro as tf
assert tf.__file__.startswith(sys.argv[1]), tf.__file__
with tf.CpuBackend(num_threads=1).session() as s:
    assert np.allclose(np.asarray(tf.add(s, np.ones(3), 1.0)), 2.0)
print("[install_python] imported", tf.__file__)
]=])
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${prefix}/${SITE}" "${PYTHON}" -c "${check}" "${prefix}"
                WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "[install_python] the installed package does not import (${rc})")
endif()
