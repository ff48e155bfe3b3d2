"""onnxruntime's shared allocators: OrtArenaCfg and create_and_register_allocator(_v2), which lockstep checks and
records; sessions asking for them (session.use_env_allocators) compute the same bytes as any other."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

ARENA_FIELDS = ["max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk",
                "initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes"]


@pytest.fixture(autouse=True)
def no_registered_allocators(monkeypatch):
    """Registrations last for the process, as in onnxruntime: each test starts without any."""
    monkeypatch.setattr(lockstep._allocators, "_registered", {})


def fields(cfg):
    return [getattr(cfg, name) for name in ARENA_FIELDS]


def test_arena_cfg_takes_four_ints_or_a_dict_and_leaves_the_rest_at_their_defaults():
    assert fields(lockstep.OrtArenaCfg(8, 0, 4, 2)) == [8, 0, 4, 2, -1, -1]
    assert fields(lockstep.OrtArenaCfg({"max_power_of_two_extend_bytes": 17})) == [0, -1, -1, -1, -1, 17]
    settings = dict(zip(ARENA_FIELDS, [32, 11, 18, 14, 12, 17]))
    assert fields(lockstep.OrtArenaCfg(settings)) == [32, 11, 18, 14, 12, 17]


@pytest.mark.parametrize("args, error", [
    (({"max_memory": 1},), ValueError), (({"max_mem": -1},), ValueError), (({"arena_extend_strategy": -2},), ValueError),
    (({"max_mem": 1.5},), TypeError), (({"max_mem": True},), TypeError), ((1, 2, 3), TypeError), ((), TypeError),
], ids=["unknown-key", "negative-max-mem", "below-minus-one", "float", "bool", "three-ints", "nothing"])
def test_arena_cfg_refuses_what_is_not_a_setting(args, error):
    with pytest.raises(error):
        lockstep.OrtArenaCfg(*args)


def test_arena_cfg_fields_are_checked_when_set():
    cfg = lockstep.OrtArenaCfg(0, -1, -1, -1)
    cfg.initial_chunk_size_bytes = 1024
    assert cfg.initial_chunk_size_bytes == 1024
    with pytest.raises(TypeError):
        cfg.max_mem = "1"


def cpu_memory(device_id=0):
    return lockstep.OrtMemoryInfo("Cpu", lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR, device_id,
                                  lockstep.OrtMemType.DEFAULT)


def test_a_device_takes_one_shared_allocator():
    lockstep.create_and_register_allocator(cpu_memory(), None)
    lockstep.create_and_register_allocator(cpu_memory(1), lockstep.OrtArenaCfg(0, -1, -1, -1))
    with pytest.raises(lockstep.InvalidArgument, match="already been registered"):
        lockstep.create_and_register_allocator(cpu_memory(), None)


@pytest.mark.parametrize("memory, arena, error", [
    ("Cpu", None, TypeError), (None, {"max_mem": 0}, TypeError),
    (lockstep.OrtMemoryInfo("Cuda", lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, lockstep.OrtMemType.DEFAULT),
     None, lockstep.InvalidArgument),
], ids=["memory-not-info", "arena-not-cfg", "cuda-memory"])
def test_create_and_register_allocator_refuses_what_it_cannot_share(memory, arena, error):
    with pytest.raises(error):
        lockstep.create_and_register_allocator(cpu_memory() if memory is None else memory, arena)


def test_create_and_register_allocator_v2_checks_provider_and_memory():
    lockstep.create_and_register_allocator_v2("CPUExecutionProvider", cpu_memory(), {}, None)
    with pytest.raises(lockstep.InvalidArgument, match="already been registered"):
        lockstep.create_and_register_allocator_v2("CPUExecutionProvider", cpu_memory(), {}, None)
    with pytest.raises(lockstep.InvalidArgument, match="is not available"):
        lockstep.create_and_register_allocator_v2("NoSuchExecutionProvider", cpu_memory(1), {}, None)
    with pytest.raises(TypeError):
        lockstep.create_and_register_allocator_v2("CPUExecutionProvider", cpu_memory(2), None, None)
    if lockstep.CUDA in lockstep.get_available_providers():
        with pytest.raises(lockstep.InvalidArgument, match="allocates cuda memory"):
            lockstep.create_and_register_allocator_v2(lockstep.CUDA, cpu_memory(3), {}, None)


def test_sessions_using_env_allocators_compute_the_same_bytes():
    f = TensorProto.FLOAT
    graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "softmax",
                              [helper.make_tensor_value_info("x", f, [5, 33])], [helper.make_tensor_value_info("y", f, [5, 33])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    lockstep.create_and_register_allocator(cpu_memory(), lockstep.OrtArenaCfg({"max_mem": 1 << 20}))
    shared = lockstep.SessionOptions()
    shared.add_session_config_entry("session.use_env_allocators", "1")
    x = {"x": np.random.default_rng(4).standard_normal((5, 33)).astype(np.float32) * 30}
    with_env = lockstep.InferenceSession(model, shared).run(None, x)[0]
    assert same_bits(with_env, lockstep.InferenceSession(model).run(None, x)[0])
