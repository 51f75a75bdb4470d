# QCustomPlot 2.1 built for Qt 6 as a static library. Debian only ships a
# Qt 5 binary, so packaging/fetch-qcustomplot.sh unpacks Debian's source
# package into third_party/qcustomplot (never committed).
set(QCUSTOMPLOT_SOURCE_DIR "${CMAKE_SOURCE_DIR}/third_party/qcustomplot"
    CACHE PATH "Folder holding qcustomplot.h and qcustomplot.cpp")
if(NOT EXISTS "${QCUSTOMPLOT_SOURCE_DIR}/qcustomplot.cpp")
  message(FATAL_ERROR "QCustomPlot sources not found in ${QCUSTOMPLOT_SOURCE_DIR}. "
                      "Run packaging/fetch-qcustomplot.sh (setup-debian.sh does it).")
endif()
add_library(qcustomplot STATIC
  "${QCUSTOMPLOT_SOURCE_DIR}/qcustomplot.cpp"
  "${QCUSTOMPLOT_SOURCE_DIR}/qcustomplot.h")
set_target_properties(qcustomplot PROPERTIES AUTOMOC ON POSITION_INDEPENDENT_CODE ON)
target_include_directories(qcustomplot SYSTEM PUBLIC "${QCUSTOMPLOT_SOURCE_DIR}")
target_compile_options(qcustomplot PRIVATE -w)
target_link_libraries(qcustomplot PUBLIC Qt6::Core Qt6::Gui Qt6::Widgets Qt6::PrintSupport)
