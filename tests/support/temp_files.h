#pragma once
// Writes test input files (tokenizer.json, datasets, ...) into a test's
// temporary folder.
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <string>

namespace plab::test {

// Writes text to `name` inside dir, creating parent folders; returns the path.
inline std::filesystem::path writeTestFile(const QTemporaryDir& dir, const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(dir.path().toStdString()) / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace plab::test
