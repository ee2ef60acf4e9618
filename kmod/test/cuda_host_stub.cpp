// SPDX-License-Identifier: MIT
//
// The few CUDA runtime calls the nvme backend's host code makes, answered
// with host memory, so that bam_backend_test can run the backend in the
// QEMU guest, which has no GPU: "device" memory is host memory, a mapped
// host pointer is its own device pointer (as with unified addressing), and
// registering memory or the BAR succeeds without doing anything. CPU threads
// then play the GPU threads. Test-only; never linked into libbam.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

namespace {

// Every allocation 64 KiB aligned, like large cudaMalloc results.
void* alloc(size_t n)
{
	return aligned_alloc(65536, (n + 65535) / 65536 * 65536);
}

} // namespace

extern "C" {

cudaError_t CUDARTAPI cudaMalloc(void** p, size_t n)
{
	*p = alloc(n);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t CUDARTAPI cudaFree(void* p)
{
	free(p);
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostAlloc(void** p, size_t n, unsigned int)
{
	return cudaMalloc(p, n);
}

cudaError_t CUDARTAPI cudaFreeHost(void* p)
{
	return cudaFree(p);
}

cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t n, enum cudaMemcpyKind)
{
	memmove(dst, src, n);
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemset(void* p, int v, size_t n)
{
	memset(p, v, n);
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostRegister(void*, size_t, unsigned int)
{
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostUnregister(void*)
{
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostGetDevicePointer(void** d, void* h, unsigned int)
{
	*d = h;
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
	return cudaSuccess;
}

const char* CUDARTAPI cudaGetErrorString(cudaError_t)
{
	return "CUDA stub error";
}

} // extern "C"
