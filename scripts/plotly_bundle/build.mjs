// Builds attnviz/ui/board/js/vendor/plotly-attnviz-<version>.min.js from entry.js with the exact
// packages of package-lock.json (`npm ci` first; see README.md), and beside it
// plotly-attnviz-THIRD-PARTY.txt: the licence of every package the bundle contains.
// `node build.mjs --check` builds into a temporary folder and fails unless the result is
// byte for byte the committed file (the build is reproducible: esbuild is deterministic).
import { buildSync } from "esbuild";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const vendor = path.resolve(here, "../../attnviz/ui/board/js/vendor");
const pkg = (name) =>
  JSON.parse(fs.readFileSync(path.join(here, "node_modules", name, "package.json"), "utf8"));
const version = pkg("plotly.js").version;
const check = process.argv.includes("--check");
const out = check ? fs.mkdtempSync(path.join(os.tmpdir(), "plotly-bundle-")) : vendor;
const name = `plotly-attnviz-${version}.min.js`;

const result = buildSync({
  absWorkingDir: here,
  entryPoints: ["entry.js"],
  outfile: path.join(out, name),
  bundle: true,
  minify: true,
  format: "iife",
  globalName: "Plotly",
  target: "es2016",
  // as plotly.js's own build (its esbuild-config.js) for these modules
  define: { global: "window", "define.amd": "false" },
  alias: { stream: "stream-browserify" },
  // a CSS file the map trace would load (not in this bundle) is dropped, not emitted
  loader: { ".css": "empty" },
  legalComments: "eof",
  banner: {
    js:
      `/**\n* plotly.js (attnviz: core, bar, heatmap - minified) v${version}\n` +
      "* Copyright 2012-2026, Plotly, Inc.\n* All rights reserved.\n" +
      "* Licensed under the MIT license\n" +
      "* Built by attnviz's scripts/plotly_bundle (see its README.md)\n*/",
  },
  metafile: true,
  logLevel: "warning",
});

// every package with code in the bundle (bytes in its output), with its licence text
const packages = new Map();
const [output] = Object.values(result.metafile.outputs);
const used = Object.entries(output.inputs).filter(
  ([input, v]) => v.bytesInOutput > 0 && !input.endsWith(".css"), // a CSS file: left empty
);
for (const [input] of used) {
  const at = input.lastIndexOf("node_modules/");
  if (at < 0) continue; // entry.js
  const parts = input.slice(at + "node_modules/".length).split("/");
  packages.set(parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0], true);
}
const notices = [];
for (const p of [...packages.keys()].sort()) {
  const dir = path.join(here, "node_modules", p);
  const meta = pkg(p);
  const file = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const text = file ? fs.readFileSync(path.join(dir, file), "utf8").trim() : "(no licence file)";
  notices.push(`${p}@${meta.version} (${meta.license || "see below"})\n\n${text}\n`);
}
const third = `Packages bundled in ${name}, with their licences.\n\n` + notices.join("\n---\n\n");
fs.writeFileSync(path.join(out, "plotly-attnviz-THIRD-PARTY.txt"), third);

const sha = (f) => createHash("sha256").update(fs.readFileSync(f)).digest("hex");
const built = sha(path.join(out, name));
console.log(`${name} ${fs.statSync(path.join(out, name)).size} bytes, sha256 ${built}`);
if (check) {
  const committed = path.join(vendor, name);
  const same =
    fs.existsSync(committed) &&
    sha(committed) === built &&
    fs.readFileSync(path.join(vendor, "plotly-attnviz-THIRD-PARTY.txt"), "utf8") === third;
  fs.rmSync(out, { recursive: true, force: true });
  if (!same) {
    console.error(`the build differs from the committed ${committed}`);
    process.exit(1);
  }
  console.log("the committed bundle is what this recipe builds");
}
