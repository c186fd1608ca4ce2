// SPDX-License-Identifier: MIT
// Lets the conformance suite's bundle load on Node.js 20 (node --import ./node20.mjs): it
// imports fs.globSync, which Node.js 22 added, for its tier-check command alone. Its imports of
// fs get node:fs with a globSync that says so when called; nothing else changes.
import { register } from 'node:module';

const hooks = `
const shim = 'data:text/javascript,' + encodeURIComponent(
    "export * from 'node:fs'; export { default } from 'node:fs';" +
    "export function globSync() { throw new Error('fs.globSync needs Node.js 22'); }");
export async function resolve(specifier, context, next) {
    if ((specifier === 'fs' || specifier === 'node:fs') &&
        (context.parentURL ?? '').includes('/@modelcontextprotocol/conformance/'))
        return { url: shim, shortCircuit: true };
    return next(specifier, context);
}`;
register('data:text/javascript,' + encodeURIComponent(hooks));
