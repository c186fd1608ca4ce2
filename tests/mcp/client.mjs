// SPDX-License-Identifier: MIT
// Drives the real rpcd through the official MCP TypeScript SDK client over stdio: handshake,
// tool list, calls, progress, tool errors, unknown tools, cancellation, ping and shutdown.
// Usage: node client.mjs <rpcd> <config>. Prints one line per check and a summary; exits 1 on
// any failure.
import assert from 'node:assert/strict';
import path from 'node:path';
import process from 'node:process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const REQUEST_TIMEOUT_MS = 10000;
const CHECK_TIMEOUT_MS = 20000;
// Below run.sh's own limit, so that a hang is reported by name rather than just killed.
const WATCHDOG_MS = 100000;
// The portable form every host and model API takes, which rpcd's default config gives.
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const BUNDLED_TOOLS = ['echo', 'subtract', 'sum', 'progress', 'sleep'];

if (process.argv.length !== 4) {
    console.error('usage: node client.mjs <rpcd> <config>');
    process.exit(2);
}
const rpcd = path.resolve(process.argv[2]);
const config = path.resolve(process.argv[3]);

let passed = 0;
let failed = 0;

// The sanitizer settings of the test environment reach rpcd; the SDK passes only a small safe
// set of variables (PATH, HOME, ...) by default.
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

// Every message in both directions, to check what went over the wire. The SDK's Protocol keeps
// an onmessage set before connect() and calls it ahead of its own handling.
const received = [];
const sent = [];
transport.onmessage = (message) => received.push(message);
const transportSend = transport.send.bind(transport);
transport.send = (message, options) => {
    sent.push(message);
    return transportSend(message, options);
};
// The Client calls this with the version it settled on (HTTP transports need it in headers).
let negotiatedVersion;
transport.setProtocolVersion = (version) => {
    negotiatedVersion = version;
};

const client = new Client({ name: 'rpcd-mcp-sdk-test', version: '1.0.0' });
const clientErrors = [];
client.onerror = (error) => clientErrors.push(error);

// The child process, for its exit status. The transport keeps it in a private member; the SDK
// version is pinned, and the check says so when the member is not there.
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
    console.log(`${passed} passed, ${failed} failed`);
}

function describe(error) {
    if (error instanceof McpError) {
        return `${error.message} (McpError code ${error.code})`;
    }
    if (error instanceof assert.AssertionError) {
        // One line: the message without the multi-line diff Node adds, then the values compared
        // (assert.ok has only the falsy value to show).
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

// Runs one named check: body throws (or rejects) to fail. needsConnection checks are failed
// outright, not skipped, when the handshake did not succeed.
async function check(name, body, { needsConnection = true } = {}) {
    if (needsConnection && !connected) {
        failed++;
        console.log(`not ok - ${name}: not connected (the handshake failed)`);
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
    assert.ok(Array.isArray(result.content), `content is not an array: ${JSON.stringify(result)}`);
    assert.ok(result.content.length >= 1, `content is empty: ${JSON.stringify(result)}`);
    assert.equal(result.content[0].type, 'text',
        `content[0] is not text: ${JSON.stringify(result)}`);
    assert.equal(typeof result.content[0].text, 'string');
    return result.content[0].text;
}

function assertSuccess(result) {
    assert.ok(result.isError === undefined || result.isError === false,
        `isError is ${JSON.stringify(result.isError)}: ${JSON.stringify(result)}`);
}

async function echo(args) {
    const result = await client.callTool({ name: 'echo', arguments: args }, undefined, request);
    assertSuccess(result);
    assert.deepEqual(JSON.parse(textOf(result)), args);
    assert.deepEqual(result.structuredContent, args);
}

await check('connect: initialize and notifications/initialized', async () => {
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
    const server = client.getServerVersion();
    assert.equal(server?.name, 'rpcd', `serverInfo: ${JSON.stringify(server)}`);
    assert.ok(client.getServerCapabilities()?.tools,
        `no tools capability: ${JSON.stringify(client.getServerCapabilities())}`);
    assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(negotiatedVersion),
        `negotiated protocol version ${negotiatedVersion} is not one the SDK supports ` +
        `(${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    assert.ok(sent.some((m) => m.method === 'notifications/initialized'),
        'notifications/initialized was not sent');
}, { needsConnection: false });

await check('ping right after the handshake', async () => {
    assert.deepEqual(await client.ping(request), {});
});

const tools = new Map();
await check('tools/list: bundled methods listed as valid tools', async () => {
    const seenCursors = new Set();
    let cursor;
    let pages = 0;
    do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor }, request);
        assert.ok(Array.isArray(page.tools), `tools is not an array: ${JSON.stringify(page)}`);
        for (const tool of page.tools) {
            assert.ok(!tools.has(tool.name), `tool ${tool.name} listed twice`);
            tools.set(tool.name, tool);
        }
        cursor = page.nextCursor;
        if (cursor !== undefined) {
            assert.equal(typeof cursor, 'string',
                `nextCursor is not a string: ${JSON.stringify(cursor)}`);
            assert.ok(!seenCursors.has(cursor), `nextCursor ${cursor} repeats`);
            seenCursors.add(cursor);
        }
        assert.ok(++pages <= 1000, 'more than 1000 pages');
    } while (cursor !== undefined);
    for (const name of BUNDLED_TOOLS) {
        assert.ok(tools.has(name), `${name} is missing from ${JSON.stringify([...tools.keys()])}`);
    }
    for (const [name, tool] of tools) {
        assert.match(name, TOOL_NAME, `invalid tool name ${JSON.stringify(name)}`);
        assert.equal(typeof tool.description, 'string', `${name}: description is not a string`);
        assert.equal(typeof tool.inputSchema, 'object', `${name}: no inputSchema`);
        assert.equal(tool.inputSchema.type, 'object', `${name}: inputSchema.type is not "object"`);
    }
});

await check('tools/call echo: text and structuredContent', async () => {
    await echo({ hello: 'world', n: [1, 2] });
});

await check('tools/call subtract: text only for a non-object result', async () => {
    const result = await client.callTool(
        { name: 'subtract', arguments: { minuend: 42, subtrahend: 23 } }, undefined, request);
    assertSuccess(result);
    assert.equal(textOf(result), '19');
    assert.equal(result.structuredContent, undefined,
        `structuredContent for a number: ${JSON.stringify(result.structuredContent)}`);
});

// The SDK dispatches notifications a microtask later than responses: when the last reports and
// the response arrive in one read, it drops the handler first and reports the late ones to
// onerror as an unknown token (modelcontextprotocol/typescript-sdk bug #2580), whatever order
// they had on the wire. So the wire must hold all three before the response, and the reports
// that reach onprogress must be the first of them; those dropped are not counted as errors.
const droppedProgressTokens = new Set();

// Calls progress with args; returns the reports on the wire before the response and those
// onprogress received, as [progress, total] pairs.
async function progressCall(args) {
    const reports = [];
    const result = await client.callTool({ name: 'progress', arguments: args }, undefined,
        { ...request, onprogress: (report) => reports.push(report) });
    assertSuccess(result);
    assert.deepEqual(result.structuredContent, { steps: args.steps });
    const call = sent.findLast((m) => m.method === 'tools/call' && m.params?.name === 'progress');
    const token = call?.params?._meta?.progressToken;
    assert.ok(token !== undefined, 'the SDK sent no progressToken');
    const wire = [];
    for (const message of received) {
        if (message.id === call.id && message.method === undefined) {
            break;
        }
        if (message.method === 'notifications/progress' &&
            message.params?.progressToken === token) {
            wire.push([message.params.progress, message.params.total]);
        }
    }
    const expected = Array.from({ length: args.steps }, (_, i) => [i + 1, args.steps]);
    assert.deepEqual(wire, expected,
        `progress before the response on the wire: ${JSON.stringify(wire)}`);
    const delivered = reports.map((r) => [r.progress, r.total]);
    assert.deepEqual(delivered, wire.slice(0, delivered.length),
        `progress reports: ${JSON.stringify(reports)}`);
    // Let the SDK dispatch what it still holds, then see whether it dropped any.
    await sleep(50);
    if (delivered.length < wire.length) {
        droppedProgressTokens.add(token);
        console.log(`# the SDK delivered ${delivered.length} of ${wire.length} progress reports ` +
            'to onprogress (it dropped those read together with the response)');
    }
    return delivered;
}

await check('tools/call progress: notifications/progress before the result', async () => {
    await progressCall({ steps: 3 });
});

// With 200 ms between two steps, every report but the last comes in a read of its own.
await check('tools/call progress with delays: onprogress called while the call runs', async () => {
    const delivered = await progressCall({ steps: 3, delay_ms: 200 });
    assert.ok(delivered.length >= 2, `onprogress got ${JSON.stringify(delivered)}`);
});

await check('tools/call sleep without ms: a tool error, not a JSON-RPC error', async () => {
    const result = await client.callTool({ name: 'sleep', arguments: {} }, undefined, request);
    assert.equal(result.isError, true, `isError: ${JSON.stringify(result)}`);
    assert.notEqual(textOf(result).trim(), '', 'the error text is empty');
});

await check('tools/call of an unknown tool: -32602', async () => {
    await assert.rejects(
        client.callTool({ name: 'no.such.tool', arguments: {} }, undefined, request),
        (error) => {
            assert.ok(error instanceof McpError, `not an McpError: ${describe(error)}`);
            assert.equal(error.code, -32602, `code ${error.code}: ${error.message}`);
            return true;
        });
});

await check('cancellation: notifications/cancelled, no response, server still serves', async () => {
    const controller = new AbortController();
    const started = Date.now();
    // The outcome is taken at once, so that an early rejection is never left unhandled.
    const outcome = client.callTool({ name: 'sleep', arguments: { ms: 30000 } }, undefined,
        { signal: controller.signal, timeout: 60000 })
        .then((result) => ({ result }), (error) => ({ error }));
    const abort = setTimeout(() => controller.abort(), 300);
    const settled = await withTimeout(outcome, 5000, 'aborted call')
        .finally(() => clearTimeout(abort));
    const elapsed = Date.now() - started;
    assert.ok(settled.error, `the call resolved: ${JSON.stringify(settled.result)}`);
    assert.ok(elapsed < 5000, `rejected after ${elapsed} ms`);
    const sleepRequest = sent.findLast(
        (m) => m.method === 'tools/call' && m.params?.name === 'sleep');
    assert.ok(sleepRequest, 'the sleep request was not sent');
    const cancelled = sent.find((m) => m.method === 'notifications/cancelled' &&
        m.params?.requestId === sleepRequest.id);
    assert.ok(cancelled, 'notifications/cancelled was not sent');
    assert.deepEqual(await client.ping(request), {});
    await echo({ after: 'cancel' });
    // Give a late response time to show up: there must be none for the cancelled id.
    await sleep(300);
    const late = received.filter((m) => m.id === sleepRequest.id && m.method === undefined);
    assert.deepEqual(late, [], `response for the cancelled call: ${JSON.stringify(late)}`);
});

await check('ping after the calls', async () => {
    assert.deepEqual(await client.ping(request), {});
});

await check('close: rpcd exits 0 at end of input, no client errors', async () => {
    assert.ok(child, 'the transport does not expose its child process (SDK internals changed)');
    const started = Date.now();
    await client.close();
    // close() ends stdin, then sends SIGTERM after 2 s: rpcd must be gone before that.
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
