// TextDataset and DataConfig: block arithmetic, the train/validation split,
// seed determinism, shifted targets, JSONL parsing errors with line numbers
// and the embedded default corpus. The byte tokenizer makes token counts
// equal byte counts, so every expected number follows from the file sizes.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "data/data_config.h"
#include "data/text_dataset.h"
#include "support/error_capture.h"
#include "support/temp_files.h"
#include "support/test_registry.h"
#include "tokenizer/tokenizer.h"
#include "util/errors.h"
#include "util/resources.h"

namespace test_dataset {

using namespace plab;
using nlohmann::json;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

// "000000000\n000000001\n...": with seq_len 9 every block is exactly one line.
std::string numberedLines(int n) {
  std::string s;
  char line[16];
  for (int i = 0; i < n; ++i) {
    std::snprintf(line, sizeof line, "%09d\n", i);
    s += line;
  }
  return s;
}

std::string rowText(const torch::Tensor& row) {
  std::string s;
  auto acc = row.contiguous();
  for (int64_t i = 0; i < acc.size(0); ++i) s += static_cast<char>(acc[i].item<int64_t>());
  return s;
}

std::set<std::string> valLines(const TextDataset& d) {
  std::set<std::string> lines;
  for (const auto& [inputs, targets] : d.valBatches(7, 0))
    for (int64_t r = 0; r < inputs.size(0); ++r)
      lines.insert(rowText(inputs[r]) + rowText(targets[r].narrow(0, targets.size(1) - 1, 1)));
  return lines;
}

}  // namespace

class TestDataset : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  std::unique_ptr<Tokenizer> bytes_ = makeByteTokenizer();

  std::string write(const std::string& name, const std::string& text) {
    return plab::test::writeTestFile(tmp_, name, text).string();
  }
  DataConfig config(const std::string& path, double valFraction = 0.1, uint64_t seed = 0) {
    DataConfig c;
    c.path = path;
    c.val_fraction = valFraction;
    c.seed = seed;
    return c;
  }

 private slots:
  void textFileBlockCounts() {
    const auto path = write("lines.txt", numberedLines(200));  // 2000 bytes
    TextDataset d(config(path), *bytes_, 9);
    QCOMPARE(d.numTokens(), int64_t(2000));
    QCOMPARE(d.seqLen(), int64_t(9));
    QCOMPARE(d.numValBlocks(), int64_t(20));  // round(0.1 * 200)
    QCOMPARE(d.numTrainBlocks(), int64_t(180));

    // 2003 tokens with blocks of 12: floor(2003 / 12) = 166 blocks, round(0.25 * 166) = 42 held back.
    const auto odd = write("odd.txt", numberedLines(200) + "xyz");
    TextDataset e(config(odd, 0.25), *bytes_, 11);
    QCOMPARE(e.numTokens(), int64_t(2003));
    QCOMPARE(e.numTrainBlocks() + e.numValBlocks(), int64_t(166));
    QCOMPARE(e.numValBlocks(), int64_t(42));

    // At least one validation block, even with val_fraction 0.
    TextDataset f(config(path, 0.0), *bytes_, 9);
    QCOMPARE(f.numValBlocks(), int64_t(1));
    QCOMPARE(f.numTrainBlocks(), int64_t(199));
  }

  void trainAndValidationAreDisjointBlocks() {
    const std::string text = numberedLines(200);
    TextDataset d(config(write("lines.txt", text)), *bytes_, 9);
    const auto val = valLines(d);
    QCOMPARE(val.size(), std::size_t(20));
    std::mt19937_64 rng(1);
    std::set<std::string> train;
    for (int i = 0; i < 100; ++i) {
      auto [inputs, targets] = d.trainBatch(20, rng);
      for (int64_t r = 0; r < inputs.size(0); ++r)
        train.insert(rowText(inputs[r]) + rowText(targets[r].narrow(0, 8, 1)));
    }
    QVERIFY(train.size() >= 170 && train.size() <= 180);  // 2000 draws over 180 blocks
    for (const auto& line : train) {
      QVERIFY2(!val.count(line), line.c_str());
      QVERIFY(text.find(line) % 10 == 0);  // whole lines: blocks are not cut mid-line
    }
    for (const auto& line : val) QVERIFY(text.find(line) != std::string::npos);
  }

  void sameSeedSameSplitOtherSeedOtherSplit() {
    const auto path = write("lines.txt", numberedLines(200));
    TextDataset a(config(path, 0.1, 7), *bytes_, 9);
    TextDataset b(config(path, 0.1, 7), *bytes_, 9);
    TextDataset c(config(path, 0.1, 8), *bytes_, 9);
    QVERIFY(valLines(a) == valLines(b));
    QVERIFY(valLines(a) != valLines(c));
    const auto va = a.valBatches(5, 0), vb = b.valBatches(5, 0);
    QCOMPARE(va.size(), vb.size());
    for (std::size_t i = 0; i < va.size(); ++i) QVERIFY(torch::equal(va[i].first, vb[i].first));
    std::mt19937_64 r1(3), r2(3);
    QVERIFY(torch::equal(a.trainBatch(4, r1).first, b.trainBatch(4, r2).first));
  }

  void targetsAreInputsShiftedByOne() {
    const std::string text = numberedLines(200);
    TextDataset d(config(write("lines.txt", text)), *bytes_, 9);
    std::mt19937_64 rng(5);
    auto [inputs, targets] = d.trainBatch(8, rng);
    QVERIFY(inputs.sizes().vec() == (std::vector<int64_t>{8, 9}));
    QVERIFY(targets.sizes().vec() == (std::vector<int64_t>{8, 9}));
    QVERIFY(inputs.scalar_type() == torch::kLong);
    QVERIFY(torch::equal(inputs.narrow(1, 1, 8), targets.narrow(1, 0, 8)));
    for (int64_t r = 0; r < 8; ++r) {
      const std::string line = rowText(inputs[r]) + rowText(targets[r].narrow(0, 8, 1));
      QVERIFY(line.back() == '\n');
      QVERIFY(text.find(line) != std::string::npos);
    }
    const auto val = d.valBatches(8, 0);
    QCOMPARE(val.size(), std::size_t(3));  // 8 + 8 + 4
    QCOMPARE(val[2].first.size(0), int64_t(4));
    QCOMPARE(d.valBatches(8, 2).size(), std::size_t(2));
    for (const auto& [in, tg] : val) QVERIFY(torch::equal(in.narrow(1, 1, 8), tg.narrow(1, 0, 8)));
  }

  void jsonlDocumentsAreSeparatedByEos() {
    std::string jsonl;
    for (int i = 0; i < 30; ++i) {
      const std::string doc = "document number " + std::to_string(i) + " says \"hi\"";
      jsonl += json{{"id", i}, {"body", doc}}.dump() + "\n";
      if (i == 10) jsonl += "\n   \n";  // blank lines are skipped
    }
    DataConfig c = config(write("docs.jsonl", jsonl));
    c.text_field = "body";
    int64_t total = 0;
    for (int i = 0; i < 30; ++i)
      total += static_cast<int64_t>(("document number " + std::to_string(i) + " says \"hi\"").size());
    total += 29;  // one EOS between consecutive documents
    TextDataset d(c, *bytes_, 15);
    QCOMPARE(d.numTokens(), total);
    QCOMPARE(d.numTrainBlocks() + d.numValBlocks(), total / 16);
    int eosSeen = 0;
    for (const auto& [in, tg] : d.valBatches(4, 0)) eosSeen += (in == 256).sum().item<int>();
    std::mt19937_64 rng(2);
    for (int i = 0; i < 20; ++i) eosSeen += (d.trainBatch(8, rng).first == 256).sum().item<int>();
    QVERIFY(eosSeen > 0);
  }

  void badJsonlNamesTheLine() {
    const auto bad = write("bad.jsonl", "{\"text\": \"fine\"}\n\n{\"text\": broken\n");
    std::string msg = errorMessageOf<DataError>([&] { (void)TextDataset(config(bad), *bytes_, 4); });
    QVERIFY2(mentions(msg, "bad.jsonl:3"), msg.c_str());

    const auto noField = write("nofield.jsonl", "{\"text\": \"fine\"}\n{\"content\": \"x\"}\n");
    msg = errorMessageOf<DataError>([&] { (void)TextDataset(config(noField), *bytes_, 4); });
    QVERIFY2(mentions(msg, "nofield.jsonl:2") && mentions(msg, "'text'"), msg.c_str());

    const auto notString = write("num.jsonl", "{\"text\": 5}\n");
    QVERIFY(mentions(errorMessageOf<DataError>([&] { (void)TextDataset(config(notString), *bytes_, 4); }), "num.jsonl:1"));
  }

  void tooSmallOrMissingData() {
    const auto tiny = write("tiny.txt", "0123456789abcde");  // 15 tokens: one block of 10
    std::string msg = errorMessageOf<DataError>([&] { (void)TextDataset(config(tiny), *bytes_, 9); });
    QVERIFY2(mentions(msg, "tiny.txt") && mentions(msg, "15"), msg.c_str());
    TextDataset ok(config(write("twenty.txt", "0123456789abcdefghij")), *bytes_, 9);  // exactly two blocks
    QCOMPARE(ok.numTrainBlocks(), int64_t(1));
    QCOMPARE(ok.numValBlocks(), int64_t(1));

    const std::string missing = (std::filesystem::path(tmp_.path().toStdString()) / "missing.txt").string();
    QVERIFY(mentions(errorMessageOf<DataError>([&] { (void)TextDataset(config(missing), *bytes_, 9); }), missing));
    QVERIFY(mentions(errorMessageOf<DataError>([&] { (void)TextDataset(config(tiny), *bytes_, 0); }), "0"));
  }

  void defaultCorpusLoads() {
    TextDataset d(DataConfig{}, *bytes_, 64);
    const auto corpus = embeddedResource("data/corpus.txt");
    QVERIFY(corpus.size() > 150000);
    QCOMPARE(d.numTokens(), static_cast<int64_t>(corpus.size()));
    const int64_t blocks = d.numTokens() / 65;
    QCOMPARE(d.numTrainBlocks() + d.numValBlocks(), blocks);
    QCOMPARE(d.numValBlocks(), static_cast<int64_t>(std::llround(0.1 * blocks)));
  }

  void dataConfigJson() {
    DataConfig c;
    c.path = "/data/x.jsonl";
    c.text_field = "content";
    c.val_fraction = 0.05;
    c.seed = 42;
    const DataConfig back = dataConfigFromJson(toJson(c));
    QCOMPARE(QString::fromStdString(back.path), QString("/data/x.jsonl"));
    QCOMPARE(QString::fromStdString(back.text_field), QString("content"));
    QCOMPARE(back.val_fraction, 0.05);
    QCOMPARE(back.seed, uint64_t(42));
    const DataConfig defaults = dataConfigFromJson(json::object());
    QCOMPARE(QString::fromStdString(defaults.text_field), QString("text"));
    QCOMPARE(defaults.val_fraction, 0.1);

    std::string msg = errorMessageOf<ConfigError>([] { dataConfigFromJson(json{{"path", ""}, {"shuffle", true}}); });
    QVERIFY2(mentions(msg, "'shuffle'"), msg.c_str());
    msg = errorMessageOf<ConfigError>([] { dataConfigFromJson(json{{"val_fraction", "lots"}}); });
    QVERIFY2(mentions(msg, "val_fraction"), msg.c_str());
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { dataConfigFromJson(json{{"val_fraction", 1.0}}); }), "val_fraction"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { dataConfigFromJson(json{{"seed", -3}}); }), "seed"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { dataConfigFromJson(json::array()); }), "object"));
  }
};

PLAB_TEST_APPLESS_MAIN(TestDataset)
}  // namespace test_dataset
#include "test_dataset.moc"
