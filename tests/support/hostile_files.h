#pragma once
// Files crafted the way issue 19 crafted them: each crashed, hung or
// flooded a reader that trusted it. Tests put one where a run or workspace
// file belongs and check the reader names it and moves on.
#include <sys/stat.h>

#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>
#include <string>

namespace plab::test {

// 200,000 '[' then ']': recursion depth for a parser without a nesting cap.
inline void writeDeepNesting(const std::filesystem::path& file) {
  std::filesystem::remove(file);
  std::ofstream(file) << std::string(200000, '[') << std::string(200000, ']');
}

// A named pipe: an open() for reading waits for a writer that never comes.
inline void makeFifo(const std::filesystem::path& file) {
  std::filesystem::remove(file);
  QVERIFY(::mkfifo(file.c_str(), 0600) == 0);
}

// A link to /dev/zero: endless bytes for a reader without a size cap.
inline void linkToDevZero(const std::filesystem::path& file) {
  std::filesystem::remove(file);
  std::filesystem::create_symlink("/dev/zero", file);
}

// 300 MB that take no disk (sparse): memory for a reader that loads it whole.
inline void writeSparse300MB(const std::filesystem::path& file) {
  std::filesystem::remove(file);
  std::ofstream(file) << "{";
  std::filesystem::resize_file(file, 300ull << 20);
}

}  // namespace plab::test
