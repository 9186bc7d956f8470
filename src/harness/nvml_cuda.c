/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_cuda.c -- GPU clocks and the driver version through NVML
 * (run_cuda_parts.h), loaded with dlopen() so that a machine without the
 * driver's NVML library still runs (clocks then -1). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_cuda_parts.h"

/* The few NVML declarations used (nvml.h): a device handle is an opaque
 * pointer, results and clock types are ints. */
typedef void *rg_nvml_device;
enum { RG_NVML_SUCCESS = 0, RG_NVML_CLOCK_SM = 1, RG_NVML_CLOCK_MEM = 2 };

struct rg_nvml {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_index)(unsigned, rg_nvml_device *);
    int (*by_pci)(const char *, rg_nvml_device *);
    int (*clock)(rg_nvml_device, int, unsigned *);
    int (*driver)(char *, unsigned);
    rg_nvml_device dev;
    int ok;
};

/* dlsym returns void *; ISO C has no conversion to a function pointer, a
 * byte copy of the same-size pointer is the portable spelling. */
static int sym(void *lib, const char *name, void *fnptr, size_t fnsize)
{
    void *p = dlsym(lib, name);
    if (!p || fnsize != sizeof p) return 1;
    memcpy(fnptr, &p, fnsize);
    return 0;
}

rg_nvml *rg_nvml_open(int cuda_device)
{
    rg_nvml *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) return free(n), NULL;
    if (sym(n->lib, "nvmlInit_v2", &n->init, sizeof n->init) ||
        sym(n->lib, "nvmlShutdown", &n->shutdown, sizeof n->shutdown) ||
        sym(n->lib, "nvmlDeviceGetHandleByIndex_v2", &n->by_index, sizeof n->by_index) ||
        sym(n->lib, "nvmlDeviceGetClockInfo", &n->clock, sizeof n->clock) || n->init() != RG_NVML_SUCCESS) {
        dlclose(n->lib);
        free(n);
        return NULL;
    }
    if (sym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->by_pci, sizeof n->by_pci)) n->by_pci = NULL;
    if (sym(n->lib, "nvmlSystemGetDriverVersion", &n->driver, sizeof n->driver)) n->driver = NULL;
    /* NVML numbers devices differently from CUDA when CUDA_VISIBLE_DEVICES is
     * set: match by PCI bus id first. */
    char bus[64];
    if (n->by_pci && cudaDeviceGetPCIBusId(bus, (int)sizeof bus, cuda_device) == cudaSuccess &&
        n->by_pci(bus, &n->dev) == RG_NVML_SUCCESS)
        n->ok = 1;
    else if (n->by_index((unsigned)cuda_device, &n->dev) == RG_NVML_SUCCESS)
        n->ok = 1;
    return n;
}

void rg_nvml_clocks(rg_nvml *n, int *sm, int *mem)
{
    unsigned v;
    *sm = *mem = -1;
    if (!n || !n->ok) return;
    if (n->clock(n->dev, RG_NVML_CLOCK_SM, &v) == RG_NVML_SUCCESS) *sm = (int)v;
    if (n->clock(n->dev, RG_NVML_CLOCK_MEM, &v) == RG_NVML_SUCCESS) *mem = (int)v;
}

int rg_nvml_driver(rg_nvml *n, char *dst, size_t len)
{
    char dv[80];
    if (!n || !n->ok || !n->driver || !dst || n->driver(dv, sizeof dv) != RG_NVML_SUCCESS) return 1;
    snprintf(dst, len, "%.31s", dv);
    return 0;
}

void rg_nvml_close(rg_nvml *n)
{
    if (!n) return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}
