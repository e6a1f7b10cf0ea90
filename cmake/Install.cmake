# SPDX-License-Identifier: Apache-2.0
# `cmake --install BUILD [--prefix P]`: the `hetglm` command (bin/), the static libraries (lib/), the public headers
# (include/hetglm/...) and the CMake package (lib/cmake/hetglm) whose target hetglm::hetglm brings train() and every
# library and dependency it needs: `find_package(hetglm)` + `target_link_libraries(app PRIVATE hetglm::hetglm)`
# (docs/examples/cpp). Components: `runtime` (the command) and `development` (libraries, headers, package); the
# Python wheel installs only its own component `python` (pyproject.toml).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_hetglm_export_libs hetglm_core hetglm_hls hetglm_fpga hetglm_backends hetglm_solvers hetglm_train)
if(TARGET hetglm_cuda)
  list(APPEND _hetglm_export_libs hetglm_cuda)
endif()
foreach(_t IN LISTS _hetglm_export_libs)
  target_include_directories(${_t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  string(REPLACE "hetglm_" "" _name ${_t})
  set_target_properties(${_t} PROPERTIES EXPORT_NAME ${_name})
  add_library(hetglm::${_name} ALIAS ${_t})
endforeach()
# hetglm::hetglm is train() (bindings/train) with everything below it.
set_target_properties(hetglm_train PROPERTIES EXPORT_NAME hetglm)
add_library(hetglm::hetglm ALIAS hetglm_train)

install(TARGETS ${_hetglm_export_libs} EXPORT hetglmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS hetglm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

foreach(_dir core/include solvers/include backends/include bindings/train/include fpga/include hls/include
             backends/cuda/include)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_dir})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
            FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
  endif()
endforeach()
install(FILES ${CMAKE_BINARY_DIR}/generated/hetglm/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hetglm
        COMPONENT development)

set(HETGLM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hetglm)
install(EXPORT hetglmTargets NAMESPACE hetglm:: DESTINATION ${HETGLM_CMAKE_DIR} FILE hetglmTargets.cmake
        COMPONENT development)
# What the config file must find again: the dependencies of the (static) libraries, by build option.
set(HETGLM_PACKAGE_MPI ${HETGLM_ENABLE_MPI})
set(HETGLM_PACKAGE_OPENCL ${HETGLM_ENABLE_OPENCL})
set(HETGLM_PACKAGE_CUDA ${HETGLM_ENABLE_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hetglmConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/generated/hetglmConfig.cmake
                              INSTALL_DESTINATION ${HETGLM_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/hetglmConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/hetglmConfig.cmake ${CMAKE_BINARY_DIR}/generated/hetglmConfigVersion.cmake
        DESTINATION ${HETGLM_CMAKE_DIR} COMPONENT development)
