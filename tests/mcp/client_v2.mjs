// SPDX-License-Identifier: MIT
// Drives the real rpcd through the official MCP TypeScript client v2 (@modelcontextprotocol/client)
// over stdio, in the stateless revision: pinned to 2026-07-28, or in 'auto' mode (a
// server/discover probe, then that revision). Discovery, tool list, calls, progress, tool
// errors, unknown tools, cancellation, a subscriptions/listen stream, and shutdown.
// Usage: node client_v2.mjs <rpcd> <config> <pin|auto>. Prints one line per check and a summary;
// exits 1 on any failure.
import assert from 'node:assert/strict';
import path from 'node:path';
import process from 'node:process';

import { Client, ProtocolError, SdkError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const REVISION = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const REQUEST_TIMEOUT_MS = 10000;
const CHECK_TIMEOUT_MS = 20000;
const WATCHDOG_MS = 100000;
const BUNDLED_TOOLS = ['echo', 'subtract', 'sum', 'progress', 'sleep'];

if (process.argv.length !== 5 || !['pin', 'auto'].includes(process.argv[4])) {
    console.error('usage: node client_v2.mjs <rpcd> <config> <pin|auto>');
    process.exit(2);
}
const rpcd = path.resolve(process.argv[2]);
const config = path.resolve(process.argv[3]);
const mode = process.argv[4];

let passed = 0;
let failed = 0;

const env = {};
for (const [key, value] of Object.entries(process.env)) {
    if (/^(ASAN|UBSAN|TSAN|LSAN|MSAN)_OPTIONS$/.test(key) && value !== undefined) {
        env[key] = value;
    }
}

const transport = new StdioClientTransport({
    command: rpcd,
    args: ['-c', config, '-q'],
    env,
    stderr: 'inherit',
});

// Every message in both directions on the session's process (in 'auto' mode the probe runs on
// a sibling process of its own). The client chains an onmessage set before connect().
const received = [];
const sent = [];
transport.onmessage = (message) => received.push(message);
const transportSend = transport.send.bind(transport);
transport.send = (message, options) => {
    sent.push(message);
    return transportSend(message, options);
};

const client = new Client({ name: 'rpcd-mcp-sdk-v2-test', version: '1.0.0' }, {
    versionNegotiation: { mode: mode === 'pin' ? { pin: REVISION } : 'auto' },
});
const clientErrors = [];
client.onerror = (error) => clientErrors.push(error);

let child;
let childExit;
let childExited;

function killChild() {
    const pid = child?.pid ?? transport.pid;
    if (pid && childExit === undefined) {
        try {
            process.kill(pid, 'SIGKILL');
        } catch {
            // Already gone.
        }
    }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
        console.log(`not ok - interrupted by ${signal}`);
        killChild();
        process.exit(1);
    });
}
process.on('exit', killChild);
process.on('unhandledRejection', (error) => {
    console.log(`not ok - unhandled rejection: ${describe(error)}`);
    failed++;
});

const watchdog = setTimeout(() => {
    console.log(`not ok - whole run: still going after ${WATCHDOG_MS} ms`);
    failed++;
    summary();
    killChild();
    process.exit(1);
}, WATCHDOG_MS);

function summary() {
    console.log(`${passed} passed, ${failed} failed (client v2, ${mode})`);
}

function describe(error) {
    if (error instanceof ProtocolError || error instanceof SdkError) {
        return `${error.message} (${error.constructor.name} code ${error.code})`;
    }
    if (error instanceof assert.AssertionError) {
        const [first] = error.message.split('\n');
        return error.operator === '=='
            ? first
            : `${first} (actual ${json(error.actual)}, expected ${json(error.expected)})`;
    }
    return error instanceof Error ? error.message : String(error);
}

function json(value) {
    try {
        return JSON.stringify(value);
    } catch {
        return String(value);
    }
}

function withTimeout(promise, ms, what) {
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

let connected = false;

async function check(name, body, { needsConnection = true } = {}) {
    if (needsConnection && !connected) {
        failed++;
        console.log(`not ok - ${name}: not connected (the connect failed)`);
        return;
    }
    try {
        await withTimeout(Promise.resolve().then(body), CHECK_TIMEOUT_MS, name);
        passed++;
        console.log(`ok - ${name}`);
    } catch (error) {
        failed++;
        console.log(`not ok - ${name}: ${describe(error)}`);
    }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const request = { timeout: REQUEST_TIMEOUT_MS };

function textOf(result) {
    assert.ok(Array.isArray(result.content), `content is not an array: ${json(result)}`);
    assert.equal(result.content[0]?.type, 'text', `content[0] is not text: ${json(result)}`);
    return result.content[0].text;
}

// The response on the wire to the last request sent for method.
function lastResponse(method) {
    const call = sent.findLast((m) => m.method === method && m.id !== undefined);
    assert.ok(call, `no ${method} request was sent`);
    assert.equal(call.params?._meta?.[META_VERSION], REVISION,
        `${method} did not carry the revision in _meta: ${json(call.params?._meta)}`);
    const response = received.find((m) => m.id === call.id && m.method === undefined);
    assert.ok(response, `no response to ${method} ${call.id}`);
    return response;
}

async function echo(args) {
    const result = await client.callTool({ name: 'echo', arguments: args }, request);
    assert.ok(!result.isError, `isError: ${json(result)}`);
    assert.deepEqual(JSON.parse(textOf(result)), args);
    assert.deepEqual(result.structuredContent, args);
}

await check(`connect (${mode === 'pin' ? `pinned to ${REVISION}` : 'auto'}): the stateless revision`,
    async () => {
        await client.connect(transport, request);
        connected = true;
        child = transport._process;
        if (child) {
            childExited = new Promise((resolve) => {
                child.once('exit', (code, signal) => {
                    childExit = { code, signal, at: Date.now() };
                    resolve();
                });
            });
        }
        assert.equal(client.getProtocolEra(), 'modern');
        assert.equal(client.getNegotiatedProtocolVersion(), REVISION);
        assert.equal(client.getServerVersion()?.name, 'rpcd',
            `serverInfo: ${json(client.getServerVersion())}`);
        const discovered = client.getDiscoverResult();
        assert.ok(discovered?.supportedVersions?.includes(REVISION), json(discovered));
        assert.ok(discovered.supportedVersions.includes('2025-11-25'), json(discovered));
        assert.equal(client.getServerCapabilities()?.tools?.listChanged, true,
            `capabilities: ${json(client.getServerCapabilities())}`);
        assert.ok(!sent.some((m) => m.method === 'initialize'), 'initialize was sent');
    }, { needsConnection: false });

const tools = new Map();
await check('tools/list: bundled tools, resultType, ttlMs and cacheScope', async () => {
    const listed = await client.listTools(undefined, request);
    for (const tool of listed.tools) {
        tools.set(tool.name, tool);
    }
    for (const name of BUNDLED_TOOLS) {
        assert.ok(tools.has(name), `${name} is missing from ${json([...tools.keys()])}`);
    }
    const { result } = lastResponse('tools/list');
    assert.equal(result.resultType, 'complete');
    assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `ttlMs: ${json(result.ttlMs)}`);
    assert.ok(['public', 'private'].includes(result.cacheScope), `cacheScope: ${result.cacheScope}`);
    assert.equal(result._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'rpcd');
});

await check('tools/call echo: text and structuredContent, resultType on the wire', async () => {
    await echo({ hello: 'world', n: [1, 2] });
    assert.equal(lastResponse('tools/call').result.resultType, 'complete');
});

await check('tools/call subtract: text only for a number', async () => {
    const result = await client.callTool(
        { name: 'subtract', arguments: { minuend: 42, subtrahend: 23 } }, request);
    assert.ok(!result.isError, `isError: ${json(result)}`);
    assert.equal(textOf(result), '19');
});

// As the v1 client does (README.md), the client drops the progress reports it reads together
// with the response (modelcontextprotocol/typescript-sdk bug #2580) and tells onerror of them:
// the wire must hold all three before the response, and those dropped are no client errors.
const droppedProgressTokens = new Set();

await check('tools/call progress: onprogress follows the call', async () => {
    const reports = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 3, delay_ms: 100 } },
        { ...request, onprogress: (report) => reports.push([report.progress, report.total]) });
    assert.deepEqual(result.structuredContent, { steps: 3 });
    const call = sent.findLast((m) => m.method === 'tools/call' && m.params?.name === 'progress');
    const token = call?.params?._meta?.progressToken;
    assert.ok(token !== undefined, 'the client sent no progressToken');
    const wire = [];
    for (const message of received) {
        if (message.id === call.id && message.method === undefined) {
            break;
        }
        if (message.method === 'notifications/progress' && message.params?.progressToken === token) {
            wire.push([message.params.progress, message.params.total]);
        }
    }
    assert.deepEqual(wire, [[1, 3], [2, 3], [3, 3]], `progress on the wire: ${json(wire)}`);
    await sleep(50);
    assert.ok(reports.length >= 2, `onprogress got ${json(reports)}`);
    assert.deepEqual(reports, wire.slice(0, reports.length));
    if (reports.length < wire.length) {
        droppedProgressTokens.add(token);
        console.log(`# the client delivered ${reports.length} of ${wire.length} progress reports ` +
            'to onprogress (it dropped those read together with the response)');
    }
});

await check('tools/call sleep without ms: a tool error, not a JSON-RPC error', async () => {
    const result = await client.callTool({ name: 'sleep', arguments: {} }, request);
    assert.equal(result.isError, true, `isError: ${json(result)}`);
    assert.notEqual(textOf(result).trim(), '');
});

await check('tools/call of an unknown tool: -32602', async () => {
    await assert.rejects(client.callTool({ name: 'no.such.tool', arguments: {} }, request),
        (error) => {
            assert.equal(error.code, -32602, describe(error));
            return true;
        });
});

await check('cancellation: notifications/cancelled, no response, server still serves', async () => {
    const controller = new AbortController();
    const outcome = client.callTool({ name: 'sleep', arguments: { ms: 30000 } },
        { signal: controller.signal, timeout: 60000 })
        .then((result) => ({ result }), (error) => ({ error }));
    const abort = setTimeout(() => controller.abort(), 300);
    const settled = await withTimeout(outcome, 5000, 'aborted call')
        .finally(() => clearTimeout(abort));
    assert.ok(settled.error, `the call resolved: ${json(settled.result)}`);
    const sleepRequest = sent.findLast((m) => m.method === 'tools/call' && m.params?.name === 'sleep');
    assert.ok(sent.some((m) => m.method === 'notifications/cancelled' &&
        m.params?.requestId === sleepRequest.id), 'notifications/cancelled was not sent');
    await echo({ after: 'cancel' });
    await sleep(300);
    const late = received.filter((m) => m.id === sleepRequest.id && m.method === undefined);
    assert.deepEqual(late, [], `response for the cancelled call: ${json(late)}`);
});

await check('subscriptions/listen: acknowledged with toolsListChanged, closed by the client',
    async () => {
        const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true },
            request);
        assert.deepEqual(subscription.honoredFilter, { toolsListChanged: true });
        const listen = sent.findLast((m) => m.method === 'subscriptions/listen');
        await subscription.close();
        assert.ok(sent.some((m) => m.method === 'notifications/cancelled' &&
            m.params?.requestId === listen.id), 'notifications/cancelled was not sent');
        await echo({ after: 'listen' });
        const answers = received.filter((m) => m.id === listen.id && m.method === undefined);
        assert.deepEqual(answers, [], `response for the cancelled stream: ${json(answers)}`);
    });

await check('close: rpcd exits 0 at end of input, no client errors', async () => {
    assert.ok(child, 'the transport does not expose its child process (SDK internals changed)');
    const started = Date.now();
    await client.close();
    await withTimeout(childExited, 5000, 'rpcd exit');
    const took = childExit.at - started;
    assert.ok(took < 1900, `rpcd took ${took} ms to exit after end of input (signalled?)`);
    assert.equal(childExit.signal, null, `rpcd killed by ${childExit.signal}`);
    assert.equal(childExit.code, 0, `rpcd exit status ${childExit.code}`);
    const errors = clientErrors.map(describe).filter((text) => {
        const late = /^Received a progress notification for an unknown token: (.*)$/.exec(text);
        return !(late && droppedProgressTokens.has(JSON.parse(late[1]).params?.progressToken));
    });
    assert.deepEqual(errors, [], 'client.onerror was called');
});

clearTimeout(watchdog);
if (!connected) {
    await transport.close().catch(() => {});
}
summary();
process.exit(failed === 0 ? 0 : 1);
