// SPDX-License-Identifier: MIT
// Runs every server scenario of the official MCP conformance suite against rpcd, one at a time,
// through bridge.mjs (Streamable HTTP, one rpcd per session) with a config that loads the
// conformance fixture plugin. Prints one line per scenario, then checks that every rpcd the
// bridge started has ended. Exits 1 when a scenario fails, unless it is in EXCLUDED (and then
// 1 when it passes: the list must say what is true).
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

// Scenarios rpcd cannot pass: each needs a request from the server to the client during a tool
// call, which neither the plugin ABI nor rpcd offers (see README.md).
const EXCLUDED = {
    'tools-call-sampling': 'sampling/createMessage sent to the client from a tool call',
    'tools-call-elicitation': 'elicitation/create sent to the client from a tool call',
    'elicitation-sep1034-defaults': 'elicitation/create (form with defaults) from a tool call',
    'elicitation-sep1330-enums': 'elicitation/create (enum schemas) from a tool call',
};
// The factor of tests/test_time.h for the rpcd under test (tests/mcp/scenario.mjs says how).
const TIME_SCALE = (() => {
    const sanitize = process.env.RPCD_SANITIZE ?? '';
    const build = sanitize.includes('thread') ? 5 : sanitize.includes('address') ? 3 : 1;
    const factor = Number(process.env.RPCD_TEST_TIME_SCALE);
    return Number.isInteger(factor) && factor >= 1 && factor <= 1000 ? build * factor : build;
})();
const SCENARIO_TIMEOUT_MS = 30000;
const TOTAL_BUDGET_MS = 140000;

const node = [process.execPath];
if (Number(process.versions.node.split('.')[0]) < 22)
    node.push('--import', path.join(here, 'node20.mjs'));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rpcd-conformance-'));
const config = path.join(work, 'rpcd.conf');
fs.writeFileSync(config, `[rpcd]
log_level = warning

[plugin conformance]
path = ${fixture}
reconnection_ms = 1500
`);

// ---- the bridge

const bridgeLog = [];
const pids = new Set();
const ended = new Map(); // session -> "status 0", "SIGKILL", ...
const bridge = spawn(process.execPath, [path.join(here, 'bridge.mjs'), '--rpcd', rpcd,
    '--config', config, '--max-seconds', String(TOTAL_BUDGET_MS / 1000 + 20),
    '--sse-poll-ms', '500', '--idle-ms', '3000'], { stdio: ['pipe', 'pipe', 'pipe'] });
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

// ---- the scenarios

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

const listing = await runSuite(['list', '--server'], 20000);
const scenarios = [...listing.output.matchAll(/^ {2}- (\S+)/gm)].map((m) => m[1]);
if (scenarios.length === 0) {
    console.log(`not ok - the suite listed no server scenario:\n${listing.output}`);
    process.exit(1);
}
for (const name of Object.keys(EXCLUDED))
    if (!scenarios.includes(name))
        console.log(`# excluded scenario ${name} is not in the suite any more`);

const started = Date.now();
const counts = { passed: 0, failed: 0, excluded: 0 };
for (const name of scenarios) {
    if (Date.now() - started > TOTAL_BUDGET_MS) {
        console.log(`not ok - ${name}: not run, the ${TOTAL_BUDGET_MS / 1000} s budget is spent`);
        failures++, counts.failed++;
        continue;
    }
    const out = path.join(work, name);
    const t0 = Date.now();
    const run = await runSuite(['server', '--url', url, '--scenario', name, '-o', out],
        SCENARIO_TIMEOUT_MS);
    const ms = Date.now() - t0;
    let checks = null;
    try {
        const dir = fs.readdirSync(out).find((d) => d.startsWith(`server-${name}-`));
        checks = JSON.parse(fs.readFileSync(path.join(out, dir, 'checks.json'), 'utf8'));
    } catch {
        // No results: reported below with the suite's output.
    }
    const failed = checks ? checks.filter((c) => c.status === 'FAILURE') : [];
    const warnings = checks ? checks.filter((c) => c.status === 'WARNING') : [];
    const passed = checks ? checks.filter((c) => c.status === 'SUCCESS').length : 0;
    const ok = checks !== null && failed.length === 0 && passed > 0 && run.code === 0;
    const why = checks === null
        ? `no results (exit ${run.signal ?? run.code}):\n${run.output.trim()}`
        : failed.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`).join('; ');
    if (name in EXCLUDED) {
        counts.excluded++;
        if (ok) {
            console.log(`not ok - ${name}: passes, yet it is excluded (${EXCLUDED[name]})`);
            failures++;
        } else {
            console.log(`ok - ${name} # excluded: needs ${EXCLUDED[name]} (fails: ${why})`);
        }
        continue;
    }
    if (ok) {
        counts.passed++;
        console.log(`ok - ${name} (${passed} checks, ${ms} ms)`);
    } else {
        counts.failed++, failures++;
        console.log(`not ok - ${name}: ${why || `exit ${run.signal ?? run.code}`}`);
    }
    for (const c of warnings)
        console.log(`# warning in ${name}: ${c.id}: ${c.errorMessage ?? c.description}`);
}

// ---- the bridge goes, and every rpcd with it

bridge.stdin.end();
const how = await Promise.race([bridgeExit,
    new Promise((resolve) => setTimeout(() => resolve('timeout'), 10000))]);
if (how === 'timeout') {
    bridge.kill('SIGKILL');
    console.log('not ok - bridge: still running 10 s after its input closed');
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
console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.excluded} excluded ` +
    `of ${scenarios.length} scenarios in ${((Date.now() - started) / 1000).toFixed(1)} s`);
fs.rmSync(work, { recursive: true, force: true });
process.exit(failures > 0 ? 1 : 0);
