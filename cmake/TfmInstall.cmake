# `cmake --install build --prefix P`: headers (with the generated .inc),
# libtfm.so, the tools and P/lib/cmake/tfm/tfmConfig.cmake exporting
# tfm::tfm (docs/embedding.md).
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

# A sanitized libtfm.so (TFM_SANITIZE=1 builds, docs/fuzzing.md) needs the
# sanitizer runtime in the program that links it: consumers get the flags
# (and must use the same compiler, clang).
if(LLVM_USE_SANITIZER)
  set_property(TARGET tfm APPEND PROPERTY INTERFACE_LINK_OPTIONS
    $<INSTALL_INTERFACE:-fsanitize=address$<COMMA>undefined>)
endif()
install(TARGETS tfm EXPORT tfmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tfm ${PROJECT_SOURCE_DIR}/include/tfm-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/tfm
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc")

# The tools find libMLIR.so where Debian put it.
set(TFM_TOOLS tfm-opt tfm-import-hf tfm-run tfm-train)
set_target_properties(${TFM_TOOLS} PROPERTIES INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS ${TFM_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(TFM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tfm)
install(EXPORT tfmTargets NAMESPACE tfm:: DESTINATION ${TFM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tfmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tfmConfig.cmake
  INSTALL_DESTINATION ${TFM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tfmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tfmConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/tfmConfigVersion.cmake
  DESTINATION ${TFM_CMAKE_DIR})
