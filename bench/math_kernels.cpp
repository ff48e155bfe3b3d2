// Nanoseconds per element of the float math kernels on each CPU ISA (scalar, AVX2, AVX-512 where the CPU has
// them), on 65,536 uniform inputs in [-4, 4] (in cache), best of 30 passes, one thread.
//   build/cpp-tests/bench_math_kernels      (built with -DLOCKSTEP_TESTS=ON)
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "cpu/elementwise/unary_f32.h"

using namespace lockstep;

namespace {

template <class F>
void measure(const char* name, const F& f) {
  const int n = 65536;
  std::vector<float> x(n), y(n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (auto& v : x) v = u(rng);
  for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
    cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
    const cpu::UnaryF32Kernel<F> kernel = cpu::unary_f32_kernel<F>();
    double best = 1e9;
    for (int pass = 0; pass < 30; ++pass) {
      const auto t0 = std::chrono::steady_clock::now();
      if (kernel) kernel(f, x.data(), y.data(), n);
      else for (int i = 0; i < n; ++i) y[i] = f(x[i]);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("%-10s %-7s %7.3f ns/element\n", name, cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa)),
                best * 1e9 / n);
  }
  cpu::reset_cpu_isa();
}

}  // namespace

int main() {
  measure("exp", arith::ExpOp{});
  measure("log", arith::LogOp{});
  measure("tanh", arith::TanhOp{});
  measure("erf", arith::ErfOp{});
  measure("sigmoid", arith::SigmoidOp{});
  measure("softplus", arith::SoftplusOp{});
  measure("gelu", arith::GeluOp{false});
}
