# LibTorch 2.x. By default the one inside the Python torch package of the
# project's virtual environment (.venv, made by packaging/setup-debian.sh);
# -DPLAB_LIBTORCH=<folder> points at any other LibTorch 2.x (an unzipped
# libtorch, or another torch package's torch.utils.cmake_prefix_path), and so
# do CMAKE_PREFIX_PATH or Torch_DIR. The version and CUDA support found here
# decide what gets built.
set(PLAB_LIBTORCH "" CACHE PATH
  "A LibTorch 2.x folder to build against; empty: the torch package of PLAB_PYTHON")
set(PLAB_PYTHON "${CMAKE_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
  "The Python of the project's virtual environment (torch and the reference libraries)")
if(PLAB_LIBTORCH)
  list(PREPEND CMAKE_PREFIX_PATH "${PLAB_LIBTORCH}")
elseif(NOT Torch_DIR AND EXISTS "${PLAB_PYTHON}")
  execute_process(
    COMMAND "${PLAB_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _plab_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _plab_torch_rc ERROR_QUIET)
  if(_plab_torch_rc EQUAL 0 AND _plab_torch_prefix)
    list(APPEND CMAKE_PREFIX_PATH "${_plab_torch_prefix}")
  endif()
endif()
find_package(Torch REQUIRED)
if(Torch_VERSION VERSION_LESS 2.0)
  message(FATAL_ERROR "LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX} is too old: Precision Lab needs "
    "LibTorch 2.x (packaging/setup-debian.sh installs torch into .venv; or set -DPLAB_LIBTORCH=<folder>)")
endif()
message(STATUS "LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

set(PLAB_TORCH_HAS_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(PLAB_TORCH_HAS_CUDA ON)
endif()
