#!/usr/bin/env node
// The container's HEALTHCHECK: GET /api/health with the key, exit 0 when the service answers
// 200 { success: true }, 1 otherwise (the reason on stderr). Reads the settings the way the service
// does: real environment first, then `.env` in the working folder; the key is API_KEY or the one the
// service generated into DATA_DIR/api-key. Plain JavaScript with no dependencies (no curl needed).
/* global AbortSignal, console, fetch, process */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseEnv } from 'node:util'

const env = existsSync('.env') ? { ...parseEnv(readFileSync('.env', 'utf8')) } : {}
for (const [name, value] of Object.entries(process.env)) if (value !== undefined && value !== '') env[name] = value

function fail (why) {
  console.error(`unhealthy: ${why}`)
  process.exit(1)
}

let key = env.API_KEY
if (!key) {
  const file = join(resolve(env.DATA_DIR || './data'), 'api-key')
  try { key = readFileSync(file, 'utf8').trim() } catch (err) { fail(`no API_KEY and no ${file} (${err.code})`) }
}
const listen = env.HOST || '0.0.0.0'
const host = listen === '0.0.0.0' ? '127.0.0.1' : listen === '::' ? '[::1]' : listen.includes(':') ? `[${listen}]` : listen
const url = `http://${host}:${env.PORT || 3000}/api/health`
try {
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(4000) })
  const body = await res.json().catch(() => null)
  if (res.status !== 200 || body?.success !== true) fail(`${url} answered ${res.status} ${JSON.stringify(body)}`)
} catch (err) {
  fail(`${url}: ${err.message}`)
}
