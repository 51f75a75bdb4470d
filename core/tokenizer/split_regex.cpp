#include "tokenizer/split_regex.h"

#include <oniguruma.h>

#include <mutex>
#include <new>

#include "tokenizer/unicode_tables.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace {

// Oniguruma's own default per match is 10,000,000 retries (the library
// inherits it); one search (the retries at every start position it tries)
// gets ten times that, so that a pattern with catastrophic backtracking ends
// with an error instead of running for hours.
constexpr unsigned long kMaxRetriesInMatch = 10'000'000;
constexpr unsigned long kMaxRetriesInSearch = 100'000'000;
// Backtracking entries (tens of bytes each): a greedy `\p{L}+` over a run of
// n letters keeps about n of them, so runs of millions of characters pass.
constexpr unsigned int kMaxStackEntries = 4'000'000;

void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

std::string onigMessage(int code, OnigErrorInfo* info) {
  OnigUChar text[ONIG_MAX_ERROR_MESSAGE_LEN];
  const int n = info ? onig_error_code_to_str(text, code, info) : onig_error_code_to_str(text, code);
  return std::string(reinterpret_cast<const char*>(text), n > 0 ? static_cast<std::size_t>(n) : 0);
}

// The text as Oniguruma reads it: itself when it is valid UTF-8, else a
// copy with U+FFFD for each invalid byte and the original offset of every
// byte of the copy.
struct Matchable {
  std::string_view text;
  std::string copy;
  std::vector<std::size_t> original;  // empty when text is the input itself

  explicit Matchable(std::string_view input) : text(input) {
    std::size_t pos = 0;
    while (pos < input.size()) {
      std::size_t len = 0;
      if (unicode::decodeUtf8(input.data(), input.size(), pos, len) == unicode::kInvalidCodePoint) break;
      pos += len;
    }
    if (pos == input.size()) return;
    copy.reserve(input.size() + 16);
    original.reserve(input.size() + 16);
    for (pos = 0; pos < input.size();) {
      std::size_t len = 0;
      if (unicode::decodeUtf8(input.data(), input.size(), pos, len) == unicode::kInvalidCodePoint) {
        copy += "\xEF\xBF\xBD";
        original.insert(original.end(), 3, pos);
      } else {
        copy.append(input.data() + pos, len);
        for (std::size_t i = 0; i < len; ++i) original.push_back(pos + i);
      }
      pos += len;
    }
    original.push_back(input.size());
    text = copy;
  }
  std::size_t originalOffset(std::size_t at) const { return original.empty() ? at : original[at]; }
};

// Bytes of the UTF-8 character starting at text[at] (1 past the end, as the onig crate steps).
std::size_t charLength(std::string_view text, std::size_t at) {
  if (at >= text.size()) return 1;
  std::size_t len = 0;
  unicode::decodeUtf8(text.data(), text.size(), at, len);
  return len;
}

}  // namespace

struct SplitRegex::Compiled {
  OnigRegex regex = nullptr;
  ~Compiled() {
    if (regex) onig_free(regex);
  }
};

SplitRegex::SplitRegex(const std::string& pattern, const std::string& source)
    : pattern_(pattern), source_(source), compiled_(std::make_unique<Compiled>()) {
  if (pattern.size() > kMaxPatternBytes)
    throw TokenizerError(source + ": Split regex of " + std::to_string(pattern.size()) + " bytes (at most " +
                         std::to_string(kMaxPatternBytes) + " are accepted)");
  initializeOnce();
  OnigErrorInfo info{};
  const auto* begin = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int r = onig_new(&compiled_->regex, begin, begin + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                         ONIG_SYNTAX_DEFAULT, &info);
  if (r != ONIG_NORMAL) {
    compiled_->regex = nullptr;
    throw TokenizerError(source + ": Split regex '" + textExcerpt(pattern) + "' does not compile: " +
                         onigMessage(r, &info));
  }
}

SplitRegex::~SplitRegex() = default;

void SplitRegex::findMatches(std::string_view input, std::vector<MatchSpan>& out) const {
  out.clear();
  if (input.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  const Matchable m(input);
  const std::string_view text = m.text;
  // One region and match parameter block per thread, reused: a Sequence of
  // Splits calls this once for every piece of the step before.
  struct Scratch {
    std::unique_ptr<OnigRegion, void (*)(OnigRegion*)> region{onig_region_new(),
                                                              [](OnigRegion* r) { onig_region_free(r, 1); }};
    std::unique_ptr<OnigMatchParam, void (*)(OnigMatchParam*)> param{onig_new_match_param(), onig_free_match_param};
    Scratch() {
      if (!region || !param) throw std::bad_alloc();
      onig_initialize_match_param(param.get());
      onig_set_retry_limit_in_match_of_match_param(param.get(), kMaxRetriesInMatch);
      onig_set_retry_limit_in_search_of_match_param(param.get(), kMaxRetriesInSearch);
      onig_set_match_stack_limit_size_of_match_param(param.get(), kMaxStackEntries);
    }
  };
  static thread_local Scratch scratch;
  OnigRegion* const region = scratch.region.get();
  OnigMatchParam* const param = scratch.param.get();

  const auto* str = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* end = str + text.size();
  std::size_t from = 0, prev = 0;
  bool matchedBefore = false;
  std::size_t lastMatchEnd = 0;
  while (from <= text.size()) {
    onig_region_clear(region);
    const int r = onig_search_with_param(compiled_->regex, str, end, str + from, end, region, ONIG_OPTION_NONE, param);
    if (r == ONIG_MISMATCH) break;
    if (r < 0)
      throw TokenizerError(source_ + ": Split regex '" + textExcerpt(pattern_) + "' gave up on a text of " +
                           std::to_string(input.size()) + " bytes: " + onigMessage(r, nullptr));
    const auto s = static_cast<std::size_t>(region->beg[0]), e = static_cast<std::size_t>(region->end[0]);
    if (s == e && matchedBefore && lastMatchEnd == e) {
      from += charLength(text, from);  // an empty match where the last one ended: step over a character
      continue;
    }
    from = e;
    matchedBefore = true;
    lastMatchEnd = e;
    if (s != prev) out.push_back({m.originalOffset(prev), m.originalOffset(s), false});
    out.push_back({m.originalOffset(s), m.originalOffset(e), true});
    prev = e;
  }
  if (prev != text.size()) out.push_back({m.originalOffset(prev), input.size(), false});
}

}  // namespace plab
