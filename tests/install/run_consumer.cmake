# ctest script (cmake -P) behind the `install_consumer` test:
#   1. build the `tenferro` target (no-op when `cmake --build` already ran),
#   2. install the build tree into WORK_DIR/prefix,
#   3. configure + build tests/install/consumer against that prefix,
#   4. run the consumer.
# Inputs (-D): TENFERRO_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR
#              [CONFIG] [CXX_COMPILER] [GENERATOR] [WITH_MPI]
# WITH_MPI (the build had TENFERRO_ENABLE_MPI): also checks tenferro::mpi, builds the
# consumer's MPI program against it and runs it as a singleton (no mpiexec).
cmake_minimum_required(VERSION 3.25)

foreach(var TENFERRO_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run_step name)
  message(STATUS "[install_consumer] ${name}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[install_consumer] step '${name}' failed (${rc})")
  endif()
endfunction()

set(targets tenferro)
if(WITH_MPI)
  list(APPEND targets tenferro_mpi)
endif()
run_step("build tenferro"
  "${CMAKE_COMMAND}" --build "${TENFERRO_BINARY_DIR}" --target ${targets} --config "${CONFIG}")
run_step("install"
  "${CMAKE_COMMAND}" --install "${TENFERRO_BINARY_DIR}" --prefix "${prefix}" --config "${CONFIG}")

# The install must contain the headers, the shared library and the package files.
foreach(expected
    "include/tenferro/tenferro.hpp"
    "lib/cmake/tenferro/tenferroConfig.cmake"
    "lib/cmake/tenferro/tenferroConfigVersion.cmake"
    "lib/cmake/tenferro/tenferroTargets.cmake")
  if(NOT EXISTS "${prefix}/${expected}")
    message(FATAL_ERROR "[install_consumer] missing from install: ${prefix}/${expected}")
  endif()
endforeach()
if(WITH_MPI)
  foreach(expected "include/tenferro/mpi.hpp" "lib/cmake/tenferro/tenferroMpiTargets.cmake")
    if(NOT EXISTS "${prefix}/${expected}")
      message(FATAL_ERROR "[install_consumer] missing from install: ${prefix}/${expected}")
    endif()
  endforeach()
  file(GLOB installed_mpi_libs "${prefix}/lib/libtenferro_mpi.so*")
  if(NOT installed_mpi_libs)
    message(FATAL_ERROR "[install_consumer] missing from install: ${prefix}/lib/libtenferro_mpi.so*")
  endif()
  list(APPEND configure_extra "-DCONSUMER_MPI=ON")
elseif(EXISTS "${prefix}/include/tenferro/mpi.hpp")
  message(FATAL_ERROR "[install_consumer] include/tenferro/mpi.hpp installed without the MPI component")
endif()
file(GLOB installed_libs "${prefix}/lib/libtenferro.so*")
if(NOT installed_libs)
  message(FATAL_ERROR "[install_consumer] missing from install: ${prefix}/lib/libtenferro.so*")
endif()

set(configure_args -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
                   "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_BUILD_TYPE=${CONFIG}" ${configure_extra})
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run_step("configure consumer" "${CMAKE_COMMAND}" ${configure_args})
run_step("build consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" --config "${CONFIG}")

find_program(consumer_exe NAMES consumer
  PATHS "${consumer_build}" "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH REQUIRED)
run_step("run consumer" "${consumer_exe}")
if(WITH_MPI)
  find_program(consumer_mpi_exe NAMES consumer_mpi
    PATHS "${consumer_build}" "${consumer_build}/${CONFIG}" NO_DEFAULT_PATH REQUIRED)
  run_step("run consumer_mpi" "${consumer_mpi_exe}")
endif()
message(STATUS "[install_consumer] OK")
