#!/bin/bash
# Differential test of whole-program ports on a GPU: bfs_multi (kernel, prototype and launch in three files) and kernel_only (a kernel-only file and its driver), each ported with one `bamgen port --auto [--opt auto] -w DIR` on a copy, built, and run on hbm, host and emu with a 2 MiB cache against the original. ARCH=sm_90 by default; RUN=0 only builds (no GPU).
set -u
ARCH=${ARCH:-sm_90}; RUN=${RUN:-1}
make -s -C runtime/cuda -j16 ARCH=$ARCH lib > /tmp/lib.log 2>&1 || { tail /tmp/lib.log; exit 1; }
for p in bfs_multi kernel_only; do
  for v in orig auto opt; do
    d=/tmp/multi/$p.$v; rm -rf $d; mkdir -p $d; cp testdata/kernels/$p/* $d/
    case $v in
      auto) bin/bamgen port -q --auto -w $d || echo "port $p $v failed";;
      opt) bin/bamgen port -q --auto --opt auto -w $d || echo "port $p $v failed";;
    esac
    if [ $v = orig ]; then nvcc -O2 -std=c++17 -arch=$ARCH -I $d $d/*.cu -o $d/prog 2>/dev/null || echo "build $p $v failed"
    else nvcc -O2 -std=c++17 -arch=$ARCH -Iruntime/cuda/include -I $d $d/*.cu -Lruntime/cuda/build -lbam -lpthread -o $d/prog 2>$d/build.err || { echo "build $p $v failed"; head -5 $d/build.err; }; fi
  done &
done
wait
[ "$RUN" = 1 ] || exit 0
for p in bfs_multi kernel_only; do
  ref=$(/tmp/multi/$p.orig/prog 2>/dev/null | grep checksum)
  echo "$p original: $ref"
  for v in auto opt; do for b in hbm host emu; do
    got=$(BAM_BACKEND=$b BAM_CACHE_BYTES=2M BAM_GPU_BUDGET=0 BAM_STATS=0 timeout 120 /tmp/multi/$p.$v/prog 2>/tmp/multi/err | grep checksum)
    [ "$got" = "$ref" ] && r=same || r="DIFFERENT ($got; $(tail -1 /tmp/multi/err))"
    echo "$p $v $b: $r"
  done; done
done
