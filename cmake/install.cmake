# Install rules and package files for libmxq (included by the top-level CMakeLists.txt when
# MXQ_INSTALL is ON). Consumers find mxq three ways: pkg-config (mxq.pc), CMake
# (find_package(mxq) -> mxq::mxq) and a plain -I/-L. Only libmxq.so and the public headers are
# installed: mxq_core is linked into the .so by path, so the exported target never names it, and
# spdlog/fmt/CUDA stay private to the library.
include(CMakePackageConfigHelpers)

set(MXQ_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mxq" CACHE STRING
    "Where mxqConfig.cmake goes, relative to the prefix")

install(TARGETS mxq EXPORT mxqTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)

install(FILES
    ${PROJECT_SOURCE_DIR}/include/mxq/mxq.h
    ${PROJECT_BINARY_DIR}/include/mxq/mxq_version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mxq COMPONENT development)

install(EXPORT mxqTargets NAMESPACE mxq:: FILE mxqTargets.cmake
  DESTINATION ${MXQ_INSTALL_CMAKEDIR} COMPONENT development)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mxqConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mxqConfig.cmake
  INSTALL_DESTINATION ${MXQ_INSTALL_CMAKEDIR})
# SameMajorVersion: the SONAME is the major version, so any 0.x.y / 1.x.y of the same major is
# ABI-compatible with what the consumer asked for.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mxqConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mxqConfig.cmake ${PROJECT_BINARY_DIR}/mxqConfigVersion.cmake
  DESTINATION ${MXQ_INSTALL_CMAKEDIR} COMPONENT development)

# pkg-config: relocatable. prefix is derived from ${pcfiledir}, so a prefix copied or moved elsewhere
# (a wheel, a tarball, `cmake --install --prefix` at a path unknown at configure time) still works.
# That needs the lib and include dirs relative to the prefix; absolute ones are written as given.
set(MXQ_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(MXQ_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(MXQ_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(MXQ_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  # One ".." per component of <libdir>/pkgconfig (lib/pkgconfig -> ../.., lib/x86_64-linux-gnu/pkgconfig -> ../../..).
  string(REGEX REPLACE "[^/]+" ".." MXQ_PC_UP "${MXQ_PC_DIR}")
  string(REGEX REPLACE "/+$" "" MXQ_PC_UP "${MXQ_PC_UP}")
  set(MXQ_PC_PREFIX "\${pcfiledir}/${MXQ_PC_UP}")
  set(MXQ_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(MXQ_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/mxq.pc.in ${PROJECT_BINARY_DIR}/mxq.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mxq.pc DESTINATION ${MXQ_PC_DIR} COMPONENT development)
