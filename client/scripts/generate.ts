import { rmSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { OpenAPI3 } from 'openapi-typescript'
import { buildApp } from '../../src/app.js'
import { testConfig } from '../../test/helper.js'
import { GENERATED_FILE, typesOf } from './openapi-types.js'

// `npm run generate:client` (or `npm run generate --workspace @status-tracker/client`): builds the service
// in-process, as the tests do (a temporary data folder, no platform), reads its OpenAPI document from
// GET /docs/json and writes the client's types from it. Nothing listens and nothing is kept.

const { config, dir } = testConfig()
const app = await buildApp(config)
try {
  await app.ready()
  const doc = (await app.inject({ url: '/docs/json' })).json() as OpenAPI3
  writeFileSync(GENERATED_FILE, await typesOf(doc))
  console.log(`wrote ${relative(process.cwd(), GENERATED_FILE)} (${Object.keys(doc.paths ?? {}).length} paths)`)
} finally {
  await app.close()
  rmSync(dir, { recursive: true, force: true })
}
