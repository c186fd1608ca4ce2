// SPDX-License-Identifier: MIT
// The stateless side of bridge.mjs: the Streamable HTTP transport of MCP 2026-07-28, where a
// request carries its protocol version in params._meta (and the MCP-Protocol-Version header)
// instead of belonging to a session. All of them go to one rpcd, started with the first and
// kept until the bridge stops (rpcd keeps no state between such requests), each under an id
// of the bridge's own (and its progress token too), so that requests of different clients
// cannot collide and what rpcd says is routed back: responses and progress by those ids, a
// listen stream's notifications by their subscription id, log lines to the requests that
// asked for them.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

// The versions of the handshake era: a request naming one of them needs a session.
export const HANDSHAKE_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const HEADER_MISMATCH = -32020;
const MAX_AT_ONCE = 32;
const TOOLS_REFRESH_MS = 2000;
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';

const metaVersion = (message) => {
    const meta = message?.params?._meta;
    return meta && typeof meta === 'object' ? meta[VERSION_KEY] : undefined;
};

// A message with no Mcp-Session-Id is stateless when it names a version in its _meta, or a
// version outside the handshake era in its header (a client of the handshake era sends neither
// with initialize, and needs a session for anything else). An initialize that does is a
// request of the stateless revision, which has no initialize: rpcd answers it as such.
export function isStateless(req, messages) {
    if (req.headers['mcp-session-id'] !== undefined || messages.length !== 1)
        return false;
    const [message] = messages;
    if (metaVersion(message) !== undefined)
        return true;
    const header = req.headers['mcp-protocol-version'];
    return header !== undefined && !HANDSHAKE_VERSIONS.has(header.trim());
}

// The HTTP status of a JSON-RPC error (the 2026-07-28 transport): a method the server does not
// have is 404, the server's own failure 500, anything else a request refused, 400.
export function statusOf(error) {
    if (error?.code === -32601)
        return 404;
    if (error?.code === -32603)
        return 500;
    return 400;
}

// The value a request's Mcp-Name header must repeat, if the method has one.
function nameOf(message) {
    const params = message.params ?? {};
    switch (message.method) {
    case 'tools/call':
    case 'prompts/get':
        return params.name;
    case 'resources/read':
        return params.uri;
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
        return params.taskId;
    default:
        return undefined;
    }
}

// An Mcp-Param header's value: =?base64?...?= is Base64 (strict: alphabet and padding), anything
// else is the value itself. Returns null for Base64 that is not.
function decodeParam(value) {
    const m = /^=\?base64\?(.*)\?=$/.exec(value);
    if (!m)
        return value;
    if (m[1].length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(m[1]))
        return null;
    return Buffer.from(m[1], 'base64').toString('utf8');
}

// Why the headers disagree with the body (SEP-2243), or null when they agree. Header names are
// case-insensitive (Node lowercases them), values exact once surrounding whitespace is dropped.
function headerMismatch(req, message, schemas) {
    const header = (name) => {
        const value = req.headers[name];
        return value === undefined ? undefined : String(value).trim();
    };
    const version = header('mcp-protocol-version');
    if (version === undefined)
        return 'Missing MCP-Protocol-Version header';
    const bodyVersion = metaVersion(message);
    if (bodyVersion !== undefined && bodyVersion !== version)
        return 'MCP-Protocol-Version header does not match _meta protocolVersion';
    const method = header('mcp-method');
    if (method === undefined)
        return 'Missing Mcp-Method header';
    if (method !== message.method)
        return 'Mcp-Method header does not match the body method';
    const name = nameOf(message);
    const nameHeader = header('mcp-name');
    if (typeof name === 'string' ? nameHeader !== name : nameHeader !== undefined)
        return 'Mcp-Name header does not match the body';
    if (message.method !== 'tools/call')
        return null;
    const properties = schemas.get(name)?.properties ?? {};
    const args = message.params?.arguments ?? {};
    for (const [param, schema] of Object.entries(properties)) {
        const suffix = schema?.['x-mcp-header'];
        if (typeof suffix !== 'string')
            continue;
        const raw = header(`mcp-param-${suffix.toLowerCase()}`);
        const present = args && typeof args === 'object' && param in args;
        if (!present && raw === undefined)
            continue;
        if (!present || raw === undefined)
            return `Mcp-Param-${suffix} header and argument ${param} must come together`;
        const decoded = decodeParam(raw);
        if (decoded === null)
            return `Mcp-Param-${suffix} header is not valid Base64`;
        const value = args[param];
        if (decoded !== (typeof value === 'string' ? value : JSON.stringify(value)))
            return `Mcp-Param-${suffix} header does not match argument ${param}`;
    }
    return null;
}

// Serves stateless requests. ctx: options (rpcd, config), log(text), track(child) (so that no
// rpcd outlives the bridge), sendJson(res, status, body, headers), accepts(req, type),
// killLater(child) (SIGTERM, then SIGKILL, if it lingers after its input closed).
export function statelessServer(ctx) {
    let started = 0;
    let rpcd = null; // { child, send(obj), close(), exited }
    let stopped = false;
    let nextId = 0;
    const pending = new Map(); // the bridge's id -> exchange
    const byToken = new Map(); // the bridge's progress token -> exchange
    const schemas = new Map(); // tool name -> inputSchema
    let schemasAt = 0;

    // The rpcd of stateless requests, started when first needed (again if it ended).
    function server() {
        if (rpcd && !rpcd.exited)
            return rpcd;
        const label = `stateless-${++started}`;
        const child = spawn(ctx.options.rpcd, ['-c', ctx.options.config],
            { stdio: ['pipe', 'pipe', 'pipe'] });
        const current = { child, exited: false };
        ctx.track(child);
        child.stdin.on('error', () => {});
        child.on('error', (error) => ctx.log(`${label}: cannot start rpcd: ${error.message}`));
        readline.createInterface({ input: child.stderr }).on('line', (line) =>
            process.stderr.write(`[rpcd ${label}] ${line}\n`));
        readline.createInterface({ input: child.stdout }).on('line', route);
        let closed = false;
        current.close = () => {
            if (closed)
                return;
            closed = true;
            child.stdin.end();
            ctx.killLater(child);
        };
        // 'close', not 'exit': every line rpcd wrote has been read by then (and it comes after
        // 'error' when rpcd could not be started).
        child.on('close', (code, signal) => {
            console.log(`session ${label} ended ${signal ?? `status ${code}`}`);
            closed = true;
            current.exited = true;
            for (const exchange of [...pending.values()])
                exchange.deliver({ jsonrpc: '2.0', id: exchange.id,
                    error: { code: -32603, message: 'the server process ended' } }, true);
        });
        if (child.pid !== undefined)
            console.log(`session ${label} pid ${child.pid}`);
        current.send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
        rpcd = current;
        return rpcd;
    }

    // A line of rpcd's, back to the exchange it belongs to, under the client's own ids.
    function route(line) {
        let out;
        try {
            out = JSON.parse(line);
        } catch {
            ctx.log(`stateless: rpcd wrote a line that is not JSON: ${line.slice(0, 200)}`);
            return;
        }
        if (!out || typeof out !== 'object')
            return;
        if (!('method' in out)) {
            const exchange = pending.get(out.id);
            if (exchange)
                exchange.deliver({ ...out, id: exchange.id }, true);
            else
                ctx.log(`stateless: response for no pending request ${JSON.stringify(out.id)}`);
            return;
        }
        const params = out.params ?? {};
        const subscription = params._meta?.[SUBSCRIPTION_KEY];
        if (out.method === 'notifications/progress') {
            const exchange = byToken.get(params.progressToken);
            exchange?.deliver({ ...out, params: { ...params, progressToken: exchange.token } });
        } else if (subscription !== undefined) {
            const exchange = pending.get(subscription);
            exchange?.deliver({ ...out, params: { ...params,
                _meta: { ...params._meta, [SUBSCRIPTION_KEY]: exchange.id } } });
        } else if (out.method === 'notifications/message') {
            // Untagged: rpcd sends a request's log lines only when it named a level, so they go
            // to the requests that did (all of them, when several run at once).
            for (const exchange of pending.values())
                if (exchange.logs)
                    exchange.deliver(out);
        }
    }

    // Sends a request to rpcd under an id (and progress token) of the bridge's.
    function forward(message, exchange) {
        const id = ++nextId;
        exchange.bridgeId = id;
        pending.set(id, exchange);
        const params = message.params && typeof message.params === 'object'
            ? { ...message.params } : message.params;
        const token = params?._meta?.progressToken;
        if (token !== undefined) {
            exchange.bridgeToken = `p${id}`;
            byToken.set(exchange.bridgeToken, exchange);
            params._meta = { ...params._meta, progressToken: exchange.bridgeToken };
        }
        server().send({ ...message, id, ...(params === undefined ? {} : { params }) });
    }

    function forget(exchange) {
        pending.delete(exchange.bridgeId);
        if (exchange.bridgeToken !== undefined)
            byToken.delete(exchange.bridgeToken);
    }

    // The tools' input schemas (for Mcp-Param headers), asked of rpcd, again when a call names
    // a tool not known and the list is older than TOOLS_REFRESH_MS.
    function loadSchemas() {
        return new Promise((resolve) => {
            const meta = { [VERSION_KEY]: '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {} };
            const found = new Map();
            const ask = (cursor) => forward({ jsonrpc: '2.0', id: 'tools', method: 'tools/list',
                params: { ...(cursor === undefined ? {} : { cursor }), _meta: meta } }, {
                id: 'tools',
                deliver(out, isAnswer) {
                    if (!isAnswer)
                        return;
                    forget(this);
                    for (const tool of out.result?.tools ?? [])
                        found.set(tool.name, tool.inputSchema);
                    if (typeof out.result?.nextCursor === 'string' && found.size < 100000)
                        return ask(out.result.nextCursor);
                    schemas.clear();
                    for (const [name, schema] of found)
                        schemas.set(name, schema);
                    schemasAt = Date.now();
                    resolve();
                },
            });
            ask(undefined);
        });
    }

    async function handle(req, res, message) {
        const reply = (status, body) => ctx.sendJson(res, status, body);
        const fail = (status, code, text) => reply(status,
            { jsonrpc: '2.0', id: message.id ?? null, error: { code, message: text } });
        const isRequest = typeof message.method === 'string' && 'id' in message;
        if (!isRequest) {
            // Notifications: a cancellation goes to the requests of that id.
            if (message.method === 'notifications/cancelled')
                for (const exchange of [...pending.values()])
                    if (JSON.stringify(exchange.id) === JSON.stringify(message.params?.requestId))
                        exchange.cancel?.();
            res.writeHead(202);
            return res.end();
        }
        if (message.method === 'tools/call' && typeof message.params?.name === 'string' &&
            !schemas.has(message.params.name) && Date.now() - schemasAt > TOOLS_REFRESH_MS)
            await loadSchemas();
        const mismatch = headerMismatch(req, message, schemas);
        if (mismatch)
            return fail(400, HEADER_MISMATCH, `Header mismatch: ${mismatch}`);
        const sse = ctx.accepts(req, 'text/event-stream');
        if (message.method === 'subscriptions/listen' && !sse)
            return fail(406, -32600,
                'Not Acceptable: subscriptions/listen answers as an SSE stream');
        if (pending.size >= MAX_AT_ONCE)
            return fail(503, -32603, 'Service Unavailable: too many requests at once');
        if (stopped)
            return fail(503, -32603, 'Service Unavailable: the bridge is stopping');
        let streaming = false;
        let done = false;
        const exchange = {
            id: message.id,
            token: message.params?._meta?.progressToken,
            logs: message.params?._meta?.[LOG_LEVEL_KEY] !== undefined,
            deliver(out, isAnswer = false) {
                if (done)
                    return;
                if (isAnswer && !streaming) {
                    done = true;
                    forget(exchange);
                    return reply(out.error ? statusOf(out.error) : 200, out);
                }
                if (!streaming) {
                    // Whatever comes before the answer (progress, log lines, a listen stream's
                    // notifications) makes the answer an SSE stream; a JSON-only client gets
                    // the answer alone.
                    if (!sse)
                        return;
                    streaming = true;
                    res.writeHead(200, { 'Content-Type': 'text/event-stream',
                        'Cache-Control': 'no-cache', Connection: 'keep-alive' });
                }
                res.write(`event: message\ndata: ${JSON.stringify(out)}\n\n`);
                if (isAnswer) {
                    done = true;
                    forget(exchange);
                    res.end();
                }
            },
            // The client went away (a listen stream closed, say): rpcd drops the request.
            cancel() {
                if (done)
                    return;
                done = true;
                forget(exchange);
                if (rpcd && !rpcd.exited)
                    rpcd.send({ jsonrpc: '2.0', method: 'notifications/cancelled',
                        params: { requestId: exchange.bridgeId,
                            reason: 'the HTTP exchange ended' } });
                if (!res.writableEnded)
                    res.end();
            },
        };
        res.on('close', () => exchange.cancel());
        forward(message, exchange);
    }

    // The bridge stops: rpcd's input is closed, so that it ends as the sessions' do.
    function stop() {
        stopped = true;
        rpcd?.close();
    }

    return { handle, stop, active: () => pending.size };
}
