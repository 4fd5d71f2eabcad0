import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// The repository points only inside itself (docs/architecture.md): every relative link of every Markdown file
// resolves (a file, and a heading when it names one), and every repository path cited in the docs (as code:
// `src/x.ts`, `plugins/y/`) or in a code comment (src/x.ts) exists. A path is read from where it stands: the
// repository's root, the workspace package holding the file (emulator/, client/) or the file's folder.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** folders never read: installed, generated or runtime files */
const SKIP = new Set(['node_modules', '.git', 'dist', '.test-build', 'coverage', 'data', 'uploads', '.certs', 'generated'])

function walk (dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(ROOT, dir))) {
    if (SKIP.has(entry)) continue
    const rel = dir === '' ? entry : `${dir}/${entry}`
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...walk(rel, keep))
    else if (keep(rel)) out.push(rel)
  }
  return out
}

/** a heading's anchor as GitHub makes it */
export function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** the anchors of a Markdown text's headings (a repeated heading gets -1, -2, … as on GitHub) */
export function anchorsOf (text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of withoutCode(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = anchorOf(m[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** the text without fenced code blocks (their lines blanked, so line numbers hold) */
function withoutCode (text: string): string {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) { fenced = !fenced; return '' }
    return fenced ? '' : line
  }).join('\n')
}

const PACKAGES = ['emulator', 'client']

/** paths of other packages the text names with the package beside them, not files of this repository */
const FOREIGN: Record<string, string> = {
  'src/curve.js': "libsignal's Curve25519 file (node_modules/libsignal), which patches/ changes"
}

/** folders git ignores (every .gitignore's folder entries): runtime output a comment may name (test/.artifacts/) */
function ignoredFolders (): string[] {
  return walk('', (f) => f.endsWith('.gitignore')).flatMap((file) => read(file).split('\n')
    .map((line) => line.trim())
    .filter((line) => line.endsWith('/') && !line.startsWith('#') && !line.startsWith('!'))
    .map((line) => join(dirname(file), line.replace(/^\//, ''))))
}

/** where a path cited in `file` may be read from: the root, the file's package, the file's folder */
function bases (file: string): string[] {
  const pkg = PACKAGES.find((p) => file.startsWith(`${p}/`))
  return ['', ...(pkg !== undefined ? [pkg] : []), dirname(file)]
}

/** a made-up path that shows a shape (`docs/x.md`, `plugins/y/`): a segment named x, y or z */
const example = (path: string): boolean => path.split('/').some((segment) => /^[xyz](\.\w+)?$/.test(segment))

const exists = (read: (path: string) => boolean, file: string, path: string): boolean =>
  path in FOREIGN || example(path) || bases(file).some((base) => read(join(base, path)))

/** the broken relative links of a Markdown file: `file:line target` */
export function brokenLinks (file: string, text: string, read: { exists: (path: string) => boolean, text: (path: string) => string }): string[] {
  const broken: string[] = []
  withoutCode(text).split('\n').forEach((line, i) => {
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const [path, anchor] = target.split('#') as [string, string | undefined]
      const to = path === '' ? file : join(dirname(file), decodeURIComponent(path))
      if (!read.exists(to)) { broken.push(`${file}:${i + 1} ${target}`); continue }
      if (anchor !== undefined && anchor !== '' && to.endsWith('.md') && !anchorsOf(read.text(to)).has(anchor)) broken.push(`${file}:${i + 1} ${target} (no such heading)`)
    }
  })
  return broken
}

/** a repository path: from a top-level folder of ours, a file with an extension or a folder with a slash */
const ROOMS = 'src|plugins|schemas|test|emulator|client|public|bench|scripts|docs|patches|\\.ci|\\.github'
const PATH = `(?:${ROOMS})/[\\w@./-]*?(?:\\.(?:ts|mjs|js|json|md|yaml|yml|sh|css|html|sql)|/)`

/** the repository paths a Markdown file cites as code (`src/x.ts`) that do not exist: `file:line path` */
export function missingInDocs (file: string, text: string, read: (path: string) => boolean): string[] {
  const missing: string[] = []
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(new RegExp('`(' + PATH + ')`', 'g'))) {
      if (!exists(read, file, m[1])) missing.push(`${file}:${i + 1} ${m[1]}`)
    }
  })
  return missing
}

/** the repository paths a source file's comments cite that do not exist: `file:line path` */
export function missingInComments (file: string, source: string, read: (path: string) => boolean): string[] {
  const missing: string[] = []
  let block = false
  source.split('\n').forEach((line, i) => {
    let comment = ''
    const trimmed = line.trim()
    if (block || trimmed.startsWith('/*')) {
      comment = line
      block = !line.includes('*/')
    } else {
      const at = line.indexOf('// ')
      if (at !== -1 && (at === 0 || /\s/.test(line[at - 1]))) comment = line.slice(at)
    }
    // a path right after a word, a slash or a dot belongs to something else (another repository's src/…)
    for (const m of comment.matchAll(new RegExp('(?<![\\w@/.:-])(' + PATH + ')(?![\\w/])', 'g'))) {
      const path = m[1].replace(/\.$/, '')
      if (!exists(read, file, path)) missing.push(`${file}:${i + 1} ${path}`)
    }
  })
  return missing
}

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const IGNORED = ignoredFolders()
const onDisk = (path: string): boolean => existsSync(join(ROOT, path)) || IGNORED.some((dir) => `${join(path)}/`.startsWith(`${dir}/`.replace(/\/+$/, '/')))

test('every relative link of every Markdown file resolves, to a heading too when it names one', () => {
  const files = walk('', (f) => f.endsWith('.md'))
  assert.ok(files.includes('docs/architecture.md') && files.includes('emulator/README.md'))
  const broken = files.flatMap((f) => brokenLinks(f, read(f), { exists: onDisk, text: read }))
  assert.deepEqual(broken, [])
})

test('every repository path the docs cite as code exists', () => {
  const files = walk('', (f) => f.endsWith('.md'))
  assert.deepEqual(files.flatMap((f) => missingInDocs(f, read(f), onDisk)), [])
})

test('every repository path a code comment cites exists', () => {
  const files = ['src', 'plugins', 'schemas', 'test', 'emulator', 'client', 'bench', 'scripts', 'public']
    // this file's own comments show made-up paths
    .flatMap((dir) => walk(dir, (f) => /\.(ts|mjs|js)$/.test(f) && f !== 'test/foundation/references.test.ts'))
  assert.deepEqual(files.flatMap((f) => missingInComments(f, read(f), onDisk)), [])
})

test('the checks above find a broken link, a missing heading and a missing cited file', () => {
  const disk = new Set(['docs/a.md', 'src/here.ts', 'emulator/src/pkg.ts'])
  const has = (p: string): boolean => disk.has(relative('.', p)) || [...disk].some((f) => f.startsWith(`${relative('.', p)}/`))
  const texts: Record<string, string> = { 'docs/a.md': '# Title\n\n## The `x` part: one\n' }
  const io = { exists: has, text: (p: string) => texts[relative('.', p)] ?? '' }
  assert.deepEqual(brokenLinks('docs/b.md', '[a](a.md) [t](a.md#the-x-part-one) [w](https://x.org/y.md) [s](a.md#title)\n```\n[no](gone.md)\n```\n', io), [])
  assert.deepEqual(brokenLinks('docs/b.md', 'see [c](c.md) and [a](a.md#nope)\n', io), ['docs/b.md:1 c.md', 'docs/b.md:1 a.md#nope (no such heading)'])
  assert.deepEqual(missingInDocs('docs/b.md', '`src/here.ts` and `src/gone.ts`, `plugins/gone/` and `SOME_SETTING`\n', has), ['docs/b.md:1 src/gone.ts', 'docs/b.md:1 plugins/gone/'])
  assert.deepEqual(missingInDocs('emulator/README.md', 'in `src/pkg.ts`\n', has), [])
  assert.deepEqual(missingInDocs('docs/b.md', 'shaped like `docs/x.md` or `plugins/z/`\n', has), [])
  const source = "// the port (src/here.ts), the gone one (src/gone.ts); oxidezap/whatsapp-rust src/client/node_io.rs\nconst a = 'src/other.ts'\n/**\n * and plugins/none/index.ts.\n */\n"
  assert.deepEqual(missingInComments('src/z.ts', source, has), ['src/z.ts:1 src/gone.ts', 'src/z.ts:4 plugins/none/index.ts'])
})
