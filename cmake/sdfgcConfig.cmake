# sdfgcConfig.cmake: the CMake package of sdfgc (DaCe SDFG -> C++/CUDA/HIP).
#
# Use:
#   find_package(sdfgc REQUIRED)          # from a checkout: -Dsdfgc_DIR=<repo>/cmake
#   sdfgc_add_library(<target> SDFG <file.sdfg> TARGET cpp|cuda|hip
#                     [MODE scoped|persistent|external|pool]
#                     [SHARED|STATIC|OBJECT]
#                     [OUTPUT_DIR <dir>]
#                     [BLAS openblas|cublas|hipblas]
#                     [MPI]
#                     [OPTIONS <extra sdfgc flags>...])
#
# MPI: the SDFG has MPI library nodes (dace.libraries.mpi; cpp only): the
# target links MPI::MPI_CXX (find_package(MPI COMPONENTS CXX); Debian:
# openmpi-bin libopenmpi-dev). The library initialises MPI in __dace_init_*
# only if the application has not, and never finalises it.
#
# BLAS: the BLAS library nodes call that library (sdfgc --blas); the target
# links it: OpenBLAS (found with find_library/find_path), CUDA::cublas
# (CUDAToolkit) or roc::hipblas (hipblas package).
#
# The sdfgc executable: the SDFGC_EXECUTABLE cache variable, else the
# SDFGC_EXECUTABLE environment variable, else `sdfgc` on PATH (also looked for
# in ~/.cargo/bin and, from a checkout, in target/release and target/debug).
#
# sdfgc_add_library runs sdfgc at build time (a custom command with a depfile
# that sdfgc writes with --depfile, so it re-runs when the .sdfg or the sdfgc
# executable changes) and creates the library <target> from the generated
# source: its output directory is a PUBLIC include directory (#include
# "<sdfg name>.h"), OpenMP is linked for cpp, and the generated source gets
# the CUDA or HIP language for GPU targets (the language is enabled if the
# project has not done so).
#
# The generated files are named after the SDFG (attributes.name in its JSON),
# which is read at configure time; editing the name reconfigures. Properties
# set on <target>: SDFGC_SDFG_NAME, SDFGC_OUTPUT_DIR, SDFGC_HEADER, SDFGC_SOURCE.

cmake_minimum_required(VERSION 3.20)
include_guard(GLOBAL)
cmake_policy(PUSH)
cmake_policy(VERSION 3.20...3.31)

# ---- the executable ----
if(NOT SDFGC_EXECUTABLE)
  if(DEFINED ENV{SDFGC_EXECUTABLE} AND NOT "$ENV{SDFGC_EXECUTABLE}" STREQUAL "")
    set(SDFGC_EXECUTABLE "$ENV{SDFGC_EXECUTABLE}" CACHE FILEPATH "The sdfgc executable")
  else()
    find_program(SDFGC_EXECUTABLE sdfgc
      HINTS "$ENV{HOME}/.cargo/bin"
            "${CMAKE_CURRENT_LIST_DIR}/../target/release"
            "${CMAKE_CURRENT_LIST_DIR}/../target/debug"
      DOC "The sdfgc executable")
  endif()
endif()

if(SDFGC_EXECUTABLE AND EXISTS "${SDFGC_EXECUTABLE}")
  get_filename_component(SDFGC_EXECUTABLE "${SDFGC_EXECUTABLE}" ABSOLUTE)
  execute_process(COMMAND "${SDFGC_EXECUTABLE}" --version
    OUTPUT_VARIABLE _sdfgc_version_out RESULT_VARIABLE _sdfgc_rc ERROR_QUIET)
  if(_sdfgc_rc EQUAL 0 AND _sdfgc_version_out MATCHES "([0-9]+\\.[0-9]+\\.[0-9]+)")
    set(SDFGC_EXECUTABLE_VERSION "${CMAKE_MATCH_1}")
  endif()
  set(sdfgc_FOUND TRUE)
  if(NOT sdfgc_FIND_QUIETLY)
    message(STATUS "Found sdfgc: ${SDFGC_EXECUTABLE} (${SDFGC_EXECUTABLE_VERSION})")
  endif()
else()
  set(sdfgc_FOUND FALSE)
  set(sdfgc_NOT_FOUND_MESSAGE
    "the sdfgc executable was not found: put it on PATH (cargo install --path <repo>), "
    "or set SDFGC_EXECUTABLE (cache or environment variable) to its path")
  string(REPLACE ";" "" sdfgc_NOT_FOUND_MESSAGE "${sdfgc_NOT_FOUND_MESSAGE}")
endif()

# Reads attributes.name of an SDFG file into <out_var> (configure time).
function(_sdfgc_sdfg_name file out_var)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "sdfgc_add_library: SDFG file not found: ${file}")
  endif()
  file(READ "${file}" _json)
  string(JSON _name ERROR_VARIABLE _err GET "${_json}" attributes name)
  if(_err OR _name STREQUAL "")
    message(FATAL_ERROR "sdfgc_add_library: ${file}: cannot read attributes.name: ${_err}")
  endif()
  set(${out_var} "${_name}" PARENT_SCOPE)
endfunction()

# The language of a target (CUDA, HIP or empty) from the arguments of sdfgc_add_library.
function(_sdfgc_language out_var)
  cmake_parse_arguments(PARSE_ARGV 1 _a "SHARED;STATIC;OBJECT;MPI" "SDFG;TARGET;MODE;OUTPUT_DIR;BLAS" "OPTIONS")
  set(_lang "")
  if(_a_TARGET STREQUAL "cuda")
    set(_lang CUDA)
  elseif(_a_TARGET STREQUAL "hip")
    set(_lang HIP)
  endif()
  set(${out_var} "${_lang}" PARENT_SCOPE)
endfunction()

function(_sdfgc_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "SHARED;STATIC;OBJECT;MPI" "SDFG;TARGET;MODE;OUTPUT_DIR;BLAS" "OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sdfgc_add_library(${target}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT sdfgc_FOUND)
    message(FATAL_ERROR "sdfgc_add_library(${target}): ${sdfgc_NOT_FOUND_MESSAGE}")
  endif()
  if(NOT arg_SDFG)
    message(FATAL_ERROR "sdfgc_add_library(${target}): SDFG <file.sdfg> is required")
  endif()
  if(NOT arg_TARGET)
    set(arg_TARGET cpp)
  endif()
  if(arg_TARGET STREQUAL "cpp")
    set(ext cpp)
  elseif(arg_TARGET STREQUAL "cuda")
    set(ext cu)
  elseif(arg_TARGET STREQUAL "hip")
    set(ext hip)
  else()
    message(FATAL_ERROR "sdfgc_add_library(${target}): TARGET must be cpp, cuda or hip, not '${arg_TARGET}'")
  endif()
  set(kind "")
  foreach(k SHARED STATIC OBJECT)
    if(arg_${k})
      if(kind)
        message(FATAL_ERROR "sdfgc_add_library(${target}): give at most one of SHARED, STATIC, OBJECT")
      endif()
      set(kind ${k})
    endif()
  endforeach()

  get_filename_component(sdfg "${arg_SDFG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  _sdfgc_sdfg_name("${sdfg}" name)
  # Renaming the SDFG changes the file names: reconfigure when the file changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${sdfg}")

  if(arg_OUTPUT_DIR)
    get_filename_component(outdir "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(outdir "${CMAKE_CURRENT_BINARY_DIR}/sdfgc/${target}")
  endif()
  set(source "${outdir}/${name}.${ext}")
  set(header "${outdir}/${name}.h")
  set(depfile "${outdir}/${name}.d")
  set(outputs "${source}" "${header}")
  if("--emit-sample" IN_LIST arg_OPTIONS)
    list(APPEND outputs "${outdir}/${name}_main.${ext}")
  endif()

  set(cmd "${SDFGC_EXECUTABLE}" "${sdfg}" --target ${arg_TARGET} -o "${outdir}" --depfile "${depfile}")
  if(arg_MODE)
    list(APPEND cmd --mode ${arg_MODE})
  endif()
  if(arg_BLAS)
    if(NOT arg_BLAS MATCHES "^(openblas|cublas|hipblas)$")
      message(FATAL_ERROR "sdfgc_add_library(${target}): BLAS must be openblas, cublas or hipblas, not '${arg_BLAS}'")
    endif()
    list(APPEND cmd --blas ${arg_BLAS})
  endif()
  list(APPEND cmd ${arg_OPTIONS})
  # sdfgc rewrites a file only when its bytes change. Ninja (restat) then skips
  # recompiling; Make would keep re-running sdfgc for outputs older than the
  # .sdfg, so with other generators the outputs are touched.
  set(touch "")
  if(NOT CMAKE_GENERATOR MATCHES "Ninja")
    set(touch COMMAND "${CMAKE_COMMAND}" -E touch ${outputs})
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${cmd}
    ${touch}
    MAIN_DEPENDENCY "${sdfg}"
    DEPFILE "${depfile}"
    COMMENT "sdfgc: generating ${name}.${ext} from ${arg_SDFG} (${arg_TARGET})"
    VERBATIM)

  add_library(${target} ${kind} "${source}" "${header}")
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${outdir}>")
  target_compile_features(${target} PRIVATE cxx_std_17)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    SDFGC_SDFG_NAME "${name}"
    SDFGC_OUTPUT_DIR "${outdir}"
    SDFGC_HEADER "${header}"
    SDFGC_SOURCE "${source}")

  if(arg_BLAS STREQUAL "openblas")
    find_library(SDFGC_OPENBLAS_LIBRARY NAMES openblas)
    find_path(SDFGC_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
    if(NOT SDFGC_OPENBLAS_LIBRARY OR NOT SDFGC_CBLAS_INCLUDE_DIR)
      message(FATAL_ERROR "sdfgc_add_library(${target}): BLAS openblas: libopenblas or cblas.h not found (Debian: libopenblas-dev)")
    endif()
    target_include_directories(${target} PRIVATE "${SDFGC_CBLAS_INCLUDE_DIR}")
    target_link_libraries(${target} PUBLIC "${SDFGC_OPENBLAS_LIBRARY}")
  elseif(arg_BLAS STREQUAL "cublas")
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(${target} PUBLIC CUDA::cublas)
  elseif(arg_BLAS STREQUAL "hipblas")
    find_package(hipblas REQUIRED)
    target_link_libraries(${target} PUBLIC roc::hipblas)
  endif()

  if(arg_MPI)
    if(NOT arg_TARGET STREQUAL "cpp")
      message(FATAL_ERROR "sdfgc_add_library(${target}): MPI library nodes take host data: use TARGET cpp")
    endif()
    find_package(MPI COMPONENTS CXX)
    if(NOT MPI_CXX_FOUND)
      message(FATAL_ERROR "sdfgc_add_library(${target}): MPI: no MPI for C++ found (Debian: openmpi-bin libopenmpi-dev)")
    endif()
    target_link_libraries(${target} PUBLIC MPI::MPI_CXX)
  endif()

  if(arg_TARGET STREQUAL "cpp")
    find_package(OpenMP COMPONENTS CXX)
    if(OpenMP_CXX_FOUND)
      target_link_libraries(${target} PRIVATE OpenMP::OpenMP_CXX)
    else()
      message(WARNING "sdfgc_add_library(${target}): OpenMP not found; the library runs single-threaded")
    endif()
  else()
    _sdfgc_language(lang TARGET ${arg_TARGET})
    set_source_files_properties("${source}" PROPERTIES LANGUAGE ${lang})
    if(lang STREQUAL "CUDA")
      target_compile_features(${target} PRIVATE cuda_std_17)
    else()
      target_compile_features(${target} PRIVATE hip_std_17)
    endif()
  endif()
endfunction()

# sdfgc_add_library(<target> SDFG <file.sdfg> TARGET cpp|cuda|hip ...): see the top of this file.
# A macro so that enable_language(CUDA|HIP) runs in the caller's (file) scope.
macro(sdfgc_add_library)
  _sdfgc_language(_sdfgc_lang ${ARGN})
  if(_sdfgc_lang)
    get_property(_sdfgc_enabled GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT _sdfgc_lang IN_LIST _sdfgc_enabled)
      enable_language(${_sdfgc_lang})
    endif()
  endif()
  _sdfgc_add_library(${ARGN})
endmacro()

cmake_policy(POP)
