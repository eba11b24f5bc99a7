// Drives `toolhost serve` with the official MCP TypeScript SDK
// (`@modelcontextprotocol/sdk`, pinned in package-lock.json), as the
// integration tests in ../ ask.
//
// Usage: node client.mjs PLAN.json, where the plan is
//   {"transport": "stdio" | "http",
//    "command": ["toolhost", "--config", "...", "serve"],    (stdio)
//    "url": "http://127.0.0.1:PORT/mcp", "token": "...",     (http)
//    "names": [...],          the tools tools/list must give, in order
//    "calls": [{"tool", "arguments", "text" | "error", "structured"?}]}
// It prints one `ok ...` line per check and exits 0 only if all passed.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function expect(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

function transportOf(plan) {
  if (plan.transport === "stdio") {
    const [command, ...args] = plan.command;
    return new StdioClientTransport({ command, args, stderr: "inherit" });
  }
  const headers = plan.token ? { Authorization: `Bearer ${plan.token}` } : {};
  return new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
}

async function allTools(client) {
  const tools = [];
  let cursor;
  for (let page = 0; page < 1000; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) {
      return tools;
    }
  }
  throw new Error("tools/list pages never ended");
}

async function check(call, client) {
  const result = await client.callTool({ name: call.tool, arguments: call.arguments ?? {} });
  const texts = result.content.filter((c) => c.type === "text").map((c) => c.text);
  expect(texts.length === 1, `${call.tool}: expected one text item, got ${JSON.stringify(result.content)}`);
  const [text] = texts;
  if (call.error !== undefined) {
    expect(result.isError === true, `${call.tool}: wanted isError, got ${JSON.stringify(text)}`);
    expect(text.startsWith("Error: ") && text.includes(call.error),
      `${call.tool}: ${JSON.stringify(text)} does not say ${JSON.stringify(call.error)}`);
  } else {
    expect(!result.isError, `${call.tool}: failed with ${JSON.stringify(text)}`);
    expect(text === call.text, `${call.tool}: answered ${JSON.stringify(text)}, wanted ${JSON.stringify(call.text)}`);
    // The SDK itself validates structuredContent against the tool's outputSchema.
    if (call.structured !== undefined) {
      const got = result.structuredContent ?? null;
      expect(isDeepStrictEqual(got, call.structured),
        `${call.tool}: structuredContent ${JSON.stringify(got)}, wanted ${JSON.stringify(call.structured)}`);
    }
  }
}

async function main(planPath) {
  const plan = JSON.parse(readFileSync(planPath, "utf8"));
  const client = new Client({ name: "toolhost-test", version: "1.0.0" });
  await client.connect(transportOf(plan));
  try {
    const names = (await allTools(client)).map((t) => t.name);
    expect(JSON.stringify(names) === JSON.stringify(plan.names),
      `listed ${JSON.stringify(names)}, wanted ${JSON.stringify(plan.names)}`);
    console.log("ok list", names.length);
    for (const call of plan.calls) {
      await check(call, client);
    }
    console.log("ok calls", plan.calls.length);
  } finally {
    await client.close();
  }
}

main(process.argv[2]).then(
  () => process.exit(0),
  (error) => {
    console.error(`FAILED: ${error.message}`);
    process.exit(1);
  },
);
