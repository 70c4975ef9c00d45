#!/usr/bin/env node
// Regenerates the parity goldens: it runs the reference npm package on OUR
// fixtures and stores what the reference wrote, so the Go tests can compare
// our output with it. The package is fetched with npm at run time and never
// stored in the repository.
//
//   node scripts/regen-parity-goldens.mjs            # every golden
//   node scripts/regen-parity-goldens.mjs rich exec  # only these cases
//   WAVE_REF_PACKAGE=/tmp/package node scripts/...   # an unpacked package
//
// Writes, for each fixture repository (laid over manifest/testdata/parity/base
// with the package's skills/ beside it, as `wave init` would leave them):
//   manifest/testdata/parity/<case>/want.json      the manifest, less
//       generatedAt, docs and the per-agent executorResolved, skillsResolved
//       and context7Resolved; or, for a case with rules.txt (one the
//       reference rejects), ref-error.txt with its message (a case with
//       stricter.txt, one we reject on purpose, keeps the reference's
//       manifest)
//   executor/testdata/parity/<case>/want.json      each agent's executorResolved
//       (args.txt holds extra launch flags, e.g. `--executor claude`)
//   manifest/testdata/example.golden.json          the example repo's manifest
//       as ours encodes it without resolutions (generatedAt GENERATED)
//   manifest/testdata/example.docs.json            the reference's docs list
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as url from "node:url";

const REF = "@chllming/wave-orchestration@0.9.15";
const here = path.dirname(url.fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const manifestCases = path.join(repo, "manifest/testdata/parity");
const executorCases = path.join(repo, "executor/testdata/parity");
const base = path.join(manifestCases, "base");
const caseMeta = new Set(["want.json", "ref-error.txt", "rules.txt", "stricter.txt", "args.txt"]);

const work = fs.mkdtempSync(path.join(os.tmpdir(), "wave-parity-"));
process.on("exit", () => fs.rmSync(work, { recursive: true, force: true }));

function fetchPackage() {
  if (process.env.WAVE_REF_PACKAGE) {
    return path.resolve(process.env.WAVE_REF_PACKAGE);
  }
  const dest = path.join(work, "pkg");
  fs.mkdirSync(dest);
  const tgz = execFileSync("npm", ["pack", "--silent", REF, "--pack-destination", dest], {
    encoding: "utf8",
  }).trim().split("\n").pop();
  execFileSync("tar", ["xzf", path.join(dest, tgz), "-C", dest]);
  return path.join(dest, "package");
}

// copyTree copies src over dst, leaving out a case's own files at its top.
function copyTree(src, dst, top = true) {
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    if (top && caseMeta.has(e.name)) continue;
    const s = path.join(src, e.name);
    const d = path.join(dst, e.name);
    if (e.isDirectory()) {
      fs.mkdirSync(d, { recursive: true });
      copyTree(s, d, false);
    } else {
      fs.copyFileSync(s, d);
    }
  }
}

// runReference lays the layers over a fresh repo and runs the reference's
// dry-run launch there; it returns the manifest, or the error it printed.
function runReference(pkg, name, layers, extraArgs = []) {
  const root = path.join(work, "cases", name, "repo");
  fs.mkdirSync(root, { recursive: true });
  fs.cpSync(path.join(pkg, "skills"), path.join(root, "skills"), { recursive: true });
  for (const l of layers) copyTree(l, root);
  const out = path.join(work, "cases", name, "manifest.json");
  const args = [path.join(pkg, "scripts/wave.mjs"), "launch", "--lane", "main", "--dry-run",
    "--no-dashboard", "--no-telemetry", "--no-context7", "--manifest-out", out, ...extraArgs];
  const r = spawnSync("node", args, { cwd: root, encoding: "utf8" });
  if (r.status !== 0) {
    const text = `${r.stdout}\n${r.stderr}`.split(root).join("<repo>");
    const line = text.split("\n").filter((l) => l.startsWith("[wave]")).pop() || text.trim();
    return { error: line };
  }
  return { manifest: JSON.parse(fs.readFileSync(out, "utf8")) };
}

const write = (file, value) =>
  fs.writeFileSync(file, typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`);

function stripped(m) {
  delete m.generatedAt;
  delete m.docs;
  for (const w of m.waves) {
    for (const a of w.agents) {
      delete a.executorResolved;
      delete a.skillsResolved;
      delete a.context7Resolved;
    }
  }
  return m;
}

function readArgs(dir) {
  const f = path.join(dir, "args.txt");
  return fs.existsSync(f) ? fs.readFileSync(f, "utf8").trim().split(/\s+/) : [];
}

// caseDirs lists the case directories under dir, or those named in only.
function caseDirs(dir, only) {
  const wanted = (name) => name !== "base" && (only.length === 0 || only.includes(name));
  return fs.readdirSync(dir).filter((name) => wanted(name) && fs.statSync(path.join(dir, name)).isDirectory());
}

function main() {
  const only = process.argv.slice(2);
  const pkg = fetchPackage();
  let failed = false;
  const fail = (msg) => {
    console.error(msg);
    failed = true;
  };
  for (const c of caseDirs(manifestCases, only)) {
    const dir = path.join(manifestCases, c);
    const r = runReference(pkg, `manifest-${c}`, [base, dir]);
    const rejects = fs.existsSync(path.join(dir, "rules.txt"));
    if (rejects && r.error) {
      write(path.join(dir, "ref-error.txt"), `${r.error}\n`);
    } else if (rejects) {
      fail(`manifest/${c}: has rules.txt but the reference accepts it`);
    } else if (r.error) {
      fail(`manifest/${c}: the reference rejects it: ${r.error}`);
    } else {
      write(path.join(dir, "want.json"), stripped(r.manifest));
    }
    console.log(`manifest/${c}: ${r.error ? "rejected" : "accepted"}`);
  }
  for (const c of caseDirs(executorCases, only)) {
    const dir = path.join(executorCases, c);
    const r = runReference(pkg, `executor-${c}`, [base, dir], readArgs(dir));
    if (r.error) {
      fail(`executor/${c}: the reference rejects it: ${r.error}`);
      continue;
    }
    const agents = r.manifest.waves.flatMap((w) =>
      w.agents.map((a) => ({ wave: w.wave, agentId: a.agentId, executorResolved: a.executorResolved })));
    write(path.join(dir, "want.json"), agents);
    console.log(`executor/${c}: ${agents.length} agents`);
  }
  if (only.length === 0 || only.includes("example")) {
    const dir = path.join(repo, "manifest/testdata/example");
    const r = runReference(pkg, "example", [dir]);
    if (r.error) {
      fail(`example: the reference rejects it: ${r.error}`);
    } else {
      write(path.join(repo, "manifest/testdata/example.docs.json"), r.manifest.docs);
      const m = r.manifest;
      m.generatedAt = "GENERATED";
      m.docs = [];
      for (const w of m.waves) {
        for (const a of w.agents) {
          a.executorResolved = null;
          delete a.skillsResolved;
          delete a.context7Resolved;
        }
      }
      write(path.join(repo, "manifest/testdata/example.golden.json"), m);
      console.log("example: accepted");
    }
  }
  process.exitCode = failed ? 1 : 0;
}

main();
