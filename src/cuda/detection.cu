// CUDA kernels of the detection family: one thread per (batch, class) runs arith::nms_select, the function the CPU
// calls, in device scratch; the counts and selections come back to the host for the shared driver to order.
// RoiAlign runs one thread per output element through arith::roi_align_element_f32.
#include "cuda/common.cuh"
#include "ops/detection.h"

namespace lockstep::cuda {

namespace {

// Contract: arith::nms_select per (batch, class); see docs/arithmetic.md#detection.
__global__ void nms_select_kernel(arith::NmsSettings s, int64_t classes, int64_t boxes, int64_t capacity,
                                  int64_t selections, const float* __restrict__ box_data,
                                  const float* __restrict__ scores, int64_t* __restrict__ work,
                                  int64_t* __restrict__ counts, int64_t* __restrict__ selected) {
  int64_t bc = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (bc >= selections) return;
  int64_t* order = work + bc * 2 * boxes;
  counts[bc] = arith::nms_select(box_data + bc / classes * boxes * 4, scores + bc * boxes, boxes, s, order,
                                 order + boxes, selected + bc * capacity);
}

// Copies n int64 values from the device to a host vector, waiting for the stream.
std::vector<int64_t> download(KernelContext& ctx, const Buffer& device, int64_t n) {
  std::vector<int64_t> host(n);
  check(ctx, cudaMemcpyAsync(host.data(), device.data, n * sizeof(int64_t), cudaMemcpyDeviceToHost, stream_of(ctx)),
        "cudaMemcpyAsync");
  check(ctx, cudaStreamSynchronize(stream_of(ctx)), "cudaStreamSynchronize");
  return host;
}

struct CudaNms {
  static NmsSelections select(KernelContext& ctx, const NmsPlan& p, const float* boxes, const float* scores) {
    const int64_t selections = p.batches * p.classes;
    auto work = ctx.allocator->allocate(selections * 2 * p.boxes * sizeof(int64_t));
    auto counts = ctx.allocator->allocate(selections * sizeof(int64_t));
    auto selected = ctx.allocator->allocate(selections * p.capacity * sizeof(int64_t));
    nms_select_kernel<<<blocks_for(selections), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        p.settings, p.classes, p.boxes, p.capacity, selections, boxes, scores, static_cast<int64_t*>(work->data),
        static_cast<int64_t*>(counts->data), static_cast<int64_t*>(selected->data));
    check_launch(ctx);
    return {download(ctx, *counts, selections), download(ctx, *selected, selections * p.capacity)};
  }
  static void store(KernelContext& ctx, const std::vector<int64_t>& rows, Tensor& out) {
    check(ctx, cudaMemcpyAsync(out.data<int64_t>(), rows.data(), rows.size() * sizeof(int64_t), cudaMemcpyHostToDevice,
                               stream_of(ctx)), "cudaMemcpyAsync");
  }
};

}  // namespace

// Contract: arith::nms_select per (batch, class), one thread each; see docs/arithmetic.md#detection.
void non_max_suppression(KernelContext& ctx) { run_nms<CudaNms>(ctx); }

// Contract: arith::roi_align_element_f32, one thread per output element; see docs/arithmetic.md#roialign.
void roi_align(KernelContext& ctx) {
  Shape out_shape;
  RoiAlignElement element = roi_align_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

}  // namespace lockstep::cuda
