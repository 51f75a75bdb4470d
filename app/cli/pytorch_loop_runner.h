#pragma once
// Runs bench/pytorch_loop.py (carried in the binary) in a Python with torch,
// so that `precision-lab-cli bench` measures the PyTorch loop on this
// machine, in this run, beside its own runs: never a figure from elsewhere.
#include <string>

namespace plab::cli {

struct LoopFigure {
  bool ok = false;
  double tokensPerSecond = 0, tokensPerCpuSecond = 0;
  std::string torch;  // torch.__version__ of that Python
  int threads = 0;
  std::string problem;  // why not, when !ok
};

class PytorchLoopRunner {
 public:
  // Writes the script and the model config into a fresh temporary folder;
  // the destructor removes exactly those files and the folder.
  PytorchLoopRunner(std::string python, const std::string& modelConfigJson);
  ~PytorchLoopRunner();
  PytorchLoopRunner(const PytorchLoopRunner&) = delete;
  PytorchLoopRunner& operator=(const PytorchLoopRunner&) = delete;

  // One loop: `steps` timed steps after 2 warm-up steps, dtype "fp32" or
  // "bf16", optimizer as pytorch_loop.py's --optimizer ("adamw-fused": torch.optim.AdamW(fused=True)).
  LoopFigure run(const std::string& dtype, const std::string& optimizer, long long batch, long long seq,
                 long long steps, int threads) const;
  const std::string& python() const { return python_; }

 private:
  std::string python_, folder_, script_, config_, errors_;
};

// The Python to run the loop with: $PLAB_PYTHON, else the one this build was
// configured with (its .venv) when it exists, else python3 from PATH.
std::string defaultLoopPython();

}  // namespace plab::cli
