// Peak memory of loading a data set: a single-line text file used to take
// 25x its size with the byte tokenizer (32 MiB -> 805 MiB: the whole text,
// int64 ids, an int64 block copy and the train/validation copies) and 31x
// with a GPT-2 style BPE (8 MiB -> 249 MiB: every pre-token of the whole
// text). Tokens are now streamed in pieces into a compact uint16/uint32
// store, so the peak growth stays near the size of the tokens. Its own
// executable: the peak (VmHWM) is reset through /proc/self/clear_refs before
// each measurement.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "data/data_config.h"
#include "data/text_dataset.h"
#include "support/byte_level_vocab.h"
#include "support/temp_files.h"
#include "support/test_registry.h"
#include "tokenizer/tokenizer.h"

namespace test_dataset_memory {

using namespace plab;

namespace {

constexpr int64_t kMiB = 1 << 20;

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"); -1 if absent.
int64_t statusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return -1;
}

// Sets the peak RSS back to the current RSS (Linux >= 4.0).
bool resetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// One line of words and punctuation, no newline, written 1 MiB at a time.
void writeSingleLineText(const std::string& path, int64_t bytes) {
  static const char* const kWords[] = {"the", "precision", "of", "a", "weight", "update", "is", "lost,",
                                       "when", "bf16", "rounds", "it", "away;", "Kahan", "sums", "keep"};
  std::mt19937_64 rng(11);
  std::ofstream out(path, std::ios::binary);
  std::string chunk;
  int64_t written = 0;
  while (written < bytes) {
    chunk.clear();
    while (static_cast<int64_t>(chunk.size()) < kMiB) {
      chunk += kWords[rng() % 16];
      chunk += ' ';
    }
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(chunk.size()), bytes - written);
    out.write(chunk.data(), n);
    written += n;
  }
}

// A small GPT-2 style tokenizer.json: byte-level BPE with the GPT-2 split.
nlohmann::json gpt2StyleTokenizer() {
  const std::vector<std::pair<std::string, std::string>> merges = {
      {" ", "t"}, {"h", "e"}, {" t", "he"}, {"r", "e"}, {"e", "s"}, {" ", "w"}, {"i", "n"}, {"o", "n"}};
  const nlohmann::json vocab = test::byteLevelVocab(merges);
  nlohmann::json mergeList = nlohmann::json::array();
  for (const auto& [a, b] : merges) mergeList.push_back(test::byteLevelMerge(a, b));
  nlohmann::json j;
  j["added_tokens"] =
      nlohmann::json::array({{{"id", vocab.size()}, {"content", "<|endoftext|>"}, {"special", true}}});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  j["post_processor"] = nullptr;
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", mergeList}};
  return j;
}

}  // namespace

class TestDatasetMemory : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void singleLineTextPeakStaysNearTheTokens() {
    if (statusBytes("VmHWM") < 0 || !resetPeakRss()) QSKIP("no VmHWM / clear_refs here");
    // PLAB_DATASET_MEMORY_MIB=100 measures a bigger file by hand.
    const int64_t size = qEnvironmentVariableIntValue("PLAB_DATASET_MEMORY_MIB") > 0
                             ? qEnvironmentVariableIntValue("PLAB_DATASET_MEMORY_MIB") * kMiB
                             : 32 * kMiB;
    const std::string path = (tmp_.path() + "/one-line.txt").toStdString();
    writeSingleLineText(path, size);
    auto bytes = makeByteTokenizer();
    DataConfig config;
    config.path = path;

    QVERIFY(resetPeakRss());
    const int64_t before = statusBytes("VmRSS");
    TextDataset d(config, *bytes, 255);
    const int64_t growth = statusBytes("VmHWM") - before;
    std::printf("single-line %lld MiB, byte tokenizer, in memory: peak RSS growth %.1f MiB (%.2fx the file)\n",
                static_cast<long long>(size / kMiB), double(growth) / kMiB, double(growth) / double(size));
    QCOMPARE(d.numTokens(), size);
    QCOMPARE(d.bytesPerToken(), 2);
    // 2 bytes per token plus a fixed allowance; the old in-memory int64 path took 25x (805 MiB).
    QVERIFY2(growth < 3 * size + 64 * kMiB, qPrintable(QString::number(double(growth) / kMiB) + " MiB"));

    // With a folder the tokens go to an unlinked file there, memory-mapped:
    // loading touches none of its pages.
    const auto folder = std::filesystem::path(tmp_.path().toStdString()) / "run";
    std::filesystem::create_directories(folder);
    QVERIFY(resetPeakRss());
    const int64_t beforeMapped = statusBytes("VmRSS");
    TextDataset mapped(config, *bytes, 255, folder);
    const int64_t mappedGrowth = statusBytes("VmHWM") - beforeMapped;
    std::printf("single-line %lld MiB, byte tokenizer, token file: peak RSS growth %.1f MiB (%.2fx the file)\n",
                static_cast<long long>(size / kMiB), double(mappedGrowth) / kMiB, double(mappedGrowth) / double(size));
    QVERIFY(mapped.tokensMapped());
    QVERIFY2(mappedGrowth < size / 2 + 64 * kMiB, qPrintable(QString::number(double(mappedGrowth) / kMiB) + " MiB"));
    QVERIFY(std::filesystem::is_empty(folder));
    std::mt19937_64 r1(1), r2(1);
    QVERIFY(torch::equal(d.trainBatch(4, r1).first, mapped.trainBatch(4, r2).first));
  }

  // The GPT-2 split used to hold every piece of the whole text as a string,
  // and each character as a code point and an offset (~40x the text).
  void singleLineTextWithBpeStaysNearTheTokens() {
    if (statusBytes("VmHWM") < 0 || !resetPeakRss()) QSKIP("no VmHWM / clear_refs here");
    const int64_t size = 8 * kMiB;
    const std::string path = (tmp_.path() + "/one-line-bpe.txt").toStdString();
    writeSingleLineText(path, size);
    auto bpe = loadTokenizerJson(plab::test::writeTestFile(tmp_, "tokenizer.json", gpt2StyleTokenizer().dump()));
    DataConfig config;
    config.path = path;

    QVERIFY(resetPeakRss());
    const int64_t before = statusBytes("VmRSS");
    TextDataset d(config, *bpe, 255);
    const int64_t growth = statusBytes("VmHWM") - before;
    std::printf("single-line %lld MiB, GPT-2 style BPE (%lld tokens), in memory: peak RSS growth %.1f MiB (%.2fx the file)\n",
                static_cast<long long>(size / kMiB), static_cast<long long>(d.numTokens()), double(growth) / kMiB,
                double(growth) / double(size));
    QVERIFY2(growth < 3 * size + 64 * kMiB, qPrintable(QString::number(double(growth) / kMiB) + " MiB"));
  }
};

PLAB_TEST_APPLESS_MAIN(TestDatasetMemory)
}  // namespace test_dataset_memory
#include "test_dataset_memory.moc"
