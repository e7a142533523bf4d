// @ag-ui/client's HttpAgent against toolwire.ui.agui: a run that suspends,
// a reload (a new agent on the same thread), the approval sent back.
// Prints what the client reports, as JSON, for the Python side to compare
// with the journal.
import { load } from "./_load.mjs";

const { HttpAgent } = await load("@ag-ui/client");
const [url, threadId] = process.argv.slice(2);

async function run(agent, params) {
  const events = [];
  const result = await agent.runAgent(params, { onEvent: ({ event }) => { events.push(event); } });
  return { events, result: result.result ?? null, pending: agent.pendingInterrupts ?? [],
           messages: agent.messages };
}

const first = new HttpAgent({ url, threadId });
first.addMessage({ id: "u1", role: "user", content: "weather, then pay ann" });
const suspended = await run(first, { runId: "r1" });

const reloaded = new HttpAgent({ url, threadId });  // a page reloaded: nothing in memory
const again = await run(reloaded, { runId: "r2" });

const resume = again.pending.map((interrupt) => ({
  interruptId: interrupt.id, status: "resolved", payload: { approved: true },
}));
const resumed = await run(reloaded, { runId: "r3", resume });
console.log(JSON.stringify({ suspended, again, resumed }));
