#!/usr/bin/env bash
# Makes a finished lane of real runs for the status measurements: a scratch
# repository DIR/repo whose wave 0 ran AGENTS `local` implementation agents
# and the three closure agents (one run directory per agent, real runtime
# records, logs and events). Its tmux server lives under DIR/t and is gone
# when the script ends; nothing touches the user's tmux.
#
#   bench/status/lane.sh AGENTS DIR BIN
set -euo pipefail

agents=$1
work=$2
bin=$3
repo=$work/repo
export TMUX_TMPDIR=$work/t
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
socket=
cleanup() { [ -n "$socket" ] && tmux -L "$socket" kill-server 2>/dev/null || true; }
trap cleanup EXIT

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
socket=$(wo status --lane main --json | sed -n 's/.*"socket": *"\([^"]*\)".*/\1/p' | head -1)
runs=$(find "$repo/.wave" -name runtime.json | wc -l)
echo "launch of $((agents + 3)) agents: $((t1 - t0)) ms; run records: $runs"
