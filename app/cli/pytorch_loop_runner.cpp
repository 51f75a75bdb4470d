#include "pytorch_loop_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/resources.h"

extern char** environ;

namespace plab::cli {
namespace {

void writeFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// The last few hundred characters of a file (the Python's error, for the message).
std::string tailOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  std::string s = all.str();
  if (s.size() > 300) s = "..." + s.substr(s.size() - 300);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string defaultLoopPython() {
  if (const char* p = std::getenv("PLAB_PYTHON"); p && *p) return p;
#ifdef PLAB_BUILD_PYTHON
  if (::access(PLAB_BUILD_PYTHON, X_OK) == 0) return PLAB_BUILD_PYTHON;
#endif
  return "python3";
}

PytorchLoopRunner::PytorchLoopRunner(std::string python, const std::string& modelConfigJson)
    : python_(std::move(python)) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/plab-bench-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
  folder_ = buf.data();
  script_ = folder_ + "/pytorch_loop.py";
  config_ = folder_ + "/config.json";
  errors_ = folder_ + "/stderr.txt";
  writeFile(script_, embeddedResource("bench/pytorch_loop.py"));
  writeFile(config_, modelConfigJson);
}

PytorchLoopRunner::~PytorchLoopRunner() {
  for (const std::string& f : {script_, config_, errors_}) ::unlink(f.c_str());
  ::rmdir(folder_.c_str());
}

LoopFigure PytorchLoopRunner::run(const std::string& dtype, const std::string& optimizer, long long batch,
                                  long long seq, long long steps, int threads) const {
  LoopFigure out;
  const std::vector<std::string> args = {python_, "-B", script_, config_, "--dtype", dtype, "--optimizer", optimizer,
                                         "--batch",
                                         std::to_string(batch), "--seq", std::to_string(seq), "--steps",
                                         std::to_string(steps), "--threads", std::to_string(threads), "--json"};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int pipeFds[2];
  if (::pipe(pipeFds) != 0) {
    out.problem = "pipe: " + std::string(std::strerror(errno));
    return out;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, python_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[1]);
  if (spawned != 0) {
    ::close(pipeFds[0]);
    out.problem = "cannot start '" + python_ + "': " + std::strerror(spawned);
    return out;
  }
  // A JSON line of a few hundred bytes; more is not the script's output.
  std::string text;
  char chunk[4096];
  ssize_t got = 0;
  while ((got = ::read(pipeFds[0], chunk, sizeof chunk)) > 0)
    if (text.size() < (1 << 16)) text.append(chunk, static_cast<size_t>(got));
  ::close(pipeFds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.problem = "'" + python_ + "' failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                  "): " + tailOf(errors_);
    return out;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto number = [&](const char* key) {
    return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
  };
  out.tokensPerSecond = number("tokens_per_second");
  out.tokensPerCpuSecond = number("tokens_per_cpu_second");
  out.threads = static_cast<int>(number("threads"));
  if (j.is_object() && j.contains("torch") && j.at("torch").is_string()) out.torch = j.at("torch").get<std::string>();
  out.ok = out.tokensPerSecond > 0;
  if (!out.ok) out.problem = "the loop printed no figure";
  return out;
}

}  // namespace plab::cli
