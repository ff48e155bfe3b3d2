"""Cross-device op cases: each family's file defines CASES with case(); see README.md beside this file."""

import dataclasses
import importlib
import pkgutil

import numpy as np


@dataclasses.dataclass
class Case:
    name: str
    op_type: str
    inputs: dict
    attrs: dict
    opset: int
    outputs: object
    const: tuple
    reference: object
    rtol: float
    atol: float
    note: str

    @property
    def output_names(self):
        if isinstance(self.outputs, int):
            return [f"out{i}" for i in range(self.outputs)]
        return list(self.outputs)


def case(name, op_type, inputs, attrs=None, opset=17, outputs=1, const=(), reference="onnxruntime",
         rtol=1e-5, atol=1e-6, note=""):
    return Case(name, op_type, dict(inputs), dict(attrs or {}), opset, outputs, tuple(const), reference, rtol, atol,
                note)


_rng = np.random.default_rng(20261202)


def rand(*shape, low=-1.0, high=1.0, dtype=np.float32, seed=None):
    """Uniform floats from a fixed-seed generator (per-call seed for cases that must not shift when others change)."""
    rng = np.random.default_rng(seed) if seed is not None else _rng
    return rng.uniform(low, high, size=shape).astype(dtype)


def randint(*shape, low=0, high=10, dtype=np.int64, seed=None):
    rng = np.random.default_rng(seed) if seed is not None else _rng
    return rng.integers(low, high, size=shape).astype(dtype)


def all_cases():
    """Every family's CASES, in family-module order."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "CASES", []))
    return found
