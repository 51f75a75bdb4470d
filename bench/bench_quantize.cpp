// Throughput of the GEMM formats' fake quantization (formats/gemm_format.h):
// quantize-then-dequantize of a rows x cols fp32 tensor per format, against
// the plain bf16 round trip x.to(bf16).to(fp32) on the same tensor. Paired
// rounds: the reference and the format back to back, their order
// alternating; "ms" and "ref ms" are medians over the rounds and "vs ref" the
// median of each round's ratio, so a load that comes and goes moves both alike.
// The first row pairs the reference with itself: how near 1.00 it reads is
// the run's noise. GB/s counts 4 bytes read and 4 written per element. The
// "bf16 in" rows quantize the same tensor rounded to bf16 ("cols": blocks down
// the columns, quantizeDequantizeColumns), as a bf16 model's operands are;
// the "operand" rows are what a bf16 layer's products take (quantizeForGemm:
// bf16 values without the tensor scale, 2 bytes written per element).
//   bench_quantize [rows=4096] [cols=4096] [rounds=15] [threads=1]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "formats/gemm_format.h"

using namespace plab;

namespace {

double timeMs(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int64_t cols = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 15;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 1;
  at::set_num_threads(threads);
  torch::manual_seed(0);
  // Rows of different magnitudes, as activations and gradients have.
  const torch::Tensor x = torch::randn({rows, cols}) * torch::exp2(torch::randint(-10, 10, {rows, 1}).to(torch::kFloat32));
  const auto reference = [&] { return x.to(torch::kBFloat16).to(torch::kFloat32); };
  std::printf("quantize-dequantize of %lld x %lld fp32, %d threads, %d paired rounds\n", static_cast<long long>(rows),
              static_cast<long long>(cols), threads, rounds);
  std::printf("%-22s %9s %9s %8s %8s\n", "format", "ms", "ref ms", "vs ref", "GB/s");
  const double bytes = 8.0 * static_cast<double>(rows * cols);
  struct Row {
    std::string name;
    std::function<void()> run;
  };
  std::vector<Row> table = {{"(reference itself)", [&] { reference(); }}};
  for (GemmFormat f : allGemmFormats())
    table.push_back({gemmFormatId(f), [&x, f] { quantizeDequantize(x, f, GemmRole::Input); }});
  table.push_back({"fp8-e4m3 grad-output", [&x] { quantizeDequantize(x, GemmFormat::Fp8E4m3, GemmRole::GradOutput); }});
  // A bf16 input (a bf16 model's operands): the elementwise schemes read it
  // through tables of the element function's values (formats/quantize_cpu.cpp).
  const torch::Tensor xb = x.to(torch::kBFloat16);
  for (GemmFormat f : allGemmFormats())
    if (f != GemmFormat::Bf16)
      table.push_back({gemmFormatId(f) + " bf16 in", [&xb, f] { quantizeDequantize(xb, f, GemmRole::Input); }});
  for (GemmFormat f : {GemmFormat::Mxfp8, GemmFormat::Nvfp4})
    table.push_back({gemmFormatId(f) + " bf16 cols", [&xb, f] { quantizeDequantizeColumns(xb, f, GemmRole::Input); }});
  // The GEMM operands a bf16 layer takes (quantizeForGemm: bf16 in, bf16 out).
  for (GemmFormat f : allGemmFormats())
    if (f != GemmFormat::Bf16)
      table.push_back({gemmFormatId(f) + " operand", [&xb, f] {
                         quantizeForGemm(xb, f, GemmRole::Input, torch::kBFloat16);
                       }});
  for (GemmFormat f : {GemmFormat::Mxfp8, GemmFormat::Nvfp4})
    table.push_back({gemmFormatId(f) + " operand cols", [&xb, f] {
                       quantizeForGemmColumns(xb, f, GemmRole::Input, torch::kBFloat16);
                     }});
  for (const Row& r : table) {
    r.run();  // warm-up: page in the output
    reference();
    std::vector<double> ms, refMs, ratio;
    for (int i = 0; i < rounds; ++i) {
      double a, b;
      if (i % 2 == 0) {
        b = timeMs([&] { reference(); });
        a = timeMs(r.run);
      } else {
        a = timeMs(r.run);
        b = timeMs([&] { reference(); });
      }
      ms.push_back(a);
      refMs.push_back(b);
      ratio.push_back(a / b);
    }
    const double m = median(ms);
    std::printf("%-22s %9.2f %9.2f %7.2fx %8.2f\n", r.name.c_str(), m, median(refMs), median(ratio), bytes / m / 1e6);
  }
  return 0;
}
