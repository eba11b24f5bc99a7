// Write toolhost tool modules in JavaScript.
//
// Declare each tool once (name, description, JSON Schema of its parameters,
// and the function that runs it); the toolbox writes the two exports of the
// `toolhost:tool` world, checks the arguments against the schema before your
// function runs, and turns anything thrown into an error text for the model.
//
//   import { Toolbox, ToolError } from "./toolhost-guest.js";
//   const tools = new Toolbox();
//   tools.tool({
//     name: "greet",
//     description: "Greets someone by name.",
//     parameters: {
//       type: "object",
//       properties: { name: { type: "string", description: "Who to greet." } },
//       required: ["name"],
//     },
//     run: ({ name }) => `Hello, ${name}!`,
//   });
//   export const { toolInfo, call } = tools.exports();
//
// `run` may also be `async` (to `await fetch(...)`, for example). Give a
// tool `warmUp: { ...arguments }` (or an array of them) and `exports()` runs
// it with them at build time, so that every fresh instance starts warmed.
//
// Build with ComponentizeJS (see guest-sdk/js/README.md).

const NAME = /^[A-Za-z0-9_-]+$/;

/** Throw it in a tool to answer the model with this error text. */
export class ToolError extends Error {
  constructor(message) {
    super(message);
    this.name = "ToolError";
  }
}

/** Arguments that do not match a tool's parameters schema. */
class ArgumentError extends Error {
  constructor(path, message) {
    super(message);
    this.path = path;
  }

  toString() {
    return this.path
      ? `invalid arguments: field '${this.path}': ${this.message}`
      : `invalid arguments: ${this.message}`;
  }
}

/** How a JSON value is named in error messages. */
function kind(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string": {
      const text = JSON.stringify(value);
      return `string ${text.length <= 40 ? text : text.slice(0, 37) + "..."}`;
    }
    case "number":
      return `number ${JSON.stringify(value)}`;
    case "boolean":
      return `boolean ${value}`;
    default:
      return "an object";
  }
}

function hasType(type, value) {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

const ARTICLE = { integer: "an", array: "an", object: "an" };

function describeTypes(types) {
  return types.map((t) => (t === "null" ? "null" : `${ARTICLE[t] ?? "a"} ${t}`)).join(" or ");
}

function join(path, key) {
  return path ? `${path}.${key}` : String(key);
}

/**
 * Checks `value` against the subset of JSON Schema that tool parameters use:
 * type, enum, const, properties, required, additionalProperties, items,
 * minItems, maxItems, minLength, maxLength, minimum, maximum. Other keywords
 * are not checked.
 */
function check(schema, value, path) {
  if (schema === true || schema === undefined) return;
  if (schema === false) throw new ArgumentError(path, "no value is allowed here");
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => hasType(t, value))) {
      throw new ArgumentError(path, `expected ${describeTypes(types)}, got ${kind(value)}`);
    }
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) {
    const allowed = schema.enum.map((e) => JSON.stringify(e)).join(", ");
    throw new ArgumentError(path, `expected one of ${allowed}, got ${kind(value)}`);
  }
  if ("const" in schema && schema.const !== value) {
    throw new ArgumentError(path, `expected ${JSON.stringify(schema.const)}, got ${kind(value)}`);
  }
  if (typeof value === "string") checkString(schema, value, path);
  if (typeof value === "number") checkNumber(schema, value, path);
  if (Array.isArray(value)) checkArray(schema, value, path);
  if (hasType("object", value)) checkObject(schema, value, path);
}

function checkString(schema, value, path) {
  if (schema.minLength === undefined && schema.maxLength === undefined) return;
  // JSON Schema counts characters (code points), not UTF-16 units.
  let length = 0;
  for (const _ of value) length++;
  if (schema.minLength !== undefined && length < schema.minLength) {
    throw new ArgumentError(path, `expected at least ${schema.minLength} characters, got ${length}`);
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    throw new ArgumentError(path, `expected at most ${schema.maxLength} characters, got ${length}`);
  }
}

function checkNumber(schema, value, path) {
  if (schema.minimum !== undefined && value < schema.minimum) {
    throw new ArgumentError(path, `expected at least ${schema.minimum}, got ${value}`);
  }
  if (schema.maximum !== undefined && value > schema.maximum) {
    throw new ArgumentError(path, `expected at most ${schema.maximum}, got ${value}`);
  }
}

function checkArray(schema, value, path) {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    throw new ArgumentError(path, `expected at least ${schema.minItems} items, got ${value.length}`);
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    throw new ArgumentError(path, `expected at most ${schema.maxItems} items, got ${value.length}`);
  }
  if (schema.items !== undefined) {
    value.forEach((item, i) => check(schema.items, item, `${path}[${i}]`));
  }
}

function checkObject(schema, value, path) {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) {
      throw new ArgumentError("", `missing field '${join(path, name)}'`);
    }
  }
  for (const [key, item] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) {
      check(properties[key], item, join(path, key));
    } else if (schema.additionalProperties === false) {
      const expected = Object.keys(properties).join(", ") || "none";
      throw new ArgumentError("", `unknown field '${join(path, key)}' (expected: ${expected})`);
    } else if (typeof schema.additionalProperties === "object") {
      check(schema.additionalProperties, item, join(path, key));
    }
  }
}

/** A thrown value as an error text for the model. */
function errorText(error) {
  if (error instanceof ArgumentError) return error.toString();
  if (error instanceof ToolError) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === "string") return error;
  try {
    return `thrown: ${JSON.stringify(error)}`;
  } catch {
    return `thrown: ${String(error)}`;
  }
}

/** A tool's return value as text: strings as they are, anything else as JSON. */
function encode(value) {
  if (typeof value === "string") return value;
  const text = JSON.stringify(value === undefined ? null : value);
  if (text === undefined) throw new ToolError(`cannot encode the result (${typeof value}) as JSON`);
  return text;
}

function isThenable(value) {
  return typeof value?.then === "function";
}

/** A tool's result as the answer `{ ok: text }`, or `{ err: text }` if it cannot be encoded. */
function answer(value) {
  try {
    return { ok: encode(value) };
  } catch (e) {
    return { err: errorText(e) };
  }
}

/** How many times `warmUp` runs each sample. */
const WARM_UP_ROUNDS = 16;

/** A tool's `warmUp` as a list of argument objects, each checked to be JSON. */
function warmUpList(name, warmUp) {
  if (warmUp === undefined) return [];
  const samples = Array.isArray(warmUp) ? warmUp : [warmUp];
  for (const args of samples) {
    if (!hasType("object", args)) {
      throw new TypeError(`tool '${name}': warmUp takes an arguments object, or an array of them`);
    }
    try {
      JSON.stringify(args);
    } catch (e) {
      throw new TypeError(`tool '${name}': warmUp arguments are not JSON: ${e.message}`);
    }
  }
  return samples;
}

/** The tools of a module. */
export class Toolbox {
  #tools = new Map();

  /**
   * Declares a tool: `{ name, description, parameters, run }`. `parameters`
   * is the JSON Schema of its arguments (default: no arguments, any other
   * field refused); `run(args)` returns the result (a string as is,
   * anything else as JSON) or throws, or returns a Promise of the result.
   */
  tool({ name, description = "", parameters, run, warmUp }) {
    if (typeof name !== "string" || !NAME.test(name)) {
      throw new TypeError(`tool name ${JSON.stringify(name)}: use letters, digits, '_' and '-' only`);
    }
    if (this.#tools.has(name)) throw new TypeError(`tool '${name}' is declared twice`);
    if (typeof run !== "function") throw new TypeError(`tool '${name}': run must be a function`);
    const schema = parameters ?? { type: "object", properties: {}, additionalProperties: false };
    const samples = warmUpList(name, warmUp);
    this.#tools.set(name, { name, description, parameters: schema, run, warmUp: samples });
    return this;
  }

  /**
   * Runs each tool's `warmUp` arguments `rounds` times, as `call` would;
   * returns how many calls ran. `exports()` calls it, so it runs at build
   * time, when ComponentizeJS evaluates the module and then snapshots its
   * memory: a fresh instance of the component starts from an engine that
   * has already compiled and run those paths, which makes its first call
   * cheaper. Throws if a warm-up call fails (or returns a Promise), so
   * that a wrong sample stops the build instead of warming nothing.
   */
  warmUp(rounds = WARM_UP_ROUNDS) {
    let ran = 0;
    for (const tool of this.#tools.values()) {
      for (const args of tool.warmUp) {
        const text = JSON.stringify(args);
        for (let round = 0; round < rounds; round++) {
          const result = this.run(tool.name, text);
          ran++;
          if (isThenable(result)) {
            throw new TypeError(`tool '${tool.name}': warmUp needs a run that answers at once (it returned a Promise)`);
          }
          if (result.err !== undefined) {
            throw new Error(`tool '${tool.name}': its warmUp arguments ${text} failed: ${result.err}`);
          }
        }
      }
    }
    return ran;
  }

  /** The `tool-info` export: the schemas of every tool, as JSON text. */
  toolInfo() {
    const infos = [...this.#tools.values()].map(({ name, description, parameters }) => ({
      type: "function",
      function: description ? { name, description, parameters } : { name, parameters },
    }));
    return JSON.stringify(infos);
  }

  /**
   * Runs tool `name`: `{ ok: text }` or `{ err: text }`; never throws. When
   * the tool's `run` returns a Promise (an `async` tool), so does this: one
   * that resolves to the answer.
   */
  run(name, argumentsText) {
    const tool = this.#tools.get(name);
    if (!tool) {
      const known = [...this.#tools.keys()].join(", ");
      return { err: `this module has no tool '${name}' (it has: ${known})` };
    }
    let args;
    try {
      args = argumentsText.trim() === "" ? {} : JSON.parse(argumentsText);
    } catch (e) {
      return { err: `invalid arguments: not valid JSON: ${e.message}` };
    }
    if (!hasType("object", args)) {
      return { err: `invalid arguments: expected a JSON object, got ${kind(args)}` };
    }
    let value;
    try {
      check(tool.parameters, args, "");
      value = tool.run(args);
    } catch (e) {
      return { err: errorText(e) };
    }
    if (isThenable(value)) {
      // An async tool: the answer is a Promise that never rejects.
      return Promise.resolve(value).then(answer, (e) => ({ err: errorText(e) }));
    }
    return answer(value);
  }

  /**
   * The two exports of the world, for `export const { toolInfo, call } =
   * tools.exports();`. ComponentizeJS returns `call`'s value as `ok` and
   * what it throws as `err`; for an async tool `call` returns a Promise,
   * which ComponentizeJS settles by running the event loop before the call
   * returns (so `await fetch(...)` works inside `run`).
   */
  exports() {
    this.warmUp();
    const unwrap = ({ ok, err }) => {
      if (err !== undefined) throw err;
      return ok;
    };
    return {
      toolInfo: () => this.toolInfo(),
      call: (name, argumentsText) => {
        const result = this.run(name, argumentsText);
        return isThenable(result) ? result.then(unwrap) : unwrap(result);
      },
    };
  }
}
