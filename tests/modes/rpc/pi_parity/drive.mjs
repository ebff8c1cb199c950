// Drives an RPC agent with pi's own RpcClient (pi 0.73.1) through one scenario and prints a JSON
// transcript: [{step, ok, data | error, events}], events being the frames that arrived during the
// step. Used by test_pi_side_by_side.py for pi itself and for pi-tui (through pi_tui_shim.mjs).
//
//   node drive.mjs <cliPath> <scenario> [--model provider/id]
//
// PI_REF is where pi's package is installed (the harness always sets it: .pi-ref/ from `make pi-ref`).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const piRef = process.env.PI_REF;
if (!piRef) throw new Error("PI_REF is not set: run through tests/modes/rpc/pi_parity/harness.py");
const clientModule = path.join(piRef, "node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js");
const { RpcClient } = await import(pathToFileURL(clientModule).href);

const [cliPath, scenario, ...args] = process.argv.slice(2);
const client = new RpcClient({ cliPath, cwd: process.cwd(), env: {}, args });
const transcript = [];
let events = [];
client.onEvent((event) => events.push(event));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(predicate, what, ms = 20000) {
  const deadline = Date.now() + ms;
  while (!events.some(predicate)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr: ${client.getStderr()}`);
    await sleep(10);
  }
}

async function step(name, action, settle = 150) {
  let entry;
  try {
    entry = { step: name, ok: true, data: (await action()) ?? null };
  } catch (error) {
    entry = { step: name, ok: false, error: String(error.message ?? error) };
  }
  await sleep(settle); // late frames of this step (pi writes some events after the response)
  entry.events = events;
  events = [];
  transcript.push(entry);
}

const isAgentEnd = (e) => e.type === "agent_end";
const scenarios = {
  async clone() {
    await step("prompt", async () => { await client.prompt("hello"); await until(isAgentEnd, "agent_end"); });
    const before = (await client.getState()).sessionFile;
    await step("clone", () => client.clone());
    await step("state", async () => {
      const state = await client.getState();
      return { messageCount: state.messageCount, newFile: state.sessionFile !== before, sessionFile: state.sessionFile, before };
    });
    await step("messages", () => client.getMessages());
    await step("fork_messages", () => client.getForkMessages());
  },
  async commands() {
    await step("get_commands", () => client.getCommands());
  },
  async extension_commands() {
    await step("get_commands", () => client.getCommands());
  },
  async set_model() {
    await step("state_before", async () => (await client.getState()).thinkingLevel);
    await step("set_model", () => client.setModel("fake", "fake-reasoner"));
    await step("state_after", async () => {
      const state = await client.getState();
      return { model: state.model.id, thinkingLevel: state.thinkingLevel, sessionFile: state.sessionFile };
    });
    await step("set_model_back", () => client.setModel("fake", "fake-model"));
    await step("state_back", async () => (await client.getState()).thinkingLevel);
    await step("set_model_again", () => client.setModel("fake", "fake-reasoner"));
    await step("state_again", async () => (await client.getState()).thinkingLevel);
    // A reply makes the session file exist (both write it once an assistant message arrives).
    await step("prompt", async () => { await client.prompt("ok?"); await until(isAgentEnd, "agent_end"); });
  },
  async abort() {
    await step("prompt", async () => {
      await client.prompt("tell me a long story");
      await until((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta", "text_delta");
    }, 0);
    await step("abort", async () => { await client.abort(); await until(isAgentEnd, "agent_end"); });
    await step("messages", () => client.getMessages());
    await step("last_text", () => client.getLastAssistantText());
  },
  async bash() {
    await step("bash", () => client.bash("echo hi"));
    await step("messages", () => client.getMessages());
  },
  async bash_abort() {
    // A command aborted while it runs, then one whose output is cut (saved to a file).
    let running;
    await step("bash", async () => {
      running = client.bash("echo start; touch started; sleep 30");
      const deadline = Date.now() + 20000;
      while (!fs.existsSync("started")) {
        if (Date.now() > deadline) throw new Error("the command did not start");
        await sleep(10);
      }
    }, 0);
    await step("abort_bash", async () => { await client.abortBash(); return await running; });
    await step("bash_long", () => client.bash("seq 1 3000"));
    await step("messages", () => client.getMessages());
  },
  async resume() {
    await step("messages", async () => (await client.getMessages()).length);
    await step("prompt", async () => { await client.prompt("Turn 6"); await until(isAgentEnd, "agent_end"); });
  },
  async tool_updates() {
    await step("prompt", async () => { await client.prompt("run it"); await until(isAgentEnd, "agent_end"); });
  },
  async steer_follow_up() {
    await step("prompt", async () => {
      await client.prompt("tell me a long story");
      await until((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta", "text_delta");
    }, 0);
    await step("steer", () => client.steer("make it shorter"), 0);
    await step("follow_up", () => client.followUp("then summarize it"), 0);
    await step("state_while_streaming", async () => {
      const state = await client.getState();
      return { messageCount: state.messageCount, pendingMessageCount: state.pendingMessageCount };
    }, 0);
    await step("wait", () => until(isAgentEnd, "agent_end", 60000));
    await step("state", async () => {
      const state = await client.getState();
      return { messageCount: state.messageCount, pendingMessageCount: state.pendingMessageCount };
    });
    await step("messages", () => client.getMessages());
  },
  async tool_abort() {
    await step("prompt", async () => {
      await client.prompt("run the slow one");
      await until((e) => e.type === "tool_execution_update" && e.partialResult.content.length > 0, "tool output");
    }, 0);
    await step("abort", async () => { await client.abort(); await until(isAgentEnd, "agent_end"); });
    await step("messages", () => client.getMessages());
  },
};

try {
  await client.start();
  await scenarios[scenario]();
} catch (error) {
  transcript.push({ step: "driver", ok: false, error: String(error.stack ?? error), events });
} finally {
  await client.stop();
}
process.stdout.write(JSON.stringify(transcript) + "\n");
