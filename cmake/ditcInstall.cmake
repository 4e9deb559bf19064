# `cmake --install`: the tools, the public headers (with the tablegen'd
# .inc files they include), the libraries, the bundled models and the
# ditc CMake package (find_package(ditc CONFIG), imported targets ditc::*).
# Three export sets, so that a consumer asks only for what it links:
#   ditcCoreTargets      support, checkpoint, plan_reader, model_spec, deployment, layout (no MLIR, no torch)
#   ditcRuntimeTargets   runtime (libtorch + c10d)
#   ditcCompilerTargets  dialect, importer, legality, transforms, plan, passes (MLIR)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DITC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ditc)

install(TARGETS ditc dit-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(DITC_BUILD_RUNTIME)
  # ditc calibrate runs the dit-calibrate beside it.
  install(TARGETS dit-run dit-calibrate dit-sentencepiece RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# An installed ditc finds these next to itself (bin/../share/ditc/models).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ditc/models)

# Headers: include/ditc/**, the dialect's dit/IR/*.h and the .inc files
# they include, the runtime's ditc/Runtime/*.h.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ditc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/ditc/Transforms/Passes.h.inc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ditc/Transforms)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dialects/dit/IR/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dit/IR
        FILES_MATCHING PATTERN "*.h")
install(FILES
          ${PROJECT_BINARY_DIR}/dialects/dit/IR/DitDialect.h.inc
          ${PROJECT_BINARY_DIR}/dialects/dit/IR/DitOps.h.inc
          ${PROJECT_BINARY_DIR}/dialects/dit/IR/DitEnums.h.inc
          ${PROJECT_BINARY_DIR}/dialects/dit/IR/DitAttrs.h.inc
          ${PROJECT_BINARY_DIR}/dialects/dit/IR/DitInterfaces.h.inc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dit/IR)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/ditc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")

# ditc::<name> for each library.
set_target_properties(DitcSupport PROPERTIES EXPORT_NAME support)
set_target_properties(DitcPlanReader PROPERTIES EXPORT_NAME plan_reader)
set_target_properties(DitcCheckpoint PROPERTIES EXPORT_NAME checkpoint)
set_target_properties(DitcVaeConfig PROPERTIES EXPORT_NAME vae_config)
set_target_properties(DitcTextConfig PROPERTIES EXPORT_NAME text_config)
set_target_properties(DitcModelSpec PROPERTIES EXPORT_NAME model_spec)
set_target_properties(DitcDeployment PROPERTIES EXPORT_NAME deployment)
set_target_properties(DitcLayout PROPERTIES EXPORT_NAME layout)
set_target_properties(DitcPlanWriter PROPERTIES EXPORT_NAME plan_writer)
set_target_properties(DitIR PROPERTIES EXPORT_NAME dialect)
set_target_properties(DitcImporter PROPERTIES EXPORT_NAME importer)
set_target_properties(DitcLegality PROPERTIES EXPORT_NAME legality)
set_target_properties(DitcTransforms PROPERTIES EXPORT_NAME transforms)
set_target_properties(DitcStepAccounting PROPERTIES EXPORT_NAME step_accounting)
set_target_properties(DitcPlan PROPERTIES EXPORT_NAME plan)
set_target_properties(DitcPasses PROPERTIES EXPORT_NAME passes)

function(ditc_install_export set)
  install(TARGETS ${ARGN} EXPORT ${set}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ${set} NAMESPACE ditc:: DESTINATION ${DITC_INSTALL_CMAKEDIR})
endfunction()

ditc_install_export(ditcCoreTargets
  DitcSupport DitcCheckpoint DitcVaeConfig DitcTextConfig DitcPlanReader DitcModelSpec DitcDeployment
  DitcLayout DitcPlanWriter)
ditc_install_export(ditcCompilerTargets
  DitIR DitcImporter DitcLegality DitcTransforms DitcStepAccounting DitcPlan
  DitcPasses)
if(DITC_BUILD_RUNTIME)
  set_target_properties(DitcRuntime PROPERTIES EXPORT_NAME runtime)
  set_target_properties(DitcTokenizers PROPERTIES EXPORT_NAME tokenizers)
  ditc_install_export(ditcRuntimeTargets DitcRuntime DitcTokenizers)
endif()

# The config records where this build found its dependencies, as hints.
set(DITC_CONFIG_MLIR_DIR "${MLIR_DIR}")
set(DITC_CONFIG_TORCH_DIR "${Torch_DIR}")
get_filename_component(DITC_CONFIG_TORCH_PACKAGE "${DITC_TORCH_LIB_DIR}/.." ABSOLUTE)
set(DITC_CONFIG_NLOHMANN_DIR "${nlohmann_json_DIR}")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/ditcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/ditcConfig.cmake
  INSTALL_DESTINATION ${DITC_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/ditcConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
          ${PROJECT_BINARY_DIR}/cmake/ditcConfig.cmake
          ${PROJECT_BINARY_DIR}/cmake/ditcConfigVersion.cmake
        DESTINATION ${DITC_INSTALL_CMAKEDIR})
