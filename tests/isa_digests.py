"""Digests of the CPU provider's outputs, for tests/test_isa_invariance.py: every cross-device op case
(tests/cases/) and every ONNX node test listed as passing in tests/node/expect_cpu.txt, run in this process,
whose CPU kernels use the ISA that LOCKSTEP_CPU_ISA forces (or the CPU's best one when it is unset).

    LOCKSTEP_CPU_ISA=scalar python3 tests/isa_digests.py OUT.json

OUT.json holds {"isa": the ISA the kernels ran, "digests": {case: [[output name, digest], ...]}}. A digest is
the output's dtype, shape and the sha256 of its bytes with every NaN's bytes replaced by one NaN pattern, so
that equal digests mean same bits with NaN equal to NaN (tests/bits.py same_bits); a case that raises gets its
error message instead.
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent
NODE_EXPECT = TESTS / "node" / "expect_cpu.txt"
sys.path[:0] = [str(TESTS), str(TESTS / "node")]

import runner  # noqa: E402  (tests/node/runner.py: the node cases' loading and running)


def node_data():
    """The node cases' data dir and index (generated on first use) and the names expected to pass."""
    data_dir, index = runner.load_index()
    expected = runner.read_expectations(NODE_EXPECT)
    return data_dir, index, sorted(n for n, (status, _) in expected.items() if status == "pass")


def canonical_bytes(a):
    """The array's bytes with each NaN's bytes set to all ones (itself a NaN), so any NaN equals any NaN."""
    if a.dtype == object:
        return json.dumps([str(x) for x in a.ravel()]).encode()
    bits = np.ascontiguousarray(a).view(np.dtype(f"u{a.dtype.itemsize}")).copy()
    if runner.is_float(a.dtype):
        bits[runner.float_nan(a)] = np.iinfo(bits.dtype).max
    return bits.tobytes()


def digest(a):
    a = np.asarray(a)
    return f"{a.dtype}{list(a.shape)} sha256:{hashlib.sha256(canonical_bytes(a)).hexdigest()}"


def digests_of(names, run):
    """[[name, digest], ...] of run()'s outputs, or [["error", message]] when it raises."""
    try:
        return [[n, digest(o)] for n, o in zip(names, run())]
    except Exception as exc:
        return [["error", runner.describe(exc)]]


def node_digests():
    import lockstep
    data_dir, index, names = node_data()
    found = {}
    for name in names:
        case = runner.load_case(data_dir, name, index[name])
        outputs = [vi.name for vi in case.model.graph.output]
        found[f"node/{name}"] = digests_of(outputs, lambda: runner.run_model(lockstep, case, "cpu", 0)[0])
    return found


def cross_device_digests():
    import test_cross_device as xd
    from onnx_models import feeds_of, single_node_model
    found = {}
    for c in xd.CASES:
        found[f"cases/{c.name}"] = digests_of(
            [n for n in c.output_names if n], lambda: xd.run_lockstep(single_node_model(c), feeds_of(c)))
    return found


def main(out):
    from lockstep import _core
    digests = {**cross_device_digests(), **node_digests()}
    Path(out).write_text(json.dumps({"isa": _core.cpu_isa(), "digests": digests}))


if __name__ == "__main__":
    with np.errstate(all="ignore"):
        main(sys.argv[1])
