// SPDX-License-Identifier: MIT
// Drives the real rpcd through the Vercel AI SDK's MCP client (@ai-sdk/mcp) over stdio, as an
// AI SDK application does: with its server/discover probe (discover) or straight to initialize
// (initialize). Lists, calls (every content kind, and through tools() as a model would), reads
// resources, gets a prompt, completes, aborts a call, closes. record.sh keeps what the client
// sent and rpcd's exit status, which its API does not show.
// Usage: node ai_sdk.mjs <rpcd> <config> <discover|initialize>. Prints one line per check and a
// summary; exits 1 on any failure.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';

import {
    BUNDLED_TOOLS, KINDS, SEEDED, TIME_SCALE, TOOL_NAME, createRun, json, parseArgs, request,
    serverEnv, sleep, waitFor, withTimeout,
} from './scenario.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { rpcd, config, rest: [mode] } = parseArgs(
    'node ai_sdk.mjs <rpcd> <config> <discover|initialize>', [['discover', 'initialize']]);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rpcd-ai-sdk-'));
// What the client sent, as record.sh's tee wrote it down. tee hands a line to rpcd before it
// writes it to the file: a line rpcd has already answered may not be there yet (wait for it),
// and the last one may be there in part (left out until whole).
const sent = () => {
    const file = path.join(dir, 'input');
    if (!fs.existsSync(file)) {
        return [];
    }
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.pop();
    return lines.filter(Boolean).map((line) => JSON.parse(line));
};
const statusFile = path.join(dir, 'status');

const run = createRun(`AI SDK MCP client, ${mode}`);
const clientErrors = [];
let client;
// The aborted call's id: when the client does not tell rpcd, rpcd answers it (-32800) once
// close() ends its input, and the client reports that answer as one for an unknown id.
let abortedId;

await run.check(`connect (${mode})`, async () => {
    const transport = new StdioMCPTransport({
        command: 'bash',
        args: [path.join(here, 'record.sh'), dir, rpcd, '-c', config, '-q'],
        env: { ...serverEnv(), PATH: process.env.PATH },
        stderr: 'inherit',
    });
    // The SDK's stdio transport gives server/discover 1 s, then falls back to initialize, since
    // a legacy server may never answer it; rpcd answers every request, so the client may wait:
    // on a busy machine rpcd's start alone can take that second, and what is checked here is
    // that discovery is answered, not how soon.
    transport.waitsForProtocolVersionDiscovery = true;
    client = await createMCPClient({
        transport,
        clientName: 'rpcd-ai-sdk-test',
        protocolVersionDiscovery: mode === 'discover',
        onUncaughtError: (error) => clientErrors.push(error),
    });
    run.connected = true;
    assert.equal(client.serverInfo?.name, 'rpcd', json(client.serverInfo));
    const first = sent()[0]?.method;
    assert.equal(first, mode === 'discover' ? 'server/discover' : 'initialize');
    // After discovery the client speaks the stateless revision: its version in each request.
    await client.listTools({ options: request });
    await waitFor(() => sent().some((m) => m.method === 'tools/list'), 5000,
        'tools/list in what the client sent');
    const version = sent().findLast((m) => m.method === 'tools/list')
        ?.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
    assert.equal(version, mode === 'discover' ? '2026-07-28' : undefined,
        'the protocol version in tools/list (after server/discover the client speaks 2026-07-28)');
}, { needsConnection: false });

await run.check('listTools: bundled tools, valid names, notes_add annotations', async () => {
    const { tools } = await client.listTools({ options: request });
    const names = tools.map((tool) => tool.name);
    for (const name of [...BUNDLED_TOOLS, 'every_kind']) {
        assert.ok(names.includes(name), `${name} is missing from ${json(names)}`);
    }
    names.forEach((name) => assert.match(name, TOOL_NAME));
    assert.ok(!names.includes('notes_index'), 'notes_index is listed as a tool');
    const add = tools.find((tool) => tool.name === 'notes_add');
    assert.equal(add.annotations?.destructiveHint, true, json(add));
});

await run.check('callTool every_kind: every content kind', async () => {
    const result = await client.callTool({ name: 'every_kind', arguments: {}, options: request });
    assert.deepEqual(result.content.map((block) => block.type), KINDS);
    assert.equal(result.content[2].data, 'UklGRg==');
    assert.deepEqual(result.content[4].resource, { uri: 'file:///tmp/b.txt', text: 'b' });
    assert.equal(result.isError, true);
});

// How an AI SDK application hands MCP tools to a model: tools() makes each one executable.
await run.check('tools(): notes_add executes as a model tool would call it', async () => {
    const tools = await client.tools();
    assert.equal(typeof tools.notes_add?.execute, 'function', json(Object.keys(tools)));
    const result = await tools.notes_add.execute({ title: 'ai', text: 'from the AI SDK' },
        { toolCallId: 'call-1', messages: [] });
    assert.deepEqual(result.content[1], { type: 'resource_link', uri: 'notes://note/ai',
        name: 'ai', mimeType: 'text/plain' });
});

await run.check('callTool sleep without ms: isError', async () => {
    const result = await client.callTool({ name: 'sleep', arguments: {}, options: request });
    assert.equal(result.isError, true, json(result));
});

await run.check('listResources and listResourceTemplates', async () => {
    const { resources } = await client.listResources({ options: request });
    assert.ok(resources.some((r) => r.uri === 'notes://index'), json(resources));
    const { resourceTemplates } = await client.listResourceTemplates({ options: request });
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'notes://note/{title}'),
        json(resourceTemplates));
});

await run.check('readResource: the index and the note added', async () => {
    const index = await client.readResource({ uri: 'notes://index', options: request });
    assert.equal(index.contents[0].text, 'welcome\nshopping\nai\n');
    const note = await client.readResource({ uri: 'notes://note/ai', options: request });
    assert.equal(note.contents[0].text, 'from the AI SDK');
});

await run.check('listPrompts and getPrompt summarize', async () => {
    const { prompts } = await client.listPrompts({ options: request });
    assert.ok(prompts.some((p) => p.name === 'summarize'), json(prompts));
    const got = await client.getPrompt({ name: 'summarize', arguments: { title: 'shopping' },
        options: request });
    assert.equal(got.messages[1].content.resource.text, SEEDED.shopping);
});

await run.check('complete: titles for the prompt argument', async () => {
    const result = await client.complete({ ref: { type: 'ref/prompt', name: 'summarize' },
        argument: { name: 'title', value: 'a' }, options: request });
    assert.deepEqual(result.completion.values, ['ai']);
});

// The client aborts locally; whether it tells the server is checked on the wire.
await run.check('abort a call: rejects at once, the server still serves', async () => {
    const controller = new AbortController();
    const outcome = client.callTool({ name: 'sleep', arguments: { ms: 30000 },
        options: { signal: controller.signal, timeout: 60000 } })
        .then((result) => ({ result }), (error) => ({ error }));
    setTimeout(() => controller.abort(), 300);
    const settled = await withTimeout(outcome, 5000, 'aborted call');
    assert.ok(settled.error, `the call resolved: ${json(settled.result)}`);
    const echo = await client.callTool({ name: 'echo', arguments: { after: 'abort' },
        options: request });
    assert.deepEqual(echo.structuredContent, { after: 'abort' });
    const call = sent().findLast((m) => m.method === 'tools/call' && m.params?.name === 'sleep');
    const told = sent().some((m) => m.method === 'notifications/cancelled' &&
        m.params?.requestId === call.id);
    console.log(`# the client ${told ? 'sent' : 'did not send'} notifications/cancelled`);
    abortedId = call.id;
});

await run.check('close: rpcd exits 0 within 2 s, no client errors', async () => {
    const started = Date.now();
    await client.close();
    await waitFor(() => fs.existsSync(statusFile) &&
        fs.readFileSync(statusFile, 'utf8').endsWith('\n'), 3000, 'rpcd exit');
    assert.ok(Date.now() - started < 2000 * TIME_SCALE, `rpcd took ${Date.now() - started} ms`);
    assert.equal(Number(fs.readFileSync(statusFile, 'utf8')), 0, 'rpcd exit status');
    await sleep(50);
    const late = new RegExp(`unknown message ID: .*"id":${json(abortedId)}[,}]`);
    const errors = clientErrors.map(String).filter((text) => !late.test(text));
    if (errors.length < clientErrors.length) {
        console.log('# the client reported the answer to the call it aborted as unknown');
    }
    assert.deepEqual(errors, [], 'onUncaughtError was called');
});

fs.rmSync(dir, { recursive: true, force: true });
run.finish();
