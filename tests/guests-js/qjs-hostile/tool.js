// Hostile and plain tools for the QuickJS backend (jco componentize
// --backend quickjs, i.e. componentize-qjs): built by
// `xtask::build_qjs_component`.

import { Toolbox } from "../../../guest-sdk/js/toolhost-guest.js";

const tools = new Toolbox();

tools.tool({
  name: "qjs_spin",
  description: "Loops forever.",
  run: () => {
    for (;;) {
      // Nothing: only the host's fuel or time limit ends it.
    }
  },
});

tools.tool({
  name: "qjs_alloc",
  description: "Keeps growing an array of strings until allocation fails.",
  run: () => {
    const kept = [];
    for (let i = 0; ; i++) kept.push(`${i}:${"x".repeat(64 * 1024)}`);
  },
});

tools.tool({
  name: "qjs_echo",
  description: "Answers with the text it is given.",
  parameters: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
  run: ({ text }) => text,
});

tools.tool({
  name: "qjs_throw",
  description: "Throws an Error.",
  run: () => {
    throw new Error("thrown on purpose");
  },
});

tools.tool({
  name: "qjs_print",
  description: "Prints 1 MB with console.log, then answers 'done'.",
  run: () => {
    const line = "y".repeat(1023);
    for (let i = 0; i < 1024; i++) console.log(line);
    return "done";
  },
});

export const { toolInfo, call } = tools.exports();
