// Host vs device bit comparison of src/arith/math.h.
//
// Build (compile only, no GPU needed):
//   nvcc -std=c++20 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Isrc \
//        -c tests/arith/math_device_check.cu -o math_device_check.o
// Build the program:
//   nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false \
//        -Xcompiler -ffp-contract=off -Isrc tests/arith/math_device_check.cu -o math_device_check
// Usage: math_device_check [function ...] [--stride N]
//   Unary functions are evaluated for every Nth float bit pattern (default N = 1: all 2^32), on the GPU and on
//   the host, and the result bits compared. pow uses 8M/N seeded random pairs plus a special-value table.
//   Prints "function: N differences" (NaN == NaN; differing NaN payloads are reported separately for
//   information) and exits 1 if any function has a difference.
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arith/math.h"

namespace la = lockstep::arith;

enum Fn {
  kExp, kExpm1, kLog, kLog1p, kTanh, kErf, kSigmoid, kSoftplus, kSinh, kCosh, kAsinh, kAcosh, kAtanh, kAtan, kAsin,
  kAcos, kSin, kCos, kTan, kPow, kNumFn
};
static const char* kNames[kNumFn] = {"exp",   "expm1", "log",   "log1p", "tanh", "erf",  "sigmoid",
                                     "softplus", "sinh", "cosh", "asinh", "acosh", "atanh", "atan",
                                     "asin",  "acos",  "sin",   "cos",   "tan",  "pow"};

__host__ __device__ inline float apply(int fn, float x, float y) {
  switch (fn) {
    case kExp: return la::exp_f32(x);
    case kExpm1: return la::expm1_f32(x);
    case kLog: return la::log_f32(x);
    case kLog1p: return la::log1p_f32(x);
    case kTanh: return la::tanh_f32(x);
    case kErf: return la::erf_f32(x);
    case kSigmoid: return la::sigmoid_f32(x);
    case kSoftplus: return la::softplus_f32(x);
    case kSinh: return la::sinh_f32(x);
    case kCosh: return la::cosh_f32(x);
    case kAsinh: return la::asinh_f32(x);
    case kAcosh: return la::acosh_f32(x);
    case kAtanh: return la::atanh_f32(x);
    case kAtan: return la::atan_f32(x);
    case kAsin: return la::asin_f32(x);
    case kAcos: return la::acos_f32(x);
    case kSin: return la::sin_f32(x);
    case kCos: return la::cos_f32(x);
    case kTan: return la::tan_f32(x);
    default: return la::pow_f32(x, y);
  }
}

template <int FN>
__global__ void unary_kernel(uint64_t first, uint64_t stride, float* out, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint32_t xb = static_cast<uint32_t>(first + i * stride);
  out[i] = apply(FN, la::float_of(xb), 0.0f);
}

__global__ void pow_kernel(const float* x, const float* y, float* out, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = la::pow_f32(x[i], y[i]);
}

#define CK(call)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

static void launch_unary(int fn, uint64_t first, uint64_t stride, float* out, size_t n) {
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  switch (fn) {
#define L(F) \
  case F: unary_kernel<F><<<blocks, threads>>>(first, stride, out, n); break;
    L(kExp) L(kExpm1) L(kLog) L(kLog1p) L(kTanh) L(kErf) L(kSigmoid) L(kSoftplus) L(kSinh) L(kCosh) L(kAsinh)
    L(kAcosh) L(kAtanh) L(kAtan) L(kAsin) L(kAcos) L(kSin) L(kCos) L(kTan)
#undef L
  }
  CK(cudaGetLastError());
}

struct Diff {
  uint64_t diffs = 0, nan_payload = 0, tested = 0;
  uint32_t first_x = 0, first_y = 0, host_bits = 0, dev_bits = 0;
};

static inline bool is_nan_bits(uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }

static void compare(Diff& d, uint32_t hb, uint32_t db, uint32_t xb, uint32_t yb) {
  d.tested++;
  if (hb == db) return;
  if (is_nan_bits(hb) && is_nan_bits(db)) {
    d.nan_payload++;
    return;
  }
  if (d.diffs++ == 0) {
    d.first_x = xb;
    d.first_y = yb;
    d.host_bits = hb;
    d.dev_bits = db;
  }
}

// Host side of one chunk, over all hardware threads.
static Diff host_compare(int fn, uint64_t first, uint64_t stride, const float* dev_out, size_t n) {
  const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Diff> parts(nt);
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t) {
    th.emplace_back([&, t] {
      Diff d;
      const size_t lo = n * t / nt, hi = n * (t + 1) / nt;
      for (size_t i = lo; i < hi; ++i) {
        const uint32_t xb = static_cast<uint32_t>(first + i * stride);
        compare(d, la::bits_of(apply(fn, la::float_of(xb), 0.0f)), la::bits_of(dev_out[i]), xb, 0);
      }
      parts[t] = d;
    });
  }
  for (auto& t : th) t.join();
  Diff all;
  for (auto& p : parts) {
    if (all.diffs == 0 && p.diffs) {
      all.first_x = p.first_x;
      all.host_bits = p.host_bits;
      all.dev_bits = p.dev_bits;
    }
    all.diffs += p.diffs;
    all.nan_payload += p.nan_payload;
    all.tested += p.tested;
  }
  return all;
}

static Diff run_unary(int fn, uint64_t stride) {
  const uint64_t total = ((1ull << 32) + stride - 1) / stride;  // patterns i*stride < 2^32
  const size_t chunk = size_t(1) << 26;
  float* d_out;
  CK(cudaMalloc(&d_out, chunk * sizeof(float)));
  std::vector<float> h(chunk);
  Diff all;
  for (uint64_t i0 = 0; i0 < total; i0 += chunk) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, total - i0));
    launch_unary(fn, i0 * stride, stride, d_out, n);
    CK(cudaMemcpy(h.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    Diff d = host_compare(fn, i0 * stride, stride, h.data(), n);
    if (all.diffs == 0 && d.diffs) {
      all.first_x = d.first_x;
      all.host_bits = d.host_bits;
      all.dev_bits = d.dev_bits;
    }
    all.diffs += d.diffs;
    all.nan_payload += d.nan_payload;
    all.tested += d.tested;
  }
  CK(cudaFree(d_out));
  return all;
}

static Diff run_pow(uint64_t stride) {
  std::vector<float> xs, ys;
  const uint32_t special[] = {0x00000000u, 0x00000001u, 0x00800000u, 0x3e800000u, 0x3f000000u, 0x3f7fffffu,
                              0x3f800000u, 0x3f800001u, 0x3fc00000u, 0x40000000u, 0x40400000u, 0x4b000000u,
                              0x4b000001u, 0x4b800000u, 0x4b800001u, 0x7f7fffffu, 0x7f800000u, 0x7fc00000u,
                              0x7f800001u, 0x42fe0000u, 0x43160000u, 0x3dcccccdu};
  for (uint32_t a : special)
    for (uint32_t b : special)
      for (uint32_t s = 0; s < 4; ++s) {
        xs.push_back(la::float_of(a | ((s & 1) ? 0x80000000u : 0u)));
        ys.push_back(la::float_of(b | ((s & 2) ? 0x80000000u : 0u)));
      }
  std::mt19937_64 rng(4242);
  const uint64_t pairs = 8000000 / stride + 1;
  for (uint64_t i = 0; i < pairs; ++i) {
    const uint32_t r1 = static_cast<uint32_t>(rng()), r2 = static_cast<uint32_t>(rng());
    switch (i % 3) {
      case 0: xs.push_back(la::float_of(r1)); ys.push_back(la::float_of(r2)); break;
      case 1:
        xs.push_back(la::float_of(r1 & 0x7f7fffffu));
        ys.push_back(static_cast<float>(static_cast<int32_t>(r2) * 0x1p-26));
        break;
      default:
        xs.push_back(-la::float_of(0x30000000u + r1 % 0x1e000000u));
        ys.push_back(static_cast<float>(static_cast<int>(r2 % 400) - 200));
        break;
    }
  }
  const size_t n = xs.size();
  float *dx, *dy, *dout;
  CK(cudaMalloc(&dx, n * 4));
  CK(cudaMalloc(&dy, n * 4));
  CK(cudaMalloc(&dout, n * 4));
  CK(cudaMemcpy(dx, xs.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, ys.data(), n * 4, cudaMemcpyHostToDevice));
  pow_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(dx, dy, dout, n);
  CK(cudaGetLastError());
  std::vector<float> h(n);
  CK(cudaMemcpy(h.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  Diff d;
  for (size_t i = 0; i < n; ++i)
    compare(d, la::bits_of(la::pow_f32(xs[i], ys[i])), la::bits_of(h[i]), la::bits_of(xs[i]), la::bits_of(ys[i]));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dout));
  return d;
}

int main(int argc, char** argv) {
  uint64_t stride = 1;
  std::vector<int> fns;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--stride" && i + 1 < argc) {
      stride = std::strtoull(argv[++i], nullptr, 10);
      if (stride == 0) stride = 1;
      continue;
    }
    int f = -1;
    for (int k = 0; k < kNumFn; ++k)
      if (a == kNames[k]) f = k;
    if (f < 0) {
      std::fprintf(stderr, "unknown function %s\n", a.c_str());
      return 2;
    }
    fns.push_back(f);
  }
  if (fns.empty())
    for (int k = 0; k < kNumFn; ++k) fns.push_back(k);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, stride %" PRIu64 "\n", prop.name, stride);
  bool ok = true;
  for (int fn : fns) {
    const Diff d = fn == kPow ? run_pow(stride) : run_unary(fn, stride);
    std::printf("%s: %" PRIu64 " differences (%" PRIu64 " tested, %" PRIu64 " NaN payload differences)", kNames[fn],
                d.diffs, d.tested, d.nan_payload);
    if (d.diffs)
      std::printf("  first: x=%08x y=%08x host=%08x device=%08x", d.first_x, d.first_y, d.host_bits, d.dev_bits);
    std::printf("\n");
    std::fflush(stdout);
    if (d.diffs) ok = false;
  }
  std::printf("%s\n", ok ? "PASS: host and device bits identical" : "FAIL");
  return ok ? 0 : 1;
}
