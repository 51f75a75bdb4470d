#pragma once
// When a run started, written into its run_info.json ("started_at") so
// that runs are ordered by it (report/run_order.h) also where the folder's
// name carries no stamp: a sweep's runs/<name>/, a CLI --out folder.
#include <string>

namespace plab {

// Now in ISO 8601 UTC with milliseconds: "2026-01-02T09:00:00.123Z".
std::string utcTimestampNow();

// "YYYYMMDDHHMMSSmmm" of such a timestamp (seconds-only and up to nine
// fraction digits accepted, the fraction cut or padded to milliseconds),
// comparable as text; "" for anything else (the file may be hand-edited).
std::string sortableUtcStamp(const std::string& iso);

}  // namespace plab
