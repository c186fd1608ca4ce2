// SPDX-License-Identifier: MIT
// Drives the real rpcd through the official MCP TypeScript SDK v1 client over stdio, in the
// handshake era: initialize, then the scenario of scenario.mjs (lists, every content kind,
// resources, prompts, completion, subscriptions, logging, progress, cancellation) and close.
// Usage: node client.mjs <rpcd> <config>. Prints one line per check and a summary; exits 1 on
// any failure.
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    LoggingMessageNotificationSchema,
    ResourceUpdatedNotificationSchema,
    SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

import {
    closeCheck, createRun, json, parseArgs, request, runScenario, serverEnv, tapTransport,
    trackChild,
} from './scenario.mjs';

const { rpcd, config } = parseArgs('node client.mjs <rpcd> <config>');
const transport = new StdioClientTransport({
    command: rpcd,
    args: ['-c', config, '-q'],
    env: serverEnv(),
    stderr: 'inherit',
});
const wire = tapTransport(transport);
// The Client calls this with the version it settled on (HTTP transports need it in headers).
let negotiatedVersion;
transport.setProtocolVersion = (version) => {
    negotiatedVersion = version;
};

const client = new Client({ name: 'rpcd-mcp-sdk-test', version: '1.0.0' });
const clientErrors = [];
client.onerror = (error) => clientErrors.push(error);

const notificationSchemas = {
    'notifications/message': LoggingMessageNotificationSchema,
    'notifications/resources/updated': ResourceUpdatedNotificationSchema,
};
// The v1 API, as the scenario calls it.
const mcp = {
    era: 'legacy',
    wire,
    clientErrors,
    droppedProgressTokens: new Set(),
    tracked: undefined,
    callTool: (params, options) => client.callTool(params, undefined, options),
    listTools: (params, options) => client.listTools(params, options),
    listResources: (options) => client.listResources(undefined, options),
    listResourceTemplates: (options) => client.listResourceTemplates(undefined, options),
    listPrompts: (options) => client.listPrompts(undefined, options),
    readResource: (params, options) => client.readResource(params, options),
    getPrompt: (params, options) => client.getPrompt(params, options),
    complete: (params, options) => client.complete(params, options),
    setLoggingLevel: (level, options) => client.setLoggingLevel(level, options),
    subscribeResource: (params, options) => client.subscribeResource(params, options),
    unsubscribeResource: (params, options) => client.unsubscribeResource(params, options),
    onNotification: (method, handler) =>
        client.setNotificationHandler(notificationSchemas[method], handler),
    capabilities: () => client.getServerCapabilities(),
    close: () => client.close(),
};
const run = createRun('client v1', () => mcp.tracked?.kill());

await run.check('connect: initialize and notifications/initialized', async () => {
    await client.connect(transport, request);
    run.connected = true;
    mcp.tracked = trackChild(transport);
    const server = client.getServerVersion();
    assert.equal(server?.name, 'rpcd', `serverInfo: ${json(server)}`);
    assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(negotiatedVersion),
        `negotiated protocol version ${negotiatedVersion} is not one the SDK supports ` +
        `(${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    assert.ok(wire.sent.some((m) => m.method === 'notifications/initialized'),
        'notifications/initialized was not sent');
}, { needsConnection: false });

await run.check('ping right after the handshake', async () => {
    assert.deepEqual(await client.ping(request), {});
});

await runScenario(run, mcp);

await run.check('ping after the calls', async () => {
    assert.deepEqual(await client.ping(request), {});
});

await closeCheck(run, mcp);
if (!run.connected) {
    await transport.close().catch(() => {});
}
run.finish();
