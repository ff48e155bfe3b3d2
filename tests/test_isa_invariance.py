"""The same bits whichever CPU kernels run: every cross-device op case and every node test that passes on the CPU
gives, in a process with LOCKSTEP_CPU_ISA=scalar, avx2 or avx512, the bytes of a process left to the default ISA
(the best this CPU has), NaN equal to NaN. One process per ISA digests all the cases (tests/isa_digests.py); the
processes run side by side and the test compares their digests case by case. An ISA this CPU lacks is skipped
(forcing it would run the best one again), and so is forcing the default ISA, which the default process runs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import isa_digests
from lockstep import _core

ISAS = ["scalar", "avx2", "avx512"]
DEFAULT = _core.cpu_best_isa()
MAX_LISTED = 20


class DigestRun:
    """tests/isa_digests.py in a process of its own, with LOCKSTEP_CPU_ISA=isa (None: unset)."""

    def __init__(self, isa, folder):
        name = isa or "default"
        self.what, self.out, self.log, self.result = name, folder / f"{name}.json", folder / f"{name}.log", None
        env = {k: v for k, v in os.environ.items() if k != "LOCKSTEP_CPU_ISA"}
        if isa:
            env["LOCKSTEP_CPU_ISA"] = isa
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the lockstep this process imported
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([sys.executable, isa_digests.__file__, str(self.out)], env=env,
                                         stdout=log, stderr=subprocess.STDOUT)

    def digests(self):
        if self.result is None:
            rc = self.proc.wait()
            assert rc == 0, f"{self.what}: tests/isa_digests.py exited with {rc}:\n{self.log.read_text()[-3000:]}"
            self.result = json.loads(self.out.read_text())
        return self.result

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The default process and one per ISA below it, started at once (after generating the node data, so that
    they share it)."""
    isa_digests.node_data()
    folder = tmp_path_factory.mktemp("isa_digests")
    below = ISAS[:ISAS.index(DEFAULT)]
    started = {isa: DigestRun(isa, folder) for isa in [None] + below}
    yield started
    for run in started.values():
        run.stop()


def described(digest):
    """dtype and shape with a short hash, or the error message."""
    kind, _, hexdigest = digest.partition(" sha256:")
    return f"{kind} #{hexdigest[:12]}" if hexdigest else kind


def mismatches(want, got):
    """One line per output that differs, naming the case and the output."""
    lines = []
    for case, outputs in want.items():
        other = got.get(case, [])
        for i, (a, b) in enumerate(zip(outputs, other)):
            if a != b:
                lines.append(f"{case} output {i} ({a[0]}): {described(b[1])}; default: {described(a[1])}")
        if len(outputs) != len(other):
            lines.append(f"{case}: {len(other)} outputs; default: {len(outputs)}")
    return lines


@pytest.mark.parametrize("isa", ISAS)
def test_forced_isa_gives_default_bits(isa, runs):
    if isa not in runs:
        pytest.skip(f"LOCKSTEP_CPU_ISA={isa} runs the default ISA ({DEFAULT}) on this CPU")
    default, forced = runs[None].digests(), runs[isa].digests()
    assert (default["isa"], forced["isa"]) == (DEFAULT, isa), "the processes did not run the ISAs asked for"
    bad = mismatches(default["digests"], forced["digests"])
    assert not bad, (f"LOCKSTEP_CPU_ISA={isa} vs the default ({DEFAULT}): {len(bad)} outputs differ, in "
                     f"{len(default['digests'])} cases:\n" + "\n".join(bad[:MAX_LISTED]))


def test_digest_counts_nans_alike_and_sees_one_ulp():
    a = np.array([1.0, np.nan, -0.0], np.float32)
    other_nan = a.copy()
    other_nan.view(np.uint32)[1] = 0xFFC00001  # a negative NaN with another payload
    assert isa_digests.digest(a) == isa_digests.digest(other_nan)
    for changed in (np.array([1.0, np.nan, 0.0], np.float32), np.nextafter(a, np.float32(2))):
        assert isa_digests.digest(a) != isa_digests.digest(changed)
    assert isa_digests.digest(a) != isa_digests.digest(a.reshape(3, 1))
    assert isa_digests.digest(np.array(["x", "y"], object)) != isa_digests.digest(np.array(["x", "z"], object))


def test_mismatches_name_the_case_and_output():
    want = {"node/a": [["y", "float32[2] sha256:" + "0" * 64]], "cases/b": [["out0", "int64[1] sha256:" + "1" * 64]]}
    got = {"node/a": [["y", "float32[2] sha256:" + "2" * 64]], "cases/b": [["error", "Fail: boom"]]}
    assert mismatches(want, want) == []
    assert mismatches(want, got) == ["node/a output 0 (y): float32[2] #222222222222; default: float32[2] #000000000000",
                                     "cases/b output 0 (out0): Fail: boom; default: int64[1] #111111111111"]
