// Drives `interpreter acp` with the official ACP TypeScript library
// (`@agentclientprotocol/sdk` from npm, the version .ci/npm pins), as an
// editor does: initialize, a new session, a prompt whose code the client
// allows once, a prompt whose code it rejects, a mode change, the session
// loaded again by a second client (its conversation replayed), a prompt
// that fails. Prints one JSON report for the Rust test to check.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const sdkDir = process.env.OI_ACP_SDK_DIR;
const acp = await import(
  require.resolve("@agentclientprotocol/sdk", { paths: [sdkDir] })
);

const work = process.env.WORK;

/// One client connection to a fresh `interpreter acp`; `answers` says what
/// the client answers to each permission request, in order.
async function connect(answers, op) {
  const agent = spawn(process.env.OI_BIN, ["acp"], {
    cwd: work,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const updates = [];
  const permissions = [];
  const stream = acp.ndJsonStream(
    Writable.toWeb(agent.stdin),
    Readable.toWeb(agent.stdout),
  );
  const app = acp
    .client({ name: "oi-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      const kind = answers.shift() ?? "reject_once";
      const option = params.options.find((o) => o.kind === kind);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  try {
    return await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "oi-test", version: "1" },
      });
      return await op(ctx, init, updates, permissions);
    });
  } finally {
    agent.stdin.end();
    await new Promise((resolve) => agent.once("exit", resolve));
  }
}

const report = {};
if (process.env.OI_ACP_SCENARIO === "mcp") {
  // The editor's own MCP servers: one on stdio, one on SSE (which oi does
  // not speak).
  await connect([], async (ctx, init, updates) => {
    report.init = init;
    const session = await ctx.request(acp.methods.agent.session.new, {
      cwd: work,
      mcpServers: [
        { name: "tools", command: process.env.MCP_PYTHON, args: [process.env.MCP_SERVER], env: [] },
        { type: "sse", name: "old", url: "http://127.0.0.1:9/sse", headers: [] },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    report.notes = updates.splice(0);
    const done = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Add 2 and 3 with the tool." }],
    });
    report.mcp = { stopReason: done.stopReason, updates: updates.splice(0) };
  });
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exit(0);
}
await connect(["allow_once", "reject_once", "allow_once"], async (ctx, init, updates, permissions) => {
  report.init = init;
  const session = await ctx.request(acp.methods.agent.session.new, {
    cwd: work,
    mcpServers: [],
  });
  report.sessionId = session.sessionId;
  report.modes = session.modes;
  const first = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "How many lines does data.csv have?" }],
  });
  report.first = { stopReason: first.stopReason, updates: updates.splice(0) };
  const second = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Delete it." }],
  });
  report.second = { stopReason: second.stopReason, updates: updates.splice(0) };
  report.permissions = permissions.splice(0);
  await ctx.request(acp.methods.agent.session.setMode, {
    sessionId: session.sessionId,
    modeId: "ask",
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  report.modeUpdates = updates.splice(0);
  report.configOptions = session.configOptions;
  report.setModel = await ctx.request(acp.methods.agent.session.setConfigOption, {
    sessionId: session.sessionId,
    configId: "model",
    value: "mock-model-2",
  });
  const third = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Which model are you?" }],
  });
  report.third = { stopReason: third.stopReason, updates: updates.splice(0) };
  // Cancelled while its code runs.
  const waiting = ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Wait a minute." }],
  });
  const running = () =>
    updates.some(
      (u) => u.update.sessionUpdate === "tool_call_update" && u.update.status === "in_progress",
    );
  while (!running()) await new Promise((resolve) => setTimeout(resolve, 20));
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
  report.cancelled = { stopReason: (await waiting).stopReason, updates: updates.splice(0) };
  try {
    await ctx.request(acp.methods.agent.session.setMode, {
      sessionId: session.sessionId,
      modeId: "yolo",
    });
    report.badMode = null;
  } catch (error) {
    report.badMode = { code: error.code, data: error.data };
  }
});

await connect([], async (ctx, init, updates) => {
  await ctx.request(acp.methods.agent.session.load, {
    sessionId: report.sessionId,
    cwd: work,
    mcpServers: [],
  });
  report.replayed = updates.splice(0);
  try {
    await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: report.sessionId,
      prompt: [{ type: "text", text: "One more, please." }],
    });
    report.failed = null;
  } catch (error) {
    report.failed = { code: error.code, message: error.message, data: error.data };
  }
});

process.stdout.write(JSON.stringify(report) + "\n");
