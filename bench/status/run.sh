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
work=$(mktemp -d /tmp/wbs.XXXXXX)
export TMUX_TMPDIR=$work/t
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
bin=$work/wave-orchestrator
repo=$work/repo
socket=
cleanup() {
	[ -n "$socket" ] && tmux -L "$socket" kill-server 2>/dev/null || true
	rm -rf "$work"
}
[ -n "${KEEP:-}" ] || trap cleanup EXIT

(cd "$here" && go build -o "$bin" ./cmd/wave-orchestrator)
mkdir -p "$repo/docs/agents" "$repo/docs/plans/waves"
git init -q "$repo"
cat > "$repo/wave.config.yaml" <<'YAML'
defaultLane: main
executors:
  default: local
validation:
  requireDocumentationStewardFromWave: null
  requireContext7DeclarationsFromWave: null
  requireExitContractsFromWave: null
  requireIntegrationStewardFromWave: null
  requireComponentPromotionsFromWave: null
  requireAgentComponentsFromWave: null
  requiredPromptReferences: []
YAML
for role in cont-qa cont-eval integration documentation security design; do
	printf '# %s role\n\n## Standing prompt\n\n```text\nYou hold the %s role.\n```\n' "$role" "$role" > "$repo/docs/agents/wave-$role-role.md"
done

# One wave: $agents implementation agents and the three closure agents.
{
	printf '# Wave 0 - status benchmark\n\n**Commit message**: `Bench: wave 0`\n\n'
	for i in $(seq 10 $((agents + 9))); do # A0, A8, A9 are the closure agents
		printf '## Agent A%d: Part %d\n\n### Executor\n- id: local\n\n' "$i" "$i"
		printf '### Exit contract\n- completion: contract\n- durability: none\n- proof: unit\n- doc-impact: owned\n\n'
		printf '### Deliverables\n- src/a%d.txt\n\n' "$i"
		printf '### Prompt\n```text\nDo part %d.\n\nFile ownership (only touch these paths):\n- src/a%d.txt\n```\n\n' "$i" "$i"
	done
	closure() { # id title role owned
		printf '## Agent %s: %s\n\n### Role prompts\n- docs/agents/wave-%s-role.md\n\n### Executor\n- id: local\n\n' "$1" "$2" "$3"
		printf '### Prompt\n```text\nDo the work of %s.\n\nFile ownership (only touch these paths):\n- %s\n```\n\n' "$2" "$4"
	}
	closure A8 "Integration Steward" integration docs/reports/integration-0.md
	closure A9 "Documentation Steward" documentation docs/plans/current-state.md
	closure A0 "cont-QA" cont-qa docs/plans/waves/reviews/wave-0-cont-qa.md
} > "$repo/docs/plans/waves/wave-0.md"

wo() { "$bin" --repo-root "$repo" "$@"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }

t0=$(ms)
wo launch --lane main --no-dashboard > "$work/launch.out" 2>&1 || { cat "$work/launch.out"; exit 1; }
t1=$(ms)
runs=$(find "$repo/.wave" -name runtime.json | wc -l)
echo "launch of $((agents + 3)) agents: $((t1 - t0)) ms; run records: $runs"
socket=$(wo status --lane main --json | sed -n 's/.*"socket": *"\([^"]*\)".*/\1/p' | head -1)

wo status --lane main --json > /dev/null # warm the page cache (and status's own cache)
# timeit BIN PRE: wall times (µs) of $n invocations of BIN, PRE run
# before each one (untimed), then CPU (user+sys) per invocation, which the
# machine's load disturbs less than wall time.
timeit() {
	local b=$1 pre=$2 times=() a z
	for _ in $(seq 1 "$n"); do
		eval "$pre"
		a=$(date +%s%N)
		"$b" --repo-root "$repo" status --lane main --json > /dev/null
		z=$(date +%s%N)
		times+=($(( (z - a) / 1000 )))
	done
	sorted=$(printf '%s\n' "${times[@]}" | sort -n)
	cpu_total=$( { /usr/bin/time -f '%U %S' bash -c 'for _ in $(seq 1 "$1"); do eval "$5"; "$2" --repo-root "$3" status --lane main --json > /dev/null; done' _ "$n" "$b" "$repo" "$work" "$pre"; } 2>&1 | tail -1)
}
pct() { printf '%s\n' "$sorted" | awk -v p="$1" -v n="$n" 'NR == int((n - 1) * p / 100) + 1 { printf "%.1f", $1 / 1000 }'; }
report() { # label
	echo "$1 x$n: p50 $(pct 50) ms  p90 $(pct 90) ms  min $(pct 0) ms  max $(pct 100) ms"
	echo "$cpu_total" | awk -v n="$n" -v l="$1" '{ printf "%s CPU: %.1f ms user+sys per invocation\n", l, 1000 * ($1 + $2) / n }'
}
cache=$repo/.wave/lanes/main/cache
timeit "$bin" :
report "status --json"
# The first status after a change of every run (or with the cache
# deleted) reads everything, as before the cache. An empty cache file is
# one ignored (a shell builtin empties it: no process more to count).
timeit "$bin" ": > '$cache/status.v1.json'"
report "status --json, no cache"
wo status --lane main --json > /dev/null
# OTHER=path/to/binary (e.g. main's build): it and this build alternately,
# in the same minutes, on the same lane.
if [ -n "${OTHER:-}" ]; then
	for round in 1 2; do
		timeit "$OTHER" :
		report "OTHER round $round"
		timeit "$bin" :
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
