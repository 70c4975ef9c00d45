#!/usr/bin/env bash
# The reference's side of bench/status: builds lane state of the npm
# reference (@chllming/wave-orchestration 0.9.15) with ~200 local-executor
# runs and times `wave control status --json` on it. Takes a few minutes:
# the reference's own launch of 203 agents is the slow part.
#
#   bench/status/ref.sh [agents=200] [invocations=30] [package=/tmp/ref/package]
set -euo pipefail

agents=${1:-200}
n=${2:-30}
pkg=${3:-/tmp/ref/package}
work=$(mktemp -d /tmp/wbr.XXXXXX)
export TMUX_TMPDIR=$work/t
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
repo=$work/repo
cleanup() {
	for s in "$TMUX_TMPDIR"/*/*; do [ -S "$s" ] && tmux -S "$s" kill-server 2>/dev/null; done
	rm -rf "$work"
}
[ -n "${KEEP:-}" ] || trap cleanup EXIT
wave() { (cd "$repo" && node "$pkg/scripts/wave.mjs" "$@"); }

mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
wave init > "$work/init.out" 2>&1 < /dev/null
# Local executor everywhere; no validation rule that a generated wave
# cannot meet.
(cd "$repo" && node -e '
const fs = require("fs");
const c = JSON.parse(fs.readFileSync("wave.config.json"));
c.executors.default = "local";
for (const k of Object.keys(c.validation)) if (/^require.*FromWave$/.test(k)) c.validation[k] = null;
c.validation.requiredPromptReferences = [];
fs.writeFileSync("wave.config.json", JSON.stringify(c, null, 2));
')
{
	printf '# Wave 0 - status benchmark\n\n**Commit message**: `Bench: wave 0`\n\n'
	for i in $(seq 10 $((agents + 9))); do # A0, A8, A9 are the closure agents
		printf '## Agent A%d: Part %d\n\n### Executor\n\n- id: local\n\n' "$i" "$i"
		printf '### Exit contract\n\n- completion: contract\n- durability: none\n- proof: unit\n- doc-impact: owned\n\n'
		printf '### Deliverables\n\n- src/a%d.txt\n\n' "$i"
		printf '### Prompt\n\n```text\nDo part %d.\n\nFile ownership (only touch these paths):\n- src/a%d.txt\n```\n\n' "$i" "$i"
	done
	closure() { # id title role owned
		printf '## Agent %s: %s\n\n### Role prompts\n\n- docs/agents/wave-%s-role.md\n\n### Executor\n\n- id: local\n\n' "$1" "$2" "$3"
		printf '### Prompt\n\n```text\nDo the work of %s.\n\nFile ownership (only touch these paths):\n- %s\n```\n\n' "$2" "$4"
	}
	closure A8 "Integration Steward" integration .tmp/main-wave-launcher/integration/wave-0.md
	closure A9 "Documentation Steward" documentation docs/plans/current-state.md
	closure A0 "cont-QA" cont-qa docs/plans/waves/reviews/wave-0-cont-qa.md
} > "$repo/docs/plans/waves/wave-0.md"
git -C "$repo" add -A
git -C "$repo" -c user.name=b -c user.email=b@b commit -q -m wave

ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(ms)
wave launch --lane main --no-dashboard --no-telemetry --no-context7 --agent-launch-stagger-ms 0 --max-retries-per-wave 0 \
	> "$work/launch.out" 2>&1 < /dev/null || { tail -20 "$work/launch.out"; exit 1; }
t1=$(ms)
echo "reference launch of $((agents + 3)) agents: $((t1 - t0)) ms; status files: $(ls "$repo/.tmp/main-wave-launcher/status" | grep -c 'runtime.json$')"

status() { wave control status --lane main --wave 0 --json; }
status > /dev/null
times=()
for _ in $(seq 1 "$n"); do
	a=$(date +%s%N)
	status > /dev/null
	b=$(date +%s%N)
	times+=($(( (b - a) / 1000 )))
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
pct() { printf '%s\n' "$sorted" | awk -v p="$1" -v n="$n" 'NR == int((n - 1) * p / 100) + 1 { printf "%.1f", $1 / 1000 }'; }
echo "reference control status --json x$n: p50 $(pct 50) ms  p90 $(pct 90) ms  min $(pct 0) ms  max $(pct 100) ms"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
