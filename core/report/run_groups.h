#pragma once
// Runs grouped as W&B groups them: by the values of chosen fields
// (report/run_fields.h: "mode", "model", "adamw.lr", several at once), or by
// seed family (the runs whose config differs only in the seed: what the
// paired test pairs), each group with its count and the mean and 95 %
// Student-t interval of its figures. Torch-free and Qt-free.
#include <optional>
#include <string>
#include <vector>

#include "report/paired_gap.h"
#include "report/run_fields.h"
#include "report/run_relations.h"

namespace plab::report {

// What to group by: nothing, the seed family, or fields.
struct Grouping {
  enum class Kind { None, SeedFamily, Fields } kind = Kind::None;
  std::vector<std::string> fields;  // canonical paths, Kind::Fields
  bool operator==(const Grouping& o) const { return kind == o.kind && fields == o.fields; }
  bool operator!=(const Grouping& o) const { return !(*this == o); }
};
// "", "none" -> None; "seeds" / "seed family" -> SeedFamily; else a comma-
// or space-separated list of fields ("mode, model").
Grouping parseGrouping(const std::string& text);
std::string groupingText(const Grouping& g);

struct RunGroup {
  std::string key;              // equal for runs of one group
  std::string label;            // "mode=bf16-sr", "default-bf16 × 3 seeds"
  std::vector<size_t> members;  // in the order given
};

// The groups of `runs` (indices into all) in order of first appearance.
// fields[i] are the fields of all[i]. Seed families: the relations' family
// of each run. A run alone in its group is a group of one.
std::vector<RunGroup> groupRuns(const std::vector<RunRecord>& all, const std::vector<const RunFields*>& fields,
                                const RunRelations& relations, const std::vector<size_t>& runs, const Grouping& grouping);

// The figures of a group over its members: count, and mean with its 95 %
// interval (t with n-1 degrees of freedom) of each figure that members
// measured; the gap to fp32 is each member's final difference to its own
// twin (report/fp32_comparison.h: finalDifference), so that over a seed
// family it is exactly the paired test.
struct GroupFigures {
  int count = 0;
  std::optional<PairedEstimate> finalLoss, finalValLoss, updateLost, roundedAway, tokensPerSecond, stateSaved,
      memoryBytes, peakSaved, gapToFp32;
  bool gapIsValidation = true;  // every member's gap compares validation losses
};
GroupFigures groupFigures(const std::vector<RunRecord>& all, const RunRelations& relations,
                          const std::vector<size_t>& members);

// The fp32-twin column of a group row: what holds for the group as a
// whole, since each member is measured against its own twin (the gap in
// GroupFigures pairs them). cell: "themselves" when every member is fp32;
// "no fp32 twin" when no other member has one; the twin's label when all
// are measured against one fp32 run; the twins' seed family ("base × 3
// seeds") when they form one; else "N fp32 runs" — followed by "(k of n
// runs)" when only k of the n members are measured against them. tip: the
// twins by name (at most five) and which members have none. "–" for a
// group the filter shows nothing of.
struct GroupTwinText {
  std::string cell, tip;
};
GroupTwinText groupFp32TwinText(const std::vector<RunRecord>& all, const RunRelations& relations,
                                const std::vector<size_t>& members);

// "2.3456 ± 0.0012" (value ± half the 95 % interval, or the value alone for one
// member); percent: "12.34 ± 0.56 %"; signedLoss: "+0.0004 ± 0.0002".
std::string estimateText(const PairedEstimate& e, int decimals, bool percent = false, bool signedLoss = false);

}  // namespace plab::report
