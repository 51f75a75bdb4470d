// Dev tool (not part of plab_core: .cc is not globbed). Prints the pieces of
// hex-encoded strings so check_pretokenizer.py can compare the hand-written
// scanners with the real regexes (python3 "regex" module).
#include <iostream>
#include <string>
#include "tokenizer/pretokenizer.h"
// stdin: lines "rule<TAB>hex"; stdout: pieces hex joined by ','
int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    auto tab = line.find('\t');
    int rule = std::stoi(line.substr(0, tab));
    std::string hex = line.substr(tab + 1), text;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) text += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    auto pieces = plab::preTokenize(text, static_cast<plab::SplitRule>(rule));
    static const char* d = "0123456789abcdef";
    std::string out;
    for (size_t k = 0; k < pieces.size(); ++k) {
      if (k) out += ',';
      for (unsigned char c : pieces[k]) { out += d[c >> 4]; out += d[c & 15]; }
    }
    std::cout << out << "\n";
  }
}
