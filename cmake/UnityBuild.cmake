# plab_unity_build(<target> [<batch size>]): with PLAB_UNITY_BUILD (the
# default), CMake compiles the target's sources PLAB_UNITY_BATCH (16; or
# <batch size>) to a translation unit, so that the inline
# code of LibTorch, Qt and nlohmann/json that each of them instantiates is
# compiled once per batch instead of once per file (docs/performance.md:
# plab_core's cold build, before and after). The anonymous namespaces of a
# batch share one translation unit: a file-local helper needs a name that
# no other file of the target gives one of its own (docs/contributing.md).
# A source with compile options or definitions of its own is compiled alone
# (CMake leaves it out of the batches); SKIP_UNITY_BUILD_INCLUSION leaves out
# others. -DPLAB_UNITY_BUILD=OFF compiles one file at a time (a shorter
# rebuild after editing one file). The Qt Test classes (tests/CMakeLists.txt)
# are batched too unless -DPLAB_UNITY_BUILD_TESTS=OFF; each test file keeps
# what it defines in a namespace named after the file, so that the files of
# a batch do not clash.
option(PLAB_UNITY_BUILD "Compile plab_core's, plab_ui's and the tests' sources in batches (unity build)" ON)
option(PLAB_UNITY_BUILD_TESTS "With PLAB_UNITY_BUILD: compile the Qt Test classes in batches too" ON)
# 16 rather than 8: two batches of 8 merged into one took 27-28 CPU-s against
# 38-44 for the two apart (plab_core, docs/performance.md); a rebuild after
# editing one file compiles its batch of 16 (-DPLAB_UNITY_BUILD=OFF: one file).
set(PLAB_UNITY_BATCH 16 CACHE STRING "Source files per unity batch (PLAB_UNITY_BUILD)")

function(plab_unity_build target)
  if(NOT PLAB_UNITY_BUILD)
    return()
  endif()
  set(batch ${PLAB_UNITY_BATCH})
  if(ARGC GREATER 1)
    set(batch ${ARGV1})
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
  # A source included by its batch's file counts for GCC as a header, where
  # a class with a member of an anonymous-namespace type (Trainer::Impl,
  # PrecisionAdamW::Impl) is worth a warning; in a source file it is not.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()
