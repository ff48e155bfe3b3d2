// The SIMT GEMM core shared by MatMul, Gemm and Conv (implicit GEMM): block tiles of BM x BN outputs, 8 x TN
// outputs per thread, k in shared-memory tiles of kTileK filled by cp.async kStages deep.
//
// What keeps each output's canonical k order (dot_chunked_f32, docs/arithmetic.md#gemm): one thread owns an
// output for the whole k range; it keeps the chunk partial p in registers and the running total in registers or, for
// tiles that trade them for more blocks an SM, in its own slots of shared memory, and walks k ascending, one fma per
// k (arith::fma_f32 = __fmaf_rn; the build's --fmad=false keeps every other a*b+c unfused).
// kTileK divides kDotChunk, so every chunk ends exactly at a tile end or at the end of the k range: there
// total = total + p and p = +0. The k loop stops at the range end exactly: zero-filled shared memory past K is
// never multiplied (fma(0, 0, -0) would turn a -0 partial into +0).
//
// Split-K (kPartials) cuts k only at chunk boundaries: a split computes the partial p of each chunk of its range
// from +0, exactly as above, and stores it instead of adding it; gemm_sum_chunks_f32 then adds the partials to the
// init in ascending chunk order, which is the same sequence of operations, so the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arith/reduce.h"
#include "cuda/common.cuh"

namespace lockstep::cuda::gemm_core {

// 16-deep k tiles, one barrier per 16 k. A thread of 8x8 outputs holds 128 registers of p and totals, so a 128x128
// block (8 warps) runs alone on an SM with up to 255 registers; 8x4 outputs per thread give the same block 16 warps
// of up to 128 registers.
constexpr int kTileK = 16;
constexpr int kPad = 4;  // floats of padding per shared row: rows stay 16-byte aligned for float4 reads
static_assert(arith::kDotChunk % kTileK == 0, "a chunk must end at a tile end");

/// kStages stages of the A tile (k-major: a[k][m]) and the B tile (b[k][n]).
template <int BM, int BN, int kStages>
struct SharedTiles {
  float a[kStages][kTileK][BM + kPad];
  float b[kStages][kTileK][BN + kPad];
};

// --- cp.async (sm_80+): global -> shared without passing through registers.

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}
/// One float, or +0 when !valid (src is then not read, but must still be a valid address).
__device__ __forceinline__ void copy_f32_async(float* dst, const float* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst)), "l"(src),
               "r"(valid ? 4 : 0));
}
/// Four floats; dst and src 16-byte aligned.
__device__ __forceinline__ void copy_f32x4_async(float* dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)), "l"(src));
}
/// 16 bytes, or zeros when !valid; dst and src 16-byte aligned (src still a valid address when !valid).
__device__ __forceinline__ void copy_16_async(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// --- Strided operands.

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }


/// How a strided operand's tile is read: 16-byte vectors along x (x stride 1, rows 16-byte aligned), 16-byte vectors
/// along k (k stride 1, x stride a multiple of 4, base aligned; through registers, stored transposed), or single
/// floats with consecutive threads walking k (k stride 1) or x (anything else), so that a warp reads runs of
/// consecutive addresses.
enum class Walk : int { VectorX, VectorK, AlongK, AlongX };

/// An operand seen as op(k, x) = base[k * k_stride + x * x_stride], k < K, x < X (x is m for A, n for B).
struct StridedOperand {
  const float* base;
  int64_t k_stride, x_stride, K, X;
  Walk walk;
};

/// One thread's share of the tiles op(k0 .. k0+kTileK, x0 .. x0+BX) -> tile[k][x] of a block, +0 outside K and X.
/// The thread's copies sit at fixed offsets (compile-time multiples of the strides) from one source address that
/// is worked out once per block and moves by kTileK rows per tile, so a copy costs an address add, two compares and
/// the cp.async.
/// kStaged: the operand may walk VectorK (copies through registers: load() reads them, store() writes them).
template <int BX, int kThreads, bool kStaged>
class StridedTileLoader {
  static_assert(kTileK * BX % (4 * kThreads) == 0 && kThreads % BX == 0, "every thread issues the same copies");
  static constexpr int kVectorsPerRow = BX / 4;
  // VectorK: 4 threads read the 4 runs of 4 k of one x, kThreads / 4 x per pass.
  static_assert(kTileK == 16, "VectorK takes 4 runs of 4 k per tile");
  static constexpr int kStagedXPerPass = kThreads / 4, kStagedPasses = BX / kStagedXPerPass;
  static_assert(BX % kStagedXPerPass == 0, "a pass of staged runs covers whole runs of x");
  // Along k, 8 consecutive threads take 8 consecutive k of one x (one 32-byte sector); the warp's 4 x land in 32
  // distinct banks of the (BX + kPad)-wide rows.
  static constexpr int kRun = 8, kXPerPass = kThreads / kRun, kPassesPerRun = BX / kXPerPass;
  static_assert(BX % kXPerPass == 0, "a pass covers whole runs of x");

 public:
  /// The tiles of k_begin, k_begin + kTileK, ... of the block whose first x is x0.
  __device__ StridedTileLoader(const StridedOperand& op, int64_t k_begin, int64_t x0)
      : op_(op), k_begin_(k_begin), x_left_(int(min64(op.X - x0, BX))),
        full_tiles_(x_left_ == BX ? (op.K - k_begin) / kTileK : 0) {
    const int tid = threadIdx.x;
    if (op.walk == Walk::VectorX)
      kk0_ = tid / kVectorsPerRow, xx0_ = tid % kVectorsPerRow * 4;
    else if (kStaged && op.walk == Walk::VectorK)
      kk0_ = tid % 4 * 4, xx0_ = tid / 4;
    else if (op.walk == Walk::AlongK)
      kk0_ = tid % kRun, xx0_ = tid / kRun;
    else
      kk0_ = tid / BX, xx0_ = tid % BX;
    src_ = op.base + (k_begin + kk0_) * op.k_stride + (x0 + xx0_) * op.x_stride;
  }

  /// Issues the copies of tile t (VectorK: reads it into registers, for store()).
  __device__ void load(float (*tile)[BX + kPad], int64_t t) {
    const float* src = src_ + t * kTileK * op_.k_stride;
    if (t < full_tiles_) return load_interior(tile, src);
    const int k_left = int(min64(op_.K - k_begin_ - t * kTileK, kTileK));
    if (kStaged && op_.walk == Walk::VectorK) {
#pragma unroll
      for (int l = 0; l < kStagedPasses; ++l) staged_[l] = read_run(src + l * kStagedXPerPass * op_.x_stride,
                                                                    xx0_ + l * kStagedXPerPass < x_left_, k_left);
    } else if (op_.walk == Walk::VectorX) {
      constexpr int kRowsPerPass = kThreads / kVectorsPerRow;
#pragma unroll
      for (int l = 0; l < kTileK / kRowsPerPass; ++l) {
        const int kk = kk0_ + l * kRowsPerPass;
        const float* s = src + l * kRowsPerPass * op_.k_stride;
        if (kk < k_left && xx0_ + 4 <= x_left_) {
          copy_f32x4_async(&tile[kk][xx0_], s);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const bool valid = kk < k_left && xx0_ + j < x_left_;
            copy_f32_async(&tile[kk][xx0_ + j], valid ? s + j : op_.base, valid);
          }
        }
      }
    } else if (op_.walk == Walk::AlongK) {
#pragma unroll
      for (int l = 0; l < kTileK * BX / kThreads; ++l) {
        const int dk = l / kPassesPerRun * kRun, dx = l % kPassesPerRun * kXPerPass;
        const bool valid = kk0_ + dk < k_left && xx0_ + dx < x_left_;
        copy_f32_async(&tile[kk0_ + dk][xx0_ + dx], valid ? src + dk * op_.k_stride + dx * op_.x_stride : op_.base,
                       valid);
      }
    } else {
      constexpr int kRowsPerPass = kThreads / BX;
#pragma unroll
      for (int l = 0; l < kTileK / kRowsPerPass; ++l) {
        const int kk = kk0_ + l * kRowsPerPass;
        const bool valid = kk < k_left && xx0_ < x_left_;
        copy_f32_async(&tile[kk][xx0_], valid ? src + l * kRowsPerPass * op_.k_stride : op_.base, valid);
      }
    }
  }

  /// VectorK: writes the tile that the last load() read into registers, one k row per float.
  __device__ void store(float (*tile)[BX + kPad]) const {
    if (!kStaged || op_.walk != Walk::VectorK) return;
#pragma unroll
    for (int l = 0; l < kStagedPasses; ++l) {
      const int xx = xx0_ + l * kStagedXPerPass;
      tile[kk0_][xx] = staged_[l].x, tile[kk0_ + 1][xx] = staged_[l].y;
      tile[kk0_ + 2][xx] = staged_[l].z, tile[kk0_ + 3][xx] = staged_[l].w;
    }
  }

 private:
  /// A tile wholly inside K and X (most of them): the same copies as load() without a bounds check.
  __device__ void load_interior(float (*tile)[BX + kPad], const float* src) {
    if (kStaged && op_.walk == Walk::VectorK) {
#pragma unroll
      for (int l = 0; l < kStagedPasses; ++l)
        staged_[l] = __ldg(reinterpret_cast<const float4*>(src + l * kStagedXPerPass * op_.x_stride));
    } else if (op_.walk == Walk::VectorX) {
      constexpr int kRowsPerPass = kThreads / kVectorsPerRow;
#pragma unroll
      for (int l = 0; l < kTileK / kRowsPerPass; ++l)
        copy_f32x4_async(&tile[kk0_ + l * kRowsPerPass][xx0_], src + l * kRowsPerPass * op_.k_stride);
    } else if (op_.walk == Walk::AlongK) {
#pragma unroll
      for (int l = 0; l < kTileK * BX / kThreads; ++l) {
        const int dk = l / kPassesPerRun * kRun, dx = l % kPassesPerRun * kXPerPass;
        copy_f32_async(&tile[kk0_ + dk][xx0_ + dx], src + dk * op_.k_stride + dx * op_.x_stride, true);
      }
    } else {
      constexpr int kRowsPerPass = kThreads / BX;
#pragma unroll
      for (int l = 0; l < kTileK / kRowsPerPass; ++l)
        copy_f32_async(&tile[kk0_ + l * kRowsPerPass][xx0_], src + l * kRowsPerPass * op_.k_stride, true);
    }
  }

  /// The run of 4 k from src (this thread's k offset kk0_ in a tile with k_left rows); +0 outside K and X.
  __device__ float4 read_run(const float* src, bool x_valid, int k_left) const {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (x_valid && kk0_ + 4 <= k_left) return __ldg(reinterpret_cast<const float4*>(src));
    if (x_valid && kk0_ < k_left) {
      v.x = src[0];
      if (kk0_ + 1 < k_left) v.y = src[1];
      if (kk0_ + 2 < k_left) v.z = src[2];
    }
    return v;
  }

  StridedOperand op_;
  int64_t k_begin_;
  int x_left_;
  int64_t full_tiles_;  // tiles 0 .. full_tiles_-1 lie wholly inside K and X
  const float* src_;  // the thread's first copy of tile 0
  int kk0_, xx0_;
  float4 staged_[kStaged ? kStagedPasses : 1];
};

// --- The core.

/// The outputs of thread (ty, tx) along a tile side of B outputs, T per thread: runs of 4 at t*4 + {0..3} in each of
/// the T/4 parts of the side (T = 8: t*4 + {0..3} and B/2 + t*4 + {0..3}), so that the fragments below are float4
/// reads and a warp's reads of one row are consecutive.
template <int B, int T>
__device__ __forceinline__ int thread_offset(int t, int i) {
  static_assert(T == 4 || T == 8 || T == 16, "4, 8 or 16 outputs per thread along a side");
  return i / 4 * (B * 4 / T) + t * 4 + (i & 3);
}

/// The fragments of k row kk: thread (ty, tx)'s 8 values of a and TN of b (see thread_offset).
template <int BM, int BN, int TN>
__device__ __forceinline__ void load_fragments(const float (*as)[BM + kPad], const float (*bs)[BN + kPad], int kk,
                                               int ty, int tx, float (&a)[8], float (&b)[TN]) {
  *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(&as[kk][ty * 4]);
  *reinterpret_cast<float4*>(&a[4]) = *reinterpret_cast<const float4*>(&as[kk][BM / 2 + ty * 4]);
#pragma unroll
  for (int q = 0; q < TN / 4; ++q)
    *reinterpret_cast<float4*>(&b[q * 4]) =
        *reinterpret_cast<const float4*>(&bs[kk][thread_offset<BN, TN>(tx, q * 4)]);
}

template <int TN>
__device__ __forceinline__ void outer_product(const float (&a)[8], const float (&b)[TN], float (&p)[8][TN]) {
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) p[i][j] = arith::fma_f32(a[i], b[j], p[i][j]);
}

/// p[i][j] = fma(a(k, m_i), b(k, n_j), p[i][j]) for the tile's k = 0 .. kTileK-1 in ascending order; the
/// fragments of k + 1 are read while k is multiplied.
template <int BM, int BN, int TN>
__device__ __forceinline__ void multiply_tile(const float (*as)[BM + kPad], const float (*bs)[BN + kPad],
                                              float (&p)[8][TN], int ty, int tx) {
  float a[2][8], b[2][TN];
  load_fragments<BM, BN, TN>(as, bs, 0, ty, tx, a[0], b[0]);
#pragma unroll
  for (int kk = 0; kk < kTileK; ++kk) {
    if (kk + 1 < kTileK) load_fragments<BM, BN, TN>(as, bs, kk + 1, ty, tx, a[(kk + 1) % 2], b[(kk + 1) % 2]);
    outer_product<TN>(a[kk % 2], b[kk % 2], p);
  }
}

/// multiply_tile for k = 0 .. kTileK-2 only, from the fragments of k = 0 already in a[0], b[0]: those of the last
/// row, kTileK-1, are left in a[1], b[1] (kTileK is even) for the caller to multiply once it has read the next
/// tile's first fragments into a[0], b[0].
template <int BM, int BN, int TN>
__device__ __forceinline__ void multiply_tile_but_last(const float (*as)[BM + kPad], const float (*bs)[BN + kPad],
                                                       float (&p)[8][TN], int ty, int tx, float (&a)[2][8],
                                                       float (&b)[2][TN]) {
  static_assert(kTileK % 2 == 0, "the last row's fragments land in buffer 1");
#pragma unroll
  for (int kk = 0; kk + 1 < kTileK; ++kk) {
    load_fragments<BM, BN, TN>(as, bs, kk + 1, ty, tx, a[(kk + 1) % 2], b[(kk + 1) % 2]);
    outer_product<TN>(a[kk % 2], b[kk % 2], p);
  }
}

/// The same for the last tile of a k range, which holds only its first kmax < kTileK rows.
template <int BM, int BN, int TN>
__device__ __forceinline__ void multiply_tile_head(const float (*as)[BM + kPad], const float (*bs)[BN + kPad],
                                                   float (&p)[8][TN], int ty, int tx, int kmax) {
#pragma unroll 1
  for (int kk = 0; kk < kmax; ++kk) {
    float a[8], b[TN];
    load_fragments<BM, BN, TN>(as, bs, kk, ty, tx, a, b);
    outer_product<TN>(a, b, p);
  }
}

/// Split-K plan: blockIdx.z walks (batch, split) pairs; split s covers chunks [s*chunks_per_split, ...).
/// partials: per (batch, chunk, m, n) chunk partial, written when kPartials.
struct SplitK {
  int64_t count = 1, chunks_per_split = 0, chunks = 0;
  float* partials = nullptr;
};

/// Where a thread keeps its running totals between chunk ends.
enum class Totals { InRegisters, InShared };

/// A block tile of BM x BN outputs, 8 x TN per thread (TN = 8: 64 outputs, 128 registers of partials and totals;
/// TN = 4 halves that, for twice the threads and so twice the warps to hide latency). kMinBlocks: the blocks an SM
/// must be able to hold, which bounds the registers a thread may take (65536 / (kMinBlocks * kThreads)).
/// kStages: k tiles in flight, 4 (48 k stream in while 16 are multiplied) or 2 (the next tile streams in while this
/// one is multiplied, for half the shared memory).
/// Totals::InShared: each thread's totals live in shared memory, read, added to and written back at each chunk end
/// (every 64 k: 16 LDS.128, 64 FADD and 16 STS.128 for 8x8 outputs, against 4,096 FFMA). A 64x128 tile of 8x8 then
/// takes 166 registers instead of 243: 3 blocks an SM (12 warps) instead of 2, with 2 stages (57 KB a block).
/// TN = 16 (128 outputs a thread, 6 fragment reads per 128 FFMA instead of 4 per 64) needs the totals in shared
/// memory: a 128x128 tile then takes 247 registers and 98 KB, 2 blocks an SM (bench/gpu_gemm_core.cu times it).
template <int BM_, int BN_, int TN_, int kMinBlocks_ = 1, int kStages_ = 4, Totals kTotals_ = Totals::InRegisters>
struct TileShape {
  static constexpr int BM = BM_, BN = BN_, TN = TN_, kMinBlocks = kMinBlocks_, kStages = kStages_;
  static constexpr bool kTotalsInShared = kTotals_ == Totals::InShared;
  static constexpr int kThreadsN = BN / TN;
  static constexpr int kThreads = BM / 8 * kThreadsN;
  static_assert(kStages == 2 || kStages == 4, "the stage of tile t is t % kStages");
};

/// Stores each output's partial of one chunk (split-K), laid out (batch, chunk, m, n).
template <class Shape, class Problem>
__device__ __forceinline__ void store_partials(const Problem& prob, const SplitK& split, int64_t batch,
                                               int64_t chunk, int64_t m0, int64_t n0, int ty, int tx,
                                               const float (&p)[8][Shape::TN]) {
  float* out = split.partials + (batch * split.chunks + chunk) * prob.M * prob.N;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < Shape::TN; ++j) {
      const int64_t m = m0 + thread_offset<Shape::BM, 8>(ty, i), n = n0 + thread_offset<Shape::BN, Shape::TN>(tx, j);
      if (m < prob.M && n < prob.N) out[m * prob.N + n] = p[i][j];
    }
}

/// prob.store(total) per output. Column by column, so that where a column lies in the output is worked out once
/// for its 8 rows.
template <class Shape, class Problem>
__device__ __forceinline__ void store_outputs(const Problem& prob, const typename Problem::Batch& bt, int64_t m0,
                                              int64_t n0, int ty, int tx, const float (&total)[8][Shape::TN]) {
#pragma unroll
  for (int j = 0; j < Shape::TN; ++j) {
    const int64_t n = n0 + thread_offset<Shape::BN, Shape::TN>(tx, j);
    if (n >= prob.N) continue;
    const typename Problem::Column col = prob.column(bt, n);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int64_t m = m0 + thread_offset<Shape::BM, 8>(ty, i);
      if (m < prob.M) prob.store(bt, col, m, total[i][j]);
    }
  }
}

/// Totals::InShared at a chunk end: total = total + p for each of the thread's outputs.
template <int TN, int kRows>
__device__ __forceinline__ void add_to_shared_totals(float4 (*totals)[kRows], const float (&p)[8][TN]) {
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int q = 0; q < TN / 4; ++q) {
      float4 v = totals[i * (TN / 4) + q][threadIdx.x];
      v.x = v.x + p[i][q * 4], v.y = v.y + p[i][q * 4 + 1], v.z = v.z + p[i][q * 4 + 2], v.w = v.w + p[i][q * 4 + 3];
      totals[i * (TN / 4) + q][threadIdx.x] = v;
    }
}

/// Totals::InShared after the last chunk: the thread's totals back into registers, for store_outputs.
template <int TN, int kRows>
__device__ __forceinline__ void read_shared_totals(const float4 (*totals)[kRows], float (&total)[8][TN]) {
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int q = 0; q < TN / 4; ++q) {
      const float4 v = totals[i * (TN / 4) + q][threadIdx.x];
      total[i][q * 4] = v.x, total[i][q * 4 + 1] = v.y, total[i][q * 4 + 2] = v.z, total[i][q * 4 + 3] = v.w;
    }
}

/// The block's shared memory: the k-tile stages and what the problem's loader keeps there.
template <class Shape, class Problem>
struct SharedMemory {
  SharedTiles<Shape::BM, Shape::BN, Shape::kStages> tiles;
  typename Problem::template Loader<Shape::BM, Shape::BN, Shape::kThreads, Shape::kStages>::Shared loader;
  // Totals::InShared: thread t's totals of row i, columns 4q .. 4q+3, at totals[i * TN / 4 + q][t], so that a warp's
  // float4 accesses are consecutive and conflict-free.
  float4 totals[Shape::kTotalsInShared ? 8 * Shape::TN / 4 : 1][Shape::kTotalsInShared ? Shape::kThreads : 1];
};

// Contract: per output, dot_chunked_f32 over k ascending with init = prob.init(m) (or, kPartials, each chunk's
// partial p into split.partials); see docs/arithmetic.md#gemm.
template <class Shape, bool kPartials, class Problem>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    gemm_f32_sm80(const __grid_constant__ Problem prob, const __grid_constant__ SplitK split) {
  constexpr int BM = Shape::BM, BN = Shape::BN, TN = Shape::TN, kStages = Shape::kStages;
  constexpr bool kTotalsInShared = Shape::kTotalsInShared && !kPartials;
  extern __shared__ float4 shared_words[];
  SharedMemory<Shape, Problem>& sm = *reinterpret_cast<SharedMemory<Shape, Problem>*>(shared_words);
  // A warp covers 4 x 8 threads: its fragment reads are 4 distinct float4 of A and 8 of B (128 bytes), one
  // shared-memory wavefront each, where a 2 x 16 warp would need two for B.
  constexpr int kWarpsN = Shape::kThreadsN / 8;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int tx = warp % kWarpsN * 8 + lane % 8, ty = warp / kWarpsN * 4 + lane / 8;
  const int64_t M = prob.M, K = prob.K;
  const int64_t m_tiles = (M + BM - 1) / BM;
  for (int64_t z = blockIdx.z; z < prob.batches * split.count; z += gridDim.z)
    for (int64_t mt = blockIdx.y; mt < m_tiles; mt += gridDim.y) {
      const int64_t batch = z / split.count, s = z % split.count;
      const int64_t k_begin = kPartials ? s * split.chunks_per_split * arith::kDotChunk : 0;
      const int64_t k_end = kPartials ? min64(K, k_begin + split.chunks_per_split * arith::kDotChunk) : K;
      const int64_t m0 = mt * BM, n0 = int64_t(blockIdx.x) * BN;
      const typename Problem::Batch bt = prob.batch(batch);
      typename Problem::template Loader<BM, BN, Shape::kThreads, kStages> loader(prob, bt, m0, n0, sm.loader, k_begin);
      float p[8][TN], total[8][TN];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t m = m0 + thread_offset<BM, 8>(ty, i);
        const float init = !kPartials && m < M ? prob.init(bt, m) : 0.0f;
#pragma unroll
        for (int j = 0; j < TN; ++j) total[i][j] = init, p[i][j] = 0.0f;
        if constexpr (kTotalsInShared)
#pragma unroll
          for (int q = 0; q < TN / 4; ++q)
            sm.totals[i * (TN / 4) + q][threadIdx.x] = make_float4(init, init, init, init);
      }
      const int64_t tiles = (k_end - k_begin + kTileK - 1) / kTileK;
      // The previous output tile's stages are no longer read, and no copy it issued ahead is still landing.
      async_wait<0>();
      __syncthreads();
      loader.begin();
      __syncthreads();
      // Registers staged by load() are stored one iteration later (tile t + kStages - 2 at iteration t), once the
      // barrier has freed their stage, so the global reads have a tile's compute to land; with 2 stages, those of
      // tile t + 1 once tile t is multiplied, into the stage nobody reads then.
#pragma unroll
      for (int t = 0; t < kStages - 1; ++t) {
        if (t < tiles) loader.load(sm.tiles.a[t], sm.tiles.b[t], t);
        if (t < tiles && (t < kStages - 2 || kStages == 2)) loader.store(sm.tiles.a[t], sm.tiles.b[t]);
        async_commit();  // one group per tile, empty ones too, so that the wait below counts tiles
      }
      // kReadAhead: the first fragments of tile t + 1 are read before the last row of tile t is multiplied, with the
      // barrier moved there, so that the warps released by it do not all wait for shared memory at once (BERT-base
      // batch 32 3% faster on the H200). Not in 512-thread blocks, where the two fragment buffers spill registers.
      constexpr bool kReadAhead = Shape::kThreads <= 256;
      float a[2][8], b[2][TN];
      if constexpr (kReadAhead) {
        async_wait<kStages - 2>();
        __syncthreads();
        if (tiles > 0) load_fragments<BM, BN, TN>(sm.tiles.a[0], sm.tiles.b[0], 0, ty, tx, a[0], b[0]);
      }
      for (int64_t t = 0; t < tiles; ++t) {
        const int64_t k0 = k_begin + t * kTileK;
        const int stage = int(t % kStages);
        // Once every thread is past this barrier (kReadAhead: the one in the previous iteration), tile t is in
        // shared memory and nobody reads tile t-1's stage any more: tile t + kStages - 1 streams into it while
        // this one is multiplied, and the staged registers of tile t + kStages - 2 go to tile t-2's.
        if constexpr (!kReadAhead) {
          async_wait<kStages - 2>();
          __syncthreads();
        }
        const int staged = int((t + kStages - 2) % kStages), next = int((t + kStages - 1) % kStages);
        if (kStages > 2 && t + kStages - 2 < tiles) loader.store(sm.tiles.a[staged], sm.tiles.b[staged]);
        if (t + kStages - 1 < tiles) loader.load(sm.tiles.a[next], sm.tiles.b[next], t + kStages - 1);
        async_commit();
        const int kmax = int(min64(kTileK, k_end - k0));
        if (kmax < kTileK) {
          multiply_tile_head<BM, BN, TN>(sm.tiles.a[stage], sm.tiles.b[stage], p, ty, tx, kmax);
        } else if constexpr (kReadAhead) {
          multiply_tile_but_last<BM, BN, TN>(sm.tiles.a[stage], sm.tiles.b[stage], p, ty, tx, a, b);
          if (kStages == 2 && t + 1 < tiles) loader.store(sm.tiles.a[next], sm.tiles.b[next]);
          async_wait<kStages - 2>();
          __syncthreads();
          if (t + 1 < tiles)
            load_fragments<BM, BN, TN>(sm.tiles.a[(t + 1) % kStages], sm.tiles.b[(t + 1) % kStages], 0, ty, tx,
                                       a[0], b[0]);
          outer_product<TN>(a[1], b[1], p);
        } else {
          multiply_tile<BM, BN, TN>(sm.tiles.a[stage], sm.tiles.b[stage], p, ty, tx);
          if (kStages == 2 && t + 1 < tiles) loader.store(sm.tiles.a[next], sm.tiles.b[next]);
        }
        const int64_t kend = k0 + kmax;
        if (kend % arith::kDotChunk == 0 || kend == k_end) {
          if constexpr (kPartials) store_partials<Shape>(prob, split, batch, (kend - 1) / arith::kDotChunk, m0, n0,
                                                         ty, tx, p);
          if constexpr (kTotalsInShared) add_to_shared_totals<TN>(sm.totals, p);
#pragma unroll
          for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
              if constexpr (!kPartials && !kTotalsInShared) total[i][j] = total[i][j] + p[i][j];
              p[i][j] = 0.0f;
            }
        }
      }
      if constexpr (kTotalsInShared) read_shared_totals<TN>(sm.totals, total);
      if constexpr (!kPartials) store_outputs<Shape>(prob, bt, m0, n0, ty, tx, total);
    }
}

// Contract: per output, total = prob.init(m), then total = total + partial(chunk) for chunk ascending (the chunk
// partials of gemm_f32_sm80<..., kPartials = true>): the last steps of dot_chunked_f32; then prob.store.
template <class Problem>
__global__ void gemm_sum_chunks_f32(Problem prob, SplitK split) {
  const int64_t outputs = prob.batches * prob.M * prob.N;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < outputs; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = i % prob.N, m = i / prob.N % prob.M, batch = i / (prob.M * prob.N);
    const typename Problem::Batch bt = prob.batch(batch);
    const float* partial = split.partials + batch * split.chunks * prob.M * prob.N + m * prob.N + n;
    float total = prob.init(bt, m);
    for (int64_t c = 0; c < split.chunks; ++c) total = total + partial[c * prob.M * prob.N];
    prob.store(bt, prob.column(bt, n), m, total);
  }
}

}  // namespace lockstep::cuda::gemm_core
