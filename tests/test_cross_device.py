"""The heart of the test suite: every op case on every device.

For each case in tests/cases/*.py:
  * lockstep CPU matches the reference (onnxruntime CPU or a numpy function) within the case's tolerance;
  * lockstep CPU gives the same bytes at 1 and at 3 threads;
  * lockstep CUDA gives the same bytes as lockstep CPU (NaN equals NaN), when a GPU is present.
"""

import numpy as np
import pytest

import lockstep
from bits import max_ulp, same_bits
from cases import all_cases
from onnx_models import feeds_of, single_node_model

CASES = all_cases()
HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()


def run_lockstep(model, feeds, provider=lockstep.CPU, threads=1):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    session = lockstep.InferenceSession(model, options, providers=[provider])
    return session.run(None, feeds)


def run_reference(c, model, feeds):
    if callable(c.reference):
        return c.reference(**{k: v for k, v in c.inputs.items()})
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.fixture(scope="module")
def cpu_results():
    return {}


def results_of(c, cache):
    if c.name not in cache:
        model = single_node_model(c)
        cache[c.name] = (model, run_lockstep(model, feeds_of(c)))
    return cache[c.name]


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_matches_reference(c, cpu_results):
    if c.reference is None:
        pytest.skip(f"no reference: {c.note}")
    model, ours = results_of(c, cpu_results)
    expected = run_reference(c, model, feeds_of(c))
    assert len(ours) == len(expected)
    for i, (got, want) in enumerate(zip(ours, expected)):
        want = np.asarray(want)
        assert got.dtype == want.dtype, f"output {i}: dtype {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"output {i}: shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want, rtol=c.rtol, atol=c.atol, err_msg=f"output {i}")


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_thread_count_invariance(c, cpu_results):
    model, one_thread = results_of(c, cpu_results)
    three_threads = run_lockstep(model, feeds_of(c), threads=3)
    for i, (a, b) in enumerate(zip(one_thread, three_threads)):
        assert same_bits(a, b), f"output {i}: 1 vs 3 threads differ by {max_ulp(a, b)} ulp"


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_cuda_bit_identical(c, cpu_results):
    model, cpu = results_of(c, cpu_results)
    cuda = run_lockstep(model, feeds_of(c), provider=lockstep.CUDA)
    for i, (a, b) in enumerate(zip(cpu, cuda)):
        assert same_bits(a, b), f"output {i}: CPU vs CUDA differ, worst {max_ulp(a, b)} ulp"
