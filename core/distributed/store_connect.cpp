#include "distributed/store_connect.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <thread>

namespace plab {
namespace {

std::string firstLineOf(const std::string& s) { return s.substr(0, s.find('\n')); }

// c10d reports a timeout of its own a little after `timeout`; the thread is
// given these seconds more before it is abandoned.
constexpr std::chrono::seconds kGrace{5};

struct Attempt {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  c10::intrusive_ptr<c10d::Store> store;
  std::string error;
};

}  // namespace

bool acceptsConnections(const std::string& addr, int port, std::chrono::milliseconds within) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return false;
  bool accepted = false;
  for (addrinfo* a = found; a && !accepted; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      accepted = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(within.count())) == 1) {
        int error = 0;
        socklen_t len = sizeof error;
        accepted = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
      }
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return accepted;
}

c10::intrusive_ptr<c10d::Store> connectStoreWithin(const WorldInfo& world, const c10d::TCPStoreOptions& options,
                                                   const std::string& who) {
  const std::string where = world.masterAddr + ":" + std::to_string(world.masterPort);
  const std::string seconds = std::to_string(world.timeout.count()) + " s";
  auto attempt = std::make_shared<Attempt>();
  // Detached: a connection that never returns must not keep this process
  // from reporting it and exiting.
  std::thread([attempt, addr = world.masterAddr, options] {
    c10::intrusive_ptr<c10d::Store> store;
    std::string error;
    try {
      store = c10::make_intrusive<c10d::TCPStore>(addr, options);
    } catch (const std::exception& e) {
      error = firstLineOf(e.what());
      if (error.empty()) error = "failed";
    }
    std::lock_guard<std::mutex> lock(attempt->mutex);
    attempt->store = std::move(store);
    attempt->error = std::move(error);
    attempt->finished = true;
    attempt->done.notify_all();
  }).detach();

  std::unique_lock<std::mutex> lock(attempt->mutex);
  if (!attempt->done.wait_for(lock, world.timeout + kGrace, [&] { return attempt->finished; })) {
    const bool listening = !options.isServer && acceptsConnections(world.masterAddr, world.masterPort,
                                                                     std::chrono::milliseconds(2000));
    throw DistributedError(
        "distributed: " + who + " could not meet the others at " + where + " within " + seconds + ": " +
        (options.isServer ? std::string("the rendezvous store this rank serves did not see every rank join")
         : listening ? "something at " + where + " accepted the connection but did not answer as a rendezvous " +
                           "store (a silent listener on MASTER_PORT: not rank 0's TCPStore, or rank 0 is stuck)"
                     : "nothing at " + where + " accepts connections (is rank 0 running, and MASTER_ADDR/MASTER_PORT right?)"));
  }
  if (!attempt->error.empty())
    throw DistributedError("distributed: " + who + " could not meet the others at " + where + " within " + seconds +
                           ": " + attempt->error);
  return attempt->store;
}

}  // namespace plab
