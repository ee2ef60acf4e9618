#pragma once
#define MY_KERNEL __attribute__((visibility("hidden"))) __global__
