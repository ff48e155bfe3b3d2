"""ONNX backend node tests, held to expect_cpu.txt (and expect_cuda.txt on a GPU).

Set LOCKSTEP_NODE_RUNTIME=onnxruntime (and LOCKSTEP_NODE_EXPECT_CPU=<list>) to
point the same check at another runtime.
"""
import importlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RUNTIME = os.environ.get("LOCKSTEP_NODE_RUNTIME", "lockstep")


def expect_file(provider):
    return Path(os.environ.get(f"LOCKSTEP_NODE_EXPECT_{provider.upper()}",
                               HERE / f"expect_{provider}.txt"))


def load_runner():
    # Loaded by path: a bare `import runner` could pick up another tests dir's module.
    spec = importlib.util.spec_from_file_location("lockstep_node_runner", HERE / "runner.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("provider", ["cpu", "cuda"])
def test_node_cases_no_regressions(provider):
    # No skip when the runtime is missing: a skipped suite hides every regression.
    rt = importlib.import_module(RUNTIME)
    runner = load_runner()
    if provider != "cpu" and runner.provider_missing(rt, provider):
        pytest.skip(runner.provider_missing(rt, provider))
    expect = expect_file(provider)
    regenerate = (f"python tests/node/runner.py --runtime {RUNTIME} --provider {provider}"
                  f" --expect {expect} --update-expectations")
    assert expect.exists(), f"{expect} is missing; write it with: {regenerate}"
    data_dir, index = runner.load_index()
    jobs = len(os.sched_getaffinity(0))
    results = runner.run_cases(sorted(index), RUNTIME, provider, data_dir, index,
                               jobs=jobs, isolate=True)
    diff = runner.compare_expectations(results, runner.read_expectations(expect))
    lines = [f"{r.name}: {r.status}: {r.reason}" for r in diff.regressions]
    assert not lines, (f"{len(lines)} node cases listed as pass in {expect.name} no longer pass "
                       f"({runner.summary(results)}):\n" + "\n".join(lines))
