// Dev tool (not part of plab_core: .cc is not globbed) for
// sentencepiece_speed.py: encodes each NUL-separated document of a text file
// whole with a tokenizer.json, prints the throughput ("12.34 MB/s", encode
// time only) and writes one line of ids per document.
//   encode_speed_driver tokenizer.json documents.txt out.ids
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: encode_speed_driver tokenizer.json documents.txt out.ids\n";
    return 2;
  }
  try {
    const auto tokenizer = plab::loadTokenizerJson(argv[1]);
    std::ifstream in(argv[2], std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::vector<std::string> documents;
    std::string document;
    for (std::istringstream docs(buffer.str()); std::getline(docs, document, '\0');) documents.push_back(document);
    std::vector<std::vector<int64_t>> ids;
    std::size_t bytes = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const auto& d : documents) {
      ids.push_back(tokenizer->encode(d));
      bytes += d.size();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ofstream out(argv[3]);
    for (const auto& line : ids) {
      for (std::size_t i = 0; i < line.size(); ++i) out << (i ? " " : "") << line[i];
      out << "\n";
    }
    std::printf("%.2f MB/s\n", static_cast<double>(bytes) / 1e6 / seconds);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
