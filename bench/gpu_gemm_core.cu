// The CUDA GEMM core alone, on row-major MatMuls (A: M x K, B: K x N, batched), without the session: kernel time
// by CUDA events (median), TFLOP/s, and a hash of the output bytes, so that variants of the core (a copy of
// src/cuda/gemm_core.cuh given as -DCORE) can be timed against each other and shown to return the same bits.
//   nvcc -std=c++20 -O3 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false \
//        -Xcompiler -ffp-contract=off -Isrc -Iinclude bench/gpu_gemm_core.cu -o gpu_gemm_core
//   ./gpu_gemm_core [CASE]     (CASE: the index of one problem, run once: for ncu)
// Times the tiles the library picks for MatMul (64x128x8/3 with its totals in shared memory, 64x64x4/4), and
// 64x128x8/1 and 128x128x8/1 with the totals in registers, and 8x16 outputs a thread (totals in shared memory) on a
// 128x128 tile.
#ifndef CORE
#define CORE "cuda/gemm_core.cuh"
#endif
#include CORE
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cstring>
using namespace lockstep;
using namespace lockstep::cuda::gemm_core;
struct Prob {
  int64_t M, N, K, batches;
  const float *a_data, *b_data;
  float* y;
  static constexpr bool kCostlyColumnLoads = false;
  struct Batch { const float *a, *b; float* y; };
  __device__ Batch batch(int64_t z) const { return {a_data + z*M*K, b_data + z*K*N, y + z * M * N}; }
  __device__ float init(const Batch&, int64_t) const { return 0.0f; }
  using Column = int64_t;
  __device__ Column column(const Batch&, int64_t n) const { return n; }
  __device__ void store(const Batch& bt, Column n, int64_t m, float t) const { bt.y[m * N + n] = t; }
  template <int BM, int BN, int kThreads, int>
  struct Loader {
    struct Shared {};
    StridedTileLoader<BM, kThreads, true> a;
    StridedTileLoader<BN, kThreads, false> b;
    __device__ Loader(const Prob& pr, const Batch& bt, int64_t m0, int64_t n0, Shared&, int64_t k_begin)
        : a({bt.a, 1, pr.K, pr.K, pr.M, Walk::VectorK}, k_begin, m0),
          b({bt.b, pr.N, 1, pr.K, pr.N, Walk::VectorX}, k_begin, n0) {}
    __device__ void begin() const {}
    __device__ void load(float (*as)[BM + kPad], float (*bs)[BN + kPad], int64_t t) { a.load(as, t); b.load(bs, t); }
    __device__ void store(float (*as)[BM + kPad], float (*)[BN + kPad]) const { a.store(as); }
  };
};
template <class Shape>
float run(const Prob& p, int reps) {
  const int64_t n_tiles = (p.N + Shape::BN - 1) / Shape::BN, m_tiles = (p.M + Shape::BM - 1) / Shape::BM;
  dim3 grid(n_tiles, m_tiles, p.batches);
  auto kernel = gemm_f32_sm80<Shape, false, Prob>;
  size_t shared = sizeof(SharedMemory<Shape, Prob>);
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
  cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  kernel<<<grid, Shape::kThreads, shared>>>(p, SplitK{});
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(e0); kernel<<<grid, Shape::kThreads, shared>>>(p, SplitK{}); cudaEventRecord(e1);
    cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms);
  }
  if (cudaGetLastError() != cudaSuccess) { printf("launch error\n"); exit(1); }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}
uint64_t fnv(const std::vector<float>& v) { uint64_t h = 1469598103934665603ull; const unsigned char* b = (const unsigned char*)v.data();
  for (size_t i = 0; i < v.size() * 4; ++i) h = (h ^ b[i]) * 1099511628211ull; return h; }
int main(int argc, char** argv) {
  int only = argc > 1 ? atoi(argv[1]) : -1; int ci = -1;
  struct Case { int64_t M, N, K, B; } cases[] = {{4096,4096,4096,1},{8192,8192,8192,1},{4096,768,768,1},{4096,3072,768,1},{4096,768,3072,1},{128,128,64,384},{128,64,128,384},{16384,768,768,1},{16384,3072,768,1}};
  for (auto c : cases) {
    if (only >= 0 && ++ci != only) continue;
    size_t na = c.B*c.M*c.K, nb = c.B*c.K*c.N, ny = c.B*c.M*c.N;
    std::vector<float> ha(na), hb(nb);
    uint32_t s = 12345; for (auto& x : ha) { s = s*1664525u+1013904223u; x = int(s>>9)/float(1<<23) - 1.0f; }
    for (auto& x : hb) { s = s*1664525u+1013904223u; x = int(s>>9)/float(1<<23) - 1.0f; }
    float *a, *b, *y; cudaMalloc(&a, na*4); cudaMalloc(&b, nb*4); cudaMalloc(&y, ny*4);
    cudaMemcpy(a, ha.data(), na*4, cudaMemcpyHostToDevice); cudaMemcpy(b, hb.data(), nb*4, cudaMemcpyHostToDevice);
    Prob p{c.M, c.N, c.K, c.B, a, b, y};
    double fl = 2.0*c.M*c.N*c.K*c.B;
    printf("%5ldx%5ldx%5ld b%-3ld", c.M, c.N, c.K, c.B);
    auto one = [&](const char* name, float ms) {
      std::vector<float> hy(ny); cudaMemcpy(hy.data(), y, ny*4, cudaMemcpyDeviceToHost);
      printf("  %s %.3f ms %5.1f TF/s %016lx", name, ms, fl/ms/1e9, (unsigned long)fnv(hy) & 0xffffff);
    };
    int reps = only >= 0 ? 1 : (fl > 1e11 ? 5 : 20);
    one("64x128x8/3s", run<TileShape<64, 128, 8, 3, 2, Totals::InShared>>(p, reps));
    one("64x128x8/1", run<TileShape<64, 128, 8>>(p, reps));
    one("128x128x8/1", run<TileShape<128, 128, 8>>(p, reps));
    one("64x64x4/4", run<TileShape<64, 64, 4, 4>>(p, reps));
    one("128x128x16/2s", run<TileShape<128, 128, 16, 2, 2, Totals::InShared>>(p, reps));
    printf("\n");
    cudaFree(a); cudaFree(b); cudaFree(y);
  }
}
