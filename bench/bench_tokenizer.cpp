// Encode throughput of a model folder's tokenizer (loadTokenizerForModel) on
// a text file: every line of it a document, encoded as a run's data set
// encodes it (Tokenizer::encode, one thread). Prints one JSON line per round
// ({"seconds", "bytes", "tokens", "mb_per_s", "checksum"}), so that
// bench/tokenizer_throughput.py can interleave rounds with the tokenizers
// library's. PLAB_SPLIT_SCANNERS=off runs the GPT-2 / Llama-3 / Qwen2
// regexes through Oniguruma instead of the hand-written scanners.
//   build/bench/bench_tokenizer TOKENIZER_DIR TEXT_FILE [rounds] [--whole]
// --whole encodes the file as one document instead.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_tokenizer TOKENIZER_DIR TEXT_FILE [rounds] [--whole]\n");
    return 2;
  }
  try {
    const auto tokenizer = plab::loadTokenizerForModel(argv[1]);
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[2]);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    const int rounds = argc > 3 && std::strcmp(argv[3], "--whole") != 0 ? std::atoi(argv[3]) : 1;
    const bool whole = std::strcmp(argv[argc - 1], "--whole") == 0;
    std::vector<std::string> documents;
    if (whole) {
      documents.push_back(text);
    } else {
      std::size_t start = 0;
      while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        end = end == std::string::npos ? text.size() : end + 1;  // the newline stays with its line
        documents.push_back(text.substr(start, end - start));
        start = end;
      }
    }
    for (int r = 0; r < rounds; ++r) {
      std::size_t tokens = 0;
      unsigned long long checksum = 0;
      const auto begin = std::chrono::steady_clock::now();
      for (const std::string& d : documents) {
        const std::vector<int64_t> ids = tokenizer->encode(d);
        tokens += ids.size();
        for (int64_t id : ids) checksum = checksum * 31 + static_cast<unsigned long long>(id);
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      std::printf("{\"seconds\": %.6f, \"bytes\": %zu, \"tokens\": %zu, \"mb_per_s\": %.3f, \"checksum\": %llu}\n",
                  seconds, text.size(), tokens, double(text.size()) / seconds / 1e6, checksum);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tokenizer: %s\n", e.what());
    return 1;
  }
  return 0;
}
