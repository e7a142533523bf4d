// The ai package's own chat transport (what useChat sends and reads) and
// readUIMessageStream against toolwire.ui.vercel: a run that suspends with an
// approval request, a reload (the messages read back from the server), the
// approval sent back as addToolApprovalResponse leaves it, the resumed run.
// Prints what the client reports, as JSON.
import { load } from "./_load.mjs";

const { DefaultChatTransport, readUIMessageStream } = await load("ai");
const [api, chatId] = process.argv.slice(2);
const transport = new DefaultChatTransport({ api });

async function send(messages) {
  const stream = await transport.sendMessages({
    chatId, messages, trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  const [forChunks, forMessage] = stream.tee();
  const chunks = [];
  const reading = (async () => {
    for await (const chunk of forChunks) chunks.push(chunk);
  })();
  const last = messages.at(-1);
  let message = null;
  for await (const snapshot of readUIMessageStream({
    message: last?.role === "assistant" ? last : undefined, stream: forMessage,
  })) {
    message = snapshot;
  }
  await reading;
  return { chunks, message };
}

const user = { id: "u1", role: "user", parts: [{ type: "text", text: "weather, then pay ann" }] };
const first = await send([user]);

// A page reloaded: its messages come back from the journal.
const reloaded = await (await fetch(`${api}${chatId}`)).json();

// What addToolApprovalResponse({ id, approved: true }) does to the part.
const answered = structuredClone(reloaded);
for (const part of answered.at(-1).parts) {
  if (part.state === "approval-requested") {
    part.state = "approval-responded";
    part.approval = { ...part.approval, approved: true };
  }
}
const resumed = await send(answered);
console.log(JSON.stringify({ first, reloaded, resumed }));
