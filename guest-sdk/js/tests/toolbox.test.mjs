// Tests of toolhost-guest.js in Node.js (no component needed).
// Run: node --test guest-sdk/js/tests/   (`cargo test` runs them too).

import assert from "node:assert/strict";
import { test } from "node:test";

import { Toolbox, ToolError } from "../toolhost-guest.js";

function toolbox() {
  const tools = new Toolbox();
  tools.tool({
    name: "add",
    description: "Adds.",
    parameters: {
      type: "object",
      properties: {
        a: { type: "integer", minimum: 0 },
        b: { type: ["number", "null"] },
        tags: { type: "array", items: { type: "string", maxLength: 3 }, maxItems: 2 },
        mode: { enum: ["x", "y"] },
        opts: { type: "object", properties: { deep: { type: "boolean" } }, required: ["deep"] },
      },
      required: ["a"],
      additionalProperties: false,
    },
    run: ({ a, b }) => a + (b ?? 0),
  });
  tools.tool({
    name: "fail",
    parameters: { type: "object", properties: { kind: { type: "string" } } },
    run: ({ kind }) => {
      switch (kind) {
        case "tool":
          throw new ToolError("told you");
        case "type":
          return null.x;
        case "string":
          throw "plain string";
        case "object":
          throw { code: 7 };
        case "promise":
          return Promise.resolve(1);
        case "rejected":
          return Promise.reject(new ToolError("later"));
        case "async-bigint":
          return (async () => 1n)();
        case "undefined":
          return undefined;
        case "bigint":
          return 1n;
        default:
          return { kind };
      }
    },
  });
  return tools;
}

test("tool-info lists every tool with its schema", () => {
  const infos = JSON.parse(toolbox().toolInfo());
  assert.deepEqual(
    infos.map((i) => i.function.name),
    ["add", "fail"],
  );
  assert.equal(infos[0].type, "function");
  assert.equal(infos[0].function.description, "Adds.");
  assert.equal(infos[0].function.parameters.required[0], "a");
  assert.equal("description" in infos[1].function, false);
});

test("results: strings as they are, anything else as JSON", () => {
  const t = toolbox();
  assert.deepEqual(t.run("add", '{"a": 1, "b": 2.5}'), { ok: "3.5" });
  assert.deepEqual(t.run("add", '{"a": 1, "b": null}'), { ok: "1" });
  assert.deepEqual(t.run("fail", '{"kind": "z"}'), { ok: '{"kind":"z"}' });
  assert.deepEqual(t.run("fail", '{"kind": "undefined"}'), { ok: "null" });
  assert.deepEqual(t.run("fail", ""), { ok: "{}" });
});

test("arguments are checked against the schema before run", () => {
  const t = toolbox();
  const cases = {
    "{}": "invalid arguments: missing field 'a'",
    "[]": "invalid arguments: expected a JSON object, got an array",
    '{"a": -1}': "invalid arguments: field 'a': expected at least 0, got -1",
    '{"a": 1.5}': "invalid arguments: field 'a': expected an integer, got number 1.5",
    '{"a": 1, "b": "x"}': "invalid arguments: field 'b': expected a number or null, got string \"x\"",
    '{"a": 1, "c": 1}': "invalid arguments: unknown field 'c' (expected: a, b, tags, mode, opts)",
    '{"a": 1, "tags": ["ab", "abcd"]}': "invalid arguments: field 'tags[1]': expected at most 3 characters, got 4",
    '{"a": 1, "tags": ["a", "b", "c"]}': "invalid arguments: field 'tags': expected at most 2 items, got 3",
    '{"a": 1, "mode": "z"}': "invalid arguments: field 'mode': expected one of \"x\", \"y\", got string \"z\"",
    '{"a": 1, "opts": {}}': "invalid arguments: missing field 'opts.deep'",
    '{"a": 1, "opts": {"deep": 1}}': "invalid arguments: field 'opts.deep': expected a boolean, got number 1",
  };
  for (const [args, err] of Object.entries(cases)) {
    assert.deepEqual(t.run("add", args), { err }, args);
  }
  assert.match(t.run("add", "{bad").err, /^invalid arguments: not valid JSON: /);
});

test("whatever goes wrong becomes an error text", () => {
  const t = toolbox();
  assert.deepEqual(t.run("nope", "{}"), { err: "this module has no tool 'nope' (it has: add, fail)" });
  assert.deepEqual(t.run("fail", '{"kind": "tool"}'), { err: "told you" });
  assert.match(t.run("fail", '{"kind": "type"}').err, /^TypeError: /);
  assert.deepEqual(t.run("fail", '{"kind": "string"}'), { err: "plain string" });
  assert.deepEqual(t.run("fail", '{"kind": "object"}'), { err: 'thrown: {"code":7}' });
  assert.match(t.run("fail", '{"kind": "bigint"}').err, /^TypeError: /);
});

test("the exports throw the error text for err", () => {
  const { toolInfo, call } = toolbox().exports();
  assert.equal(JSON.parse(toolInfo()).length, 2);
  assert.equal(call("add", '{"a": 2}'), "2");
  assert.throws(() => call("fail", '{"kind": "tool"}'), (e) => e === "told you");
});

test("an async tool answers with a Promise of the answer", async () => {
  const t = toolbox();
  assert.deepEqual(await t.run("fail", '{"kind": "promise"}'), { ok: "1" });
  assert.deepEqual(await t.run("fail", '{"kind": "rejected"}'), { err: "later" });
  assert.match((await t.run("fail", '{"kind": "async-bigint"}')).err, /^TypeError: /);
  // Arguments are still checked first, and synchronously.
  assert.deepEqual(t.run("fail", '{"kind": 1}'), {
    err: "invalid arguments: field 'kind': expected a string, got number 1",
  });
  const { call } = t.exports();
  assert.equal(await call("fail", '{"kind": "promise"}'), "1");
  await assert.rejects(call("fail", '{"kind": "rejected"}'), (e) => e === "later");
});

test("bad declarations are refused", () => {
  const t = new Toolbox();
  assert.throws(() => t.tool({ name: "no spaces", run: () => "" }), /letters, digits/);
  assert.throws(() => t.tool({ name: "x" }), /run must be a function/);
  t.tool({ name: "x", run: () => "" });
  assert.throws(() => t.tool({ name: "x", run: () => "" }), /declared twice/);
});

test("warmUp samples run at exports(), and a failing one stops the build", () => {
  const declare = (tools, warmUp, run = ({ n }) => n) =>
    tools.tool({
      name: "count",
      parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
      run,
      warmUp,
    });
  let runs = 0;
  const tools = new Toolbox();
  declare(tools, [{ n: 1 }, { n: 2 }], ({ n }) => {
    runs++;
    return n;
  });
  const { call } = tools.exports();
  assert.equal(runs, 32, "16 rounds of each of the two samples");
  assert.equal(call("count", '{"n": 3}'), "3");
  assert.equal(tools.warmUp(1), 2);

  assert.throws(
    () => declare(new Toolbox(), { n: "x" }).exports(),
    /^Error: tool 'count': its warmUp arguments \{"n":"x"\} failed: invalid arguments/,
  );
  assert.throws(
    () => declare(new Toolbox(), { n: 1 }, async ({ n }) => n).exports(),
    /tool 'count': warmUp needs a run that answers at once \(it returned a Promise\)/,
  );
  for (const bad of [3, "n", [null], [{ n: 1 }, []]]) {
    assert.throws(() => declare(new Toolbox(), bad), /tool 'count': warmUp takes an arguments object/);
  }
  assert.throws(() => declare(new Toolbox(), { n: 1n }), /tool 'count': warmUp arguments are not JSON/);
  assert.equal(declare(new Toolbox(), undefined).warmUp(), 0, "no samples, nothing runs");
});
