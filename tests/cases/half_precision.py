"""Cross-device cases for float16 and bfloat16 inputs of ops that compute (docs/arithmetic.md#half-precision).

Each case is a float32 case of another family with its float inputs rounded to the half type. The reference is
the contract's rule itself, with no tolerance: the same node run by lockstep in float32 on the widened inputs,
each float32 output then rounded once to the half type by numpy (nearest even). The float32 kernels are checked
against onnxruntime by their own cases.
"""

import dataclasses

import ml_dtypes
import numpy as np

import lockstep
from cases import attention, conv, elementwise, gemm, index, normalization, pool, recurrent, reduce, tensor
from onnx_models import feeds_of, single_node_model

HALF_TYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
HALF_DTYPES = {np.dtype(t) for t in HALF_TYPES.values()}

# Float32 cases that cover each computing family; names from the family files.
SOURCES = [
    "conv_2d_pads_bias", "conv_depthwise", "convtranspose_2d_stride2", "gemm_transAB_alpha_beta",
    "matmul_batched", "einsum_batch_matmul", "add_bcast3", "mul_special", "div_special", "exp_special",
    "tanh_special", "erf_special", "sigmoid_special", "gelu_tanh", "pow_basic", "max_4", "clip_inputs",
    "ReduceSum_s1_o13", "MaxPool_2d_pads", "AveragePool_2d_ceil_pads", "layernorm_0_stats", "rmsnorm_0",
    "groupnorm_0_o21", "batchnorm_o15", "instancenorm_0", "attention_3d_gqa", "attention_past_present",
    "attention_mask_float_4d", "lstm_peepholes_states_lens", "gru_forward", "topk_ties_l1", "unique_sorted_float",
    "range_float_feed", "causal_conv_silu", "swiglu_alpha",
]


def _float_cases():
    by_name = {}
    for module in (attention, conv, elementwise, gemm, index, normalization, pool, recurrent, reduce, tensor):
        by_name.update({c.name: c for c in module.CASES})
    return [by_name[name] for name in SOURCES]


def _stays_float(op_type, i):
    """ONNX types LayerNormalization's Mean and InvStdDev as float whatever X's type is."""
    return op_type == "LayerNormalization" and i >= 1


def rule_reference(source, half):
    """The half-precision rule for `source` run on half inputs: widen, run float32, round each output once."""

    def run(**inputs):
        widened = {k: None if v is None else (np.asarray(v).astype(np.float32)
                                              if np.asarray(v).dtype in HALF_DTYPES else v)
                   for k, v in inputs.items()}
        c = dataclasses.replace(source, inputs=widened)
        session = lockstep.InferenceSession(single_node_model(c), providers=[lockstep.CPU])
        outputs = session.run(None, feeds_of(c))
        with np.errstate(over="ignore"):  # outputs past the half type's range round to infinity
            return [y.astype(half) if y.dtype == np.float32 and not _stays_float(c.op_type, i) else y
                    for i, y in enumerate(outputs)]

    return run


def half_case(source, suffix, half):
    with np.errstate(over="ignore"):  # inputs past the half type's range round to infinity
        inputs = {k: v if v is None or np.asarray(v).dtype != np.float32 else np.asarray(v).astype(half)
                  for k, v in source.inputs.items()}
    return dataclasses.replace(source, name=f"half_{suffix}_{source.name}", inputs=inputs,
                               reference=rule_reference(source, half), rtol=0.0, atol=0.0,
                               note="reference: the half-precision rule on lockstep's float32 kernel")


CASES = [half_case(c, suffix, half) for c in _float_cases() for suffix, half in HALF_TYPES.items()]
