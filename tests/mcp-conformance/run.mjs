// SPDX-License-Identifier: MIT
// Runs the official MCP conformance suite against rpcd through bridge.mjs (Streamable HTTP:
// one rpcd per session of the handshake era, one for the requests of the stateless 2026-07-28
// revision) with a config that loads the conformance fixture plugin, in two modes (MODES):
// every server scenario, then what the 2026-07-28 revision requires. Prints one line per
// scenario, then checks that every rpcd the bridge started has ended with status 0. Exits 1
// when a scenario fails, unless it (or the check that fails) is excluded, and then 1 when it
// passes: the lists must say what is true.
// Usage: node run.mjs <rpcd> <conformance.so>
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const suite = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const [rpcd, fixture] = process.argv.slice(2).map((p) => path.resolve(p));
if (!rpcd || !fixture) {
    console.error('usage: node run.mjs <rpcd> <conformance.so>');
    process.exit(2);
}

// The factor of tests/test_time.h for the rpcd under test (tests/mcp/scenario.mjs says how).
const TIME_SCALE = (() => {
    const sanitize = process.env.RPCD_SANITIZE ?? '';
    const build = sanitize.includes('thread') ? 5 : sanitize.includes('address') ? 3 : 1;
    const factor = Number(process.env.RPCD_TEST_TIME_SCALE);
    return Number.isInteger(factor) && factor >= 1 && factor <= 1000 ? build * factor : build;
})();
const SCENARIO_TIMEOUT_MS = 30000 * TIME_SCALE;
const MODE_BUDGET_MS = 100000 * TIME_SCALE;

// Why a scenario (or one check of it) is left out. Each entry must still fail: one that passes
// fails the test, so that the lists stay true. A failure that is rpcd's to fix would be listed
// with a reason starting "rpcd:" (there is none today; README.md). tasks-status-notifications
// is not one: the suite skips it (its harness is being rewritten), and it counts as skipped.
const EXCLUDED = {};
// Each mode: the suite's arguments and its exclusions ("scenario", or "scenario:check-id" for
// one check of it). The default mode runs every server scenario, each at the wire of its own
// revision; the requirements mode what 2026-07-28 requires (and what it runs unscored), all at
// the 2026-07-28 wire.
const MODES = [
    {
        name: 'default',
        args: ['--suite', 'all'],
        excluded: { ...EXCLUDED },
    },
    {
        name: 'requirements-2026-07-28',
        args: ['--requirements', '2026-07-28'],
        excluded: { ...EXCLUDED },
    },
];

const node = [process.execPath];
if (Number(process.versions.node.split('.')[0]) < 22)
    node.push('--import', path.join(here, 'node20.mjs'));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rpcd-conformance-'));
const config = path.join(work, 'rpcd.conf');
// task_after_ms: the fixture's task tools work for a second or more, and so become tasks; a
// round that asks at once (test_tool_with_task's first) is answered well before, as a plain call.
fs.writeFileSync(config, `[rpcd]
log_level = warning
task_after_ms = 300

[plugin conformance]
path = ${fixture}
reconnection_ms = ${1500 * TIME_SCALE}
`);

// ---- the bridge

const bridgeLog = [];
const pids = new Set();
const ended = new Map(); // session -> "status 0", "SIGKILL", ...
const bridge = spawn(process.execPath, [path.join(here, 'bridge.mjs'), '--rpcd', rpcd,
    '--config', config, '--max-seconds', String((MODES.length * MODE_BUDGET_MS) / 1000 + 60),
    '--sse-poll-ms', String(500 * TIME_SCALE), '--idle-ms', String(3000 * TIME_SCALE),
    '--kill-after-ms', String(2000 * TIME_SCALE)],
    { stdio: ['pipe', 'pipe', 'pipe'] });
readline.createInterface({ input: bridge.stderr }).on('line', (line) => bridgeLog.push(line));
const bridgeExit = new Promise((resolve) => bridge.on('exit', (code, signal) =>
    resolve(signal ?? code)));
const url = await new Promise((resolve, reject) => {
    readline.createInterface({ input: bridge.stdout }).on('line', (line) => {
        let m;
        if ((m = /^listening (\S+)/.exec(line)))
            resolve(m[1]);
        else if ((m = /^session (\S+) pid (\d+)/.exec(line)))
            pids.add(Number(m[2]));
        else if ((m = /^session (\S+) ended (.+)/.exec(line)))
            ended.set(m[1], m[2]);
    });
    bridge.on('exit', () => reject(new Error(`the bridge exited:\n${bridgeLog.join('\n')}`)));
    setTimeout(() => reject(new Error('the bridge did not start within 10 s')), 10000).unref();
});

// ---- the bridge's own contract, where no scenario goes: JSON answers, DELETE, unknown sessions

let failures = 0;
async function bridgeChecks() {
    const post = (body, headers = {}) => fetch(url, {
        method: 'POST', body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream', ...headers },
    });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
        protocolVersion: '2025-11-25', capabilities: {},
        clientInfo: { name: 'run.mjs', version: '1' } } });
    const sid = init.headers.get('mcp-session-id');
    const events = await init.text();
    if (init.status !== 200 || !sid || !/retry: \d+/.test(events) ||
        !/"protocolVersion":"2025-11-25"/.test(events))
        return `initialize: ${init.status}, session ${sid}, body ${events}`;
    const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' },
        { 'Mcp-Session-Id': sid });
    if (initialized.status !== 202)
        return `notifications/initialized: ${initialized.status}, expected 202`;
    const ping = await post({ jsonrpc: '2.0', id: 'p', method: 'ping' },
        { 'Mcp-Session-Id': sid, Accept: 'application/json' });
    const pong = await ping.text();
    if (ping.status !== 200 || !/json/.test(ping.headers.get('content-type')) ||
        JSON.stringify(JSON.parse(pong)) !== '{"jsonrpc":"2.0","id":"p","result":{}}')
        return `ping accepting JSON only: ${ping.status} ${pong}`;
    // A cancelled call: its stream ends without a response, and rpcd sends none later.
    const call = await post({ jsonrpc: '2.0', id: 'c', method: 'tools/call',
        params: { name: 'test_reconnection', arguments: {} } }, { 'Mcp-Session-Id': sid });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await post({ jsonrpc: '2.0', method: 'notifications/cancelled',
        params: { requestId: 'c', reason: 'run.mjs' } }, { 'Mcp-Session-Id': sid });
    const cancelled = await call.text();
    if (/"id":"c"/.test(cancelled))
        return `a cancelled call got a response: ${cancelled}`;
    const noSession = await post({ jsonrpc: '2.0', id: 2, method: 'ping' });
    if (noSession.status !== 400)
        return `a request without Mcp-Session-Id: ${noSession.status}, expected 400`;
    const gone = await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
    if (gone.status !== 200)
        return `DELETE: ${gone.status}, expected 200`;
    for (let i = 0; i < 100 * TIME_SCALE && !ended.has(sid); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
    if (ended.get(sid) !== 'status 0')
        return `after DELETE, its rpcd: ${ended.get(sid) ?? `still running after ${5 * TIME_SCALE} s`}`;
    const after = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, { 'Mcp-Session-Id': sid });
    if (after.status !== 404)
        return `a request in the deleted session: ${after.status}, expected 404`;
    const late = bridgeLog.find((line) => /response for no pending request/.test(line));
    return late ? `rpcd answered a cancelled call: ${late}` : null;
}
const bridgeProblem = await bridgeChecks().catch((error) => String(error));
if (bridgeProblem) {
    console.log(`not ok - bridge transport: ${bridgeProblem}`);
    failures++;
} else {
    console.log('ok - bridge transport: SSE and JSON answers, 202, a cancelled call ends ' +
        'unanswered, 400, DELETE ends its rpcd, 404');
}

// The stateless side: a request of 2026-07-28 needs no session; its headers must agree with
// its body (400, -32020, the request's id); a JSON-RPC error has its HTTP status.
async function statelessChecks() {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {} };
    const post = (id, method, params, headers) => fetch(url, {
        method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id, method,
            params: { ...params, _meta: meta } }),
        headers: { 'Content-Type': 'application/json', Accept: 'application/json',
            'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...headers },
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const call = await post('a', 'tools/call', { name: 'test_simple_text', arguments: {} },
        { 'Mcp-Name': 'test_simple_text' });
    if (call.status !== 200 || call.body.id !== 'a' ||
        !/simple text/.test(JSON.stringify(call.body.result)))
        return `a stateless tools/call: ${call.status} ${JSON.stringify(call.body)}`;
    const wrong = await post('b', 'tools/call', { name: 'test_simple_text', arguments: {} },
        { 'Mcp-Name': 'test_image_content' });
    if (wrong.status !== 400 || wrong.body.id !== 'b' || wrong.body.error?.code !== -32020)
        return `Mcp-Name naming another tool: ${wrong.status} ${JSON.stringify(wrong.body)}`;
    const param = await post('c', 'tools/call', { name: 'test_header_param',
        arguments: { region: 'eu' } }, { 'Mcp-Name': 'test_header_param',
        'Mcp-Param-Region': '=?base64?dXM=?=' });
    if (param.status !== 400 || param.body.error?.code !== -32020)
        return `Mcp-Param-Region "us" for the argument "eu": ${param.status} ` +
            JSON.stringify(param.body);
    const missing = await post('d', 'no/such/method', {});
    if (missing.status !== 404 || missing.body.id !== 'd' || missing.body.error?.code !== -32601)
        return `an unknown method: ${missing.status} ${JSON.stringify(missing.body)}`;
    return null;
}
const statelessProblem = await statelessChecks().catch((error) => String(error));
if (statelessProblem) {
    console.log(`not ok - bridge stateless transport: ${statelessProblem}`);
    failures++;
} else {
    console.log('ok - bridge stateless transport: no session, Mcp-Name and Mcp-Param headers ' +
        'checked (400, -32020), 404 for -32601');
}

// ---- the scenarios, one suite run per mode, each scenario's checks read from its checks.json

function runSuite(args, timeout) {
    return new Promise((resolve) => {
        const child = spawn(node[0], [...node.slice(1), suite, ...args],
            { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
        child.on('exit', (code, signal) => {
            clearTimeout(timer);
            resolve({ code, signal, output });
        });
    });
}

// One check's line: its id and why it failed.
const because = (c) => `${c.id}: ${c.errorMessage ?? c.description}`;

async function runMode(mode) {
    const out = path.join(work, mode.name);
    const t0 = Date.now();
    const run = await runSuite(['server', '--url', url, ...mode.args, '-o', out,
        '--timeout', String(SCENARIO_TIMEOUT_MS)], MODE_BUDGET_MS);
    const seconds = (Date.now() - t0) / 1000;
    const scenarios = [...run.output.matchAll(/^=== Running scenario: (\S+) ===$/gm)]
        .map((m) => m[1]);
    const counts = { passed: 0, failed: 0, excluded: 0, skipped: 0, checks: 0 };
    const bad = (line) => {
        console.log(`not ok - ${mode.name}: ${line}`);
        failures++;
    };
    if (scenarios.length === 0) {
        bad(`the suite ran no scenario (exit ${run.signal ?? run.code}):\n${run.output.trim()}`);
        return;
    }
    if (run.signal)
        bad(`the suite was stopped after ${MODE_BUDGET_MS / 1000} s (${run.signal}), in ` +
            `${scenarios.at(-1)}; the scenarios after it did not run`);
    const dirs = fs.existsSync(out) ? fs.readdirSync(out) : [];
    for (const name of scenarios) {
        let checks = null;
        const dir = dirs.find((d) => d.startsWith(`server-${name}-`) &&
            /^\d{4}-/.test(d.slice(`server-${name}-`.length)));
        try {
            checks = JSON.parse(fs.readFileSync(path.join(out, dir, 'checks.json'), 'utf8'));
        } catch {
            // No results: the scenario did not finish (the budget, a crash of the suite).
        }
        const whole = mode.excluded[name];
        const failed = checks ? checks.filter((c) => c.status === 'FAILURE') : [];
        // Checks excluded one by one: each must still fail, and then does not count.
        for (const [key, why] of Object.entries(mode.excluded)) {
            if (!key.startsWith(`${name}:`))
                continue;
            const id = key.slice(name.length + 1);
            if (checks && !failed.some((c) => c.id === id))
                bad(`${name}: check ${id} does not fail, yet it is excluded (${why})`);
            else
                counts.checks++, console.log(`ok - ${name}:${id} # excluded: ${why}`);
        }
        const counted = failed.filter((c) => !(`${name}:${c.id}` in mode.excluded));
        const passed = checks ? checks.filter((c) => c.status === 'SUCCESS').length : 0;
        const why = checks === null ? 'no results' : counted.map(because).join('; ');
        if (whole) {
            counts.excluded++;
            if (checks !== null && counted.length === 0)
                bad(`${name}: passes, yet it is excluded (${whole})`);
            else
                console.log(`ok - ${name} # excluded: ${whole} (fails: ${why.slice(0, 300)})`);
        } else if (checks === null || counted.length > 0) {
            counts.failed++;
            bad(`${name}: ${why}`);
        } else if (passed === 0) {
            counts.skipped++;
            console.log(`ok - ${name} # skipped by the suite: ${checks.filter((c) =>
                c.status === 'SKIPPED').map(because)[0] ?? 'no check applies'}`);
        } else {
            counts.passed++;
            console.log(`ok - ${name} (${passed} checks)`);
        }
        for (const c of checks?.filter((c) => c.status === 'WARNING') ?? [])
            console.log(`# warning in ${name}: ${because(c)}`);
    }
    for (const key of Object.keys(mode.excluded))
        if (!run.signal && !scenarios.includes(key.split(':')[0]))
            bad(`excluded ${key} is not a scenario of this mode any more`);
    const line = `${counts.passed} passed (${counts.checks} checks excluded), ` +
        `${counts.failed} failed, ${counts.excluded} excluded, ${counts.skipped} skipped by the ` +
        `suite, of ${scenarios.length} scenarios in ${seconds.toFixed(1)} s`;
    console.log(`# ${mode.name}: ${line}`);
    summary.push(`${mode.name}: ${line}`);
}

const summary = [];
const started = Date.now();
for (const mode of MODES)
    await runMode(mode);

// ---- the bridge goes, and every rpcd with it

bridge.stdin.end();
const how = await Promise.race([bridgeExit,
    new Promise((resolve) => setTimeout(() => resolve('timeout'), 10000 * TIME_SCALE))]);
if (how === 'timeout') {
    bridge.kill('SIGKILL');
    console.log(`not ok - bridge: still running ${10 * TIME_SCALE} s after its input closed`);
    failures++;
}
const alive = [...pids].filter((pid) => {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
});
if (alive.length > 0 || ended.size !== pids.size) {
    console.log(`not ok - bridge: ${pids.size} rpcd started, ${ended.size} ended, ` +
        `still running: ${alive.join(' ') || 'none'}`);
    for (const pid of alive)
        process.kill(pid, 'SIGKILL');
    failures++;
} else if ([...ended.values()].some((how) => how !== 'status 0')) {
    // Each rpcd sees its input end and exits 0 by itself; anything else (a sanitizer's report,
    // a crash, a kill) is a failure even when the scenarios passed.
    const bad = [...ended.values()].filter((how) => how !== 'status 0');
    console.log(`not ok - bridge: ${bad.length} of ${pids.size} rpcd did not exit 0: ` +
        `${[...new Set(bad)].join(', ')}`);
    failures++;
} else {
    console.log(`ok - bridge: ${pids.size} sessions, every rpcd ended with status 0`);
}
if (failures > 0) {
    console.log('# bridge and rpcd log:');
    for (const line of bridgeLog.filter((l) => !/running as root/.test(l)).slice(-60))
        console.log(`#   ${line}`);
}
for (const line of summary)
    console.log(line);
console.log(`${((Date.now() - started) / 1000).toFixed(1)} s for both modes`);
fs.rmSync(work, { recursive: true, force: true });
process.exit(failures > 0 ? 1 : 0);
