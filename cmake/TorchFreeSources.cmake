# plab_skip_torch_pch(<target> <sources...>): a source that includes no
# LibTorch header, directly or through the project's own headers, is
# compiled without the target's precompiled header. Loading the ~600 MB
# torch PCH costs each such translation unit about ten seconds for nothing;
# parsing its own few headers takes one or two.
# Quoted includes are resolved next to the including file and in
# PLAB_PROJECT_INCLUDE_DIRS. A wrong guess only costs speed: the file still
# includes what it needs.
set(PLAB_PROJECT_INCLUDE_DIRS "${CMAKE_SOURCE_DIR}/core" "${CMAKE_SOURCE_DIR}/ui" "${CMAKE_SOURCE_DIR}/tests")

function(plab_uses_torch out source)
  set(pending "${source}")
  set(seen "")
  set(result FALSE)
  while(pending)
    list(POP_FRONT pending file)
    if(file IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${file}")
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
    get_filename_component(dir "${file}" DIRECTORY)
    foreach(line IN LISTS lines)
      if(line MATCHES "<(torch|ATen|c10)/")
        set(result TRUE)
        break()
      endif()
      if(line MATCHES "\"([^\"]+)\"")
        foreach(base "${dir}" ${PLAB_PROJECT_INCLUDE_DIRS})
          if(EXISTS "${base}/${CMAKE_MATCH_1}")
            list(APPEND pending "${base}/${CMAKE_MATCH_1}")
            break()
          endif()
        endforeach()
      endif()
    endforeach()
    if(result)
      break()
    endif()
  endwhile()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

function(plab_skip_torch_pch target)
  foreach(src ${ARGN})
    if(src MATCHES "\\.(cpp|cc)$")
      plab_uses_torch(uses "${src}")
      if(NOT uses)
        set_source_files_properties("${src}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endif()
  endforeach()
  # AUTOMOC's mocs_compilation.cpp is empty when the moc output is included
  # by the sources themselves; it needs no header at all.
  get_target_property(autogen_dir ${target} AUTOGEN_BUILD_DIR)
  if(NOT autogen_dir)
    get_target_property(binary_dir ${target} BINARY_DIR)
    set(autogen_dir "${binary_dir}/${target}_autogen")
  endif()
  set_source_files_properties("${autogen_dir}/mocs_compilation.cpp" TARGET_DIRECTORY ${target}
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
