# The `cuda` backend's kernels: the kernels/cuda room (src/kernels/cuda/), in the runtime library when built.
#   FERRY_CUDA=AUTO (default): built when nvcc, the CUDA toolkit (cudart, cuBLAS, cuBLASLt) and cuDNN are found;
#                              not in a sanitizer build (FERRY_SANITIZE=ON), where AUTO means OFF
#   FERRY_CUDA=ON:             required (configuration fails without them)
#   FERRY_CUDA=OFF:            never
# Without it the `cuda` backend still exists with its kernel declarations (src/kernels/cuda_defs/, always in the
# runtime library): `ferry ops --backend cuda` and `ferry check --backends cuda,cpu --cc 8.0` work; sessions asking
# for `cuda` fail with UnsupportedError. Architectures: sm_80 and sm_90 code plus compute_90 PTX (docs/cuda.md).
set(FERRY_CUDA AUTO CACHE STRING "Build the CUDA backend's kernels: AUTO, ON or OFF")
set_property(CACHE FERRY_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT FERRY_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "FERRY_CUDA must be AUTO, ON or OFF, not '${FERRY_CUDA}'")
endif()

set(FERRY_WITH_CUDA OFF)
set(_ferry_cuda_missing "")
if(FERRY_CUDA STREQUAL "AUTO" AND FERRY_SANITIZE)
  set(_ferry_cuda_missing "a sanitizer build (FERRY_SANITIZE=ON; set FERRY_CUDA=ON to build it anyway)")
elseif(NOT FERRY_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(_ferry_cuda_missing "no CUDA compiler (nvcc)")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    find_path(FERRY_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(FERRY_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublasLt)
      set(_ferry_cuda_missing "the CUDA toolkit (cudart, cuBLAS, cuBLASLt) was not found")
    elseif(NOT FERRY_CUDNN_INCLUDE_DIR OR NOT FERRY_CUDNN_LIBRARY)
      set(_ferry_cuda_missing "cuDNN (cudnn.h, libcudnn) was not found")
    else()
      set(FERRY_WITH_CUDA ON)
    endif()
  endif()
endif()

if(NOT FERRY_WITH_CUDA)
  if(FERRY_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FERRY_CUDA=ON: ${_ferry_cuda_missing}")
  elseif(FERRY_CUDA STREQUAL "AUTO")
    message(STATUS "CUDA backend: declarations only (${_ferry_cuda_missing})")
  else()
    message(STATUS "CUDA backend: declarations only (FERRY_CUDA=OFF)")
  endif()
  return()
endif()

message(STATUS "CUDA backend: kernels built (CUDA ${CUDAToolkit_VERSION}, ${FERRY_CUDNN_LIBRARY}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES})")
# The kernels/cuda room (cmake/rooms.cmake) is compiled with nvcc for .cu files; this sets what it needs.
function(ferry_cuda_room_properties target)
  # The directory's warning flags are for g++: C++ sources get them as they are, nvcc passes them to its host
  # compiler.
  get_property(dir_options DIRECTORY PROPERTY COMPILE_OPTIONS)
  set(options "")
  foreach(opt IN LISTS dir_options)
    list(APPEND options "$<$<COMPILE_LANGUAGE:CXX>:${opt}>" "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${opt}>")
  endforeach()
  set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS ${options})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)
  target_include_directories(${target} PRIVATE ${FERRY_CUDNN_INCLUDE_DIR})
  target_link_libraries(${target} PRIVATE CUDA::cudart fmt::fmt)
  target_compile_definitions(${target} PRIVATE FERRY_CUDA_LIBRARY_DIR="${CUDAToolkit_LIBRARY_DIR}")
endfunction()
# C++20 for nvcc: CMake 3.25 does not know that nvcc 12+ has it (its table stops at C++17), and CUDA sources follow
# CXX_STANDARD 20; tell it the flag.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
# What the runtime library links for the cuda kernels. cuBLAS is not linked: src/kernels/cuda/cublas_api.cc loads
# it (dlopen) when a MatMul/Gemm first runs, since loading it costs every process about 200 MiB of RSS.
set(FERRY_CUDA_LINK_LIBRARIES CUDA::cudart ${FERRY_CUDNN_LIBRARY} ${CMAKE_DL_LIBS})
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/backends/cuda/cuda_backend.cc PROPERTIES COMPILE_DEFINITIONS
                            FERRY_WITH_CUDA=1)
