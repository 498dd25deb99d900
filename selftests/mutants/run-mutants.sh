#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-mutants.sh KVER PATCH... — do the tests catch the bugs they are named
# after? (`make mutants`; not part of `make test`.)
#
# Each PATCH is one deliberate bug: a header ("Mutant:" what it breaks,
# "Programs:" the guest programs that should catch it) and then a diff
# against the tree. In a scratch git worktree under build/mutants/ (the
# product tree is never modified), at this tree's HEAD, it runs the union
# of every patch's programs once without a bug (the baseline), then, for
# each patch, applies it (git apply -3), rebuilds and runs its programs on
# kernel KVER. A mutant is caught by every test that failed with it and not
# in the baseline; it prints, per mutant, those tests or "NOT CAUGHT".
# Uncommitted changes of this tree are not in the scratch tree (it is
# HEAD). Logs: build/mutants/NAME.log (make's output), NAME.tap (the TAP).
# Exit 1 when a mutant was not caught, did not apply or did not build.
set -u
[ $# -ge 2 ] || { echo "usage: run-mutants.sh KVER PATCH..." >&2; exit 2; }
kver=$1; shift
root=$(git rev-parse --show-toplevel) || exit 2
cd "$root" || exit 2
work=build/mutants
wt=$work/tree
head=$(git rev-parse HEAD) || exit 2
mkdir -p "$work"
git diff-index --quiet HEAD -- ||
	echo "mutants: uncommitted changes are not tested (the scratch tree is HEAD, ${head:0:12})"
if [ ! -e "$wt/.git" ]; then
	git worktree prune
	git worktree add -q --detach "$wt" "$head" || exit 2
fi

# run NAME PROGRAMS: build the scratch tree and run PROGRAMS on KVER; the
# summary's FAIL lines (no kernel label) go to build/mutants/NAME.fails.
run() {
	local name=$1 progs=$2 t=$(date +%s)
	rm -f "$work/$name.fails" "$wt/build/vm-test-$kver.log"
	if ! make -C "$wt" --no-print-directory vm-test KVER="$kver" NEWEST=0 T="$progs" \
		>"$work/$name.log" 2>&1 && [ ! -s "$wt/build/vm-test-$kver.log" ]; then
		echo "mutants: $name: the build or the VM run failed before any test (see $work/$name.log)"
		return 1
	fi
	cp "$wt/build/vm-test-$kver.log" "$work/$name.tap"
	selftests/tap-summary.sh "$work/$name.tap" | sed -n 's/^FAIL: //p' |
		sed "s%^$kver/%%" | sort -u >"$work/$name.fails"
	echo "mutants: $name: ran $progs in $(($(date +%s) - t)) s; $(wc -l <"$work/$name.fails") failed"
}

reset_tree() {
	git -C "$wt" reset -q --hard && git -C "$wt" checkout -q --detach "$head" &&
		git -C "$wt" clean -qfd -e build
}

all=
for p in "$@"; do
	all="$all $(sed -n 's/^Programs: //p' "$p")"
done
all=$(echo $all | tr ' ' '\n' | sort -u | tr '\n' ' ')
reset_tree || exit 2
run baseline "$all" || exit 1
if [ -s "$work/baseline.fails" ]; then
	echo "mutants: the baseline (no bug) failed these; they are not counted as catching:"
	sed 's/^/  /' "$work/baseline.fails"
fi

status=0
report=
for p in "$@"; do
	name=$(basename "$p" .patch)
	what=$(sed -n 's/^Mutant: //p' "$p")
	progs=$(sed -n 's/^Programs: //p' "$p")
	reset_tree || exit 2
	if ! git -C "$wt" apply -3 "$root/$p" >"$work/$name.log" 2>&1; then
		report+="$name: DOES NOT APPLY ($what; see $work/$name.log)"$'\n'
		status=1
		continue
	fi
	if ! run "$name" "$progs"; then
		report+="$name: NO RESULT, the build or the run failed ($what; see $work/$name.log)"$'\n'
		status=1
		continue
	fi
	caught=$(comm -23 "$work/$name.fails" "$work/baseline.fails")
	if [ -z "$caught" ]; then
		report+="$name: NOT CAUGHT by $progs ($what)"$'\n'
		status=1
	else
		report+="$name: caught ($what) by:"$'\n'$(sed 's/^/    /' <<<"$caught")$'\n'
	fi
done
reset_tree
echo "== mutants on $kver, tree ${head:0:12}"
printf '%s' "$report"
exit $status
