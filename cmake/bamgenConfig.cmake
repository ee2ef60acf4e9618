# CMake package of bamgen, written by `bamgen runtime install --prefix P`
# into P/lib/cmake/bamgen/. With CMAKE_PREFIX_PATH=P:
#
#   cmake_minimum_required(VERSION 3.20)
#   project(app LANGUAGES CXX CUDA)
#   find_package(bamgen REQUIRED)
#   add_executable(app main.cu kernels.cu)
#   bamgen_port(app AUTO OPT auto)   # or ARRAYS edges k:labels, CONFIG .bamgen.yaml
#   target_link_libraries(app PRIVATE bam::bam)
#
# gives:
#   bam::bam           the BaM runtime as a static library, built in the
#                      project's build tree from P's sources for its
#                      CMAKE_CUDA_ARCHITECTURES (no separate runtime build)
#   bamgen_port(...)   ports the target's .cu sources at build time
#   BAMGEN_EXECUTABLE  the bamgen that ports (cache variable; by default
#                      the one that installed this package, else PATH)
# docs/cmake.md in the bamgen repository describes every option.

if(CMAKE_VERSION VERSION_LESS 3.20)
  set(bamgen_FOUND FALSE)
  set(bamgen_NOT_FOUND_MESSAGE "bamgen needs CMake 3.20 or newer (DEPFILE for every generator); this is ${CMAKE_VERSION}")
  return()
endif()

get_filename_component(_bamgen_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include("${CMAKE_CURRENT_LIST_DIR}/bamgenTool.cmake" OPTIONAL) # _bamgen_installed_by

if(NOT BAMGEN_EXECUTABLE)
  set(_bamgen_hints)
  if(_bamgen_installed_by)
    get_filename_component(_bamgen_hints "${_bamgen_installed_by}" DIRECTORY)
  endif()
  find_program(BAMGEN_EXECUTABLE bamgen HINTS ${_bamgen_hints} "${_bamgen_prefix}/bin"
    DOC "the bamgen that bamgen_port() runs")
endif()
if(NOT BAMGEN_EXECUTABLE)
  set(bamgen_FOUND FALSE)
  set(bamgen_NOT_FOUND_MESSAGE "no bamgen executable found: put it on PATH or pass -DBAMGEN_EXECUTABLE=/path/to/bamgen")
  return()
endif()

get_property(_bamgen_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "CUDA" IN_LIST _bamgen_languages)
  set(bamgen_FOUND FALSE)
  set(bamgen_NOT_FOUND_MESSAGE "enable CUDA before find_package(bamgen): project(<name> LANGUAGES CXX CUDA)")
  return()
endif()
foreach(_bamgen_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
  string(REGEX MATCH "^[0-9]+" _bamgen_num "${_bamgen_arch}")
  if(_bamgen_num AND _bamgen_num LESS 70)
    set(bamgen_FOUND FALSE)
    set(bamgen_NOT_FOUND_MESSAGE "the BaM runtime needs compute capability 7.0 or newer; CMAKE_CUDA_ARCHITECTURES is '${CMAKE_CUDA_ARCHITECTURES}': set it, e.g. -DCMAKE_CUDA_ARCHITECTURES=80 or 'native'")
    return()
  endif()
endforeach()

# The package's own policy settings (DEPFILE paths as CMake 3.20 reads
# them: CMP0116), recorded by bamgen_port() where it is defined.
cmake_policy(PUSH)
cmake_policy(VERSION 3.20...3.28)

if(NOT TARGET bam::bam)
  include("${_bamgen_prefix}/cmake/bamRuntime.cmake")
  bam_add_runtime(bamgen_bam "${_bamgen_prefix}")
  add_library(bam::bam ALIAS bamgen_bam)
endif()

# bamgen_port(<target> [AUTO] [REF] [PROGRAM] [OPT <rewrite>] [ARRAYS <name>...]
#             [COUNTS <name=expr>...] [CONFIG <file>] [ARGS <flag>...])
#
# Replaces each .cu source of <target> by its port, made at build time in
# <build>/bamgen/<target>/ by `bamgen port ... --depfile --line-directives
# -o`. With PROGRAM, the target's other .cu sources are given to each port
# as --context, so a kernel defined in one source and launched in another
# is ported the same way in both, and the local headers the port changes
# (a kernel's prototype) are written next to the ported sources
# (--header-dir), where `#include "x.cuh"` from a ported source finds them
# first; editing one source then re-ports them all.
# Editing a source, the config it reads or bamgen re-ports the files that
# depend on it; compiler messages name the original file and line. Call it
# in the directory that creates <target>, after all its sources are added.
function(bamgen_port target)
  cmake_parse_arguments(PARSE_ARGV 1 _bp "AUTO;REF;PROGRAM" "OPT;CONFIG" "ARRAYS;COUNTS;ARGS")
  if(_bp_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "bamgen_port(${target}): unknown arguments '${_bp_UNPARSED_ARGUMENTS}'; use AUTO, REF, PROGRAM, OPT, ARRAYS, COUNTS, CONFIG or ARGS")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "bamgen_port(${target}): no such target; call it after add_executable/add_library(${target} ...)")
  endif()
  set(_args)
  if(_bp_AUTO)
    list(APPEND _args --auto)
  endif()
  if(_bp_REF)
    list(APPEND _args --ref)
  endif()
  if(_bp_OPT)
    list(APPEND _args --opt "${_bp_OPT}")
  endif()
  foreach(_a IN LISTS _bp_ARRAYS)
    list(APPEND _args --array "${_a}")
  endforeach()
  foreach(_c IN LISTS _bp_COUNTS)
    list(APPEND _args --count "${_c}")
  endforeach()
  set(_config_dep)
  if(_bp_CONFIG)
    get_filename_component(_config "${_bp_CONFIG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _args --config "${_config}")
    set(_config_dep "${_config}")
  endif()
  list(APPEND _args ${_bp_ARGS})

  get_target_property(_sources ${target} SOURCES)
  get_target_property(_srcdir ${target} SOURCE_DIR)
  get_target_property(_bindir ${target} BINARY_DIR)
  set(_new_sources)
  set(_include_dirs)
  set(_cu_sources)
  foreach(_s IN LISTS _sources)
    if(_s MATCHES "\\.cu$" AND NOT _s MATCHES "^\\$<")
      get_filename_component(_in "${_s}" ABSOLUTE BASE_DIR "${_srcdir}")
      list(APPEND _cu_sources "${_in}")
    endif()
  endforeach()
  foreach(_s IN LISTS _sources)
    if(NOT _s MATCHES "\\.cu$" OR _s MATCHES "^\\$<")
      list(APPEND _new_sources "${_s}")
      continue()
    endif()
    get_filename_component(_in "${_s}" ABSOLUTE BASE_DIR "${_srcdir}")
    file(RELATIVE_PATH _rel "${_srcdir}" "${_in}")
    string(REPLACE "../" "__/" _rel "${_rel}") # sources outside the directory stay inside the output one
    set(_out "${_bindir}/bamgen/${target}/${_rel}")
    get_filename_component(_outdir "${_out}" DIRECTORY)
    get_filename_component(_indir "${_in}" DIRECTORY)
    file(MAKE_DIRECTORY "${_outdir}")
    set(_context)
    if(_bp_PROGRAM)
      # Local headers the port changes go next to the ported sources, at
      # their place relative to the source directory, so that
      # `#include "x.cuh"` from a ported source finds the ported header.
      list(APPEND _context --root "${_srcdir}" --header-dir "${_bindir}/bamgen/${target}")
      foreach(_o IN LISTS _cu_sources)
        if(NOT _o STREQUAL _in)
          list(APPEND _context --context "${_o}")
        endif()
      endforeach()
    endif()
    add_custom_command(
      OUTPUT "${_out}"
      COMMAND "${BAMGEN_EXECUTABLE}" port ${_args} --quiet --line-directives --depfile "${_out}.d" -o "${_out}" ${_context} "${_in}"
      DEPENDS "${_in}" "${BAMGEN_EXECUTABLE}" ${_config_dep}
      DEPFILE "${_out}.d"
      COMMENT "bamgen: porting ${_rel}"
      VERBATIM)
    list(APPEND _new_sources "${_out}")
    list(APPEND _include_dirs "${_indir}") # "header.h" next to the original source
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${_new_sources})
  if(_include_dirs)
    list(REMOVE_DUPLICATES _include_dirs)
    target_include_directories(${target} PRIVATE ${_include_dirs})
  endif()
endfunction()

cmake_policy(POP)
set(bamgen_FOUND TRUE)
