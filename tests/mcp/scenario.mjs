// SPDX-License-Identifier: MIT
// What every MCP client test here shares: the run harness (named checks, a summary, a watchdog),
// the wire tap on a stdio transport, rpcd's exit, and the scenario itself (lists, calls of every
// content kind, resources, prompts, completion, subscriptions, logging, progress, cancellation,
// close) written once against a small adapter each client file gives for its own API.
import assert from 'node:assert/strict';
import path from 'node:path';
import process from 'node:process';

// The factor of tests/test_time.h, for the rpcd under test: 3 in an AddressSanitizer build, 5 in
// a ThreadSanitizer build (RPCD_SANITIZE names the build's), times RPCD_TEST_TIME_SCALE when set.
// Every bound on a wait here is scaled by it: withTimeout, waitFor, the checks' and requests'.
function timeScale() {
    const sanitize = process.env.RPCD_SANITIZE ?? '';
    const build = sanitize.includes('thread') ? 5 : sanitize.includes('address') ? 3 : 1;
    const factor = Number(process.env.RPCD_TEST_TIME_SCALE);
    return Number.isInteger(factor) && factor >= 1 && factor <= 1000 ? build * factor : build;
}
export const TIME_SCALE = timeScale();

const CHECK_TIMEOUT_MS = 20000; // scaled by withTimeout
// Below run.sh's own limit, so that a hang is reported by name rather than just killed.
const WATCHDOG_MS = 100000;
export const REQUEST_TIMEOUT_MS = 10000 * TIME_SCALE;
export const request = { timeout: REQUEST_TIMEOUT_MS };
// The portable form every host and model API takes, which rpcd's default config gives.
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const BUNDLED_TOOLS = ['echo', 'subtract', 'sum', 'progress', 'sleep', 'notes_add'];
// What the notes plugin holds from its start (plugins/notes/notes.c).
export const SEEDED = { welcome: "Notes live in rpcd's memory until it exits.",
    shopping: 'milk, eggs, bread' };
export const KINDS = ['text', 'image', 'audio', 'resource_link', 'resource', 'resource'];

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function json(value) {
    try {
        return JSON.stringify(value);
    } catch {
        return String(value);
    }
}

export function describe(error) {
    if (error instanceof assert.AssertionError) {
        // One line: the message without the multi-line diff Node adds, then the values compared
        // (assert.ok has only the falsy value to show).
        const [first] = error.message.split('\n');
        return error.operator === '=='
            ? first
            : `${first} (actual ${json(error.actual)}, expected ${json(error.expected)})`;
    }
    if (error instanceof Error && typeof error.code === 'number') {
        return `${error.message} (${error.constructor.name} code ${error.code})`;
    }
    return error instanceof Error ? error.message : String(error);
}

// Rejects naming what when promise has not settled after ms (scaled by TIME_SCALE).
export function withTimeout(promise, unscaled, what) {
    const ms = unscaled * TIME_SCALE;
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// Resolves once predicate() holds, polling; rejects naming what after ms (scaled by TIME_SCALE).
export async function waitFor(predicate, unscaled, what) {
    const ms = unscaled * TIME_SCALE;
    const end = Date.now() + ms;
    while (!predicate()) {
        if (Date.now() > end) {
            throw new Error(`${what}: not seen within ${ms} ms`);
        }
        await sleep(10);
    }
}

// The command line of a client test: node FILE <rpcd> <config> [extra...]. Exits 2 otherwise.
export function parseArgs(usage, extra = []) {
    const [rpcd, config, ...rest] = process.argv.slice(2);
    if (rpcd === undefined || config === undefined || rest.length !== extra.length ||
        rest.some((value, i) => !extra[i].includes(value))) {
        console.error(`usage: ${usage}`);
        process.exit(2);
    }
    return { rpcd: path.resolve(rpcd), config: path.resolve(config), rest };
}

// The sanitizer settings of the test environment reach rpcd; the SDKs pass only a small safe
// set of variables (PATH, HOME, ...) by default.
export function serverEnv() {
    const env = {};
    for (const [key, value] of Object.entries(process.env)) {
        if (/^(ASAN|UBSAN|TSAN|LSAN|MSAN)_OPTIONS$/.test(key) && value !== undefined) {
            env[key] = value;
        }
    }
    return env;
}

/*
 * One run: counts checks, prints "ok - NAME" or "not ok - NAME: reason" for each and a summary,
 * and fails the whole run after WATCHDOG_MS. killChild is called on every way out.
 */
export function createRun(label, killChild = () => {}) {
    const run = { passed: 0, failed: 0, connected: false, killChild };
    run.summary = () =>
        console.log(`${run.passed} passed, ${run.failed} failed${label ? ` (${label})` : ''}`);
    for (const signal of ['SIGINT', 'SIGTERM']) {
        process.on(signal, () => {
            console.log(`not ok - interrupted by ${signal}`);
            run.killChild();
            process.exit(1);
        });
    }
    process.on('exit', () => run.killChild());
    process.on('unhandledRejection', (error) => {
        console.log(`not ok - unhandled rejection: ${describe(error)}`);
        run.failed++;
    });
    const watchdog = setTimeout(() => {
        console.log(`not ok - whole run: still going after ${WATCHDOG_MS} ms`);
        run.failed++;
        run.summary();
        run.killChild();
        process.exit(1);
    }, WATCHDOG_MS);
    // Runs one named check: body throws (or rejects) to fail. needsConnection checks are failed
    // outright, not skipped, when the connection did not come up.
    run.check = async (name, body, { needsConnection = true } = {}) => {
        if (needsConnection && !run.connected) {
            run.failed++;
            console.log(`not ok - ${name}: not connected`);
            return;
        }
        try {
            await withTimeout(Promise.resolve().then(body), CHECK_TIMEOUT_MS, name);
            run.passed++;
            console.log(`ok - ${name}`);
        } catch (error) {
            run.failed++;
            console.log(`not ok - ${name}: ${describe(error)}`);
        }
    };
    run.finish = () => {
        clearTimeout(watchdog);
        run.summary();
        process.exit(run.failed === 0 ? 0 : 1);
    };
    return run;
}

/*
 * Every message in both directions on a stdio transport of either SDK, to check what went over
 * the wire: the SDKs' Protocol keeps an onmessage set before connect() and calls it ahead of its
 * own handling.
 */
export function tapTransport(transport) {
    const wire = { sent: [], received: [] };
    transport.onmessage = (message) => wire.received.push(message);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
        wire.sent.push(message);
        return send(message, options);
    };
    return wire;
}

/*
 * rpcd's process, for its exit status. The transports keep it in a private member; the SDK
 * versions are pinned, and the close check says so when the member is not there.
 */
export function trackChild(transport) {
    const tracked = { child: transport._process, exit: undefined, exited: undefined };
    if (tracked.child) {
        tracked.exited = new Promise((resolve) => {
            tracked.child.once('exit', (code, signal) => {
                tracked.exit = { code, signal, at: Date.now() };
                resolve();
            });
        });
    }
    tracked.kill = () => {
        const pid = tracked.child?.pid ?? transport.pid;
        if (pid && tracked.exit === undefined) {
            try {
                process.kill(pid, 'SIGKILL');
            } catch {
                // Already gone.
            }
        }
    };
    return tracked;
}

function textOf(result) {
    assert.ok(Array.isArray(result.content), `content is not an array: ${json(result)}`);
    assert.ok(result.content.length >= 1, `content is empty: ${json(result)}`);
    assert.equal(result.content[0].type, 'text', `content[0] is not text: ${json(result)}`);
    assert.equal(typeof result.content[0].text, 'string');
    return result.content[0].text;
}

function assertSuccess(result) {
    assert.ok(result.isError === undefined || result.isError === false,
        `isError is ${json(result.isError)}: ${json(result)}`);
}

async function rejectsWith(promise, code) {
    await assert.rejects(promise, (error) => {
        assert.equal(error.code, code, describe(error));
        return true;
    });
}

/*
 * The scenario, shared by every client that has the API for it. mcp is the client file's
 * adapter:
 *   era            'legacy' (initialize handshake) or 'modern' (2026-07-28)
 *   callTool(params, options), listTools(params, options), listResources(options),
 *   listResourceTemplates(options), listPrompts(options), readResource(params, options),
 *   getPrompt(params, options), complete(params, options), ping(options),
 *   setLoggingLevel(level, options), subscribeResource(params, options),
 *   unsubscribeResource(params, options), listen(filter, options) (modern),
 *   onNotification(method, handler), capabilities(), close()
 *   wire           tapTransport's result; tracked: trackChild's result
 *   clientErrors   what the client reported to onerror
 */
export async function runScenario(run, mcp) {
    const { check, } = run;
    const { wire } = mcp;
    const notifications = { 'notifications/message': [], 'notifications/resources/updated': [] };
    for (const method of Object.keys(notifications)) {
        mcp.onNotification(method, (notification) => notifications[method].push(notification));
    }
    const call = (name, args, options = {}) =>
        mcp.callTool({ name, arguments: args }, { ...request, ...options });

    async function echo(args) {
        const result = await call('echo', args);
        assertSuccess(result);
        assert.deepEqual(JSON.parse(textOf(result)), args);
        assert.deepEqual(result.structuredContent, args);
    }

    await check('capabilities: tools, resources, prompts, completions' +
        (mcp.era === 'legacy' ? ', logging' : ''), async () => {
        const capabilities = mcp.capabilities();
        for (const kind of ['tools', 'resources', 'prompts', 'completions']
            .concat(mcp.era === 'legacy' ? ['logging'] : [])) {
            assert.ok(capabilities?.[kind], `no ${kind} capability: ${json(capabilities)}`);
        }
        if (mcp.era === 'legacy') {
            assert.equal(capabilities.resources.subscribe, true,
                `resources.subscribe: ${json(capabilities.resources)}`);
        }
    });

    const tools = new Map();
    await check('tools/list: bundled and fixture tools, valid names, notes_add annotations',
        async () => {
            const seenCursors = new Set();
            let cursor;
            let pages = 0;
            do {
                const page = await mcp.listTools(cursor === undefined ? undefined : { cursor },
                    request);
                assert.ok(Array.isArray(page.tools), `tools is not an array: ${json(page)}`);
                for (const tool of page.tools) {
                    assert.ok(!tools.has(tool.name), `tool ${tool.name} listed twice`);
                    tools.set(tool.name, tool);
                }
                cursor = page.nextCursor;
                if (cursor !== undefined) {
                    assert.ok(!seenCursors.has(cursor), `nextCursor ${cursor} repeats`);
                    seenCursors.add(cursor);
                }
                assert.ok(++pages <= 1000, 'more than 1000 pages');
            } while (cursor !== undefined);
            for (const name of [...BUNDLED_TOOLS, 'every_kind']) {
                assert.ok(tools.has(name), `${name} is missing from ${json([...tools.keys()])}`);
            }
            for (const [name, tool] of tools) {
                assert.match(name, TOOL_NAME, `invalid tool name ${json(name)}`);
                assert.equal(tool.inputSchema?.type, 'object', `${name}: inputSchema`);
            }
            for (const name of BUNDLED_TOOLS) {
                assert.equal(typeof tools.get(name).description, 'string', `${name}: description`);
            }
            // The resources, prompt and completions of notes are no tools.
            for (const name of ['notes_index', 'notes_read', 'notes_summarize',
                'notes_complete_prompt', 'notes_complete_template']) {
                assert.ok(!tools.has(name), `${name} is listed as a tool`);
            }
            const add = tools.get('notes_add');
            assert.equal(add.title, 'Add a note');
            assert.deepEqual(add.annotations, { readOnlyHint: false, destructiveHint: true,
                idempotentHint: true, openWorldHint: false });
        });

    await check('tools/call echo: text and structuredContent', async () => {
        await echo({ hello: 'world', n: [1, 2] });
    });

    await check('tools/call subtract: text only for a number', async () => {
        const result = await call('subtract', { minuend: 42, subtrahend: 23 });
        assertSuccess(result);
        assert.equal(textOf(result), '19');
        assert.equal(result.structuredContent, undefined,
            `structuredContent for a number: ${json(result.structuredContent)}`);
    });

    await check('tools/call every_kind: text, image, audio, resource_link, embedded resources',
        async () => {
            const result = await call('every_kind', {});
            assert.deepEqual(result.content.map((block) => block.type), KINDS);
            const [text, image, audio, link, embedded, blob] = result.content;
            assert.equal(text.text, 'a picture');
            assert.deepEqual(text.annotations, { audience: ['user'], priority: 0.5 });
            assert.deepEqual([image.data, image.mimeType], ['iVBORw0KGgo=', 'image/png']);
            assert.deepEqual([audio.data, audio.mimeType], ['UklGRg==', 'audio/wav']);
            assert.deepEqual([link.uri, link.name], ['file:///tmp/a.txt', 'a.txt']);
            assert.deepEqual(embedded.resource, { uri: 'file:///tmp/b.txt', text: 'b' });
            assert.deepEqual(blob.resource, { uri: 'file:///tmp/c.bin', blob: 'AAE=' });
            assert.equal(result.isError, true);
        });

    await check('tools/call sleep without ms: a tool error, not a JSON-RPC error', async () => {
        const result = await call('sleep', {});
        assert.equal(result.isError, true, `isError: ${json(result)}`);
        assert.notEqual(textOf(result).trim(), '', 'the error text is empty');
    });

    await check('tools/call of an unknown tool: -32602', async () => {
        await rejectsWith(call('no.such.tool', {}), -32602);
    });

    await check('resources/list: notes://index, text/plain', async () => {
        const { resources } = await mcp.listResources(request);
        const index = resources.find((resource) => resource.uri === 'notes://index');
        assert.ok(index, `notes://index missing: ${json(resources)}`);
        assert.deepEqual([index.name, index.mimeType], ['index', 'text/plain']);
    });

    await check('resources/templates/list: notes://note/{title}', async () => {
        const { resourceTemplates } = await mcp.listResourceTemplates(request);
        const note = resourceTemplates.find((t) => t.uriTemplate === 'notes://note/{title}');
        assert.ok(note, `template missing: ${json(resourceTemplates)}`);
        assert.equal(note.name, 'note');
    });

    await check('resources/read: the index and a note through its template', async () => {
        const index = await mcp.readResource({ uri: 'notes://index' }, request);
        assert.equal(index.contents.length, 1, json(index));
        assert.equal(index.contents[0].uri, 'notes://index');
        assert.equal(index.contents[0].mimeType, 'text/plain');
        assert.equal(index.contents[0].text, 'welcome\nshopping\n');
        const note = await mcp.readResource({ uri: 'notes://note/welcome' }, request);
        assert.deepEqual(note.contents.map((c) => [c.uri, c.text]),
            [['notes://note/welcome', SEEDED.welcome]]);
    });

    // notes answers -32002 with the URI in data, which the v2 client reads as the 2026-07-28
    // revision's resource-not-found (-32602 with data {uri}), as MCP asks of it.
    await check('resources/read of a note that is not there: resource not found', async () => {
        const uri = 'notes://note/nothing';
        await assert.rejects(mcp.readResource({ uri }, request), (error) => {
            assert.ok([-32002, -32602].includes(error.code), describe(error));
            assert.equal(error.data?.uri, uri, describe(error));
            return true;
        });
    });

    await check('prompts/list: summarize with a required argument title', async () => {
        const { prompts } = await mcp.listPrompts(request);
        const summarize = prompts.find((prompt) => prompt.name === 'summarize');
        assert.ok(summarize, `summarize missing: ${json(prompts)}`);
        assert.deepEqual(summarize.arguments.map((a) => [a.name, a.required]), [['title', true]]);
    });

    await check('prompts/get summarize: an instruction and the note, embedded', async () => {
        const result = await mcp.getPrompt(
            { name: 'summarize', arguments: { title: 'shopping' } }, request);
        assert.equal(result.messages.length, 2, json(result));
        assert.equal(result.messages[0].role, 'user');
        assert.equal(result.messages[0].content.type, 'text');
        assert.deepEqual(result.messages[1].content.resource,
            { uri: 'notes://note/shopping', mimeType: 'text/plain', text: SEEDED.shopping });
    });

    await check('prompts/get without its required argument: -32602', async () => {
        await rejectsWith(mcp.getPrompt({ name: 'summarize', arguments: {} }, request), -32602);
    });

    await check('completion/complete: titles for the prompt and for the template', async () => {
        const prompt = await mcp.complete({ ref: { type: 'ref/prompt', name: 'summarize' },
            argument: { name: 'title', value: 'sh' } }, request);
        assert.deepEqual(prompt.completion.values, ['shopping']);
        const template = await mcp.complete({ ref: { type: 'ref/resource',
            uri: 'notes://note/{title}' }, argument: { name: 'title', value: '' } }, request);
        assert.deepEqual(template.completion.values, ['welcome', 'shopping']);
    });

    // A note added is logged: notifications/message once the client asked for the level (with
    // logging/setLevel in the handshake era, with the request's _meta in the 2026-07-28 one).
    await check(mcp.era === 'legacy'
        ? 'logging/setLevel info, then notifications/message from notes_add'
        : 'tools/call notes_add with _meta logLevel info: notifications/message', async () => {
        let meta;
        if (mcp.era === 'legacy') {
            assert.deepEqual(await mcp.setLoggingLevel('info', request), {});
        } else {
            meta = { 'io.modelcontextprotocol/logLevel': 'info' };
        }
        const result = await mcp.callTool({ name: 'notes_add',
            arguments: { title: 'logged', text: 'one line' }, ...(meta && { _meta: meta }) },
        request);
        assertSuccess(result);
        assert.deepEqual(result.content[1],
            { type: 'resource_link', uri: 'notes://note/logged', name: 'logged',
                mimeType: 'text/plain' });
        const seen = notifications['notifications/message'];
        await waitFor(() => seen.some((n) => /logged/.test(json(n.params?.data))), 2000,
            `notifications/message (got ${json(seen)})`);
        const line = seen.find((n) => /logged/.test(json(n.params?.data)));
        assert.equal(line.params.level, 'info');
        assert.equal(line.params.logger, 'notes');
        const note = await mcp.readResource({ uri: 'notes://note/logged' }, request);
        assert.equal(note.contents[0].text, 'one line');
    });

    const updatesOf = (uri) =>
        notifications['notifications/resources/updated'].filter((n) => n.params?.uri === uri);
    if (mcp.era === 'legacy') {
        await check('resources/subscribe: notes_add sends notifications/resources/updated; ' +
            'none after resources/unsubscribe', async () => {
            const uri = 'notes://note/watched';
            assert.deepEqual(await mcp.subscribeResource({ uri }, request), {});
            assert.deepEqual(await mcp.subscribeResource({ uri: 'notes://index' }, request), {});
            assertSuccess(await call('notes_add', { title: 'watched', text: 'first' }));
            await waitFor(() => updatesOf(uri).length === 1 && updatesOf('notes://index').length,
                2000, `updates (got ${json(notifications['notifications/resources/updated'])})`);
            assert.deepEqual(await mcp.unsubscribeResource({ uri }, request), {});
            assertSuccess(await call('notes_add', { title: 'watched', text: 'second' }));
            await sleep(200);
            assert.equal(updatesOf(uri).length, 1, 'an update came after unsubscribe');
            assert.equal(updatesOf('notes://index').length, 2, 'the index is still subscribed');
        });
    } else {
        await check('subscriptions/listen resourceSubscriptions: notes_add sends ' +
            'notifications/resources/updated', async () => {
            const uri = 'notes://note/watched';
            const subscription = await mcp.listen({ resourceSubscriptions: [uri] }, request);
            assert.deepEqual(subscription.honoredFilter, { resourceSubscriptions: [uri] });
            assertSuccess(await call('notes_add', { title: 'watched', text: 'first' }));
            await waitFor(() => updatesOf(uri).length === 1, 2000,
                `update (got ${json(notifications['notifications/resources/updated'])})`);
            await subscription.close();
            assertSuccess(await call('notes_add', { title: 'watched', text: 'second' }));
            await sleep(200);
            assert.equal(updatesOf(uri).length, 1, 'an update came after the stream closed');
        });
    }

    await progressChecks(run, mcp, call);

    await check('cancellation: notifications/cancelled, no response, server still serves', async () => {
        const controller = new AbortController();
        const started = Date.now();
        // The outcome is taken at once, so that an early rejection is never left unhandled.
        const outcome = call('sleep', { ms: 30000 }, { signal: controller.signal, timeout: 60000 })
            .then((result) => ({ result }), (error) => ({ error }));
        const abort = setTimeout(() => controller.abort(), 300);
        const settled = await withTimeout(outcome, 5000, 'aborted call')
            .finally(() => clearTimeout(abort));
        assert.ok(settled.error, `the call resolved: ${json(settled.result)}`);
        // Within withTimeout's bound, long before the 30 s the call asked for.
        assert.ok(Date.now() - started < 5000 * TIME_SCALE, 'rejected late');
        const sleepRequest = wire.sent.findLast(
            (m) => m.method === 'tools/call' && m.params?.name === 'sleep');
        assert.ok(sleepRequest, 'the sleep request was not sent');
        assert.ok(wire.sent.some((m) => m.method === 'notifications/cancelled' &&
            m.params?.requestId === sleepRequest.id), 'notifications/cancelled was not sent');
        await echo({ after: 'cancel' });
        // Give a late response time to show up: there must be none for the cancelled id.
        await sleep(300);
        const late = wire.received.filter((m) => m.id === sleepRequest.id && m.method === undefined);
        assert.deepEqual(late, [], `response for the cancelled call: ${json(late)}`);
    });
}

/*
 * The SDKs dispatch notifications a microtask later than responses: when the last reports and
 * the response arrive in one read, they drop the handler first and report the late ones to
 * onerror as an unknown token (modelcontextprotocol/typescript-sdk bug #2580), whatever order
 * they had on the wire. So the wire must hold all three before the response, and the reports
 * that reach onprogress must be the first of them; those dropped are not counted as errors.
 */
async function progressChecks(run, mcp, call) {
    const { wire } = mcp;
    async function progressCall(args) {
        const reports = [];
        const result = await call('progress', args,
            { onprogress: (report) => reports.push(report) });
        assertSuccess(result);
        assert.deepEqual(result.structuredContent, { steps: args.steps });
        const sent = wire.sent.findLast(
            (m) => m.method === 'tools/call' && m.params?.name === 'progress');
        const token = sent?.params?._meta?.progressToken;
        assert.ok(token !== undefined, 'the client sent no progressToken');
        const onWire = [];
        for (const message of wire.received) {
            if (message.id === sent.id && message.method === undefined) {
                break;
            }
            if (message.method === 'notifications/progress' &&
                message.params?.progressToken === token) {
                onWire.push([message.params.progress, message.params.total]);
            }
        }
        const expected = Array.from({ length: args.steps }, (_, i) => [i + 1, args.steps]);
        assert.deepEqual(onWire, expected, `progress before the response: ${json(onWire)}`);
        const delivered = reports.map((r) => [r.progress, r.total]);
        assert.deepEqual(delivered, onWire.slice(0, delivered.length),
            `progress reports: ${json(reports)}`);
        // Let the client dispatch what it still holds, then see whether it dropped any.
        await sleep(50);
        if (delivered.length < onWire.length) {
            mcp.droppedProgressTokens.add(token);
            console.log(`# the client delivered ${delivered.length} of ${onWire.length} ` +
                'progress reports to onprogress (it dropped those read with the response)');
        }
        return delivered;
    }

    await run.check('tools/call progress: notifications/progress before the result', async () => {
        await progressCall({ steps: 3 });
    });
    // With 200 ms between two steps, every report but the last comes in a read of its own.
    await run.check('tools/call progress with delays: onprogress called while the call runs',
        async () => {
            const delivered = await progressCall({ steps: 3, delay_ms: 200 });
            assert.ok(delivered.length >= 2, `onprogress got ${json(delivered)}`);
        });
}

// The last check of a run: close() ends rpcd's input, and rpcd exits 0 before the client would
// signal it (the SDKs send SIGTERM after 2 s: the client's figure, which a sanitizer build, scaled,
// may pass; its status then tells); the client reported no error.
export async function closeCheck(run, mcp) {
    await run.check('close: rpcd exits 0 at end of input, no client errors', async () => {
        const { tracked } = mcp;
        assert.ok(tracked.child, 'the transport does not expose its child (SDK internals changed)');
        const started = Date.now();
        await mcp.close();
        await withTimeout(tracked.exited, 5000, 'rpcd exit');
        const took = tracked.exit.at - started;
        assert.ok(took < 1900 * TIME_SCALE,
            `rpcd took ${took} ms to exit after end of input (signalled?)`);
        assert.equal(tracked.exit.signal, null, `rpcd killed by ${tracked.exit.signal}`);
        assert.equal(tracked.exit.code, 0, `rpcd exit status ${tracked.exit.code}`);
        const errors = mcp.clientErrors.map(describe).filter((text) => {
            const late = /^Received a progress notification for an unknown token: (.*)$/.exec(text);
            return !(late &&
                mcp.droppedProgressTokens.has(JSON.parse(late[1]).params?.progressToken));
        });
        assert.deepEqual(errors, [], 'the client reported errors to onerror');
    });
}
