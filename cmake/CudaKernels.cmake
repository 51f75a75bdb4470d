# The optimizer's CUDA kernels (core/precision/kernels/*.cu) are compiled
# whenever nvcc is found, for sm_80 and sm_90 unless CMAKE_CUDA_ARCHITECTURES
# says otherwise, so that a build without a GPU (CI) proves they compile.
# They are linked into plab_core only when LibTorch has CUDA
# (PLAB_WITH_CUDA): a CPU build must not depend on the CUDA runtime.
option(PLAB_BUILD_CUDA_KERNELS "Compile the CUDA optimizer kernels when nvcc is found" ON)
set(PLAB_CUDA_KERNELS OFF)
if(PLAB_BUILD_CUDA_KERNELS OR PLAB_TORCH_HAS_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    set(PLAB_CUDA_KERNELS ON)
  endif()
endif()
set(PLAB_WITH_CUDA OFF)
if(PLAB_TORCH_HAS_CUDA AND PLAB_CUDA_KERNELS)
  set(PLAB_WITH_CUDA ON)
endif()
message(STATUS "CUDA kernels compiled: ${PLAB_CUDA_KERNELS}; linked (LibTorch with CUDA): ${PLAB_WITH_CUDA}")
