// CPU kernels of the gemm family and the packed GEMM core shared with Conv.
//
// Layout: A is packed into panels of MR rows (K x MR, k-major), B into panels of NR columns (K x NR). A
// micro-kernel owns an MR x NR tile; each SIMD lane is one output element's own chain. Per 64-long chunk of k the
// lane starts a partial at +0, fma's the chunk in ascending k, then adds the partial to the tile's running total
// (kept in C itself; the first chunk's add reads the bias or +0 instead of C; edge panels use an L1 tile filled
// with the init and copied out after). B is read from packed panels or, for Conv, in place from rows already in
// memory. That is dot_chunked_f32 exactly, whichever ISA, tile or thread runs it (docs/arithmetic.md#gemm).
// This file is the driver (blocking, threads, epilogues); the micro-kernels live in src/cpu/gemm/f32_*_<isa>.cpp.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "arith/dot.h"
#include "arith/reduce.h"
#include "cpu/gemm/epilogue_f32.h"
#include "cpu/gemm/micro_kernel.h"
#include "cpu/gemm/pack_f32.h"
#include "cpu/gemm/store_transposed_f32.h"
#include "cpu/isa.h"
#include "ops/gemm.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

using arith::kDotChunk;

/// Cache lines of prepacked B that the product reads after a micro-kernel call (`count` lines from `next`), which
/// the call asks into L2 spread over its k steps, so that their trip from memory overlaps its arithmetic
/// (packed_product says which lines). The kernels take the two as scalar arguments: in a struct passed by value
/// they were copied with one 16-byte load of two 8-byte stores, which waits for the store buffer to drain (the
/// C tile the last call stored): attention's batched 197x197x64 products ran about 12% slower.
struct AheadLines {
  const char* next = nullptr;
  int64_t count = 0;
};

constexpr int kMaxNr = 48;  // the widest panel of any ISA
constexpr int kMaxTile = 8 * kMaxNr;
// The +0 init of a row of any tile (read with row stride 0), or of a row of kRowPanels panels.
alignas(64) constexpr float kZeroRow[kRowPanels * kMaxNr] = {};

/// A task's tile of row inits (init_row[m0 + i] across row i), rebuilt only when the A panel changes, and its row of
/// column inits for a partial B panel (init_col's nr values, then +0 to the panel's width), which the micro-kernels
/// read whole.
struct InitTile {
  int64_t mp = -1, np = -1;
  alignas(64) float v[kMaxTile];
  alignas(64) float col[kMaxNr];
  const float* rows(int64_t panel, int nr, int64_t r, const float* init_row) {
    if (panel != mp)
      for (int64_t i = 0; i < r; ++i) std::fill_n(v + i * nr, nr, init_row[i]);
    mp = panel;
    return v;
  }
  const float* columns(int64_t panel, int width, int64_t nr, const float* init_col) {
    if (panel != np) {
      std::copy_n(init_col, nr, col);
      std::fill(col + nr, col + width, 0.0f);
    }
    np = panel;
    return col;
  }
};
constexpr int64_t kGroupBytes = 192 * 1024;  // the k-block slices of the B panels a thread runs together
// packed_product gives each thread one contiguous range of its tasks, rather than chunks claimed as threads finish,
// where every thread has at least kTasksForOneRange tasks (the ranges then differ by one task, at most 1/6): on a
// 2-core Sapphire Rapids VM, ResNet-50's and MobileNetV3-L's convs at 2 threads took 15% less in all (3x3 64ch
// 56x56 1.23 -> 1.09 ms, 1x1 80->480 14x14 0.145 -> 0.107; docs/performance.md, 2026-12-05, sixth session): two
// threads on interleaved panels slowed each other's micro-kernels by up to half. With fewer tasks a thread (BERT's
// products at 16 threads: 72 tasks), ranges of 4 or 5 tasks left threads idle (BERT-base 1.05 -> 1.18 of
// onnxruntime's time; 1.10 with chunks again), so those tasks are claimed one by one and threads end within one task
// of each other.
constexpr int64_t kTasksForOneRange = 6;
int64_t task_chunks_per_thread(int64_t tasks, int64_t threads) {
  return tasks >= kTasksForOneRange * threads ? 1 : tasks;
}
constexpr int64_t kKeptTilesBytes = 64 * 1024;  // the most a task's kept tiles (one per A panel) may take
constexpr int64_t kKeptSliceBytes = 32 * 1024;  // a kept-tile product's B slice of one k-block
constexpr int64_t kKeptSlicesAhead = 2;  // how far ahead a kept-tile product asks for its next B slice
constexpr int64_t kSmallProduct = int64_t(1) << 22;  // fmas of a product too small to split over threads
constexpr int64_t kAheadMostPasses = 32;  // packed_product's prefetch of the next B step: A panels at most
constexpr int64_t kAPanelBytes = 48 * 1024;  // the longest A panel slice that takes K in one k-block
constexpr int64_t kSplitAPanelBytes = 16 * 1024;  // one A panel's slice of a k-block where K takes several
constexpr int64_t kAInL2Bytes = 1024 * 1024;  // the most packed A that a thread's passes over its groups read from L2

/// The kernels for a product of N columns. AVX-512 takes 48-wide panels, or 32-wide ones where they do the work in
/// fewer register-weighted steps: a 16-lane vector of an 8x48 tile counts 1, of 8x32 1.1 and of 8x16 1.6 (their
/// loads per fma; docs/performance.md, 2026-12-06). Among common sizes only N = 64 picks 32.
const IsaKernels& kernels_for(CpuIsa isa, int64_t N) {
  switch (isa) {
    case CpuIsa::Avx512: {
      auto cost = [N](int64_t width) {
        const int64_t full = N / width, tail = (N % width + 15) / 16;
        return double(full) * double(width / 16) * (width == 48 ? 1.0 : 1.1) + double(tail) * (tail == 1 ? 1.6 : 1.1);
      };
      return cost(32) < cost(48) ? kGemmAvx512_8x32 : kGemmAvx512_8x48;
    }
    case CpuIsa::Avx2: return kGemmAvx2_6x16;
    default: return kGemmScalar4x8;
  }
}

/// The tile height of an ISA's kernels: A panels are packed this many rows high, whatever N is.
int kernels_mr(CpuIsa isa) { return kernels_for(isa, 0).mr; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kMinRunPanels = 2;  // the fewest A panels a_run_count gives a run where it can

/// The runs of A panels among which packed_product's threads divide a product whose B, read in place, has few panels
/// (a Conv on a small plane): one run per thread, each over all B panels, while every run has kMinRunPanels panels
/// or more. With fewer (ResNet-50's 128-channel convs at 16 threads: one panel, 8 output channels, a thread), each
/// thread read all of B for 8 rows of fmas; the threads are then grouped instead: threads / runs threads share a run,
/// each taking a range of its B panels (at least 2), which it reads for twice the rows. 16 threads on an H100 host,
/// 3 alternating rounds of single convs, paired ratio to onnxruntime: 3x3 128ch 56x56 stride 2 1.70-2.12 -> 1.37-1.47,
/// 1x1 512 -> 128 on 28x28 1.03-1.11 -> 0.85-0.98, 3x3 128ch 28x28 level; inside ResNet-50, those four nodes of layer2
/// 1.24 -> 0.90 ms, the model within its noise (docs/performance.md, 2026-12-07, twentieth session). Runs of 4 or 8
/// panels (more threads a run) made the stride-1 3x3 convs on 28x28 and 14x14 10-15% slower: their taps overlap, so
/// that B is the smaller operand there.
int64_t a_run_count(int64_t m_panels, int64_t n_panels, int64_t threads) {
  int64_t runs = threads;
  for (int64_t ranges = 2; ranges <= threads && m_panels / runs < kMinRunPanels; ++ranges)
    if (threads % ranges == 0 && n_panels >= 2 * ranges) runs = threads / ranges;
  return runs;
}

/// Asks for the cache lines of `rows` rows of `len` floats, `stride` apart, ahead of their use: a fused node's
/// addend is read by the epilogue as each tile finishes, too late for the hardware to have fetched it.
void prefetch_rows(const float* p, int64_t rows, int64_t stride, int64_t len) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < len; j += 16)
      _mm_prefetch(reinterpret_cast<const char*>(p + i * stride + j), _MM_HINT_T0);
}

/// The length kc of the k-blocks in which packed_product takes K: a multiple of kDotChunk, so that every chunk lies
/// in one block and C holds the running total between blocks (at least 1, so that K = 0 makes one block).
/// - B packed: K runs in one block where one A panel's slice fits kAPanelBytes: a short kc would make C (read and
///   written once per block) the traffic that bounds the product (1024^3 on Zen 3: kc = 64 ran 18% longer than
///   kc = 512; docs/performance.md, 2026-12-04), and K up to 2048 (AVX2) runs unblocked, which was faster still on
///   Zen 3 (2026-12-05: 128x3072x768 +4%, 1024^3 +1.6% against 16 KB slices, B packed ahead). A longer K is cut in
///   blocks of equal length whose A slice is about kSplitAPanelBytes, which leaves L1 to the stream of B: the
///   second MLP layers of BERT and ViT (K = 3072) with the weights from memory ran at 64-67% of the FMA peak in
///   1536-long blocks, 70-72% in 512-long ones, and less in 384- or 768-long ones (Sapphire Rapids, AVX-512; AVX2
///   level or better; docs/performance.md, 2026-12-06, fifteenth session).
/// - B read in place (Conv's taps): its rows are scattered over planes, where the prefetchers do not follow them, so
///   one call's A slice and B rows stay in L1 instead (ResNet-50's 3x3 convs on Zen 3, AVX2: kc = 128 ran 8-17%
///   faster than the rule above; docs/performance.md, 2026-12-04 night; on Sapphire Rapids, AVX-512, kc = 192 ran
///   5-8% faster than 64, and 128 or 256 between the two, 2026-12-05, sixth session; with the 8x48 tile, 192 and 128
///   within 2% of each other, 2026-12-06).
int64_t k_block_length(int64_t K, const IsaKernels& ker, bool pointed_rows) {
  if (pointed_rows) {
    const int64_t slice_bytes = (ker.mr + ker.nr) * int64_t(sizeof(float));
    const int64_t kc = std::max(kDotChunk, ker.pointed_block_bytes / slice_bytes / kDotChunk * kDotChunk);
    return std::min(std::max<int64_t>(1, K), kc);
  }
  const int64_t row_bytes = ker.mr * int64_t(sizeof(float));
  if (K * row_bytes <= kAPanelBytes) return std::max<int64_t>(1, K);
  const int64_t kc_split = std::max<int64_t>(kDotChunk, kSplitAPanelBytes / row_bytes / kDotChunk * kDotChunk);
  return ceil_div(ceil_div(K, ceil_div(K, kc_split)), kDotChunk) * kDotChunk;
}

}  // namespace

namespace {

/// Copies a panel's row of at most a few dozen floats in fixed-size pieces, which the compiler turns into moves:
/// a call to memcpy per row cost more than the copy (a 1x1 conv's taps on a 7x7 plane, 6 floats a row: packing A of
/// 49 x 1152 took 65 us of a 313 us product).
inline void copy_short_run(const float* src, int64_t count, float* d) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) std::memcpy(d + i, src + i, 8 * sizeof(float));
  if (count - i >= 4) {
    std::memcpy(d + i, src + i, 4 * sizeof(float));
    i += 4;
  }
  if (count - i >= 2) {
    std::memcpy(d + i, src + i, 2 * sizeof(float));
    i += 2;
  }
  if (i < count) d[i] = src[i];
}

}  // namespace

PanelFn strided_panels(StridedOperand op, int64_t K) {
  return [op, K](int64_t i0, int64_t count, int width, float* dst) {
    if (op.ks == 1 && op.is != 1) {
      // Each of the panel's rows lies along k (A of a row-major product): read them one after the other, writing
      // every width-th float, instead of gathering one float from each row per k.
#if defined(__x86_64__) || defined(__i386__)
      if (cpu_isa() != CpuIsa::Scalar && (width % 8 == 0 || width == 6))
        return pack_rows_along_k_f32_avx2(op.data + i0 * op.is, op.is, count, K, width, dst);
#endif
      for (int64_t i = 0; i < count; ++i) {
        const float* src = op.data + (i0 + i) * op.is;
        for (int64_t k = 0; k < K; ++k) dst[k * width + i] = src[k];
      }
      for (int64_t k = 0; k < K; ++k)
        for (int64_t i = count; i < width; ++i) dst[k * width + i] = 0.0f;
      return;
    }
    for (int64_t k = 0; k < K; ++k) {
      float* d = dst + k * width;
      const float* src = op.data + k * op.ks + i0 * op.is;
      if (op.is == 1) copy_short_run(src, count, d);
      else
        for (int64_t i = 0; i < count; ++i) d[i] = src[i * op.is];
      for (int64_t i = count; i < width; ++i) d[i] = 0.0f;
    }
  };
}

namespace {

constexpr size_t kKeptMinBytes = size_t(256) << 10, kKeptMaxBytes = size_t(8) << 20;
constexpr size_t kKeptBytesPerThread = size_t(8) << 20;

/// A thread's freed panel blocks (allocate_cache_lines), oldest first.
struct KeptBlocks {
  std::vector<std::pair<size_t, void*>> blocks;
  size_t bytes = 0;
  ~KeptBlocks();
};
// Set once the thread's KeptBlocks is destroyed: a thread_local buffer destroyed after it frees directly.
thread_local bool kept_blocks_gone = false;
thread_local KeptBlocks kept_blocks;

void free_aligned(void* p) { ::operator delete(p, std::align_val_t(64)); }

KeptBlocks::~KeptBlocks() {
  for (const auto& block : blocks) free_aligned(block.second);
  kept_blocks_gone = true;
}

}  // namespace

void* allocate_cache_lines(size_t bytes) {
  if (bytes >= kKeptMinBytes && bytes <= kKeptMaxBytes && !kept_blocks_gone) {
    std::vector<std::pair<size_t, void*>>& blocks = kept_blocks.blocks;
    for (size_t i = blocks.size(); i-- > 0;)
      if (blocks[i].first == bytes) {
        void* p = blocks[i].second;
        blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
        kept_blocks.bytes -= bytes;
        return p;
      }
  }
  return ::operator new(bytes, std::align_val_t(64));
}

void free_cache_lines(void* p, size_t bytes) {
  if (bytes < kKeptMinBytes || bytes > kKeptMaxBytes || kept_blocks_gone) return free_aligned(p);
  std::vector<std::pair<size_t, void*>>& blocks = kept_blocks.blocks;
  while (kept_blocks.bytes + bytes > kKeptBytesPerThread) {
    free_aligned(blocks.front().second);
    kept_blocks.bytes -= blocks.front().first;
    blocks.erase(blocks.begin());
  }
  blocks.emplace_back(bytes, p);
  kept_blocks.bytes += bytes;
}

namespace {

/// count rows (A) or columns (B) packed as width-wide panels of K, panel p at p * width * K (the layout the
/// micro-kernels and packed_product read).
PanelBuffer pack_panels(ThreadPool* pool, int64_t count, int64_t K, int width, const PanelFn& panels) {
  const int64_t n_panels = ceil_div(std::max<int64_t>(count, 0), width);
  PanelBuffer packed(static_cast<size_t>(n_panels * width * K));
  run_range(pool, n_panels, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      panels(p * width, std::min<int64_t>(width, count - p * width), width, packed.data() + p * width * K);
  }, 1);
  return packed;
}

PackedA pack_a_for(CpuIsa isa, ThreadPool* pool, int64_t M, int64_t K, const PanelFn& a_panels) {
  return PackedA{isa, M, K, pack_panels(pool, M, K, kernels_mr(isa), a_panels)};
}

/// A fused node's Add and activation over a block of rows x cols finished outputs (row i at c + i * ldc): the
/// addend's row i at addend + i * lda, read with column step `step` (lda = 0: one row for all, a per-column addend).
/// The operations are fixed at compile time so that the loops vectorise; one call per tile.
using EpilogueTileFn = void (*)(float* c, int64_t ldc, int64_t rows, int64_t cols, const float* addend, int64_t lda,
                                int64_t step, const ActivationConstants& k);

/// The number of Activation values: the epilogue tables' entries per addend kind.
constexpr int kActivations = static_cast<int>(Activation::GeluTanhChain) + 1;

/// The scalar ISA's tile (the SIMD ISAs': cpu/gemm/epilogue_f32.inc).
// Contract: absorbed_ops_f32 per element; see docs/arithmetic.md#graph-rewrites.
template <bool kAddend, bool kAddendFirst, Activation kAct>
void epilogue_tile(float* c, int64_t ldc, int64_t rows, int64_t cols, const float* addend, int64_t lda,
                   int64_t step, const ActivationConstants& k) {
  for (int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j)
      row[j] = absorbed_ops_f32(row[j], kAddend, kAddend ? addend[i * lda + j * step] : 0.0f, kAddendFirst, kAct, k);
  }
}

// By ((addend, addend_first) as bits 1, 0) * kActivations + activation.
template <template <bool, bool, Activation> class Tile, int... I>
constexpr std::array<EpilogueTileFn, 4 * kActivations> epilogue_table(std::integer_sequence<int, I...>) {
  return {Tile<(I / kActivations & 2) != 0, (I / kActivations & 1) != 0,
               static_cast<Activation>(I % kActivations)>::fn...};
}
template <bool A, bool F, Activation Act>
struct PlainTile {
  static constexpr EpilogueTileFn fn = epilogue_tile<A, F, Act>;
};
template <bool A, bool F, Activation Act>
struct Avx2Tile {
  static constexpr EpilogueTileFn fn = epilogue_tile_f32_avx2<A, F, Act>;
};
template <bool A, bool F, Activation Act>
struct Avx512Tile {
  static constexpr EpilogueTileFn fn = epilogue_tile_f32_avx512<A, F, Act>;
};
constexpr auto kEpilogueTiles = epilogue_table<PlainTile>(std::make_integer_sequence<int, 4 * kActivations>());
constexpr auto kEpilogueTilesAvx2 = epilogue_table<Avx2Tile>(std::make_integer_sequence<int, 4 * kActivations>());
constexpr auto kEpilogueTilesAvx512 = epilogue_table<Avx512Tile>(std::make_integer_sequence<int, 4 * kActivations>());

/// The epilogue tiles of an ISA.
const std::array<EpilogueTileFn, 4 * kActivations>& epilogue_tiles(CpuIsa isa) {
  return isa == CpuIsa::Scalar ? kEpilogueTiles : isa == CpuIsa::Avx2 ? kEpilogueTilesAvx2 : kEpilogueTilesAvx512;
}

/// Where packed_product reads B: packed (prepacked_b, from pack_b for a.isa), as panels packed by the tasks
/// (panels), or in place from pointed rows (rows, see gemm_f32_packed_rows).
struct BSource {
  const PanelFn* panels = nullptr;
  const float* prepacked_b = nullptr;
  const float* const* rows = nullptr;
  GridColumns grid = {};  // pointed rows only: C's columns as a Conv's grid (pitch > 0)
};

// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
/// C's one row (M = 1, out.cs = 1) from A's row (element k at a[k * a_step]) and N columns of packed B panels:
/// tasks are groups of kRowPanels panels on the row kernels; a partial last panel (zero-padded to NR when packed)
/// runs whole into a tile, whose first columns are copied out.
void row_times_panels(ThreadPool* pool, const IsaKernels& ker, int64_t K, const float* a, int64_t a_step, int64_t N,
                      const float* pb, const GemmOut& out) {
  const int NR = ker.nr;
  const int64_t n_panels = ceil_div(N, NR), tasks = ceil_div(n_panels, kRowPanels);
  run_range(pool, tasks, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kRowPanels * kMaxNr], init_tile[kRowPanels * kMaxNr];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t np = t * kRowPanels, n0 = np * NR, count = std::min<int64_t>(kRowPanels, n_panels - np);
      const int64_t cols = std::min<int64_t>(count * NR, N - n0);
      const bool in_place = cols == count * NR;
      const float* init = kZeroRow;
      if (out.init_col && in_place) {
        init = out.init_col + n0;
      } else if (out.init_col || out.init_row) {
        std::fill_n(init_tile, count * NR, out.init_row ? out.init_row[0] : 0.0f);
        if (out.init_col) std::copy_n(out.init_col + n0, cols, init_tile);
        init = init_tile;
      }
      float* c = in_place ? out.data + n0 : tile;
      ker.row[count](K, a, a_step, pb + np * K * NR, K * NR, c, init);
      if (!in_place) std::copy_n(tile, cols, out.data + n0);
      apply_gemm_epilogue(out, out.data + n0, out.rs, 1, cols, 0, n0);
    }
  }, 1);
}

/// Copies finished outputs, a block of rows x cols at c (row stride ldc) of C's columns n0 .., to out.data through
/// the grid's column map (out.cs = 1), with out.epilogue applied where `epilogue`: on the block itself, dropped
/// columns included, when it reads no addend (whole vectors in L1), else on each run of output columns as it lands.
void store_grid_block(const GemmOut& out, const GridColumns& grid, float* c, int64_t ldc, int rows, int64_t cols,
                      int64_t m0, int64_t n0, bool epilogue) {
  if (epilogue && !out.epilogue.addend) {
    apply_gemm_epilogue(out, c, ldc, rows, cols, m0, n0);
    epilogue = false;
  }
  const int64_t pitch = grid.pitch, width = grid.width;
  for (int64_t j = 0; j < cols;) {
    const int64_t grid_row = (n0 + j) / pitch, grid_col = (n0 + j) % pitch;
    const int64_t run = std::min(cols - j, pitch - grid_col), kept = std::min(run, width - grid_col);
    if (kept > 0) {
      const int64_t n = grid_row * width + grid_col;
      float* dst = out.data + m0 * out.rs + n * out.cs;
      for (int i = 0; i < rows; ++i) copy_short_run(c + i * ldc + j, kept, dst + i * out.rs);
      if (epilogue) apply_gemm_epilogue(out, dst, out.rs, rows, kept, m0, n);
    }
    j += run;
  }
}

/// Where packed_product reads A: packed panels (pack_a, for a.isa), or in place with its columns contiguous, element
/// (m, k) at data[m + k * k_step] (a transposed Conv's input planes, pixels along m): the micro-kernels broadcast a
/// panel's row k from wherever it lies, so that A needs no packed copy (packing the taps of a 1x1 conv on a 7x7
/// plane took 13% of its time).
struct ASource {
  CpuIsa isa;
  int64_t M, K;
  const float* data;
  int64_t k_step;  // from row k of a panel to row k + 1: the tile height when packed
  bool packed;
  /// Where A panel mp (rows mp * mr ..) starts (with K = 0 nothing is read, and data may be null).
  const float* panel(int64_t mp, int mr) const { return K == 0 ? data : data + mp * mr * (packed ? K : 1); }
};

ASource packed_source(const PackedA& a) { return {a.isa, a.M, a.K, a.data.data(), kernels_mr(a.isa), true}; }

void packed_product(ThreadPool* pool, const ASource& a, int64_t N, const BSource& b, const GemmOut& out) {
  const int64_t M = a.M, K = a.K;
  if (M <= 0 || N <= 0) return;
  const IsaKernels& ker = kernels_for(a.isa, N);
  const int MR = ker.mr, NR = ker.nr;
  const int64_t m_panels = ceil_div(M, MR), n_panels = ceil_div(N, NR);
  // A C whose rows are not contiguous (cs != 1: Conv's transposed product on 7x7 planes) cannot accumulate in place.
  // Its tiles, one per A panel, are kept from one k-block to the next, K taken in blocks whose B slice stays in L1
  // (kKeptSliceBytes), where one tile over all of K streamed both panels from L2 or memory for every tile:
  // ResNet-50's layer4 convs and 7x7 pointwise convs took 24% less at 1 thread, 17% less at 2 (Sapphire Rapids,
  // AVX-512; 12% less with AVX2 forced; docs/performance.md, 2026-12-05, sixth session).
  const bool kept_tiles = out.cs != 1 && !b.rows && m_panels * MR * NR * int64_t(sizeof(float)) <= kKeptTilesBytes;
  // Tasks: one B panel times a run of A panels. Splitting the A panels only when B panels are few keeps every
  // thread busy; the split never changes an element's sequence. Kept tiles' B (a Conv's weights, read from memory
  // once per run) is not split where there are panels enough for every thread: each split read the weights again
  // (1x1 1024 -> 256 on 7x7 at 2 threads: 1.48 -> 1.35 of onnxruntime's time; docs/performance.md, 2026-12-07).
  const int64_t threads = pool ? pool->size() : 1;
  int64_t splits =
      kept_tiles && n_panels >= threads ? 1 : std::clamp<int64_t>(ceil_div(4 * threads, n_panels), 1, m_panels);
  const int64_t per_split = ceil_div(m_panels, splits);
  splits = ceil_div(m_panels, per_split);
  // Split B panels would be packed once per task that reads them: pack each once, in parallel, up front.
  // (Whether B is packed is kept apart from the pointer: with K = 0 a packed B has no data.)
  // Pointed rows are readable up to N only: a partial last panel is read in place by the ISA's tail kernels
  // (PointedRowsTail), or, where it has none (scalar), packed once, up front.
  // (Split over the threads: a 3x3 conv's edge panel on a 14x14 plane is 2,304 rows, which one thread copied while
  // the others waited.)
  const bool tail_in_place = b.rows && ker.micro_rows_tail[0][1] && N <= INT32_MAX;
  PanelBuffer edge_b;
  if (b.rows && N % NR != 0 && !tail_in_place) {
    const int64_t n0 = (n_panels - 1) * NR;
    edge_b = PanelBuffer(static_cast<size_t>(K * NR));
    run_range(pool, K, [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        std::copy_n(b.rows[k] + n0, N - n0, edge_b.data() + k * NR);
        std::fill(edge_b.data() + k * NR + (N - n0), edge_b.data() + (k + 1) * NR, 0.0f);
      }
    }, 256);
  }
  const float* prepacked_b = b.prepacked_b;
  bool b_packed = prepacked_b != nullptr || !b.panels || !*b.panels;
  PanelBuffer shared_b;
  if (!b_packed && splits > 1) {
    shared_b = pack_panels(pool, N, K, NR, *b.panels);
    prepacked_b = shared_b.data();
    b_packed = true;
  }
  // Kept k-blocks end on chunk boundaries, so that the tile holds whole running totals between them.
  const int64_t kept_kc = std::max(kDotChunk, kKeptSliceBytes / (NR * int64_t(sizeof(float))) / kDotChunk * kDotChunk);
  const int64_t kc = kept_tiles ? std::min<int64_t>(std::max<int64_t>(1, K), kept_kc)
                                : k_block_length(K, ker, b.rows != nullptr);
  const int64_t k_blocks = std::max<int64_t>(1, ceil_div(K, kc));  // one when K = 0: C still gets its init
  // B panel np of packed panels from panel 0 at base (null: B is read from pointed rows, or K = 0).
  auto panel = [&](const float* base, int64_t np) { return base ? base + np * K * NR : nullptr; };
  // One output block: A panel mp times the B panel np (packed at pb, or b.rows), over k in [k0, k0 + kc).
  // kept: the tile holds this (A panel, B panel)'s running totals from one k-block to the next (kept_tiles below).
  auto block = [&](int64_t mp, int64_t np, const float* pb, float* tile, InitTile& init_tile, int64_t k0,
                   bool kept = false, const char* ahead_next = nullptr, int64_t ahead_lines = 0) {
    const int64_t m0 = mp * MR, n0 = np * NR, nr = std::min<int64_t>(NR, N - n0);
    const int r = static_cast<int>(std::min<int64_t>(MR, M - m0));
    const float* pa = a.panel(mp, MR) + k0 * a.k_step;
    // Which micro_narrow or micro_rows_tail a partial panel may take.
    const int narrow = static_cast<int>(ceil_div(nr, 16)) - 1;
    const MicroFn<PointedRowsTail> rows_tail_fn = tail_in_place && nr < NR ? ker.micro_rows_tail[narrow][r] : nullptr;
    // A full-width panel of a row-major C, or pointed rows' tail panel (masked), accumulates in C itself (a grid's
    // in its totals); others in a tile, copied out after: a kept tile block by block, any other over all of K at
    // once. A grid whose K takes one k-block keeps every tile in L1 and writes its kept columns alone: the stems,
    // whose grid was written whole and copied out in a pass of its own, took 8-21% less (3x3 to 16 and 32 channels
    // of 112x112, 7x7 to 64; docs/performance.md, 2026-12-07, nineteenth session). A grid tile whose columns lie
    // in the kept part of one grid row is those output columns, from out_n0 on: it accumulates in the output itself,
    // with neither the totals nor the copy.
    const bool on_grid = b.grid.pitch > 0, accumulates = (nr == NR || rows_tail_fn) && out.cs == 1;
    int64_t out_n0 = n0;
    bool grid_direct = false;
    if (on_grid && accumulates) {
      const int64_t grid_row = n0 / b.grid.pitch, grid_col = n0 - grid_row * b.grid.pitch;
      grid_direct = grid_col + nr <= b.grid.width;
      out_n0 = grid_row * b.grid.width + grid_col;
    }
    const bool via_grid = on_grid && !grid_direct;
    const bool in_place = accumulates && !(via_grid && k_blocks == 1), whole_k = !accumulates && !kept;
    if (whole_k && k0 > 0) return;
    float* const c_data = via_grid ? b.grid.totals : out.data;
    const int64_t c_rs = via_grid ? N : out.rs;
    float* c = in_place ? c_data + m0 * c_rs + (via_grid ? n0 : out_n0) : tile;
    const int64_t ldc = in_place ? c_rs : NR;
    // Where the running totals start: the micro-kernel reads them from init (its first chunk stores init + p), in
    // place and in a tile alike (a tile filled first, 16 bytes a store, then read by the kernel's 64-byte loads, cost
    // a batched 128x64x128 attention product 5% of its time); K = 0 (no chunk) fills C.
    const float* init = nullptr;
    int64_t ldi = 0;
    if (k0 == 0 && K > 0) {
      if (out.init_col) {  // read whole by a full panel's kernel, in its lanes by a tail kernel's
        init = nr == NR || rows_tail_fn ? out.init_col + n0 : init_tile.columns(np, NR, nr, out.init_col + n0);
      } else if (out.init_row) {
        init = init_tile.rows(mp, NR, r, out.init_row + m0);
        ldi = NR;
      } else {
        init = kZeroRow;
      }
    } else if (k0 == 0) {  // K = 0: the kernel runs no chunk and C holds its init, in its nr columns (C's own, in place)
      for (int i = 0; i < r; ++i) std::fill_n(c + i * ldc, nr, out.init_row ? out.init_row[m0 + i] : 0.0f);
      if (out.init_col)
        for (int i = 0; i < r; ++i) std::copy_n(out.init_col + n0, nr, c + i * ldc);
    }
    const int64_t k1 = whole_k ? K : std::min(K, k0 + kc);
    if (k1 == K && out.epilogue.addend && !out.epilogue.per_column && out.cs == 1 && !on_grid)
      prefetch_rows(out.epilogue.addend + m0 * out.rs + n0, r, out.rs, nr);
    // A Relu alone is applied by the micro-kernel's last store where the ISA has that kernel (one pass over the tile
    // less: a fifth of a K = 16 conv's time on Zen 3); anything else by the epilogue pass below.
    const MicroFn<PackedRows> narrow_fn = narrow < 2 ? ker.micro_narrow[narrow][r] : nullptr;
    const bool relu_in_kernel = k1 == K && K > 0 && out.epilogue.activation == Activation::Relu &&
                                !out.epilogue.addend && ker.micro_relu[r] && !narrow_fn && !rows_tail_fn;
    if (b.rows && nr == NR) {
      (relu_in_kernel ? ker.micro_rows_relu : ker.micro_rows)[r](k1 - k0, pa, a.k_step, PointedRows{b.rows + k0, n0}, c,
                                                                 ldc, init, ldi, ahead_next, ahead_lines);
    } else if (rows_tail_fn) {
      const auto tail = static_cast<uint16_t>((uint32_t(1) << (nr - 16 * narrow)) - 1);
      rows_tail_fn(k1 - k0, pa, a.k_step, PointedRowsTail{b.rows + k0, static_cast<int32_t>(n0), tail}, c, ldc,
                   init, ldi, ahead_next, ahead_lines);
    } else {
      const float* pk = (b.rows ? edge_b.data() : pb) + k0 * NR;
      const MicroFn<PackedRows> fn = narrow_fn ? narrow_fn : (relu_in_kernel ? ker.micro_relu : ker.micro)[r];
      fn(k1 - k0, pa, a.k_step, PackedRows{pk, NR}, c, ldc, init, ldi, ahead_next, ahead_lines);
    }
    if (via_grid) {
      if (k1 == K) store_grid_block(out, b.grid, c, ldc, r, nr, m0, n0, !relu_in_kernel);
      return;
    }
#if defined(__x86_64__) || defined(__i386__)
    const StoreEpilogue& e = out.epilogue;
    if (!in_place && k1 == K && out.rs == 1 && out.cs != 1 && a.isa != CpuIsa::Scalar &&
        !takes_constants(e.activation)) {
      // Outputs final, C's columns contiguous: the epilogue and the copy of the tile in 8x8 transposed blocks.
      const float* addend = e.addend ? e.addend + (e.per_column ? n0 : m0 + n0 * out.cs) : nullptr;
      return store_tile_transposed_f32_avx2(tile, NR, r, nr, out.data + m0 + n0 * out.cs, out.cs, addend,
                                            e.per_column, e.addend_first,
                                            relu_in_kernel ? Activation::None : e.activation);
    }
#endif
    if (k1 == K && !relu_in_kernel) apply_gemm_epilogue(out, c, ldc, r, nr, m0, out_n0);  // outputs final
    if (in_place || k1 < K) return;
    for (int i = 0; i < r; ++i) {
      float* dst = out.data + (m0 + i) * out.rs + n0 * out.cs;
      if (out.cs == 1) std::memcpy(dst, tile + i * NR, static_cast<size_t>(nr) * sizeof(float));
      else
        for (int64_t j = 0; j < nr; ++j) dst[j * out.cs] = tile[i * NR + j];
    }
  };
  // Prepacked B (a MatMul's weights) comes from memory once per run, in steps: the slice of B panels [p0, p1) in
  // k-block kb, which every A panel then passes over. The first pass waited on memory, the others read L2: BERT's
  // products with the weights from memory ran at 66% of the FMA peak where they reach 81% from L3. So the step that
  // comes next is asked into L2 by the micro-kernels of this one, a share per call: 128x3072x768 from memory 66% ->
  // 80%, 128x768x3072 66% -> 73% (docs/performance.md, 2026-12-06, fifteenth session).
  // Only where the first pass is a fair share of a step's work (at most kAheadMostPasses passes): over 1024 rows
  // the prefetches cost more than they saved (1024^3 1-2% slower). The lines of B panel p in k-block kb:
  // The cache lines of k-block kb's slice of the panel `width` floats wide that starts at `panel_start`.
  auto block_slice = [&](const float* panel_start, int width, int64_t kb) -> AheadLines {
    const int64_t k0 = kb * kc, k1 = std::min(K, k0 + kc);
    return {reinterpret_cast<const char*>(panel_start + k0 * width),
            ceil_div((k1 - k0) * width * int64_t(sizeof(float)), 64)};
  };
  auto slice_lines = [&](int64_t p, int64_t kb) -> AheadLines {
    if (!prepacked_b || m_panels > kAheadMostPasses || p >= n_panels) return {};
    return block_slice(panel(prepacked_b, p), NR, kb);
  };
  // B read in place (Conv's taps) leaves A, the Conv's weights, as what comes from memory once per run: a task walks
  // its A panels [mp0, mp1) k-block by k-block, each panel's slice of a block 73 KB from the next panel's (a 3x3 conv
  // on 256 channels), which the hardware prefetchers follow only after the first misses of every slice. So the slice
  // that follows (mp, kb) in that walk is asked into L2 by the calls that run on this one (3x3 convs on 256 channels
  // of 14x14, 24 in a row: 1.50 -> 1.41 of onnxruntime's time at 1 thread, 1.79 -> 1.48 at 2).
  auto a_slice_after = [&](int64_t mp, int64_t kb, int64_t mp0, int64_t mp1) -> AheadLines {
    if (!b.rows || !a.packed) return {};
    if (++mp == mp1) {
      mp = mp0;
      if (++kb == k_blocks) return {};
    }
    return block_slice(a.panel(mp, MR), MR, kb);
  };
  // Share i of n of a slice's lines, for the i-th of the n calls that run before it.
  auto share = [](AheadLines lines, int64_t i, int64_t n) -> AheadLines {
    const int64_t l0 = lines.count * i / n, l1 = lines.count * (i + 1) / n;
    return {lines.next + 64 * l0, l1 - l0};
  };
  if (M == 1 && prepacked_b && !b.rows && out.cs == 1 && K > 0)
    return row_times_panels(pool, ker, K, a.data, a.k_step, N, prepacked_b, out);
  if (kept_tiles) {
    // Tasks as below (B panels, or B panels times runs of A panels), k-block by k-block: the B panel's slice stays
    // in L1 while the A panels' slices stream past it, each into its own kept tile.
    run_range(pool, n_panels * splits, [&](int64_t t0, int64_t t1) {
      PanelBuffer own_b(b_packed ? 0 : static_cast<size_t>(K * NR));
      PanelBuffer tiles(static_cast<size_t>(m_panels * MR * NR));
      InitTile init_tile;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t np = t % n_panels, s = t / n_panels;
        const float* pb = b_packed ? panel(prepacked_b, np) : own_b.data();
        if (!b_packed) (*b.panels)(np * NR, std::min<int64_t>(NR, N - np * NR), NR, own_b.data());
        const int64_t mp0 = s * per_split, mp1 = std::min(m_panels, (s + 1) * per_split);
        for (int64_t kb = 0; kb < k_blocks; ++kb) {
          // Prepacked B (a Conv's weights) is read once per run, from memory: the slice kKeptSlicesAhead k-blocks on
          // in the panels' stream (prepacked panels follow one another) is asked into L2, a part per A panel, while
          // this one runs (ResNet-50's layer4 convs with the caches flushed between runs: 12% less; 1, 2 and 4
          // blocks ahead alike).
          // The micro-kernels ask for it through their ahead lines, as packed_product's other loops do. The slice is
          // kc rows of the stream, not a panel's k-block (block_slice): it runs on past a panel's end (with K in one
          // k-block it is all of panel np + 2), and where kc does not divide K its edges are not the next panel's
          // k-block edges. (end - at) / 16: floats in 64-byte lines.
          const int64_t at = (np * K + (kb + kKeptSlicesAhead) * kc) * NR;
          const int64_t end = std::min(n_panels * K * NR, at + kc * NR);
          const AheadLines next = prepacked_b && at < end
                                      ? AheadLines{reinterpret_cast<const char*>(prepacked_b + at), (end - at) / 16}
                                      : AheadLines{};
          for (int64_t mp = mp0; mp < mp1; ++mp) {
            const AheadLines part = share(next, mp - mp0, mp1 - mp0);
            block(mp, np, pb, tiles.data() + mp * MR * NR, init_tile, kb * kc, true, part.next, part.count);
          }
        }
      }
    }, 1, task_chunks_per_thread(n_panels * splits, threads));
    return;
  }
  // B read in place where its panels are few enough to be split (a Conv on a small plane): each thread takes one run
  // of A panels, the Conv's weights, over all B panels, so that the weights come from memory once per run, where
  // tasks of one B panel each read them once per B panel (1x1 convs 1024 -> 256 -> 1024 on 14x14, 24 in a row, at
  // 2 threads: 1.53 -> 1.40 of onnxruntime's time; docs/performance.md, 2026-12-06, sixteenth session).
  const bool a_runs = b.rows && splits > 1 && m_panels >= threads;
  if (splits == 1 || a_runs) {
    // Tasks are B panels, of one run of A panels (a_run_count's) where a_runs. A thread takes its panels in groups
    // whose k-block slices fit in L2 and runs each A panel over the whole group, so that C is written along its
    // rows (one B panel at a time would touch every row of C per panel: with long rows, rows a power-of-two-ish
    // stride apart fight for the same L1 sets).
    const int64_t group = std::clamp<int64_t>(kGroupBytes / (kc * NR * int64_t(sizeof(float)) + 1), 1, 64);
    const int64_t runs = a_runs ? a_run_count(m_panels, n_panels, threads) : 1;
    // A thread runs its groups k-block by k-block where A is too large to stay in L2 while it passes over every group
    // in turn (B packed ahead, K in several blocks): the second MLP layer of ViT-B/16 (K = 3072) read its 2.4 MB of
    // packed A from L3 once per group of two B panels, 8 times a product; now each k-block's slice of A (400 KB)
    // stays in L2 over all groups, and C is the operand passed over once per k-block. A small gain, 2 rounds of
    // alternating builds: ViT-B/16 1.05 -> 1.04 of onnxruntime's time at 1 thread, 1.06 -> 1.04 at 2; BERT-base
    // 0.98 -> 0.96 and 0.99 -> 0.98 (docs/performance.md, 2026-12-06, sixteenth session).
    const bool k_blocks_outer = b_packed && k_blocks > 1 && m_panels * MR * K * int64_t(sizeof(float)) > kAInL2Bytes;
    // Ranges of panels as task_chunks_per_thread says; where a_runs, one range per thread: each run's B panels in
    // threads / runs ranges (chunk j * threads / runs starts run j).
    run_range(pool, runs * n_panels, [&](int64_t t0, int64_t t1) {
      PanelBuffer own_b(b_packed ? 0 : static_cast<size_t>(std::min(group, t1 - t0) * K * NR));
      alignas(64) float tile[kMaxTile];
      InitTile init_tile;
      auto group_end = [&](int64_t g0) { return std::min({t1, g0 + group, (g0 / n_panels + 1) * n_panels}); };
      // Group [g0, g1) over k-block kb; its prepacked panels' next step is in the group at next_g0 (-1: none), in
      // k-block next_kb.
      auto pass = [&](int64_t g0, int64_t g1, int64_t kb, const float* pbs, int64_t next_g0, int64_t next_kb) {
        const int64_t run = g0 / n_panels, mp0 = m_panels * run / runs, mp1 = m_panels * (run + 1) / runs;
        const int64_t np0 = g0 - run * n_panels, np1 = g1 - run * n_panels;
        for (int64_t mp = mp0; mp < mp1; ++mp)
          for (int64_t np = np0; np < np1; ++np) {
            const int64_t q = next_g0 + (np - np0);  // prepacked B (runs = 1): the panel in this one's place
            const AheadLines part = prepacked_b ? share(next_g0 >= 0 && q < t1 ? slice_lines(q, next_kb) : AheadLines{},
                                                        mp, m_panels)
                                                : share(a_slice_after(mp, kb, mp0, mp1), np - np0, np1 - np0);
            block(mp, np, panel(pbs, np - np0), tile, init_tile, kb * kc, false, part.next, part.count);
          }
      };
      if (k_blocks_outer) {
        // B packed (all of it is at hand): k-block by k-block, every group in turn.
        for (int64_t kb = 0; kb < k_blocks; ++kb)
          for (int64_t g0 = t0, g1; g0 < t1; g0 = g1) {
            g1 = group_end(g0);
            const bool last_group = g1 == t1;
            pass(g0, g1, kb, panel(prepacked_b, g0), last_group ? (kb + 1 < k_blocks ? t0 : -1) : g1,
                 last_group ? kb + 1 : kb);
          }
        return;
      }
      for (int64_t g0 = t0, g1; g0 < t1; g0 = g1) {
        g1 = group_end(g0);
        const int64_t np0 = g0 % n_panels;
        const float* pbs = b_packed ? panel(prepacked_b, np0) : own_b.data();
        if (!b_packed)
          for (int64_t np = np0; np < np0 + (g1 - g0); ++np)
            (*b.panels)(np * NR, std::min<int64_t>(NR, N - np * NR), NR, own_b.data() + (np - np0) * K * NR);
        // What comes next in a panel's place: its next k-block, else the next group's panel in its place.
        for (int64_t kb = 0; kb < k_blocks; ++kb)
          pass(g0, g1, kb, pbs, kb + 1 < k_blocks ? g0 : g1, kb + 1 < k_blocks ? kb + 1 : 0);
      }
    }, 1, a_runs ? 1 : task_chunks_per_thread(n_panels, threads));
    return;
  }
  // Tasks split-major where a thread takes one range of them: its outputs are whole rows of C (contiguous when C is
  // row-major). Where the threads claim tasks one by one, panel-major instead: tasks running at the same time are
  // then the splits of one B panel, whose rows of C lie apart, where neighbouring B panels of the same rows share
  // the cache lines at their edges, which both threads then write (a 1x1 80->480 conv on 14x14 pixels, K = 80:
  // 2 threads no faster than 1 split-major, 15-20% faster panel-major; docs/performance.md, 2026-12-06).
  const int64_t tasks = n_panels * splits, chunks = task_chunks_per_thread(tasks, threads);
  const bool panel_major = chunks == tasks;
  run_range(pool, tasks, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kMaxTile];
    InitTile init_tile;
    auto panel_of = [&](int64_t t) { return panel_major ? t / splits : t % n_panels; };
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t np = panel_of(t), s = panel_major ? t % splits : t / n_panels;
      const int64_t mp0 = s * per_split, mp1 = std::min(m_panels, (s + 1) * per_split);
      // Next: this panel's next k-block, else the next task's panel (unless it is this one, read already).
      const int64_t np_next = t + 1 < t1 ? panel_of(t + 1) : n_panels;
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        const AheadLines next = kb + 1 < k_blocks ? slice_lines(np, kb + 1)
                                : np_next != np || k_blocks > 1 ? slice_lines(np_next, 0) : AheadLines{};
        for (int64_t mp = mp0; mp < mp1; ++mp) {
          const AheadLines part = prepacked_b ? share(next, mp - mp0, mp1 - mp0) : a_slice_after(mp, kb, mp0, mp1);
          block(mp, np, panel(prepacked_b, np), tile, init_tile, kb * kc, false, part.next, part.count);
        }
      }
    }
  }, 1, chunks);
}

}  // namespace

void apply_gemm_epilogue(const GemmOut& out, float* c, int64_t ldc, int64_t rows, int64_t cols, int64_t m0,
                         int64_t n0) {
  const StoreEpilogue& e = out.epilogue;
  if (!e.active()) return;
  const int kind = ((e.addend ? 2 : 0) | (e.addend_first ? 1 : 0)) * kActivations + static_cast<int>(e.activation);
  const EpilogueTileFn fn = epilogue_tiles(cpu_isa())[kind];
  const float* addend = e.addend ? e.addend + (e.per_column ? n0 : m0 * out.rs + n0 * out.cs) : nullptr;
  fn(c, ldc, rows, cols, addend, e.per_column ? 0 : out.rs, e.per_column ? 1 : out.cs, e.constants);
}

PackedA pack_a(ThreadPool* pool, int64_t M, int64_t K, const PanelFn& a_panels) {
  return pack_a_for(cpu_isa(), pool, M, K, a_panels);
}

PackedB pack_b(ThreadPool* pool, int64_t N, int64_t K, const PanelFn& b_panels) {
  const CpuIsa isa = cpu_isa();
  return PackedB{isa, N, K, pack_panels(pool, N, K, kernels_for(isa, N).nr, b_panels)};
}

void gemm_f32(ThreadPool* pool, int64_t M, int64_t N, int64_t K, const PanelFn& a_panels, const PanelFn& b_panels,
              const GemmOut& out) {
  if (M <= 0 || N <= 0) return;
  gemm_f32_packed(pool, pack_a(pool, M, K, a_panels), N, b_panels, out);
}

void gemm_f32_packed(ThreadPool* pool, const PackedA& a, int64_t N, const PanelFn& b_panels, const GemmOut& out) {
  packed_product(pool, packed_source(a), N, BSource{&b_panels}, out);
}

void gemm_f32_packed_rows(ThreadPool* pool, const PackedA& a, int64_t N, const float* const* b_rows,
                          const GemmOut& out, const GridColumns& grid) {
  packed_product(pool, packed_source(a), N, BSource{nullptr, nullptr, b_rows, grid}, out);
}

bool grid_needs_totals(const PackedA& a, int64_t N) {
  return a.K > k_block_length(a.K, kernels_for(a.isa, N), true);
}

void gemm_f32_packed_b(ThreadPool* pool, int64_t M, const PanelFn& a_panels, const PackedB& b, const GemmOut& out) {
  if (M <= 0 || b.N <= 0) return;
  if (M == 1 && b.K > 0 && out.cs == 1) {  // A's one row packed as it is, not into an MR-row panel
    const PanelBuffer row = pack_panels(nullptr, 1, b.K, 1, a_panels);
    return gemm_f32_row_packed_b(pool, row.data(), b, out);
  }
  packed_product(pool, packed_source(pack_a_for(b.isa, pool, M, b.K, a_panels)), b.N, BSource{nullptr, b.data.data()},
                 out);
}

void gemm_f32_a_columns_packed_b(ThreadPool* pool, int64_t M, const float* a, int64_t lda, const PackedB& b,
                                 const GemmOut& out) {
  if (M <= 0 || b.N <= 0) return;
  packed_product(pool, ASource{b.isa, M, b.K, a, lda, false}, b.N, BSource{nullptr, b.data.data()}, out);
}

void gemm_f32_row_packed_b(ThreadPool* pool, const float* a, const PackedB& b, const GemmOut& out) {
  if (b.N <= 0) return;
  if (b.K == 0 || out.cs != 1) return gemm_f32_packed_b(pool, 1, strided_panels({a, b.K, 1}, b.K), b, out);
  row_times_panels(pool, kernels_for(b.isa, b.N), b.K, a, 1, b.N, b.data.data(), out);
}

namespace {
/// A narrow product (N < 8) runs transposed, C' = B' A', so that the lanes run along M.
bool runs_transposed(int64_t M, int64_t N) { return N < 8 && M > N; }
}  // namespace

void gemm_f32_strided(ThreadPool* pool, int64_t M, int64_t N, int64_t K, const float* a, int64_t a_rs,
                      int64_t a_cs, const float* b, int64_t b_rs, int64_t b_cs, const GemmOut& out) {
  if (runs_transposed(M, N) && out.init_row == nullptr && !out.epilogue.per_column) {
    GemmOut t{out.data, out.cs, out.rs, out.init_col, nullptr, out.epilogue};
    gemm_f32(pool, N, M, K, strided_panels({b, b_cs, b_rs}, K), strided_panels({a, a_rs, a_cs}, K), t);
    return;
  }
  gemm_f32(pool, M, N, K, strided_panels({a, a_rs, a_cs}, K), strided_panels({b, b_cs, b_rs}, K), out);
}

namespace {

/// gemm_f32_strided for an op whose input 1 is B: when B is a constant (an initializer), its packed panels are
/// kept in the node's state (packed on the first run, again only if the ISA changes). a is indexed (m, k), b (n, k).
void product_of_strided(KernelContext& ctx, int64_t M, int64_t N, int64_t K, StridedOperand a, StridedOperand b,
                        const GemmOut& out) {
  if (!ctx.state || !ctx.input_is_constant(1) || runs_transposed(M, N) || M <= 0 || N <= 0) {
    gemm_f32_strided(ctx.pool, M, N, K, a.data, a.is, a.ks, b.data, b.ks, b.is, out);
    return;
  }
  auto fits = [&](const PackedB& packed) { return packed.isa == cpu_isa() && packed.N == N && packed.K == K; };
  auto make = [&] { return pack_b(ctx.pool, N, K, strided_panels(b, K)); };
  gemm_f32_packed_b(ctx.pool, M, strided_panels(a, K), *ctx.state->get_or_make<PackedB>(fits, make), out);
}

}  // namespace

// Contract: dot_chunked_f32 over k ascending, init +0, then gemm_epilogue_f32; see docs/arithmetic.md#gemm.
void gemm(KernelContext& ctx) {
  GemmParams p = gemm_params(ctx);
  Tensor& y = ctx.output(0, DType::Float, p.out_shape);
  if (y.numel() == 0) return;
  float* yd = y.data<float>();
  const float* c = p.has_c ? ctx.input(2).data<float>() : nullptr;
  // alpha = 1 (and beta = 1 with a C per element or per column, as Conv1D layers and Linear exports have): the
  // epilogue is 1*t + 1*c, and 1*v = v bit for bit (a NaN stays the same quiet NaN), so it is Add(t, c), which the
  // core applies to each tile as it stores it; no pass of its own.
  const bool unit_alpha = p.alpha == 1.0f;
  const bool c_as_addend = unit_alpha && c && p.beta == 1.0f && p.c_cs == 1 && (p.c_rs == 0 || p.c_rs == p.N);
  GemmOut out{yd, p.N, 1, nullptr};
  if (c_as_addend) out.epilogue = StoreEpilogue{c, p.c_rs == 0, false, Activation::None, {}};
  product_of_strided(ctx, p.M, p.N, p.K, {ctx.input(0).data<float>(), p.a_rs, p.a_cs},
                     {ctx.input(1).data<float>(), p.b_cs, p.b_rs}, out);
  if (unit_alpha && (!c || c_as_addend)) return;
  ctx.pool->parallel_for(p.M, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t n = 0; n < p.N; ++n) {
        float cv = c ? c[m * p.c_rs + n * p.c_cs] : 0.0f;
        yd[m * p.N + n] = arith::gemm_epilogue_f32(yd[m * p.N + n], p.alpha, c != nullptr, cv, p.beta);
      }
  }, std::max<int64_t>(1, 4096 / std::max<int64_t>(p.N, 1)));
}

namespace {

// Integer MatMul: exact (wrapping) arithmetic, so any order gives the same result.
template <typename T>
void matmul_int(KernelContext& ctx, const MatMulParams& p, Tensor& y) {
  using U = std::make_unsigned_t<T>;
  const T* a = ctx.input(0).data<T>();
  const T* b = ctx.input(1).data<T>();
  T* yd = y.data<T>();
  ctx.pool->parallel_for(p.batch * p.M, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t bi = r / p.M, m = r % p.M;
      const T* ar = a + p.a_offset(bi) + m * p.K;
      const T* bm = b + p.b_offset(bi);
      for (int64_t n = 0; n < p.N; ++n) {
        U acc = 0;
        for (int64_t k = 0; k < p.K; ++k) acc += static_cast<U>(ar[k]) * static_cast<U>(bm[k * p.N + n]);
        yd[r * p.N + n] = static_cast<T>(acc);
      }
    }
  }, 1);
}

}  // namespace

// Contract: dot_chunked_f32 over k ascending, init +0; see docs/arithmetic.md#matmul.
void matmul(KernelContext& ctx) {
  MatMulParams p = matmul_params(ctx);
  const Tensor& at = ctx.input(0);
  Tensor& y = ctx.output(0, at.dtype(), p.out_shape);
  if (y.numel() == 0) return;
  if (at.dtype() == DType::Int32) return matmul_int<int32_t>(ctx, p, y);
  if (at.dtype() == DType::Int64) return matmul_int<int64_t>(ctx, p, y);
  const float* a = at.data<float>();
  const float* b = ctx.input(1).data<float>();
  float* yd = y.data<float>();
  const int64_t MN = p.M * p.N;
  // Every batch shares one B and A is not broadcast: the batch folds into M (one packing of B per panel).
  if (p.b_shared() && at.numel() == p.batch * p.M * p.K) {
    product_of_strided(ctx, p.batch * p.M, p.N, p.K, {a, p.K, 1}, {b, 1, p.N}, GemmOut{yd, p.N, 1, nullptr});
    return;
  }
  auto one = [&](ThreadPool* pool, int64_t bi) {
    gemm_f32_strided(pool, p.M, p.N, p.K, a + p.a_offset(bi), p.K, 1, b + p.b_offset(bi), p.N, 1,
                     GemmOut{yd + bi * MN, p.N, 1, nullptr});
  };
  // Batches run side by side when there are enough of them, or when each is so small (attention's 128x64x128)
  // that splitting it over the pool costs more in round trips (pack B, pack A, product) than it gains.
  if (p.batch >= 2 * ctx.pool->size() || (p.batch >= 2 && p.M * p.N * p.K <= kSmallProduct)) {
    ctx.pool->parallel_for(p.batch, [&](int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) one(nullptr, bi);
    }, 1);
  } else {
    for (int64_t bi = 0; bi < p.batch; ++bi) one(ctx.pool, bi);
  }
}

namespace {

// A float Dot step over one contracted label as batched strided products on the gemm core (the same
// dot_chunked_f32 from +0 per element): output dims are batch dims (any), at most one dim read only by a (M) and
// one read only by b (N). Returns false when the step has another form.
bool einsum_dot_as_gemm(KernelContext& ctx, const EinsumStep& s, const float* a, const float* b, float* out) {
  if (s.kind != EinsumStep::Dot || s.k_rank != 1) return false;
  int m_dim = -1, n_dim = -1;
  std::vector<int> batch;
  int64_t y_stride[kMaxRank], stride = 1;
  for (int d = s.out_rank - 1; d >= 0; --d) {
    y_stride[d] = stride;
    stride *= s.out_dims[d];
  }
  for (int d = 0; d < s.out_rank; ++d) {
    const bool in_a = s.a_out[d] != 0, in_b = s.b_out[d] != 0;
    int& slot = in_a ? m_dim : n_dim;
    if (in_a == in_b || slot >= 0) batch.push_back(d);
    else slot = d;
  }
  const int64_t M = m_dim >= 0 ? s.out_dims[m_dim] : 1, N = n_dim >= 0 ? s.out_dims[n_dim] : 1;
  const int64_t a_rs = m_dim >= 0 ? s.a_out[m_dim] : 0, y_rs = m_dim >= 0 ? y_stride[m_dim] : 0;
  const int64_t b_cs = n_dim >= 0 ? s.b_out[n_dim] : 0, y_cs = n_dim >= 0 ? y_stride[n_dim] : 0;
  int64_t batches = 1;
  for (int d : batch) batches *= s.out_dims[d];
  auto one = [&](ThreadPool* pool, int64_t bi) {
    int64_t ao = 0, bo = 0, yo = 0;
    for (size_t j = batch.size(); j-- > 0;) {
      const int d = batch[j];
      const int64_t i = bi % s.out_dims[d];
      bi /= s.out_dims[d];
      ao += i * s.a_out[d];
      bo += i * s.b_out[d];
      yo += i * y_stride[d];
    }
    gemm_f32_strided(pool, M, N, s.K, a + ao, a_rs, s.a_k[0], b + bo, s.b_k[0], b_cs, GemmOut{out + yo, y_rs, y_cs});
  };
  if (batches >= 2) {
    ctx.pool->parallel_for(batches, [&](int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) one(nullptr, bi);
    }, 1);
  } else {
    one(ctx.pool, 0);
  }
  return true;
}

struct CpuEinsum {
  // Contract: each element by einsum_element (canonical sum or dot_chunked over k), or the gemm core for float
  // products (the same sequence); docs/arithmetic.md#einsum.
  template <typename T>
  static void einsum_step(KernelContext& ctx, const EinsumStep& s, const T* a, const T* b, T* out) {
    if constexpr (std::is_same_v<T, float>)
      if (einsum_dot_as_gemm(ctx, s, a, b, out)) return;
    ctx.pool->parallel_for(s.n_out, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = einsum_element(s, a, b, o);
    }, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, s.K)));
  }
};

}  // namespace

// Contract: Einsum as planned Copy/Sum/Dot steps (docs/arithmetic.md#einsum).
void einsum(KernelContext& ctx) { run_einsum<CpuEinsum>(ctx); }

// Contract: arith::det_in_place_f32 on a copy of each matrix; see docs/arithmetic.md#det.
void det(KernelContext& ctx) {
  Shape out_shape;
  const int64_t m = det_plan(ctx, &out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  const float* x = ctx.input(0).data<float>();
  float* yd = y.data<float>();
  ctx.pool->parallel_for(y.numel(), [&](int64_t begin, int64_t end) {
    std::vector<float> a(static_cast<size_t>(m * m));
    for (int64_t b = begin; b < end; ++b) {
      std::copy(x + b * m * m, x + (b + 1) * m * m, a.begin());
      yd[b] = arith::det_in_place_f32(a.data(), m);
    }
  }, 1);
}

}  // namespace lockstep::cpu
