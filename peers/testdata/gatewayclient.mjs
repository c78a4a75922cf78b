// gatewayclient.mjs drives the official TypeScript SDK's Client
// (@modelcontextprotocol/sdk) against mcpvisor's gateway for the Go tests
// in peers/gateway_test.go. It is a small line protocol, so that the Go
// test decides the order of steps and can act between them (add a server,
// read logs):
//
//   stdin:  one JSON command a line, {"id": n, "op": ..., ...}:
//           {"op":"list"}                                   every tool, all pages
//           {"op":"call","name":N,"args":{},"progress":B}    tools/call (B: send a progress token)
//           {"op":"abort","target":id}                      abort the call of command id (AbortSignal)
//   stdout: one JSON object a line: the answer to command n
//           {"id":n,"ok":true,...} or {"id":n,"ok":false,"error":{"code":c,"message":m}},
//           or an event {"event":"connected"|"tools_list_changed"|"progress"|
//           "sampling"|"elicitation"|"roots"|"exit", ...}.
//
// The environment says what to connect to:
//
//   GW_SDK            the @modelcontextprotocol/sdk package directory (absolute)
//   GW_TRANSPORT      stdio or http
//   GW_COMMAND        stdio: a JSON array, the gateway's command line (spawned with this
//                     process's environment; its stderr is this process's)
//   GW_URL, GW_TOKEN  http: the /mcp endpoint and its bearer token (optional)
//   GW_CAPS           comma-separated client capabilities to declare, with their
//                     handlers: sampling, elicitation, roots
//   GW_SAMPLING_TEXT  the text the sampling handler answers
//   GW_ELICIT_CONTENT the JSON content the elicitation handler accepts with
//   GW_DEADLINE_MS    the process's whole life (default 60000)
//
// The process ends when stdin closes (it closes the client first, which
// ends a stdio gateway) or at its deadline, so no node process outlives
// the test that started it.
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import readline from "node:readline";

const env = process.env;
const deadlineMs = Number(env.GW_DEADLINE_MS || 60000);
const requestTimeoutMs = 30000;

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function errorOf(err) {
  return { code: err?.code ?? null, name: err?.name ?? null, message: String(err?.message ?? err) };
}

const sdk = (rel) => import(pathToFileURL(join(env.GW_SDK, "dist", "esm", rel)).href);
const [{ Client }, types] = await Promise.all([sdk("client/index.js"), sdk("types.js")]);

let client;
let exiting = false;
async function exit(code, reason) {
  if (exiting) return;
  exiting = true;
  emit({ event: "exit", reason });
  // Closing a stdio client ends the gateway's stdin (then SIGTERM, SIGKILL).
  await Promise.race([client?.close().catch(() => {}), new Promise((r) => setTimeout(r, 8000).unref())]);
  process.exit(code);
}
setTimeout(() => exit(3, `deadline of ${deadlineMs}ms`), deadlineMs);

const caps = new Set((env.GW_CAPS || "").split(",").filter(Boolean));
const capabilities = {};
if (caps.has("sampling")) capabilities.sampling = {};
if (caps.has("elicitation")) capabilities.elicitation = {};
if (caps.has("roots")) capabilities.roots = { listChanged: false };

client = new Client({ name: "mcpvisor-peers-ts", version: "1.0.0" }, { capabilities });

client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => emit({ event: "tools_list_changed" }));
if (caps.has("sampling")) {
  client.setRequestHandler(types.CreateMessageRequestSchema, async (req) => {
    emit({ event: "sampling", params: req.params });
    return { role: "assistant", model: "mcpvisor-peers-ts", stopReason: "endTurn",
      content: { type: "text", text: env.GW_SAMPLING_TEXT || "" } };
  });
}
if (caps.has("elicitation")) {
  client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    emit({ event: "elicitation", params: req.params });
    return { action: "accept", content: JSON.parse(env.GW_ELICIT_CONTENT || "{}") };
  });
}
if (caps.has("roots")) {
  client.setRequestHandler(types.ListRootsRequestSchema, async () => {
    emit({ event: "roots" });
    return { roots: [{ uri: "file:///peers-ts-root", name: "peers-ts-root" }] };
  });
}

async function transport() {
  switch (env.GW_TRANSPORT) {
    case "stdio": {
      const { StdioClientTransport } = await sdk("client/stdio.js");
      const [command, ...args] = JSON.parse(env.GW_COMMAND);
      return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
    }
    case "http": {
      const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
      const headers = env.GW_TOKEN ? { Authorization: `Bearer ${env.GW_TOKEN}` } : {};
      return new StreamableHTTPClientTransport(new URL(env.GW_URL), { requestInit: { headers } });
    }
    default:
      throw new Error(`GW_TRANSPORT must be stdio or http, got ${env.GW_TRANSPORT}`);
  }
}

try {
  await client.connect(await transport(), { timeout: requestTimeoutMs });
} catch (err) {
  emit({ event: "connect_failed", error: errorOf(err) });
  await exit(1, "connect failed");
}
emit({ event: "connected", server: client.getServerVersion(), capabilities: client.getServerCapabilities() });

const calls = new Map(); // command id -> AbortController of a call in flight

async function run(cmd) {
  switch (cmd.op) {
    case "list": {
      const tools = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: requestTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return { tools };
    }
    case "call": {
      const ac = new AbortController();
      calls.set(cmd.id, ac);
      const options = { signal: ac.signal, timeout: requestTimeoutMs };
      if (cmd.progress) {
        options.onprogress = (p) => emit({ event: "progress", id: cmd.id, ...p });
        options.resetTimeoutOnProgress = true;
      }
      try {
        return { result: await client.callTool({ name: cmd.name, arguments: cmd.args ?? {} }, undefined, options) };
      } finally {
        calls.delete(cmd.id);
      }
    }
    case "abort": {
      const ac = calls.get(cmd.target);
      if (!ac) throw new Error(`no call ${cmd.target} in flight`);
      ac.abort(new Error("aborted by the test"));
      return {};
    }
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (err) {
    emit({ event: "bad_command", line, error: errorOf(err) });
    return;
  }
  // Commands run concurrently: an abort must reach a call in flight.
  run(cmd).then(
    (answer) => emit({ id: cmd.id, ok: true, ...answer }),
    (err) => emit({ id: cmd.id, ok: false, error: errorOf(err) }),
  );
});
lines.on("close", () => exit(0, "stdin closed"));
