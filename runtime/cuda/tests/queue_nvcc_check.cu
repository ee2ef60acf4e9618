// Compile check: queue.cuh in device code (sm_80, sm_90) and in nvcc's host
// pass. `make -f nvme.mk check-queue-nvcc`.
#include <bam/nvme/queue.cuh>

__global__ void queue_nvcc_check(const bam::nvme::queue_set* qs, uint8_t* buf, int* status)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	int st = qs->read(i * 4096, 4096, buf + i * 4096);
	if (st == 0) st = qs->write(i * 4096, 4096, buf + i * 4096);
	status[i] = st;
}

int queue_nvcc_check_host(const bam::nvme::queue_set* qs, uint8_t* buf)
{
	return qs->read(0, 4096, buf);
}

// Direct (nvme) mode builds its PRPs from the DMA-map table on the device.
__global__ void queue_nvcc_check_direct(bam::nvme::queue* q, uint8_t* line, int* status)
{
	*status = q->io(BAM_NVME_CMD_READ, 0, 65536, line);
}
