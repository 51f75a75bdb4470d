// ZeRO-1's flat view (distributed/sharded_adamw.h) without processes: how
// the parameters are cut into ranges, and that every recipe steps a flat
// slice of a parameter bit for bit as it steps the whole parameter (the
// random bits of a slice are those of the same elements of the whole).
#include <QtTest/QtTest>

#include <numeric>

#include "distributed/sharded_adamw.h"
#include "precision/precision_adamw.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_flat_shards {

using namespace plab;

namespace {

// Parameters of these sizes for `mode`: bf16 where the recipe keeps bf16
// weights (with the fp32 values they came from for mixed), fp32 otherwise.
std::vector<TrainableParam> makeParams(const std::vector<int64_t>& sizes, OptimizerMode mode, uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<TrainableParam> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TrainableParam tp;
    tp.name = "p" + std::to_string(i) + ".weight";
    tp.layer = "p" + std::to_string(i);
    const torch::Tensor fp32 = torch::randn({sizes[i]});
    tp.param = mode == OptimizerMode::Fp32AdamW ? fp32.clone() : fp32.to(torch::kBFloat16);
    if (mode == OptimizerMode::Fp32MasterWeights) tp.fp32Source = fp32;
    out.push_back(tp);
  }
  return out;
}

}  // namespace

class TestFlatShards : public QObject {
  Q_OBJECT

 private slots:
  // Every element belongs to exactly one piece, in model order; a cut inside
  // a parameter is aligned; each rank's range is within one alignment unit
  // of an equal share (plus a parameter end it moved to).
  void theCutsCoverEveryElementOnceAndBalance() {
    const std::vector<std::vector<int64_t>> models = {
        {1000}, {4096, 4096, 64, 7}, {50257 * 64, 64, 3 * 64 * 64, 64 * 64, 3}, {5, 3, 1}, {}};
    for (const auto& sizes : models)
      for (int ranks : {1, 2, 3, 8}) {
        const std::vector<ShardPiece> pieces = flatShards(sizes, ranks);
        std::vector<int64_t> next(sizes.size(), 0), perRank(static_cast<size_t>(ranks), 0);
        size_t lastParam = 0;
        for (const ShardPiece& p : pieces) {
          QVERIFY(p.param < sizes.size() && p.param >= lastParam);
          lastParam = p.param;
          QCOMPARE(p.begin, next[p.param]);  // contiguous, no gap, no overlap
          QVERIFY(p.length > 0 && p.owner >= 0 && p.owner < ranks);
          if (p.begin != 0) QCOMPARE(p.begin % kShardAlignment, int64_t(0));
          next[p.param] += p.length;
          perRank[static_cast<size_t>(p.owner)] += p.length;
        }
        for (size_t i = 0; i < sizes.size(); ++i) QCOMPARE(next[i], sizes[i]);
        const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
        const int64_t largest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
        // A cut moves at most half an alignment unit, or to the end of a
        // parameter shorter than the unit.
        const int64_t slack = 2 * std::max(kShardAlignment, std::min(largest, kShardAlignment));
        for (int64_t share : perRank) QVERIFY2(std::abs(share - total / ranks) <= slack, std::to_string(share).c_str());
      }
    // The embedding of GPT-2 alone is 31 % of its parameters: whole-parameter
    // shards could not give 8 ranks 1/8 each; the flat view does.
    const std::vector<ShardPiece> gpt2 = flatShards({50257 * 768, 124439808 - 50257 * 768}, 8);
    std::vector<int64_t> share(8, 0);
    for (const ShardPiece& p : gpt2) share[static_cast<size_t>(p.owner)] += p.length;
    for (int64_t s : share) QVERIFY(std::abs(static_cast<double>(s) / 124439808 - 0.125) < 1e-6);
  }

  // Three "ranks" in one process, each stepping its pieces as slices, against
  // one optimizer over the whole parameters: the same weights and state bit
  // for bit after several steps, for every recipe and both kernel sets.
  void slicesStepAsTheWholeParameter() {
    const std::vector<int64_t> sizes = {1000, 4100, 64, 300};
    const std::vector<OptimizerMode> modes = {OptimizerMode::Fp32AdamW, OptimizerMode::Bf16Plain,
                                              OptimizerMode::Bf16Nearest, OptimizerMode::Bf16Kahan,
                                              OptimizerMode::Bf16StochasticRounding, OptimizerMode::Fp32MasterWeights};
    for (const StepKernels kernels : {StepKernels::Fused, StepKernels::Reference})
      for (const OptimizerMode mode : modes) {
        const std::string what = optimizerModeId(mode) + " / " + stepKernelsId(kernels);
        AdamWOptions options;
        options.lr = 1e-3;
        options.kernels = kernels;
        if (mode != OptimizerMode::Fp32AdamW && mode != OptimizerMode::Bf16Plain && mode != OptimizerMode::Fp32MasterWeights)
          options.moments = MomentPrecision::Bf16Stochastic;  // the moments' random streams too
        std::vector<TrainableParam> whole = makeParams(sizes, mode, 5), cut = makeParams(sizes, mode, 5);
        PrecisionAdamW reference(whole, mode, options, 11);
        const std::vector<ShardPiece> pieces = flatShards(sizes, 3);
        std::vector<std::unique_ptr<PrecisionAdamW>> ranks;
        std::vector<std::pair<ShardPiece, torch::Tensor>> slices;
        for (int r = 0; r < 3; ++r) {
          std::vector<TrainableParam> mine;
          for (const ShardPiece& p : pieces) {
            if (p.owner != r) continue;
            TrainableParam part = cut[p.param];
            part.param = cut[p.param].param.view({-1}).narrow(0, p.begin, p.length);
            if (part.fp32Source.defined()) part.fp32Source = part.fp32Source.narrow(0, p.begin, p.length).clone();
            part.firstElement = p.begin;
            part.streamIndex = static_cast<int64_t>(p.param);
            slices.emplace_back(p, part.param);
            mine.push_back(part);
          }
          ranks.push_back(std::make_unique<PrecisionAdamW>(mine, mode, options, 11));
        }
        QVERIFY2(slices.size() > sizes.size(), "some parameter is cut");
        for (int step = 0; step < 4; ++step) {
          for (size_t i = 0; i < sizes.size(); ++i) {
            const torch::Tensor grad = (torch::randn({sizes[i]}) * 1e-2).to(whole[i].param.scalar_type());
            whole[i].param.mutable_grad() = grad.clone();
            cut[i].param.mutable_grad() = grad.clone();
          }
          for (auto& [p, slice] : slices)
            slice.mutable_grad() = cut[p.param].param.grad().narrow(0, p.begin, p.length);
          reference.step(options.lr, true);
          for (auto& rank : ranks) rank->step(options.lr, true);
        }
        for (size_t i = 0; i < sizes.size(); ++i)
          QVERIFY2(torch::equal(whole[i].param, cut[i].param), (what + ": " + whole[i].name).c_str());
        for (size_t r = 0; r < ranks.size(); ++r)
          for (const auto& [name, state] : ranks[r]->stateTensors()) {
            const std::string param = name.substr(0, name.find(".weight") + 7);
            for (const auto& [p, slice] : slices) {
              if (p.owner != static_cast<int>(r) || whole[p.param].name != param) continue;
              torch::Tensor full;
              for (const auto& [refName, t] : reference.stateTensors())
                if (refName == name) full = t;
              QVERIFY2(full.defined(), name.c_str());
              QVERIFY2(torch::equal(full.narrow(0, p.begin, p.length), state), (what + ": " + name).c_str());
            }
          }
      }
  }

  // A slice that does not start on a Philox group could not draw the whole
  // parameter's bits: refused.
  void aMisalignedSliceIsRefused() {
    TrainableParam tp;
    tp.name = "w";
    tp.layer = "l";
    tp.param = torch::zeros({16}, torch::kBFloat16);
    tp.firstElement = 4;
    QVERIFY_THROWS_EXCEPTION(ConfigError, PrecisionAdamW({tp}, OptimizerMode::Bf16StochasticRounding, AdamWOptions{}, 0));
  }
};

PLAB_TEST_GUILESS_MAIN(TestFlatShards)
}  // namespace test_flat_shards
#include "test_flat_shards.moc"
