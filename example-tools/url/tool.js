// URLs, parsed and built by the WHATWG URL standard: a toolhost module in
// JavaScript. Tools: `parse`, `resolve`, `set_params`, `encode` and
// `decode`; built with ComponentizeJS (`cargo xtask build-examples js`).

import { Toolbox, ToolError } from "../../guest-sdk/js/toolhost-guest.js";

const tools = new Toolbox();

// Each tool runs a few times at build time with typical arguments
// (`warmUp`), so that every call's fresh instance starts from an engine that
// has already compiled and run its code. jco's QuickJS backend has no
// WHATWG `URL` (the URL tools then answer with an error), so there the tools
// that need it are not warmed.
const WARM_URL = typeof URL === "function";

/** The parameters of a tool that takes one text. */
const TEXT_ONLY = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
  additionalProperties: false,
};

/** `new URL(text, base)`, with an error the model can act on. */
function url(text, base) {
  try {
    return base === undefined ? new URL(text) : new URL(text, base);
  } catch {
    const what = base === undefined ? `'${text}'` : `'${text}' against base '${base}'`;
    throw new ToolError(`${what} is not a valid URL: give an absolute URL such as https://example.com/path`);
  }
}

tools.tool({
  name: "parse",
  description:
    "Splits a URL into its parts (protocol, host, port, path, query parameters, fragment), normalized as browsers do.",
  parameters: {
    type: "object",
    properties: { url: { type: "string", description: "An absolute URL." } },
    required: ["url"],
    additionalProperties: false,
  },
  warmUp: WARM_URL ? { url: "https://user@example.org:8080/docs/a%20b/?q=1&q=2&lang=en#top" } : undefined,
  run: ({ url: text }) => {
    const u = url(text);
    const params = {};
    for (const [key, value] of u.searchParams) (params[key] ??= []).push(value);
    return {
      href: u.href,
      origin: u.origin,
      protocol: u.protocol.replace(/:$/, ""),
      username: u.username,
      password: u.password,
      hostname: u.hostname,
      port: u.port === "" ? null : Number(u.port),
      pathname: u.pathname,
      params,
      fragment: u.hash.replace(/^#/, ""),
    };
  },
});

tools.tool({
  name: "resolve",
  description: "Resolves a relative reference (like '../img/a.png' or '?page=2') against a base URL.",
  parameters: {
    type: "object",
    properties: {
      base: { type: "string", description: "The absolute URL to resolve against." },
      reference: { type: "string", description: "The relative (or absolute) reference." },
    },
    required: ["base", "reference"],
    additionalProperties: false,
  },
  warmUp: WARM_URL ? { base: "https://example.org/docs/guide/", reference: "../img/a.png?v=2" } : undefined,
  run: ({ base, reference }) => url(reference, url(base).href).href,
});

tools.tool({
  name: "set_params",
  description:
    "Returns the URL with query parameters set (replacing any of the same name) or removed (value null).",
  parameters: {
    type: "object",
    properties: {
      url: { type: "string", description: "An absolute URL." },
      params: {
        type: "object",
        description: "Parameter name to its new value; null removes the parameter.",
        additionalProperties: { type: ["string", "number", "boolean", "null"] },
      },
    },
    required: ["url", "params"],
    additionalProperties: false,
  },
  warmUp: WARM_URL
    ? { url: "https://example.org/search?q=old&page=1", params: { q: "new", page: null, n: 20 } }
    : undefined,
  run: ({ url: text, params }) => {
    const u = url(text);
    for (const [key, value] of Object.entries(params)) {
      if (value === null) u.searchParams.delete(key);
      else u.searchParams.set(key, String(value));
    }
    return u.href;
  },
});

tools.tool({
  name: "encode",
  description: "Percent-encodes a text for use as one URL component (a path segment or a query value).",
  parameters: TEXT_ONLY,
  warmUp: { text: "a b&c/é" },
  run: ({ text }) => {
    try {
      return encodeURIComponent(text);
    } catch {
      throw new ToolError("the text holds a lone UTF-16 surrogate, which cannot be encoded");
    }
  },
});

tools.tool({
  name: "decode",
  description: "Decodes a percent-encoded URL component back to text.",
  parameters: TEXT_ONLY,
  warmUp: { text: "a%20b%26c%2F%C3%A9" },
  run: ({ text }) => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw new ToolError(`'${text}' is not valid percent-encoding (each % must start %XX of valid UTF-8)`);
    }
  },
});

export const { toolInfo, call } = tools.exports();
