#!/usr/bin/env bash
# Measures `status --json` wall time on a lane with ~200 real runs and the
# idle CPU of `dashboard --watch` on that finished lane. Everything runs in
# a scratch repo with its own TMUX_TMPDIR; nothing touches the user's tmux.
#
#   bench/status/run.sh [agents=200] [invocations=30] [idle-seconds=30]
#   OTHER=/tmp/main-build bench/status/run.sh   # A/B against another build
set -euo pipefail

agents=${1:-200}
n=${2:-30}
idle=${3:-30}
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/bench/lib.sh"
work=$(mktemp -d /tmp/wbs.XXXXXX)
export TMUX_TMPDIR=$work/t
unset TMUX TMUX_PANE
bin=$work/wave-orchestrator
repo=$work/repo
socket=
cleanup() {
	[ -n "$socket" ] && tmux -L "$socket" kill-server 2>/dev/null || true
	rm -rf "$work"
}
[ -n "${KEEP:-}" ] || trap cleanup EXIT

(cd "$here/cmd/wave-orchestrator" && CGO_ENABLED=0 go build -trimpath -o "$bin" .)
"$here/bench/status/lane.sh" "$agents" "$work" "$bin"
wo() { "$bin" --repo-root "$repo" "$@"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
socket=$(wo status --lane main --json | sed -n 's/.*"socket": *"\([^"]*\)".*/\1/p' | head -1)

wo status --lane main --json > /dev/null # warm the page cache
report() { # label
	echo "$1 x$n: p50 $(pct 50 "$n") ms  p90 $(pct 90 "$n") ms  min $(pct 0 "$n") ms  max $(pct 100 "$n") ms"
	echo "$1 CPU: $cpu_ms ms user+sys per invocation"
}
timeit "$n" "$bin" --repo-root "$repo" status --lane main --json
report "status --json"
# OTHER=path/to/binary (e.g. main's build): it and this build alternately,
# in the same minutes, on the same lane.
if [ -n "${OTHER:-}" ]; then
	for round in 1 2; do
		timeit "$n" "$OTHER" --repo-root "$repo" status --lane main --json
		report "OTHER round $round"
		timeit "$n" "$bin" --repo-root "$repo" status --lane main --json
		report "this build round $round"
	done
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

# Idle CPU: the dashboard in a tmux pane (interactive mode) on the
# finished lane, nothing changing.
tmux -L "$socket" new-session -d -s idle -x 200 -y 50 "$bin" --repo-root "$repo" dashboard --watch --lane main
pid=$(tmux -L "$socket" display-message -p -t idle: '#{pane_pid}')
tick=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
until tmux -L "$socket" capture-pane -p -t idle: | grep -q 'wave 0'; do :; done
c0=$(cpu); w0=$(ms)
sleep "$idle"
c1=$(cpu); w1=$(ms)
awk -v c=$((c1 - c0)) -v t="$tick" -v w=$((w1 - w0)) 'BEGIN {
	printf "dashboard --watch idle: %d ticks (%.2f s CPU) in %.1f s wall = %.3f %% of a core\n", c, c / t, w / 1000, 100 * (c / t) / (w / 1000) }'
