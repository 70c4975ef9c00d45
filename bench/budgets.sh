#!/usr/bin/env bash
# Checks the binary against its budgets (bench/README.md, CONTRIBUTING.md)
# and prints each figure beside its budget:
#
#   package initialisation (GODEBUG=inittrace, p50)  ≤ 10 ms
#   `version` (p50 wall)                               ≤ 25 ms
#   `status --json` on a finished lane of 200 runs    ≤ 50 ms
#   `status --json` on a finished lane of 2,000 runs  ≤ 150 ms
#
# Exits 1 when a figure is over its budget. It is a measurement, not a
# test: wall times on a loaded machine are inflated (the load average is
# printed), so each figure comes with its CPU time and, with valgrind
# installed and IR=1, the instructions executed, which load does not move.
#
#   bench/budgets.sh                        # lanes in a scratch dir (2,000 runs take minutes to make)
#   LANES=/tmp/wave-lanes bench/budgets.sh  # make the lanes there once, reuse them next time
#   BIN=/path/to/wave-orchestrator bench/budgets.sh   # check that build instead of this tree's
#   RT=1 bench/budgets.sh                   # as root on a shared machine: each measured process at
#                                           # real-time priority (chrt -f 50), not waiting for the others
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh"
n=${N:-20}
work=$(mktemp -d /tmp/wbb.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin=${BIN:-$work/wave-orchestrator}
if [ -z "${BIN:-}" ]; then # the release build, as .ci/run makes it
	(cd "$here/cmd/wave-orchestrator" && CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -o "$bin" .)
fi
lanes=${LANES:-$work/lanes}
rt=()
[ -n "${RT:-}" ] && rt=(chrt -f 50)

over=0
# check LABEL FIGURE BUDGET [NOTE]: one line, FIGURE against BUDGET (ms).
check() {
	local verdict=ok
	if awk -v f="$2" -v b="$3" 'BEGIN { exit !(f > b) }'; then
		verdict=OVER over=1
	fi
	printf '%-44s %7s ms  budget %4s ms  %-4s  %s\n' "$1" "$2" "$3" "$verdict" "${4:-}"
}
ir() { [ "${IR:-0}" != 0 ] && echo ", $(instructions "$@") instructions" || true; }

inits=$(for _ in $(seq 1 "$n"); do
	GODEBUG=inittrace=1 "${rt[@]}" "$bin" version 2>&1 > /dev/null | awk '/^init / { s += $5 } END { printf "%.3f\n", s }'
done | sort -n)
check "package initialisation, p50 of $n" "$(echo "$inits" | awk -v n="$n" 'NR == int((n - 1) / 2) + 1')" 10 \
	"min $(echo "$inits" | head -1) ms"
timeit "$n" "${rt[@]}" "$bin" version
check "version, p50 wall of $n" "$(pct 50 "$n")" 25 "min $(pct 0 "$n") ms, CPU $cpu_ms ms$(ir "$bin" version)"

for runs in 200 2000; do
	dir=$lanes/$runs
	if [ ! -d "$dir/repo/.wave" ]; then
		mkdir -p "$dir"
		"$here/bench/status/lane.sh" "$runs" "$dir" "$bin" > "$dir/lane.out"
	fi
	repo=$(cd "$dir/repo" && pwd -P) # the paths its event log names
	budget=50
	[ "$runs" = 2000 ] && budget=150
	k=$((n / 2))
	"$bin" --repo-root "$repo" status --lane main --json > /dev/null # the page cache warm
	timeit "$k" "${rt[@]}" "$bin" --repo-root "$repo" status --lane main --json
	check "status --json, $runs runs (+3 closure), p50 of $k" "$(pct 50 "$k")" "$budget" \
		"min $(pct 0 "$k") ms, CPU $cpu_ms ms$(ir "$bin" --repo-root "$repo" status --lane main --json)"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs$([ "$(nproc)" -lt "$(cut -d. -f1 /proc/loadavg)" ] && echo ': wall times inflated, compare CPU')"
exit "$over"
