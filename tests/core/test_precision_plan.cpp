// Precision plans on a hand-built GPT-2-shaped module tree: presets, subtree
// overrides (deepest wins), per-layer recipes, strict JSON, bf16 parameter
// counts.
#include <QtTest/QtTest>

#include <functional>
#include <optional>

#include "precision/memory_estimate.h"
#include "precision/precision_plan.h"
#include "precision/state_layout.h"
#include "support/module_trees.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_precision_plan {

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
               node(p + ".ln_2", "LayerNorm", 8),
               node(p + ".mlp", "GPT2MLP", 0,
                    {node(p + ".mlp.c_fc", "Conv1D", 64), node(p + ".mlp.c_proj", "Conv1D", 64)})});
}

// Blocks 0, 1 and 10: "transformer.h.1" must not be taken for a prefix of "transformer.h.10".
ModuleNode gpt2Tree() {
  return node("", "GPT2LMHeadModel", 0,
              {node("transformer", "GPT2Model", 0,
                    {node("transformer.wte", "Embedding", 100), node("transformer.wpe", "Embedding", 20),
                     node("transformer.h", "ModuleList", 0,
                          {block("transformer.h.0"), block("transformer.h.1"), block("transformer.h.10")}),
                     node("transformer.ln_f", "LayerNorm", 8)}),
               node("lm_head", "Linear", 30), node("score", "Conv2d", 6), node("scale", "CustomScale", 2)});
}

std::vector<const ModuleNode*> withParameters(const ModuleNode& tree) {
  std::vector<const ModuleNode*> out;
  std::function<void(const ModuleNode&)> visit = [&](const ModuleNode& n) {
    if (n.ownParameters > 0) out.push_back(&n);
    for (const auto& c : n.children) visit(c);
  };
  visit(tree);
  return out;
}

bool under(const std::string& path, const std::string& prefix) {
  return path == prefix || path.rfind(prefix + ".", 0) == 0;
}

// Independent statement of the presets: by type name.
LayerPrecision expectedPreset(const ModuleNode& n, PlanPreset preset, bool norms, bool embeddings) {
  if (preset == PlanPreset::AllFp32) return LayerPrecision::Fp32;
  if (preset == PlanPreset::AllBf16) return LayerPrecision::Bf16;
  if (n.type == "LayerNorm") return norms ? LayerPrecision::Bf16 : LayerPrecision::Fp32;
  if (n.type == "Embedding") return embeddings ? LayerPrecision::Bf16 : LayerPrecision::Fp32;
  if (n.type == "Conv1D" || n.type == "Linear" || n.type == "Conv2d") return LayerPrecision::Bf16;
  return LayerPrecision::Fp32;
}

int64_t countBf16(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& r) {
  int64_t n = 0;
  for (const ModuleNode* m : withParameters(tree))
    if (r.at(m->path) == LayerPrecision::Bf16) n += m->ownParameters;
  return n;
}

}  // namespace

class PrecisionPlanTest : public QObject {
  Q_OBJECT
 private slots:
  void presets_data() {
    QTest::addColumn<int>("preset");
    QTest::addColumn<bool>("norms");
    QTest::addColumn<bool>("embeddings");
    QTest::newRow("all-fp32") << int(PlanPreset::AllFp32) << false << false;
    QTest::newRow("all-bf16") << int(PlanPreset::AllBf16) << false << false;
    QTest::newRow("linear") << int(PlanPreset::LinearBf16) << false << false;
    QTest::newRow("linear+norms") << int(PlanPreset::LinearBf16) << true << false;
    QTest::newRow("linear+embeddings") << int(PlanPreset::LinearBf16) << false << true;
    QTest::newRow("linear+both") << int(PlanPreset::LinearBf16) << true << true;
  }
  void presets() {
    QFETCH(int, preset);
    QFETCH(bool, norms);
    QFETCH(bool, embeddings);
    PrecisionPlan plan;
    plan.preset = PlanPreset(preset);
    plan.norms_bf16 = norms;
    plan.embeddings_bf16 = embeddings;
    const ModuleNode tree = gpt2Tree();
    const auto resolved = plan.resolve(tree);
    const auto modules = withParameters(tree);
    QCOMPARE(resolved.size(), modules.size());  // exactly the modules that own parameters
    for (const ModuleNode* m : modules) {
      QVERIFY2(resolved.count(m->path), m->path.c_str());
      QVERIFY2(resolved.at(m->path) == expectedPreset(*m, plan.preset, norms, embeddings), m->path.c_str());
    }
    QCOMPARE(bf16ParameterCount(tree, resolved), countBf16(tree, resolved));
  }

  void linearPresetCountsByHand() {
    const ModuleNode tree = gpt2Tree();
    PrecisionPlan plan;  // default: LinearBf16, norms and embeddings fp32
    const auto resolved = plan.resolve(tree);
    // 3 blocks x (48+16+64+64) Conv1D + lm_head 30 + Conv2d 6.
    QCOMPARE(bf16ParameterCount(tree, resolved), int64_t(3 * 192 + 30 + 6));
    QVERIFY(resolved.at("scale") == LayerPrecision::Fp32);
    QVERIFY(resolved.at("transformer.h.0.ln_1") == LayerPrecision::Fp32);
    QVERIFY(resolved.at("transformer.wte") == LayerPrecision::Fp32);
    plan.norms_bf16 = plan.embeddings_bf16 = true;
    QCOMPARE(bf16ParameterCount(tree, plan.resolve(tree)), int64_t(3 * 192 + 30 + 6 + 3 * 16 + 8 + 120));
  }

  void subtreeOverridesDeepestWins() {
    const ModuleNode tree = gpt2Tree();
    PrecisionPlan plan;
    plan.preset = PlanPreset::AllBf16;
    plan.setSubtree("transformer.h.1", LayerPrecision::Fp32);
    plan.setSubtree("transformer.h.1.mlp", LayerPrecision::Bf16);   // deeper: wins inside the mlp
    plan.setSubtree("transformer.h.1.mlp.c_fc", LayerPrecision::Fp32);  // deeper still
    const auto r = plan.resolve(tree);
    for (const ModuleNode* m : withParameters(tree)) {
      LayerPrecision want = LayerPrecision::Bf16;
      if (under(m->path, "transformer.h.1")) want = LayerPrecision::Fp32;
      if (under(m->path, "transformer.h.1.mlp")) want = LayerPrecision::Bf16;
      if (under(m->path, "transformer.h.1.mlp.c_fc")) want = LayerPrecision::Fp32;
      QVERIFY2(r.at(m->path) == want, m->path.c_str());
    }
    // h.10 is not inside h.1.
    QVERIFY(r.at("transformer.h.10.ln_1") == LayerPrecision::Bf16);
    QVERIFY(r.at("transformer.h.1.ln_1") == LayerPrecision::Fp32);
    QVERIFY(r.at("transformer.h.1.mlp.c_proj") == LayerPrecision::Bf16);
    QVERIFY(r.at("transformer.h.1.mlp.c_fc") == LayerPrecision::Fp32);
  }

  void rootOverrideAndLeafOverride() {
    const ModuleNode tree = gpt2Tree();
    PrecisionPlan plan;  // LinearBf16
    plan.setSubtree("", LayerPrecision::Fp32);
    plan.setSubtree("lm_head", LayerPrecision::Bf16);
    const auto r = plan.resolve(tree);
    QCOMPARE(bf16ParameterCount(tree, r), int64_t(30));
  }

  void overrideOfUnknownModuleIsAnError() {
    PrecisionPlan plan;
    plan.setSubtree("transformer.h.7", LayerPrecision::Fp32);
    try {
      plan.resolve(gpt2Tree());
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("transformer.h.7"), e.what());
    }
  }

  // An override of a tied head would change nothing: it names the owner instead.
  void overrideOfTiedHeadNamesItsOwner() {
    ModuleNode tree = gpt2Tree();
    tree.children.erase(tree.children.begin() + 1);  // lm_head with a weight
    addTiedHead(tree, "transformer.wte");
    PrecisionPlan plan;
    plan.setSubtree("lm_head", LayerPrecision::Bf16);
    try {
      plan.resolve(tree);
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("tied output head") && QString(e.what()).contains("transformer.wte"),
               e.what());
    }
    plan.overrides.clear();
    const int64_t withoutEmbedding = bf16ParameterCount(tree, plan.resolve(tree));
    plan.setSubtree("transformer.wte", LayerPrecision::Bf16);
    QCOMPARE(bf16ParameterCount(tree, plan.resolve(tree)) - withoutEmbedding, int64_t(100));
  }

  void jsonRoundTrip() {
    PrecisionPlan plan;
    plan.preset = PlanPreset::LinearBf16;
    plan.norms_bf16 = true;
    plan.embeddings_bf16 = false;
    plan.setSubtree("transformer.h.0", LayerPrecision::Fp32);
    plan.setSubtree("lm_head", LayerPrecision::Bf16);
    const nlohmann::json j = toJson(plan);
    QCOMPARE(QString::fromStdString(j.at("preset").get<std::string>()), QString("linear-bf16"));
    QCOMPARE(QString::fromStdString(j.at("overrides").at("lm_head").get<std::string>()), QString("bf16"));
    const PrecisionPlan back = precisionPlanFromJson(nlohmann::json::parse(j.dump()));
    QVERIFY(back.preset == plan.preset);
    QCOMPARE(back.norms_bf16, plan.norms_bf16);
    QCOMPARE(back.embeddings_bf16, plan.embeddings_bf16);
    QVERIFY(back.overrides == plan.overrides);
    for (PlanPreset p : {PlanPreset::AllFp32, PlanPreset::LinearBf16, PlanPreset::AllBf16})
      QVERIFY(planPresetFromId(planPresetId(p)) == p);
    // Missing keys take the defaults.
    const PrecisionPlan minimal = precisionPlanFromJson(nlohmann::json::parse(R"({"preset":"all-bf16"})"));
    QVERIFY(minimal.preset == PlanPreset::AllBf16);
    QVERIFY(minimal.overrides.empty());
  }

  void jsonStrictErrors_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("unknown key") << R"({"preset":"all-bf16","norm_bf16":true})" << "norm_bf16";
    QTest::newRow("bad preset") << R"({"preset":"half"})" << "half";
    QTest::newRow("preset type") << R"({"preset":3})" << "preset";
    QTest::newRow("flag type") << R"({"embeddings_bf16":"yes"})" << "embeddings_bf16";
    QTest::newRow("overrides type") << R"({"overrides":["lm_head"]})" << "overrides";
    QTest::newRow("override value") << R"({"overrides":{"lm_head":"fp16"}})" << "lm_head";
    QTest::newRow("override type") << R"({"overrides":{"lm_head":1}})" << "lm_head";
    QTest::newRow("not an object") << R"(["all-bf16"])" << "plan";
    QTest::newRow("recipes type") << R"({"recipes":["bf16-sr"]})" << "recipes";
    QTest::newRow("recipe unknown") << R"({"recipes":{"lm_head":"bf16-fast"}})" << "lm_head";
    QTest::newRow("recipe not per layer") << R"({"recipes":{"lm_head":"fp16-mixed"}})" << "not a bf16 layer recipe";
    QTest::newRow("recipe fp32") << R"({"recipes":{"lm_head":"fp32"}})" << "not a bf16 layer recipe";
    QTest::newRow("recipe type") << R"({"recipes":{"lm_head":2}})" << "lm_head";
    QTest::newRow("moments type") << R"({"moments":["8bit"]})" << "plan.moments";
    QTest::newRow("moments store unknown") << R"({"moments":{"lm_head":"6bit"}})" << "unknown moment store '6bit'";
    QTest::newRow("moments fp16 not selectable") << R"({"moments":{"lm_head":"fp16"}})" << "unknown moment store 'fp16'";
    QTest::newRow("moments store type") << R"({"moments":{"lm_head":8}})" << "plan.moments['lm_head']";
    QTest::newRow("moments store null") << R"({"moments":{"lm_head":null}})" << "expected a moment store id";
  }

  // Per-layer moment stores (PrecisionPlan::moments): the deepest entry
  // reaches a layer, layers no entry reaches are left to adamw.moments, and
  // an fp32 layer is listed with the store as it takes it (state_layout).
  void momentsResolvePerSubtree() {
    const ModuleNode tree = gpt2Tree();
    PrecisionPlan plan;  // linear-bf16: LayerNorms and embeddings fp32
    plan.setMomentSubtree("transformer.h.1", MomentPrecision::Dynamic8bit);
    plan.setMomentSubtree("transformer.h.1.mlp.c_fc", MomentPrecision::Bf16Nearest);
    plan.setMomentSubtree("transformer.h.10.ln_1", MomentPrecision::Dynamic4bit);  // an fp32 layer
    const auto stores = plan.resolveMoments(tree, OptimizerMode::Bf16StochasticRounding);
    size_t reached = 0;
    for (const ModuleNode* m : withParameters(tree)) {
      std::optional<MomentPrecision> expected;
      if (under(m->path, "transformer.h.1")) expected = MomentPrecision::Dynamic8bit;  // not h.10
      if (m->path == "transformer.h.1.mlp.c_fc") expected = MomentPrecision::Bf16Nearest;
      if (m->path == "transformer.h.10.ln_1") expected = MomentPrecision::Dynamic4bit;
      const auto it = stores.find(m->path);
      QVERIFY2(expected.has_value() == (it != stores.end()), m->path.c_str());
      if (expected) {
        QVERIFY2(it->second == *expected, m->path.c_str());
        ++reached;
      }
    }
    QCOMPARE(reached, stores.size());
    QCOMPARE(reached, size_t(7));  // h.1's six layers and h.10.ln_1
    // fp32 layers take a quantized store (torchao), not a bf16 one: the rule of adamw.moments.
    const AdamWOptions o;
    QVERIFY(state_layout::moments(OptimizerMode::Bf16StochasticRounding,
                                  state_layout::withStore(o, stores.at("transformer.h.1.ln_1")),
                                  false) == MomentPrecision::Dynamic8bit);
    // JSON round trip; plans without moments write no key.
    const nlohmann::json j = toJson(plan);
    QCOMPARE(j.at("moments").at("transformer.h.1").get<std::string>(), std::string("8bit"));
    const PrecisionPlan back = precisionPlanFromJson(nlohmann::json::parse(j.dump()));
    QVERIFY(back.moments == plan.moments);
    QVERIFY(!toJson(PrecisionPlan{}).contains("moments"));
    // Every store id reads back.
    for (MomentPrecision p : allMomentPrecisions()) {
      PrecisionPlan one;
      one.setMomentSubtree("transformer.h.0", p);
      QVERIFY(precisionPlanFromJson(toJson(one)).moments == one.moments);
    }
  }

  void momentsErrors() {
    const ModuleNode tree = gpt2Tree();
    auto fails = [&](const PrecisionPlan& plan, OptimizerMode mode, const char* mentions) {
      try {
        plan.resolveMoments(tree, mode);
        QFAIL("no exception");
      } catch (const ConfigError& e) {
        QVERIFY2(QString(e.what()).contains(mentions), e.what());
      }
    };
    const OptimizerMode sr = OptimizerMode::Bf16StochasticRounding;
    PrecisionPlan typo;
    typo.setMomentSubtree("transformer.h.2", MomentPrecision::Dynamic8bit);
    fails(typo, sr, "moments 'transformer.h.2' names no module");
    PrecisionPlan ok;
    ok.setMomentSubtree("transformer.h.0", MomentPrecision::Dynamic8bit);
    (void)ok.resolveMoments(tree, sr);
    fails(ok, OptimizerMode::Fp16Mixed, "fp16");
    fails(ok, OptimizerMode::Fp32AdamW, "trains everything in fp32");
    // Recipes that keep their own moments ("mixed" run-wide or per layer, "bf16").
    fails(ok, OptimizerMode::Fp32MasterWeights, "whose recipe mixed keeps its own moments");
    PrecisionPlan plain = ok;
    plain.setRecipeSubtree("transformer.h.0.attn", OptimizerMode::Bf16Plain);
    fails(plain, sr, "'transformer.h.0.attn.c_attn', a bf16 layer whose recipe bf16 keeps its own moments");
    plain.setMomentSubtree("transformer.h.0.attn", MomentPrecision::ModeDefault);  // the way out it names
    QVERIFY(plain.resolveMoments(tree, sr).at("transformer.h.0.attn.c_attn") == MomentPrecision::ModeDefault);
    // A per-layer recipe that offers the choice takes a store under a "mixed" run.
    PrecisionPlan underMixed = ok;
    underMixed.setRecipeSubtree("transformer.h.0", sr);
    QVERIFY(underMixed.resolveMoments(tree, OptimizerMode::Fp32MasterWeights).at("transformer.h.0.mlp.c_fc") ==
            MomentPrecision::Dynamic8bit);
    // A store that changes no layer: bf16 moments on fp32 layers only; a
    // quantized store on fp32 layers under a mode without the choice.
    PrecisionPlan fp32Only;
    fp32Only.setMomentSubtree("transformer.ln_f", MomentPrecision::Bf16Stochastic);
    fails(fp32Only, sr, "moments 'transformer.ln_f' (\"bf16-sr\") changes no layer");
    PrecisionPlan quantizedFp32;
    quantizedFp32.setMomentSubtree("transformer.ln_f", MomentPrecision::Dynamic8bit);
    (void)quantizedFp32.resolveMoments(tree, sr);
    quantizedFp32.setRecipeSubtree("transformer.h.0", sr);
    fails(quantizedFp32, OptimizerMode::Fp32MasterWeights, "changes no layer");
    // The tied head has no weight of its own.
    ModuleNode tied = gpt2Tree();
    tied.children.erase(tied.children.begin() + 1);
    addTiedHead(tied, "transformer.wte");
    PrecisionPlan head;
    head.setMomentSubtree("lm_head", MomentPrecision::Dynamic8bit);
    try {
      head.resolveMoments(tied, sr);
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("tied output head"), e.what());
    }
  }

  // The module-tree estimate counts each layer under its own store, by hand:
  // codes and scales where a module is quantized, the run's store elsewhere.
  void momentsMemoryByHand() {
    const ModuleNode tree = node("", "Model", 0,
                                 {node("a", "Linear", 16384), node("b", "Linear", 16384), node("n", "LayerNorm", 8192),
                                  node("small", "Linear", 300)});
    PrecisionPlan plan;  // linear-bf16: n is fp32
    plan.setMomentSubtree("a", MomentPrecision::Dynamic8bit);
    plan.setMomentSubtree("n", MomentPrecision::Dynamic4bit);
    plan.setMomentSubtree("small", MomentPrecision::Fp8);  // under 4096 elements: its own dtype (bf16)
    const AdamWOptions o;  // "default": bf16-sr moments for bf16-sr's bf16 layers, fp32 for fp32 ones
    const MemoryBreakdown m = estimateMemory(tree, plan, OptimizerMode::Bf16StochasticRounding, o);
    QCOMPARE(m.weights, int64_t(2 * 16384 + 2 * 16384 + 4 * 8192 + 2 * 300));
    QCOMPARE(m.gradients, m.weights);
    QCOMPARE(m.moments, int64_t(2 * 16384             // a: two 1-byte codes per element
                                + 2 * 2 * 16384       // b: bf16-sr, 2 bytes each
                                + 2 * 8192 / 2        // n: two half-byte codes per element
                                + 2 * 2 * 300));      // small: bf16
    QCOMPARE(m.scales, int64_t(2 * 4 * (16384 / 256) + 2 * 4 * (8192 / 128)));
    QCOMPARE(m.master + m.kahan, int64_t(0));
    // Without the entries: the run's store everywhere.
    const MemoryBreakdown runWide = estimateMemory(tree, PrecisionPlan{}, OptimizerMode::Bf16StochasticRounding, o);
    QCOMPARE(runWide.moments, int64_t(2 * 2 * 16384 * 2 + 2 * 4 * 8192 + 2 * 2 * 300));
    QCOMPARE(runWide.scales, int64_t(0));
  }

  // Per-layer recipes: a subtree's bf16 layers step with their own recipe,
  // the deepest override wins, everything else keeps the run's mode.
  void recipesResolvePerSubtree() {
    const ModuleNode tree = gpt2Tree();
    PrecisionPlan plan;
    plan.preset = PlanPreset::AllBf16;
    plan.setRecipeSubtree("transformer.h.1", OptimizerMode::Bf16Kahan);
    plan.setRecipeSubtree("transformer.h.1.mlp.c_fc", OptimizerMode::Bf16StochasticRounding);
    plan.setRecipeSubtree("transformer.wte", OptimizerMode::Fp32MasterWeights);
    const auto recipes = plan.resolveRecipes(tree, OptimizerMode::Bf16Nearest);
    for (const ModuleNode* m : withParameters(tree)) {
      OptimizerMode expected = OptimizerMode::Bf16Nearest;
      if (under(m->path, "transformer.h.1")) expected = OptimizerMode::Bf16Kahan;  // not h.10
      if (m->path == "transformer.h.1.mlp.c_fc") expected = OptimizerMode::Bf16StochasticRounding;
      if (m->path == "transformer.wte") expected = OptimizerMode::Fp32MasterWeights;
      QVERIFY2(recipes.at(m->path) == expected, m->path.c_str());
    }
    // JSON round trip; plans without recipes write no key.
    const PrecisionPlan back = precisionPlanFromJson(nlohmann::json::parse(toJson(plan).dump()));
    QVERIFY(back.recipes == plan.recipes);
    QVERIFY(!toJson(PrecisionPlan{}).contains("recipes"));
    // The memory estimate counts each layer's own state: Kahan's 2 bytes on
    // h.1 but c_fc, a 4-byte master on wte.
    const AdamWOptions o;
    const int64_t nearest = estimateMemory(tree, plan.resolve(tree), OptimizerMode::Bf16Nearest, o).total();
    const int64_t own = estimateMemory(tree, plan, OptimizerMode::Bf16Nearest, o).total();
    const int64_t h1 = 8 + 48 + 16 + 8 + 64;  // c_fc (64) is SR: no buffer
    // mixed: a 4-byte master, and fp32 moments where nearest keeps 2-byte ones.
    const int64_t wteMaster = 100 * 4 + (state_layout::bf16Moments(OptimizerMode::Bf16Nearest, o, true) ? 100 * 4 : 0);
    QCOMPARE(own - nearest, 2 * h1 + wteMaster);
  }

  void recipesErrors() {
    const ModuleNode tree = gpt2Tree();
    auto fails = [&](const PrecisionPlan& plan, OptimizerMode mode, const char* mentions) {
      try {
        plan.resolveRecipes(tree, mode);
        QFAIL("no exception");
      } catch (const ConfigError& e) {
        QVERIFY2(QString(e.what()).contains(mentions), e.what());
      }
    };
    PrecisionPlan typo;
    typo.setRecipeSubtree("transformer.h.2", OptimizerMode::Bf16Kahan);
    fails(typo, OptimizerMode::Bf16Nearest, "names no module");
    PrecisionPlan ok;
    ok.setRecipeSubtree("transformer.h.0", OptimizerMode::Bf16Kahan);
    fails(ok, OptimizerMode::Fp16Mixed, "fp16");
    fails(ok, OptimizerMode::Fp32AdamW, "fp32");
    ModuleNode tied = gpt2Tree();
    tied.children.erase(tied.children.begin() + 1);
    addTiedHead(tied, "transformer.wte");
    PrecisionPlan head;
    head.setRecipeSubtree("lm_head", OptimizerMode::Bf16Kahan);
    try {
      head.resolveRecipes(tied, OptimizerMode::Bf16Nearest);
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("tied output head"), e.what());
    }
  }
  void jsonStrictErrors() {
    QFETCH(QString, json);
    QFETCH(QString, mentions);
    try {
      precisionPlanFromJson(nlohmann::json::parse(json.toStdString()));
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains(mentions), e.what());
    }
  }
};

PLAB_TEST_APPLESS_MAIN(PrecisionPlanTest)
}  // namespace test_precision_plan
#include "test_precision_plan.moc"
