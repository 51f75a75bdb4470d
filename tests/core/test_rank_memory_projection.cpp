// The per-rank memory projection (`precision-lab-cli memory`, docs/scale-out.md's
// 7 B and 70 B figures): the shares add up to the one-process state, each
// rank holds 1/N of it within one cut's alignment, the weights and gradients
// stay whole on every rank, and a Llama-2 7 B in bf16 + Kahan needs the
// 10 bytes per parameter the state accounting gives. The projection against
// what 2 real ranks measure is in test_distributed.
#include <QtTest/QtTest>

#include "distributed/flat_shards.h"
#include "distributed/rank_memory_projection.h"
#include "model/module_tree_from_config.h"
#include "support/test_registry.h"

namespace test_rank_memory_projection {

using namespace plab;

namespace {

ModelConfig llama7b() {
  return ModelConfig::fromJson({{"model_type", "llama"},
                                {"vocab_size", 32000},
                                {"hidden_size", 4096},
                                {"intermediate_size", 11008},
                                {"num_hidden_layers", 32},
                                {"num_attention_heads", 32},
                                {"num_key_value_heads", 32},
                                {"max_position_embeddings", 4096},
                                {"rms_norm_eps", 1e-5},
                                {"hidden_act", "silu"},
                                {"tie_word_embeddings", false}});
}

int64_t stateOf(const MemoryBreakdown& m) { return m.moments + m.master + m.kahan; }

std::map<std::string, LayerPrecision> allBf16Plan(const ModuleNode& tree) {
  PrecisionPlan plan;
  plan.preset = PlanPreset::AllBf16;
  return plan.resolve(tree);
}

std::vector<ParameterGroup> allBf16(const ModuleNode& tree, OptimizerMode mode) {
  return parameterGroups(tree, allBf16Plan(tree), mode);
}

}  // namespace

class TestRankMemoryProjection : public QObject {
  Q_OBJECT
 private slots:
  void sharesAddUpToOneProcess() {
    const ModuleNode tree = describeModulesFromConfig(llama7b());
    for (OptimizerMode mode : everyOptimizerMode()) {
      const auto groups = allBf16(tree, mode);
      const MemoryBreakdown one = projectRankMemory(groups, AdamWOptions{}, 1, true).front();
      QCOMPARE(one.total(), estimateMemory(tree, allBf16Plan(tree), mode, AdamWOptions{}).total());
      for (int n : {2, 3, 8, 64, 1000}) {
        const auto ranks = projectRankMemory(groups, AdamWOptions{}, n, true);
        QCOMPARE(int(ranks.size()), n);
        int64_t state = 0;
        for (const MemoryBreakdown& r : ranks) {
          QCOMPARE(r.weights, one.weights);
          QCOMPARE(r.gradients, one.gradients);
          // 1/N of the state, within half an alignment unit on each side at
          // the largest per-element state (16 bytes: mixed's master + moments).
          QVERIFY2(std::abs(double(stateOf(r)) - double(stateOf(one)) / n) <= kShardAlignment * 16,
                   qPrintable(QString("%1 on %2 ranks").arg(QString::fromStdString(optimizerModeId(mode))).arg(n)));
          state += stateOf(r);
        }
        QCOMPARE(state, stateOf(one));
        const auto replicated = projectRankMemory(groups, AdamWOptions{}, n, false);
        for (const MemoryBreakdown& r : replicated) QCOMPARE(r.total(), one.total());
      }
    }
  }

  void llama7bInBf16KahanNeedsTenBytesPerParameter() {
    const ModelConfig config = llama7b();
    QCOMPARE(config.parameterCount(), int64_t(6738415616));  // Llama-2-7b's published count
    const ModuleNode tree = describeModulesFromConfig(config);
    const auto one = projectRankMemory(allBf16(tree, OptimizerMode::Bf16Kahan),
                                       AdamWOptions{}, 1, true).front();
    QCOMPARE(one.total(), 10 * config.parameterCount());
    // On 8 ranks: 4 bytes of weights and gradients stay, the 6 bytes of
    // moments and Kahan buffers are cut in 8.
    const auto eight = projectRankMemory(allBf16(tree, OptimizerMode::Bf16Kahan),
                                         AdamWOptions{}, 8, true);
    QVERIFY(std::abs(double(eight[3].total()) - double(config.parameterCount()) * (4 + 6.0 / 8)) <= kShardAlignment * 16);
  }
};

PLAB_TEST_GUILESS_MAIN(TestRankMemoryProjection)
}  // namespace test_rank_memory_projection
#include "test_rank_memory_projection.moc"
