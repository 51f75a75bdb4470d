#pragma once
// What the ranks of one data-parallel run must agree on before they train:
// every field of the run config that changes the trajectory or the pattern of
// collectives (everything but the run's name and output folder, which only
// rank 0 uses), and the build they run (version, the executable's sha256 and
// LibTorch's version). Ranks that differ would train inconsistent settings
// silently (lr, seed, batch), stop at different steps, or reduce tensors of
// different sizes (Gloo aborts the process then). Torch-free.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/run_config.h"
#include "util/errors.h"

namespace plab {

// The ranks hold different settings or builds: refused on every rank alike,
// with the same message (exit 2 in the CLI).
struct RanksDisagree : ConfigError {
  using ConfigError::ConfigError;
};

// {"config": <the run config without name and output_dir>, "build":
// {"version", "executable_sha256", "libtorch"}}. The executable's digest is
// computed once per process.
nlohmann::json rankAgreementDocument(const RunConfig& config);

// Another rank's document as it arrived through the store: read like any
// input (at most 1 MiB, nesting capped); one that is not JSON becomes a
// string saying so, which then differs from this rank's (never a crash).
nlohmann::json peerAgreementDocument(const std::string& text);

// "" when every rank's document equals rank 0's; else a sentence naming the
// first field that differs (in rank order, then field order) and both
// values: "the ranks disagree on the run config's 'adamw.lr' (rank 0 has
// 0.001, rank 1 has 0.1)". A document's top-level sections ("config",
// "build", "parameters") name what the field belongs to.
std::string rankDisagreement(const std::vector<nlohmann::json>& documents);

}  // namespace plab
