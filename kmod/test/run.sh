#!/bin/sh
# QEMU test of bam_nvme.ko + kmod/lib (make -C kmod test).
#
# Builds an initramfs (busybox-static, the module, the static test program,
# test/init), boots KDIR's kernel under TCG with two emulated NVMe drives,
# and counts the "BAMTEST: PASS|FAIL" lines the guest prints. Exit status 0
# only if nothing failed and the guest reached its end.
set -u
here=$(cd "$(dirname "$0")" && pwd)
kmod=$(dirname "$here")
out=$here/out
KDIR=${KDIR:?KDIR must name the kernel build tree}
QEMU=${QEMU:-qemu-system-x86_64}
TIMEOUT=${TIMEOUT:-110}

die() { echo "run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
	"$KDIR/include/generated/utsrelease.h" 2>/dev/null)
[ -n "$kver" ] || die "cannot read UTS_RELEASE from $KDIR/include/generated/utsrelease.h"
kernel=${KERNEL:-/boot/vmlinuz-$kver}
[ -r "$kernel" ] || die "no kernel image $kernel for $kver (install linux-image-$kver)"
modver=$(modinfo -F vermagic "$kmod/bam_nvme.ko" 2>/dev/null | cut -d' ' -f1)
[ "$modver" = "$kver" ] || die "bam_nvme.ko is for '$modver', kernel is $kver"
busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
if command -v file >/dev/null; then
	file -L "$busybox" | grep -q 'statically linked' ||
		die "$busybox is not static (apt-get install busybox-static)"
fi
command -v "$QEMU" >/dev/null || die "$QEMU not found (apt-get install qemu-system-x86)"
command -v cpio >/dev/null || die "cpio not found"

rm -rf "$out"
mkdir -p "$out/root/bin" "$out/root/lib" "$out/root/proc" "$out/root/sys" \
	"$out/root/dev" "$out/root/tmp"
cp "$busybox" "$out/root/bin/busybox"
cp "$here/bam_nvme_test" "$here/bam_queue_test" "$out/root/bin/"
# built only where CUDA's headers are (see the Makefile)
[ -x "$here/bam_backend_test" ] && cp "$here/bam_backend_test" "$out/root/bin/"
cp "$kmod/bam_nvme.ko" "$out/root/lib/"
cp "${INIT:-$here/init}" "$out/root/init"
(cd "$out/root" && find . | cpio -o -H newc 2>/dev/null) | gzip -1 > "$out/initramfs.cpio.gz" ||
	die "cannot build the initramfs"
truncate -s 64M "$out/disk0.img"
truncate -s 8M "$out/disk1.img"

# boot NAME EXTRA-APPEND QEMU-ARGS...: run the guest once; its result lines
# (prefixed with NAME) go to $out/results, and a missing end is a failure.
status=0
boot() {
	name=$1 append=$2
	shift 2
	log=$out/console-$name.log
	echo "run.sh: [$name] booting $kernel under TCG (timeout ${TIMEOUT}s), log in $log"
	timeout "$TIMEOUT" "$QEMU" -accel tcg -smp 2 -m 512M "$@" \
		-kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet acpi=noirq $append${DEBUG:+ bamdebug}" \
		-nographic -nic none -no-reboot \
		-device nvme,serial=bamtest0,drive=nvm0 \
		-drive file="$out/disk0.img",if=none,id=nvm0,format=raw \
		-device nvme,serial=bamtest1,drive=nvm1 \
		-drive file="$out/disk1.img",if=none,id=nvm1,format=raw \
		< /dev/null > "$log" 2>&1
	rc=$?
	tr -d '\r' < "$log" | sed -n -e "s/^BAMTEST: DONE\$/DONE $name/p" \
		-e "s/^BAMTEST: \([A-Z]*\) /\1 $name: /p" | tee -a "$out/results"
	if [ $rc -eq 124 ]; then
		echo "FAIL $name: qemu killed after ${TIMEOUT}s; last console lines:" | tee -a "$out/results"
		tail -n 15 "$log"
	elif ! grep -q "^DONE $name" "$out/results"; then
		echo "FAIL $name: guest stopped before the end (qemu status $rc); last console lines:" |
			tee -a "$out/results"
		tail -n 25 "$log"
	fi
}

: > "$out/results"
if [ -n "${NO_IOMMU:-}" ]; then
	boot main "${APPEND_EXTRA:-}" -machine pc
else
	# Behind an emulated VT-d IOMMU in strict mode, bus addresses are IOVAs
	# and a physical address handed out by mistake faults; init later
	# switches the device to an identity domain and runs the DMA tests again.
	boot main "intel_iommu=on iommu.strict=1" -machine q35 -device intel-iommu,intremap=off
fi

passed=$(grep -c '^PASS ' "$out/results")
failed=$(grep -c '^FAIL ' "$out/results")
[ "$passed" -gt 0 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
