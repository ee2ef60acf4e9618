#!/usr/bin/env bash
# A stand-in for bench/matrix/blocker in e2e_test.sh: --query prints the
# "free memory" of $FAKE_STATE (80 GiB, or what a running fake blocker left),
# LEAVE_MIB records LEAVE_MIB - 500 (a context) as free until stdin closes.
state=${FAKE_STATE:?}
if [ "$1" = --query ]; then
	free=$((80 * 1024 * 1024 * 1024 - 500 * 1024 * 1024))
	[ -s "$state" ] && free=$(cat "$state")
	echo "free_bytes=$free total_bytes=$((80 * 1024 * 1024 * 1024))"
	exit 0
fi
if [ -n "${FAKE_BLOCKER_FAIL:-}" ] && [ "$1" != $((1 << 30)) ]; then # the budget blocker fails (not the keeper)
	echo "blocker: cudaMalloc: out of memory"
	exit 1
fi
echo $((($1 - 500) * 1024 * 1024)) >"$state"
echo "blocker: ready held_bytes=1 free_bytes=$(($1 * 1024 * 1024))"
cat >/dev/null
: >"$state"
