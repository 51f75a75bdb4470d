// What a checkpoint's checksums cost (train/checkpoint_manifest.h): the
// sha256 of a file of N MiB as the checkpoint writer and the resume read it
// (util/file_digest.h, from the page cache after the first round), against
// coreutils' `sha256sum` on the same file. Paired rounds, order
// alternating; medians. Seconds per GiB of checkpoint = 1024 / (MiB/s).
//   bench_checkpoint_digest [MiB=512] [rounds=5]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util/file_digest.h"

namespace {

double seconds(const std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long mib = argc > 1 ? std::atol(argv[1]) : 512;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("plab-digest-bench-" + std::to_string(::getpid()) + ".bin");
  {
    std::ofstream out(file, std::ios::binary);
    std::string block(1 << 20, '\0');
    for (size_t i = 0; i < block.size(); ++i) block[i] = char((i * 2654435761u) >> 13);
    for (long i = 0; i < mib; ++i) out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  const std::string command = "sha256sum '" + file.string() + "' > /dev/null";
  std::vector<double> ours, theirs;
  std::string digest;
  for (int r = 0; r < rounds; ++r) {
    for (int side = 0; side < 2; ++side) {
      const bool oursFirst = r % 2 == 0;
      const auto start = std::chrono::steady_clock::now();
      if ((side == 0) == oursFirst) {
        std::string problem;
        digest = plab::digestRegularFile(file, problem)->sha256;
        ours.push_back(seconds(start));
      } else {
        if (std::system(command.c_str()) != 0) std::fprintf(stderr, "sha256sum failed\n");
        theirs.push_back(seconds(start));
      }
    }
  }
  std::filesystem::remove(file);
  const double a = median(ours), b = median(theirs);
  std::printf("sha256 of %ld MiB (page cache), %d paired rounds, medians\n", mib, rounds);
  std::printf("  util/file_digest: %7.3f s  %7.1f MiB/s  %5.2f s per GiB of checkpoint\n", a, mib / a, 1024.0 / (mib / a));
  std::printf("  sha256sum:        %7.3f s  %7.1f MiB/s  (reference)\n", b, mib / b);
  std::printf("  ratio: %.2fx the reference's time; digest %s...\n", a / b, digest.substr(0, 16).c_str());
  return 0;
}
