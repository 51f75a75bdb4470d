# LibTorch: Debian's libtorch-dev (1.13, CPU) or any LibTorch 2.x (CPU or CUDA).
# The version and CUDA support found here decide what gets built.
find_package(Torch REQUIRED)
message(STATUS "LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

set(PLAB_TORCH_HAS_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(PLAB_TORCH_HAS_CUDA ON)
endif()
