#include "support/test_registry.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace plab::test {
namespace {

// Built on first use: registrations run during static initialisation, in
// no particular order across files.
std::map<std::string, TestMain>& registry() {
  static std::map<std::string, TestMain> tests;
  return tests;
}

std::string stem(const char* path) {
  std::string name(path);
  const size_t slash = name.find_last_of("/\\");
  if (slash != std::string::npos) name.erase(0, slash + 1);
  const size_t dot = name.find('.');
  if (dot != std::string::npos) name.erase(dot);
  return name;
}

void printNames(std::FILE* out) {
  for (const auto& entry : registry()) std::fprintf(out, "%s\n", entry.first.c_str());
}

}  // namespace

bool registerTest(const char* sourceFile, TestMain main) {
  const std::string name = stem(sourceFile);
  if (!registry().emplace(name, main).second) {
    std::fprintf(stderr, "two test classes are registered as %s\n", name.c_str());
    std::abort();
  }
  return true;
}

int runRegisteredTest(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--list") == 0) {
    printNames(stdout);
    return 0;
  }
  const auto found = argc >= 2 ? registry().find(argv[1]) : registry().end();
  if (found == registry().end()) {
    std::fprintf(stderr, "usage: %s TEST [Qt Test arguments]   (or --list)\n%s%s%sTESTs:\n", argv[0],
                 argc >= 2 ? "no test named " : "", argc >= 2 ? argv[1] : "", argc >= 2 ? "\n" : "");
    printNames(stderr);
    return 2;
  }
  // The test sees itself as an executable of its own name beside the runner,
  // as when each class was one: QCoreApplication's applicationName (which
  // QStandardPaths' test-mode folders and QSettings use) stays the test's.
  std::string program(argv[0]);
  const size_t slash = program.find_last_of('/');
  program = (slash == std::string::npos ? std::string() : program.substr(0, slash + 1)) + found->first;
  std::vector<char*> args;
  args.push_back(program.data());
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  return found->second(argc - 1, args.data());
}

}  // namespace plab::test
