#pragma once
// A run as named fields, for filtering and grouping a workspace the way W&B
// and TensorBoard let one: every config field by its dotted path
// ("adamw.lr", "data.path", "plan.preset", "model.path"), short names for
// the common ones ("lr", "wd", "model", "data", "seed", "format", ...), and
// the run's status, name, folder and final figures ("loss", "val_loss",
// "update_lost", "tokens_per_s"). Computed once per run and change, then
// matched per key press. Torch-free and Qt-free.
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

struct FieldValue {
  std::string text;               // as shown; lower-cased copy in `folded`
  std::string folded;
  std::optional<double> number;   // for <, >, = on numbers
};

struct RunFields {
  std::unordered_map<std::string, FieldValue> values;  // by dotted path
  std::string words;  // lower-cased name, mode, status and folder, for plain words
  const FieldValue* find(const std::string& field) const;
};

// status: "completed", "running", ... as the views say it; folderName: the
// run folder's name.
RunFields runFields(const RunRecord& run, const std::string& status, const std::string& folderName);

// The dotted path a field name stands for: an alias ("lr" -> "adamw.lr"),
// or the name itself.
std::string canonicalField(const std::string& name);
// The aliases and the figure fields, for the filter's help text.
std::vector<std::pair<std::string, std::string>> fieldAliases();

// How a group is named in a table or legend: "mode=bf16-sr", or for a plan
// its preset and the number of overrides instead of its JSON.
std::string fieldValueLabel(const std::string& field, const FieldValue* value);

}  // namespace plab::report
