// safetensors reader/writer: bit-exact round trips of every dtype, a file
// layout checked by an independent parser, and clear errors (naming the file
// and tensor) for every kind of corrupt file.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model/safetensors.h"
#include "support/error_capture.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_safetensors {

using namespace plab;
namespace fs = std::filesystem;
using nlohmann::json;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

// A file made by hand: header length (real or forged), header text, data.
void writeRawSafetensors(const fs::path& p, const std::string& header, const std::string& data,
                         int64_t forgedLength = -1) {
  writeBytes(p, le64(forgedLength >= 0 ? uint64_t(forgedLength) : header.size()) + header + data);
}

bool bitsEqual(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const auto ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.data_ptr(), bc.data_ptr(), ac.numel() * ac.element_size()) == 0;
}

}  // namespace

class SafetensorsTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  fs::path dir() const { return fs::path(tmp_.path().toStdString()); }

  std::vector<std::pair<std::string, torch::Tensor>> allDtypes() const {
    torch::manual_seed(3);
    // bf16 bit patterns that must survive untouched: +-0, 1, smallest
    // subnormal, max finite, +-inf, a NaN payload, and an odd mantissa.
    const torch::Tensor bf16Bits = torch::tensor(
        std::vector<int16_t>{0x0000, int16_t(0x8000), 0x3F80, 0x0001, 0x7F7F, 0x7F80, int16_t(0xFF80), 0x7FC1, 0x3F81},
        torch::kInt16);
    return {
        {"f32", torch::randn({3, 5})},
        {"f16", torch::randn({4, 2}).to(torch::kFloat16)},
        {"bf16_bits", bf16Bits.view(torch::kBFloat16)},
        {"bf16_rand", torch::randn({7}).to(torch::kBFloat16)},
        {"f64", torch::randn({2, 2, 2}, torch::kFloat64)},
        {"i64", torch::tensor(std::vector<int64_t>{INT64_MIN, -1, 0, INT64_MAX})},
        {"i32", torch::randint(-100000, 100000, {6}, torch::kInt32)},
        {"i16", torch::randint(-30000, 30000, {2, 3}, torch::kInt16)},
        {"i8", torch::randint(-128, 127, {5}, torch::kInt8)},
        {"u8", torch::randint(0, 255, {9}, torch::kUInt8)},
        {"bool", torch::tensor(std::vector<int>{1, 0, 1, 1, 0}).to(torch::kBool)},
        {"scalar", torch::tensor(2.5f)},
        {"empty", torch::empty({0, 3})},
        {"strided", torch::randn({4, 6}).t()},  // non-contiguous input
    };
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void roundTripAllDtypes() {
    const auto tensors = allDtypes();
    const fs::path p = dir() / "all.safetensors";
    writeSafetensors(p, tensors, {{"format", "pt"}, {"note", "round trip"}});
    SafetensorsFile f(p);
    QCOMPARE(f.names().size(), tensors.size());
    QCOMPARE(f.metadata().at("note"), std::string("round trip"));
    QCOMPARE(f.entry("bf16_bits").dtype, std::string("BF16"));
    QCOMPARE(f.entry("bool").dtype, std::string("BOOL"));
    for (const auto& [name, t] : tensors) {
      const torch::Tensor back = f.load(name);
      QVERIFY2(bitsEqual(back, t), name.c_str());
    }
    QCOMPARE(f.load("bf16_bits").view(torch::kInt16)[7].item<int16_t>(), int16_t(0x7FC1));
  }

  // Parses the written file with a tiny independent reader: 8-byte-aligned,
  // space-padded header, tensors sorted by name and packed back to back.
  void layoutMatchesFormat() {
    const torch::Tensor b = torch::arange(6, torch::kFloat32).view({2, 3});
    const torch::Tensor a = torch::tensor(std::vector<int16_t>{1, 2, 3}, torch::kInt16);
    const fs::path p = dir() / "layout.safetensors";
    writeSafetensors(p, {{"b", b}, {"a", a}});
    const std::string bytes = readAll(p);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(bytes[i]);
    QCOMPARE(n % 8, uint64_t(0));
    const std::string header = bytes.substr(8, n);
    const auto lastBrace = header.find_last_of('}');
    QVERIFY(header.find_first_not_of(' ', lastBrace + 1) == std::string::npos);
    const json h = json::parse(header);
    QCOMPARE(h["a"]["dtype"].get<std::string>(), std::string("I16"));
    QCOMPARE(h["a"]["data_offsets"], json({0, 6}));
    QCOMPARE(h["b"]["data_offsets"], json({6, 30}));
    QCOMPARE(h["b"]["shape"], json({2, 3}));
    QCOMPARE(bytes.size(), size_t(8 + n + 30));
    float fourth;
    std::memcpy(&fourth, bytes.data() + 8 + n + 6 + 4 * 4, 4);
    QCOMPARE(fourth, 4.0f);
  }

  void readsHandMadeFile() {
    // Header without padding and with tensors in reverse order is still valid.
    std::string data(8, '\0');
    const float vals[2] = {1.5f, -2.0f};
    std::memcpy(data.data(), vals, 8);
    const fs::path p = dir() / "hand.safetensors";
    writeRawSafetensors(p, R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data);
    SafetensorsFile f(p);
    QVERIFY(f.contains("x"));
    QVERIFY(!f.contains("y"));
    QVERIFY(torch::equal(f.load("x"), torch::tensor({1.5f, -2.0f})));
    QVERIFY(errorMessageOf<SafetensorsError>([&] { f.load("y"); }).find("'y'") != std::string::npos);
  }

  void corruptFilesGiveNamedErrors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("mustMention");
    const std::string good = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    auto add = [](const char* tag, const std::string& bytes, const char* mention) {
      QTest::newRow(tag) << QByteArray(bytes.data(), int(bytes.size())) << QString(mention);
    };
    add("shorter than length field", std::string("\x05\x00\x00", 3), "truncated");
    add("header length past EOF", le64(1000) + good + std::string(8, '\0'), "past the end");
    add("invalid json", le64(9) + "{not json" + std::string(8, '\0'), "invalid JSON");
    add("header not object", le64(3) + "[1]", "not a JSON object");
    add("unknown dtype", le64(58) + R"({"w":{"dtype":"F8_XYZ","shape":[2],"data_offsets":[0,8]}})" + std::string(8, '\0'),
        "F8_XYZ");
    const std::string overlap =
        R"({"first":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"second":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
    add("overlapping ranges", le64(overlap.size()) + overlap + std::string(24, '\0'), "overlapping");
    add("offsets past end", le64(good.size()) + good + std::string(4, '\0'), "'w'");
    const std::string mismatch = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})";
    add("size mismatch", le64(mismatch.size()) + mismatch + std::string(12, '\0'), "does not match shape");
    const std::string reversed = R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})";
    add("reversed offsets", le64(reversed.size()) + reversed + std::string(8, '\0'), "reversed");
    const std::string negShape = R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})";
    add("negative dim", le64(negShape.size()) + negShape + std::string(8, '\0'), "'w'");
    const std::string noOffsets = R"({"w":{"dtype":"F32","shape":[2]}})";
    add("missing offsets", le64(noOffsets.size()) + noOffsets + std::string(8, '\0'), "data_offsets");
    const std::string badMeta = R"({"__metadata__":{"k":1}})";
    add("non-string metadata", le64(badMeta.size()) + badMeta, "__metadata__");
    // Issue 37.6: a second entry of one name was accepted (the last one won).
    const std::string twice =
        R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
    add("duplicate name", le64(twice.size()) + twice + std::string(16, '\0'), "names 'w' twice");
    // The format's own rule: the tensors tile the buffer, no gap, nothing after.
    const std::string gap =
        R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
    add("gap between tensors", le64(gap.size()) + gap + std::string(12, '\0'), "leaves no gap");
    add("bytes after the last tensor", le64(good.size()) + good + std::string(12, '\0'), "4 bytes no tensor accounts for");
    const std::string late = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
    add("first tensor not at 0", le64(late.size()) + late + std::string(12, '\0'), "starts at byte 4");
  }

  void corruptFilesGiveNamedErrors() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, mustMention);
    const fs::path p = dir() / "corrupt-case.safetensors";
    writeBytes(p, bytes.toStdString());
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsFile f(p); });
    QVERIFY2(msg.find("corrupt-case.safetensors") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find(mustMention.toStdString()) != std::string::npos, msg.c_str());
  }

  void errorsNameTheTensor() {
    const fs::path p = dir() / "named.safetensors";
    writeRawSafetensors(p, R"({"layer.weight":{"dtype":"F8_XYZ","shape":[2],"data_offsets":[0,8]}})",
                        std::string(8, '\0'));
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsFile f(p); });
    QVERIFY2(msg.find("'layer.weight'") != std::string::npos, msg.c_str());
  }

  void truncatedValidFile() {
    const fs::path p = dir() / "cut.safetensors";
    writeSafetensors(p, {{"big", torch::randn({64})}, {"small", torch::randn({2})}});
    const std::string bytes = readAll(p);
    writeBytes(p, bytes.substr(0, bytes.size() - 4));  // cuts into "small", the last tensor
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsFile f(p); });
    QVERIFY2(msg.find("cut.safetensors") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("'small'") != std::string::npos, msg.c_str());  // the tensor at the end of the buffer
  }

  void missingFile() {
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsFile f(dir() / "nope.safetensors"); });
    QVERIFY2(msg.find("nope.safetensors") != std::string::npos, msg.c_str());
  }

  void singleFileCheckpoint() {
    const fs::path d = dir() / "single";
    fs::create_directories(d);
    const torch::Tensor t = torch::randn({3});
    writeSafetensors(d / "model.safetensors", {{"a", t}});
    SafetensorsCheckpoint ckpt(d);
    QCOMPARE(ckpt.names(), std::vector<std::string>{"a"});
    QVERIFY(torch::equal(ckpt.load("a"), t));
    QVERIFY(errorMessageOf<SafetensorsError>([&] { ckpt.load("b"); }).find("'b'") != std::string::npos);
  }

  void shardedCheckpoint() {
    const fs::path d = dir() / "sharded";
    fs::create_directories(d);
    const torch::Tensor a = torch::randn({2, 2}), b = torch::randn({5}).to(torch::kBFloat16), c = torch::randn({1});
    writeSafetensors(d / "model-00001-of-00002.safetensors", {{"a", a}, {"b", b}});
    writeSafetensors(d / "model-00002-of-00002.safetensors", {{"c", c}});
    const json index = {{"metadata", {{"total_size", 34}}},
                        {"weight_map",
                         {{"a", "model-00001-of-00002.safetensors"},
                          {"b", "model-00001-of-00002.safetensors"},
                          {"c", "model-00002-of-00002.safetensors"}}}};
    writeBytes(d / "model.safetensors.index.json", index.dump());
    SafetensorsCheckpoint ckpt(d);
    QCOMPARE(ckpt.names(), (std::vector<std::string>{"a", "b", "c"}));
    QCOMPARE(ckpt.files().size(), size_t(2));
    QVERIFY(torch::equal(ckpt.load("a"), a));
    QVERIFY(bitsEqual(ckpt.load("b"), b));
    QVERIFY(torch::equal(ckpt.load("c"), c));

    fs::remove(d / "model-00002-of-00002.safetensors");
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsCheckpoint broken(d); });
    QVERIFY2(msg.find("model-00002-of-00002.safetensors") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("missing") != std::string::npos, msg.c_str());
  }

  void indexNamesTensorAbsentFromShard() {
    const fs::path d = dir() / "lying-index";
    fs::create_directories(d);
    writeSafetensors(d / "shard.safetensors", {{"a", torch::randn({2})}});
    writeBytes(d / "model.safetensors.index.json",
               json({{"weight_map", {{"a", "shard.safetensors"}, {"ghost", "shard.safetensors"}}}}).dump());
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsCheckpoint ckpt(d); });
    QVERIFY2(msg.find("'ghost'") != std::string::npos, msg.c_str());
  }

  void emptyFolderIsAnError() {
    const fs::path d = dir() / "empty";
    fs::create_directories(d);
    const std::string msg = errorMessageOf<SafetensorsError>([&] { SafetensorsCheckpoint ckpt(d); });
    QVERIFY2(msg.find("model.safetensors") != std::string::npos, msg.c_str());
  }

  void writeIntoMissingFolderIsIoError() {
    QVERIFY_EXCEPTION_THROWN(writeSafetensors(dir() / "no" / "such" / "x.safetensors", {{"a", torch::ones({1})}}),
                             IoError);
  }

  // A file size limit makes write() fail with EFBIG exactly like a full disk.
  void diskFullIsIoErrorAndLeavesNoFile() {
    const fs::path p = dir() / "full.safetensors";
    struct rlimit old {};
    QVERIFY(getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto previous = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limited = old;
    limited.rlim_cur = 4096;
    QVERIFY(setrlimit(RLIMIT_FSIZE, &limited) == 0);
    bool threwIo = false;
    try {
      writeSafetensors(p, {{"big", torch::randn({100000})}});
    } catch (const IoError& e) {
      threwIo = std::string(e.what()).find("full.safetensors") != std::string::npos;
    } catch (...) {
    }
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    QVERIFY(threwIo);
    QVERIFY(!fs::exists(p));
    for (const auto& e : fs::directory_iterator(dir()))
      QVERIFY2(e.path().filename().string().find("full.safetensors.tmp") == std::string::npos, "temp file left");
  }

  void rejectsDuplicateAndUnsupported() {
    const fs::path p = dir() / "dup.safetensors";
    QVERIFY(errorMessageOf<SafetensorsError>([&] { writeSafetensors(p, {{"a", torch::ones({1})}, {"a", torch::ones({1})}}); })
                .find("'a'") != std::string::npos);
    QVERIFY(errorMessageOf<SafetensorsError>([&] { writeSafetensors(p, {{"c", torch::ones({1}, torch::kComplexFloat)}}); })
                .find("'c'") != std::string::npos);
  }
};

PLAB_TEST_APPLESS_MAIN(SafetensorsTest)
}  // namespace test_safetensors
#include "test_safetensors.moc"
