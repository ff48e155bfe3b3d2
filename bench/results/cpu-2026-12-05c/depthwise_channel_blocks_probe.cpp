// Probe: one depthwise conv of C planes (H x H, STRIDE, K x K) per run, on phase planes (pack, plane kernel, copy
// out: main before the channel blocks) and as channel blocks (depthwise_channel_block_f32_avx2), best of 200 runs.
// Arguments: C H STRIDE K. See README.md for the build line.
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdlib>
#include <random>
#include "cpu/conv/depthwise.h"
#include "cpu/conv/phase_planes.h"
#include "ops/conv.h"
using namespace lockstep; using namespace lockstep::cpu;
double now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  int C=atoi(argv[1]), H=atoi(argv[2]), s=atoi(argv[3]), k=atoi(argv[4]);
  ConvGeom g; g.batch=1; g.c_in=C; g.group=C; g.cin_g=1; g.cout_g=1; g.c_out=C;
  g.in[1]=H; g.in[2]=H; g.kernel[1]=k; g.kernel[2]=k; g.stride[1]=s; g.stride[2]=s; g.pad[1]=k/2; g.pad[2]=k/2;
  g.out[1]=(H+2*(k/2)-k)/s+1; g.out[2]=g.out[1];
  int64_t OH=g.out[1], P=OH*OH;
  std::vector<float> x(size_t(C)*H*H), y(size_t(C)*P), w(C*k*k), bias(C);
  std::mt19937 r(1); for(auto&v:x) v=r()%100/50.f-1; for(auto&v:w) v=r()%100/50.f-1;
  CopyRowsFn cr = copy_rows_for(cpu_isa());
  PhasePlanes planes(g, kGridBlock);
  std::vector<const float*> tap_src; for(int kh=0;kh<k;++kh)for(int kw=0;kw<k;++kw) tap_src.push_back(planes.tap(g,kh,kw));
  int64_t pixels=planes.pixels(), pitch=planes.pitch();
  std::vector<float> grid((pixels+15)/16*16+16);
  int64_t rp = channel_block_row_pixels(H, k/2, s, k, OH);
  std::vector<float> scratch(channel_block_scratch_floats(rp, k, 8) + 16, 0.0f);
  float* sc = scratch.data(); while (reinterpret_cast<uintptr_t>(sc) % 64) ++sc;
  double best_old=1e9, best_new=1e9;
  for(int rep=0;rep<200;++rep){
    double t0=now();
    for(int ch=0;ch<C;++ch){ planes.pack(x.data()+size_t(ch)*H*H, cr);
      depthwise_plane_f32_avx2({tap_src.data(), w.data()+ch*k*k, k*k, bias[ch], pixels, grid.data()});
      cr(grid.data(), pitch,1,y.data()+ch*P, OH, OH, OH); }
    double t1=now();
    for(int c0=0;c0<C;c0+=8) depthwise_channel_block_f32_avx2({x.data()+size_t(c0)*H*H, std::min(8,C-c0), H, H, k/2, k/2, s, k, OH, OH, w.data()+c0*k*k, bias.data()+c0, y.data()+size_t(c0)*P, nullptr, false, false, sc});
    double t2=now();
    best_old=std::min(best_old,t1-t0); best_new=std::min(best_new,t2-t1);
  }
  double fmas=double(C)*P*k*k/8;
  printf("C=%d H=%d s=%d k=%d: phase planes %.1f us, channel blocks %.1f us (%.2f fma/cycle @3.2)\n",C,H,s,k,best_old*1e6,best_new*1e6, fmas/(best_new*3.2e9));
}
