import assert from 'node:assert/strict'
import { test } from 'node:test'
import { detectUrlMedia, parseHttpUrl, parseTargetNumbers } from '../../plugins/send-status/parse.js'

test('targetNumbers: split on commas, trimmed, empties dropped, de-duplicated in order', () => {
  assert.deepEqual(parseTargetNumbers(undefined), [])
  assert.deepEqual(parseTargetNumbers(''), [])
  assert.deepEqual(parseTargetNumbers(' , ,'), [])
  assert.deepEqual(parseTargetNumbers(' 15551230001, 15551230002 ,,15551230001,447700900123 '), ['15551230001', '15551230002', '447700900123'])
  assert.deepEqual(parseTargetNumbers('123456789012345'), ['123456789012345'])
})

test('targetNumbers: a bad entry is a 400 naming it', () => {
  for (const bad of ['+15551230001', '123456789', '1234567890123456', '1555 123 0001', 'abc']) {
    assert.throws(() => parseTargetNumbers(`15551230001,${bad}`), (err: Error & { statusCode?: number }) => {
      assert.equal(err.statusCode, 400)
      assert.match(err.message, new RegExp(`"${bad.trim().replace('+', '\\+')}"`))
      assert.match(err.message, /10 to 15 digits/)
      assert.match(err.message, /^body\.targetNumbers has 1 invalid entry .*: body\.targetNumbers\[1\] "/)
      return true
    })
  }
  assert.throws(() => parseTargetNumbers('12, 15551230001,,abc', 'body.status.targetNumbers'),
    { message: /^body\.status\.targetNumbers has 2 invalid entries .*: body\.status\.targetNumbers\[0\] "12", body\.status\.targetNumbers\[3\] "abc"$/ })
})

test('url media detection: by the path extension, case-insensitive, query and fragment ignored', () => {
  const kind = (u: string) => detectUrlMedia(new URL(u))?.kind ?? 'text'
  for (const ext of ['jpg', 'JPG', 'jpeg', 'png', 'Gif', 'webp', 'BMP']) assert.equal(kind(`http://h/a/b.${ext}`), 'image', ext)
  for (const ext of ['mp4', 'AVI', 'mov', 'wmv', 'flv', 'MKV', 'webm']) assert.equal(kind(`https://h/v.${ext}`), 'video', ext)
  assert.equal(kind('http://h/photo.JPEG?size=large&fmt=.mp4'), 'image')
  assert.equal(kind('http://h/clip.mp4#t=10'), 'video')
  assert.equal(kind('http://h/page.html'), 'text')
  assert.equal(kind('http://h/image'), 'text')
  assert.equal(kind('http://h/'), 'text')
  assert.equal(kind('http://h/dir.jpg/file'), 'text')
  assert.equal(kind('http://h/file.txt?x=.png'), 'text')
  assert.equal(kind('http://example.jpg/'), 'text', 'the host is not the path')
  assert.equal(detectUrlMedia(new URL('http://h/a.PNG'))?.mimetype, 'image/png')
  assert.equal(detectUrlMedia(new URL('http://h/a.mov'))?.mimetype, 'video/quicktime')
})

test('url content must be an http(s) URL', () => {
  assert.equal(parseHttpUrl('https://example.com/a.jpg').hostname, 'example.com')
  for (const bad of ['ftp://example.com/a.jpg', 'not a url', 'file:///etc/passwd', 'javascript:alert(1)', '/relative.png']) {
    assert.throws(() => parseHttpUrl(bad), (err: Error & { statusCode?: number }) => err.statusCode === 400 && /http\(s\) URL/.test(err.message), bad)
  }
})
