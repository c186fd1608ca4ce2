// SPDX-License-Identifier: MIT
// Drives the real rpcd through the MCP Inspector's CLI (@modelcontextprotocol/inspector --cli),
// in one protocol era (--protocol-era legacy: initialize; modern: server/discover and
// 2026-07-28). The CLI runs one method per process, each with an rpcd of its own, which
// record.sh wraps to keep what the CLI sent and rpcd's exit status.
// Usage: node inspector.mjs <rpcd> <config> <legacy|modern>. Prints one line per check and a
// summary; exits 1 on any failure.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
    BUNDLED_TOOLS, KINDS, SEEDED, TIME_SCALE, TOOL_NAME, createRun, json, parseArgs, serverEnv,
    sleep, waitFor,
} from './scenario.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients',
    'launcher', 'build', 'index.js');
const { rpcd, config, rest: [era] } =
    parseArgs('node inspector.mjs <rpcd> <config> <legacy|modern>', [['legacy', 'modern']]);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rpcd-inspector-'));
const running = new Set();
const run = createRun(`MCP Inspector CLI, ${era}`, () => {
    for (const child of running) {
        child.kill('SIGKILL');
    }
});
run.connected = true;
let runs = 0;

/*
 * Starts the CLI for one method: args are its options; "--" ends them, as a variadic option
 * (--prompt-args) would take the command for one of its pairs. Returns { child, done, dir }: done
 * resolves to { code, stdout, stderr, result, error } (result or error: the CLI's JSON on stdout
 * or its error envelope on stderr).
 */
function start(args) {
    const dir = path.join(scratch, String(++runs));
    fs.mkdirSync(dir);
    const env = { ...process.env, ...serverEnv(), HOME: dir, MCP_CATALOG_PATH: path.join(dir,
        'mcp.json') };
    const child = spawn(process.execPath, [cli, '--cli', '--format', 'json', '--protocol-era', era,
        ...args, '--', 'bash', path.join(here, 'record.sh'), dir, rpcd, '-c', config, '-q'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const done = new Promise((resolve) => {
        child.on('close', (code, signal) => {
            running.delete(child);
            const parsed = (text) => {
                const line = text.trim().split('\n').findLast((l) => l.startsWith('{'));
                try {
                    return line ? JSON.parse(line) : undefined;
                } catch {
                    return undefined;
                }
            };
            resolve({ code, signal, stdout, stderr, result: parsed(stdout)?.result,
                error: parsed(stderr)?.error });
        });
    });
    return { child, done, dir };
}

// What the CLI sent rpcd (or, with file 'output', what rpcd sent the CLI), as messages, and
// rpcd's exit status once it has exited.
function sentBy(dir, file = 'input') {
    file = path.join(dir, file);
    return fs.existsSync(file)
        ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
        : [];
}
async function exitOf(dir) {
    const file = path.join(dir, 'status');
    await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').endsWith('\n'), 3000,
        'rpcd exit');
    return Number(fs.readFileSync(file, 'utf8'));
}

/*
 * Runs the CLI for one method and checks what every run must show: the era's opening (initialize
 * or server/discover), exit code (0 unless told), and rpcd's exit 0 once the CLI closed its input.
 */
async function invoke(args, { code = 0 } = {}) {
    const { done, dir } = start(args);
    const outcome = await done;
    assert.equal(outcome.code, code,
        `the CLI exited ${outcome.code}: ${outcome.stderr.trim().slice(0, 400)}`);
    const opening = sentBy(dir)[0]?.method;
    assert.equal(opening, era === 'legacy' ? 'initialize' : 'server/discover');
    assert.equal(await exitOf(dir), 0, 'rpcd exit status');
    return { ...outcome, dir };
}

const tools = new Map();
await run.check('tools/list: bundled tools, valid names, notes_add annotations', async () => {
    const { result } = await invoke(['--method', 'tools/list']);
    for (const tool of result.tools) {
        tools.set(tool.name, tool);
        assert.match(tool.name, TOOL_NAME);
    }
    for (const name of [...BUNDLED_TOOLS, 'every_kind']) {
        assert.ok(tools.has(name), `${name} is missing from ${json([...tools.keys()])}`);
    }
    assert.equal(tools.has('notes_index'), false, 'notes_index is listed as a tool');
    assert.deepEqual(tools.get('notes_add').annotations, { readOnlyHint: false,
        destructiveHint: true, idempotentHint: true, openWorldHint: false });
});

await run.check('tools/call echo: text and structuredContent', async () => {
    const args = { hello: 'world', n: [1, 2] };
    const { result } = await invoke(['--method', 'tools/call', '--tool-name', 'echo',
        '--tool-args-json', JSON.stringify(args)]);
    assert.deepEqual(JSON.parse(result.content[0].text), args);
    assert.deepEqual(result.structuredContent, args);
});

// every_kind says isError: true, which the CLI reports with its exit code 5.
await run.check('tools/call every_kind: every content kind', async () => {
    const { result } = await invoke(['--method', 'tools/call', '--tool-name', 'every_kind',
        '--tool-args-json', '{}'], { code: 5 });
    assert.deepEqual(result.content.map((block) => block.type), KINDS);
    assert.equal(result.content[1].data, 'iVBORw0KGgo=');
    assert.equal(result.content[3].uri, 'file:///tmp/a.txt');
    assert.deepEqual(result.content[5].resource, { uri: 'file:///tmp/c.bin', blob: 'AAE=' });
    assert.equal(result.isError, true);
});

// The CLI asks for every log line (logging/setLevel debug after initialize, or
// io.modelcontextprotocol/logLevel debug in each request's _meta) but prints none: what rpcd
// sent is read from record.sh's copy.
await run.check('tools/call notes_add: a resource_link, and its log line sent to the CLI',
    async () => {
        const { result, dir } = await invoke(['--method', 'tools/call', '--tool-name',
            'notes_add', '--tool-args-json', '{"title":"cli","text":"from the inspector"}']);
        assert.deepEqual(result.content[1], { type: 'resource_link', uri: 'notes://note/cli',
            name: 'cli', mimeType: 'text/plain' });
        const output = sentBy(dir, 'output');
        const line = output.findIndex((m) => m.method === 'notifications/message');
        assert.ok(line >= 0, `no notifications/message: ${json(output.map((m) => m.method))}`);
        assert.deepEqual(output[line].params, { level: 'info', logger: 'notes',
            data: 'note cli saved (18 bytes)' });
        const call = sentBy(dir).find((m) => m.method === 'tools/call');
        assert.ok(line < output.findIndex((m) => m.id === call.id), 'the line came after the result');
    });

await run.check('tools/call sleep without ms: a tool error (CLI exit 5)', async () => {
    const { result } = await invoke(['--method', 'tools/call', '--tool-name', 'sleep',
        '--tool-args-json', '{}'], { code: 5 });
    assert.equal(result.isError, true);
});

await run.check('tools/call progress: the result after its steps', async () => {
    const { result } = await invoke(['--method', 'tools/call', '--tool-name', 'progress',
        '--tool-args-json', '{"steps":3}']);
    assert.deepEqual(result.structuredContent, { steps: 3 });
});

await run.check('resources/list and resources/templates/list', async () => {
    const { result } = await invoke(['--method', 'resources/list']);
    assert.ok(result.resources.some((r) => r.uri === 'notes://index' &&
        r.mimeType === 'text/plain'), json(result));
    const templates = await invoke(['--method', 'resources/templates/list']);
    assert.ok(templates.result.resourceTemplates.some(
        (t) => t.uriTemplate === 'notes://note/{title}'), json(templates.result));
});

await run.check('resources/read: the index and a note through its template', async () => {
    const index = await invoke(['--method', 'resources/read', '--uri', 'notes://index']);
    assert.equal(index.result.contents[0].text, 'welcome\nshopping\n');
    const note = await invoke(['--method', 'resources/read', '--uri', 'notes://note/shopping']);
    assert.equal(note.result.contents[0].text, SEEDED.shopping);
});

await run.check('prompts/list and prompts/get summarize', async () => {
    const { result } = await invoke(['--method', 'prompts/list']);
    const summarize = result.prompts.find((p) => p.name === 'summarize');
    assert.deepEqual(summarize?.arguments?.map((a) => [a.name, a.required]), [['title', true]]);
    const got = await invoke(['--method', 'prompts/get', '--prompt-name', 'summarize',
        '--prompt-args', 'title=welcome']);
    assert.equal(got.result.messages[1].content.resource.text, SEEDED.welcome);
});

if (era === 'legacy') {
    await run.check('logging/setLevel info', async () => {
        const { dir } = await invoke(['--method', 'logging/setLevel', '--log-level', 'info']);
        assert.ok(sentBy(dir).some((m) => m.method === 'logging/setLevel' &&
            m.params?.level === 'info'), 'logging/setLevel was not sent');
    });
}

// The CLI cannot cancel a request: interrupted, it ends rpcd's input and stops reading, and rpcd
// (in an MCP session) cancels the call in flight and exits at once, 0 or, when it noticed that
// its output had gone, 74 (rpcd(8): "client gone").
await run.check('interrupted during a 30 s call: rpcd exits 0 or 74 within 2 s', async () => {
    const { child, done, dir } = start(['--method', 'tools/call', '--tool-name', 'sleep',
        '--tool-args-json', '{"ms":30000}']);
    await waitFor(() => sentBy(dir).some((m) => m.method === 'tools/call'), 10000,
        'the tools/call request');
    await sleep(200);
    child.kill('SIGINT');
    const stopped = Date.now();
    await done;
    assert.ok([0, 74].includes(await exitOf(dir)), `rpcd exit status ${await exitOf(dir)}`);
    assert.ok(Date.now() - stopped < 2000 * TIME_SCALE, `rpcd took ${Date.now() - stopped} ms`);
});

fs.rmSync(scratch, { recursive: true, force: true });
run.finish();
