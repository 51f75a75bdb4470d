// The advisor's quantized moment stores (issue 40 point 5,
// core/advisor/moment_stores.h): a store's state bytes count its codes and
// its scales, and a store enters the chosen plan exactly when its measured
// gap to fp32 is within the tolerance and no cheaper plan's is; the others
// are left out with their figures or not tried (a cheaper store already
// within tolerance). Constructed figures: no training here.
#include <QtTest/QtTest>

#include <map>
#include <string>
#include <vector>

#include "advisor/advice_report.h"
#include "advisor/advisor.h"
#include "advisor/candidate_choice.h"
#include "advisor/moment_stores.h"
#include "precision/memory_estimate.h"
#include "report/paired_gap.h"
#include "support/test_registry.h"
#include "train/run_config.h"
#include "util/errors.h"

namespace test_advisor_moment_stores {

using namespace plab;

namespace {

constexpr int64_t kBig = 8192;   // quantized: >= 4096 elements, whole 256- and 128-element blocks
constexpr int64_t kSmall = 100;  // under torchao's size rule: its moments stay in the parameter's dtype
const std::vector<double> kFp32 = {3.100, 3.110, 3.105};  // fp32's final val loss per seed

ModuleNode tree(bool withBig = true) {
  ModuleNode root;
  root.name = "Model";
  root.type = "Model";
  if (withBig) {
    ModuleNode big;
    big.path = big.name = "big";
    big.type = "Linear";
    big.ownParameters = big.totalParameters = kBig;
    root.children.push_back(big);
  }
  ModuleNode small;
  small.path = small.name = "small";
  small.type = "LayerNorm";
  small.ownParameters = small.totalParameters = kSmall;
  root.children.push_back(small);
  root.totalParameters = (withBig ? kBig : 0) + kSmall;
  return root;
}

int64_t fp32Bytes(const ModuleNode& t) { return 16 * t.totalParameters; }

// Confirmed with these final losses over the three seeds, as the advisor's confirm() fills them.
void confirmWith(AdvisorCandidate& c, const std::vector<double>& val) {
  std::vector<double> d;
  for (size_t k = 0; k < val.size(); ++k) d.push_back(val[k] - kFp32[k]);
  const report::PairedEstimate e = report::pairedEstimate(d);
  c.valLoss = val;
  c.lossVsFp32 = e.mean;
  c.ciLow = e.ciLow;
  c.ciHigh = e.ciHigh;
}

// bf16 weights with SR writes and the recipe's own (bf16-sr) moments, every layer bf16, confirmed.
AdvisorCandidate srPlan(const ModuleNode& t) {
  AdvisorCandidate c;
  c.name = "bf16-sr";
  c.config = defaultRunConfig();
  c.config.mode = OptimizerMode::Bf16StochasticRounding;
  c.config.plan.preset = PlanPreset::AllBf16;
  c.config.plan.overrides.clear();
  c.config.plan.recipes.clear();
  c.stateBytes = estimateMemory(t, c.config.plan, c.config.mode, c.config.adamw).total();
  c.memorySaved = 1 - double(c.stateBytes) / double(fp32Bytes(t));
  confirmWith(c, {3.1002, 3.1101, 3.1051});
  c.measuredStateBytes = c.stateBytes;  // as its runs allocated them
  return c;
}

const std::vector<MomentPrecision> kStores = {MomentPrecision::Dynamic8bit, MomentPrecision::Dynamic4bit,
                                              MomentPrecision::Fp8};

struct Outcome {
  std::vector<MomentPrecision> confirmed;  // in the order tried
  std::vector<AdvisorCandidate> candidates;
  int chosen = -1;
  std::map<MomentPrecision, MomentStoreVerdict> verdicts;
};

// The advisor's moment stage and choice on constructed figures: each
// store's final losses over the seeds, `offset` nats above fp32's, and
// (where given) the bytes its first run allocated.
Outcome judge(const std::map<MomentPrecision, double>& offset, double tolerance,
              const std::map<MomentPrecision, int64_t>& allocated = {}) {
  const ModuleNode t = tree();
  const AdvisorCandidate plan = srPlan(t);
  Outcome out;
  const std::vector<AdvisorCandidate> variants =
      tryMomentStores(plan, kStores, t, fp32Bytes(t), tolerance, [&](AdvisorCandidate& v) {
        const MomentPrecision s = v.config.adamw.moments;
        out.confirmed.push_back(s);
        const double o = offset.at(s);
        confirmWith(v, {kFp32[0] + o + 0.0003, kFp32[1] + o - 0.0002, kFp32[2] + o - 0.0001});
        if (allocated.count(s)) v.measuredStateBytes = allocated.at(s);
      });
  out.candidates = {plan};
  for (const AdvisorCandidate& v : variants)
    if (!v.valLoss.empty()) out.candidates.push_back(v);
  out.chosen = chooseCandidate(out.candidates, tolerance);
  for (const MomentStoreVerdict& v : momentStoreVerdicts(plan, variants, out.candidates, out.chosen, tolerance))
    out.verdicts[v.store] = v;
  for (const auto& [store, v] : out.verdicts) qInfo("%s moments: %s", momentPrecisionId(store).c_str(), v.reason.c_str());
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestAdvisorMomentStores : public QObject {
  Q_OBJECT

 private slots:
  // The state bytes of a plan with a quantized store, by hand: bf16
  // weights and gradients (2 + 2 bytes), the big tensor's codes (1 byte per
  // element per moment for 8bit and fp8, half a byte for 4bit) and an fp32
  // scale per block of each moment (256 elements; 128 for 4bit); the small
  // tensor keeps bf16 moments (2 x 2 bytes), as torchao does.
  void stateBytesCountCodesAndScales() {
    const ModuleNode t = tree();
    const AdvisorCandidate plan = srPlan(t);
    const int64_t n = kBig + kSmall;
    QCOMPARE(plan.stateBytes, n * (2 + 2 + 4));  // bf16-sr moments: 2 bytes each
    const int64_t weightsAndGrads = n * (2 + 2), smallMoments = kSmall * 2 * 2;
    const int64_t eightBit = weightsAndGrads + 2 * kBig + 2 * 4 * (kBig / 256) + smallMoments;
    const int64_t fourBit = weightsAndGrads + kBig + 2 * 4 * (kBig / 128) + smallMoments;
    const std::map<MomentPrecision, int64_t> expected = {
        {MomentPrecision::Dynamic8bit, eightBit}, {MomentPrecision::Fp8, eightBit}, {MomentPrecision::Dynamic4bit, fourBit}};
    for (const auto& [store, bytes] : expected) {
      const AdvisorCandidate v = withMomentStore(plan, store, t, fp32Bytes(t));
      QCOMPARE(v.stateBytes, bytes);
      QVERIFY(v.config.adamw.moments == store);  // the run config carries the store (run_info reports it)
      QCOMPARE(v.memorySaved, 1 - double(bytes) / double(fp32Bytes(t)));
      // The plan's figures are not the store's.
      QVERIFY(!v.lossVsFp32 && v.valLoss.empty() && v.rejected.empty() && !v.measuredStateBytes);
    }
    // Tried cheapest first: 4bit, then 8bit and fp8 in the given order.
    const std::vector<AdvisorCandidate> order = momentStoreVariants(plan, kStores, t, fp32Bytes(t));
    QCOMPARE(order.size(), size_t(3));
    QVERIFY(order[0].config.adamw.moments == MomentPrecision::Dynamic4bit);
    QVERIFY(order[1].config.adamw.moments == MomentPrecision::Dynamic8bit);
    QVERIFY(order[2].config.adamw.moments == MomentPrecision::Fp8);
    // The verdict's saving is against the plan with its own moments.
    const Outcome o = judge({{MomentPrecision::Dynamic4bit, 0.001}}, 0.005);
    QCOMPARE(o.verdicts.at(MomentPrecision::Dynamic4bit).stateBytes, fourBit);
    QCOMPARE(o.verdicts.at(MomentPrecision::Dynamic4bit).bytesSaved, plan.stateBytes - fourBit);

    // Once run, a store's bytes are those its first run allocated (per
    // tensor; the tree's estimate adds a module's weight and bias together).
    const auto measured = tryMomentStores(plan, {MomentPrecision::Dynamic8bit}, t, fp32Bytes(t), 0.005,
                                          [](AdvisorCandidate& v) {
                                            confirmWith(v, {3.1002, 3.1101, 3.1051});
                                            v.measuredStateBytes = 40000;
                                          });
    QCOMPARE(measured.at(0).stateBytes, int64_t(40000));
    QCOMPARE(measured.at(0).memorySaved, 1 - 40000.0 / double(fp32Bytes(t)));

    // A model with no tensor large enough to quantize: a store saves nothing, and is not run.
    const ModuleNode smallOnly = tree(false);
    const AdvisorCandidate smallPlan = srPlan(smallOnly);
    int runs = 0;
    const auto variants = tryMomentStores(smallPlan, kStores, smallOnly, fp32Bytes(smallOnly), 0.005,
                                          [&](AdvisorCandidate&) { ++runs; });
    QCOMPARE(runs, 0);
    for (const AdvisorCandidate& v : variants) QVERIFY2(has(v.rejected, "saves no byte"), v.rejected.c_str());
  }

  // 4bit over the tolerance, 8bit and fp8 within: 4bit is left out with its
  // gap, 8bit enters the plan, fp8 (as many bytes as 8bit) is not run.
  void storeOverTheToleranceIsLeftOut() {
    const Outcome o = judge({{MomentPrecision::Dynamic4bit, 0.0080}, {MomentPrecision::Dynamic8bit, 0.0002},
                             {MomentPrecision::Fp8, 0.0001}},
                            0.005);
    QCOMPARE(o.confirmed, (std::vector<MomentPrecision>{MomentPrecision::Dynamic4bit, MomentPrecision::Dynamic8bit}));
    QVERIFY(o.chosen >= 0);
    QVERIFY(o.candidates[size_t(o.chosen)].config.adamw.moments == MomentPrecision::Dynamic8bit);
    const MomentStoreVerdict& four = o.verdicts.at(MomentPrecision::Dynamic4bit);
    QVERIFY(!four.inPlan && four.confirmed);
    QVERIFY2(has(four.reason, "left out: loss +0.0080 nats vs fp32 (95 % CI") &&
                 has(four.reason, "over the tolerance 0.0050 by 0.0030"),
             four.reason.c_str());
    const MomentStoreVerdict& eight = o.verdicts.at(MomentPrecision::Dynamic8bit);
    QVERIFY(eight.inPlan && eight.confirmed && eight.bytesSaved > 0);
    QVERIFY2(has(eight.reason, "in the plan: saves ") && has(eight.reason, "+0.0002 nats vs fp32") &&
                 has(eight.reason, "within the tolerance 0.0050"),
             eight.reason.c_str());
    const MomentStoreVerdict& fp8 = o.verdicts.at(MomentPrecision::Fp8);
    QVERIFY(!fp8.inPlan && !fp8.confirmed && !fp8.lossVsFp32);
    QVERIFY2(has(fp8.reason, "not tried: 8bit moments store as few bytes"), fp8.reason.c_str());
  }

  // 4bit within the tolerance: it enters the plan, and the stores that
  // would save less are not run (the stage costs one store's runs).
  void cheapestStoreWithinToleranceEntersAlone() {
    const Outcome o = judge({{MomentPrecision::Dynamic4bit, 0.0044}}, 0.005);
    QCOMPARE(o.confirmed, (std::vector<MomentPrecision>{MomentPrecision::Dynamic4bit}));
    QVERIFY(o.candidates[size_t(o.chosen)].config.adamw.moments == MomentPrecision::Dynamic4bit);
    const MomentStoreVerdict& four = o.verdicts.at(MomentPrecision::Dynamic4bit);
    QVERIFY2(four.inPlan && has(four.reason, "beyond seed noise"), four.reason.c_str());
    for (MomentPrecision s : {MomentPrecision::Dynamic8bit, MomentPrecision::Fp8}) {
      const MomentStoreVerdict& v = o.verdicts.at(s);
      QVERIFY2(!v.inPlan && has(v.reason, "not tried: 4bit moments store fewer bytes"), v.reason.c_str());
    }
  }

  // Every store over the tolerance: none enters; the plan keeps its own moments.
  void noStoreWithinToleranceKeepsThePlan() {
    const Outcome o = judge({{MomentPrecision::Dynamic4bit, 0.02}, {MomentPrecision::Dynamic8bit, 0.0061},
                             {MomentPrecision::Fp8, 0.0070}},
                            0.005);
    QCOMPARE(o.confirmed.size(), size_t(3));
    QCOMPARE(o.chosen, 0);  // the plan without a store (the only other within tolerance)
    QVERIFY(o.candidates[0].config.adamw.moments == MomentPrecision::ModeDefault);
    for (const auto& [store, v] : o.verdicts)
      QVERIFY2(!v.inPlan && v.confirmed && has(v.reason, "over the tolerance"), v.reason.c_str());
  }

  // A store within the tolerance whose runs allocate as many bytes as the
  // plan (nothing quantized as allocated) is as cheap as the plan and loses
  // to its lower loss: left out with the choice's reason, not "over the tolerance".
  void storeSavingNothingAsAllocatedIsLeftOut() {
    const ModuleNode t = tree();
    const int64_t planBytes = srPlan(t).stateBytes;
    const Outcome o = judge({{MomentPrecision::Dynamic4bit, 0.0030}, {MomentPrecision::Dynamic8bit, 0.02},
                             {MomentPrecision::Fp8, 0.02}},
                            0.005, {{MomentPrecision::Dynamic4bit, planBytes}});
    QCOMPARE(o.chosen, 0);
    const MomentStoreVerdict& four = o.verdicts.at(MomentPrecision::Dynamic4bit);
    QVERIFY(!four.inPlan && four.confirmed);
    QCOMPARE(four.bytesSaved, int64_t(0));
    QVERIFY2(has(four.reason, "as cheap as the chosen") && !has(four.reason, "over the tolerance"), four.reason.c_str());
  }

  // Every store over the tolerance run-wide: each is then tried on the half
  // of its layers its runs measured least disturbed (smallest moment
  // error), the plan's own moments elsewhere. 4bit on those two layers is
  // within the tolerance and enters the plan; 8bit and fp8 on part of the
  // model would store more bytes and are not run.
  void storeOnTheLayersItDisturbsLeast() {
    ModuleNode t;
    t.name = t.type = "Model";
    for (const char* name : {"b0", "b1", "b2", "b3"}) {
      ModuleNode b;
      b.path = b.name = name;
      b.type = "Linear";
      b.ownParameters = b.totalParameters = kBig;
      t.children.push_back(b);
    }
    ModuleNode ln;  // too small to quantize: its bf16 moments' error is smallest, and it saves nothing
    ln.path = ln.name = "ln";
    ln.type = "LayerNorm";
    ln.ownParameters = ln.totalParameters = kSmall;
    t.children.push_back(ln);
    t.totalParameters = 4 * kBig + kSmall;
    const AdvisorCandidate plan = srPlan(t);
    const double tolerance = 0.005;
    // Measured under each store run-wide: b0 and b2 least disturbed.
    const std::map<std::string, double> layerError = {
        {"b0", 0.010}, {"b1", 0.300}, {"b2", 0.020}, {"b3", 0.250}, {"ln", 0.001}};
    std::vector<std::string> tried;
    const std::vector<AdvisorCandidate> variants =
        tryMomentStores(plan, kStores, t, fp32Bytes(t), tolerance, [&](AdvisorCandidate& v) {
          tried.push_back(v.name);
          const bool partial = !v.config.plan.moments.empty();
          const double o = partial ? 0.001 : 0.02;
          confirmWith(v, {kFp32[0] + o + 0.0003, kFp32[1] + o - 0.0002, kFp32[2] + o - 0.0001});
          if (!partial) v.layerMomentError = layerError;
        });
    for (const std::string& name : tried) qInfo("ran %s", name.c_str());
    QCOMPARE(tried.size(), size_t(4));  // three stores run-wide, then 4bit on two layers
    const AdvisorCandidate& part = variants.at(3);
    QCOMPARE(part.name, std::string("bf16-sr, 4bit moments on 2 layers"));
    QVERIFY((part.config.plan.moments ==
             std::map<std::string, MomentPrecision>{{"b0", MomentPrecision::Dynamic4bit}, {"b2", MomentPrecision::Dynamic4bit}}));
    QVERIFY(part.config.adamw.moments == plan.config.adamw.moments);  // the rest keep the plan's
    // Bytes by hand: b0 and b2 4-bit codes and scales, b1, b3 and ln bf16-sr.
    const int64_t n = 4 * kBig + kSmall;
    QCOMPARE(part.stateBytes, n * (2 + 2) + 2 * (kBig + 2 * 4 * (kBig / 128)) + 2 * (2 * 2 * kBig) + 2 * 2 * kSmall);
    // 8bit and fp8 on part of the model: dearer than the 4-bit part within the tolerance.
    QCOMPARE(variants.size(), size_t(6));
    for (size_t i = 4; i < 6; ++i)
      QVERIFY2(has(variants[i].rejected, "not tried: 4bit moments on 2 layers store fewer bytes"),
               variants[i].rejected.c_str());
    std::vector<AdvisorCandidate> candidates = {plan};
    for (const AdvisorCandidate& v : variants)
      if (!v.valLoss.empty()) candidates.push_back(v);
    const int chosen = chooseCandidate(candidates, tolerance);
    QVERIFY(chosen >= 0);
    QCOMPARE(candidates[size_t(chosen)].name, part.name);
    const std::vector<MomentStoreVerdict> verdicts = momentStoreVerdicts(plan, variants, candidates, chosen, tolerance);
    QCOMPARE(verdicts.size(), size_t(6));
    const MomentStoreVerdict& in = verdicts.at(3);
    QVERIFY(in.inPlan && in.confirmed && in.store == MomentPrecision::Dynamic4bit);
    QCOMPARE(in.layers, (std::vector<std::string>{"b0", "b2"}));
    QVERIFY2(has(momentStoreVerdictLine(in), "4bit moments on 2 layers: on b0, b2 (the plan's own moments elsewhere): in the plan"),
             momentStoreVerdictLine(in).c_str());
    for (size_t i = 0; i < 3; ++i) QVERIFY(!verdicts[i].inPlan && verdicts[i].layers.empty());
    // advice.json keeps the layers (additive: run-wide verdicts have none) and reads them back; the report shows them.
    Advice a;
    a.completed = true;
    a.seeds = {1, 2, 3};
    a.tolerance = tolerance;
    a.candidates = candidates;
    a.chosen = chosen;
    a.momentStores = verdicts;
    const nlohmann::json j = adviceToJson(a);
    QCOMPARE(j.at("moment_stores").at(3).at("layers"), nlohmann::json::array({"b0", "b2"}));
    QVERIFY(j.at("moment_stores").at(0).at("layers").empty());
    QCOMPARE(j.at("chosen").at("plan").at("moments").at("b2").get<std::string>(), std::string("4bit"));
    const Advice b = adviceFromJson(nlohmann::json::parse(j.dump()));
    QCOMPARE(adviceToJson(b), j);
    nlohmann::json bad = j;
    bad["moment_stores"][3]["layers"] = "b0";
    QVERIFY_THROWS_EXCEPTION(ConfigError, adviceFromJson(bad));
    const std::string html = adviceReportHtml(a);
    QVERIFY(has(html, "2: b0, b2"));
    QVERIFY(has(html, "default; 4bit on 2 layers"));
  }

  // advice.json keeps the verdicts; report.html shows each store's.
  void verdictsReachJsonAndReport() {
    const Outcome o = judge({{MomentPrecision::Dynamic4bit, 0.0080}, {MomentPrecision::Dynamic8bit, 0.0002},
                             {MomentPrecision::Fp8, 0.0001}},
                            0.005);
    Advice a;
    a.completed = true;
    a.seeds = {1, 2, 3};
    a.tolerance = 0.005;
    a.candidates = o.candidates;
    a.chosen = o.chosen;
    for (const auto& [store, v] : o.verdicts) a.momentStores.push_back(v);
    a.candidates[1].momentErrorM = 0.095;
    a.candidates[1].momentErrorV = 0.007;
    const nlohmann::json j = adviceToJson(a);
    QCOMPARE(j.at("moment_stores").size(), size_t(3));
    QCOMPARE(j.at("chosen").at("moments").get<std::string>(), std::string("8bit"));
    const Advice b = adviceFromJson(nlohmann::json::parse(j.dump()));
    QCOMPARE(adviceToJson(b), j);
    QCOMPARE(b.momentStores.size(), size_t(3));
    nlohmann::json bad = j;
    bad["moment_stores"][0]["store"] = "bf16";
    QVERIFY_THROWS_EXCEPTION(ConfigError, adviceFromJson(bad));
    const std::string html = adviceReportHtml(a);
    QVERIFY(has(html, "<h2>Moment stores</h2>"));
    for (const auto& [store, v] : o.verdicts) QVERIFY(has(html, v.reason.substr(0, 40)));
  }
};

PLAB_TEST_GUILESS_MAIN(TestAdvisorMomentStores)
}  // namespace test_advisor_moment_stores
#include "test_advisor_moment_stores.moc"
