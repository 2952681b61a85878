// Drives `interpreter` with the official Codex TypeScript SDK, unchanged:
// a thread of two turns, the thread taken up again by id in a new client
// with a structured answer, and a turn that fails. Prints what the SDK
// returned as one JSON object; the Rust test (tests/e2e/codex_sdk.rs)
// checks it against what the mock model server was asked.
//
// Environment: OI_CODEX_SDK_DIR (the npm prefix the SDK is installed in),
// OI_BIN (the binary), MOCK_BASE_URL (the mock server's /v1 URL), WORK (the
// folder the thread works in), IMAGE (an image file to attach).

import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = join(process.env.OI_CODEX_SDK_DIR, "node_modules/@openai/codex-sdk/dist/index.js");
const { Codex } = await import(pathToFileURL(sdk).href);

const options = {
  codexPathOverride: process.env.OI_BIN,
  baseUrl: process.env.MOCK_BASE_URL,
  apiKey: "sk-sdk-test",
};
const threadOptions = {
  model: "mock-model",
  workingDirectory: process.env.WORK,
  skipGitRepoCheck: true,
  sandboxMode: "workspace-write",
  approvalPolicy: "never",
  networkAccessEnabled: false,
  modelReasoningEffort: "low",
  webSearchEnabled: false,
};

const report = {};
const codex = new Codex(options);
const thread = codex.startThread(threadOptions);
report.first = await thread.run("How many lines does data.csv have?");
report.threadId = thread.id;
report.second = await thread.run([
  { type: "text", text: "And what is in this picture?" },
  { type: "local_image", path: process.env.IMAGE },
]);

// Another client takes the thread up by its id, and asks for JSON.
const again = new Codex(options).resumeThread(report.threadId, threadOptions);
report.third = await again.run("Give the count as JSON.", {
  outputSchema: {
    type: "object",
    properties: { lines: { type: "integer" } },
    required: ["lines"],
    additionalProperties: false,
  },
});

// A turn the model server refuses: the SDK throws.
try {
  await again.run("This one fails.");
  report.failed = null;
} catch (error) {
  report.failed = String(error.message);
}

console.log(JSON.stringify(report));
