# Build rules for the NVMe queue protocol and the `emu` software controller.
# Included by runtime/cuda/Makefile; also usable alone:
#   make -f nvme.mk test-queue-cpu     # CPU stress tests, no GPU or CUDA needed
#   make -f nvme.mk check-queue-nvcc   # queue.cuh compiled for sm_80 and sm_90
#   make -f nvme.mk queue-gpu          # GPU test + benchmark (needs nvcc)
#
# Exports:
#   EMU_SRCS       controller sources (C++17; link with -lcudart -lpthread)
#   EMU_OBJS       objects in $(NVME_BUILD), CUDA-enabled when the CUDA headers
#                  are found (the emu falls back to host memory without a GPU)
#   EMU_HOST_OBJS  the same built without CUDA (host-memory mode only; the
#                  nvme queue_set builder then throws)
#   QUEUE_TESTS    CPU test sources

NVME_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
NVME_BUILD ?= $(NVME_DIR)/build/nvme

NVME_CXX ?= $(if $(filter default,$(origin CXX)),g++,$(CXX))
NVME_NVCC ?= $(or $(wildcard /usr/bin/nvcc),$(wildcard /usr/local/cuda/bin/nvcc),nvcc)
NVME_CXXFLAGS ?= -std=c++17 -O2 -g -Wall -Wextra -pthread
NVME_CUDA_INC ?= $(patsubst %/cuda_runtime_api.h,%,$(firstword $(wildcard /usr/local/cuda/include/cuda_runtime_api.h /usr/include/cuda_runtime_api.h)))
NVME_CUDA_LIB ?= $(patsubst %/libcudart.so,%,$(firstword $(wildcard /usr/local/cuda/lib64/libcudart.so /usr/lib/x86_64-linux-gnu/libcudart.so)))
NVME_GPU_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
NVME_TEST_TIMEOUT ?= 90

EMU_SRCS := $(NVME_DIR)/src/emu_controller.cpp $(NVME_DIR)/src/emu_direct.cpp
EMU_OBJS := $(NVME_BUILD)/emu_controller.o $(NVME_BUILD)/emu_direct.o
EMU_HOST_OBJS := $(NVME_BUILD)/emu_controller_host.o $(NVME_BUILD)/emu_direct_host.o
QUEUE_TESTS := $(NVME_DIR)/tests/queue_test.cpp
NVME_HEADERS := $(wildcard $(NVME_DIR)/include/bam/nvme/*.h $(NVME_DIR)/include/bam/nvme/*.cuh $(NVME_DIR)/include/bam/detail/config.cuh)

EMU_CUDA_FLAGS := $(if $(NVME_CUDA_INC),-DBAM_EMU_CUDA=1 $(if $(filter /usr/include,$(NVME_CUDA_INC)),,-I$(NVME_CUDA_INC)))

.PHONY: emu-objs test-queue-cpu test-queue-tsan check-queue-nvcc queue-gpu

emu-objs: $(EMU_OBJS) $(EMU_HOST_OBJS)

$(NVME_BUILD)/%.o: $(NVME_DIR)/src/%.cpp $(NVME_HEADERS)
	@mkdir -p $(@D)
	$(NVME_CXX) $(NVME_CXXFLAGS) $(EMU_CUDA_FLAGS) -I$(NVME_DIR)/include -c $< -o $@

$(NVME_BUILD)/%_host.o: $(NVME_DIR)/src/%.cpp $(NVME_HEADERS)
	@mkdir -p $(@D)
	$(NVME_CXX) $(NVME_CXXFLAGS) -DBAM_EMU_CUDA=0 -I$(NVME_DIR)/include -c $< -o $@

$(NVME_BUILD)/queue_test: $(QUEUE_TESTS) $(EMU_HOST_OBJS) $(NVME_HEADERS)
	@mkdir -p $(@D)
	$(NVME_CXX) $(NVME_CXXFLAGS) -I$(NVME_DIR)/include $(QUEUE_TESTS) $(EMU_HOST_OBJS) -o $@

# Twice: default queue flags, then full system fences and per-entry CQ reads.
test-queue-cpu: $(NVME_BUILD)/queue_test
	timeout $(NVME_TEST_TIMEOUT) $(NVME_BUILD)/queue_test
	QUEUE_TEST_FLAGS=0 timeout $(NVME_TEST_TIMEOUT) $(NVME_BUILD)/queue_test

check-queue-nvcc: $(NVME_BUILD)/queue_nvcc_check.o

$(NVME_BUILD)/queue_nvcc_check.o: $(NVME_DIR)/tests/queue_nvcc_check.cu $(NVME_HEADERS)
	@mkdir -p $(@D)
	$(NVME_NVCC) -std=c++17 -O2 $(NVME_GPU_ARCH) -I$(NVME_DIR)/include -c $< -o $@

queue-gpu: $(NVME_BUILD)/queue_gpu

$(NVME_BUILD)/queue_gpu: $(NVME_DIR)/tests/queue_gpu.cu $(EMU_SRCS) $(NVME_HEADERS)
	@mkdir -p $(@D)
	$(NVME_NVCC) -std=c++17 -O3 $(NVME_GPU_ARCH) -DBAM_EMU_CUDA=1 -I$(NVME_DIR)/include \
		$(NVME_DIR)/tests/queue_gpu.cu $(EMU_SRCS) -o $@ -Xcompiler -pthread

# ThreadSanitizer run of the CPU tests (slow; not part of test-queue-cpu).
# QUEUE_TSAN_TESTS names the tests to run (all when empty); the top-level
# `make test-tsan` leaves out the ones that assert speed (latency, iops_cap),
# which TSan's slowdown makes fail on a busy machine.
QUEUE_TSAN_TESTS ?=
test-queue-tsan:
	@mkdir -p $(NVME_BUILD)
	$(NVME_CXX) -std=c++17 -O1 -g -fsanitize=thread -pthread -Wno-tsan -DBAM_EMU_CUDA=0 -I$(NVME_DIR)/include \
		$(QUEUE_TESTS) $(NVME_DIR)/src/emu_controller.cpp -o $(NVME_BUILD)/queue_test_tsan
	timeout 900 $(NVME_BUILD)/queue_test_tsan $(QUEUE_TSAN_TESTS)
