// The gemm family (Gemm, MatMul): attribute parsing, validation and output shapes shared by both devices, the
// kernels of each device, and the CPU GEMM core that Conv also uses. Contract: docs/arithmetic.md#gemm.
#pragma once

#include <cstdint>
#include <functional>
#include <new>
#include <utility>
#include <vector>

#include "arith/reduce.h"
#include "cpu/isa.h"
#include "ops/common.h"
#include "ops/epilogue.h"
#include "runtime/kernel.h"

namespace lockstep {

class ThreadPool;

/// Gemm's operands after validation. A'(m,k) = a[m*a_rs + k*a_cs], B'(k,n) = b[k*b_rs + n*b_cs];
/// C (if present) is read at c[m*c_rs + n*c_cs] (0 strides on broadcast dims).
struct GemmParams {
  int64_t M = 0, N = 0, K = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0;
  bool has_c = false;
  int64_t c_rs = 0, c_cs = 0;
  float alpha = 1.0f, beta = 1.0f;
  Shape out_shape;
};
GemmParams gemm_params(const KernelContext& ctx);

/// MatMul after numpy broadcasting. Each of `batch` matrices is (M,K) x (K,N); batch index b (row-major over
/// batch_dims) reads A at a_offset(b) and B at b_offset(b), both contiguous row-major matrices.
struct MatMulParams {
  int64_t M = 0, N = 0, K = 0;
  Shape batch_dims;                        // broadcast batch shape (may be empty)
  std::vector<int64_t> a_batch_strides;    // element strides per batch dim (0 where broadcast)
  std::vector<int64_t> b_batch_strides;
  int64_t batch = 1;                       // product of batch_dims
  Shape out_shape;
  int64_t a_offset(int64_t b) const { return batch_offset(b, a_batch_strides); }
  int64_t b_offset(int64_t b) const { return batch_offset(b, b_batch_strides); }
  /// True when every batch reads the same B (so the batch can be folded into M).
  bool b_shared() const;
  int64_t batch_offset(int64_t b, const std::vector<int64_t>& strides) const;
};
MatMulParams matmul_params(const KernelContext& ctx);
/// The shapes of MatMul-like inputs 0 and 1 (MatMul, MatMulInteger), their element types left to the caller.
MatMulParams matmul_shapes(const KernelContext& ctx);

/// One step of an Einsum plan (docs/arithmetic.md#einsum): out[o] for o in row-major order over out_dims, from
/// operand a (and b for Dot), read through strides per output dim and per term dim; term k runs row-major over
/// k_dims. Copy: out = a (transpose, diagonal); Sum: the canonical sum over k (ReduceSum's contract); Dot:
/// dot_chunked over k from +0 (MatMul's contract). POD: CUDA kernels take it by value.
struct EinsumStep {
  enum Kind : int { Copy, Sum, Dot } kind = Copy;
  int a_src = 0, b_src = 0;  // >= 0: that operand; < 0: the output of step -src - 1
  int out_rank = 0, k_rank = 0;
  int64_t n_out = 1, K = 1;
  int64_t out_dims[kMaxRank], a_out[kMaxRank], b_out[kMaxRank];
  int64_t k_dims[kMaxRank], a_k[kMaxRank], b_k[kMaxRank];
};
/// The steps in order; the last one writes the output.
struct EinsumPlan {
  std::vector<EinsumStep> steps;
  Shape out_shape;
};
/// Parses the equation (explicit or implicit output, ellipsis), checks the operands' dims and plans the steps:
/// operands are contracted left to right, each first summed over the labels no later step needs.
EinsumPlan plan_einsum(const KernelContext& ctx);

/// Element o of an Einsum step (both devices call exactly this).
template <typename T>
LOCKSTEP_HD T einsum_element(const EinsumStep& s, const T* a, const T* b, int64_t o) {
  int64_t ao = 0, bo = 0;
  for (int d = s.out_rank - 1; d >= 0; --d) {
    const int64_t i = o % s.out_dims[d];
    o /= s.out_dims[d];
    ao += i * s.a_out[d];
    bo += i * s.b_out[d];
  }
  if (s.kind == EinsumStep::Copy) return a[ao];
  auto offset = [&](const int64_t* strides, int64_t k) {
    int64_t off = 0;
    for (int d = s.k_rank - 1; d >= 0; --d) {
      off += (k % s.k_dims[d]) * strides[d];
      k /= s.k_dims[d];
    }
    return off;
  };
  auto a_term = [&](int64_t k) { return a[ao + offset(s.a_k, k)]; };
  if (s.kind == EinsumStep::Sum) return arith::sum_canonical<T>(s.K, a_term);
  return arith::dot_chunked<T>(s.K, T(0), a_term, [&](int64_t k) { return b[bo + offset(s.b_k, k)]; });
}

/// Einsum on float or double operands: `Dev::einsum_step<T>(ctx, step, a, b, out)` runs one step (n_out > 0).
template <class Dev>
void run_einsum(KernelContext& ctx) {
  EinsumPlan p = plan_einsum(ctx);
  const DType t = ctx.input(0).dtype();
  Tensor& y = ctx.output(0, t, p.out_shape);
  std::vector<Tensor> temps;
  for (size_t s = 0; s + 1 < p.steps.size(); ++s) {
    const size_t bytes = static_cast<size_t>(p.steps[s].n_out) * dtype_size(t);
    temps.push_back(Tensor::over(t, {p.steps[s].n_out}, ctx.allocator->allocate(bytes ? bytes : 1)));
  }
  auto source = [&](int src) -> const void* { return src >= 0 ? ctx.input(src).raw() : temps[-src - 1].raw(); };
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const EinsumStep& step = p.steps[s];
    if (step.n_out == 0) continue;
    void* out = s + 1 == p.steps.size() ? y.raw() : temps[s].raw();
    const void* a = source(step.a_src);
    const void* b = step.kind == EinsumStep::Dot ? source(step.b_src) : nullptr;
    if (t == DType::Float)
      Dev::einsum_step(ctx, step, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(out));
    else
      Dev::einsum_step(ctx, step, static_cast<const double*>(a), static_cast<const double*>(b),
                       static_cast<double*>(out));
  }
}

/// A float product per batch: y[z] = A'[z] (M x K) * B'[z] (K x N), each y[z] contiguous (M x N) after y[z-1].
/// Batch z, row-major over batch_dims, reads A'(m, k) at a[a_off(z) + m*a_rs + k*a_cs] and B'(k, n) at
/// b[b_off(z) + k*b_rs + n*b_cs], the offsets summing index times stride over the batch dims (0: shared).
struct BatchedProduct {
  int64_t M = 0, N = 0, K = 0;
  const float* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const float* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  float* y = nullptr;
  std::vector<int64_t> batch_dims, a_batch_strides, b_batch_strides;
  StoreEpilogue epilogue;  // applied to each output after its rounding (FusedMatMul); inactive by default
};

/// Validates a Det node (X: ..., M, M, float32) and returns the matrix size M and the output shape X.shape[:-2].
int64_t det_plan(const KernelContext& ctx, Shape* out_shape);

namespace cpu {

/// 64-byte aligned memory for packed panels. Blocks of 256 KB to 8 MB that a thread frees are kept, up to 8 MB a
/// thread, for that thread's next request of the same size: the packed activations of a product recur at every run,
/// and malloc may have carved a freed block up for small allocations meanwhile, so that each run wrote its panels
/// into fresh pages (a page fault per 4 KB; ViT-B/16's K = 3072 products took twice their time).
void* allocate_cache_lines(size_t bytes);
void free_cache_lines(void* p, size_t bytes);

/// Allocates on 64-byte boundaries, so that every row of a packed panel (32 or 16 floats) is whole cache lines
/// and the micro-kernels' vector loads never split one.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_cache_lines(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { free_cache_lines(p, n * sizeof(T)); }
  /// Elements are default-initialized: a buffer of n floats is not zero-filled, since every user writes its panels
  /// before reading them (a fill was a pass over each packed operand: 5% of a batched attention MatMul).
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  bool operator==(const CacheLineAllocator&) const { return true; }
};
/// Packed panels of A or B.
using PanelBuffer = std::vector<float, CacheLineAllocator<float>>;

/// Fills a packed panel: for i in [0, count) and k in [0, K): dst[k*width + i] = operand(i0 + i, k);
/// for i in [count, width): dst[k*width + i] = 0. For A the index i is the row m; for B it is the column n.
using PanelFn = std::function<void(int64_t i0, int64_t count, int width, float* dst)>;

/// A strided matrix view: element (i, k) at data[i*is + k*ks].
struct StridedOperand {
  const float* data;
  int64_t is, ks;
};
/// The PanelFn of a strided matrix with K columns.
PanelFn strided_panels(StridedOperand op, int64_t K);

/// C's columns as the pixels of a Conv's grid (cpu/conv/phase_planes.h), where pitch > 0: column n is grid pixel
/// (n / pitch, n % pitch), which goes to column (n / pitch) * width + n % pitch of the output, or nowhere where
/// n % pitch >= width (the grid's extra columns, computed like the others). A tile whose columns all go to one
/// output row accumulates in the output; one that straddles a grid row's end keeps its running totals between
/// k-blocks in `totals` (N floats a row), or where K takes one k-block (grid_needs_totals) in a tile, and `totals`
/// may then be null.
struct GridColumns {
  int64_t pitch = 0, width = 0;
  float* totals = nullptr;
};

/// Where gemm_f32 writes: element (m, n) goes to data[m*rs + n*cs] and starts from init_row[m], else init_col[n]
/// (a transposed Conv's bias), else +0. Once its last chunk is added, each element goes through `epilogue` (a
/// fused node's Add and activation) while its tile is still in cache; the addend of element (m, n) is read at
/// epilogue.addend[m*rs + n*cs] (laid out as data), or at [n] when per_column.
struct GemmOut {
  float* data;
  int64_t rs, cs;
  const float* init_row = nullptr;
  const float* init_col = nullptr;
  StoreEpilogue epilogue = {};
};

/// Applies out.epilogue to a block of rows x cols elements of the output, element (m0 + i, n0 + j) held at
/// c[i*ldc + j]: what gemm_f32 does to each tile as it finishes, for products computed some other way.
// Contract: absorbed_ops_f32 per element; see docs/arithmetic.md#graph-rewrites.
void apply_gemm_epilogue(const GemmOut& out, float* c, int64_t ldc, int64_t rows, int64_t cols, int64_t m0,
                         int64_t n0);

/// The CPU GEMM core. C(m,n) = dot_chunked_f32(K, init, A(m,k), B(k,n)) for m < M, n < N, vectorised across
/// output columns, with the micro-kernel of cpu_isa() (src/cpu/isa.h). pool may be null (runs inline, e.g. from inside a parallel_for over images).
// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
void gemm_f32(ThreadPool* pool, int64_t M, int64_t N, int64_t K, const PanelFn& a_panels, const PanelFn& b_panels,
              const GemmOut& out);

/// A packed once for the micro-kernel of one ISA (MR-row panels, each K x MR, k-major), so that a caller can
/// reuse it over many products (Conv keeps its weights packed from one run to the next).
struct PackedA {
  CpuIsa isa;
  int64_t M, K;
  PanelBuffer data;
};
/// Packs A(m, k), m < M, k < K, for cpu_isa().
PackedA pack_a(ThreadPool* pool, int64_t M, int64_t K, const PanelFn& a_panels);
/// gemm_f32 on an A packed by pack_a (run with the micro-kernel of a.isa; every ISA gives the same bits).
// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
void gemm_f32_packed(ThreadPool* pool, const PackedA& a, int64_t N, const PanelFn& b_panels, const GemmOut& out);

/// gemm_f32_packed with B read in place: B(k, n) = b_rows[k][n] for n < N (Conv's input planes, or its taps on
/// the grid of cpu/conv/phase_planes.h, whose columns reach the output through `grid` where grid.pitch > 0). A
/// partial last panel of B is read in place by the ISA's tail kernels, or packed where it has none (scalar).
// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
void gemm_f32_packed_rows(ThreadPool* pool, const PackedA& a, int64_t N, const float* const* b_rows,
                          const GemmOut& out, const GridColumns& grid = {});
/// Whether gemm_f32_packed_rows on a grid of N columns takes K in several k-blocks, and so needs grid.totals.
bool grid_needs_totals(const PackedA& a, int64_t N);

/// B packed once for the micro-kernel of one ISA (NR-column panels, each K x NR, k-major), so that Gemm and
/// MatMul can keep constant weights packed from one run to the next.
struct PackedB {
  CpuIsa isa;
  int64_t N, K;
  PanelBuffer data;
};
/// Packs B(k, n), n < N, k < K (b_panels indexes it by column n), for cpu_isa().
PackedB pack_b(ThreadPool* pool, int64_t N, int64_t K, const PanelFn& b_panels);
/// gemm_f32 on a B packed by pack_b (A packed for b.isa on the way; every ISA gives the same bits).
// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
void gemm_f32_packed_b(ThreadPool* pool, int64_t M, const PanelFn& a_panels, const PackedB& b, const GemmOut& out);

/// gemm_f32_packed_b with A read in place, element (m, k) at a[m + k * lda] (its columns contiguous: Conv's input
/// planes as the taps of its transposed product, pixels along m), so that A is not packed.
// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
void gemm_f32_a_columns_packed_b(ThreadPool* pool, int64_t M, const float* a, int64_t lda, const PackedB& b,
                                 const GemmOut& out);

/// gemm_f32_packed_b for one row of A, read in place (element k at a[k]): a GEMV without packing A.
// Contract: dot_chunked_f32 over k ascending; see docs/arithmetic.md#gemm.
void gemm_f32_row_packed_b(ThreadPool* pool, const float* a, const PackedB& b, const GemmOut& out);

/// gemm_f32 over two strided matrices A(m,k) and B(k,n); may compute the transposed product when N is narrow
/// (each element's sequence is the same: fma is commutative in its two factors). init_row must be null then.
void gemm_f32_strided(ThreadPool* pool, int64_t M, int64_t N, int64_t K, const float* a, int64_t a_rs,
                      int64_t a_cs, const float* b, int64_t b_rs, int64_t b_cs, const GemmOut& out);

void gemm(KernelContext& ctx);
void matmul(KernelContext& ctx);
void einsum(KernelContext& ctx);
void det(KernelContext& ctx);
}  // namespace cpu

namespace cuda {
/// MatMul's float kernel on device operands (Attention's two products).
// Contract: dot_chunked_f32 over k ascending, init +0; see docs/arithmetic.md#matmul.
void batched_product_f32(const KernelContext& ctx, const BatchedProduct& p);

void gemm(KernelContext& ctx);
void matmul(KernelContext& ctx);
/// MatMul with a fused epilogue (float operands only when it is active).
void matmul_with_epilogue(KernelContext& ctx, const MatMulParams& p, const StoreEpilogue& epilogue);
void einsum(KernelContext& ctx);
void det(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
