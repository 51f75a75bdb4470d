"""Shared by the reference tests: the probe, the tally of checks, offline setup.

Every reference library is imported by the scripts at their top, so a missing
library fails the test (ImportError, exit 1) instead of skipping it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# No network at test time, whatever the caller's environment says.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.dont_write_bytecode = True


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--probe", required=True, help="path of plab_reference_probe")
    parser.add_argument("--keep", help="write the generated folders here instead of a temporary folder")
    args = parser.parse_args()
    if not os.access(args.probe, os.X_OK):
        sys.exit(f"the probe {args.probe} is missing or not executable (build plab_reference_probe)")
    return args


# Commands that keep no state between calls (no environment, no global
# random stream: their random bits come from the seed they are given; no
# process-wide setting): they run one after another in one
# `plab_reference_probe serve` process instead of a process each, which cost
# 0.25 s of CPU per call to start. `train` sets an environment variable and
# runs in a process of its own.
SERVED_COMMANDS = {"config", "logits", "encode", "quantize", "read-safetensors", "save", "adamw", "sr-round",
                   "qlinear", "grad-scaler"}


class Probe:
    def __init__(self, path):
        self.path = path
        self.seconds = 0.0
        self._server = None

    def __call__(self, *args):
        args = [str(a) for a in args]
        start = time.monotonic()
        answer = self._served(args) if args[0] in SERVED_COMMANDS else None
        if answer is None:  # not served, or the server died on it: a process of its own says why
            done = subprocess.run([self.path, *args], capture_output=True, text=True)
            answer = (done.returncode, done.stdout, done.stderr)
        self.seconds += time.monotonic() - start
        returncode, stdout, stderr = answer
        if returncode != 0:
            raise RuntimeError(f"probe {' '.join(args)} exited {returncode}:\n{stderr}")
        return stdout

    def _served(self, args):
        if self._server is None or self._server.poll() is not None:
            self._server = subprocess.Popen([self.path, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            text=True, encoding="utf-8")
        try:
            self._server.stdin.write(json.dumps(args) + "\n")
            self._server.stdin.flush()
            line = self._server.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self._server.wait()
            self._server = None
            return None
        answer = json.loads(line)
        return answer["rc"], answer["stdout"], answer["stderr"]


class Tally:
    """Counts checks. An expected failure names the disagreement it stands
    for; if it starts to agree, that is reported as a failure too, so that the
    mark is removed together with the cause."""

    def __init__(self):
        self.passed = 0
        self.failed = []
        self.expected = []

    def check(self, name, ok, detail="", expected_failure=None):
        line = f"{name}: {detail}" if detail else name
        if expected_failure:
            if ok:
                self.failed.append(name)
                print(f"FAIL (expected to fail, now agrees: remove the mark) {line}\n"
                      f"     the mark said: {expected_failure}", flush=True)
            else:
                self.expected.append(name)
                print(f"XFAIL {line}\n      known disagreement: {expected_failure}", flush=True)
            return ok
        if ok:
            self.passed += 1
            print(f"ok   {line}", flush=True)
        else:
            self.failed.append(name)
            print(f"FAIL {line}", flush=True)
        return ok

    def error(self, name, exc):
        self.failed.append(name)
        print(f"FAIL {name}: {type(exc).__name__}: {exc}", flush=True)

    def finish(self, started):
        extra = f" ({len(self.expected)} expected failures, listed above as XFAIL)" if self.expected else ""
        print(f"{time.monotonic() - started:.1f} s")
        if self.failed:
            print("failed: " + ", ".join(self.failed))
        print(f"{self.passed} passed, {len(self.failed)} failed{extra}")
        return 1 if self.failed else 0


def run_checks(doc, banner, prefix, checks):
    """Every script's main: parses the arguments, then runs each
    (name, check(probe, tally, work)) in one temporary folder (--keep: a
    folder kept), a check that raises reported without hiding the others.
    Returns the exit status."""
    args = parse_args(doc.splitlines()[0])
    started = time.monotonic()
    probe = Probe(args.probe)
    tally = Tally()
    print(banner)
    work = args.keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    try:
        for name, check in checks:
            try:
                check(probe, tally, work)
            except Exception as e:  # one broken check must not hide the others
                tally.error(name, e)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"probe: {probe.seconds:.1f} s")
    return tally.finish(started)
