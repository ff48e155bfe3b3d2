"""Cross-device cases of the loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
(docs/arithmetic.md#loss)."""

import numpy as np

from cases import case, rand, randint

CASES = []

# Shapes (N, C, d...) with targets in [0, C); every reduction; with and without weights; ignore_index both inside
# and outside [0, C); a long reduction (more than 32 lanes and 64 elements).
SHAPES = [(3, 5), (2, 4, 3), (2, 3, 4, 5), (40, 7)]
for i, shape in enumerate(SHAPES):
    n, c = shape[0], shape[1]
    target = randint(n, *shape[2:], high=c, seed=200 + i)
    weight = rand(c, low=0.1, high=2.0, seed=300 + i)
    for reduction in ("none", "sum", "mean"):
        for weighted in (False, True):
            inputs = {"X": rand(*shape, seed=100 + i), "T": target}
            if weighted:
                inputs["W"] = weight
            tag = f"{'w' if weighted else 'nw'}_{reduction}_s{i}"
            CASES.append(case(f"nll_{tag}", "NegativeLogLikelihoodLoss", inputs, attrs={"reduction": reduction},
                              opset=13))
            CASES.append(case(f"sce_{tag}", "SoftmaxCrossEntropyLoss", {**inputs, "X": rand(*shape, seed=400 + i)},
                              attrs={"reduction": reduction}, opset=13, outputs=2, rtol=1e-5, atol=1e-5))

for ii in (-1, 2):
    ignored = randint(4, 3, high=5, seed=9)
    ignored[0, 1] = ignored[2, 2] = ii
    for reduction in ("none", "mean"):
        CASES.append(case(f"nll_ignore{ii}_{reduction}", "NegativeLogLikelihoodLoss",
                          {"X": rand(4, 5, 3, seed=11), "T": ignored, "W": rand(5, low=0.5, seed=12)},
                          attrs={"reduction": reduction, "ignore_index": ii}, opset=22))
        CASES.append(case(f"sce_ignore{ii}_{reduction}", "SoftmaxCrossEntropyLoss",
                          {"X": rand(4, 5, 3, seed=13), "T": ignored.astype(np.int32)},
                          attrs={"reduction": reduction, "ignore_index": ii}, opset=13, atol=1e-5))
# SoftmaxCrossEntropyLoss with only the loss output (log_prob computed into scratch).
CASES.append(case("sce_loss_only", "SoftmaxCrossEntropyLoss", {"X": rand(6, 9, seed=14), "T": randint(6, high=9)},
                  opset=13, atol=1e-5))
# Every target ignored: the mean is 0/0.
CASES.append(case("nll_all_ignored_mean", "NegativeLogLikelihoodLoss",
                  {"X": rand(2, 3, seed=15), "T": np.array([1, 1], np.int64)}, attrs={"ignore_index": 1}, opset=13,
                  reference=lambda X, T: [np.array(np.nan, np.float32)], note="0/0 by the contract"))
