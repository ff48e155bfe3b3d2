"""The ONNX backend interface (onnx.backend.base), as onnxruntime.backend offers it, so that onnx's backend test
suite and scripts written against `onnxruntime.backend` can drive lockstep:

    import lockstep.backend as backend
    rep = backend.prepare(model, "CPU")        # a ModelProto, serialized bytes or a path
    outputs = rep.run([x])                     # or a dict name -> array, or one array
"""

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from . import CPU, CUDA, InferenceSession, SessionOptions, get_available_providers

_DEVICE_PROVIDERS = {"CPU": CPU, "CUDA": CUDA, "GPU": CUDA}


class LockstepBackendRep(BackendRep):
    """A prepared model: one InferenceSession."""

    def __init__(self, session):
        self.session = session

    def run(self, inputs, **kwargs):
        names = [i.name for i in self.session.get_inputs()]
        if isinstance(inputs, dict):
            feeds = inputs
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) > len(names):
                raise ValueError(f"{len(inputs)} inputs given, the model has {len(names)}: {names}")
            feeds = dict(zip(names, inputs))
        else:
            feeds = {names[0]: np.asarray(inputs)}
        return self.session.run(None, feeds)


class LockstepBackend(Backend):
    @classmethod
    def supports_device(cls, device):
        provider = _DEVICE_PROVIDERS.get(str(device).upper())
        return provider is not None and provider in get_available_providers()

    @classmethod
    def is_compatible(cls, model, device=None, **kwargs):
        return device is None or cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device=None, **kwargs):
        """`model`: a ModelProto, serialized bytes, a path or an InferenceSession; `device`: "CPU", "CUDA" (or
        "GPU"), None for every available provider. Keyword arguments that name SessionOptions attributes set them;
        others are ignored, as in onnxruntime.backend."""
        if isinstance(model, LockstepBackendRep):
            return model
        if isinstance(model, InferenceSession):
            return LockstepBackendRep(model)
        if isinstance(model, onnx.ModelProto):
            model = model.SerializeToString()
        if device is not None and not cls.supports_device(device):
            raise RuntimeError(f"lockstep has no usable provider for device '{device}' on this machine "
                               f"(available: {get_available_providers()})")
        options = SessionOptions()
        for key, value in kwargs.items():
            if hasattr(SessionOptions, key):
                setattr(options, key, value)
        providers = [_DEVICE_PROVIDERS[str(device).upper()]] if device is not None else get_available_providers()
        return LockstepBackendRep(InferenceSession(model, options, providers=providers))

    @classmethod
    def run_model(cls, model, inputs, device=None, **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device=None, outputs_info=None, **kwargs):
        raise NotImplementedError("lockstep runs models, not single nodes: wrap the node in a model and use run_model")


prepare = LockstepBackend.prepare
run_model = LockstepBackend.run_model
run = run_model
run_node = LockstepBackend.run_node
supports_device = LockstepBackend.supports_device
is_compatible = LockstepBackend.is_compatible
