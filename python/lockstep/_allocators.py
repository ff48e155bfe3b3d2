"""onnxruntime's shared allocators: OrtArenaCfg, create_and_register_allocator and create_and_register_allocator_v2.

lockstep checks and records them, as onnxruntime does, but its sessions always allocate from their own buffer pools,
which already reuse memory between runs: `session.use_env_allocators = "1"` and an arena's settings change neither
the results nor how lockstep allocates.
"""

from ._core import InvalidArgument
from ._options import _Attribute
from ._values import OrtMemoryInfo

CPU_PROVIDER = "CPUExecutionProvider"


def _arena_int(lowest):
    def convert(name, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"OrtArenaCfg.{name} must be an int, got {type(value).__name__} {value!r}")
        if value < lowest:
            raise ValueError(f"OrtArenaCfg.{name} must be at least {lowest}, got {value}")
        return value
    return convert


class OrtArenaCfg:
    """An arena's settings: OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes,
    max_dead_bytes_per_chunk), or OrtArenaCfg({name: int}) for any of the six. Left out: -1, onnxruntime's "its own
    default" (max_mem: 0, no limit)."""

    __slots__ = ("_values",)

    max_mem = _Attribute(_arena_int(0), 0)
    arena_extend_strategy = _Attribute(_arena_int(-1), -1)
    initial_chunk_size_bytes = _Attribute(_arena_int(-1), -1)
    max_dead_bytes_per_chunk = _Attribute(_arena_int(-1), -1)
    initial_growth_chunk_size_bytes = _Attribute(_arena_int(-1), -1)
    max_power_of_two_extend_bytes = _Attribute(_arena_int(-1), -1)

    _POSITIONAL = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk")
    _NAMES = _POSITIONAL + ("initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes")

    def __init__(self, *args):
        self._values = {}
        if len(args) == 1 and isinstance(args[0], dict):
            settings = args[0]
        elif len(args) == len(self._POSITIONAL):
            settings = dict(zip(self._POSITIONAL, args))
        else:
            raise TypeError("OrtArenaCfg takes (max_mem, arena_extend_strategy, initial_chunk_size_bytes, "
                            "max_dead_bytes_per_chunk) or one dict of settings")
        for name, value in settings.items():
            if name not in self._NAMES:
                raise ValueError(f"Invalid OrtArenaCfg option: {name!r} (options: {', '.join(self._NAMES)})")
            setattr(self, name, value)

    def __repr__(self):
        return "OrtArenaCfg(" + ", ".join(f"{n}={getattr(self, n)}" for n in self._NAMES) + ")"


# The allocators registered for sharing, by device: (provider, memory info, arena settings or None).
_registered = {}


def _register(provider, memory_info, arena_cfg, what):
    if not isinstance(memory_info, OrtMemoryInfo):
        raise TypeError(f"{what}: the memory info must be an OrtMemoryInfo, got {type(memory_info).__name__}")
    if arena_cfg is not None and not isinstance(arena_cfg, OrtArenaCfg):
        raise TypeError(f"{what}: the arena settings must be an OrtArenaCfg or None, got {type(arena_cfg).__name__}")
    device = (memory_info.name.lower(), memory_info.device_id, memory_info.mem_type)
    if device in _registered:
        raise InvalidArgument(f"{what}: an allocator for {memory_info} has already been registered for sharing")
    _registered[device] = (provider, memory_info, arena_cfg)


def create_and_register_allocator(memory_info, arena_cfg):
    """Registers a CPU allocator for sessions with the config entry session.use_env_allocators = "1" (see the module
    docstring: lockstep records it and allocates as always). Other devices: create_and_register_allocator_v2."""
    if isinstance(memory_info, OrtMemoryInfo) and memory_info.name.lower() != "cpu":
        raise InvalidArgument(f"create_and_register_allocator: only CPU allocators can be shared this way, got "
                              f"{memory_info}; use create_and_register_allocator_v2")
    _register(CPU_PROVIDER, memory_info, arena_cfg, "create_and_register_allocator")


def create_and_register_allocator_v2(provider_type, memory_info, provider_options, arena_cfg):
    """create_and_register_allocator for a provider's device: "CPUExecutionProvider" with Cpu memory, or
    "CUDAExecutionProvider" (where available) with Cuda memory."""
    from . import get_available_providers

    what = "create_and_register_allocator_v2"
    if provider_type not in get_available_providers():
        raise InvalidArgument(f"{what}: provider '{provider_type}' is not available (available: "
                              f"{', '.join(get_available_providers())})")
    if not isinstance(provider_options, dict):
        raise TypeError(f"{what}: provider options must be a dict, got {type(provider_options).__name__}")
    wanted = "cpu" if provider_type == CPU_PROVIDER else "cuda"
    if isinstance(memory_info, OrtMemoryInfo) and memory_info.name.lower() != wanted:
        raise InvalidArgument(f"{what}: {provider_type} allocates {wanted} memory, not {memory_info}")
    _register(provider_type, memory_info, arena_cfg, what)
