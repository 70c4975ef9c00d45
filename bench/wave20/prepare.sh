#!/usr/bin/env bash
# Prepares a scratch repo with the reference installed and a wave of 20
# `local` implementation agents plus A8, A9, A0 that both tools accept
# (our loader reads the reference's wave.config.json unchanged).
# Usage: bench/wave20/prepare.sh <dir> <path to chllming-wave-orchestration-0.9.15.tgz>
set -euo pipefail
dir=$1 tgz=$2
mkdir -p "$dir" && cd "$dir"
git init -q && npm init -y >/dev/null && npm install "$tgz" >/dev/null 2>&1
npx wave init >/dev/null
python3 - <<'PY'
import json
cfg = json.load(open('wave.config.json'))
cfg['validation']['requireComponentPromotionsFromWave'] = None
cfg['validation']['requireAgentComponentsFromWave'] = None
json.dump(cfg, open('wave.config.json', 'w'), indent=2)
refs = "Read docs/reference/repository-guidance.md and docs/research/agent-context-sources.md."
out = ["# Wave 0 - Bench", "", "**Commit message**: `Bench: twenty agents`", ""]
def agent(id, title, role, owns, extra=""):
    out.append(f"## Agent {id}: {title}\n")
    if role:
        out.append(f"### Role prompts\n\n- docs/agents/{role}\n")
    out.append("### Executor\n\n- id: local\n")
    out.append(extra)
    out.append("### Prompt\n\n```text\nDo it.\n" + refs + "\n\nFile ownership (only touch these paths):\n"
               + "".join(f"- {o}\n" for o in owns) + "```\n")
agent("A0", "cont-QA", "wave-cont-qa-role.md", ["docs/plans/waves/reviews/wave-0-cont-qa.md"])
agent("A8", "Integration Steward", "wave-integration-role.md", [".tmp/main-wave-launcher/integration/wave-0.md"])
agent("A9", "Documentation Steward", "wave-documentation-role.md",
      ["docs/plans/current-state.md", "docs/plans/master-plan.md", "docs/plans/migration.md"])
for i in range(1, 21):
    agent(f"A{i+10}", f"Part {i}", None, [f"src/part{i}.txt"],
          "### Exit contract\n\n- completion: contract\n- durability: none\n- proof: unit\n- doc-impact: owned\n\n"
          f"### Deliverables\n\n- src/part{i}.txt\n")
open('docs/plans/waves/wave-0.md', 'w').write("\n".join(out))
PY
git add -A && git commit -qm base
