#!/usr/bin/env python3
"""The project's safetensors reader against the safetensors library's own rules.

Crafted files (a header and a data buffer) are opened by
safetensors.torch.load_file and by the probe (SafetensorsFile, every tensor
loaded): both must accept the same files and refuse the same ones. The
format's rules, as the library checks them: sorted by offset, the tensors
tile the data buffer from byte 0 to its end (no overlap, no gap, nothing
after the last), each tensor's bytes match its shape and dtype. One
deliberate difference: a header naming one tensor twice with identical
entries is accepted by the library (its JSON map keeps the last) and refused
by the project (issue 37.6: any second entry of a name is refused); a second
entry at other offsets is refused by both.
"""
import json
import os
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_common  # noqa: E402

import safetensors  # noqa: E402
from safetensors.torch import load_file  # noqa: E402


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def header_text(items):
    """A header from (name, entry) pairs in order (a name may repeat), space-padded to 8 bytes."""
    text = "{" + ",".join(json.dumps(k) + ":" + json.dumps(v) for k, v in items) + "}"
    return text + " " * ((8 - len(text) % 8) % 8)


F4 = lambda b, e: entry("F32", [(e - b) // 4], b, e)  # noqa: E731

# name -> (header items, data bytes, the project's verdict where it differs on purpose)
CASES = {
    "one tensor": ([("w", F4(0, 8))], 8, None),
    "two tensors, name order against offset order": ([("b", F4(0, 8)), ("a", F4(8, 16))], 16, None),
    "empty tensor between two": ([("a", F4(0, 4)), ("e", entry("F32", [0], 4, 4)), ("b", F4(4, 8))], 8, None),
    "metadata": ([("__metadata__", {"format": "pt"}), ("w", F4(0, 8))], 8, None),
    "no tensor": ([], 0, None),
    "overlap": ([("a", F4(0, 16)), ("b", F4(8, 24))], 24, None),
    "gap": ([("a", F4(0, 4)), ("b", F4(8, 12))], 12, None),
    "bytes after the last tensor": ([("w", F4(0, 8))], 12, None),
    "first tensor not at byte 0": ([("w", F4(4, 12))], 12, None),
    "offsets past the end": ([("w", F4(0, 8))], 4, None),
    "size does not match the shape": ([("w", entry("F32", [3], 0, 8))], 8, None),
    "a name twice, other offsets": ([("w", F4(0, 8)), ("w", F4(8, 16))], 16, None),
    "a name twice, the same entry": ([("w", F4(0, 8)), ("w", F4(0, 8))], 8,
                                     "refused: the project refuses any second entry of a name"),
}


def library_accepts(path):
    try:
        load_file(path)
        return True
    except Exception:  # the library's SafetensorError
        return False


def check_cases(probe, tally, work):
    for name, (items, data_bytes, ours) in CASES.items():
        text = header_text(items).encode()
        path = os.path.join(work, name.replace(" ", "_").replace(",", "") + ".safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + bytes(data_bytes))
        reference = library_accepts(path)
        done = subprocess.run([probe.path, "read-safetensors", path], capture_output=True, text=True)
        if done.returncode not in (0, 3):
            tally.check(name, False, f"probe failed ({done.returncode}): {done.stderr.strip()}")
            continue
        project = done.returncode == 0
        expected = reference if ours is None else ours.startswith("accepted")
        said = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        tally.check(name, project == expected,
                    f"library {'accepts' if reference else 'refuses'}, project {said[:160]}"
                    + (f" ({ours})" if ours else ""))


def main():
    return reference_common.run_checks(__doc__, f"safetensors {safetensors.__version__}", "plab-safetensors-",
                                       [("cases", check_cases)])


if __name__ == "__main__":
    sys.exit(main())
