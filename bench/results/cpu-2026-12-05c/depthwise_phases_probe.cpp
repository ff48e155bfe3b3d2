// Probe: per run of C planes, the time in packing phase planes, the plane kernel and the grid-to-output copy.
// Arguments: C H STRIDE K. See README.md for the build line.
#include <chrono>
#include <cstdio>
#include <vector>
#include <random>
#include "cpu/conv/depthwise.h"
#include "cpu/conv/phase_planes.h"
#include "ops/conv.h"
using namespace lockstep; using namespace lockstep::cpu;
double now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  int C=atoi(argv[1]), H=atoi(argv[2]), s=atoi(argv[3]), k=atoi(argv[4]);
  ConvGeom g;
  g.batch=1; g.c_in=C; g.group=C; g.cin_g=1; g.cout_g=1; g.c_out=C;
  g.in[0]=1; g.in[1]=H; g.in[2]=H; g.kernel[0]=1; g.kernel[1]=k; g.kernel[2]=k;
  g.stride[0]=1; g.stride[1]=s; g.stride[2]=s; g.pad[0]=0; g.pad[1]=k/2; g.pad[2]=k/2;
  g.dilation[0]=g.dilation[1]=g.dilation[2]=1; g.out[0]=1; g.out[1]=(H+2*(k/2)-k)/s+1; g.out[2]=g.out[1];
  std::vector<float> x(size_t(C)*H*H), y(size_t(C)*g.out[1]*g.out[2]), w(C*k*k);
  std::mt19937 r(1); for(auto&v:x) v=r()%100/50.f-1; for(auto&v:w) v=r()%100/50.f-1;
  CopyRowsFn cr = copy_rows_for(cpu_isa());
  PhasePlanes planes(g, kGridBlock);
  std::vector<const float*> tap_src; for(int kh=0;kh<k;++kh)for(int kw=0;kw<k;++kw) tap_src.push_back(planes.tap(g,kh,kw));
  int64_t pixels=planes.pixels(), pitch=planes.pitch(), P=g.out[1]*g.out[2];
  std::vector<float> grid((pixels+15)/16*16+16);
  double tp=0,tk=0,tc=0;
  for(int rep=0;rep<60;++rep){
    double a=0,b=0,c=0;
    for(int ch=0;ch<C;++ch){
      double t0=now(); planes.pack(x.data()+size_t(ch)*H*H, cr);
      double t1=now(); depthwise_plane_f32_avx2({tap_src.data(), w.data()+ch*k*k, k*k, 0.f, pixels, grid.data()});
      double t2=now(); cr(grid.data(), pitch,1,y.data()+ch*P, g.out[2], g.out[1], g.out[2]);
      double t3=now(); a+=t1-t0;b+=t2-t1;c+=t3-t2;
    }
    if(rep>=10){tp+=a;tk+=b;tc+=c;}
  }
  printf("C=%d H=%d s=%d k=%d: pack %.1f us kernel %.1f us copy %.1f us (per run)\n",C,H,s,k,tp/50*1e6,tk/50*1e6,tc/50*1e6);
}
