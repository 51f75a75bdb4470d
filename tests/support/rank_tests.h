#pragma once
// Tests that start ranks as processes skip, saying why, where they cannot.
#include <QtTest/QtTest>

#include "distributed/process_group.h"
#include "support/cli_process.h"

namespace plab::test {

// Why ranks cannot be started here, or nullptr.
inline const char* missingRanks() {
  if (cliPath().isEmpty()) return "PLAB_CLI not set (run through ctest)";
  if (!plab::processGroupsAvailable()) return "this build has no Gloo headers (libgloo-dev): no process groups";
  return nullptr;
}

}  // namespace plab::test

#define REQUIRE_RANKS()                                                 \
  do {                                                                  \
    if (const char* why = plab::test::missingRanks()) QSKIP(why);       \
  } while (0)
