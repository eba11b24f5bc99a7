// Runs the JavaScript code a model writes: a toolhost module (a code
// interpreter). Tool: `run_javascript`. Each call runs the code in a fresh
// engine (a fresh instance of this component) and answers with what a person
// would read in a terminal: console output in the order it was written, then
// the value of the last expression statement (as a REPL shows it), then the
// files the code created. A thrown exception is the tool's error: the model
// sees `Error: ... failed:` with the stack.
//
// The engine is SpiderMonkey (StarlingMonkey) as ComponentizeJS builds it:
// no Node.js or browser APIs beyond the web standards it has (console,
// TextEncoder, URL, crypto.getRandomValues, ...), no network without a
// grant, no processes. ComponentizeJS gives JavaScript no filesystem, so
// `files` live in memory, behind a small `fs` object (readFileSync,
// writeFileSync, appendFileSync, existsSync, readdirSync, unlinkSync). In a
// module with `sessions = true`, a call that carries a session key runs
// where that session's previous call left off: its globals and its files.
// Built with ComponentizeJS (`cargo xtask build-examples js`).

import { Toolbox, ToolError } from "../../guest-sdk/js/toolhost-guest.js";

/** Characters of output (and of a value, and of a stack) kept; the rest is
 * counted and replaced by a "[truncated] ..." line: as much as a model can
 * use in one answer, well within a module's default output limit. */
const MAX_OUTPUT_CHARS = 20_000;
/** Files listed in the answer at most. */
const MAX_FILES_LISTED = 50;
/** How deep `inspect` shows nested objects. */
const MAX_DEPTH = 4;
/** Entries of one array, object, Map or Set that `inspect` shows. */
const MAX_ENTRIES = 100;

const tools = new Toolbox();

/** The console output of one call: every stream, in order, bounded. */
class Output {
  constructor() {
    this.parts = [];
    this.kept = 0;
    this.dropped = 0;
  }

  write(text) {
    const room = MAX_OUTPUT_CHARS - this.kept;
    if (room > 0) {
      const part = text.length > room ? text.slice(0, room) : text;
      this.parts.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, text.length - Math.max(room, 0));
  }

  text() {
    let text = this.parts.join("");
    if (this.dropped > 0) {
      if (text && !text.endsWith("\n")) text += "\n";
      text += `[truncated] ${this.dropped} more characters of output\n`;
    }
    return text;
  }
}

/** `text`, cut to MAX_OUTPUT_CHARS with a marker. */
function bounded(text) {
  if (text.length <= MAX_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_OUTPUT_CHARS)}\n[truncated] ${text.length - MAX_OUTPUT_CHARS} more characters`;
}

/** A value as a REPL shows it (strings quoted inside structures). */
function inspect(value, depth = 0, seen = new Set()) {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "bigint":
      return `${value}n`;
    case "symbol":
      return value.toString();
    case "function":
      return `[Function: ${value.name || "(anonymous)"}]`;
    case "undefined":
      return "undefined";
    case "object":
      break;
    default:
      return Object.is(value, -0) ? "-0" : String(value);
  }
  if (value === null) return "null";
  if (seen.has(value)) return "[Circular]";
  if (value instanceof Error) return errorText(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
  if (value instanceof RegExp) return String(value);
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? "[Array]" : "[Object]";
  seen.add(value);
  try {
    const inner = (v) => inspect(v, depth + 1, seen);
    const list = (items, open, close) => {
      const shown = items.slice(0, MAX_ENTRIES);
      if (items.length > MAX_ENTRIES) shown.push(`... ${items.length - MAX_ENTRIES} more items`);
      return shown.length === 0 ? `${open}${close}` : `${open} ${shown.join(", ")} ${close}`;
    };
    if (Array.isArray(value)) return list(Array.from(value, inner), "[", "]");
    if (ArrayBuffer.isView(value)) {
      return `${value.constructor.name}(${value.length}) ${list(Array.from(value, inner), "[", "]")}`;
    }
    if (value instanceof Map) {
      const entries = Array.from(value, ([k, v]) => `${inner(k)} => ${inner(v)}`);
      return `Map(${value.size}) ${list(entries, "{", "}")}`;
    }
    if (value instanceof Set) return `Set(${value.size}) ${list(Array.from(value, inner), "{", "}")}`;
    if (typeof value.then === "function") return "Promise { <pending> }";
    const key = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));
    const entries = Object.keys(value).map((k) => `${key(k)}: ${inner(value[k])}`);
    const name = value.constructor && value.constructor !== Object ? `${value.constructor.name} ` : "";
    return `${name}${list(entries, "{", "}")}`;
  } finally {
    seen.delete(value);
  }
}

/** What console.log prints for its arguments: strings as they are. */
function format(args) {
  return args.map((a) => (typeof a === "string" ? a : inspect(a))).join(" ");
}

/** An error as a person reads it: name, message, and the frames of the code. */
function errorText(error) {
  if (!(error instanceof Error)) return `Uncaught ${inspect(error)}`;
  let text = `${error.name}: ${error.message}`;
  if (error instanceof SyntaxError && error.lineNumber !== undefined && String(error.fileName).includes("<code")) {
    text += ` (at line ${error.lineNumber}, column ${error.columnNumber})`;
  }
  const frames = String(error.stack || "")
    .split("\n")
    .filter((line) => line.includes("<code"))
    .map((line) => `    at ${line}`);
  return frames.length ? `${text}\n${frames.join("\n")}` : text;
}

/** A relative path inside the in-memory files, or a ToolError saying why not. */
function checkName(name) {
  const parts = String(name).replaceAll("\\", "/").split("/");
  if (!name || String(name).startsWith("/") || parts.some((p) => p === "" || p === "." || p === "..")) {
    throw new ToolError(
      `files: ${JSON.stringify(name)} is not a relative path (give names like 'data.csv' or 'inputs/a.txt', without '..')`,
    );
  }
  return parts.join("/");
}

/** The files of a call (of a session, in a module with sessions), in memory. */
const FILES = new Map();

/** The `fs` the code sees: the in-memory files, by relative name. */
const fs = Object.freeze({
  readFileSync(name) {
    const key = checkName(name);
    if (!FILES.has(key)) {
      const error = new Error(`ENOENT: no such file or directory, open '${name}'`);
      error.code = "ENOENT";
      throw error;
    }
    return FILES.get(key);
  },
  writeFileSync(name, data) {
    FILES.set(checkName(name), String(data));
  },
  appendFileSync(name, data) {
    const key = checkName(name);
    FILES.set(key, (FILES.get(key) ?? "") + String(data));
  },
  existsSync(name) {
    try {
      return FILES.has(checkName(name));
    } catch {
      return false;
    }
  },
  readdirSync() {
    return [...FILES.keys()].sort();
  },
  unlinkSync(name) {
    if (!FILES.delete(checkName(name))) throw new Error(`ENOENT: no such file or directory, unlink '${name}'`);
  },
});

/** The files the code created or changed since `before`, with their sizes. */
function filesReport(before) {
  const encoder = new TextEncoder();
  const changed = [...FILES].filter(([name, text]) => before.get(name) !== text);
  if (changed.length === 0) return "";
  const shown = changed
    .slice(0, MAX_FILES_LISTED)
    .map(([name, text]) => `${name} (${encoder.encode(text).length} bytes)`)
    .join(", ");
  const more = changed.length > MAX_FILES_LISTED ? `, and ${changed.length - MAX_FILES_LISTED} more` : "";
  return `[files created or changed: ${shown}${more}]\n`;
}

/**
 * `code` with `let` and `const` declarations at its top level made `var`,
 * so that, as in a REPL, what one call of a session declares is there in
 * the next (indirect eval keeps `var`s and functions as globals, but its
 * top-level `let`s and `const`s end with it). Strings, template literals,
 * comments and regular expressions are skipped over, not rewritten.
 */
function topLevelAsVar(code) {
  let out = "";
  let depth = 0;
  let i = 0;
  const templates = []; // brace depth at each open `${`
  let previous = ""; // the last significant character, to tell a regex from a division
  while (i < code.length) {
    const c = code[i];
    const next = code[i + 1];
    if (c === "/" && next === "/") {
      const end = code.indexOf("\n", i);
      const stop = end === -1 ? code.length : end;
      out += code.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = code.indexOf("*/", i + 2);
      const stop = end === -1 ? code.length : end + 2;
      out += code.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === '"' || c === "'" || c === "`" || (c === "}" && templates.length && templates.at(-1) === depth)) {
      // A string, a template literal, or the rest of a template after `${...}`.
      let j = i + 1;
      const quote = c === "}" ? "`" : c;
      if (c === "}") templates.pop();
      while (j < code.length && code[j] !== quote) {
        if (code[j] === "\\") j += 1;
        else if (quote === "`" && code[j] === "$" && code[j + 1] === "{") {
          templates.push(depth);
          j += 1;
          break;
        } else if (quote !== "`" && code[j] === "\n") break;
        j += 1;
      }
      out += code.slice(i, j + 1);
      i = j + 1;
      previous = "a";
      continue;
    }
    if (c === "/" && (previous === "" || "(,=:[!&|?{};+-*%<>~^".includes(previous))) {
      // A regular expression literal.
      let j = i + 1;
      let inClass = false;
      while (j < code.length && code[j] !== "\n" && (inClass || code[j] !== "/")) {
        if (code[j] === "\\") j += 1;
        else if (code[j] === "[") inClass = true;
        else if (code[j] === "]") inClass = false;
        j += 1;
      }
      out += code.slice(i, j + 1);
      i = j + 1;
      previous = "a";
      continue;
    }
    if ("{([".includes(c)) depth += 1;
    if ("})]".includes(c)) depth -= 1;
    if (depth === 0 && /[A-Za-z_$]/.test(c) && !/[\w$.]/.test(code[i - 1] ?? "")) {
      const word = /^[A-Za-z_$][\w$]*/.exec(code.slice(i))[0];
      const declares = (word === "let" || word === "const") && /^\s+[A-Za-z_$[{]/.test(code.slice(i + word.length));
      out += declares ? "var" : word;
      i += word.length;
      previous = "a";
      continue;
    }
    if (!/\s/.test(c)) previous = c;
    out += c;
    i += 1;
  }
  return out;
}

/** How many calls this instance has run (names each call's code). */
let runs = 0;

/** Runs `code` in the global scope; the value of its last expression statement. */
function evaluate(code) {
  runs += 1;
  const name = runs === 1 ? "<code>" : `<code ${runs}>`;
  return (0, eval)(`${topLevelAsVar(code)}\n//# sourceURL=${name}`);
}

/** Lines of `text`, one by one, for `readline()`. */
function lineReader(text) {
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  let at = 0;
  return () => (at < lines.length ? lines[at++] : null);
}

/** The answer of a run: its output, its value, its files; or the tool's error. */
function answer(output, value, before, failure) {
  let text = output.text();
  if (value !== undefined) text += `${bounded(typeof value === "string" ? JSON.stringify(value) : inspect(value))}\n`;
  text += filesReport(before);
  if (failure !== undefined) throw new ToolError(text + bounded(errorText(failure)));
  return text === "" ? "(no output)" : text;
}

tools.tool({
  name: "run_javascript",
  description:
    "Runs a JavaScript program in a fresh, isolated engine (SpiderMonkey, modern ECMAScript) and returns its output: console output in order, then the value of the last expression, then the files it created. A thrown exception answers with its stack. No network, no Node.js modules; `readline()` reads the given stdin line by line, and `fs.readFileSync` / `fs.writeFileSync` reach the given files.",
  parameters: {
    type: "object",
    properties: {
      code: {
        type: "string",
        description:
          "The JavaScript program to run, as a script. A last line that is an expression is shown as a REPL shows it; a Promise it ends with is awaited.",
      },
      stdin: {
        type: ["string", "null"],
        description: "Text the program reads with readline() (a line at a time, null at the end) or as `stdin`.",
      },
      files: {
        type: ["object", "null"],
        additionalProperties: { type: "string" },
        description: "Text files the program can read with fs.readFileSync(name): relative name -> contents.",
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  warmUp: [{ code: "console.log([1, 2, 3].map((x) => x * 2))" }, { code: "const x = { a: [1, 'b'] };\nx" }],
  run: ({ code, stdin, files }) => {
    for (const [name, text] of Object.entries(files ?? {})) FILES.set(checkName(name), text);
    const before = new Map(FILES);
    const output = new Output();
    const saved = { ...console };
    const print = (...args) => output.write(`${format(args)}\n`);
    Object.assign(console, { log: print, info: print, debug: print, warn: print, error: print, trace: print });
    globalThis.stdin = stdin ?? "";
    globalThis.readline = lineReader(stdin ?? "");
    globalThis.fs = fs;
    const restore = () => Object.assign(console, saved);
    let value;
    try {
      value = evaluate(code);
    } catch (error) {
      restore();
      return answer(output, undefined, before, error);
    }
    if (value !== null && typeof value === "object" && typeof value.then === "function") {
      // The code ends with a Promise (an async function called, say): its
      // value once settled; ComponentizeJS runs the event loop for it.
      return Promise.resolve(value).then(
        (settled) => {
          restore();
          return answer(output, settled, before, undefined);
        },
        (error) => {
          restore();
          return answer(output, undefined, before, error);
        },
      );
    }
    restore();
    return answer(output, value, before, undefined);
  },
});

export const { toolInfo, call } = tools.exports();

// The warm-up calls ran at build time: the snapshot starts with no files,
// no globals of theirs and the first call's name.
FILES.clear();
runs = 0;
delete globalThis.x;
