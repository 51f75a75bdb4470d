#pragma once
// The runs table's filter, as W&B's run search reads it: words match the
// name, mode, status or folder; `field:value` matches a field containing the
// value (a number: equal to it), `field=value` / `field!=value` exactly, and
// `field<value`, `<=`, `>`, `>=` compare numbers ("lr<1e-4", "seed>=3",
// "val_loss<2.3"); a leading '-' excludes; "double quotes" keep spaces
// in a value. Fields are report/run_fields.h's (dotted config paths,
// aliases, figures). Every term must match. Torch-free and Qt-free.
#include <optional>
#include <string>
#include <vector>

#include "report/run_fields.h"

namespace plab::report {

struct RunQuery {
  enum class Op { Word, Contains, Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual };
  struct Term {
    bool exclude = false;
    Op op = Op::Word;
    std::string field;   // canonical dotted path; empty for a word
    std::string value;   // lower-cased
    std::optional<double> number;  // the value read as a number, when it is one
  };
  std::vector<Term> terms;
  // Terms naming a field no run config has ("lrr:3"): they match no run;
  // the view says which.
  std::vector<std::string> unknownFields;
  bool empty() const { return terms.empty(); }
};

RunQuery parseRunQuery(const std::string& text);
bool matchesQuery(const RunQuery& query, const RunFields& run);

}  // namespace plab::report
