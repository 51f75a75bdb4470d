#include "util/blas_info.h"

#include <fstream>
#include <sstream>

namespace plab {

BlasInfo loadedBlas() {
  BlasInfo info{"unknown", "", false};
  std::ifstream maps("/proc/self/maps");
  std::string line;
  // The most specific library wins: an optimised BLAS may also map libblas.so.3.
  int best = 0;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    int rank = 0;
    std::string name;
    if (path.find("libopenblas") != std::string::npos) rank = 3, name = "OpenBLAS";
    else if (path.find("libmkl") != std::string::npos) rank = 3, name = "MKL";
    else if (path.find("libblis") != std::string::npos) rank = 3, name = "BLIS";
    else if (path.find("/blas/libblas.so") != std::string::npos) rank = 2, name = "reference BLAS";
    else if (path.find("libblas.so") != std::string::npos) rank = 1, name = "libblas.so";
    if (rank > best) {
      best = rank;
      info = {name, path, name == "reference BLAS"};
    }
  }
  return info;
}

}  // namespace plab
