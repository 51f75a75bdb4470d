// read-safetensors FILE: opens FILE with the project's reader (SafetensorsFile)
// and loads every tensor; prints "ok N" (N tensors), or "refused: <why>" and
// exits 3, so that a reference test can tell a refusal from a probe failure.
#include <cstdio>

#include "commands.h"
#include "model/safetensors.h"
#include "util/errors.h"

namespace plab::probe {

int readSafetensorsCommand(const Args& args) {
  if (args.size() != 1) throw UsageError("read-safetensors FILE");
  try {
    const SafetensorsFile file(args[0]);
    for (const std::string& name : file.names()) (void)file.load(name);
    std::printf("ok %zu\n", file.names().size());
    return 0;
  } catch (const SafetensorsError& e) {
    std::printf("refused: %s\n", e.what());
    return 3;
  }
}

}  // namespace plab::probe
