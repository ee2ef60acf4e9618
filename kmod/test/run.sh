#!/bin/sh
# QEMU test of bam_nvme.ko + kmod/lib (make -C kmod test).
#
# Builds an initramfs (busybox-static, the module, the static test program,
# test/init), boots KDIR's kernel under TCG with two emulated NVMe drives,
# and counts the "BAMTEST: PASS|FAIL" lines the guest prints. Each boot has
# a list of the checks that must PASS (test/expected/BOOT.txt): a check that
# printed no PASS line (skipped, crashed, never reached) is a failure, and
# so is a PASS line the list does not name (update the list with
# UPDATE_EXPECTED=1). Exit status 0 only if nothing failed, every expected
# check passed and every guest reached its end.
set -u
here=$(cd "$(dirname "$0")" && pwd)
kmod=$(dirname "$here")
out=$here/out
KDIR=${KDIR:?KDIR must name the kernel build tree}
QEMU=${QEMU:-qemu-system-x86_64}
TIMEOUT=${TIMEOUT:-170}

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

# check_expected NAME: every check test/expected/NAME.txt names printed a
# PASS line in boot NAME, and no other check did.
check_expected() {
	exp=$here/expected/$1.txt
	got=$out/pass-$1.txt
	want=$out/want-$1.txt
	sed -n "s/^PASS $1: \([^ ]*\)\$/\1/p" "$out/results" | sort -u > "$got"
	if [ -n "${UPDATE_EXPECTED:-}" ]; then
		mkdir -p "$here/expected"
		cp "$got" "$exp"
		echo "run.sh: [$1] wrote $(wc -l < "$exp") names to $exp"
		return
	fi
	if [ ! -r "$exp" ]; then
		echo "FAIL $1: no list of expected checks ($exp; UPDATE_EXPECTED=1 writes it)" |
			tee -a "$out/results"
		return
	fi
	# the backend test is built only where CUDA's headers are
	if [ -x "$here/bam_backend_test" ]; then
		sort -u "$exp" > "$want"
	else
		grep -v -E '(^|[.])backend[.]|^prog[.]backend$' "$exp" | sort -u > "$want"
	fi
	comm -23 "$want" "$got" | sed "s/^/FAIL $1: /; s/\$/: no PASS line (expected by test\/expected\/$1.txt)/" |
		tee -a "$out/results"
	comm -13 "$want" "$got" | sed "s/^/FAIL $1: /; s/\$/: PASS line not in test\/expected\/$1.txt (UPDATE_EXPECTED=1)/" |
		tee -a "$out/results"
	echo "run.sh: [$1] $(comm -12 "$want" "$got" | wc -l) of $(wc -l < "$want") expected checks passed"
}

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
		< /dev/null > "$log" 2> "$out/qemu-$name.stderr"
	rc=$?
	tr -d '\r' < "$log" | sed -n -e "s/^BAMTEST: DONE\$/DONE $name/p" \
		-e "s/^BAMTEST: \([A-Z]*\) /\1 $name: /p" | tee -a "$out/results"
	check_expected "$name"
	if [ $rc -eq 124 ]; then
		echo "FAIL $name: qemu killed after ${TIMEOUT}s; last console lines:" | tee -a "$out/results"
		tail -n 15 "$log"
	elif ! grep -q "^DONE $name" "$out/results"; then
		echo "FAIL $name: guest stopped before the end (qemu status $rc); last console lines:" |
			tee -a "$out/results"
		tail -n 25 "$log"
		tail -n 5 "$out/qemu-$name.stderr"
	fi
}

: > "$out/results"
# The module attaches the device's group to a domain of its own whatever the
# kernel's default domain type is; each boot starts with a different one,
# behind an emulated VT-d IOMMU:
#   strict    the whole suite; init later switches the group's default
#             domain to identity and runs the DMA tests again
#   lazy      DMA-FQ, Debian's default: the DMA tests
#   identity  iommu.passthrough=1: the isolation checks
#   noiommu   i440FX without IOMMU: binding refused, then allowed with
#             allow_unsafe_noiommu=1 (tainted), one I/O
# BOOTS picks some (default: all four). NO_IOMMU=1: the whole suite without
# an IOMMU (boot noiommu-full; not in CI, no expected list).
iommu="-machine q35 -device intel-iommu,intremap=off"
if [ -n "${NO_IOMMU:-}" ]; then
	boot noiommu-full "${APPEND_EXTRA:-}" -machine pc
else
	for b in ${BOOTS:-strict lazy identity noiommu}; do
		case $b in
		strict) boot strict "intel_iommu=on iommu.strict=1 bammode=strict ${APPEND_EXTRA:-}" $iommu ;;
		lazy) boot lazy "intel_iommu=on iommu.strict=0 bammode=lazy bamtests=dma ${APPEND_EXTRA:-}" $iommu ;;
		identity) boot identity "intel_iommu=on iommu.passthrough=1 bammode=identity bamtests=sec ${APPEND_EXTRA:-}" $iommu ;;
		noiommu) boot noiommu "bamtests=noiommu ${APPEND_EXTRA:-}" -machine pc ;;
		*) die "unknown boot '$b' in BOOTS (strict lazy identity noiommu)" ;;
		esac
	done
fi

passed=$(grep -c '^PASS ' "$out/results")
failed=$(grep -c '^FAIL ' "$out/results")
[ "$passed" -gt 0 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ -z "${UPDATE_EXPECTED:-}" ]
