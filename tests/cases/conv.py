"""Cross-device cases for the conv family: Conv, ConvTranspose, Col2Im, CausalConvWithState and DeformConv
(docs/arithmetic.md#conv)."""

import numpy as np

from cases import case, rand


def _with_specials(x):
    x = x.copy()
    flat = x.reshape(-1)
    flat[1], flat[7], flat[-3] = np.nan, np.inf, -np.inf
    return x


def _seed_conv():
    x = np.ones((1, 256, 14, 14), np.float32)
    w = np.full((256, 256, 3, 3), 0.1, np.float32)
    b = np.full((256,), 0.05, np.float32)
    return {"X": x, "W": w, "B": b}


CASES = [
    # --- Conv
    case("conv_2d_pads_bias", "Conv", {"X": rand(1, 3, 9, 11), "W": rand(5, 3, 3, 3), "B": rand(5)},
         attrs={"pads": [1, 1, 1, 1]}, const=("W", "B")),
    case("conv_2d_no_bias", "Conv", {"X": rand(2, 4, 8, 8), "W": rand(6, 4, 3, 3)}),
    case("conv_2d_strides_dilations", "Conv", {"X": rand(1, 3, 13, 12), "W": rand(4, 3, 3, 2), "B": rand(4)},
         attrs={"strides": [2, 3], "dilations": [2, 1], "pads": [1, 0, 2, 1]}),
    case("conv_2d_kernel_shape_attr", "Conv", {"X": rand(1, 2, 7, 7), "W": rand(3, 2, 2, 3)},
         attrs={"kernel_shape": [2, 3]}),
    case("conv_group2", "Conv", {"X": rand(2, 6, 9, 7), "W": rand(4, 3, 3, 3), "B": rand(4)},
         attrs={"group": 2, "pads": [1, 1, 1, 1]}),
    case("conv_depthwise", "Conv", {"X": rand(1, 16, 10, 10), "W": rand(16, 1, 3, 3), "B": rand(16)},
         attrs={"group": 16, "pads": [1, 1, 1, 1], "strides": [2, 2]}, const=("W", "B")),
    case("conv_depthwise_multiplier", "Conv", {"X": rand(1, 4, 6, 6), "W": rand(8, 1, 3, 3)}, attrs={"group": 4}),
    case("conv_pointwise", "Conv", {"X": rand(3, 17, 5, 6), "W": rand(9, 17, 1, 1), "B": rand(9)}),
    case("conv_pointwise_strided", "Conv", {"X": rand(1, 8, 7, 7), "W": rand(5, 8, 1, 1)}, attrs={"strides": [2, 2]}),
    case("conv_k_over_64", "Conv", {"X": rand(1, 70, 6, 6), "W": rand(3, 70, 3, 3), "B": rand(3)},
         attrs={"pads": [1, 1, 1, 1]}, rtol=1e-4, atol=1e-5),
    case("conv_k_large_odd", "Conv", {"X": rand(2, 129, 5, 5), "W": rand(33, 129, 3, 3), "B": rand(33)},
         attrs={"pads": [0, 1, 1, 0]}, rtol=1e-4, atol=1e-4),
    case("conv_1d", "Conv", {"X": rand(2, 3, 23), "W": rand(4, 3, 5), "B": rand(4)},
         attrs={"pads": [2, 3], "dilations": [2], "strides": [2]}),
    case("conv_3d", "Conv", {"X": rand(1, 2, 5, 6, 7), "W": rand(3, 2, 3, 2, 3), "B": rand(3)},
         attrs={"pads": [1, 0, 1, 1, 1, 0]}),
    case("conv_auto_same_upper", "Conv", {"X": rand(1, 3, 8, 9), "W": rand(4, 3, 3, 4)},
         attrs={"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    case("conv_auto_same_lower", "Conv", {"X": rand(1, 3, 8, 9), "W": rand(4, 3, 3, 4)},
         attrs={"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    case("conv_auto_valid", "Conv", {"X": rand(1, 3, 8, 9), "W": rand(4, 3, 3, 3)},
         attrs={"auto_pad": "VALID", "strides": [2, 1]}),
    case("conv_opset7", "Conv", {"X": rand(1, 2, 6, 6), "W": rand(2, 2, 3, 3)}, attrs={"pads": [1, 1, 1, 1]},
         opset=7),
    case("conv_opset11_same_lower", "Conv", {"X": rand(1, 2, 7, 6), "W": rand(2, 2, 2, 2)},
         attrs={"auto_pad": "SAME_LOWER"}, opset=11),
    case("conv_opset22", "Conv", {"X": rand(1, 2, 6, 6), "W": rand(2, 2, 3, 3), "B": rand(2)}, opset=22),
    case("conv_batch5", "Conv", {"X": rand(5, 3, 7, 7), "W": rand(4, 3, 3, 3), "B": rand(4)},
         attrs={"pads": [1, 1, 1, 1]}),
    case("conv_nan_inf_input", "Conv", {"X": _with_specials(rand(1, 2, 6, 6)), "W": rand(3, 2, 3, 3)},
         attrs={"pads": [1, 1, 1, 1]}),
    case("conv_inf_weight_padding_tap", "Conv", {"X": rand(1, 1, 4, 4), "W": _with_specials(rand(1, 1, 3, 3))},
         attrs={"pads": [1, 1, 1, 1]}, reference=None,
         note="contract: padding taps are fma(+0, w) terms, so an inf weight gives NaN at the border; onnxruntime "
              "skips padding taps"),
    case("conv_empty_batch", "Conv", {"X": rand(0, 3, 5, 5), "W": rand(4, 3, 3, 3)}, reference=None,
         note="empty output; onnxruntime is not needed to know its shape"),
    case("conv_seed_issue_21220", "Conv", _seed_conv(), attrs={"pads": [1, 1, 1, 1]}, const=("W", "B"),
         rtol=1e-4, atol=1e-3, note="DESIGN.md 1: the seed Conv"),
    # Depthwise shapes served by the CPU depthwise kernel and the CUDA one-thread-per-output kernel (own seeds, so
    # that the cases above keep their data).
    case("conv_depthwise_odd_width_5x5_s2", "Conv",
         {"X": rand(2, 7, 13, 37, seed=400), "W": rand(7, 1, 5, 5, seed=401), "B": rand(7, seed=402)},
         attrs={"group": 7, "strides": [2, 2], "pads": [2, 1, 0, 2]}, const=("W", "B")),
    case("conv_depthwise_dilated_s3", "Conv", {"X": rand(1, 5, 17, 23, seed=403), "W": rand(5, 1, 3, 3, seed=404)},
         attrs={"group": 5, "strides": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    case("conv_depthwise_9x9_two_chunks", "Conv",
         {"X": rand(1, 3, 12, 21, seed=405), "W": rand(3, 1, 9, 9, seed=406), "B": rand(3, seed=407)},
         attrs={"group": 3, "pads": [4, 4, 4, 4]}, rtol=1e-4, atol=1e-5, note="81 taps: two chunks of the chain"),
    case("conv_depthwise_multiplier3_1d", "Conv", {"X": rand(2, 4, 29, seed=408), "W": rand(12, 1, 7, seed=409)},
         attrs={"group": 4, "pads": [3, 2], "strides": [2]}),
    case("conv_depthwise_specials", "Conv",
         {"X": _with_specials(rand(1, 6, 9, 19, seed=410)), "W": _with_specials(rand(6, 1, 3, 3, seed=411)),
          "B": rand(6, seed=412)},
         attrs={"group": 6, "pads": [1, 1, 1, 1]}, reference=None,
         note="NaN/inf inputs and weights; an inf weight on a padding tap gives NaN (onnxruntime skips those taps)"),
    # --- ConvTranspose
    case("convtranspose_2d_stride2", "ConvTranspose", {"X": rand(1, 3, 4, 5), "W": rand(3, 2, 3, 3), "B": rand(2)},
         attrs={"strides": [2, 2]}),
    case("convtranspose_pads_output_padding", "ConvTranspose",
         {"X": rand(2, 4, 3, 3), "W": rand(4, 3, 3, 2)},
         attrs={"strides": [3, 2], "pads": [1, 0, 2, 1], "output_padding": [1, 0]}),
    case("convtranspose_group_dilation", "ConvTranspose", {"X": rand(1, 4, 5, 4), "W": rand(4, 2, 3, 3), "B": rand(4)},
         attrs={"group": 2, "dilations": [2, 1], "strides": [2, 2]}),
    case("convtranspose_output_shape", "ConvTranspose", {"X": rand(1, 1, 3, 3), "W": rand(1, 2, 3, 3)},
         attrs={"strides": [2, 2], "output_shape": [6, 6]}),
    case("convtranspose_output_shape_full_rank", "ConvTranspose", {"X": rand(1, 1, 3, 3), "W": rand(1, 2, 3, 3)},
         attrs={"strides": [2, 2], "output_shape": [1, 2, 6, 7]}, reference=None,
         note="output_shape with N and C (older exporters); onnxruntime's shape inference rejects it"),
    case("convtranspose_same_upper", "ConvTranspose", {"X": rand(1, 2, 3, 4), "W": rand(2, 2, 3, 3)},
         attrs={"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    case("convtranspose_same_lower", "ConvTranspose", {"X": rand(1, 2, 3, 4), "W": rand(2, 2, 3, 3)},
         attrs={"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    case("convtranspose_1d", "ConvTranspose", {"X": rand(1, 2, 7), "W": rand(2, 3, 4), "B": rand(3)},
         attrs={"strides": [2], "dilations": [2]}),
    case("convtranspose_3d", "ConvTranspose", {"X": rand(1, 2, 3, 3, 3), "W": rand(2, 2, 2, 2, 2)},
         attrs={"strides": [2, 2, 2]}),
    case("convtranspose_k_over_64", "ConvTranspose", {"X": rand(1, 80, 3, 3), "W": rand(80, 2, 3, 3), "B": rand(2)},
         attrs={"pads": [1, 1, 1, 1]}, rtol=1e-4, atol=1e-5),
    case("convtranspose_kernel_shape_attr", "ConvTranspose", {"X": rand(1, 2, 4, 4), "W": rand(2, 1, 2, 2)},
         attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, const=("W",)),
    case("convtranspose_opset7", "ConvTranspose", {"X": rand(1, 2, 4, 4), "W": rand(2, 1, 3, 3)}, opset=7),
    case("convtranspose_opset22", "ConvTranspose", {"X": rand(1, 2, 4, 4), "W": rand(2, 1, 3, 3)}, opset=22),
]

# --- Col2Im (18): odd sizes, strides, pads, dilations, 1-D and 3-D; the overlaps sum many patches. Own seeds.


def _col2im(name, seed, image, block, n=1, c=2, **attrs):
    nd = len(image)
    dil = attrs.get("dilations", [1] * nd)
    st = attrs.get("strides", [1] * nd)
    pads = attrs.get("pads", [0] * 2 * nd)
    blocks = [(image[d] + pads[d] + pads[d + nd] - (dil[d] * (block[d] - 1) + 1)) // st[d] + 1 for d in range(nd)]
    x = rand(n, c * int(np.prod(block)), int(np.prod(blocks)), seed=seed)
    return case(name, "Col2Im", {"input": x, "image_shape": np.array(image, np.int64),
                                 "block_shape": np.array(block, np.int64)},
                attrs=attrs, const=("image_shape", "block_shape"), opset=18)


CASES += [
    _col2im("col2im_2d_overlap", 401, [5, 7], [3, 2], n=2, c=3),
    _col2im("col2im_2d_strides_pads", 402, [9, 8], [3, 3], strides=[2, 3], pads=[1, 2, 0, 1]),
    _col2im("col2im_2d_dilations", 403, [11, 7], [2, 3], c=1, dilations=[3, 2], pads=[1, 0, 2, 1]),
    _col2im("col2im_1d", 404, [13], [4], n=2, strides=[2], pads=[1, 2]),
    _col2im("col2im_3d", 405, [3, 5, 4], [2, 3, 2], c=2, strides=[1, 2, 1], pads=[0, 1, 1, 1, 0, 0]),
    _col2im("col2im_strides_past_block", 406, [10, 9], [2, 2], strides=[3, 4], pads=[0, 1, 1, 0]),
]

# --- CausalConvWithState (27): with and without bias, past state and SiLU; a kernel past one 64-tap chunk; k = 1.


def _causal_conv_reference(silu):
    def run(input, weight, bias=None, past_state=None):
        b, c, length = input.shape
        k = weight.shape[2]
        state = past_state if past_state is not None else np.zeros((b, c, k - 1), np.float32)
        seq = np.concatenate([state, input], axis=2).astype(np.float64)
        y = sum(seq[:, :, j:j + length] * weight[None, :, 0, j, None] for j in range(k))
        if bias is not None:
            y = y + bias[None, :, None]
        if silu:
            y = y / (1 + np.exp(-y))
        return [y.astype(np.float32), seq[:, :, length:].astype(np.float32)]

    return run


def _causal_conv(name, seed, b, c, length, k, bias=True, state=True, activation="none"):
    inputs = {"input": rand(b, c, length, seed=seed), "weight": rand(c, 1, k, seed=seed + 1),
              "bias": rand(c, seed=seed + 2) if bias else None,
              "past_state": rand(b, c, k - 1, seed=seed + 3) if state else None}
    if not state:
        del inputs["past_state"]
    return case(name, "CausalConvWithState", inputs, attrs={"activation": activation}, opset=27, outputs=2,
                reference=_causal_conv_reference(activation != "none"), rtol=1e-5, atol=1e-6)


CASES += [
    _causal_conv("causal_conv_state_bias", 420, 2, 3, 7, 4),
    _causal_conv("causal_conv_silu", 421, 1, 5, 9, 3, activation="silu"),
    _causal_conv("causal_conv_no_state_no_bias", 422, 2, 2, 6, 3, bias=False, state=False, activation="swish"),
    _causal_conv("causal_conv_long_kernel", 423, 1, 2, 5, 70),
    _causal_conv("causal_conv_kernel_1", 424, 2, 3, 4, 1),
]

# --- DeformConv (19, 22): groups, offset groups, mask and bias, strides, pads, dilations; offsets that reach past the
# image and offsets that land exactly on pixel rows and columns (integers and halves); a reduction past one 64-long
# chunk. Reference: onnx's ReferenceEvaluator (GridSample in float64 per channel, then summed), at the default
# float32 tolerance (rtol 1e-5, atol 1e-6). Own seeds, so the shared stream is unchanged.


def _onnx_deform_conv(**attrs):
    def run(X, W, offset, B=None, mask=None):
        from onnx import helper
        from onnx.reference import ReferenceEvaluator
        names = ["X", "W", "offset", "B" if B is not None else "", "mask" if mask is not None else ""]
        while names[-1] == "":
            names.pop()
        feeds = {k: v for k, v in {"X": X, "W": W, "offset": offset, "B": B, "mask": mask}.items() if v is not None}
        return ReferenceEvaluator(helper.make_node("DeformConv", names, ["Y"], **attrs)).run(None, feeds)
    return run


def _deform_conv(name, seed, n, c, hw, m, k, group=1, offset_group=1, bias=True, mask=True, spread=1.5,
                 offsets=None, opset=22, **attrs):
    kh, kw = k
    st = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    out = [(hw[i] + pads[i] + pads[i + 2] - ((k[i] - 1) * dil[i] + 1)) // st[i] + 1 for i in range(2)]
    off_shape = (n, offset_group * kh * kw * 2, *out)
    if offsets is None:
        offsets = rand(*off_shape, low=-spread, high=spread, seed=seed + 2)
    inputs = {"X": rand(n, c, *hw, seed=seed), "W": rand(m, c // group, kh, kw, seed=seed + 1),
              "offset": offsets.reshape(off_shape).astype(np.float32),
              "B": rand(m, seed=seed + 3) if bias else None,
              "mask": rand(n, offset_group * kh * kw, *out, low=0.0, high=1.0, seed=seed + 4) if mask else None}
    attrs = dict(attrs, group=group, offset_group=offset_group)
    return case(name, "DeformConv", inputs, attrs=attrs, opset=opset, reference=_onnx_deform_conv(**attrs))


def _grid_offsets(seed, shape, values):
    """Offsets drawn from `values` only: integers and halves put the sample exactly on pixel rows and columns, on
    the image's last row and column, and on -1 and the size (the edges of the zero padding)."""
    return np.random.default_rng(seed).choice(np.array(values, np.float32), size=shape)


def _boundary_case(name, seed, n, c, hw, m, k, values, **kw):
    group, og = kw.get("group", 1), kw.get("offset_group", 1)
    pads = kw.get("pads", [0, 0, 0, 0])
    out = [hw[i] + pads[i] + pads[i + 2] - k[i] + 1 for i in range(2)]
    offsets = _grid_offsets(seed + 9, (n, og * k[0] * k[1] * 2, *out), values)
    return _deform_conv(name, seed, n, c, hw, m, k, offsets=offsets, **kw)


CASES += [
    _deform_conv("deformconv_plain", 501, 1, 2, (5, 6), 3, (3, 3), bias=False, mask=False),
    _deform_conv("deformconv_mask_bias_pads", 510, 2, 3, (6, 5), 4, (3, 3), pads=[1, 1, 1, 1]),
    _deform_conv("deformconv_strides_dilations", 520, 1, 2, (9, 8), 3, (2, 3), strides=[2, 1], dilations=[2, 2],
                 pads=[1, 0, 2, 1]),
    _deform_conv("deformconv_groups_offset_groups", 530, 2, 4, (5, 5), 6, (2, 2), group=2, offset_group=2),
    _deform_conv("deformconv_offset_groups_across_groups", 540, 1, 6, (4, 7), 4, (3, 2), group=2, offset_group=3,
                 mask=False, pads=[0, 1, 1, 0]),
    _deform_conv("deformconv_far_outside", 550, 1, 2, (4, 4), 2, (3, 3), spread=6.0, pads=[2, 2, 2, 2]),
    _deform_conv("deformconv_k_over_64", 560, 1, 9, (5, 5), 3, (3, 3), pads=[1, 1, 1, 1]),
    _deform_conv("deformconv_opset19", 570, 1, 2, (4, 5), 2, (2, 2), opset=19, bias=False),
    _boundary_case("deformconv_pixel_boundaries", 580, 1, 2, (4, 5), 3, (2, 2),
                   [-5.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 4.5]),
    _boundary_case("deformconv_pixel_boundaries_pads_mask", 590, 2, 2, (3, 4), 2, (3, 3),
                   [-1.0, 0.0, 1.0, 2.5, 3.0, 4.0], pads=[1, 1, 1, 1], bias=False),
]
