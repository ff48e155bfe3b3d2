"""Cross-device cases for the gemm family: Gemm and MatMul (docs/arithmetic.md#gemm)."""

import numpy as np

from cases import case, rand, randint


def _with_specials(x):
    x = x.copy()
    flat = x.reshape(-1)
    flat[0], flat[5], flat[-2] = np.nan, np.inf, -np.inf
    return x


CASES = [
    # --- Gemm
    case("gemm_basic", "Gemm", {"A": rand(5, 7), "B": rand(7, 9), "C": rand(5, 9)}),
    case("gemm_transA", "Gemm", {"A": rand(7, 5), "B": rand(7, 9), "C": rand(9)}, attrs={"transA": 1}),
    case("gemm_transB", "Gemm", {"A": rand(5, 7), "B": rand(9, 7), "C": rand(1, 9)}, attrs={"transB": 1},
         const=("B", "C")),
    case("gemm_transAB_alpha_beta", "Gemm", {"A": rand(70, 13), "B": rand(37, 70), "C": rand(13, 1)},
         attrs={"transA": 1, "transB": 1, "alpha": 0.7, "beta": -1.3}),
    case("gemm_scalar_c", "Gemm", {"A": rand(3, 4), "B": rand(4, 5), "C": np.array(0.25, np.float32)}),
    case("gemm_c_1x1", "Gemm", {"A": rand(3, 4), "B": rand(4, 5), "C": rand(1, 1)}, attrs={"beta": 2.0}),
    case("gemm_no_c", "Gemm", {"A": rand(6, 8), "B": rand(8, 3)}, attrs={"alpha": 1.5}, opset=11),
    case("gemm_c_empty_name", "Gemm", {"A": rand(6, 8), "B": rand(8, 3), "C": None}, opset=13),
    case("gemm_beta_zero", "Gemm", {"A": rand(4, 5), "B": rand(5, 6), "C": rand(4, 6)}, attrs={"beta": 0.0}),
    case("gemm_k_large", "Gemm", {"A": rand(9, 1000), "B": rand(1000, 65), "C": rand(65)}, rtol=1e-4, atol=1e-4),
    case("gemm_linear_layer", "Gemm", {"A": rand(2, 768), "B": rand(100, 768), "C": rand(100)},
         attrs={"transB": 1}, const=("B", "C"), rtol=1e-4, atol=1e-4),
    case("gemm_narrow_n", "Gemm", {"A": rand(50, 30), "B": rand(30, 3)}, opset=13),
    case("gemm_nan_inf", "Gemm", {"A": _with_specials(rand(4, 6)), "B": rand(6, 5), "C": rand(5)}),
    case("gemm_k_zero", "Gemm", {"A": rand(3, 0), "B": rand(0, 4), "C": rand(4)}, reference=None,
         note="K = 0: y = alpha*0 + beta*C"),
    case("gemm_opset7", "Gemm", {"A": rand(3, 4), "B": rand(4, 5), "C": rand(5)}, opset=7),
    case("gemm_opset9", "Gemm", {"A": rand(3, 4), "B": rand(4, 5), "C": rand(3, 5)}, attrs={"alpha": 2.0}, opset=9),
    # --- MatMul
    case("matmul_2d", "MatMul", {"A": rand(5, 7), "B": rand(7, 9)}),
    case("matmul_odd_tiles", "MatMul", {"A": rand(67, 130), "B": rand(130, 45)}, rtol=1e-4, atol=1e-5),
    case("matmul_1d_2d", "MatMul", {"A": rand(7), "B": rand(7, 4)}),
    case("matmul_2d_1d", "MatMul", {"A": rand(9, 7), "B": rand(7)}),
    case("matmul_1d_1d", "MatMul", {"A": rand(100), "B": rand(100)}, rtol=1e-4, atol=1e-5),
    case("matmul_1d_3d", "MatMul", {"A": rand(6), "B": rand(2, 6, 3)}),
    case("matmul_3d_1d", "MatMul", {"A": rand(2, 4, 6), "B": rand(6)}),
    case("matmul_batched", "MatMul", {"A": rand(3, 5, 8), "B": rand(3, 8, 4)}),
    case("matmul_broadcast_batch", "MatMul", {"A": rand(2, 1, 5, 7), "B": rand(3, 7, 6)}),
    case("matmul_shared_weight", "MatMul", {"A": rand(2, 9, 70), "B": rand(70, 33)}, const=("B",),
         rtol=1e-4, atol=1e-5),
    case("matmul_attention_like", "MatMul", {"A": rand(1, 4, 17, 16), "B": rand(1, 4, 16, 17)}),
    case("matmul_k_large", "MatMul", {"A": rand(3, 2049), "B": rand(2049, 5)}, rtol=1e-3, atol=1e-4),
    case("matmul_nan_inf", "MatMul", {"A": _with_specials(rand(4, 6)), "B": rand(6, 5)}),
    case("matmul_empty_m", "MatMul", {"A": rand(0, 4), "B": rand(4, 3)}),
    case("matmul_k_zero", "MatMul", {"A": rand(2, 0), "B": rand(0, 3)}),
    case("matmul_int32", "MatMul", {"A": randint(3, 4, low=-50, high=50, dtype=np.int32),
                                    "B": randint(4, 5, low=-50, high=50, dtype=np.int32)}),
    case("matmul_int64_batched", "MatMul", {"A": randint(2, 3, 4, low=-50, high=50),
                                            "B": randint(4, 5, low=-50, high=50)}),
    case("matmul_opset9", "MatMul", {"A": rand(3, 4), "B": rand(4, 2)}, opset=9),
    case("matmul_opset7", "MatMul", {"A": rand(3, 4), "B": rand(4, 2)}, opset=7),
]

# Einsum: transpose, diagonal, sums, inner and outer products, batched matmul, ellipsis with broadcasting, three
# operands, implicit output, double.
EINSUM = [
    ("transpose", "ij->ji", [(3, 4)]),
    ("sum_rows", "ij->i", [(3, 70)]),
    ("sum_all", "ij->", [(5, 40)]),
    ("trace", "ii->", [(6, 6)]),
    ("batch_diagonal", "...ii->...i", [(3, 5, 5)]),
    ("inner", "i,i", [(100,), (100,)]),
    ("outer", "i,j->ij", [(4,), (5,)]),
    ("matmul", "ij,jk->ik", [(7, 130), (130, 5)]),
    ("batch_matmul", "bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("summed_only_in_one", "ij,jk->k", [(3, 4), (4, 5)]),
    ("three", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("implicit", "ba,ca", [(3, 4), (2, 4)]),
    ("attention_like", "bhqd,bhkd->bhqk", [(1, 2, 5, 8), (1, 2, 6, 8)]),
]
for name, eq, shapes in EINSUM:
    inputs = {f"x{i}": rand(*s, seed=80 + i) for i, s in enumerate(shapes)}
    CASES.append(case(f"einsum_{name}", "Einsum", inputs, attrs={"equation": eq}, opset=12, rtol=1e-5, atol=1e-5))
CASES.append(case("einsum_ellipsis_broadcast", "Einsum", {"a": rand(2, 1, 3, 4, seed=90), "b": rand(3, 4, 2, seed=91)},
                  attrs={"equation": "...ij,...jk->...ik"}, opset=12, rtol=1e-5, atol=1e-5,
                  reference=lambda a, b: [np.einsum("...ij,...jk->...ik", a, b)],
                  note="onnxruntime's shape inference refuses broadcast ellipsis dims"))
CASES.append(case("einsum_double", "Einsum", {"a": rand(3, 4, dtype=np.float64), "b": rand(4, 2, dtype=np.float64)},
                  attrs={"equation": "ij,jk->ik"}, opset=12,
                  reference=lambda a, b: [np.einsum("ij,jk->ik", a, b)], rtol=1e-12, atol=1e-12))

# Det (11): batches of matrices, pivoting (a zero leading entry), a singular matrix, 1 x 1; onnxruntime as reference.
_PIVOTING = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, -1.0, 2.0]], np.float32)
_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
CASES += [
    case("det_batch_3x3", "Det", {"X": rand(2, 4, 3, 3, seed=800)}, opset=11, rtol=1e-4, atol=1e-6),
    case("det_6x6", "Det", {"X": rand(6, 6, seed=801)}, opset=22, rtol=1e-4, atol=1e-6),
    case("det_pivoting", "Det", {"X": _PIVOTING}, opset=11, rtol=1e-6, atol=1e-6),
    case("det_singular", "Det", {"X": np.stack([_SINGULAR, _SINGULAR * 2])}, opset=11, rtol=0, atol=0),
    case("det_1x1", "Det", {"X": rand(5, 1, 1, seed=802)}, opset=11, rtol=0, atol=0),
]
