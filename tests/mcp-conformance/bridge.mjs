// SPDX-License-Identifier: MIT
// A Streamable HTTP front for a stdio MCP server, for tests: every MCP session (Mcp-Session-Id)
// gets its own rpcd, the requests of the stateless revision share one; JSON-RPC messages pass
// through line by line. Node.js only, no dependencies; it listens on 127.0.0.1 and lives no
// longer than --max-seconds.
//
// Usage: node bridge.mjs --rpcd PATH --config PATH [--port N] [--max-seconds N]
//                        [--idle-ms N] [--sse-poll-ms N] [--retry-ms N] [--kill-after-ms N]
// Prints "listening http://127.0.0.1:PORT/mcp" on stdout once it accepts connections, then one
// line per rpcd: "session ID pid PID" when it starts, and "session ID ended status N" (or
// "ended SIGNAL") once it has exited (ID is "stateless-N" for the stateless requests' rpcd).
//
// The transport of the handshake era (MCP 2025-11-25, basic/transports):
//   POST  a message or a batch. Only notifications and responses: 202. Requests: an SSE stream
//         (a priming event with an id and the retry field first, then what rpcd says for those
//         requests: their progress and their responses), or one JSON body when the client
//         accepts only JSON. An initialize request without a session id starts a session.
//   GET   the session's standalone SSE stream (notifications unrelated to a pending request),
//         or with Last-Event-ID the rest of a POST stream the bridge closed (below).
//   DELETE  ends the session: its rpcd's input is closed, and it is killed if it lingers.
// The stateless revision (MCP 2026-07-28; stateless.mjs): a POST without Mcp-Session-Id whose
// message names a version in params._meta, or a version outside the handshake era in
// MCP-Protocol-Version, goes to the one rpcd of stateless requests (under an id of the
// bridge's) once its MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers agree
// with the body (else 400, -32020); the answer is one JSON body (a JSON-RPC error with its HTTP
// status: 404 for -32601, 500 for -32603, 400 otherwise), or an SSE stream when something
// comes before it (progress, log lines, the notifications of subscriptions/listen, which lasts
// until the client hangs up).
// Host and Origin must name this machine (DNS rebinding): anything else gets 403.
// With --sse-poll-ms, a POST stream still waiting for its response after that long is closed
// (server-side polling, SEP-1699); the client resumes it with GET and Last-Event-ID.
// A session with no open HTTP exchange for --idle-ms ends (clients rarely send DELETE); every
// rpcd is killed when the bridge exits, whatever the reason.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import readline from 'node:readline';

import { isStateless, statelessServer } from './stateless.mjs';

const options = {
    rpcd: null,
    config: null,
    port: 0,
    'max-seconds': 300,
    'idle-ms': 5000,
    'sse-poll-ms': 0,
    'retry-ms': 200,
    'kill-after-ms': 2000,
};
for (let i = 2; i < process.argv.length; i += 2) {
    const key = process.argv[i].replace(/^--/, '');
    if (!(key in options) || i + 1 >= process.argv.length) {
        console.error(`usage: bridge.mjs --rpcd PATH --config PATH [--port N] [--max-seconds N] ` +
            `[--idle-ms N] [--sse-poll-ms N] [--retry-ms N] [--kill-after-ms N] ` +
            `(bad argument ${process.argv[i]})`);
        process.exit(2);
    }
    const value = process.argv[i + 1];
    options[key] = typeof options[key] === 'number' ? Number(value) : value;
}
if (!options.rpcd || !options.config) {
    console.error('bridge.mjs: --rpcd and --config are required');
    process.exit(2);
}

const MAX_BODY = 4 << 20;
const MAX_QUEUED = 1000;
// How long an rpcd whose input was closed may take to exit before SIGTERM (twice that: SIGKILL):
// 2 s, as the official SDK's hosts wait.
const KILL_AFTER_MS = options['kill-after-ms'];
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const sessions = new Map();
const allChildren = new Set();

function log(text) {
    process.stderr.write(`bridge: ${text}\n`);
}

// ---- HTTP helpers

function sendJson(res, status, body, headers = {}) {
    if (res.headersSent)
        return res.end();
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
}

function httpError(res, status, message, headers = {}) {
    sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code: -32000, message } }, headers);
}

function hostIsLocal(host) {
    if (!host)
        return false;
    const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
    return LOCAL_HOSTS.has(name.toLowerCase());
}

function originIsLocal(origin) {
    if (origin === undefined)
        return true;
    try {
        const url = new URL(origin);
        return (url.protocol === 'http:' || url.protocol === 'https:') && hostIsLocal(url.host);
    } catch {
        return false;
    }
}

function accepts(req, type) {
    return (req.headers.accept ?? '').split(',').some((part) => {
        const essence = part.split(';')[0].trim().toLowerCase();
        return essence === type || essence === '*/*';
    });
}

function readBody(req) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        req.on('data', (chunk) => {
            size += chunk.length;
            if (size > MAX_BODY) {
                reject(Object.assign(new Error('body too large'), { status: 413 }));
                req.destroy();
                return;
            }
            chunks.push(chunk);
        });
        req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        req.on('error', reject);
    });
}

const keyOf = (id) => JSON.stringify(id);
const isRequest = (m) => m && typeof m === 'object' && typeof m.method === 'string' && 'id' in m;
const isResponse = (m) =>
    m && typeof m === 'object' && !('method' in m) && ('result' in m || 'error' in m);

// ---- SSE streams: one per POST that carried requests, plus the standalone GET stream.
// Events are numbered per stream and kept until the stream is done, so that a POST stream the
// bridge closed early can be resumed from the last event the client saw.

class Stream {
    constructor(session, res, kind) {
        this.session = session;
        this.id = session.nextStream++;
        this.kind = kind; // 'post', 'get' or 'json'
        this.res = null;
        this.events = [];
        this.pending = new Set();
        this.done = false;
        this.pollTimer = null;
        this.jsonReplies = [];
        if (res)
            this.attach(res, -1);
    }

    eventId(seq) {
        return `${this.session.id}/${this.id}/${seq}`;
    }

    attach(res, after) {
        this.res = res;
        this.session.open.add(res);
        res.on('close', () => {
            this.session.open.delete(res);
            if (this.res === res)
                this.res = null;
            if (this.kind === 'get' && this.session.standalone === this)
                this.session.standalone = null;
            this.session.touch();
        });
        if (this.kind === 'json')
            return;
        res.writeHead(200, {
            'Content-Type': 'text/event-stream',
            'Cache-Control': 'no-cache',
            Connection: 'keep-alive',
            'Mcp-Session-Id': this.session.id,
        });
        if (after < 0) {
            // Priming: an id to resume from and the delay before reconnecting, no data.
            res.write(`id: ${this.eventId(0)}\nretry: ${options['retry-ms']}\ndata: \n\n`);
        }
        for (let seq = Math.max(after, 0) + 1; seq <= this.events.length; seq++)
            res.write(this.format(seq));
        if (this.done)
            res.end();
    }

    format(seq) {
        return `id: ${this.eventId(seq)}\nevent: message\ndata: ${this.events[seq - 1]}\n\n`;
    }

    send(text) {
        if (this.kind === 'json') {
            this.jsonReplies.push(text);
            return;
        }
        this.events.push(text);
        if (this.res)
            this.res.write(this.format(this.events.length));
    }

    // Called when a response for one of its requests went out, or the request was cancelled.
    settle(key) {
        this.pending.delete(key);
        if (this.pending.size > 0 || this.kind === 'get')
            return;
        this.finish();
    }

    finish() {
        if (this.done)
            return;
        this.done = true;
        clearTimeout(this.pollTimer);
        if (this.kind === 'json' && this.res) {
            const replies = this.jsonReplies.map((t) => JSON.parse(t));
            sendJson(this.res, 200, replies.length === 1 ? replies[0] : replies,
                { 'Mcp-Session-Id': this.session.id });
        } else if (this.res) {
            this.res.end();
        }
        // Kept a little for a client that resumes after the end, then forgotten.
        setTimeout(() => this.session.streams.delete(this.id), 30000).unref();
    }

    // Server-side polling: close the connection, keep the stream for a GET with Last-Event-ID.
    poll() {
        if (!this.done && this.res && this.kind === 'post') {
            const res = this.res;
            this.res = null;
            res.end();
        }
    }
}

// ---- Sessions: one rpcd each.

class Session {
    constructor() {
        this.id = randomUUID();
        this.nextStream = 1;
        this.streams = new Map();
        this.byRequest = new Map(); // request id key -> Stream
        this.byProgress = new Map(); // progress token key -> Stream
        this.standalone = null;
        this.queued = []; // notifications waiting for a standalone stream
        this.open = new Set();
        this.ended = false;
        this.idleTimer = null;
        this.child = spawn(options.rpcd, ['-c', options.config], {
            stdio: ['pipe', 'pipe', 'pipe'],
        });
        this.child.on('error', (error) => {
            log(`session ${this.id}: cannot start ${options.rpcd}: ${error.message}`);
            this.end('spawn failed');
        });
        this.child.stdin.on('error', () => {});
        allChildren.add(this.child);
        this.child.on('exit', () => allChildren.delete(this.child));
        this.child.on('exit', (code, signal) => {
            this.exited = true;
            if (code !== 0)
                log(`session ${this.id}: rpcd exited with ${signal ?? code}`);
            this.end('rpcd exited');
        });
        readline.createInterface({ input: this.child.stderr }).on('line', (line) =>
            process.stderr.write(`[rpcd ${this.id.slice(0, 8)}] ${line}\n`));
        readline.createInterface({ input: this.child.stdout }).on('line', (line) =>
            this.fromServer(line));
        sessions.set(this.id, this);
        console.log(`session ${this.id} pid ${this.child.pid}`);
        this.touch();
    }

    touch() {
        clearTimeout(this.idleTimer);
        if (this.ended)
            return;
        this.idleTimer = setTimeout(() => {
            // A call still running keeps the session, even while its client reconnects.
            if (this.open.size === 0 && this.byRequest.size === 0)
                this.end('idle');
            else
                this.touch();
        }, options['idle-ms']);
        this.idleTimer.unref();
    }

    write(text) {
        // In JSON, a raw CR or LF can only be whitespace between tokens: one message, one line.
        this.child.stdin.write(text.replace(/[\r\n]/g, ' ') + '\n');
    }

    newStream(res, kind) {
        const stream = new Stream(this, res, kind);
        this.streams.set(stream.id, stream);
        return stream;
    }

    fromServer(line) {
        let message;
        try {
            message = JSON.parse(line);
        } catch {
            log(`session ${this.id}: rpcd wrote a line that is not JSON: ${line.slice(0, 200)}`);
            return;
        }
        for (const item of Array.isArray(message) ? message : [message])
            this.route(item);
    }

    route(message) {
        const text = JSON.stringify(message);
        if (isResponse(message)) {
            const key = keyOf(message.id);
            const stream = this.byRequest.get(key);
            if (!stream) {
                log(`session ${this.id}: response for no pending request ${key}`);
                return;
            }
            this.byRequest.delete(key);
            for (const [token, s] of this.byProgress)
                if (s === stream && stream.pending.size <= 1)
                    this.byProgress.delete(token);
            stream.send(text);
            stream.settle(key);
            return;
        }
        // Progress goes with its request; anything else to the standalone stream, else to a
        // pending POST stream, else it waits for a standalone stream.
        let stream = null;
        if (message.method === 'notifications/progress' && message.params)
            stream = this.byProgress.get(keyOf(message.params.progressToken)) ?? null;
        if (stream && stream.kind === 'json')
            stream = null;
        stream ??= this.standalone;
        if (!stream)
            for (const s of this.streams.values())
                if (!s.done && s.kind === 'post' && s.res) {
                    stream = s;
                    break;
                }
        if (stream)
            stream.send(text);
        else if (this.queued.length < MAX_QUEUED)
            this.queued.push(text);
    }

    end(reason) {
        if (this.ended)
            return;
        this.ended = true;
        clearTimeout(this.idleTimer);
        sessions.delete(this.id);
        for (const [key, stream] of this.byRequest) {
            stream.send(JSON.stringify({
                jsonrpc: '2.0', id: JSON.parse(key),
                error: { code: -32603, message: `the server process ended (${reason})` },
            }));
            stream.settle(key);
        }
        this.byRequest.clear();
        for (const stream of this.streams.values())
            stream.finish();
        if (!this.exited) {
            this.child.stdin.end();
            const term = setTimeout(() => this.child.kill('SIGTERM'), KILL_AFTER_MS);
            const kill = setTimeout(() => this.child.kill('SIGKILL'), 2 * KILL_AFTER_MS);
            this.child.once('exit', () => {
                clearTimeout(term);
                clearTimeout(kill);
                this.reportEnd();
            });
        } else {
            this.reportEnd();
        }
    }

    reportEnd() {
        const child = this.child;
        console.log(`session ${this.id} ended ${child.signalCode ?? `status ${child.exitCode}`}`);
    }
}

// ---- Requests

async function handlePost(req, res) {
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json'))
        return httpError(res, 415, 'Unsupported Media Type: Content-Type must be application/json');
    const sse = accepts(req, 'text/event-stream');
    if (!accepts(req, 'application/json') && !sse)
        return httpError(res, 406,
            'Not Acceptable: Accept must include application/json and text/event-stream');
    let text;
    try {
        text = await readBody(req);
    } catch (error) {
        return httpError(res, error.status ?? 400, `Bad Request: ${error.message}`);
    }
    let body;
    try {
        body = JSON.parse(text);
    } catch {
        return sendJson(res, 400,
            { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || messages.some((m) => !m || typeof m !== 'object'))
        return sendJson(res, 400,
            { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
    if (isStateless(req, messages))
        return stateless.handle(req, res, messages[0]);
    const initialize = messages.some((m) => isRequest(m) && m.method === 'initialize');
    const sessionId = req.headers['mcp-session-id'];
    let session;
    if (initialize) {
        if (messages.length > 1)
            return httpError(res, 400, 'Bad Request: initialize must be sent alone');
        session = new Session();
    } else if (sessionId === undefined) {
        return httpError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    } else {
        session = sessions.get(sessionId);
        if (!session)
            return httpError(res, 404, 'Session not found');
    }
    session.touch();
    const requests = messages.filter(isRequest);
    for (const m of messages) {
        // A cancelled request gets no response: its stream ends without one.
        if (m.method === 'notifications/cancelled' && m.params && 'requestId' in m.params) {
            const key = keyOf(m.params.requestId);
            const stream = session.byRequest.get(key);
            if (stream) {
                session.byRequest.delete(key);
                setImmediate(() => stream.settle(key));
            }
        }
    }
    if (requests.length === 0) {
        session.write(text);
        res.writeHead(202, { 'Mcp-Session-Id': session.id });
        return res.end();
    }
    const stream = session.newStream(res, sse ? 'post' : 'json');
    for (const m of requests) {
        const key = keyOf(m.id);
        if (session.byRequest.has(key)) {
            stream.send(JSON.stringify({
                jsonrpc: '2.0', id: m.id,
                error: { code: -32600, message: 'Invalid Request: this id is already in use' },
            }));
            continue;
        }
        stream.pending.add(key);
        session.byRequest.set(key, stream);
        const token = m.params?._meta?.progressToken;
        if (token !== undefined)
            session.byProgress.set(keyOf(token), stream);
    }
    if (stream.pending.size === 0)
        return stream.finish();
    if (options['sse-poll-ms'] > 0 && sse)
        stream.pollTimer = setTimeout(() => stream.poll(), options['sse-poll-ms']);
    session.write(text);
}

function handleGet(req, res) {
    if (!accepts(req, 'text/event-stream'))
        return httpError(res, 406, 'Not Acceptable: Accept must include text/event-stream');
    const sessionId = req.headers['mcp-session-id'];
    if (sessionId === undefined)
        return httpError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    const session = sessions.get(sessionId);
    if (!session)
        return httpError(res, 404, 'Session not found');
    session.touch();
    const last = req.headers['last-event-id'];
    if (last !== undefined) {
        const [sid, streamId, seq] = String(last).split('/');
        const stream = sid === session.id ? session.streams.get(Number(streamId)) : undefined;
        if (!stream || stream.kind === 'json' || !/^\d+$/.test(seq ?? ''))
            return httpError(res, 404, 'No stream to resume for this Last-Event-ID');
        if (stream.res)
            stream.res.end();
        stream.attach(res, Number(seq));
        return;
    }
    if (session.standalone)
        return httpError(res, 409, 'Conflict: this session already has a standalone SSE stream');
    const stream = session.newStream(null, 'get');
    session.standalone = stream;
    stream.attach(res, -1);
    for (const text of session.queued.splice(0))
        stream.send(text);
}

function handleDelete(req, res) {
    const sessionId = req.headers['mcp-session-id'];
    if (sessionId === undefined)
        return httpError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    const session = sessions.get(sessionId);
    if (!session)
        return httpError(res, 404, 'Session not found');
    session.end('deleted');
    res.writeHead(200);
    res.end();
}

// A child whose input was closed: SIGTERM if still there KILL_AFTER_MS later, SIGKILL after
// twice that.
function killLater(child) {
    const term = setTimeout(() => child.kill('SIGTERM'), KILL_AFTER_MS);
    const kill = setTimeout(() => child.kill('SIGKILL'), 2 * KILL_AFTER_MS);
    child.once('exit', () => {
        clearTimeout(term);
        clearTimeout(kill);
    });
}

const stateless = statelessServer({
    options, log, sendJson, accepts, killLater,
    track(child) {
        allChildren.add(child);
        child.on('exit', () => allChildren.delete(child));
    },
});

const server = http.createServer((req, res) => {
    // DNS rebinding: a page elsewhere must not reach this server through a name it controls.
    if (!hostIsLocal(req.headers.host) || !originIsLocal(req.headers.origin))
        return httpError(res, 403, 'Forbidden: Host and Origin must name this machine');
    if (new URL(req.url, 'http://localhost').pathname !== '/mcp')
        return httpError(res, 404, 'Not Found');
    const handlers = { POST: handlePost, GET: handleGet, DELETE: handleDelete };
    const handler = handlers[req.method];
    if (!handler)
        return httpError(res, 405, 'Method Not Allowed', { Allow: 'GET, POST, DELETE' });
    Promise.resolve(handler(req, res)).catch((error) => {
        log(`${req.method}: ${error.stack ?? error}`);
        httpError(res, 500, 'Internal Server Error');
    });
});

// ---- Lifetime: every rpcd goes when the bridge goes.

let stopping = false;
function stop(reason, code = 0) {
    if (stopping)
        return;
    stopping = true;
    log(`stopping: ${reason}`);
    server.close();
    server.closeAllConnections();
    for (const session of [...sessions.values()])
        session.end('bridge stopping');
    stateless.stop();
    const deadline = setTimeout(() => process.exit(code), 2 * KILL_AFTER_MS + 500);
    const check = setInterval(() => {
        if ([...children()].length === 0) {
            clearInterval(check);
            clearTimeout(deadline);
            process.exit(code);
        }
    }, 50);
}

function* children() {
    for (const child of allChildren)
        if (child.exitCode === null && child.signalCode === null)
            yield child;
}
process.on('exit', () => {
    for (const child of children())
        child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.on(signal, () => stop(signal));
process.on('uncaughtException', (error) => {
    log(`uncaught: ${error.stack ?? error}`);
    stop('uncaught exception', 1);
});
setTimeout(() => stop(`--max-seconds ${options['max-seconds']} reached`, 1),
    options['max-seconds'] * 1000).unref();
// Started with a pipe as standard input: its end means the parent went away; stop too.
const input = fs.fstatSync(0);
if (input.isFIFO() || input.isSocket()) {
    process.stdin.on('end', () => stop('standard input closed'));
    process.stdin.on('error', () => stop('standard input closed'));
    process.stdin.resume();
}

server.listen(options.port, '127.0.0.1', () => {
    console.log(`listening http://127.0.0.1:${server.address().port}/mcp`);
});
