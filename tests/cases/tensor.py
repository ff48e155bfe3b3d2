"""Cross-device cases for the tensor family (shape and data movement). Everything here is exact, so the reference
comparison uses rtol=atol=0 except float Range (lockstep computes start + i*delta; onnxruntime accumulates)."""

import numpy as np

from cases import case, rand, randint

I64 = np.int64


def i64(*v):
    return np.array(v, dtype=I64)


def nan_inf(*shape):
    x = rand(*shape, seed=7)
    flat = x.reshape(-1)
    flat[::5] = np.nan
    flat[1::7] = np.inf
    flat[2::11] = -np.inf
    flat[3::13] = -0.0
    return x


EXACT = dict(rtol=0, atol=0)

CASES = [
    # Reshape: 0 copies, -1 infers, allowzero (14+), empty tensors.
    case("reshape_basic", "Reshape", {"X": rand(2, 3, 4), "shape": i64(4, 6)}, const=("shape",), **EXACT),
    case("reshape_zero_minus1", "Reshape", {"X": rand(2, 3, 4), "shape": i64(0, -1)}, const=("shape",), **EXACT),
    case("reshape_allowzero", "Reshape", {"X": rand(0, 3), "shape": i64(3, 0)}, attrs={"allowzero": 1},
         const=("shape",), opset=14, **EXACT),
    case("reshape_scalar", "Reshape", {"X": rand(1, 1), "shape": np.zeros(0, I64)}, const=("shape",), **EXACT),
    case("reshape_int64_opset7", "Reshape", {"X": randint(6), "shape": i64(3, -1)}, const=("shape",), opset=7,
         **EXACT),
    # Flatten: default axis 1, axis 0, negative axis (11+), axis = rank.
    case("flatten_default", "Flatten", {"X": rand(2, 3, 4, 5)}, **EXACT),
    case("flatten_axis0", "Flatten", {"X": rand(2, 3, 4)}, attrs={"axis": 0}, **EXACT),
    case("flatten_neg", "Flatten", {"X": rand(2, 3, 4)}, attrs={"axis": -1}, opset=11, **EXACT),
    case("flatten_axis_rank", "Flatten", {"X": rand(2, 3, 4)}, attrs={"axis": 3}, **EXACT),
    # Transpose: default reverse, explicit perm, rank 6, bool/int8/int64/double (by element size), empty.
    case("transpose_default", "Transpose", {"X": rand(2, 3, 4)}, **EXACT),
    case("transpose_perm", "Transpose", {"X": rand(2, 3, 4, 5)}, attrs={"perm": [0, 2, 3, 1]}, **EXACT),
    case("transpose_rank6", "Transpose", {"X": rand(2, 3, 1, 2, 3, 2)}, attrs={"perm": [5, 3, 1, 0, 2, 4]}, **EXACT),
    case("transpose_bool", "Transpose", {"X": rand(3, 5) > 0}, **EXACT),
    case("transpose_int8", "Transpose", {"X": randint(3, 4, 5, dtype=np.int8)}, attrs={"perm": [2, 0, 1]}, **EXACT),
    case("transpose_int64", "Transpose", {"X": randint(4, 7)}, **EXACT),
    case("transpose_double", "Transpose", {"X": rand(4, 3, dtype=np.float64)}, **EXACT),
    case("transpose_empty", "Transpose", {"X": rand(0, 3)}, **EXACT),
    case("transpose_nan", "Transpose", {"X": nan_inf(7, 9)}, **EXACT),
    # Larger than the CPU's 16 x 16 transposition tiles, with partial tiles on every edge.
    case("transpose_tiles_reversed", "Transpose", {"X": rand(3, 37, 21)}, **EXACT),
    case("transpose_tiles_channels_first", "Transpose", {"X": rand(2, 19, 5, 33)}, attrs={"perm": [0, 3, 1, 2]},
         **EXACT),
    # Squeeze / Unsqueeze: attribute axes before 13, input after; no axes; negative axes.
    case("squeeze_all", "Squeeze", {"X": rand(1, 3, 1, 4)}, **EXACT),
    case("squeeze_attr", "Squeeze", {"X": rand(1, 3, 1, 4)}, attrs={"axes": [-2]}, opset=11, **EXACT),
    case("squeeze_input", "Squeeze", {"X": rand(1, 3, 1, 4), "axes": i64(0)}, const=("axes",), opset=13, **EXACT),
    case("unsqueeze_attr", "Unsqueeze", {"X": rand(3, 4)}, attrs={"axes": [0, 3]}, opset=11, **EXACT),
    case("unsqueeze_input", "Unsqueeze", {"X": rand(3, 4), "axes": i64(-1, 1)}, const=("axes",), opset=13, **EXACT),
    case("unsqueeze_scalar", "Unsqueeze", {"X": np.float32(2.5), "axes": i64(0)}, const=("axes",), opset=13,
         **EXACT),
    case("identity", "Identity", {"X": nan_inf(3, 3)}, **EXACT),
    # Concat: negative axis, empty input, int types, 3 inputs.
    case("concat_axis1", "Concat", {"A": rand(2, 3), "B": rand(2, 5), "C": rand(2, 1)}, attrs={"axis": 1}, **EXACT),
    case("concat_neg", "Concat", {"A": rand(2, 3, 4), "B": rand(2, 3, 4)}, attrs={"axis": -3}, opset=11, **EXACT),
    case("concat_empty", "Concat", {"A": rand(2, 0), "B": rand(2, 3)}, attrs={"axis": 1}, **EXACT),
    case("concat_int64_1d", "Concat", {"A": i64(1, 2), "B": i64(3)}, attrs={"axis": 0}, **EXACT),
    # Split: equal, split attribute (<13), split input (13+), num_outputs uneven (18+), negative axis.
    case("split_equal", "Split", {"X": rand(6, 4)}, outputs=3, **EXACT),
    case("split_attr", "Split", {"X": rand(2, 7)}, attrs={"axis": 1, "split": [2, 5]}, outputs=2, opset=11, **EXACT),
    case("split_input", "Split", {"X": rand(2, 7), "split": i64(3, 0, 4)}, attrs={"axis": -1}, const=("split",),
         outputs=3, opset=13, **EXACT),
    case("split_num_outputs", "Split", {"X": rand(7, 2)}, attrs={"num_outputs": 3}, outputs=3, opset=18, **EXACT),
    # Slice: attribute form (<10), inputs, negative steps, clamping, INT_MAX ends, omitted axes.
    case("slice_attr", "Slice", {"X": rand(4, 5)}, attrs={"starts": [1, 0], "ends": [3, 100], "axes": [0, 1]},
         opset=9, **EXACT),
    case("slice_basic", "Slice", {"X": rand(5, 6), "starts": i64(1, 2), "ends": i64(4, 6)},
         const=("starts", "ends"), **EXACT),
    case("slice_steps", "Slice", {"X": rand(10, 8), "starts": i64(0, 1), "ends": i64(10, 8), "axes": i64(0, 1),
                                  "steps": i64(3, 2)}, const=("starts", "ends", "axes", "steps"), **EXACT),
    case("slice_neg_step", "Slice", {"X": rand(10), "starts": i64(-1), "ends": i64(-2**63), "axes": i64(0),
                                     "steps": i64(-3)}, const=("starts", "ends", "axes", "steps"), **EXACT),
    case("slice_int_max", "Slice", {"X": rand(3, 7), "starts": i64(2), "ends": i64(2**63 - 1), "axes": i64(-1)},
         const=("starts", "ends", "axes"), **EXACT),
    case("slice_empty", "Slice", {"X": rand(3, 7), "starts": i64(5), "ends": i64(2), "axes": i64(1)},
         const=("starts", "ends", "axes"), **EXACT),
    case("slice_reverse_all", "Slice", {"X": rand(4, 3), "starts": i64(100, -1), "ends": i64(-100, -100),
                                        "axes": i64(0, 1), "steps": i64(-1, -1)},
         const=("starts", "ends", "axes", "steps"), **EXACT),
    case("slice_int32_idx", "Slice", {"X": randint(6, 4), "starts": np.array([1], np.int32),
                                      "ends": np.array([5], np.int32)}, const=("starts", "ends"), **EXACT),
    # Gather: axis, negative indices, int32 indices, scalar index, 2-D indices.
    case("gather_axis0", "Gather", {"X": rand(5, 4), "I": i64(0, 4, -1, 2)}, const=("I",), **EXACT),
    case("gather_axis1_2d", "Gather", {"X": rand(3, 6, 2), "I": randint(2, 3, low=-6, high=6)}, attrs={"axis": 1},
         **EXACT),
    case("gather_int32", "Gather", {"X": randint(7, 3), "I": np.array([6, 0, -7], np.int32)}, attrs={"axis": 0},
         **EXACT),
    case("gather_scalar_idx", "Gather", {"X": rand(4, 5), "I": np.array(-2, I64)}, attrs={"axis": -1}, **EXACT),
    case("gather_embedding", "Gather", {"X": rand(100, 64), "I": randint(3, 17, high=100)}, **EXACT),
    # GatherElements (11+).
    case("gather_elements_axis1", "GatherElements", {"X": rand(3, 4), "I": randint(3, 2, low=-4, high=4)},
         attrs={"axis": 1}, opset=11, **EXACT),
    case("gather_elements_axis0", "GatherElements", {"X": rand(4, 3, 2), "I": randint(2, 3, 2, high=4)},
         opset=13, **EXACT),
    # Expand (8+): broadcasting both ways, shape longer than input.
    case("expand_basic", "Expand", {"X": rand(3, 1), "shape": i64(2, 3, 4)}, const=("shape",), opset=8, **EXACT),
    case("expand_ones", "Expand", {"X": rand(2, 3), "shape": i64(1, 1)}, const=("shape",), **EXACT),
    case("expand_scalar", "Expand", {"X": np.float32(1.5), "shape": i64(3, 2)}, const=("shape",), **EXACT),
    # Tile.
    case("tile_basic", "Tile", {"X": rand(2, 3), "R": i64(2, 3)}, const=("R",), **EXACT),
    case("tile_zero", "Tile", {"X": rand(2, 3), "R": i64(0, 1)}, const=("R",), **EXACT),
    case("tile_int64_3d", "Tile", {"X": randint(2, 1, 3), "R": i64(1, 4, 2)}, const=("R",), **EXACT),
    # Pad: attribute form (<11), inputs (11+), modes, constant_value, negative pads, axes (18+), wrap (19+).
    case("pad_attr", "Pad", {"X": rand(2, 3)}, attrs={"pads": [1, 0, 0, 2], "value": 1.5}, opset=10, **EXACT),
    case("pad_attr_reflect", "Pad", {"X": rand(3, 4)}, attrs={"pads": [2, 1, 1, 3], "mode": "reflect"}, opset=10,
         **EXACT),
    case("pad_constant", "Pad", {"X": rand(2, 3, 4), "pads": i64(0, 1, 2, 0, 2, 1), "v": np.array(-3.0, np.float32)},
         const=("pads", "v"), opset=11, **EXACT),
    case("pad_constant_default", "Pad", {"X": rand(2, 3), "pads": i64(1, 1, 1, 1)}, const=("pads",), opset=13,
         **EXACT),
    case("pad_edge", "Pad", {"X": rand(3, 4), "pads": i64(2, 3, 1, 4)}, attrs={"mode": "edge"}, const=("pads",),
         opset=13, **EXACT),
    case("pad_reflect", "Pad", {"X": rand(1, 3, 4, 5), "pads": i64(0, 0, 2, 3, 0, 0, 3, 4)},
         attrs={"mode": "reflect"}, const=("pads",), opset=13, **EXACT),
    case("pad_negative", "Pad", {"X": rand(4, 5), "pads": i64(-1, 2, 0, -2)}, const=("pads",), opset=13, **EXACT),
    case("pad_int64", "Pad", {"X": randint(3, 3), "pads": i64(1, 1, 1, 1), "v": np.array(7, I64)},
         const=("pads", "v"), opset=13, **EXACT),
    case("pad_axes", "Pad", {"X": rand(2, 3, 4), "pads": i64(1, 2, 3, 4), "v": None, "axes": i64(-1, 0)},
         const=("pads", "axes"), opset=18, **EXACT),
    case("pad_wrap", "Pad", {"X": rand(3, 4), "pads": i64(2, 3, 1, 5)}, attrs={"mode": "wrap"}, const=("pads",),
         opset=19, **EXACT),
    # Shape (start/end 15+), Size.
    case("shape_basic", "Shape", {"X": rand(2, 3, 4)}, **EXACT),
    case("shape_start_end", "Shape", {"X": rand(2, 3, 4, 5)}, attrs={"start": 1, "end": -1}, opset=15, **EXACT),
    case("shape_clamped", "Shape", {"X": rand(2, 3)}, attrs={"start": -10, "end": 10}, opset=15, **EXACT),
    case("shape_scalar", "Shape", {"X": np.float32(1.0)}, **EXACT),
    case("size_basic", "Size", {"X": rand(2, 3, 4)}, **EXACT),
    case("size_empty", "Size", {"X": rand(0, 3)}, **EXACT),
    # ConstantOfShape (9+): default float 0, int64 value, empty shape -> scalar, zero dim.
    case("constant_of_shape_default", "ConstantOfShape", {"S": i64(2, 3)}, const=("S",), opset=9, **EXACT),
    case("constant_of_shape_int", "ConstantOfShape", {"S": i64(4)}, const=("S",),
         attrs={"value": np.array([7], I64)}, **EXACT),
    case("constant_of_shape_scalar", "ConstantOfShape", {"S": np.zeros(0, I64)}, const=("S",),
         attrs={"value": np.array([2.5], np.float32)}, **EXACT),
    case("constant_of_shape_zero", "ConstantOfShape", {"S": i64(0, 3)}, const=("S",), **EXACT),
    # Constant: value tensor, value_float(s), value_int(s) (12+).
    case("constant_tensor", "Constant", {}, attrs={"value": rand(2, 3)}, **EXACT),
    case("constant_value_float", "Constant", {}, attrs={"value_float": 0.25}, opset=12, **EXACT),
    case("constant_value_floats", "Constant", {}, attrs={"value_floats": [1.0, -2.0]}, opset=12, **EXACT),
    case("constant_value_int", "Constant", {}, attrs={"value_int": 5}, opset=13, **EXACT),
    case("constant_value_ints", "Constant", {}, attrs={"value_ints": [1, 2, 3]}, opset=13, **EXACT),
    # Range (11+): ints (exact), float (start + i*delta; onnxruntime accumulates, so a tolerance).
    case("range_int64", "Range", {"s": np.array(3, I64), "l": np.array(20, I64), "d": np.array(4, I64)},
         const=("s", "l", "d"), opset=11, **EXACT),
    case("range_int32_neg", "Range", {"s": np.array(10, np.int32), "l": np.array(-3, np.int32),
                                      "d": np.array(-3, np.int32)}, const=("s", "l", "d"), **EXACT),
    case("range_empty", "Range", {"s": np.array(5, I64), "l": np.array(1, I64), "d": np.array(1, I64)},
         const=("s", "l", "d"), **EXACT),
    case("range_float", "Range", {"s": np.array(0.1, np.float32), "l": np.array(7.3, np.float32),
                                  "d": np.array(0.3, np.float32)}, const=("s", "l", "d"), rtol=1e-5, atol=1e-5,
         note="lockstep computes start + float(i)*delta; onnxruntime accumulates value += delta"),
    case("range_float_feed", "Range", {"s": np.array(-1.0, np.float32), "l": np.array(1.0, np.float32),
                                       "d": np.array(0.25, np.float32)}, **EXACT),
]


# Window generators (17): periodic and symmetric, against the float64 formulas.
def _window(op, size, periodic):
    n = np.arange(size, dtype=np.float64)
    x = 2 * np.pi * n / (size if periodic else size - 1)
    if op == "BlackmanWindow":
        return [(0.42 - 0.5 * np.cos(x) + 0.08 * np.cos(2 * x)).astype(np.float32)]
    a0, a1 = (0.5, 0.5) if op == "HannWindow" else (25 / 46, 21 / 46)
    return [(a0 - a1 * np.cos(x)).astype(np.float32)]


for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
    for periodic in (1, 0):
        CASES.append(case(f"{op.lower()}_p{periodic}", op, {"size": np.array(37, np.int64)},
                          attrs={"periodic": periodic}, opset=17, const=("size",), rtol=1e-5, atol=2e-6,
                          reference=lambda size, op=op, periodic=periodic: _window(op, int(size), periodic)))

CASES += [
    case("bitcast_float_to_int32", "BitCast",
         {"X": np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 1e-40], np.float32)}, attrs={"to": 6}, opset=26,
         reference=lambda X: [X.view(np.int32)], note="onnxruntime 1.30 has no BitCast", **EXACT),
    case("bitcast_int64_to_double", "BitCast", {"X": np.arange(-6, 6, dtype=np.int64).reshape(3, 4) * 977},
         attrs={"to": 11}, opset=26, reference=lambda X: [X.view(np.float64)], **EXACT),
    case("bitcast_uint16_to_float16", "BitCast", {"X": np.arange(0, 65535, 4099, dtype=np.uint16)},
         attrs={"to": 10}, opset=26, reference=lambda X: [X.view(np.float16)], **EXACT),
]
