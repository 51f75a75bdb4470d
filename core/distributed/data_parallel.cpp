#include "distributed/data_parallel.h"

#include <map>

#include "distributed/process_group.h"
#include "hub/sha256.h"

namespace plab {

DataParallel::DataParallel(const WorldInfo& world, const torch::Device& device, const nlohmann::json& agreement)
    : world_(world), device_(device) {
  if (world_.distributed()) group_ = std::make_unique<ProcessGroup>(world_, device, agreement);
}

void DataParallel::agree(const std::string& topic, const nlohmann::json& document) {
  if (active()) group_->agree(topic, document);
}

DataParallel::~DataParallel() = default;

torch::Tensor DataParallel::localRows(const torch::Tensor& globalBatch) const {
  if (!active()) return globalBatch;
  const int64_t rows = globalBatch.size(0) / world_.worldSize;
  return globalBatch.narrow(0, world_.rank * rows, rows);
}

void DataParallel::averageGradients(const std::vector<TrainableParam>& params, const std::string& what) {
  if (!active()) return;
  torch::NoGradGuard noGrad;
  // Buckets of one gradient dtype, reduced in fp32 (a bf16 sum would round
  // at every addition), each at most kBucketElements unless one gradient
  // alone is larger: the fp32 copies take one bucket's room at a time.
  constexpr int64_t kBucketElements = (int64_t(25) << 20) / 4;
  std::map<torch::ScalarType, std::vector<std::vector<torch::Tensor>>> byType;
  std::map<torch::ScalarType, int64_t> filled;
  for (const TrainableParam& p : params) {
    const torch::Tensor& g = p.param.grad();
    if (!g.defined()) continue;
    auto& buckets = byType[g.scalar_type()];
    int64_t& size = filled[g.scalar_type()];
    if (buckets.empty() || (size > 0 && size + g.numel() > kBucketElements)) {
      buckets.emplace_back();
      size = 0;
    }
    buckets.back().push_back(g);
    size += g.numel();
  }
  for (auto& entry : byType)
    for (std::vector<torch::Tensor>& grads : entry.second) averageBucket(grads, what);
}

void DataParallel::averageBucket(std::vector<torch::Tensor>& grads, const std::string& what) {
  std::vector<torch::Tensor> flat;
  flat.reserve(grads.size());
  for (const torch::Tensor& g : grads) flat.push_back(g.reshape({-1}).to(torch::kFloat));
  torch::Tensor bucket = torch::cat(flat);
  flat.clear();
  group_->allReduceSum(bucket, what);
  bucket.div_(static_cast<double>(world_.worldSize));
  int64_t offset = 0;
  for (torch::Tensor& g : grads) {
    g.copy_(bucket.narrow(0, offset, g.numel()).view(g.sizes()));
    offset += g.numel();
  }
}

double DataParallel::mean(double local, const std::string& what) {
  if (!active()) return local;
  torch::Tensor t = torch::tensor({local}, torch::kDouble).to(device_);
  group_->allReduceSum(t, what);
  return t.item<double>() / static_cast<double>(world_.worldSize);
}

bool DataParallel::any(bool local, const std::string& what) {
  if (!active()) return local;
  torch::Tensor t = torch::tensor({local ? 1.0 : 0.0}, torch::kDouble).to(device_);
  group_->allReduceSum(t, what);
  return t.item<double>() > 0;
}

void DataParallel::sum(torch::Tensor& tensor, const std::string& what) {
  if (active()) group_->allReduceSum(tensor, what);
}

void DataParallel::broadcast(torch::Tensor& tensor, int root, const std::string& what) {
  if (active()) group_->broadcast(tensor, root, what);
}

void DataParallel::send(torch::Tensor& tensor, int dst, const std::string& what) {
  if (active()) group_->send(tensor, dst, what);
}

void DataParallel::recv(torch::Tensor& tensor, int src, const std::string& what) {
  if (active()) group_->recv(tensor, src, what);
}

nlohmann::json parameterLayoutDocument(const std::vector<TrainableParam>& params) {
  Sha256 layout;
  int64_t elements = 0;
  for (const TrainableParam& p : params) {
    std::string line = p.name + " " + std::string(c10::toString(p.param.scalar_type()));
    for (int64_t d : p.param.sizes()) line += " " + std::to_string(d);
    line += "\n";
    layout.update(line.data(), line.size());
    elements += p.param.numel();
  }
  return {{"parameters",
           {{"count", params.size()}, {"elements", elements}, {"layout_sha256", layout.hexDigest()}}}};
}

void DataParallel::announceFailure(const std::string& message) noexcept {
  if (group_) group_->announceFailure(message);
}

}  // namespace plab
