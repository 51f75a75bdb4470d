#pragma once
// Minimal blocking HTTP over libcurl for the Hub downloader: HEAD or GET,
// redirects followed, response headers of every hop kept (the Hub puts
// X-Repo-Commit / X-Linked-Etag on the first, redirecting response).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace plab::http {

using Headers = std::map<std::string, std::string>;  // lower-case names

struct Request {
  std::string url;
  std::string bearerToken;  // sent as "Authorization: Bearer ..." when set
  bool headOnly = false;
  uint64_t rangeStart = 0;  // > 0: "Range: bytes=N-"
  // A transfer slower than this many bytes/s for lowSpeedSeconds fails
  // (a server that drips a few bytes per second would otherwise hang it).
  long lowSpeedBytesPerSecond = 1024;
  long lowSpeedSeconds = 30;
  // Receives body bytes with the final status; return false to abort.
  std::function<bool(const char* data, std::size_t size, long status)> onBody;
};

struct Response {
  long status = 0;               // of the last hop
  std::vector<Headers> hops;     // headers of each response, in order
  int curlCode = 0;              // 0 = transfer completed
  std::string curlError;         // text for curlCode
  bool aborted = false;          // onBody returned false
  bool couldNotConnect = false;  // connection refused / host not found
  bool tooSlow = false;          // under the low-speed limit for too long
  bool connectionLost = false;   // reset, closed early or nothing received: worth a retry

  // First value of a header over all hops ("" if absent).
  std::string first(const std::string& name) const;
  std::string last(const std::string& name) const;
};

Response perform(const Request& request);

}  // namespace plab::http
