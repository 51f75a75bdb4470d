#pragma once
// Names that become paths in the HF cache are checked before any use, with
// the rules of huggingface_hub (repo ids) and git (revisions), so that no
// name can point outside $HF_HUB_CACHE/models--org--name.
#include <string>

namespace plab {

// "name" or "namespace/name": letters, digits, '_', '-', '.'; each part
// starts and ends with a letter, digit or '_'; no "--" or ".."; not ending
// in ".git"; at most 96 characters per part. Throws ConfigError.
void validateRepoId(const std::string& repoId);

// A branch, tag or commit as git accepts it: no "..", no "//", no part
// starting with '.' or ending in ".lock", no leading or trailing '/', no
// control characters, space or any of ~^:?*[\ and no "@{". Throws ConfigError.
void validateRevision(const std::string& revision);

}  // namespace plab
