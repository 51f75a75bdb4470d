#pragma once
// `precision-lab-cli run --nproc N`: starts N copies of this very command
// line (without --nproc) as the ranks of one data-parallel run on this
// machine, with torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>), and waits for them.
#include <chrono>

namespace plab::cli {

// Set in the environment of the ranks the launcher starts: they stop, and
// the run ends failed, when the launcher ends (its parent-death signal
// SIGHUP, or the TERM/HUP it got passed on as SIGHUP).
inline constexpr const char* kLaunchedRankEnv = "PLAB_NPROC_LAUNCHER";

// The exit code of the job: 0 when every rank succeeded; otherwise the first
// failed rank's code (1 for a signal), after a message naming it on stderr.
// The others are given `timeout` to stop on their own, then killed. The
// ranks die with the launcher: killed outright, the kernel sends each its
// parent-death signal; sent TERM or HUP, it passes HUP on to them and waits
// for them as after a failure.
int launchLocalRanks(int nproc, std::chrono::seconds timeout);

}  // namespace plab::cli
