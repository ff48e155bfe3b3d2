// Probe: a pointwise conv's product with B read in place from the input planes (pointed rows), plain, with a
// bias and a fused Relu, and with the bias only. Arguments: M N K (output channels, pixels, input channels).
// See README.md for the build line.
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdlib>
#include "ops/gemm.h"
using namespace lockstep;
double now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  int M=atoi(argv[1]), N=atoi(argv[2]), K=atoi(argv[3]);
  std::vector<float> x(size_t(K)*N, 0.5f), w(size_t(M)*K, 0.25f), bias(M, 0.1f), c(size_t(M)*N), c2(size_t(M)*N);
  std::vector<const float*> rows(K); for (int k = 0; k < K; ++k) rows[k] = x.data() + size_t(k) * N;
  const cpu::PackedA pa = cpu::pack_a(nullptr, M, K, cpu::strided_panels({w.data(), K, 1}, K));
  StoreEpilogue relu; relu.relu = true;
  int reps = 200;
  for (int t = 0; t < 3; ++t) {
    double t0 = now(); for (int r = 0; r < reps; ++r) cpu::gemm_f32_packed_rows(nullptr, pa, N, rows.data(), cpu::GemmOut{c.data(), N, 1});
    double t1 = now(); for (int r = 0; r < reps; ++r) cpu::gemm_f32_packed_rows(nullptr, pa, N, rows.data(), cpu::GemmOut{c.data(), N, 1, bias.data(), nullptr, relu});
    double t2 = now(); for (int r = 0; r < reps; ++r) cpu::gemm_f32_packed_rows(nullptr, pa, N, rows.data(), cpu::GemmOut{c.data(), N, 1, bias.data(), nullptr});
    double t3 = now();
    double f = 2.0 * M * N * K;
    printf("%dx%dx%d pointed rows: plain %.1f us (%.1f GFLOP/s), bias+relu %.1f us, bias only %.1f us\n", M, N, K, (t1-t0)/reps*1e6, f/((t1-t0)/reps)/1e9, (t2-t1)/reps*1e6, (t3-t2)/reps*1e6);
  }
}
