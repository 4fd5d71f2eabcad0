/* global process */
// Preloaded (--import) into the bare-Baileys control process: maps `libsignal` and `libsignal/...`
// (Baileys imports `libsignal`, `libsignal/src/curve.js`, `libsignal/src/crypto.js`, …) to the stock copy
// in STOCK_LIBSIGNAL_DIR (node_modules/libsignal with the project's patch reversed), so the control runs
// Baileys 7.0.0-rc14 on unpatched libsignal 6 while the service runs the patched one. Baileys is ESM, so a
// module.register resolve hook sees every one of those imports; inside the copy, libsignal's own
// `require`s are relative and stay in the copy.
import { register } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isMainThread } from 'node:worker_threads'

let dir = ''

export function initialize (data) {
  dir = data.dir
}

export async function resolve (specifier, context, next) {
  if (specifier === 'libsignal' || specifier.startsWith('libsignal/')) {
    const sub = specifier === 'libsignal' ? 'index.js' : specifier.slice('libsignal/'.length)
    return { url: pathToFileURL(join(dir, sub)).href, format: 'commonjs', shortCircuit: true }
  }
  return await next(specifier, context)
}

// the hooks run on a thread of their own, which loads this file again: only the main thread registers
if (isMainThread) {
  const target = process.env.STOCK_LIBSIGNAL_DIR
  if (target === undefined || target === '') throw new Error('STOCK_LIBSIGNAL_DIR is required')
  register(import.meta.url, { data: { dir: target } })
}
