# bam_add_runtime(<name> <root>): a static library <name> of the BaM
# runtime from the sources under <root> (src/, include/), compiled for the
# calling project's CMAKE_CUDA_ARCHITECTURES. Used by runtime/cuda's own
# CMakeLists.txt and by the bamgen package (bam::bam), so both build the
# same library. Needs CUDA enabled (project(... LANGUAGES CXX CUDA)).
function(bam_add_runtime name root)
  find_package(CUDAToolkit REQUIRED)
  find_package(Threads REQUIRED)
  file(GLOB _bam_sources CONFIGURE_DEPENDS "${root}/src/*.cpp" "${root}/src/*.cu")
  add_library(${name} STATIC ${_bam_sources})
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${root}/include>")
  target_compile_features(${name} PUBLIC cxx_std_17 cuda_std_17)
  # The emu backend's controller moves data with the CUDA runtime API.
  target_compile_definitions(${name} PRIVATE BAM_EMU_CUDA=1)
  target_link_libraries(${name} PUBLIC CUDA::cudart Threads::Threads)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
