#pragma once
// Checks a picked data file the way training will read it (readDocuments),
// so a missing file or a JSONL without the text field is reported when it is
// picked, not after Start.
#include <QString>

#include "data/data_config.h"

namespace plab::ui {

// Empty when the data can be read (or is too large to read on the UI
// thread; training still checks it); otherwise the reader's message.
QString datasetProblem(const plab::DataConfig& config);

}  // namespace plab::ui
