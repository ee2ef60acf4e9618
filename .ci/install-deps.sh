#!/usr/bin/env bash
# Installs what bamgen's tests need on a fresh Debian 12 machine with Go:
# CUDA 11.8's nvcc (Debian non-free) to compile the runtime and every
# generated .cu, cmake for the CMake package test, and QEMU plus a 6.1 kernel and its headers for the kernel
# module test. Idempotent: skips what is already there.
set -euo pipefail

need=()
command -v nvcc >/dev/null || need+=(nvidia-cuda-toolkit)
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
ls /boot/vmlinuz-*-amd64 >/dev/null 2>&1 || need+=(linux-image-amd64)
ls -d /usr/src/linux-headers-*-amd64 >/dev/null 2>&1 || need+=(linux-headers-amd64)
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static) # the initramfs needs the static build
command -v cpio >/dev/null || need+=(cpio)
command -v modinfo >/dev/null || need+=(kmod)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v patch >/dev/null || need+=(patch) # transform/udiff_test.go applies its diffs with patch(1)
command -v git >/dev/null || need+=(git)
command -v cmake >/dev/null || need+=(cmake) # make test-cmake: bamgen's CMake package (Debian 12: 3.25)
command -v zip >/dev/null || need+=(zip)     # make test-go-install: packs the module for a local proxy
command -v python3 >/dev/null || need+=(python3) # make test-bench: the benchmark runner (standard library only)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates) # the Go module proxy is HTTPS

if [ ${#need[@]} -gt 0 ]; then
	# nvcc is in Debian's non-free component.
	src=/etc/apt/sources.list.d/debian.sources
	if ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		if [ -f "$src" ]; then
			sed -i 's/^Components: main$/Components: main contrib non-free/' "$src"
		else
			codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
			echo "deb http://deb.debian.org/debian $codename main contrib non-free" >/etc/apt/sources.list.d/bamgen-non-free.list
		fi
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${need[@]}"
fi
go mod download
