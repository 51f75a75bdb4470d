#pragma once
// The workspace: the one folder where every run lives by default, the CLI's
// as well as the app's. Torch-free and Qt-free.
#include <filesystem>

namespace plab {

// $PLAB_WORKSPACE when set; else the app's data location as Qt names it on
// Linux (QStandardPaths::AppDataLocation for organisation and application
// "Precision Lab"): $XDG_DATA_HOME, or ~/.local/share, then
// "Precision Lab/Precision Lab/workspace". Falls back to "runs" in the
// working folder when neither HOME nor XDG_DATA_HOME is set.
std::filesystem::path defaultWorkspaceFolder();

}  // namespace plab
