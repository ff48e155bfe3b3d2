// CUDA kernels of the gemm family, and the problems they pose to the SIMT GEMM core (src/cuda/gemm_core.cuh),
// which Conv shares as an implicit GEMM. The core keeps each output's canonical k order (dot_chunked_f32,
// docs/arithmetic.md#gemm); this file only says where operands live and picks the tile shape and split-K.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "arith/dot.h"
#include "cuda/common.cuh"
#include "cuda/gemm_core.cuh"
#include "ops/conv.h"
#include "ops/gemm.h"

namespace lockstep::cuda {

namespace {

using gemm_core::kPad;
using gemm_core::kTileK;
using gemm_core::SplitK;
using gemm_core::Walk;

constexpr int kMaxBatchDims = kMaxRank - 2;

/// The walk of a strided operand op(k, x) = base[k*k_stride + x*x_stride] over every batch: 16-byte vectors along
/// the contiguous axis when every run of 4 along it, in every batch, starts 16-byte aligned (along k only where
/// the operand's loader stages copies: `vector_k`).
Walk walk_of(const float* base, int64_t k_stride, int64_t x_stride, const int64_t* batch_strides, int batch_rank,
             bool vector_k) {
  bool aligned = reinterpret_cast<uintptr_t>(base) % 16 == 0;
  for (int d = 0; d < batch_rank; ++d) aligned = aligned && batch_strides[d] % 4 == 0;
  if (x_stride == 1 && k_stride % 4 == 0 && aligned) return Walk::VectorX;
  if (vector_k && k_stride == 1 && x_stride % 4 == 0 && aligned) return Walk::VectorK;
  return k_stride == 1 ? Walk::AlongK : Walk::AlongX;
}

/// Gemm and MatMul: strided A'(m,k), B'(k,n) per batch; Gemm's epilogue when `gemm` is set.
struct MatrixProblem {
  int64_t M, N, K, batches;
  const float *a_data, *b_data, *c_data;
  float* y;
  int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  Walk a_walk, b_walk;
  bool gemm, has_c;
  float alpha, beta;
  StoreEpilogue epilogue;  // FusedMatMul's absorbed Add and Relu (no GELU chain: CudaFused), after the rounding
  int batch_rank;
  int64_t batch_dims[kMaxBatchDims], a_bstride[kMaxBatchDims], b_bstride[kMaxBatchDims];

  static constexpr bool kCostlyColumnLoads = false;  // B's tile is plain strided copies, as A's
  bool gathers() const { return false; }
  struct Batch {
    const float *a, *b;
    float* y;
  };
  __device__ Batch batch(int64_t z) const {
    int64_t ao = 0, bo = 0, rest = z;
    for (int d = batch_rank - 1; d >= 0; --d) {
      int64_t i = rest % batch_dims[d];
      rest /= batch_dims[d];
      ao += i * a_bstride[d];
      bo += i * b_bstride[d];
    }
    return {a_data + ao, b_data + bo, y + z * M * N};
  }
  __device__ float init(const Batch&, int64_t) const { return 0.0f; }
  using Column = int64_t;
  __device__ Column column(const Batch&, int64_t n) const { return n; }
  __device__ void store(const Batch& bt, Column n, int64_t m, float t) const {
    const float v =
        gemm ? arith::gemm_epilogue_f32(t, alpha, has_c, has_c ? c_data[m * c_rs + n * c_cs] : 0.0f, beta) : t;
    bt.y[m * N + n] = epilogue.active() ? epilogue.apply_without_chains(v, (bt.y - y) + m * N + n, n) : v;
  }

  /// Fills the shared tiles of one block: A'(k, m) and B'(k, n) as strided operands (whatever the core's stages).
  template <int BM, int BN, int kThreads, int>
  struct Loader {
    struct Shared {};
    gemm_core::StridedTileLoader<BM, kThreads, true> a;
    gemm_core::StridedTileLoader<BN, kThreads, false> b;
    __device__ Loader(const MatrixProblem& pr, const Batch& bt, int64_t m0, int64_t n0, Shared&, int64_t k_begin)
        : a({bt.a, pr.a_cs, pr.a_rs, pr.K, pr.M, pr.a_walk}, k_begin, m0),
          b({bt.b, pr.b_rs, pr.b_cs, pr.K, pr.N, pr.b_walk}, k_begin, n0) {}
    __device__ void begin() const {}
    /// Tile t of the block's k range.
    __device__ void load(float (*as)[BM + kPad], float (*bs)[BN + kPad], int64_t t) {
      a.load(as, t);
      b.load(bs, t);
    }
    __device__ void store(float (*as)[BM + kPad], float (*)[BN + kPad]) const { a.store(as); }
  };
};

/// Conv as implicit GEMM, one group per batch: A = the group's weights (cout_g x K), B(k, n) = the input tap of
/// k = (c, kd, kh, kw) for output pixel n, +0 in the padding. The images are folded into N (n = image * pixels +
/// pixel), so that small images (7x7 = 49 pixels) still fill 128-wide tiles.
struct ConvProblem {
  int64_t M, N, K, batches;
  arith::ConvDims g;
  const float *x, *w, *bias;
  float* y;
  // Per k: {offset of the tap's input from the pixel's origin within the (image, group), kd*dil, kh*dil, kw*dil};
  // the same for every output pixel, so computed once per conv (conv_taps_table) instead of per element.
  const int4* taps;
  int64_t pixels;  // output pixels per image
  // 1x1 kernel, stride 1, no pad, pixel planes a whole number of 16-byte vectors, x 16-byte aligned: B is read as
  // 16-byte runs of 4 pixels of one image instead of through the taps.
  bool vector;
  Walk w_walk;  // the weights as the strided operand A(k, m) = w[m * K + k]
  StoreEpilogue epilogue;  // FusedConv's absorbed Add and activation (Relu or HardSwish)

  static constexpr bool kCostlyColumnLoads = true;  // B's tile is gathered through the taps, or read per image
  bool gathers() const { return !vector; }
  struct Batch {
    int64_t grp;
  };
  __device__ Batch batch(int64_t z) const { return {z}; }
  __device__ float init(const Batch& bt, int64_t m) const { return bias ? bias[bt.grp * g.cout_g + m] : 0.0f; }
  /// The image of output column n (32-bit division when it fits: the 64-bit one is a long subroutine).
  __device__ int64_t image_of(int64_t n) const {
    return N <= UINT32_MAX ? int64_t(uint32_t(n) / uint32_t(pixels)) : n / pixels;
  }
  /// Where output column n starts in y: its image's first output plus its pixel.
  using Column = int64_t;
  __device__ Column column(const Batch&, int64_t n) const {
    const int64_t img = image_of(n);
    return img * g.c_out * pixels + (n - img * pixels);
  }
  __device__ void store(const Batch& bt, Column col, int64_t m, float t) const {
    const int64_t i = col + (bt.grp * g.cout_g + m) * pixels;
    y[i] = epilogue.active() ? epilogue.apply_without_chains(t, i, 0) : t;
  }
  /// The first input of (image, group) of output column n.
  __device__ const float* input_of(const Batch& bt, int64_t n) const {
    return x + (image_of(n) * g.c_in + bt.grp * g.cin_g) * (g.in[0] * g.in[1] * g.in[2]);
  }

  /// Fills the shared tiles of one block. A is a strided operand. For B each thread owns one column (vector: a run
  /// of 4 columns) for the whole k range, so the column's image and origin are decomposed once per block. The
  /// gather's taps come from shared memory: the taps of tile t + kStages - 1 stream in (cp.async) with tile t, so
  /// they are there when that tile's gather is issued, and no gather waits on a global load.
  template <int BM, int BN, int kThreads, int kStages>
  struct Loader {
    static constexpr int kTapSlots = 2 * kStages;  // tile t's taps in slot t % kTapSlots
    static_assert(kThreads % BN == 0 && kThreads >= kTileK, "each thread gathers one column");
    struct Shared {
      int4 taps[kTapSlots][kTileK];
    };
    const ConvProblem& pr;
    Shared& sh;
    gemm_core::StridedTileLoader<BM, kThreads, true> weights;
    const float* column;  // gather: the column's input (image, group) shifted to its origin; vector: its first pixel
    int64_t k_begin;
    int id0, ih0, iw0;  // gather: the column's origin o*stride - pad
    bool n_valid;

    __device__ Loader(const ConvProblem& pr_, const Batch& bt, int64_t m0_, int64_t n0, Shared& sh_, int64_t kb)
        : pr(pr_),
          sh(sh_),
          weights({pr_.w + bt.grp * pr_.g.cout_g * pr_.K, 1, pr_.K, pr_.K, pr_.M, pr_.w_walk}, kb, m0_),
          k_begin(kb) {
      const arith::ConvDims& g = pr.g;
      const int64_t n = n0 + (pr.vector ? threadIdx.x % (BN / 4) * 4 : threadIdx.x % BN);
      n_valid = n < pr.N;
      const int64_t pix = n - pr.image_of(n) * pr.pixels;
      if (pr.vector) {
        column = pr.input_of(bt, n) + pix;
        return;
      }
      const int64_t ow = pix % g.out[2], oh = pix / g.out[2] % g.out[1], od = pix / (g.out[2] * g.out[1]);
      id0 = int(od * g.stride[0] - g.pad[0]), ih0 = int(oh * g.stride[1] - g.pad[1]);
      iw0 = int(ow * g.stride[2] - g.pad[2]);
      column = pr.input_of(bt, n) + (int64_t(id0) * g.in[1] + ih0) * g.in[2] + iw0;
    }
    /// The taps of the first kStages - 1 tiles, which no earlier tile brings in.
    __device__ void begin() const {
      if (pr.vector) return;
      for (int e = threadIdx.x; e < (kStages - 1) * kTileK; e += kThreads) {
        const int64_t k = k_begin + e;
        sh.taps[e / kTileK][e % kTileK] = k < pr.K ? pr.taps[k] : make_int4(0, 0, 0, 0);
      }
    }
    /// Tile t of the block's k range.
    __device__ void load(float (*as)[BM + kPad], float (*bs)[BN + kPad], int64_t t) {
      const int64_t k0 = k_begin + t * kTileK;
      weights.load(as, t);
      if (pr.vector) return load_vectors(bs, k0);
      gather_taps(bs, k0, sh.taps[t % kTapSlots]);
      if (threadIdx.x < kTileK) {
        const int64_t ahead = t + kStages - 1, k = k_begin + ahead * kTileK + threadIdx.x;
        gemm_core::copy_16_async(&sh.taps[ahead % kTapSlots][threadIdx.x], k < pr.K ? pr.taps + k : pr.taps,
                                 k < pr.K);
      }
    }
    __device__ void store(float (*as)[BM + kPad], float (*)[BN + kPad]) const { weights.store(as); }
    __device__ void load_vectors(float (*bs)[BN + kPad], int64_t k0) const {
      constexpr int kRowsPerPass = kThreads * 4 / BN;
      const int nn = threadIdx.x % (BN / 4) * 4, kk0 = threadIdx.x / (BN / 4);
      const int64_t plane = pr.pixels;
#pragma unroll
      for (int l = 0; l < kTileK / kRowsPerPass; ++l) {
        const int kk = kk0 + l * kRowsPerPass;
        const int64_t k = k0 + kk;
        const bool valid = n_valid && k < pr.K;
        if (valid) {
          gemm_core::copy_f32x4_async(&bs[kk][nn], column + k * plane);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) gemm_core::copy_f32_async(&bs[kk][nn + j], pr.x, false);
        }
      }
    }
    __device__ void gather_taps(float (*bs)[BN + kPad], int64_t k0, const int4 (&taps)[kTileK]) const {
      constexpr int kRowsPerPass = kThreads / BN;
      const int nn = threadIdx.x % BN, kk0 = threadIdx.x / BN;
      const int in_d = int(pr.g.in[0]), in_h = int(pr.g.in[1]), in_w = int(pr.g.in[2]);
#pragma unroll
      for (int l = 0; l < kTileK / kRowsPerPass; ++l) {
        const int kk = kk0 + l * kRowsPerPass;
        const int4 t = taps[kk];
        const bool valid = n_valid && k0 + kk < pr.K && unsigned(id0 + t.y) < unsigned(in_d) &&
                           unsigned(ih0 + t.z) < unsigned(in_h) && unsigned(iw0 + t.w) < unsigned(in_w);
        gemm_core::copy_f32_async(&bs[kk][nn], valid ? column + t.x : pr.x, valid);
      }
    }
  };
};

// Contract: taps[k] for k = (c, kd, kh, kw) row-major = {c*plane + (kd*dil*H + kh*dil)*W + kw*dil, kd*dil, kh*dil,
// kw*dil}: where tap k of an output pixel lies relative to the pixel's origin (o*stride - pad).
__global__ void conv_taps_table(arith::ConvDims g, int64_t K, int4* taps) {
  const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= K) return;
  const int64_t per_c = g.kernel[0] * g.kernel[1] * g.kernel[2], c = k / per_c, r = k % per_c;
  const int64_t dd = r / (g.kernel[1] * g.kernel[2]) * g.dilation[0];
  const int64_t dh = r / g.kernel[2] % g.kernel[1] * g.dilation[1], dw = r % g.kernel[2] * g.dilation[2];
  const int64_t offset = c * g.in[0] * g.in[1] * g.in[2] + (dd * g.in[1] + dh) * g.in[2] + dw;
  taps[k] = make_int4(int(offset), int(dd), int(dh), int(dw));
}

int multiprocessors(const KernelContext& ctx) {
  int device = 0, count = 0;
  check(ctx, cudaGetDevice(&device), "cudaGetDevice");
  check(ctx, cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}

/// A block tile the GEMM core runs: BM x BN outputs, 8 x TN per thread, at least min_blocks blocks an SM
/// (gemm_core::TileShape).
struct TileChoice {
  int bm = 0, bn = 0, tn = 0, min_blocks = 1;
  bool operator==(const TileChoice&) const = default;
};

template <class... Shapes>
struct ShapeList {};
// No two shapes share (BM, BN, TN, min blocks): a TileChoice names one. 64x128x8/3 keeps its totals in shared memory
// (2 stages), so that 3 blocks fit an SM.
using GemmShapes =
    ShapeList<gemm_core::TileShape<128, 128, 8>, gemm_core::TileShape<128, 128, 4>,
              gemm_core::TileShape<64, 128, 8>, gemm_core::TileShape<64, 128, 8, 3, 2, gemm_core::Totals::InShared>,
              gemm_core::TileShape<64, 64, 8>, gemm_core::TileShape<64, 64, 4>, gemm_core::TileShape<64, 64, 4, 4>>;

/// Whether every shape of the list has its own (BM, BN, TN, min blocks).
template <class... Shapes>
constexpr bool names_are_unique(ShapeList<Shapes...>) {
  constexpr TileChoice names[] = {{Shapes::BM, Shapes::BN, Shapes::TN, Shapes::kMinBlocks}...};
  for (size_t i = 0; i < sizeof...(Shapes); ++i)
    for (size_t j = 0; j < i; ++j)
      if (names[i] == names[j]) return false;
  return true;
}
static_assert(names_are_unique(GemmShapes{}), "two GEMM shapes share a TileChoice");

/// f.template operator()<Shape>() for the shape of `tile` (one of GemmShapes).
template <class F, class... Shapes>
void with_shape(TileChoice tile, F&& f, ShapeList<Shapes...>) {
  const bool found = ((tile == TileChoice{Shapes::BM, Shapes::BN, Shapes::TN, Shapes::kMinBlocks}
                           ? (f.template operator()<Shapes>(), true)
                           : false) ||
                      ...);
  if (!found) throw std::logic_error("GEMM tile without a kernel");
}

/// LOCKSTEP_CUDA_GEMM_TILE=BMxBNxTN[/B] (e.g. 64x64x4/4, read once; B, the blocks per SM, 1 by default) forces one
/// tile of GemmShapes without split-K, for measuring tiles against each other; unset, run_gemm chooses. Every tile
/// gives the same bits.
std::optional<TileChoice> forced_tile() {
  static const std::optional<TileChoice> forced = []() -> std::optional<TileChoice> {
    const char* v = std::getenv("LOCKSTEP_CUDA_GEMM_TILE");
    if (!v || !*v) return std::nullopt;
    // sscanf: istream's operator>>(int&) crashed (SIGSEGV) in this module under torch's Python on the GPU machine.
    TileChoice t;
    char x1 = 0, x2 = 0, slash = 0, rest = 0;
    const int fields = std::sscanf(v, "%d%c%d%c%d%c%d%c", &t.bm, &x1, &t.bn, &x2, &t.tn, &slash, &t.min_blocks, &rest);
    bool known = false;
    std::string names;
    [&]<class... Shapes>(ShapeList<Shapes...>) {
      ((known = known || t == TileChoice{Shapes::BM, Shapes::BN, Shapes::TN, Shapes::kMinBlocks},
        names += (names.empty() ? "" : ", ") + std::to_string(Shapes::BM) + "x" + std::to_string(Shapes::BN) + "x" +
                 std::to_string(Shapes::TN) + "/" + std::to_string(Shapes::kMinBlocks)),
       ...);
    }(GemmShapes{});
    if ((fields != 5 && !(fields == 7 && slash == '/')) || x1 != 'x' || x2 != 'x' || !known)
      throw std::invalid_argument(std::string("LOCKSTEP_CUDA_GEMM_TILE='") + v + "': expected one of " + names);
    return t;
  }();
  return forced;
}

template <class Problem>
int64_t output_tiles(const Problem& prob, int bm, int bn) {
  return prob.batches * ((prob.M + bm - 1) / bm) * ((prob.N + bn - 1) / bn);
}

template <class Shape, bool kPartials, class Problem>
void launch_core(const KernelContext& ctx, const Problem& prob, const SplitK& split) {
  const int64_t n_tiles = (prob.N + Shape::BN - 1) / Shape::BN, m_tiles = (prob.M + Shape::BM - 1) / Shape::BM;
  dim3 grid(unsigned(n_tiles), unsigned(std::min<int64_t>(m_tiles, 65535)),
            unsigned(std::min<int64_t>(prob.batches * split.count, 65535)));
  const auto kernel = gemm_core::gemm_f32_sm80<Shape, kPartials, Problem>;
  constexpr size_t shared = sizeof(gemm_core::SharedMemory<Shape, Problem>);
  // Over 48 KB of shared memory per block needs the opt-in; the carveout lets several small blocks share an SM.
  check(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
        "cudaFuncSetAttribute");
  check(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared),
        "cudaFuncSetAttribute");
  kernel<<<grid, Shape::kThreads, shared, stream_of(ctx)>>>(prob, split);
  check_launch(ctx);
}

// The split-K workspace is at most this large; beyond it the problem has enough outputs to fill the GPU anyway.
constexpr int64_t kMaxPartialsBytes = int64_t(256) << 20;

/// Few output tiles and several chunks: how to spread the chunks over about two blocks per multiprocessor.
SplitK plan_split(int64_t tiles, int64_t chunks, int64_t outputs, int64_t sms) {
  SplitK split;
  if (tiles >= sms || chunks < 2 || outputs * chunks * int64_t(sizeof(float)) > kMaxPartialsBytes) return split;
  const int64_t wanted = std::min(chunks, (2 * sms + tiles - 1) / tiles);
  split.chunks = chunks;
  split.chunks_per_split = (chunks + wanted - 1) / wanted;
  split.count = (chunks + split.chunks_per_split - 1) / split.chunks_per_split;
  return split;
}

/// The split-K pair: chunk partials of every split, then their sums in chunk order.
template <class Shape, class Problem>
void launch_split(const KernelContext& ctx, const Problem& prob, SplitK split) {
  // Stream-ordered scratch: released once the kernels are queued, handed out again only to later work.
  std::shared_ptr<Buffer> partials =
      ctx.allocator->allocate(size_t(prob.batches * split.chunks * prob.M * prob.N) * sizeof(float));
  split.partials = static_cast<float*>(partials->data);
  launch_core<Shape, true>(ctx, prob, split);
  const int64_t outputs = prob.batches * prob.M * prob.N;
  gemm_core::gemm_sum_chunks_f32<Problem><<<unsigned(std::min<int64_t>((outputs + kThreadsPerBlock - 1) /
                                                                           kThreadsPerBlock, 1 << 20)),
                                            kThreadsPerBlock, 0, stream_of(ctx)>>>(prob, split);
  check_launch(ctx);
}

/// The share of its slots that a grid of `tiles` blocks keeps busy, `slots` blocks running at a time: the last
/// wave's empty slots count as lost.
double wave_fill(int64_t tiles, int64_t slots) {
  const int64_t waves = (tiles + slots - 1) / slots;
  return waves > 0 ? double(tiles) / double(waves * slots) : 1.0;
}

// A gathering Conv's rate on 64x128 tiles with the totals in shared memory, against 128x128 tiles with 8x4 per
// thread, both in full waves: ResNet-50's 3x3 convs at batch 128 on 28x28 and 14x14 planes, 0.94-0.95 (H100,
// bench/results/gpu-2026-12-07h/gemm_tiles.txt).
constexpr double kSharedTotalsGatherRate = 0.94;

/// The tile, and the split along k, of one problem; measured with every tile forced (bench/gpu_gemm.py --tiles: on
/// the H200, bench/results/gpu-gemm-tiles-2026-12-04/; on the H100, bench/results/gpu-2026-12-07h/):
/// - a gathering Conv (taps) with enough 128x128 tiles to fill half the multiprocessors (the gather costs more and
///   taller tiles share it over more rows): 128x128 with 8x4 outputs per thread (more warps hide the gather), unless
///   64x128 tiles with the totals in shared memory, three blocks an SM, keep more of the GPU busy in their last
///   wave (batch 32, 128 channels on 28x28: 0.348 -> 0.283 ms);
/// - a non-gathering Conv (1x1) with that many tiles: 64x128 with the totals in shared memory (batch 32,
///   64 -> 256 on 56x56: 0.288 -> 0.237 ms, against 128x128 with 8x8);
/// - a MatMul with 64x128 tiles for two blocks an SM: 64x128 with 8x8 and the totals in shared memory; on the H100
///   (2026-12-07, bench/gpu_core_variants/) 2% faster than with the totals in registers at 8192^3 and 5-33% faster
///   on BERT's batch-32 products, where 4096x768 outputs took 64x64 tiles before;
/// - short outputs (M <= 64) with 64x128 tiles for one block an SM: 64x128 with 8x8, its totals in shared memory
///   where the tiles fill every SM twice (batch 32, 64 channels on 56x56: 0.342 -> 0.300 ms);
/// - else, while 64x64 tiles fill every multiprocessor: 64x64 with 8x4 outputs per thread, whose small tiles
///   leave a short last wave;
/// - else the problem is small and split along k: 128x128 tiles where the outputs are tall and wide, else 64x64.
/// Narrow (N <= 64) or short (M <= 64) outputs skip the tiles that would mostly compute padding.
template <class Problem>
std::pair<TileChoice, SplitK> plan_gemm(const Problem& prob, int64_t sms) {
  if (const std::optional<TileChoice> forced = forced_tile()) return {*forced, {}};
  const int64_t chunks = (prob.K + arith::kDotChunk - 1) / arith::kDotChunk;
  const int64_t outputs = prob.batches * prob.M * prob.N;
  const bool wide = prob.N > 64, tall = prob.M > 64;
  const int64_t large_tiles = output_tiles(prob, 128, 128), half_tiles = output_tiles(prob, 64, 128);
  const TileChoice totals_in_shared{64, 128, 8, 3};
  if (Problem::kCostlyColumnLoads && tall && wide && large_tiles >= sms / 2) {
    if (!prob.gathers() ||
        wave_fill(half_tiles, 3 * sms) * kSharedTotalsGatherRate > wave_fill(large_tiles, sms))
      return {totals_in_shared, {}};
    return {{128, 128, 4}, {}};
  }
  if (!Problem::kCostlyColumnLoads && tall && wide && half_tiles >= 2 * sms) return {totals_in_shared, {}};
  // A MatMul's 8x4 threads fit 128 registers without spilling, so that four blocks share an SM; a Conv's gather
  // state does not (hundreds of bytes of spills), and it keeps the registers of one block an SM.
  const TileChoice small{64, 64, 4, Problem::kCostlyColumnLoads ? 1 : 4};
  if (!tall && wide && half_tiles >= 2 * sms) return {totals_in_shared, {}};
  if (!tall && wide && half_tiles >= sms) return {{64, 128, 8}, {}};
  if (output_tiles(prob, 64, 64) >= sms) return {small, {}};
  if (tall && wide) {
    const SplitK split = plan_split(large_tiles, chunks, outputs, sms);
    if (split.count > 1) return {{128, 128, 8}, split};
  }
  return {{64, 64, 8}, plan_split(output_tiles(prob, 64, 64), chunks, outputs, sms)};
}

template <class Problem>
void run_gemm(const KernelContext& ctx, const Problem& prob) {
  if (prob.M <= 0 || prob.N <= 0 || prob.batches <= 0) return;
  if ((prob.N + 63) / 64 > 0x7fffffff) throw ctx.error("output too wide for the CUDA GEMM", ErrorCode::NotImplemented);
  const auto [tile, split] = plan_gemm(prob, multiprocessors(ctx));
  with_shape(
      tile,
      [&]<class Shape>() {
        if (split.count > 1)
          launch_split<Shape>(ctx, prob, split);
        else
          launch_core<Shape, false>(ctx, prob, {});
      },
      GemmShapes{});
}

// Integer MatMul: exact wrapping arithmetic, one thread per output.
template <typename T>
__global__ void matmul_int(MatrixProblem shape, const T* a, const T* b, T* y, int64_t total) {
  using U = typename std::make_unsigned<T>::type;
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  int64_t n = i % shape.N, m = (i / shape.N) % shape.M, z = i / (shape.N * shape.M);
  int64_t ao = 0, bo = 0, rest = z;
  for (int d = shape.batch_rank - 1; d >= 0; --d) {
    int64_t idx = rest % shape.batch_dims[d];
    rest /= shape.batch_dims[d];
    ao += idx * shape.a_bstride[d];
    bo += idx * shape.b_bstride[d];
  }
  U acc = 0;
  for (int64_t k = 0; k < shape.K; ++k) acc += U(a[ao + m * shape.K + k]) * U(b[bo + k * shape.N + n]);
  y[i] = T(acc);
}

}  // namespace

// Contract: dot_chunked_f32 over k = (c_in, kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void conv_implicit_gemm(const KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const float* bias, float* y, const StoreEpilogue& epilogue) {
  ConvProblem prob{};
  prob.epilogue = epilogue;
  prob.M = g.cout_g, prob.pixels = g.out_pixels(), prob.N = g.batch * prob.pixels, prob.K = g.K();
  prob.batches = g.group;
  prob.g = g.dims(), prob.x = x, prob.w = w, prob.bias = bias, prob.y = y;
  bool pointwise = true;
  for (int i = 0; i < 3; ++i) pointwise = pointwise && g.kernel[i] == 1 && g.stride[i] == 1 && g.pad[i] == 0;
  prob.vector = pointwise && g.in_pixels() % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  prob.w_walk = walk_of(w, 1, prob.K, nullptr, 0, true);
  std::shared_ptr<Buffer> taps;
  if (!prob.vector && prob.K > 0) {
    // The gather indexes one (image, group) of the input with 32-bit offsets.
    if (g.cin_g * g.in_pixels() > INT_MAX)
      throw ctx.error("Conv input image too large for the CUDA implicit GEMM", ErrorCode::NotImplemented);
    taps = ctx.allocator->allocate(size_t(prob.K) * sizeof(int4));
    prob.taps = static_cast<const int4*>(taps->data);
    conv_taps_table<<<blocks_for(prob.K), kThreadsPerBlock, 0, stream_of(ctx)>>>(prob.g, prob.K,
                                                                                 static_cast<int4*>(taps->data));
    check_launch(ctx);
  }
  run_gemm(ctx, prob);
}

// Contract: dot_chunked_f32 over k ascending, init +0, then gemm_epilogue_f32; see docs/arithmetic.md#gemm.
void gemm(KernelContext& ctx) {
  GemmParams p = gemm_params(ctx);
  Tensor& y = ctx.output(0, DType::Float, p.out_shape);
  if (y.numel() == 0) return;
  MatrixProblem prob{};
  prob.M = p.M, prob.N = p.N, prob.K = p.K, prob.batches = 1;
  prob.a_data = ctx.input(0).data<float>(), prob.b_data = ctx.input(1).data<float>();
  prob.c_data = p.has_c ? ctx.input(2).data<float>() : nullptr;
  prob.y = y.data<float>();
  prob.a_rs = p.a_rs, prob.a_cs = p.a_cs, prob.b_rs = p.b_rs, prob.b_cs = p.b_cs, prob.c_rs = p.c_rs,
  prob.c_cs = p.c_cs;
  prob.gemm = true, prob.has_c = p.has_c, prob.alpha = p.alpha, prob.beta = p.beta;
  prob.a_walk = walk_of(prob.a_data, prob.a_cs, prob.a_rs, nullptr, 0, true);
  prob.b_walk = walk_of(prob.b_data, prob.b_rs, prob.b_cs, nullptr, 0, false);
  run_gemm(ctx, prob);
}

// Contract: dot_chunked_f32 over k ascending, init +0; see docs/arithmetic.md#matmul.
void batched_product_f32(const KernelContext& ctx, const BatchedProduct& p) {
  if (p.batch_dims.size() > size_t(kMaxBatchDims))
    throw ctx.error("a product with more than " + std::to_string(kMaxBatchDims) + " batch dims",
                    ErrorCode::NotImplemented);
  MatrixProblem prob{};
  prob.M = p.M, prob.N = p.N, prob.K = p.K, prob.batches = 1;
  prob.a_data = p.a, prob.b_data = p.b, prob.y = p.y;
  prob.a_rs = p.a_rs, prob.a_cs = p.a_cs, prob.b_rs = p.b_rs, prob.b_cs = p.b_cs;
  prob.batch_rank = int(p.batch_dims.size());
  for (int d = 0; d < prob.batch_rank; ++d)
    prob.batch_dims[d] = p.batch_dims[d], prob.a_bstride[d] = p.a_batch_strides[d],
    prob.b_bstride[d] = p.b_batch_strides[d], prob.batches *= p.batch_dims[d];
  prob.a_walk = walk_of(prob.a_data, prob.a_cs, prob.a_rs, prob.a_bstride, prob.batch_rank, true);
  prob.b_walk = walk_of(prob.b_data, prob.b_rs, prob.b_cs, prob.b_bstride, prob.batch_rank, false);
  prob.epilogue = p.epilogue;
  run_gemm(ctx, prob);
}

// Contract: dot_chunked_f32 over k ascending, init +0; see docs/arithmetic.md#matmul.
void matmul(KernelContext& ctx) { matmul_with_epilogue(ctx, matmul_params(ctx), {}); }

// Contract: as matmul, then the epilogue per output (FusedMatMul); see docs/arithmetic.md#graph-rewrites.
void matmul_with_epilogue(KernelContext& ctx, const MatMulParams& p, const StoreEpilogue& epilogue) {
  const Tensor& at = ctx.input(0);
  Tensor& y = ctx.output(0, at.dtype(), p.out_shape);
  if (y.numel() == 0) return;
  if (p.batch_dims.size() > size_t(kMaxBatchDims))
    throw ctx.error("MatMul with more than " + std::to_string(kMaxBatchDims) + " batch dims",
                    ErrorCode::NotImplemented);
  if (at.dtype() == DType::Float) {
    batched_product_f32(ctx, {p.M, p.N, p.K, at.data<float>(), p.K, 1, ctx.input(1).data<float>(), p.N, 1,
                              y.data<float>(), p.batch_dims, p.a_batch_strides, p.b_batch_strides, epilogue});
    return;
  }
  if (epilogue.active()) throw ctx.error("a fused epilogue on an integer MatMul", ErrorCode::InvalidGraph);
  MatrixProblem prob{};
  prob.M = p.M, prob.N = p.N, prob.K = p.K, prob.batches = p.batch;
  prob.batch_rank = int(p.batch_dims.size());
  for (int d = 0; d < prob.batch_rank; ++d)
    prob.batch_dims[d] = p.batch_dims[d], prob.a_bstride[d] = p.a_batch_strides[d],
    prob.b_bstride[d] = p.b_batch_strides[d];
  const int64_t total = y.numel();
  if (at.dtype() == DType::Int32)
    matmul_int<int32_t><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        prob, at.data<int32_t>(), ctx.input(1).data<int32_t>(), y.data<int32_t>(), total);
  else
    matmul_int<int64_t><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        prob, at.data<int64_t>(), ctx.input(1).data<int64_t>(), y.data<int64_t>(), total);
  check_launch(ctx);
}

namespace {
// Contract: one output element per thread, einsum_element itself; docs/arithmetic.md#einsum.
template <typename T>
__global__ void einsum_step_thread(EinsumStep s, const T* a, const T* b, T* out) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o < s.n_out) out[o] = einsum_element(s, a, b, o);
}
struct CudaEinsum {
  template <typename T>
  static void einsum_step(KernelContext& ctx, const EinsumStep& s, const T* a, const T* b, T* out) {
    einsum_step_thread<T><<<blocks_for(s.n_out), kThreadsPerBlock, 0, stream_of(ctx)>>>(s, a, b, out);
    check_launch(ctx);
  }
};
}  // namespace

// Contract: Einsum as planned Copy/Sum/Dot steps (docs/arithmetic.md#einsum).
void einsum(KernelContext& ctx) { run_einsum<CudaEinsum>(ctx); }

namespace {
// Contract: det_in_place_f32, one thread per matrix on its copy in `scratch`; see docs/arithmetic.md#det.
__global__ void det_kernel(float* __restrict__ scratch, float* __restrict__ y, int64_t m, int64_t count) {
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < count; b += int64_t(gridDim.x) * blockDim.x)
    y[b] = arith::det_in_place_f32(scratch + b * m * m, m);
}
}  // namespace

void det(KernelContext& ctx) {
  Shape out_shape;
  const int64_t m = det_plan(ctx, &out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  const Tensor& x = ctx.input(0);
  if (y.numel() == 0) return;
  auto scratch = ctx.allocator->allocate(x.bytes() ? x.bytes() : 1);  // 0 x 0 matrices: det 1, nothing to copy
  if (x.bytes())
    check(ctx, cudaMemcpyAsync(scratch->data, x.raw(), x.bytes(), cudaMemcpyDeviceToDevice, stream_of(ctx)),
          "cudaMemcpyAsync");
  det_kernel<<<blocks_for(y.numel()), kThreadsPerBlock, 0, stream_of(ctx)>>>(static_cast<float*>(scratch->data),
                                                                             y.data<float>(), m, y.numel());
  check_launch(ctx);
}

}  // namespace lockstep::cuda
