//===- HostBlas.h - the CPU kernels' GEMM: OpenBLAS, loaded apart -*- C++ -*-===//
//
// The GEMM tiles of the CPU linear kernel (Kernels.cpp) run on OpenBLAS
// (Debian's libopenblas0-pthread), one thread per call. torch's wheel
// computes GEMMs with MKL, which on this project's AMD EPYC hosts runs a
// single-threaded 256-row tile at 95-103 GFLOP/s against OpenBLAS's 117,
// and the step with it was slower than on Debian's libtorch 1.13
// (docs/runtime.md, "Performance"). OpenBLAS is dlopen'ed with RTLD_LOCAL:
// its sgemm_ must not interpose on the one libtorch_cpu exports (MKL's),
// so torch's own GEMMs stay MKL's. Where the library is absent, the tiles
// go through ATen (MKL) as before.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_EXEC_HOSTBLAS_H
#define DITC_RUNTIME_EXEC_HOSTBLAS_H

#include <cstdint>

namespace ditc::runtime {

/// True once OpenBLAS is loaded (the first call loads it, set to one thread).
bool hostBlasLoaded();

/// C = A Bᵀ (+ C when `accumulate`), row-major float32: A is m x k with row
/// stride lda, B is n x k with row stride ldb, C is m x n with row stride
/// ldc. Only after hostBlasLoaded() returned true.
void hostGemmNT(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                const float *b, int64_t ldb, float *c, int64_t ldc, bool accumulate);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_EXEC_HOSTBLAS_H
