// MaxPool and AveragePool across the output width: geometry, packing, borders, threading and the per-ISA choice
// of the row kernels. Each plane is packed once (src/cpu/tap_rows.h); every output row then hands its taps'
// packed rows to the ISA kernel.
#include "cpu/pool/window_pool.h"

#include <limits>
#include <vector>

#include "arith/reduce_ops.h"
#include "cpu/isa.h"
#include "cpu/tap_rows.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

using MaxRowFn = void (*)(const float* const*, int64_t, int64_t, float*);
using AverageRowFn = void (*)(const float* const*, int64_t, int64_t, int64_t, float*);

struct RowKernels {
  MaxRowFn max_row = nullptr;
  AverageRowFn average_row = nullptr;
};

RowKernels row_kernels(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == CpuIsa::Avx512) return {max_pool_row_f32_avx512, average_pool_row_f32_avx512};
  if (isa == CpuIsa::Avx2) return {max_pool_row_f32_avx2, average_pool_row_f32_avx2};
#endif
  return {};
}

TapColumns columns_of(const arith::PoolGeom& g) {
  return {g.in[2], g.out[2], g.kernel[2], g.stride[2], g.dilation[2], g.pad_begin[2]};
}

/// A tap class (arith::pool_tap_class) that makes the tap an AveragePool term.
bool is_term(const arith::PoolGeom& g, int tap_class) { return tap_class == 0 || (tap_class == 1 && g.count_include_pad); }

/// The output columns whose kernel columns are all terms: there every output of a row has the same terms, in
/// the same order, so the vector kernel serves them. The set is an interval.
void uniform_columns(const arith::PoolGeom& g, int64_t& begin, int64_t& end) {
  auto uniform = [&](int64_t ow) {
    for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
      if (!is_term(g, arith::pool_tap_class(g, 2, ow * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2])))
        return false;
    return true;
  };
  begin = 0;
  while (begin < g.out[2] && !uniform(begin)) ++begin;
  end = begin;
  while (end < g.out[2] && uniform(end)) ++end;
}

/// Input row of kernel row kh for output row oh.
int64_t input_row(const arith::PoolGeom& g, int64_t oh, int64_t kh) {
  return oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
}

/// Runs fn(plane, rows, tap_src) for every plane, planes split over the pool's threads; rows holds the plane
/// packed with `fill`, tap_src is scratch for the caller: room for twice the window's taps.
template <typename Fn>
void for_each_plane(ThreadPool& pool, const arith::PoolGeom& g, const float* x, float fill, Fn fn) {
  pool.parallel_for(g.planes, [&](int64_t p0, int64_t p1) {
    TapRows rows;
    std::vector<const float*> tap_src(static_cast<size_t>(2 * g.kernel[1] * g.kernel[2]));
    for (int64_t plane = p0; plane < p1; ++plane) {
      rows.pack(x + plane * g.in_plane, g.in[1], columns_of(g), fill);
      fn(plane, rows, tap_src.data());
    }
  }, 1);
}

}  // namespace

bool window_pool_serves(const arith::PoolGeom& g) {
  const bool planar = g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.pad_begin[0] == 0 && g.pad_end[0] == 0;
  return planar && row_kernels(cpu_isa()).max_row != nullptr;
}

// Contract: MaxPool = MAX(inside taps) in row-major kernel order (padding and outside taps read -inf, which
// never takes); see docs/arithmetic.md#pool.
void max_pool_f32_rows(ThreadPool& pool, const arith::PoolGeom& g, const float* x, float* y) {
#if defined(__x86_64__) || defined(__i386__)
  const bool three_by_three_stride_2 = g.kernel[1] == 3 && g.kernel[2] == 3 && g.stride[1] == 2 && g.stride[2] == 2 &&
                                       g.dilation[1] == 1 && g.dilation[2] == 1 && g.pad_begin[1] == 1 &&
                                       g.pad_begin[2] == 1;
  if (three_by_three_stride_2 && cpu_isa() == CpuIsa::Avx512)
    return pool.parallel_for(g.planes, [&](int64_t p0, int64_t p1) {
      for (int64_t plane = p0; plane < p1; ++plane)
        max_pool_3x3_stride2_plane_f32_avx512(
            {x + plane * g.in_plane, g.in[1], g.in[2], y + plane * g.out_plane, g.out[1], g.out[2]});
    }, 1);
#endif
  const MaxRowFn max_row = row_kernels(cpu_isa()).max_row;
  const float ninf = -std::numeric_limits<float>::infinity();
  for_each_plane(pool, g, x, ninf, [&](int64_t plane, const TapRows& rows, const float** tap_src) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const float** t = tap_src;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) *t++ = rows.row(input_row(g, oh, kh)) + rows.column_offset(kw);
      max_row(tap_src, t - tap_src, g.out[2], y + plane * g.out_plane + oh * g.out[2]);
    }
  });
}

// Contract: AveragePool = S(terms) / float(count); the uniform columns run the vector kernel, the border
// columns arith::avgpool_window_f32; see docs/arithmetic.md#pool.
void average_pool_f32_rows(ThreadPool& pool, const arith::PoolGeom& g, const float* x, float* y) {
  const AverageRowFn average_row = row_kernels(cpu_isa()).average_row;
  int64_t begin = 0, end = 0;
  uniform_columns(g, begin, end);
  // Each border column has its own terms: the kernel columns whose tap is a term there (by output column, then kw).
  std::vector<int64_t> border;
  for (int64_t ow = 0; ow < g.out[2]; ++ow)
    if (ow < begin || ow >= end) border.push_back(ow);
  std::vector<uint8_t> column_term(border.size() * g.kernel[2]);
  for (size_t b = 0; b < border.size(); ++b)
    for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
      column_term[b * g.kernel[2] + kw] =
          is_term(g, arith::pool_tap_class(g, 2, border[b] * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2]));
  for_each_plane(pool, g, x, 0.0f, [&](int64_t plane, const TapRows& rows, const float** tap_src) {
    const float* xp = x + plane * g.in_plane;
    float* yp = y + plane * g.out_plane;
    const float** border_taps = tap_src + g.kernel[1] * g.kernel[2];  // the scratch's second half
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const float** t = tap_src;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t ih = input_row(g, oh, kh);
        if (!is_term(g, arith::pool_tap_class(g, 1, ih))) continue;
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) *t++ = rows.row(ih) + rows.column_offset(kw);
      }
      float* yr = yp + oh * g.out[2];
      average_row(tap_src, t - tap_src, begin, end, yr);
      // A border column's terms in the window's order, through the same row kernel on one column: the sequence
      // arith::avgpool_window_f32 computes (which a column without any term keeps: 0 / 0).
      for (size_t b = 0; b < border.size(); ++b) {
        const float** u = border_taps;
        for (const float** tap = tap_src; tap < t; tap += g.kernel[2])
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
            if (column_term[b * g.kernel[2] + kw]) *u++ = tap[kw];
        const int64_t ow = border[b];
        if (u == border_taps) yr[ow] = arith::avgpool_window_f32(g, xp, oh * g.out[2] + ow);
        else average_row(border_taps, u - border_taps, ow, ow + 1, yr);
      }
    }
  });
}

}  // namespace lockstep::cpu
