#!/usr/bin/env bash
# Tests of bench/difftest/compile_program_golden.sh's verdicts, with cases
# checked in parallel, against a fake nvcc (no CUDA needed): a file that
# does not compile and a link with an undefined kernel each fail their case
# and the script; every other case passes, its line printed in case order;
# a run where nvcc succeeds everywhere passes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../compile_program_golden.sh
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
	echo "FAIL $*"
	failures=$((failures + 1))
}

# The fake nvcc: -c writes an empty object; FAKE_FAIL_COMPILE (a case) makes
# its files fail to compile, FAKE_FAIL_LINK (a case) its link report an
# undefined kernel.
cat >"$tmp/nvcc" <<'EOF'
#!/usr/bin/env bash
args=" $* " out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
case $args in
*" -c "*/"$FAKE_FAIL_COMPILE"/*) echo "x.cu(1): error: injected"; exit 1 ;;
*" -c "*) : >"$out"; exit 0 ;;
*/"$FAKE_FAIL_LINK"/*) echo "/usr/bin/ld: a.o: undefined reference to \`walk(int*)'"; exit 1 ;;
*) exit 0 ;;
esac
EOF
chmod +x "$tmp/nvcc"

cases=$(cd "$root/testdata/program" && ls ./*.txtar | sed 's|^\./||; s|\.txtar$||')
n=$(wc -l <<<"$cases")

run() { # TAG FAIL_COMPILE FAIL_LINK
	mkdir -p "$tmp/$1"
	FAKE_FAIL_COMPILE=$2 FAKE_FAIL_LINK=$3 NVCC="$tmp/nvcc" OUT="$tmp/$1" JOBS=2 \
		bash "$script" >"$tmp/$1.out" 2>&1
	echo $? >"$tmp/$1.rc"
}

run pass none none
[ "$(cat "$tmp/pass.rc")" = 0 ] || fail "all compiling: exit $(cat "$tmp/pass.rc"), want 0: $(cat "$tmp/pass.out")"
got=$(grep -c '^ok ' "$tmp/pass.out")
[ "$got" = "$n" ] || fail "all compiling: $got ok lines, want $n: $(cat "$tmp/pass.out")"
order=$(sed -n 's/^ok   \([^ ]*\) .*/\1/p' "$tmp/pass.out")
[ "$order" = "$cases" ] || fail "cases not printed in order: $order"
# A case linked into one program (its port changes it; one main).
linked=$(sed -n 's/^ok   \([^ ]*\) (compiles and links)$/\1/p' "$tmp/pass.out" | head -1)
[ -n "$linked" ] || fail "no case is linked: $(cat "$tmp/pass.out")"
first=$(head -1 <<<"$cases")
[ "$first" != "$linked" ] || first=$(sed -n 2p <<<"$cases")

run bad "$first" "$linked"
[ "$(cat "$tmp/bad.rc")" = 1 ] || fail "injected failures: exit $(cat "$tmp/bad.rc"), want 1"
grep -q "^FAIL $first: .*: x.cu(1): error: injected$" "$tmp/bad.out" ||
	fail "$first: compile error not reported: $(cat "$tmp/bad.out")"
grep -qx "FAIL $linked: link: undefined walk " "$tmp/bad.out" ||
	fail "$linked: undefined kernel not reported: $(cat "$tmp/bad.out")"
got=$(grep -c '^ok ' "$tmp/bad.out")
[ "$got" = $((n - 2)) ] || fail "injected failures: $got ok lines, want $((n - 2)): $(cat "$tmp/bad.out")"

if [ "$failures" -gt 0 ]; then
	echo "compile_program_golden_test: $failures failed"
	exit 1
fi
echo "compile_program_golden_test: all passed"
