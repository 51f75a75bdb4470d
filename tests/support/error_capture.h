#pragma once
// Runs f and returns the message of the exception of type E it throws, so
// tests can assert both the type and that the message names the culprit.
// A wrong exception type or none at all yields a message that fails any
// content check.
#include <exception>
#include <string>
#include <utility>

namespace plab::test {

template <typename E, typename F>
std::string errorMessageOf(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO EXCEPTION";
}

// True when f throws exactly an E (or a subclass of it).
template <typename E, typename F>
bool throwsError(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

inline bool mentions(const std::string& message, const std::string& what) {
  return message.find(what) != std::string::npos;
}

}  // namespace plab::test
