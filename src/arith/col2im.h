// The Col2Im contract in code (docs/arithmetic.md#col2im): each image element is the sum of the patch values that
// land on it, from +0, in ascending patch (block position) index. Plain C++ on the host, __host__ __device__ under
// nvcc, so both devices add the same terms in the same order.
#pragma once

#include <cstdint>

#include "arith/hd.h"

namespace lockstep::arith {

/// The most spatial dims Col2Im handles.
constexpr int kCol2ImMaxDims = 6;

/// Geometry passed by value to CUDA kernels. Block position l_d and kernel offset k_d of dim d cover image index
/// l_d * stride - pad + k_d * dilation. The input is (N, C * block_size, blocks), channel c * block_size + k.
struct Col2ImGeometry {
  int dims = 0;
  int64_t channels = 0, block_size = 1, num_blocks = 1, image_size = 1;
  int64_t image[kCol2ImMaxDims], block[kCol2ImMaxDims], blocks[kCol2ImMaxDims];
  int64_t stride[kCol2ImMaxDims], pad[kCol2ImMaxDims], dilation[kCol2ImMaxDims];  // pad: begin pads
};

/// The largest kernel offset k <= from of dim d whose block covers image index p, or -1. Lower k means a later
/// block, so walking k downwards walks the blocks upwards.
LOCKSTEP_HD int64_t col2im_offset_below(const Col2ImGeometry& g, int d, int64_t p, int64_t from) {
  for (int64_t k = from; k >= 0; --k) {
    int64_t q = p + g.pad[d] - k * g.dilation[d];
    if (q >= 0 && q % g.stride[d] == 0 && q / g.stride[d] < g.blocks[d]) return k;
  }
  return -1;
}

/// Image element e (row-major over (n, c, image)): acc = +0, then acc = acc + v for each covering (block, offset)
/// pair in ascending row-major block index.
LOCKSTEP_HD float col2im_element_f32(const Col2ImGeometry& g, const float* in, int64_t e) {
  int64_t p[kCol2ImMaxDims], k[kCol2ImMaxDims];
  int64_t rest = e;
  for (int d = g.dims - 1; d >= 0; --d) {
    p[d] = rest % g.image[d];
    rest /= g.image[d];
  }
  const float* plane = in + rest * g.block_size * g.num_blocks;  // rest = n * channels + c
  for (int d = 0; d < g.dims; ++d) {
    k[d] = col2im_offset_below(g, d, p[d], g.block[d] - 1);
    if (k[d] < 0) return 0.0f;
  }
  float acc = 0.0f;
  for (;;) {
    int64_t offset = 0, block = 0;
    for (int d = 0; d < g.dims; ++d) {
      offset = offset * g.block[d] + k[d];
      block = block * g.blocks[d] + (p[d] + g.pad[d] - k[d] * g.dilation[d]) / g.stride[d];
    }
    acc = acc + plane[offset * g.num_blocks + block];
    int d = g.dims - 1;
    for (; d >= 0; --d) {
      k[d] = col2im_offset_below(g, d, p[d], k[d] - 1);
      if (k[d] >= 0) break;
      k[d] = col2im_offset_below(g, d, p[d], g.block[d] - 1);
    }
    if (d < 0) return acc;
  }
}

}  // namespace lockstep::arith
