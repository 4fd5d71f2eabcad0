import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { contactJid, pnJid, SERVER_JID, STATUS_JID } from '../../src/jid.js'
import { pnDigits, recipientJid } from '../../src/platform/lid.js'

// One constant per fact (issue 34): the platform's JIDs are spelt in src/jid.ts only; src/ and
// plugins/ use its constants and helpers. Tests and the emulator (a separate program) keep their literals.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SPELLED = /status@broadcast|@s\.whatsapp\.net|'s\.whatsapp\.net'/

/** the lines of a source that spell a JID by hand in code (comments do not count) */
export function spelledJids (source: string): number[] {
  const found: number[] = []
  source.split('\n').forEach((line, i) => {
    const code = line.trimStart().startsWith('*') || line.trimStart().startsWith('/*') ? '' : line.replace(/(^|\s)\/\/.*$/, '')
    if (SPELLED.test(code)) found.push(i + 1)
  })
  return found
}

function tsFiles (dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((entry) => {
    const rel = join(dir, entry)
    return statSync(join(ROOT, rel)).isDirectory() ? tsFiles(rel) : rel.endsWith('.ts') ? [rel] : []
  })
}

test('the JID helpers', () => {
  assert.equal(STATUS_JID, 'status@broadcast')
  assert.equal(pnJid('4915300000011'), `4915300000011@${SERVER_JID}`)
  assert.equal(pnDigits(pnJid('4915300000011')), '4915300000011')
  assert.equal(contactJid('4915300000011', '900000000011@lid'), '4915300000011@s.whatsapp.net')
  assert.equal(contactJid(null, '900000000011@lid'), '900000000011@lid')
  assert.equal(recipientJid('4915300000011'), '4915300000011@s.whatsapp.net')
  assert.equal(recipientJid('900000000011@lid'), '900000000011@lid')
})

test('jid.ts imports nothing: plugins and the stores use it, and Baileys loads only after the server listens', () => {
  assert.doesNotMatch(readFileSync(join(ROOT, 'src/jid.ts'), 'utf8'), /^\s*import\b/m)
})

test('src/ and plugins/ spell no JID by hand outside src/jid.ts', () => {
  const spelled: string[] = []
  for (const file of [...tsFiles('src'), ...tsFiles('plugins')]) {
    // the Baileys assumption probes feed it fixed device JIDs, as tests do
    if (file === join('src', 'jid.ts') || /assumptions-[a-z-]+\.ts$/.test(file)) continue
    for (const line of spelledJids(readFileSync(join(ROOT, file), 'utf8'))) spelled.push(`${file}:${line}`)
  }
  assert.deepEqual(spelled, [])
})

test('the rule can fail', () => {
  assert.deepEqual(spelledJids("const a = 'status@broadcast'\nconst b = `${n}@s.whatsapp.net`\nconst c = { to: 's.whatsapp.net' }\n"), [1, 2, 3])
  assert.deepEqual(spelledJids('// to status@broadcast\n * `<n>@s.whatsapp.net`\nconst a = 1 // status@broadcast\nfetch(\'http://x\')\n'), [])
})
