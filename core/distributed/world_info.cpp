#include "distributed/world_info.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "util/errors.h"

namespace plab {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

long long wholeNumber(const char* name, const char* text, long long min, long long max) {
  const std::string s = text;
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    throw ConfigError(std::string("distributed: ") + name + "='" + s + "' is not a whole number");
  const long long v = std::stoll(s);
  if (v < min || v > max)
    throw ConfigError(std::string("distributed: ") + name + "=" + s + " is outside " + std::to_string(min) + ".." +
                      std::to_string(max));
  return v;
}

}  // namespace

WorldInfo worldFromEnvironment() {
  WorldInfo w;
  if (const char* t = env("PLAB_DIST_TIMEOUT_S"))
    w.timeout = std::chrono::seconds(wholeNumber("PLAB_DIST_TIMEOUT_S", t, 1, 24 * 3600));
  const char* rank = env("RANK");
  const char* size = env("WORLD_SIZE");
  const char* local = env("LOCAL_RANK");
  const char* addr = env("MASTER_ADDR");
  const char* port = env("MASTER_PORT");
  if (!rank && !size && !local && !addr && !port) return w;
  if (!rank || !size)
    throw ConfigError("distributed: RANK and WORLD_SIZE must both be set (torchrun sets them), or neither");
  w.worldSize = static_cast<int>(wholeNumber("WORLD_SIZE", size, 1, 65536));
  w.rank = static_cast<int>(wholeNumber("RANK", rank, 0, w.worldSize - 1));
  w.localRank = local ? static_cast<int>(wholeNumber("LOCAL_RANK", local, 0, w.worldSize - 1)) : w.rank;
  if (w.worldSize == 1) return w;  // nothing to join
  if (!addr || !port)
    throw ConfigError("distributed: a world of " + std::to_string(w.worldSize) +
                      " needs MASTER_ADDR and MASTER_PORT (rank 0's address and a free port)");
  w.masterAddr = addr;
  w.masterPort = static_cast<int>(wholeNumber("MASTER_PORT", port, 1, 65535));
  return w;
}

bool testCrashRequested(const WorldInfo& world, long long step) {
  const char* spec = env("PLAB_TEST_DIST_EXIT");
  if (!spec) return false;
  const std::string s = spec;
  const auto colon = s.find(':');
  if (colon == std::string::npos) return false;
  const bool here = std::atoll(s.substr(0, colon).c_str()) == world.rank && std::atoll(s.substr(colon + 1).c_str()) == step;
  if (here && s.size() > 5 && s.compare(s.size() - 5, 5, ":hang") == 0)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  return here;
}

}  // namespace plab

namespace plab {

void checkGlobalBatch(const WorldInfo& world, long long batchSize) {
  if (batchSize % world.worldSize != 0)
    throw ConfigError("distributed: 'batch_size' " + std::to_string(batchSize) + " is the global batch and must be " +
                      "divisible by the " + std::to_string(world.worldSize) + " ranks (each takes batch_size / ranks rows)");
}

}  // namespace plab
