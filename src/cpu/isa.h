// Which SIMD instruction set the CPU kernels use. Every choice returns the same bits (docs/arithmetic.md): the
// vector kernels run, lane by lane, the operation sequence of the scalar ones. The choice only changes speed.
#pragma once

namespace lockstep::cpu {

enum class CpuIsa { Scalar = 0, Avx2 = 1, Avx512 = 2 };

/// The ISA the kernels use now: the one forced by force_cpu_isa(), else the environment variable
/// LOCKSTEP_CPU_ISA=scalar|avx2|avx512 (read once), else the best this CPU supports. A forced ISA the CPU lacks
/// falls back to the best supported one below it.
CpuIsa cpu_isa();

/// The best ISA this CPU supports (avx512 needs AVX-512F; avx2 needs AVX2 and FMA).
CpuIsa cpu_best_isa();

/// Forces the ISA of later kernel calls (tests); reset_cpu_isa() restores the default resolution.
void force_cpu_isa(CpuIsa isa);
void reset_cpu_isa();

/// "scalar", "avx2" or "avx512".
const char* cpu_isa_name(CpuIsa isa);

}  // namespace lockstep::cpu
