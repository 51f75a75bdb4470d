// GEMM formats in a precision plan: the plan-wide default, subtree overrides
// (deepest wins, the tied head included), strict JSON, and plans without the
// keys reading and writing as before (every product bf16, today's path).
#include <QtTest/QtTest>

#include "precision/precision_plan.h"
#include "support/module_trees.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_gemm_plan {

using namespace plab;

namespace {

ModuleNode node(const std::string& path, const std::string& type, int64_t own, std::vector<ModuleNode> children = {}) {
  return test::moduleNode(path, type, own, std::move(children));
}

ModuleNode block(const std::string& p) {
  return node(p, "GPT2Block", 0,
              {node(p + ".ln_1", "LayerNorm", 8),
               node(p + ".attn", "GPT2Attention", 0,
                    {node(p + ".attn.c_attn", "Conv1D", 48), node(p + ".attn.c_proj", "Conv1D", 16)}),
               node(p + ".mlp", "GPT2MLP", 0, {node(p + ".mlp.c_fc", "Conv1D", 64)})});
}

// Blocks 1 and 10 ("transformer.h.1" is no prefix of "transformer.h.10"), a tied head.
ModuleNode tiedGpt2Tree() {
  ModuleNode head = node("lm_head", "Linear", 0);
  head.tiedTo = "transformer.wte";
  return node("", "GPT2LMHeadModel", 0,
              {node("transformer", "GPT2Model", 0,
                    {node("transformer.wte", "Embedding", 100),
                     node("transformer.h", "ModuleList", 0, {block("transformer.h.1"), block("transformer.h.10")}),
                     node("transformer.ln_f", "LayerNorm", 8)}),
               head});
}

}  // namespace

class GemmPlanTest : public QObject {
  Q_OBJECT
 private slots:
  void defaultIsBf16OnEveryProduct() {
    const auto resolved = PrecisionPlan{}.resolveGemmFormats(tiedGpt2Tree());
    // 3 products per block, 2 blocks, and the tied head; no norm, embedding or container.
    QCOMPARE(resolved.size(), size_t(7));
    for (const auto& [path, f] : resolved) QVERIFY2(f == GemmFormat::Bf16, path.c_str());
    QVERIFY(resolved.count("lm_head"));
    QVERIFY(!resolved.count("transformer.wte"));
    QVERIFY(!resolved.count("transformer.h.1.ln_1"));
    QVERIFY(!PrecisionPlan{}.usesLowPrecisionGemms());
  }

  void subtreeOverridesDeepestWins() {
    PrecisionPlan plan;
    plan.gemm_format = GemmFormat::Nvfp4;
    plan.setGemmSubtree("transformer.h.1", GemmFormat::Mxfp8);
    plan.setGemmSubtree("transformer.h.1.attn.c_proj", GemmFormat::Fp8E4m3);
    plan.setGemmSubtree("lm_head", GemmFormat::Bf16);
    const auto r = plan.resolveGemmFormats(tiedGpt2Tree());
    QVERIFY(r.at("transformer.h.1.attn.c_attn") == GemmFormat::Mxfp8);
    QVERIFY(r.at("transformer.h.1.mlp.c_fc") == GemmFormat::Mxfp8);
    QVERIFY(r.at("transformer.h.1.attn.c_proj") == GemmFormat::Fp8E4m3);
    QVERIFY(r.at("transformer.h.10.attn.c_attn") == GemmFormat::Nvfp4);  // not in h.1's subtree
    QVERIFY(r.at("lm_head") == GemmFormat::Bf16);
    QVERIFY(plan.usesLowPrecisionGemms());
  }

  void unknownPathIsAnError() {
    PrecisionPlan plan;
    plan.setGemmSubtree("transformer.h.2", GemmFormat::Mxfp4);
    QVERIFY_THROWS_EXCEPTION(ConfigError, plan.resolveGemmFormats(tiedGpt2Tree()));
  }

  void jsonRoundTripAndStrictness() {
    const nlohmann::json j = {{"preset", "linear-bf16"},
                              {"gemm_format", "mxfp4"},
                              {"gemm_formats", {{"transformer.h.1.attn", "mxfp8"}, {"lm_head", "bf16"}}}};
    const PrecisionPlan plan = precisionPlanFromJson(j);
    QVERIFY(plan.gemm_format == GemmFormat::Mxfp4);
    QVERIFY(plan.gemm_formats.at("transformer.h.1.attn") == GemmFormat::Mxfp8);
    QVERIFY(plan.gemm_formats.at("lm_head") == GemmFormat::Bf16);
    const nlohmann::json back = toJson(plan);
    QCOMPARE(back.at("gemm_format").get<std::string>(), std::string("mxfp4"));
    QCOMPARE(back.at("gemm_formats").at("transformer.h.1.attn").get<std::string>(), std::string("mxfp8"));
    QVERIFY(precisionPlanFromJson(back).gemm_formats == plan.gemm_formats);

    QVERIFY_THROWS_EXCEPTION(ConfigError, precisionPlanFromJson({{"gemm_format", "fp4"}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, precisionPlanFromJson({{"gemm_format", 8}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, precisionPlanFromJson({{"gemm_formats", "mxfp8"}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, precisionPlanFromJson({{"gemm_formats", {{"lm_head", "e4m3"}}}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, precisionPlanFromJson({{"gemm_fromat", "bf16"}}));
  }

  void plansWithoutTheKeysWriteAsBefore() {
    const nlohmann::json j = toJson(PrecisionPlan{});
    QVERIFY(!j.contains("gemm_format"));
    QVERIFY(!j.contains("gemm_formats"));
    for (GemmFormat f : allGemmFormats()) QVERIFY(gemmFormatFromId(gemmFormatId(f)) == f);
  }
};

PLAB_TEST_APPLESS_MAIN(GemmPlanTest)
}  // namespace test_gemm_plan
#include "test_gemm_plan.moc"
