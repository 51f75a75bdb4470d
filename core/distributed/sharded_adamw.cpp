#include "distributed/sharded_adamw.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "distributed/data_parallel.h"
#include "util/errors.h"

namespace plab {

bool optimizerStateSharding(int worldSize) {
  const char* env = std::getenv("PLAB_SHARD_OPTIMIZER_STATE");
  return worldSize > 1 && !(env && std::string(env) == "0");
}

namespace {

int64_t shardBytesOf(const torch::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; }

// A contiguous tensor's storage as bytes (a view: writing it writes the tensor).
torch::Tensor byteView(const torch::Tensor& t) {
  if (!t.is_contiguous()) throw TrainingError("sharded optimizer: a non-contiguous tensor cannot be sent as bytes");
  return t.reshape({-1}).view(torch::kUInt8);
}

// The byte views of the tensors `owner` owns, in order, and their total size.
std::vector<torch::Tensor> bytesOwnedBy(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners,
                                        int owner, int64_t& bytes) {
  std::vector<torch::Tensor> parts;
  bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (owners[i] == owner) {
      parts.push_back(byteView(tensors[i]));
      bytes += parts.back().numel();
    }
  return parts;
}

torch::Tensor emptyBucket(DataParallel& dp, int64_t bytes) {
  return torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(dp.device()));
}

// Writes a received bucket back into the byte views it was packed from.
void unpackBucket(const torch::Tensor& bucket, std::vector<torch::Tensor>& parts) {
  int64_t offset = 0;
  for (torch::Tensor& part : parts) {
    part.copy_(bucket.narrow(0, offset, part.numel()));
    offset += part.numel();
  }
}

// Every tensor from the rank that owns it to every rank, one byte bucket
// per owner: the bits as the owner holds them.
void broadcastFromOwners(DataParallel& dp, const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners,
                         const std::string& what) {
  const int rank = dp.world().rank;
  for (int root = 0; root < dp.world().worldSize; ++root) {
    int64_t bytes = 0;
    std::vector<torch::Tensor> parts = bytesOwnedBy(tensors, owners, root, bytes);
    if (bytes == 0) continue;
    torch::Tensor bucket = rank == root ? torch::cat(parts) : emptyBucket(dp, bytes);
    dp.broadcast(bucket, root, what);
    if (rank != root) unpackBucket(bucket, parts);
  }
}

// Every tensor from the rank that owns it to rank 0 only, one byte bucket
// per owner (torch ZeRO's consolidate_state_dict(to=0)): the other ranks
// never hold more than their own shard.
void gatherToRoot(DataParallel& dp, const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners,
                  const std::string& what) {
  const int rank = dp.world().rank;
  for (int owner = 1; owner < dp.world().worldSize; ++owner) {
    if (rank != 0 && rank != owner) continue;
    int64_t bytes = 0;
    std::vector<torch::Tensor> parts = bytesOwnedBy(tensors, owners, owner, bytes);
    if (bytes == 0) continue;
    if (rank == owner) {
      torch::Tensor bucket = torch::cat(parts);
      dp.send(bucket, 0, what);
      continue;
    }
    torch::Tensor bucket = emptyBucket(dp, bytes);
    dp.recv(bucket, owner, what);
    unpackBucket(bucket, parts);
  }
}

// A parameter's elements [begin, begin + length) as a flat view (writing it
// writes the parameter).
torch::Tensor flatSlice(const torch::Tensor& t, int64_t begin, int64_t length) {
  if (!t.is_contiguous()) throw TrainingError("sharded optimizer: a non-contiguous tensor cannot be cut into shards");
  return t.view({-1}).narrow(0, begin, length);
}

// A state tensor's parameter: its checkpoint name less the state's suffix.
std::string paramOfState(const std::string& name) {
  for (const char* suffix : {".exp_avg_sq", ".exp_avg", ".master", ".kahan"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      return name.substr(0, name.size() - s.size());
  }
  throw TrainingError("sharded optimizer: unknown state tensor '" + name + "'");
}

// Per-layer statistics as rows of numbers (column 0 says the layer is present).
void packRow(const LayerUpdateStats& s, double* row) {
  const double values[] = {1,
                           static_cast<double>(s.numel),
                           static_cast<double>(s.intendedNonZero),
                           static_cast<double>(s.roundedAway),
                           s.intendedNormSq,
                           s.effectiveNormSq};
  std::copy(std::begin(values), std::end(values), row);
}
void unpackRow(const double* row, LayerUpdateStats& s) {
  s.numel = static_cast<int64_t>(row[1]);
  s.intendedNonZero = static_cast<int64_t>(row[2]);
  s.roundedAway = static_cast<int64_t>(row[3]);
  s.intendedNormSq = row[4];
  s.effectiveNormSq = row[5];
}
constexpr int kUpdateColumns = 6;

void packRow(const LayerWindowStats& s, double* row) {
  row[0] = 1;
  row[1] = s.residualDotIntended;
  row[2] = s.intendedSumSq;
  row[3] = s.residualSq;
  row[4] = s.pendingDotIntended;
  row[5] = static_cast<double>(s.trackedElements);
  row[6] = s.stochasticVarianceTerm;
  std::copy(s.groupResidualDotIntended.begin(), s.groupResidualDotIntended.end(), row + 7);
  std::copy(s.groupIntendedSumSq.begin(), s.groupIntendedSumSq.end(), row + 7 + kLostGroups);
  row[7 + 2 * kLostGroups] = s.noiseSq;
}
void unpackRow(const double* row, LayerWindowStats& s) {
  s.residualDotIntended = row[1];
  s.intendedSumSq = row[2];
  s.residualSq = row[3];
  s.pendingDotIntended = row[4];
  s.trackedElements = static_cast<int64_t>(row[5]);
  s.stochasticVarianceTerm = row[6];
  std::copy(row + 7, row + 7 + kLostGroups, s.groupResidualDotIntended.begin());
  std::copy(row + 7 + kLostGroups, row + 7 + 2 * kLostGroups, s.groupIntendedSumSq.begin());
  s.noiseSq = row[7 + 2 * kLostGroups];
}
constexpr int kWindowColumns = 8 + 2 * kLostGroups;

}  // namespace

struct ShardedAdamW::Impl {
  DataParallel& dp;
  bool sharded = false;
  int64_t window = 0;
  // Sharded only: every parameter in model order (without fp32 sources),
  // the pieces of the flat view, its step count, the layers in model order.
  std::vector<TrainableParam> all;
  std::vector<ShardPiece> pieces;
  std::vector<int64_t> paramSteps;
  int64_t steps = 0;
  std::vector<std::string> layers;
  std::unordered_map<std::string, size_t> paramByName;
  // This rank's pieces that are slices of a parameter: the slice handed to
  // `local`, whose gradient is set to the same slice of the parameter's
  // gradient before each step.
  struct OwnedSlice {
    size_t param;
    torch::Tensor slice;
    ShardPiece piece;
  };
  std::vector<OwnedSlice> slices;
  std::unordered_map<size_t, ShardPiece> mineByParam;  // at most one piece per parameter
  std::unique_ptr<PrecisionAdamW> local;   // this rank's parameters (all of them unsharded)
  std::unique_ptr<PrecisionAdamW> layout;  // sharded: every parameter's state on the meta device
  std::vector<MemoryBreakdown> rankState;  // sharded: each rank's moments, master and kahan bytes

  explicit Impl(DataParallel& d) : dp(d) {}

  // Per-layer statistics summed over the ranks, in model order; a layer
  // no rank measured stays out.
  template <typename Stats, int Columns>
  std::vector<Stats> sumOverRanks(const std::vector<Stats>& mine, const std::string& what) {
    std::unordered_map<std::string, size_t> index;
    for (size_t l = 0; l < layers.size(); ++l) index.emplace(layers[l], l);
    torch::Tensor table = torch::zeros({static_cast<int64_t>(layers.size()), Columns}, torch::kDouble);
    for (const Stats& s : mine) packRow(s, table[static_cast<int64_t>(index.at(s.layer))].data_ptr<double>());
    torch::Tensor onDevice = table.to(dp.device());
    dp.sum(onDevice, what);
    table = onDevice.cpu().contiguous();
    std::vector<Stats> out;
    for (size_t l = 0; l < layers.size(); ++l) {
      const double* row = table[static_cast<int64_t>(l)].data_ptr<double>();
      if (row[0] == 0) continue;
      Stats s;
      s.layer = layers[l];
      unpackRow(row, s);
      out.push_back(std::move(s));
    }
    return out;
  }
};

ShardedAdamW::ShardedAdamW(std::vector<TrainableParam> params, OptimizerMode mode, AdamWOptions options,
                           uint64_t seed, UpdateStatsOptions stats, DataParallel& dp, bool shard)
    : impl_(std::make_unique<Impl>(dp)) {
  Impl& im = *impl_;
  im.sharded = shard && dp.world().worldSize > 1;
  im.window = stats.window;
  if (!im.sharded) {
    im.local = std::make_unique<PrecisionAdamW>(std::move(params), mode, options, seed, stats);
    return;
  }
  // A shard would quantize its slice in blocks of its own (torchao applies
  // its size rule and blocks to each rank's local tensor): not a store this
  // project has measured against an unsharded run yet.
  if (momentsQuantized(options.moments))
    throw ConfigError("adamw.moments \"" + momentPrecisionId(options.moments) +
                      "\" is not supported with a sharded optimizer (ZeRO) yet");
  // The same rule for a plan's per-layer store (PrecisionPlan::moments).
  for (const TrainableParam& tp : params)
    if (tp.moments && momentsQuantized(*tp.moments))
      throw ConfigError("plan.moments puts \"" + momentPrecisionId(*tp.moments) + "\" on '" + tp.layer +
                        "'; quantized moment stores are not supported with a sharded optimizer (ZeRO) yet");
  std::vector<int64_t> sizes;
  for (const TrainableParam& tp : params) sizes.push_back(tp.param.numel());
  im.pieces = flatShards(sizes, dp.world().worldSize);
  for (const ShardPiece& p : im.pieces)
    if (p.owner == dp.world().rank) im.mineByParam.emplace(p.param, p);
  std::vector<TrainableParam> mine, shapes;
  for (size_t i = 0; i < params.size(); ++i) {
    TrainableParam& tp = params[i];
    im.paramByName.emplace(tp.name, i);
    if (std::find(im.layers.begin(), im.layers.end(), tp.layer) == im.layers.end()) im.layers.push_back(tp.layer);
    TrainableParam shape;
    shape.name = tp.name;
    shape.layer = tp.layer;
    shape.recipe = tp.recipe;
    shape.moments = tp.moments;
    shape.param = torch::empty(tp.param.sizes(), tp.param.options().device(torch::kMeta));
    shapes.push_back(std::move(shape));
    const auto owned = im.mineByParam.find(i);
    if (owned != im.mineByParam.end()) {
      const ShardPiece& piece = owned->second;
      TrainableParam part = tp;
      part.streamIndex = static_cast<int64_t>(i);
      if (piece.length != tp.param.numel()) {
        part.param = flatSlice(tp.param.detach(), piece.begin, piece.length);
        part.firstElement = piece.begin;
        // Its own copy: a view would keep the whole fp32 source alive.
        if (tp.fp32Source.defined()) part.fp32Source = flatSlice(tp.fp32Source.contiguous(), piece.begin, piece.length).clone();
        im.slices.push_back({i, part.param, piece});
      }
      mine.push_back(std::move(part));
    }
    tp.fp32Source = torch::Tensor();  // the owner's optimizer adopts it; the others drop it
  }
  im.all = std::move(params);
  im.paramSteps.assign(im.all.size(), 0);
  im.local = std::make_unique<PrecisionAdamW>(std::move(mine), mode, options, seed, stats);
  im.layout = std::make_unique<PrecisionAdamW>(std::move(shapes), mode, options, seed, UpdateStatsOptions{0, 1});

  // Each rank's state as its tensors measure it, summed into a table every rank reads.
  const int ranks = dp.world().worldSize;
  torch::Tensor table = torch::zeros({ranks, 3}, torch::kDouble);
  const MemoryBreakdown own = im.local->measuredMemory();
  table[dp.world().rank][0] = static_cast<double>(own.moments);
  table[dp.world().rank][1] = static_cast<double>(own.master);
  table[dp.world().rank][2] = static_cast<double>(own.kahan);
  torch::Tensor onDevice = table.to(dp.device());
  dp.sum(onDevice, "the optimizer state's size");
  table = onDevice.cpu();
  for (int r = 0; r < ranks; ++r) {
    MemoryBreakdown m;
    m.moments = static_cast<int64_t>(table[r][0].item<double>());
    m.master = static_cast<int64_t>(table[r][1].item<double>());
    m.kahan = static_cast<int64_t>(table[r][2].item<double>());
    im.rankState.push_back(m);
  }
}

ShardedAdamW::~ShardedAdamW() = default;

bool ShardedAdamW::sharded() const { return impl_->sharded; }

OptimizerStepStats ShardedAdamW::step(double lr, bool collectStats) {
  Impl& im = *impl_;
  if (!im.sharded) return im.local->step(lr, collectStats);
  torch::NoGradGuard noGrad;
  im.steps += 1;
  for (size_t i = 0; i < im.all.size(); ++i)
    if (im.all[i].param.grad().defined()) im.paramSteps[i] += 1;
  for (Impl::OwnedSlice& s : im.slices) {
    const torch::Tensor& grad = im.all[s.param].param.grad();
    s.slice.mutable_grad() = grad.defined() ? flatSlice(grad, s.piece.begin, s.piece.length) : torch::Tensor();
  }
  const OptimizerStepStats mine = im.local->step(lr, collectStats);
  const std::string which = " of step " + std::to_string(im.steps);
  std::vector<torch::Tensor> weights;
  std::vector<int> owners;
  for (const ShardPiece& p : im.pieces) {
    weights.push_back(flatSlice(im.all[p.param].param.detach(), p.begin, p.length));
    owners.push_back(p.owner);
  }
  broadcastFromOwners(im.dp, weights, owners, "the weights" + which);
  OptimizerStepStats out;
  if (collectStats) out.layers = im.sumOverRanks<LayerUpdateStats, kUpdateColumns>(mine.layers, "the statistics" + which);
  // The windows close on the same steps on every rank (PrecisionAdamW's rule).
  if (im.window > 0 && im.steps % im.window == 0)
    out.window = im.sumOverRanks<LayerWindowStats, kWindowColumns>(mine.window, "the update-lost window" + which);
  return out;
}

void ShardedAdamW::zeroGrad() {
  impl_->local->zeroGrad();
  for (TrainableParam& tp : impl_->all) tp.param.mutable_grad() = torch::Tensor();
}

int64_t ShardedAdamW::stepCount() const { return impl_->sharded ? impl_->steps : impl_->local->stepCount(); }

MemoryBreakdown ShardedAdamW::measuredMemory() const {
  const Impl& im = *impl_;
  if (!im.sharded) return im.local->measuredMemory();
  MemoryBreakdown mem;
  for (const TrainableParam& tp : im.all) {
    mem.weights += shardBytesOf(tp.param);
    mem.gradients += shardBytesOf(tp.param.grad());
  }
  for (const MemoryBreakdown& r : im.rankState) {
    mem.moments += r.moments;
    mem.master += r.master;
    mem.kahan += r.kahan;
  }
  return mem;
}

std::vector<MemoryBreakdown> ShardedAdamW::rankMemory() const {
  const Impl& im = *impl_;
  if (!im.sharded) return std::vector<MemoryBreakdown>(static_cast<size_t>(im.dp.world().worldSize), measuredMemory());
  const MemoryBreakdown job = measuredMemory();
  std::vector<MemoryBreakdown> out;
  for (const MemoryBreakdown& r : im.rankState) {
    MemoryBreakdown m = r;
    m.weights = job.weights;
    m.gradients = job.gradients;
    out.push_back(m);
  }
  return out;
}

int64_t ShardedAdamW::statisticsBytes() const { return impl_->local->statisticsBytes(); }

std::vector<std::pair<std::string, torch::Tensor>> ShardedAdamW::stateTensors() const {
  const Impl& im = *impl_;
  if (!im.sharded) return im.local->stateTensors();
  torch::NoGradGuard noGrad;
  std::unordered_map<std::string, torch::Tensor> mine;
  for (auto& [name, t] : im.local->stateTensors()) mine.emplace(name, t);
  // Rank 0 assembles every state tensor whole from the owners' pieces; the
  // others only send theirs (they are given nothing back).
  const int rank = im.dp.world().rank;
  std::vector<std::pair<std::string, torch::Tensor>> out;
  std::vector<torch::Tensor> parts;
  std::vector<int> owners;
  for (const PrecisionAdamW::StateTensorLayout& e : im.layout->stateLayout()) {
    const size_t param = im.paramByName.at(paramOfState(e.name));
    torch::Tensor whole;
    if (rank == 0) whole = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype).device(im.dp.device()));
    for (const ShardPiece& p : im.pieces) {
      if (p.param != param || (rank != 0 && p.owner != rank)) continue;
      const torch::Tensor own = p.owner == rank ? mine.at(e.name).reshape({-1}).to(im.dp.device()) : torch::Tensor();
      if (rank == 0) {
        parts.push_back(flatSlice(whole, p.begin, p.length));
        if (own.defined()) parts.back().copy_(own);
      } else {
        parts.push_back(own.contiguous());
      }
      owners.push_back(p.owner);
    }
    if (rank == 0) out.emplace_back(e.name, whole);
  }
  gatherToRoot(im.dp, parts, owners, "the optimizer state");
  for (auto& [name, t] : out) t = t.cpu();
  return out;
}

nlohmann::json ShardedAdamW::stepCounts() const {
  const Impl& im = *impl_;
  if (!im.sharded) return im.local->stepCounts();
  nlohmann::json params = nlohmann::json::object();
  for (size_t i = 0; i < im.all.size(); ++i) params[im.all[i].name] = im.paramSteps[i];
  return {{"step", im.steps}, {"params", params}};
}

std::vector<PrecisionAdamW::StateTensorLayout> ShardedAdamW::stateLayout() const {
  return impl_->sharded ? impl_->layout->stateLayout() : impl_->local->stateLayout();
}

void ShardedAdamW::loadState(const std::function<torch::Tensor(const std::string&)>& tensor,
                             const nlohmann::json& counts) {
  Impl& im = *impl_;
  if (!im.sharded) {
    im.local->loadState(tensor, counts);
    return;
  }
  // This rank's share: the slice of a parameter it steps. A saved tensor of
  // another size goes through whole, for the optimizer to refuse.
  im.local->loadState(
      [&](const std::string& name) {
        torch::Tensor t = tensor(name);
        const auto param = im.paramByName.find(paramOfState(name));
        if (!t.defined() || param == im.paramByName.end()) return t;
        const auto piece = im.mineByParam.find(param->second);
        if (piece == im.mineByParam.end() || t.numel() != im.all[param->second].param.numel() ||
            piece->second.length == t.numel())
          return t;
        return flatSlice(t.contiguous(), piece->second.begin, piece->second.length);
      },
      counts);  // throws ConfigError on a mismatch
  try {
    for (size_t i = 0; i < im.all.size(); ++i) im.paramSteps[i] = counts.at("params").at(im.all[i].name).get<int64_t>();
    im.steps = counts.at("step").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("optimizer state: malformed step counts (") + e.what() + ")");
  }
}

}  // namespace plab
