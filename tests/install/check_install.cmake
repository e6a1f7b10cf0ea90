# SPDX-License-Identifier: Apache-2.0
# ctest install_example: install this build tree into a temporary prefix, configure and build the C++ example
# (docs/examples/cpp) against it with find_package(hetglm), run it on a bundled data set, and run the installed command.
# Variables: BUILD_DIR, SOURCE_DIR, WORK_DIR, DATA, CXX, GENERATOR, CXX_FLAGS, LINK_FLAGS.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
# Everything that is installed is built (a no-op after a full build).
run(${CMAKE_COMMAND} --build ${BUILD_DIR} --target hetglm)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component development)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component runtime)
foreach(f bin/hetglm include/hetglm/train.hpp include/hetglm/config.hpp include/hetglm/solvers/options.hpp
          include/hetglm/cross_validation.hpp lib/cmake/hetglm/hetglmConfig.cmake lib/cmake/hetglm/hetglmTargets.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/docs/examples/cpp -B ${WORK_DIR}/example -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/example)
run(${WORK_DIR}/example/certify ${DATA})
message(STATUS "${run_output}")
if(NOT run_output MATCHES "converged yes")
  message(FATAL_ERROR "the example did not certify its fit:\n${run_output}")
endif()
run(${WORK_DIR}/prefix/bin/hetglm --version)
if(NOT run_output MATCHES "^hetglm ")
  message(FATAL_ERROR "installed hetglm --version printed: ${run_output}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
