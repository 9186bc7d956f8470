// cuda.cu -- placeholder; the kernels land here.
#include "ropegrad.h"
extern "C" int ropegrad_backward_cuda(const ropegrad_problem *p, void *s) { return ROPEGRAD_ERR_NO_CUDA; }
extern "C" int ropegrad_backward_cuda_kernel(const ropegrad_problem *p, int k, void *s) { return ROPEGRAD_ERR_NO_CUDA; }
extern "C" int ropegrad_cuda_kernel_count(void) { return 0; }
extern "C" const char *ropegrad_cuda_kernel_name(int k) { return 0; }
extern "C" int ropegrad_cuda_available(void) { return 0; }
