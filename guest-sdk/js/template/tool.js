// A toolhost tool module in JavaScript: copy this file (and
// toolhost-guest.js beside it) and make it yours.

import { Toolbox, ToolError } from "./toolhost-guest.js";

const tools = new Toolbox();

tools.tool({
  name: "greet",
  description: "Greets someone by name.",
  parameters: {
    type: "object",
    properties: { name: { type: "string", description: "Who to greet." } },
    required: ["name"],
    additionalProperties: false,
  },
  run: ({ name }) => {
    if (!name.trim()) throw new ToolError("name is empty: give the name of who to greet");
    return `Hello, ${name}!`;
  },
});

export const { toolInfo, call } = tools.exports();
