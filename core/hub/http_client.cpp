#include "hub/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace plab::http {

namespace {

struct Transfer {
  const Request* request;
  Response* response;
  CURL* curl;
};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

size_t onHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->hops.emplace_back();
  } else if (const auto colon = line.find(':'); colon != std::string::npos && !t->response->hops.empty()) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    t->response->hops.back()[name] = trim(line.substr(colon + 1));
  }
  return size * count;
}

size_t onData(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (!t->request->onBody) return size * count;
  // The status of the hop this body belongs to (curl skips redirect bodies).
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (!t->request->onBody(data, size * count, status)) {
    t->response->aborted = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  return size * count;
}

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string Response::first(const std::string& name) const {
  for (const auto& h : hops)
    if (auto it = h.find(name); it != h.end()) return it->second;
  return "";
}

std::string Response::last(const std::string& name) const {
  for (auto h = hops.rbegin(); h != hops.rend(); ++h)
    if (auto it = h->find(name); it != h->end()) return it->second;
  return "";
}

Response perform(const Request& request) {
  globalInit();
  Response response;
  CURL* curl = curl_easy_init();
  Transfer transfer{&request, &response, curl};
  if (!curl) {
    response.curlCode = -1;
    response.curlError = "curl_easy_init failed";
    return response;
  }
  struct curl_slist* headers = nullptr;
  if (!request.bearerToken.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + request.bearerToken).c_str());
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  const std::string range = std::to_string(request.rangeStart) + "-";

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "precision-lab/" PLAB_VERSION);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errorBuffer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  // A stalled or dripping transfer fails instead of hanging.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedBytesPerSecond);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, request.lowSpeedSeconds);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  if (headers) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (request.headOnly) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (request.rangeStart > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());

  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = status;
  response.curlCode = static_cast<int>(code);
  if (code != CURLE_OK) response.curlError = errorBuffer[0] ? errorBuffer : curl_easy_strerror(code);
  response.couldNotConnect = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST;
  response.tooSlow = code == CURLE_OPERATION_TIMEDOUT;
  response.connectionLost = code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING ||
                            code == CURLE_PARTIAL_FILE;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

}  // namespace plab::http
