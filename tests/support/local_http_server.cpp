#include "support/local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>

namespace plab::test {

namespace {

constexpr std::size_t kMaxRequestBytes = 64 * 1024;

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    default: return "Error";
  }
}

bool sendAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

LocalHttpServer::LocalHttpServer() {
  listenFd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listenFd_ < 0) throw std::runtime_error("LocalHttpServer: socket() failed");
  int one = 1;
  ::setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only
  addr.sin_port = 0;                              // ephemeral
  if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listenFd_, 16) != 0) {
    ::close(listenFd_);
    throw std::runtime_error("LocalHttpServer: cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listenFd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

LocalHttpServer::~LocalHttpServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(listenFd_);
}

std::string LocalHttpServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void LocalHttpServer::setFile(const std::string& path, ServedFile file) {
  std::lock_guard<std::mutex> lock(mutex_);
  files_[path] = std::move(file);
}

void LocalHttpServer::removeFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  files_.erase(path);
}

std::vector<LoggedRequest> LocalHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_;
}

void LocalHttpServer::clearRequests() {
  std::lock_guard<std::mutex> lock(mutex_);
  log_.clear();
}

void LocalHttpServer::serve() {
  while (!stop_) {
    pollfd p{listenFd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;  // wake up regularly to notice stop_
    const int fd = ::accept(listenFd_, nullptr, nullptr);
    if (fd < 0) continue;
    timeval timeout{5, 0};  // a silent client cannot block the server for long
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    handle(fd);
    ::close(fd);
  }
}

void LocalHttpServer::handle(int fd) {
  std::string raw;
  char buf[4096];
  while (raw.find("\r\n\r\n") == std::string::npos && raw.size() < kMaxRequestBytes) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  LoggedRequest req;
  std::size_t lineEnd = raw.find("\r\n");
  const std::string requestLine = raw.substr(0, lineEnd);
  const auto sp1 = requestLine.find(' ');
  const auto sp2 = requestLine.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return;
  req.method = requestLine.substr(0, sp1);
  req.path = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
  for (std::size_t pos = lineEnd + 2; pos < raw.size();) {
    const std::size_t end = raw.find("\r\n", pos);
    if (end == std::string::npos || end == pos) break;
    const std::string line = raw.substr(pos, end - pos);
    if (const auto colon = line.find(':'); colon != std::string::npos)
      req.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
    pos = end + 2;
  }

  ServedFile file;
  bool found = false;
  bool abortNow = false;
  bool failNow = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(req);
    const std::string path = req.path.substr(0, req.path.find('?'));
    if (auto it = files_.find(path); it != files_.end()) {
      found = true;
      file = it->second;
      if (it->second.failNextRequests > 0) {
        --it->second.failNextRequests;
        failNow = true;
      }
      if (!failNow && req.method == "GET" && it->second.abortAfterBytes >= 0 && it->second.forcedStatus == 0) {
        abortNow = true;
        it->second.abortAfterBytes = -1;  // only the next GET is cut short
      }
    }
  }

  int status = 200;
  std::string body;
  std::string extra;
  if (!found) {
    status = 404;
    body = "not found";
  } else if (file.forcedStatus != 0 || failNow) {
    status = failNow ? file.failStatus : file.forcedStatus;
    body = "error";
  } else {
    body = file.body;
    const std::string range = req.headers.count("range") ? req.headers["range"] : "";
    if (range.rfind("bytes=", 0) == 0 && range.back() == '-') {
      const uint64_t start = std::stoull(range.substr(6, range.size() - 7));
      if (start >= file.body.size()) {
        status = 416;
        body.clear();
        extra += "Content-Range: bytes */" + std::to_string(file.body.size()) + "\r\n";
      } else {
        status = 206;
        body = file.body.substr(start);
        extra += "Content-Range: bytes " + std::to_string(start) + "-" + std::to_string(file.body.size() - 1) +
                 "/" + std::to_string(file.body.size()) + "\r\n";
      }
    }
  }
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  if (found)
    for (const auto& [name, value] : file.headers) head += name + ": " + value + "\r\n";
  head += extra;
  const bool streamed = found && !failNow && file.forcedStatus == 0 && file.omitContentLength;
  if (!streamed) head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  head += "Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n";
  if (!sendAll(fd, head.data(), head.size()) || req.method == "HEAD") return;
  const std::size_t bodyBytes =
      abortNow ? std::min<std::size_t>(body.size(), static_cast<std::size_t>(file.abortAfterBytes)) : body.size();
  if (found && file.dripDelayMs > 0 && !failNow) {
    for (std::size_t i = 0; i < bodyBytes && !stop_; i += 2) {
      if (!sendAll(fd, body.data() + i, std::min<std::size_t>(2, bodyBytes - i))) return;  // the client gave up
      std::this_thread::sleep_for(std::chrono::milliseconds(file.dripDelayMs));
    }
    return;
  }
  sendAll(fd, body.data(), bodyBytes);
  // Returning closes the socket: a cut-short body looks like a dropped connection.
}

}  // namespace plab::test
