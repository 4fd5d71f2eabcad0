/**
 * What `npm run demo` prints: where things are, and one block to paste whole into a second terminal (bash or
 * zsh). The block links a phone of the emulator by QR, posts a text status to a contact, has the contact view
 * it and shows the viewer the service recorded. Each step waits for what the next one needs (the QR code, the
 * open link, the status reaching the contact, the viewer), polling loopback twice a second for at most 60 s each,
 * so the block can be pasted at once, and pasted again (the emulator keeps the phone and the contact it
 * made; the session is deleted and linked anew). It never calls `exit` (a pasted `exit` would close the
 * terminal).
 * test/demo/walkthrough.test.ts runs the block with bash against a real `npm run demo`, twice.
 */

export const BLOCK_START = '# ---8<--- paste from here ---'
export const BLOCK_END = '# ---8<--- to here ---'

export interface WalkThrough {
  apiKey: string
  /** the service, http://127.0.0.1:<port> */
  base: string
  /** the emulator's control API */
  control: string
  /** the emulator's platform endpoint */
  platform: string
  demoDir: string
}

/** The block alone, as the test runs it. */
export function pasteBlock ({ apiKey, base, control }: WalkThrough): string {
  const wait = (test: string): string => `for i in $(seq 1 120); do ${test} && break; sleep 0.5; done`
  return [
    BLOCK_START,
    `K=${apiKey}; B=${base}/api; C=${control}; J='content-type: application/json'`,
    'api () { curl -s -m 10 -H "x-api-key: $K" "$@"; echo; }; emu () { curl -s -m 10 "$@"; echo; }',
    'j () { node -pe "let d; try { d = JSON.parse(require(\'fs\').readFileSync(0, \'utf8\')) } catch { d = {} }; $1"; }',
    "echo '== 1. A phone in the emulator, and a contact who will receive the status'",
    'emu -H "$J" -d \'{"number":"15550001111"}\' $C/accounts',
    'emu -H "$J" -d \'{"number":"15550002222"}\' $C/contacts',
    "echo '== 2. A QR session in the service (one from an earlier paste is removed first); the phone scans its QR code; then wait for the link to open'",
    'api -X DELETE $B/sessions/demo >/dev/null',
    'api -H "$J" -d \'{"sessionId":"demo","sessionName":"Demo","authMethod":"qrcode"}\' $B/sessions',
    'QR=; ' + wait('QR=$(api $B/sessions/demo/qr-code | j \'d.data?.qrCode ?? ""\') && [ -n "$QR" ]'),
    'emu -H "$J" -d "{\\"qr\\":\\"$QR\\"}" $C/accounts/15550001111/scan',
    wait('[ "$(api $B/sessions/demo/connection-status | j \'d.data?.connected\')" = true ]'),
    'api $B/sessions/demo/connection-status',
    "echo '== 3. Post a text status to the contact, and wait until the contact has decrypted it'",
    'SENT=$(api -H "$J" -d \'{"type":"text","content":"Hello from the demo","backgroundColor":"#FF1E88E5","font":1,"targetNumbers":"15550002222"}\' $B/sessions/demo/send-status); printf \'%s\\n\' "$SENT"',
    'ID=$(printf \'%s\' "$SENT" | j \'d.data?.statusId ?? ""\'); MID=$(printf \'%s\' "$SENT" | j \'d.data?.platformMessageId ?? ""\')',
    wait('[ "$(emu $C/statuses/$MID | j \'d.text ?? ""\')" = \'Hello from the demo\' ]'),
    "echo '== 4. The contact views it; the service records the viewer (the dashboard and socket.io show it live)'",
    'emu -H "$J" -d \'{"viewer":"15550002222","type":"read"}\' $C/statuses/$MID/views',
    wait('[ "$(api $B/sessions/demo/status-viewers/$ID | j \'d.data?.length ?? 0\')" != 0 ]'),
    'echo "== The viewers of status $ID:"',
    'api $B/sessions/demo/status-viewers/$ID',
    BLOCK_END
  ].join('\n')
}

/** Everything the demo prints once the service answers. */
export function walkThrough (w: WalkThrough): string {
  return `
Status Tracker demo — the service is wired to the WhatsApp Web emulator (loopback only).

  Dashboard     ${w.base}/            (API key below)
  API docs      ${w.base}/docs
  API key       ${w.apiKey}
  Emulator      control API ${w.control}   platform ${w.platform}

Paste this whole block into another terminal (bash or zsh; it needs curl and node). It links a phone, posts a
status and shows its viewer arriving, waiting at each step for what the next one needs:

${pasteBlock(w)}

Ctrl-C stops both. Data: ${w.demoDir} (emptied at every start, the key kept; npm run demo -- --fresh makes a new key).
`
}
