#include "tokenizer/pre_tokenizer_steps.h"

#include <algorithm>

#include "util/env.h"
#include "util/errors.h"

namespace plab {

namespace {

// The scanners match every character (each regex ends in \s+ or \s, which
// takes what the other alternatives leave), so the text is a run of matches
// with nothing between them. The pieces are then exactly the matches for
// every behavior that keeps a match on its own: Isolated, MergedWithPrevious,
// MergedWithNext (the non-matches they would attach are empty), and Removed
// with invert (it removes the non-matches: tiktoken conversions write that).
bool piecesAreTheMatches(SplitBehavior behavior, bool invert) {
  switch (behavior) {
    case SplitBehavior::Isolated:
    case SplitBehavior::MergedWithPrevious:
    case SplitBehavior::MergedWithNext:
      return true;
    case SplitBehavior::Removed:
      return invert;
    case SplitBehavior::Contiguous:
      return false;
  }
  return false;
}

}  // namespace

PreTokenizerStep PreTokenizerStep::split(const std::string& regex, SplitBehavior behavior, bool invert,
                                         const std::string& source) {
  // PLAB_SPLIT_SCANNERS=off runs every regex through Oniguruma (bench_tokenizer compares the two).
  static const bool scanners = envOrEmpty("PLAB_SPLIT_SCANNERS") != "off";
  if (const auto rule = splitRuleForRegex(regex); scanners && rule && piecesAreTheMatches(behavior, invert))
    return scanner(*rule);
  PreTokenizerStep s;
  s.kind = Kind::Regex;
  s.regex = std::make_shared<const SplitRegex>(regex, source);
  s.behavior = behavior;
  s.invert = invert;
  return s;
}

PreTokenizerStep PreTokenizerStep::scanner(SplitRule rule) {
  PreTokenizerStep s;
  s.kind = Kind::Scanner;
  s.rule = rule;
  return s;
}

PreTokenizerStep PreTokenizerStep::literalSplit(const std::string& literal, SplitBehavior behavior, bool invert) {
  PreTokenizerStep s;
  s.kind = Kind::Literal;
  s.literal = literal;
  s.behavior = behavior;
  s.invert = invert;
  return s;
}

PreTokenizerStep PreTokenizerStep::prefixSpace() {
  PreTokenizerStep s;
  s.kind = Kind::PrefixSpace;
  return s;
}

bool cutsBeforeSpaces(const std::vector<PreTokenizerStep>& steps) {
  // A prefix space changes nothing at such a cut: the text after it already starts with a space.
  const auto is = [](PreTokenizerStep::Kind kind) {
    return [kind](const PreTokenizerStep& s) { return s.kind == kind; };
  };
  return std::any_of(steps.begin(), steps.end(), is(PreTokenizerStep::Kind::Scanner)) &&
         std::all_of(steps.begin(), steps.end(), [&](const PreTokenizerStep& s) {
           return is(PreTokenizerStep::Kind::Scanner)(s) || is(PreTokenizerStep::Kind::PrefixSpace)(s);
         });
}

namespace detail {

void stepSpans(std::string_view text, const PreTokenizerStep& step, std::vector<TextSpan>& pieces) {
  switch (step.kind) {
    case PreTokenizerStep::Kind::Scanner:
      preTokenizeSpans(text, step.rule, pieces);
      return;
    case PreTokenizerStep::Kind::Regex:
    case PreTokenizerStep::Kind::Literal: {
      std::vector<MatchSpan> spans;
      if (step.kind == PreTokenizerStep::Kind::Regex)
        step.regex->findMatches(text, spans);
      else
        findLiteralMatches(text, step.literal, spans);
      piecesFromMatches(spans, step.behavior, step.invert, pieces);
      return;
    }
    case PreTokenizerStep::Kind::PrefixSpace:
      break;
  }
  throw TokenizerError("internal: pre-tokenizer step without spans");
}

}  // namespace detail

}  // namespace plab
