// Probe: a 1x1 conv's lanes-on-channels product on a small plane (A = the taps, pixel-major rows of the input,
// B = the weights packed ahead, C stored transposed): packing A alone and the whole product. Arguments: M K N
// (pixels, input channels, output channels). See README.md for the build line.
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdlib>
#include "ops/gemm.h"
using namespace lockstep;
double now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  int M=atoi(argv[1]), K=atoi(argv[2]), N=atoi(argv[3]);
  std::vector<float> x(size_t(K)*M, 0.5f), w(size_t(K)*N, 0.25f), c(size_t(M)*N);
  const cpu::PanelFn a_panels = cpu::strided_panels({x.data(), 1, M}, K);   // A(m, k) = x[k*M + m]: taps of a 1x1 conv, pixel-major
  const cpu::PackedB pb = cpu::pack_b(nullptr, N, K, cpu::strided_panels({w.data(), K, 1}, K));
  const cpu::GemmOut out{c.data(), 1, M, nullptr};  // C' stored transposed, as Conv's lanes-on-channels product
  int reps = 300;
  for (int t = 0; t < 3; ++t) {
    double t0 = now(); for (int r = 0; r < reps; ++r) { auto pa = cpu::pack_a(nullptr, M, K, a_panels); asm volatile("" :: "r"(pa.data.data())); }
    double t1 = now(); for (int r = 0; r < reps; ++r) cpu::gemm_f32_packed_b(nullptr, M, a_panels, pb, out);
    double t2 = now();
    printf("M=%d K=%d N=%d: pack A %.1f us, whole product %.1f us (%.1f GFLOP/s)\n", M, K, N, (t1-t0)/reps*1e6, (t2-t1)/reps*1e6, 2.0*M*N*K/((t2-t1)/reps)/1e9);
  }
}
