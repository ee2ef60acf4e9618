#!/usr/bin/env bash
# Where the first launch of a ported kernel spends its time (launch call,
# check_launch, synchronize), with the runtime's device asserts compiled out
# (the default) and in (BAM_DEVICE_ASSERTS), lazy and eager module loading.
# Run from the repository root on a GPU machine: bench/firstlaunch/run.sh [ARCH]
set -euo pipefail
arch=${1:-sm_90}
make -s -C runtime/cuda lib ARCH="$arch"
out=build/firstlaunch; mkdir -p "$out"
for v in default asserts; do
  flags=(); [ "$v" = asserts ] && flags=(-DBAM_DEVICE_ASSERTS)
  nvcc -O3 -std=c++17 -arch="$arch" "${flags[@]}" -Iruntime/cuda/include bench/firstlaunch/first.cu \
    -Lruntime/cuda/build -lbam -lpthread -o "$out/first_$v"
done
for load in LAZY EAGER; do
  for v in default asserts; do
    echo "== $v, CUDA_MODULE_LOADING=$load"
    CUDA_MODULE_LOADING=$load BAM_BACKEND=hbm BAM_STATS=0 "$out/first_$v" | grep launch
  done
done
