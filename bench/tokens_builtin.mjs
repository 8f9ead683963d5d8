// bench/tokens_builtin.mjs: the terminal agents' own todo tools, read out of the pinned
// agents installed under $RPIV_CLI_CACHE (scripts/setup-dev.sh), for the token bench. Writes
// one JSON object: per agent, the tool's description, its schema as JSON text, how the text
// was had ("extracted": read from the package; "reconstructed": the strings from the
// package, the schema's shape written here after the agent's source), and the reply the
// tool gives. An agent that is not installed is left out, with the reason.
//
//   node bench/tokens_builtin.mjs [cache dir]

import fs from "node:fs";
import path from "node:path";

const cache = process.argv[2] || process.env.RPIV_CLI_CACHE || path.join(process.env.HOME, ".cache/rpiv_todo/terminal-clis");
const out = { missing: {} };

function find(dir, test) {
  if (!fs.existsSync(dir)) return null;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const hit = find(p, test);
      if (hit) return hit;
    } else if (test(p)) {
      return p;
    }
  }
  return null;
}

function pinned(name) {
  const dirs = fs.existsSync(cache) ? fs.readdirSync(cache).filter((d) => d.startsWith(name + "@")) : [];
  return dirs.length ? path.join(cache, dirs[0]) : null;
}

// Claude Code: TodoWrite's prompt is a template literal in the JavaScript inside the binary;
// its schema is zod ({ todos: [{ content, status, activeForm }] }), written out here as
// JSON Schema the way Claude Code sends it.
function claude() {
  const dir = pinned("claude");
  const bin = dir && find(dir, (p) => /claude(\.exe)?$/.test(p) && fs.statSync(p).size > 1e7);
  if (!bin) return (out.missing.claude = "not installed under " + cache);
  const data = fs.readFileSync(bin);
  const marker = Buffer.from("`Use this tool to create and manage a structured task list");
  const start = data.indexOf(marker);
  if (start < 0) return (out.missing.claude = "TodoWrite's prompt not found in " + bin);
  let end = start + 1;
  while ((end = data.indexOf(0x60, end)) > 0 && data[end - 1] === 0x5c) end++;
  const description = data.subarray(start + 1, end).toString("utf8").replace(/\$\{[A-Za-z0-9_$]+\}/g, "TodoWrite");
  const item = {
    type: "object",
    properties: {
      content: { type: "string", minLength: 1 },
      status: { type: "string", enum: ["pending", "in_progress", "completed"] },
      activeForm: { type: "string", minLength: 1 },
    },
    required: ["content", "status", "activeForm"],
    additionalProperties: false,
  };
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { todos: { description: "The updated todo list", type: "array", items: item } },
    required: ["todos"],
    additionalProperties: false,
  };
  const reply =
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";
  out.claude = { tool: "TodoWrite", how: "prompt extracted, schema reconstructed", description, schema: JSON.stringify(schema), reply, item: ["content", "status", "activeForm"] };
  // The short prompt Claude Code sends instead for the models it gives its simple system
  // prompt (its newest, e.g. claude-opus-4-8; the full prompt goes to Sonnet, Haiku and
  // Opus 4.0 to 4.7), a single-quoted string.
  const short = data.indexOf(Buffer.from("'Create and update a task list for the current session."));
  if (short >= 0) {
    let stop = short + 1;
    while ((stop = data.indexOf(0x27, stop)) > 0 && data[stop - 1] === 0x5c) stop++;
    const text = data.subarray(short + 1, stop).toString("utf8").replace(/\\n/g, "\n").replace(/\\"/g, '"');
    out.claude_short = { ...out.claude, agent: "claude", tool: "TodoWrite, short prompt", description: text };
  }
}

// Codex: update_plan's strings are in the Rust binary; the schema's shape is its source's.
function codex() {
  const dir = pinned("codex");
  const bin = dir && find(dir, (p) => /\/codex$/.test(p) && fs.statSync(p).size > 1e7);
  if (!bin) return (out.missing.codex = "not installed under " + cache);
  const data = fs.readFileSync(bin).toString("latin1");
  const start = data.indexOf("Updates the task plan.");
  if (start < 0) return (out.missing.codex = "update_plan's description not found in " + bin);
  const end = data.indexOf("at a time.\n", start) + "at a time.\n".length;
  const description = data.slice(start, end);
  const schema = {
    type: "object",
    properties: {
      explanation: { type: "string", description: "Optional explanation for this plan update." },
      plan: {
        type: "array",
        description: "The list of steps",
        items: {
          type: "object",
          properties: { step: { type: "string" }, status: { type: "string", description: "One of: pending, in_progress, completed" } },
          required: ["step", "status"],
          additionalProperties: false,
        },
      },
    },
    required: ["plan"],
    additionalProperties: false,
  };
  out.codex = { tool: "update_plan", how: "description extracted, schema reconstructed", description, schema: JSON.stringify(schema), reply: "Plan updated", item: ["step", "status"] };
}

// Gemini CLI: write_todos's declaration is an object literal in its bundle; evaluated here
// with the bundle's own string constants.
function gemini() {
  const dir = pinned("gemini");
  const file = dir && find(dir, (p) => p.endsWith(".js") && fs.readFileSync(p, "utf8").includes("var WRITE_TODOS_TOOL_NAME"));
  if (!file) return (out.missing.gemini = "not installed under " + cache);
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const start = lines.findIndex((l) => /^  write_todos: \{$/.test(l));
  let depth = 0;
  let text = "";
  for (let i = start; i < lines.length; i++) {
    const l = i === start ? "{" : lines[i];
    text += l + "\n";
    for (const ch of l.replace(/`(?:[^`\\]|\\.)*`/g, "").replace(/"(?:[^"\\]|\\.)*"/g, "")) {
      if (ch === "{") depth++;
      if (ch === "}") depth--;
    }
    if (depth === 0) break;
  }
  const consts = {};
  for (const l of lines) {
    const m = /^var ([A-Z_]+) = "([^"]*)";$/.exec(l);
    if (m) consts[m[1]] = m[2];
  }
  const scope = new Proxy({}, { has: (_, k) => k in consts, get: (_, k) => consts[k] });
  const decl = new Function("scope", "with (scope) { return (" + text.replace(/,\s*$/, "") + "); }")(scope);
  out.gemini = {
    tool: "write_todos",
    how: "extracted",
    description: decl.description,
    schema: JSON.stringify(decl.parametersJsonSchema || decl.parameters),
    reply: "Successfully updated the todo list. The current list is now:",
    item: ["description", "status"],
  };
}

for (const f of [claude, codex, gemini]) {
  try {
    f();
  } catch (e) {
    out.missing[f.name] = String(e);
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
