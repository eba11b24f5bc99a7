// A test tool of outbound HTTP from JavaScript: `fetch()` in an async tool,
// built with ComponentizeJS's default features (so it imports
// wasi:http/outgoing-handler). Built by `xtask::build_js_component`.

import { Toolbox, ToolError } from "../../../guest-sdk/js/toolhost-guest.js";

const tools = new Toolbox();

/** A rejected fetch's reason as text, with its cause when it has one. */
function reason(error) {
  const text = error?.message ?? String(error);
  const cause = error?.cause;
  if (cause === undefined) return text;
  return `${text} (cause: ${cause?.message ?? String(cause)})`;
}

tools.tool({
  name: "js_fetch",
  description: "Fetches a URL; answers with the status, the body as text and the headers.",
  parameters: {
    type: "object",
    properties: {
      url: { type: "string" },
      method: { type: "string" },
      headers: { type: "object", additionalProperties: { type: "string" } },
      body: { type: "string" },
    },
    required: ["url"],
    additionalProperties: false,
  },
  run: async ({ url, method, headers, body }) => {
    let response;
    try {
      response = await fetch(url, { method, headers, body });
    } catch (error) {
      throw new ToolError(`fetch failed: ${reason(error)}`);
    }
    let text;
    try {
      text = await response.text();
    } catch (error) {
      throw new ToolError(`reading the body failed: ${reason(error)}`);
    }
    return JSON.stringify({ status: response.status, body: text, headers: [...response.headers] });
  },
});

export const { toolInfo, call } = tools.exports();
