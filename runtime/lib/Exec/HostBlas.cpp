//===- HostBlas.cpp - the CPU kernels' GEMM: OpenBLAS, loaded apart -------===//
#include "ditc/Runtime/Exec/HostBlas.h"

#include <dlfcn.h>
#include <mutex>

namespace ditc::runtime {

namespace {
// CBLAS's enumerations, as every CBLAS numbers them.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using Sgemm = void (*)(int order, int transA, int transB, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta, float *c,
                       int ldc);
using SetThreads = void (*)(int);

Sgemm loadSgemm() {
  void *library = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return nullptr;
  auto sgemm = reinterpret_cast<Sgemm>(::dlsym(library, "cblas_sgemm"));
  // One thread per call: the tiles are the parallel loop (ATen's pool).
  if (auto setThreads = reinterpret_cast<SetThreads>(::dlsym(library, "openblas_set_num_threads")))
    setThreads(1);
  return sgemm;
}

Sgemm hostSgemm() {
  static std::once_flag once;
  static Sgemm sgemm = nullptr;
  std::call_once(once, [] { sgemm = loadSgemm(); });
  return sgemm;
}
} // namespace

bool hostBlasLoaded() { return hostSgemm() != nullptr; }

void hostGemmNT(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                const float *b, int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  hostSgemm()(kRowMajor, kNoTrans, kTrans, int(m), int(n), int(k), 1.0f, a, int(lda), b,
              int(ldb), accumulate ? 1.0f : 0.0f, c, int(ldc));
}

} // namespace ditc::runtime
