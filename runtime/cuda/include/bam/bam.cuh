// The BaM runtime: the one header generated code includes.
//
// Device side: bam::array<T>, bam::array_ref<T> (array.cuh).
// Host side:   bam::runtime, bam::config, bam::default_runtime() (runtime.cuh),
//              bam::build_first_vertex_list (odt.cuh).
// See docs/runtime-api.md for the contract.
#ifndef BAM_BAM_CUH
#define BAM_BAM_CUH

#include <bam/array.cuh>
#include <bam/config.h>
#include <bam/error.h>
#include <bam/odt.cuh>
#include <bam/odt_port.cuh>
#include <bam/work_assignment.cuh>
#include <bam/runtime.cuh>
#include <bam/stats.h>

#endif // BAM_BAM_CUH
