// SPDX-License-Identifier: MIT
// The stateless side of bridge.mjs: the Streamable HTTP transport of MCP 2026-07-28, where a
// request carries its protocol version in params._meta (and the MCP-Protocol-Version header)
// instead of belonging to a session. Each such request gets an rpcd of its own, which sees that
// one line and has its input closed once the answer is out, so that whatever rpcd says before
// its response (progress, log lines, a listen stream's notifications) belongs to that request.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

// The versions of the handshake era: a request naming one of them needs a session.
export const HANDSHAKE_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const HEADER_MISMATCH = -32020;
const MAX_AT_ONCE = 32;
const TOOLS_REFRESH_MS = 2000;

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
    let counter = 0;
    const active = new Map(); // exchange number -> { id, cancel() }
    const schemas = new Map(); // tool name -> inputSchema
    let schemasAt = 0;

    // One rpcd for one request: lines go to onLine; returns { child, send(obj), close() }.
    function start(tag, onLine, onExit) {
        const label = `stateless-${++counter}${tag}`;
        const child = spawn(ctx.options.rpcd, ['-c', ctx.options.config],
            { stdio: ['pipe', 'pipe', 'pipe'] });
        ctx.track(child);
        child.stdin.on('error', () => {});
        child.on('error', (error) => {
            ctx.log(`${label}: cannot start rpcd: ${error.message}`);
            onExit();
        });
        readline.createInterface({ input: child.stderr }).on('line', (line) =>
            process.stderr.write(`[rpcd ${label}] ${line}\n`));
        readline.createInterface({ input: child.stdout }).on('line', onLine);
        let closed = false;
        const close = () => {
            if (closed)
                return;
            closed = true;
            child.stdin.end();
            ctx.killLater(child);
        };
        // 'close', not 'exit': every line rpcd wrote has been read by then.
        child.on('close', (code, signal) => {
            console.log(`session ${label} ended ${signal ?? `status ${code}`}`);
            closed = true;
            onExit();
        });
        if (child.pid !== undefined)
            console.log(`session ${label} pid ${child.pid}`);
        const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
        return { child, send, close };
    }

    // The tools' input schemas (for Mcp-Param headers), asked of an rpcd of their own, again
    // when a call names a tool not known and the list is older than TOOLS_REFRESH_MS.
    function loadSchemas() {
        return new Promise((resolve) => {
            const meta = { [VERSION_KEY]: '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {} };
            const found = new Map();
            const rpcd = start('-tools', (line) => {
                let message;
                try {
                    message = JSON.parse(line);
                } catch {
                    return;
                }
                const result = message?.result;
                for (const tool of result?.tools ?? [])
                    found.set(tool.name, tool.inputSchema);
                if (typeof result?.nextCursor === 'string' && found.size < 100000)
                    rpcd.send({ jsonrpc: '2.0', id: 't', method: 'tools/list',
                        params: { cursor: result.nextCursor, _meta: meta } });
                else
                    rpcd.close();
            }, () => {
                schemas.clear();
                for (const [name, schema] of found)
                    schemas.set(name, schema);
                schemasAt = Date.now();
                resolve();
            });
            rpcd.send({ jsonrpc: '2.0', id: 't', method: 'tools/list', params: { _meta: meta } });
        });
    }

    async function handle(req, res, message) {
        const reply = (status, body) => ctx.sendJson(res, status, body);
        const fail = (status, code, text) => reply(status,
            { jsonrpc: '2.0', id: message.id ?? null, error: { code, message: text } });
        const isRequest = typeof message.method === 'string' && 'id' in message;
        if (!isRequest) {
            // Notifications: a cancellation goes to the rpcd serving that request id.
            if (message.method === 'notifications/cancelled')
                for (const exchange of active.values())
                    if (JSON.stringify(exchange.id) === JSON.stringify(message.params?.requestId))
                        exchange.cancel();
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
        const listen = message.method === 'subscriptions/listen';
        if (listen && !sse)
            return fail(406, -32600, 'Not Acceptable: subscriptions/listen answers as an SSE stream');
        if (active.size >= MAX_AT_ONCE)
            return fail(503, -32603, 'Service Unavailable: too many requests at once');
        const key = ++counter;
        let streaming = false;
        let done = false;
        const finish = () => {
            done = true;
            active.delete(key);
            rpcd.close();
        };
        const rpcd = start('', (line) => {
            if (done)
                return;
            let out;
            try {
                out = JSON.parse(line);
            } catch {
                ctx.log(`stateless: rpcd wrote a line that is not JSON: ${line.slice(0, 200)}`);
                return;
            }
            const isAnswer = out && !('method' in out) &&
                JSON.stringify(out.id) === JSON.stringify(message.id);
            if (isAnswer && !streaming) {
                reply(out.error ? statusOf(out.error) : 200, out);
                return finish();
            }
            if (!streaming) {
                // Whatever comes before the answer (progress, log lines, a listen stream's
                // notifications) makes the answer an SSE stream; a JSON-only client gets the
                // answer alone.
                if (!sse)
                    return;
                streaming = true;
                res.writeHead(200, { 'Content-Type': 'text/event-stream',
                    'Cache-Control': 'no-cache', Connection: 'keep-alive' });
            }
            res.write(`event: message\ndata: ${JSON.stringify(out)}\n\n`);
            if (isAnswer) {
                res.end();
                finish();
            }
        }, () => {
            if (done)
                return;
            const error = { code: -32603, message: 'the server process ended' };
            if (streaming)
                res.end(`event: message\ndata: ${JSON.stringify(
                    { jsonrpc: '2.0', id: message.id, error })}\n\n`);
            else
                reply(500, { jsonrpc: '2.0', id: message.id, error });
            finish();
        });
        const cancel = () => {
            if (done)
                return;
            rpcd.send({ jsonrpc: '2.0', method: 'notifications/cancelled',
                params: { requestId: message.id, reason: 'the HTTP exchange ended' } });
            if (!res.writableEnded)
                res.end();
            finish();
        };
        active.set(key, { id: message.id, cancel });
        // A client that goes away (a listen stream closed, say) cancels its request.
        res.on('close', () => cancel());
        rpcd.send(message);
    }

    return { handle, active: () => active.size };
}
