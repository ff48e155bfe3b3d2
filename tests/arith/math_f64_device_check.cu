// Host vs device bit comparison of the binary64 functions: exp_f64, log_f64 (src/arith/math_f64.h) and fmod_f64
// with Mod's floor remainder (src/arith/elementwise.h).
//
// Build the program (needs a GPU to run):
//   nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false \
//        -Xcompiler -ffp-contract=off -Isrc tests/arith/math_f64_device_check.cu -o math_f64_device_check
// Usage: math_f64_device_check [--count N]   (N seeded inputs per function, default 8,000,000: raw bit patterns,
//   the exp range, near 1, denormals; pairs of every magnitude for fmod). Prints the differences per function
//   (NaN == NaN; NaN payload differences reported for information) and exits 1 if any function differs.
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "arith/elementwise.h"
#include "arith/math_f64.h"

namespace la = lockstep::arith;

enum Fn { kExp, kLog, kFmod, kFloorMod, kNumFn };
static const char* kNames[kNumFn] = {"exp_f64", "log_f64", "fmod_f64", "mod_f64_floor"};

__host__ __device__ inline double apply(int fn, double x, double y) {
  switch (fn) {
    case kExp: return la::exp_f64(x);
    case kLog: return la::log_f64(x);
    case kFmod: return la::fmod_f64(x, y);
    default: return la::ModOp{false}(x, y);
  }
}

__global__ void apply_kernel(int fn, const double* x, const double* y, double* out, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = apply(fn, x[i], y[i]);
}

#define CK(call)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                 \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

int main(int argc, char** argv) {
  size_t count = 8000000;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--count" && i + 1 < argc) count = std::strtoull(argv[++i], nullptr, 10);
  std::mt19937_64 rng(64);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> xs(count), ys(count), h(count);
  double *dx, *dy, *dout;
  CK(cudaMalloc(&dx, count * 8));
  CK(cudaMalloc(&dy, count * 8));
  CK(cudaMalloc(&dout, count * 8));
  bool ok = true;
  for (int fn = 0; fn < kNumFn; ++fn) {
    for (size_t i = 0; i < count; ++i) {
      const uint64_t r = rng();
      switch (i % 4) {
        case 0: xs[i] = la::double_of(r); break;
        case 1: xs[i] = -745.2 + 1455.0 * u(rng); break;
        case 2: xs[i] = 1.0 + (u(rng) * 2 - 1) * std::ldexp(1.0, -static_cast<int>(r % 53)); break;
        default: xs[i] = la::double_of(r & 0x800fffffffffffffull); break;
      }
      ys[i] = i % 2 ? la::double_of(rng()) : std::ldexp(u(rng) * 2 - 1, static_cast<int>(rng() % 2098) - 1074);
    }
    CK(cudaMemcpy(dx, xs.data(), count * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, ys.data(), count * 8, cudaMemcpyHostToDevice));
    apply_kernel<<<static_cast<unsigned>((count + 255) / 256), 256>>>(fn, dx, dy, dout, count);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h.data(), dout, count * 8, cudaMemcpyDeviceToHost));
    uint64_t diffs = 0, payload = 0;
    for (size_t i = 0; i < count; ++i) {
      const double host = apply(fn, xs[i], ys[i]);
      const uint64_t a = la::bits_of(host), b = la::bits_of(h[i]);
      if (a == b) continue;
      if (host != host && h[i] != h[i]) ++payload;
      else if (diffs++ == 0)
        std::printf("  first difference: x=%a y=%a host=%a device=%a\n", xs[i], ys[i], host, h[i]);
    }
    std::printf("%s: %" PRIu64 " differences (%zu tested, %" PRIu64 " NaN payload differences)\n", kNames[fn], diffs,
                count, payload);
    if (diffs) ok = false;
  }
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dout));
  std::printf("%s\n", ok ? "PASS: host and device bits identical" : "FAIL");
  return ok ? 0 : 1;
}
