// lockstep: host/device function qualifier for code shared by the CPU and CUDA providers.
#pragma once

#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__ __forceinline__
#else
#define LOCKSTEP_HD inline
#endif
