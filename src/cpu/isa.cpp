#include "cpu/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lockstep::cpu {

namespace {

constexpr int kUnset = -1;
std::atomic<int> g_forced{kUnset};

CpuIsa detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return CpuIsa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::Avx2;
#endif
  return CpuIsa::Scalar;
}

CpuIsa from_environment() {
  const char* v = std::getenv("LOCKSTEP_CPU_ISA");
  if (!v || !*v) return cpu_best_isa();
  for (CpuIsa isa : {CpuIsa::Scalar, CpuIsa::Avx2, CpuIsa::Avx512})
    if (std::strcmp(v, cpu_isa_name(isa)) == 0) return isa;
  throw std::invalid_argument(std::string("LOCKSTEP_CPU_ISA='") + v + "': expected scalar, avx2 or avx512");
}

CpuIsa capped(CpuIsa wanted) {
  return static_cast<int>(wanted) <= static_cast<int>(cpu_best_isa()) ? wanted : cpu_best_isa();
}

}  // namespace

CpuIsa cpu_best_isa() {
  static const CpuIsa best = detect();
  return best;
}

CpuIsa cpu_isa() {
  int forced = g_forced.load(std::memory_order_relaxed);
  if (forced != kUnset) return capped(static_cast<CpuIsa>(forced));
  static const CpuIsa configured = capped(from_environment());
  return configured;
}

void force_cpu_isa(CpuIsa isa) { g_forced.store(static_cast<int>(isa)); }
void reset_cpu_isa() { g_forced.store(kUnset); }

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx2: return "avx2";
    default: return "scalar";
  }
}

}  // namespace lockstep::cpu
