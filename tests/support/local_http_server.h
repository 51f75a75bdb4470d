#pragma once
// A tiny HTTP/1.1 server for tests: 127.0.0.1 on an ephemeral port, one
// connection at a time ("Connection: close"), serving in-memory files.
// Supports HEAD, GET, "Range: bytes=N-", 404, forced status codes and
// cutting a body short (to test resume). Every request is logged.
// The server thread stops in the destructor.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace plab::test {

struct ServedFile {
  std::string body;
  std::map<std::string, std::string> headers;  // extra response headers (ETag, X-Repo-Commit, ...)
  int forcedStatus = 0;         // non-zero: answer every request for this path with it (no data)
  int64_t abortAfterBytes = -1; // >= 0: the next GET sends this many body bytes, then drops the connection
  int failNextRequests = 0;     // > 0: the next N requests (HEAD or GET) get failStatus
  int failStatus = 500;
  int dripDelayMs = 0;          // > 0: the GET body goes out 2 bytes at a time with this pause
  bool omitContentLength = false;  // no size header: the body ends when the connection closes
};

struct LoggedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
};

class LocalHttpServer {
 public:
  LocalHttpServer();  // throws std::runtime_error if it cannot listen
  ~LocalHttpServer();
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"

  void setFile(const std::string& path, ServedFile file);  // path like "/org/repo/resolve/main/config.json"
  void removeFile(const std::string& path);
  std::vector<LoggedRequest> requests() const;
  void clearRequests();

 private:
  void serve();
  void handle(int fd);

  int listenFd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::map<std::string, ServedFile> files_;
  std::vector<LoggedRequest> log_;
  std::thread thread_;
};

}  // namespace plab::test
