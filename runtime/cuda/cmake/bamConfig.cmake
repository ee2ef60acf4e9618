# CMake package config for an installed BaM runtime:
#   find_package(bam REQUIRED)
#   target_link_libraries(app PRIVATE bam::bam)
get_filename_component(_bam_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET bam::bam)
  find_package(CUDAToolkit REQUIRED)
  find_package(Threads REQUIRED)
  add_library(bam::bam STATIC IMPORTED)
  set_target_properties(bam::bam PROPERTIES
    IMPORTED_LOCATION "${_bam_prefix}/lib/libbam.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_bam_prefix}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES "CUDA::cudart;Threads::Threads")
endif()
set(bam_FOUND TRUE)
unset(_bam_prefix)
