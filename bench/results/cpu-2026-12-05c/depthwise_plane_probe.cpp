// Probe: main's depthwise plane kernel on one phase plane held in L1, 20,000 calls; prints fma per cycle at
// 3.2 GHz. Arguments: H K (an H x H plane, K x K kernel, stride 1). See README.md for the build line.
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdlib>
#include "cpu/conv/depthwise.h"
#include "cpu/conv/phase_planes.h"
#include "ops/conv.h"
using namespace lockstep; using namespace lockstep::cpu;
double now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  int H=atoi(argv[1]), k=atoi(argv[2]);
  ConvGeom g; g.batch=1; g.c_in=1; g.group=1; g.cin_g=1; g.cout_g=1; g.c_out=1;
  g.in[1]=H; g.in[2]=H; g.kernel[1]=k; g.kernel[2]=k; g.pad[1]=k/2; g.pad[2]=k/2; g.out[1]=H; g.out[2]=H;
  std::vector<float> x(H*H, 0.5f), w(k*k, 0.25f);
  PhasePlanes planes(g, kGridBlock);
  planes.pack(x.data(), copy_rows_for(cpu_isa()));
  std::vector<const float*> tap_src; for(int kh=0;kh<k;++kh)for(int kw=0;kw<k;++kw) tap_src.push_back(planes.tap(g,kh,kw));
  int64_t pixels=planes.pixels();
  std::vector<float> grid((pixels+15)/16*16+64);
  int reps=20000; double best=1e9;
  for(int t=0;t<5;++t){ double t0=now(); for(int r=0;r<reps;++r) depthwise_plane_f32_avx2({tap_src.data(), w.data(), k*k, 0.f, pixels, grid.data()}); double d=(now()-t0)/reps; if(d<best)best=d;}
  double fmas = double((pixels+7)/8)*k*k;
  printf("H=%d k=%d: %.0f ns per plane, %.2f fma/cycle @3.2GHz\n",H,k,best*1e9,fmas/(best*3.2e9));
}
