// What an assumption about Baileys' internals is (the registry: assumptions.ts) and what its check looks at
// (compat.ts loads it). Types only, in a file of their own: the registry, its lists (assumptions-*.ts), the
// check helpers and compat.ts all import them, and none of those imports another's importer.

/** What the checks look at: the loaded modules, and the text of their files. */
export interface Loaded {
  baileys: Record<string, unknown>
  /** Baileys' WebSocket client class (lib/Socket/Client/websocket.js; not exported by its index) */
  WebSocketClient: unknown
  /** the `ws` WebSocket class Baileys' client instantiates (ws resolved from Baileys' own folder) */
  WebSocket: unknown
  /** libsignal's SenderKeyName class as Baileys builds its sender key names (lib/Signal/Group/sender-key-name.js) */
  SenderKeyName: unknown
  /** libsignal's src/curve.js as Baileys loads it */
  curve: Record<string, unknown>
  /** the text of a file of the installed Baileys (`lib/…`); '' when it cannot be read */
  source: (file: string) => string
  /** the text of a file of the `ws` Baileys loads (`lib/…`); '' when it cannot be read */
  wsSource: (file: string) => string
  /** the version of the installed Baileys (its package.json) */
  version: string
}

export interface Assumption {
  /** short, stable: what the log and /api/health name */
  name: string
  /** what must hold, in one sentence */
  expects: string
  /** where it comes from in the installed package */
  source: string
  /** the test that fails when the behaviour built on it breaks */
  guard: string
  /** true when it holds in `loaded` */
  check: (loaded: Loaded) => boolean
}
