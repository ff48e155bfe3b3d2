"""Cross-device cases for the resize family (Resize 10/11/13/18/19, Upsample 7/9). Nearest is exact; linear and
cubic follow docs/arithmetic.md#resize, which differs from onnxruntime's rounding, hence small tolerances."""

import numpy as np

from cases import case, rand

F32 = np.float32
TOL = dict(rtol=1e-5, atol=1e-5)
AA_TOL = dict(rtol=1e-5, atol=3e-6)  # antialias: measured within 1.4e-6 of the reference on values in [-1, 1]
EXACT = dict(rtol=0, atol=0)


def f32(*v):
    return np.array(v, dtype=F32)


def i64(*v):
    return np.array(v, dtype=np.int64)


EMPTY = np.zeros(0, F32)

CASES = [
    # Opset 10: X, scales; asymmetric coordinates.
    case("resize10_nearest_up", "Resize", {"X": rand(1, 1, 3, 4), "scales": f32(1, 1, 2, 3)}, const=("scales",),
         opset=10, **EXACT),
    case("resize10_linear_up", "Resize", {"X": rand(1, 2, 3, 4), "scales": f32(1, 1, 2, 2)}, const=("scales",),
         attrs={"mode": "linear"}, opset=10, **TOL),
    case("resize10_nearest_down", "Resize", {"X": rand(1, 1, 6, 8), "scales": f32(1, 1, 0.5, 0.5)},
         const=("scales",), opset=10, **EXACT),
    # Upsample 7 (attribute scales) and 9 (input scales).
    case("upsample7_nearest", "Upsample", {"X": rand(1, 1, 2, 3)}, attrs={"scales": [1.0, 1.0, 2.0, 3.0]}, opset=7,
         **EXACT),
    case("upsample9_linear", "Upsample", {"X": rand(1, 1, 2, 3), "scales": f32(1, 1, 2, 2)}, const=("scales",),
         attrs={"mode": "linear"}, opset=9, **TOL),
]

# Nearest, every nearest_mode x several coordinate modes, up and down (opset 13: roi/scales optional).
for nm in ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]:
    for ct in ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]:
        CASES.append(case(f"resize13_nearest_{nm}_{ct}_up", "Resize",
                          {"X": rand(1, 2, 3, 5), "roi": None, "scales": f32(1, 1, 2.5, 1.6)},
                          const=("scales",), attrs={"mode": "nearest", "nearest_mode": nm,
                                                    "coordinate_transformation_mode": ct}, opset=13, **EXACT))
        CASES.append(case(f"resize13_nearest_{nm}_{ct}_sizes_down", "Resize",
                          {"X": rand(1, 1, 9, 7), "roi": None, "scales": None, "sizes": i64(1, 1, 4, 3)},
                          const=("sizes",), attrs={"mode": "nearest", "nearest_mode": nm,
                                                   "coordinate_transformation_mode": ct}, opset=13, **EXACT))

# Linear: 1-D, bilinear, trilinear, every coordinate mode, scales and sizes.
for ct in ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]:
    CASES.append(case(f"resize13_bilinear_{ct}", "Resize", {"X": rand(2, 3, 5, 7), "roi": None,
                                                          "scales": f32(1, 1, 1.5, 2.0)}, const=("scales",),
                      attrs={"mode": "linear", "coordinate_transformation_mode": ct}, opset=13, **TOL))
    CASES.append(case(f"resize13_bilinear_{ct}_down", "Resize", {"X": rand(1, 2, 11, 9), "roi": None, "scales": None,
                                                               "sizes": i64(1, 2, 4, 5)}, const=("sizes",),
                      attrs={"mode": "linear", "coordinate_transformation_mode": ct}, opset=13, **TOL))
CASES += [
    case("resize11_linear_sizes", "Resize", {"X": rand(1, 1, 4, 4), "roi": EMPTY, "scales": EMPTY,
                                             "sizes": i64(1, 1, 7, 3)}, const=("roi", "scales", "sizes"),
         attrs={"mode": "linear"}, opset=11, **TOL),
    case("resize13_trilinear", "Resize", {"X": rand(1, 2, 3, 4, 5), "roi": None, "scales": f32(1, 1, 2, 1.5, 0.6)},
         const=("scales",), attrs={"mode": "linear"}, opset=13, **TOL),
    case("resize13_linear_1d", "Resize", {"X": rand(2, 9), "roi": None, "scales": f32(1, 2.3)}, const=("scales",),
         attrs={"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, opset=13, **TOL),
    case("resize13_linear_nan", "Resize", {"X": np.array([[[[1, np.nan], [np.inf, 4]]]], F32), "roi": None,
                                           "scales": f32(1, 1, 2, 2)}, const=("scales",),
         attrs={"mode": "linear"}, opset=13, reference=None, note="NaN/inf propagation is lockstep's own (contract)"),
    case("resize13_tf_crop_linear", "Resize", {"X": rand(1, 1, 6, 6), "roi": f32(0, 0, 0.2, 0.4, 1, 1, 0.9, 1.2),
                                               "scales": None, "sizes": i64(1, 1, 3, 5)}, const=("roi", "sizes"),
         attrs={"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
                "extrapolation_value": 10.0}, opset=13, **TOL),
    case("resize13_tf_crop_nearest", "Resize", {"X": rand(1, 1, 6, 6), "roi": f32(0, 0, 0.2, -0.3, 1, 1, 0.9, 0.8),
                                                "scales": None, "sizes": i64(1, 1, 4, 5)}, const=("roi", "sizes"),
         attrs={"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize",
                "extrapolation_value": -1.0}, opset=13, **EXACT),
    case("resize13_nearest_int64", "Resize", {"X": np.arange(12, dtype=np.int64).reshape(1, 1, 3, 4), "roi": None,
                                              "scales": f32(1, 1, 2, 2)}, const=("scales",), opset=13, reference=None,
         note="onnxruntime has no int64 Resize kernel"),
    case("resize13_nearest_uint8", "Resize", {"X": np.arange(20, dtype=np.uint8).reshape(1, 1, 4, 5), "roi": None,
                                              "scales": f32(1, 1, 0.6, 1.5)}, const=("scales",), opset=13, **EXACT),
    # Cubic, with and without exclude_outside, and cubic_coeff_a.
    case("resize13_cubic", "Resize", {"X": rand(1, 1, 5, 6), "roi": None, "scales": f32(1, 1, 1.7, 2.0)},
         const=("scales",), attrs={"mode": "cubic"}, opset=13, **TOL),
    case("resize13_cubic_exclude", "Resize", {"X": rand(1, 1, 5, 6), "roi": None, "scales": f32(1, 1, 0.8, 2.0)},
         const=("scales",), attrs={"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}, opset=13, **TOL),
    case("resize13_cubic_align", "Resize", {"X": rand(1, 2, 4, 4), "roi": None, "scales": None,
                                            "sizes": i64(1, 2, 7, 9)}, const=("sizes",),
         attrs={"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, opset=13, **TOL),
    # Opset 18/19: axes, keep_aspect_ratio_policy, half_pixel_symmetric.
    case("resize18_axes_scales", "Resize", {"X": rand(1, 3, 4, 6), "roi": None, "scales": f32(2.0, 0.5)},
         const=("scales",), attrs={"mode": "linear", "axes": [2, 3]}, opset=18, **TOL),
    case("resize18_axes_neg_sizes", "Resize", {"X": rand(2, 5, 7), "roi": None, "scales": None, "sizes": i64(9)},
         const=("sizes",), attrs={"mode": "nearest", "axes": [-1]}, opset=18, **EXACT),
    case("resize18_not_larger", "Resize", {"X": rand(1, 1, 4, 6), "roi": None, "scales": None, "sizes": i64(7, 8)},
         const=("sizes",), attrs={"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"},
         opset=18, **TOL),
    case("resize18_not_smaller", "Resize", {"X": rand(1, 1, 4, 6), "roi": None, "scales": None, "sizes": i64(7, 8)},
         const=("sizes",), attrs={"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"},
         opset=18, **EXACT),
    case("resize19_half_pixel_symmetric", "Resize", {"X": rand(1, 1, 5, 7), "roi": None,
                                                     "scales": f32(1, 1, 1.3, 0.7)}, const=("scales",),
         attrs={"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}, opset=19, **TOL),
    case("resize19_half_pixel_symmetric_nearest", "Resize", {"X": rand(1, 1, 5, 7), "roi": None,
                                                             "scales": f32(1, 1, 2.2, 0.7)}, const=("scales",),
         attrs={"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric"}, opset=19, **EXACT,
         note="scale 0.6 on 7 puts x exactly at a tie in float32 (0.50000024), which onnxruntime rounds the other way"),
    case("resize13_large_bilinear", "Resize", {"X": rand(2, 8, 33, 65), "roi": None, "scales": f32(1, 1, 2, 2)},
         const=("scales",), attrs={"mode": "linear"}, opset=13, **TOL),
]

# Antialias (18+, linear and cubic): the filter stretched by 1/scale on the shrinking axes
# (docs/arithmetic.md#antialiased-taps-resize-18-linear-cubic), checked against onnx's reference evaluator, whose
# float64 sums the float32 taps follow to rounding. Own seeds, so the shared stream is unchanged.


def _onnx_resize(**attrs):
    def run(X, roi=None, scales=None, sizes=None):
        from onnx import helper
        from onnx.reference import ReferenceEvaluator
        given = [("X", X), ("roi", roi), ("scales", scales), ("sizes", sizes)]
        node = helper.make_node("Resize", [n if v is not None else "" for n, v in given], ["Y"], **attrs)
        return [np.asarray(y, dtype=F32) for y in
                ReferenceEvaluator(node).run(None, {n: v for n, v in given if v is not None})]
    return run


def _antialias(name, x, attrs, scales=None, sizes=None, opset=19):
    attrs = {"antialias": 1, **attrs}
    inputs = {"X": x, "roi": None, "scales": scales, "sizes": sizes}
    if sizes is None:
        del inputs["sizes"]
    return case(name, "Resize", inputs, const=("scales",) if sizes is None else ("sizes",), attrs=attrs,
                opset=opset, reference=_onnx_resize(**attrs), **AA_TOL)


CASES += [
    _antialias("resize19_antialias_linear_both_axes", rand(1, 2, 9, 11, seed=330), {"mode": "linear"},
               scales=f32(1, 1, 0.6, 0.45)),
    _antialias("resize19_antialias_cubic_both_axes", rand(1, 2, 10, 9, seed=331), {"mode": "cubic"},
               scales=f32(1, 1, 0.35, 0.8)),
    _antialias("resize19_antialias_cubic_exclude_outside", rand(2, 1, 8, 13, seed=332),
               {"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}, scales=f32(1, 1, 0.5, 0.7)),
    _antialias("resize19_antialias_linear_exclude_outside", rand(1, 1, 12, 7, seed=333),
               {"mode": "linear", "exclude_outside": 1}, scales=f32(1, 1, 0.3, 0.6)),
    _antialias("resize19_antialias_linear_height_only", rand(1, 3, 15, 6, seed=334), {"mode": "linear"},
               scales=f32(1, 1, 0.25, 1)),
    _antialias("resize19_antialias_cubic_width_only", rand(1, 3, 5, 17, seed=335), {"mode": "cubic"},
               scales=f32(1, 1, 1, 0.4)),
    _antialias("resize19_antialias_cubic_up_and_down", rand(1, 2, 6, 14, seed=336), {"mode": "cubic"},
               scales=f32(1, 1, 1.5, 0.45)),
    _antialias("resize18_antialias_linear_sizes_axes", rand(1, 2, 13, 10, seed=337), {"mode": "linear", "axes": [2, 3]},
               sizes=i64(4, 3), opset=18),
    _antialias("resize18_antialias_cubic_sizes_not_larger", rand(1, 1, 16, 12, seed=338),
               {"mode": "cubic", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}, sizes=i64(7, 7), opset=18),
    _antialias("resize19_antialias_linear_asymmetric", rand(1, 1, 11, 9, seed=339),
               {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, scales=f32(1, 1, 0.55, 0.4)),
    _antialias("resize19_antialias_cubic_pytorch_half_pixel", rand(1, 1, 9, 16, seed=340),
               {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel"}, sizes=i64(1, 1, 4, 5)),
    _antialias("resize19_antialias_linear_rank2", rand(3, 40, seed=341), {"mode": "linear", "axes": [1]},
               scales=f32(0.13)),
    _antialias("resize19_antialias_large_linear", rand(2, 3, 41, 53, seed=342), {"mode": "linear"},
               scales=f32(1, 1, 0.23, 0.17)),
    _antialias("resize19_antialias_large_cubic", rand(1, 4, 37, 45, seed=343), {"mode": "cubic"},
               scales=f32(1, 1, 0.31, 0.2)),
]

# GridSample (16, 20, 22): every mode x padding x align_corners on odd 4-D sizes, the grid reaching past [-1, 1] so
# that every padding rule is exercised; 5-D and 3-D from opset 20. Own seeds, so the shared stream is unchanged.
GRID_TOL = dict(rtol=1e-4, atol=1e-5)


def _onnx_grid_sample(**attrs):
    """onnx's reference GridSample: onnxruntime's cubic with border padding clamps differently from the ONNX text."""
    def run(X, grid):
        from onnx import helper
        from onnx.reference import ReferenceEvaluator
        return ReferenceEvaluator(helper.make_node("GridSample", ["X", "grid"], ["Y"], **attrs)).run(
            None, {"X": X, "grid": grid})
    return run


for gs_mode in ["linear", "nearest", "cubic"]:
    for gs_pad in ["zeros", "border", "reflection"]:
        for gs_align in [0, 1]:
            gs_attrs = {"mode": gs_mode, "padding_mode": gs_pad, "align_corners": gs_align}
            CASES.append(case(f"gridsample22_{gs_mode}_{gs_pad}_align{gs_align}", "GridSample",
                              {"X": rand(2, 3, 5, 7, seed=301), "grid": rand(2, 4, 6, 2, low=-1.7, high=1.7, seed=302)},
                              attrs=gs_attrs, opset=22,
                              reference=_onnx_grid_sample(**gs_attrs) if gs_pad == "border" else "onnxruntime",
                              **GRID_TOL))
CASES += [
    case("gridsample16_bilinear", "GridSample", {"X": rand(1, 2, 6, 5, seed=303),
                                                 "grid": rand(1, 3, 7, 2, low=-1.2, high=1.2, seed=304)},
         attrs={"mode": "bilinear"}, opset=16, **GRID_TOL),
    case("gridsample16_bicubic_reflection", "GridSample", {"X": rand(1, 2, 6, 5, seed=305),
                                                           "grid": rand(1, 3, 7, 2, low=-3.5, high=3.5, seed=306)},
         attrs={"mode": "bicubic", "padding_mode": "reflection"}, opset=16, **GRID_TOL),
    case("gridsample20_volumetric_linear_border", "GridSample",
         {"X": rand(1, 2, 3, 4, 5, seed=307), "grid": rand(1, 2, 3, 5, 3, low=-1.3, high=1.3, seed=308)},
         attrs={"mode": "linear", "padding_mode": "border"}, opset=20, **GRID_TOL),
    case("gridsample20_volumetric_nearest_align", "GridSample",
         {"X": rand(2, 1, 3, 4, 5, seed=309), "grid": rand(2, 3, 2, 3, 3, low=-1.1, high=1.1, seed=310)},
         attrs={"mode": "nearest", "align_corners": 1, "padding_mode": "reflection"}, opset=20, **GRID_TOL),
    case("gridsample20_volumetric_cubic_zeros", "GridSample",
         {"X": rand(1, 2, 4, 5, 6, seed=311), "grid": rand(1, 2, 3, 3, 3, low=-1.2, high=1.2, seed=312)},
         attrs={"mode": "cubic"}, opset=20, reference=_onnx_grid_sample(mode="cubic"),
         note="onnxruntime has no 5-D cubic GridSample", **GRID_TOL),
    case("gridsample20_1d_linear_reflection", "GridSample",
         {"X": rand(2, 3, 9, seed=313), "grid": rand(2, 11, 1, low=-2.5, high=2.5, seed=314)},
         attrs={"mode": "linear", "padding_mode": "reflection"}, opset=20,
         reference=_onnx_grid_sample(mode="linear", padding_mode="reflection"),
         note="onnxruntime has no 3-D GridSample", **GRID_TOL),
    case("gridsample22_specials", "GridSample",
         {"X": rand(1, 1, 4, 5, seed=315),
          "grid": np.array([[[[np.nan, 0.1], [np.inf, 0.2], [-np.inf, -0.3], [1e30, 0.5]],
                             [[0.3, -1e30], [0.0, 0.0], [-1.0, 1.0], [1.0, -1.0]]]], F32)},
         attrs={"mode": "linear", "padding_mode": "reflection"}, opset=22, reference=None,
         note="NaN, infinite and far grid values follow docs/arithmetic.md#gridsample"),
    case("gridsample22_specials_zeros_cubic", "GridSample",
         {"X": rand(1, 1, 4, 5, seed=316),
          "grid": np.array([[[[np.nan, 0.1], [np.inf, 0.2], [-np.inf, -0.3], [1e30, 0.5]],
                             [[0.3, -1e30], [0.0, 0.0], [-1.9, 1.9], [1.0, -1.0]]]], F32)},
         attrs={"mode": "cubic"}, opset=22, reference=None,
         note="NaN, infinite and far grid values follow docs/arithmetic.md#gridsample"),
    case("gridsample22_large_linear", "GridSample",
         {"X": rand(2, 5, 33, 47, seed=317), "grid": rand(2, 31, 29, 2, low=-1.1, high=1.1, seed=318)},
         opset=22, **GRID_TOL),
]

# AffineGrid (20): 2-D and 3-D, both align_corners, sizes of one position; numpy reference in float64.


def _affine_grid_reference(align_corners):
    def positions(n):
        if align_corners:
            return np.linspace(-1.0, 1.0, n) if n > 1 else np.array([-1.0])
        return (np.arange(n) * 2.0 + 1.0) / n - 1.0

    def run(theta, size):
        spatial = [int(v) for v in size[2:]]
        axes = list(np.meshgrid(*[positions(n) for n in spatial], indexing="ij"))[::-1]  # x (width) first
        homogeneous = np.stack(axes + [np.ones_like(axes[0])], axis=-1)  # spatial..., r + 1
        grid = np.einsum("nij,...j->n...i", theta.astype(np.float64), homogeneous)
        return [grid.astype(np.float32)]

    return run


for align in (0, 1):
    CASES += [
        case(f"affine_grid_2d_a{align}", "AffineGrid", {"theta": rand(2, 2, 3, seed=500 + align),
                                                       "size": np.array([2, 3, 5, 7], np.int64)},
             attrs={"align_corners": align}, const=("size",), opset=20,
             reference=_affine_grid_reference(align), rtol=1e-5, atol=1e-6),
        case(f"affine_grid_3d_a{align}", "AffineGrid", {"theta": rand(1, 3, 4, seed=510 + align),
                                                       "size": np.array([1, 2, 3, 4, 6], np.int64)},
             attrs={"align_corners": align}, const=("size",), opset=20,
             reference=_affine_grid_reference(align), rtol=1e-5, atol=1e-6),
        case(f"affine_grid_single_row_a{align}", "AffineGrid", {"theta": rand(1, 2, 3, seed=520 + align),
                                                               "size": np.array([1, 1, 1, 4], np.int64)},
             attrs={"align_corners": align}, const=("size",), opset=20,
             reference=_affine_grid_reference(align), rtol=1e-5, atol=1e-6),
    ]
