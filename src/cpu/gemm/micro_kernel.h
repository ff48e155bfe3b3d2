// The GEMM core's micro-kernels: where they read B from, their signatures, and one ISA's set of them
// (IsaKernels). Each ISA's kernels live in a file named by type, tile and ISA (f32_4x8_scalar.cpp,
// f32_6x16_avx2.cpp, f32_8x48_avx512.cpp), the SIMD ones compiled with the ISA's flags (CMakeLists.txt);
// src/cpu/gemm.cpp drives them and picks a set per product (kernels_for).
//
// Every kernel computes dot_chunked_f32 per output: per 64-long chunk of k the lane starts a partial at +0, fma's the
// chunk in ascending k, then adds the partial to the running total kept in C (the first chunk's add reads init
// instead). That is the contract whichever kernel, tile or thread runs it (docs/arithmetic.md#gemm).
#pragma once

#include <array>
#include <cstdint>

namespace lockstep::cpu {

/// Where a micro-kernel reads row k of its B panel: a packed panel (K x NR, k-major) ...
struct PackedRows {
  // Within a panel the hardware prefetchers follow the rows; what comes next is asked for through the kernels'
  // ahead arguments (AheadLines).
  static constexpr bool kPrefetchNext = false;
  static constexpr bool kMaskedTail = false;
  const float* pb;
  int nr;
  const float* operator()(int64_t k) const { return pb + k * nr; }
};
/// ... or rows that lie in memory already (Conv's taps on the grid): row k of the panel at column n0 is rows[k] + n0.
struct PointedRows {
  // Rows scattered over planes, which the hardware does not follow: each row of the next panel (the next call's
  // B, whose columns follow these) is asked for while this one runs.
  static constexpr bool kPrefetchNext = true;
  static constexpr bool kMaskedTail = false;
  const float* const* rows;
  int64_t n0;
  const float* operator()(int64_t k) const { return rows[k] + n0; }
};
/// ... or the partial last panel of pointed rows, read only up to N: `tail` holds the lanes of the panel's last 16
/// columns that lie before N, which the kernel's last 16 lanes load alone (a masked load touches no memory outside
/// its mask), and whose C and init it reads and writes alone, so that the panel needs no packed copy and accumulates
/// in C k-block by k-block as full panels do (in a tile over all of K at once, it read its A panels whole, ahead of
/// the prefetches: 22% of a 3x3 conv's time on 14x14 planes for 14% of its work). 16 bytes, so that it is passed in
/// two registers as PointedRows is.
struct PointedRowsTail {
  static constexpr bool kPrefetchNext = false;  // the last panel: no next one
  static constexpr bool kMaskedTail = true;
  const float* const* rows;
  int32_t n0;
  uint16_t tail;
  const float* operator()(int64_t k) const { return rows[k] + n0; }
};


/// Adds the product of an A panel and a B panel to the first r rows of C (row i at c + i * ldc), chunk by chunk.
/// Row k of the A panel (its r elements side by side) is at pa + k * a_step: a_step = the tile height for a packed
/// panel, or the row stride of an A read in place (lda: Conv's input planes as the taps of its transposed product).
/// With init, the running totals start from init (row i at init + i * ldi: the bias, or +0) instead of C's
/// contents: the first chunk stores init + p, the operation a C filled with init would get, without the fill.
/// ahead, ahead_lines: the AheadLines of the call (a kernel may ignore them).
template <class B>
using MicroFn = void (*)(int64_t K, const float* pa, int64_t a_step, B b, float* c, int64_t ldc, const float* init,
                         int64_t ldi, const char* ahead, int64_t ahead_lines);

/// One ISA's micro-kernels: micro[r] computes the first r rows of an mr x nr tile (1 <= r <= mr), reading B from
/// a packed panel; micro_rows[r] the same from pointed rows.
/// One row of A (element k at a[k * a_step]) times `panels` consecutive packed B panels (panel p at
/// pb + p * panel_step), into C's row c[0 .. panels * NR) from init (as MicroFn's init). Each lane is the chain a
/// micro-kernel gives it; the panels' chains run side by side, so that a product with one row (a GEMV: the
/// recurrent ops' steps, a batch-1 classifier) is bound by the loads of B rather than by one chain's fma latency.
using RowFn = void (*)(int64_t K, const float* a, int64_t a_step, const float* pb, int64_t panel_step, float* c,
                       const float* init);
constexpr int kRowPanels = 4;  // the most B panels one RowFn call takes

struct IsaKernels {
  int mr, nr;
  // The bytes of one call's A slice and pointed B rows that a k-block may take (k_block_length): they stay in L1.
  // Measured per ISA on the machine it was tuned on: AVX2 on Zen 3 (32 KB L1), AVX-512 on Sapphire Rapids (48 KB).
  int64_t pointed_block_bytes;
  std::array<MicroFn<PackedRows>, 9> micro;
  std::array<MicroFn<PointedRows>, 9> micro_rows;
  std::array<RowFn, kRowPanels + 1> row;  // row[p] takes p panels (1 <= p <= kRowPanels)
  // micro and micro_rows with a fused Relu in the last chunk's store (null: the ISA applies Relu in the epilogue pass)
  std::array<MicroFn<PackedRows>, 9> micro_relu = {};
  std::array<MicroFn<PointedRows>, 9> micro_rows_relu = {};
  // For a partial last panel of at most (v + 1) * 16 columns, micro_narrow[v] computes only those (read from the
  // panel packed NR wide); null: the ISA computes the whole panel.
  std::array<std::array<MicroFn<PackedRows>, 9>, 2> micro_narrow = {};
  // For pointed rows' partial last panel of at most (v + 1) * 16 columns, micro_rows_tail[v] reads those in place
  // (PointedRowsTail); null: the ISA packs that panel first.
  std::array<std::array<MicroFn<PointedRowsTail>, 9>, 3> micro_rows_tail = {};
};


/// The kernel sets, one per ISA and tile; the SIMD ones exist on x86 only.
extern const IsaKernels kGemmScalar4x8;
extern const IsaKernels kGemmAvx2_6x16;
extern const IsaKernels kGemmAvx512_8x48;
/// The AVX-512 kernels on 32-wide panels, for products whose 48-wide panels would end in a 16-wide one that is a
/// large share of the work (N = 64: attention's P V with 64-wide heads, one 48-wide panel and one 16-wide; the 8x16
/// kernel makes 9 loads per 8 fmas). Chosen per product by kernels_for.
extern const IsaKernels kGemmAvx512_8x32;

}  // namespace lockstep::cpu
