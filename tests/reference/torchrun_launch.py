"""precision-lab-cli under the real torchrun (torch.distributed.run) against
its own launcher: `torchrun --standalone --nproc-per-node 2 --no-python
precision-lab-cli run CONFIG` must train the same run as `precision-lab-cli
run CONFIG --nproc 2` (the same ranks, the same rows of every global batch,
the same sharded optimizer): every step's loss and every saved weight and
optimizer-state tensor equal bit for bit, and summary.json saying 2
processes. torchrun is the reference launcher of the field; a missing one
fails the test.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.distributed.run  # noqa: F401  (the launcher under test; ImportError fails the test)
from safetensors.torch import load_file


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True, help="path of precision-lab-cli")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", PLAB_DIST_TIMEOUT_S="60")
    with tempfile.TemporaryDirectory() as tmp:
        config = json.loads(subprocess.run([args.cli, "default-config"], check=True, capture_output=True,
                                           text=True).stdout)
        config.update(steps=4, mode="bf16-kahan", threads=1, eval_every=2, checkpoint_every=4)
        config_path = os.path.join(tmp, "config.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        own = os.path.join(tmp, "own")
        launched = os.path.join(tmp, "torchrun")
        commands = {
            own: [args.cli, "run", config_path, "--nproc", "2", "--no-pdf", "--out", own],
            launched: [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                       "--no-python", args.cli, "run", config_path, "--no-pdf", "--out", launched],
        }
        for folder, command in commands.items():
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        failures = []
        summaries = {f: json.load(open(os.path.join(f, "summary.json"))) for f in commands}
        for folder, summary in summaries.items():
            if summary.get("world_size") != 2:
                failures.append(f"{folder}: world_size {summary.get('world_size')}, not 2")
        losses = {f: [json.loads(line)["loss"] for line in open(os.path.join(f, "metrics.jsonl"))] for f in commands}
        if losses[own] != losses[launched] or len(losses[own]) != 4:
            failures.append(f"losses differ: --nproc {losses[own]}, torchrun {losses[launched]}")
        for name in ("model.safetensors", "optimizer.safetensors"):
            a = load_file(os.path.join(own, "checkpoint-4", name))
            b = load_file(os.path.join(launched, "checkpoint-4", name))
            if sorted(a) != sorted(b):
                failures.append(f"{name}: tensors differ in names")
                continue
            differing = [k for k in a if not torch.equal(a[k].view(torch.uint8), b[k].view(torch.uint8))]
            if differing:
                failures.append(f"{name}: {len(differing)} of {len(a)} tensors differ, e.g. {differing[0]}")
            else:
                print(f"{name}: {len(a)} tensors equal bit for bit")
        print(f"losses of 4 steps equal: {losses[own]}")
        if failures:
            sys.exit("\n".join(failures))
    print("torchrun and --nproc 2 trained the same run")


if __name__ == "__main__":
    main()
