#include "local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.h"
#include "distributed/world_info.h"

namespace plab::cli {
namespace {

// This process's own arguments, from the kernel: the ranks run the same command.
std::vector<std::string> ownArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

std::vector<std::string> withoutNproc(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;  // and its value
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

// A port the kernel had free a moment ago (rank 0's TCPStore binds it next).
int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("--nproc: no socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error(std::string("--nproc: no free port on 127.0.0.1: ") + std::strerror(errno));
  return ntohs(addr.sin_port);
}

// TERM or HUP to the launcher: its ranks are told (they stop and mark the run failed).
volatile std::sig_atomic_t gLauncherSignal = 0;
extern "C" void onLauncherSignal(int signal) { gLauncherSignal = signal; }

std::string describeEnd(int rank, int status) {
  if (WIFSIGNALED(status))
    return "rank " + std::to_string(rank) + " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "rank " + std::to_string(rank) + " exited with code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

int launchLocalRanks(int nproc, std::chrono::seconds timeout) {
  const std::vector<std::string> args = withoutNproc(ownArguments());
  const std::string port = std::to_string(freeLoopbackPort());
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // Ctrl-C reaches every rank (one process group): they stop together and
  // rank 0 writes the report; this process only waits for them.
  struct sigaction ignore {}, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &previous);
  struct sigaction onSignal {}, previousTerm{}, previousHup{};
  onSignal.sa_handler = onLauncherSignal;
  ::sigaction(SIGTERM, &onSignal, &previousTerm);
  ::sigaction(SIGHUP, &onSignal, &previousHup);
  const auto restoreSignals = [&] {
    ::sigaction(SIGINT, &previous, nullptr);
    ::sigaction(SIGTERM, &previousTerm, nullptr);
    ::sigaction(SIGHUP, &previousHup, nullptr);
  };
  const pid_t launcher = ::getpid();

  std::vector<pid_t> pids(static_cast<size_t>(nproc), -1);
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::cerr << "error: --nproc: cannot start rank " << rank << ": " << std::strerror(errno) << '\n';
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGKILL);
      for (pid_t p : pids)
        if (p > 0) ::waitpid(p, nullptr, 0);
      restoreSignals();
      return kRunFailed;
    }
    if (pid == 0) {
      restoreSignals();
      // The rank dies with the launcher: SIGHUP when it ends, however it
      // ends (SIGKILL too). Checked once more after: it may be gone already.
      if (::prctl(PR_SET_PDEATHSIG, SIGHUP) != 0 || ::getppid() != launcher) ::_exit(kRunFailed);
      ::setenv(kLaunchedRankEnv, std::to_string(launcher).c_str(), 1);
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      ::execv("/proc/self/exe", argv.data());
      std::fprintf(stderr, "error: --nproc: cannot start rank %d: %s\n", rank, std::strerror(errno));
      ::_exit(127);
    }
    pids[static_cast<size_t>(rank)] = pid;
  }

  int running = nproc;
  int exitCode = kOk;
  std::string firstFailure;
  std::chrono::steady_clock::time_point killAt{};
  bool killed = false;
  while (running > 0) {
    if (gLauncherSignal && firstFailure.empty()) {
      firstFailure = std::string("the launcher got signal ") + std::to_string(int(gLauncherSignal)) + " (" +
                     strsignal(gLauncherSignal) + ")";
      exitCode = kRunFailed;
      killAt = std::chrono::steady_clock::now() + timeout;
      std::cerr << "error: --nproc: " << firstFailure << ": stopping the ranks\n";
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGHUP);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      if (!firstFailure.empty() && !killed && std::chrono::steady_clock::now() >= killAt) {
        std::cerr << "error: --nproc: the other ranks did not stop within " << timeout.count()
                  << " s after " << firstFailure << ": killing them\n";
        for (pid_t p : pids)
          if (p > 0) ::kill(p, SIGKILL);
        killed = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (pid < 0) break;  // no children left
    int rank = 0;
    while (rank < nproc && pids[static_cast<size_t>(rank)] != pid) ++rank;
    if (rank == nproc) continue;
    pids[static_cast<size_t>(rank)] = -1;
    --running;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && firstFailure.empty()) {
      firstFailure = describeEnd(rank, status);
      // The documented codes pass through (2: every rank refused the config; 130: Ctrl-C).
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kRunFailed;
      exitCode = code == kUsage || code == kInterrupted ? code : kRunFailed;
      killAt = std::chrono::steady_clock::now() + timeout;
      if (running > 0) std::cerr << "error: " << firstFailure << "; waiting for the other ranks to stop\n";
      if (running > 0 && rank != 0) {  // rank 0 serves the store: gone with it
        WorldInfo world;
        world.worldSize = nproc;
        world.masterAddr = "127.0.0.1";
        world.masterPort = std::stoi(port);
        tellRanksOfFailure(world, firstFailure);
      }
    }
  }
  restoreSignals();
  if (!firstFailure.empty()) {
    std::cerr << "error: the run on " << nproc << " processes failed: " << firstFailure << " first\n";
    return exitCode;
  }
  return kOk;
}

}  // namespace plab::cli
