// SPDX-License-Identifier: MIT
// Drives the real rpcd through the official MCP TypeScript client v2 (@modelcontextprotocol/client)
// over stdio, in the stateless revision: pinned to 2026-07-28, or in 'auto' mode (a
// server/discover probe, then that revision). Discovery and what the revision puts on the wire,
// then the scenario of scenario.mjs, a subscriptions/listen stream for list changes, and close.
// Usage: node client_v2.mjs <rpcd> <config> <pin|auto>. Prints one line per check and a summary;
// exits 1 on any failure.
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
    BUNDLED_TOOLS, closeCheck, createRun, json, parseArgs, request, runScenario, serverEnv,
    tapTransport, trackChild,
} from './scenario.mjs';

const REVISION = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';

const { rpcd, config, rest: [mode] } =
    parseArgs('node client_v2.mjs <rpcd> <config> <pin|auto>', [['pin', 'auto']]);
const transport = new StdioClientTransport({
    command: rpcd,
    args: ['-c', config, '-q'],
    env: serverEnv(),
    stderr: 'inherit',
});
// The session's process (in 'auto' mode the probe runs on a sibling process of its own).
const wire = tapTransport(transport);

const client = new Client({ name: 'rpcd-mcp-sdk-v2-test', version: '1.0.0' }, {
    versionNegotiation: { mode: mode === 'pin' ? { pin: REVISION } : 'auto' },
});
const clientErrors = [];
client.onerror = (error) => clientErrors.push(error);

// The v2 API, as the scenario calls it.
const mcp = {
    era: 'modern',
    wire,
    clientErrors,
    droppedProgressTokens: new Set(),
    tracked: undefined,
    callTool: (params, options) => client.callTool(params, options),
    listTools: (params, options) => client.listTools(params, options),
    listResources: (options) => client.listResources(undefined, options),
    listResourceTemplates: (options) => client.listResourceTemplates(undefined, options),
    listPrompts: (options) => client.listPrompts(undefined, options),
    readResource: (params, options) => client.readResource(params, options),
    getPrompt: (params, options) => client.getPrompt(params, options),
    complete: (params, options) => client.complete(params, options),
    listen: (filter, options) => client.listen(filter, options),
    onNotification: (method, handler) => client.setNotificationHandler(method, handler),
    capabilities: () => client.getServerCapabilities(),
    close: () => client.close(),
};
const run = createRun(`client v2, ${mode}`, () => mcp.tracked?.kill());

// The response on the wire to the last request sent for method.
function lastResponse(method) {
    const call = wire.sent.findLast((m) => m.method === method && m.id !== undefined);
    assert.ok(call, `no ${method} request was sent`);
    assert.equal(call.params?._meta?.[META_VERSION], REVISION,
        `${method} did not carry the revision in _meta: ${json(call.params?._meta)}`);
    const response = wire.received.find((m) => m.id === call.id && m.method === undefined);
    assert.ok(response, `no response to ${method} ${call.id}`);
    return response;
}

await run.check(`connect (${mode === 'pin' ? `pinned to ${REVISION}` : 'auto'}): ` +
    'the stateless revision', async () => {
    await client.connect(transport, request);
    run.connected = true;
    mcp.tracked = trackChild(transport);
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), REVISION);
    assert.equal(client.getServerVersion()?.name, 'rpcd',
        `serverInfo: ${json(client.getServerVersion())}`);
    const discovered = client.getDiscoverResult();
    assert.ok(discovered?.supportedVersions?.includes(REVISION), json(discovered));
    assert.ok(discovered.supportedVersions.includes('2025-11-25'), json(discovered));
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true,
        `capabilities: ${json(client.getServerCapabilities())}`);
    assert.ok(!wire.sent.some((m) => m.method === 'initialize'), 'initialize was sent');
}, { needsConnection: false });

await run.check('tools/list on the wire: resultType, ttlMs, cacheScope, serverInfo', async () => {
    const listed = await client.listTools(undefined, request);
    const names = listed.tools.map((tool) => tool.name);
    for (const name of BUNDLED_TOOLS) {
        assert.ok(names.includes(name), `${name} is missing from ${json(names)}`);
    }
    const { result } = lastResponse('tools/list');
    assert.equal(result.resultType, 'complete');
    assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `ttlMs: ${json(result.ttlMs)}`);
    assert.ok(['public', 'private'].includes(result.cacheScope), `cacheScope: ${result.cacheScope}`);
    assert.equal(result._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'rpcd');
});

await runScenario(run, mcp);

await run.check('tools/call on the wire: resultType', async () => {
    await client.callTool({ name: 'echo', arguments: { wire: true } }, request);
    assert.equal(lastResponse('tools/call').result.resultType, 'complete');
});

// rpcd honours the list changes its capabilities announce (tools and prompts here), and of the
// resource subscriptions only those asked for (none here).
await run.check('subscriptions/listen: list changes acknowledged as announced, closed by the client',
    async () => {
        const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true,
            resourcesListChanged: true }, request);
        const capabilities = client.getServerCapabilities();
        const announced = Object.fromEntries([['toolsListChanged', 'tools'],
            ['promptsListChanged', 'prompts'], ['resourcesListChanged', 'resources']]
            .filter(([, kind]) => capabilities[kind]?.listChanged === true)
            .map(([key]) => [key, true]));
        assert.ok(announced.toolsListChanged, json(capabilities));
        assert.deepEqual(subscription.honoredFilter, announced);
        const listen = wire.sent.findLast((m) => m.method === 'subscriptions/listen');
        await subscription.close();
        assert.ok(wire.sent.some((m) => m.method === 'notifications/cancelled' &&
            m.params?.requestId === listen.id), 'notifications/cancelled was not sent');
        await client.callTool({ name: 'echo', arguments: { after: 'listen' } }, request);
        const answers = wire.received.filter((m) => m.id === listen.id && m.method === undefined);
        assert.deepEqual(answers, [], `response for the cancelled stream: ${json(answers)}`);
    });

await closeCheck(run, mcp);
if (!run.connected) {
    await transport.close().catch(() => {});
}
run.finish();
