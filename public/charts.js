// The Insights view's two kinds of chart, in plain SVG (no library: bars and dots on two axes are a few
// lines). Each is drawn at its figure's own width in CSS pixels (the viewBox is that width), so its text
// stays 11 px and its bars a finger wide from phone width up; the view draws it again when the width changes.
import { svg } from './reach.js'

const PAD = { left: 40, right: 10, top: 12, bottom: 26 }
const fixed = (n) => n.toFixed(1)

/** the plot area of a chart `width` × `height` */
function plot (width, height) {
  return { x0: PAD.left, x1: width - PAD.right, y0: PAD.top, y1: height - PAD.bottom }
}

/** a horizontal grid line with its label at the left */
function gridLine (p, y, label) {
  return [
    svg('line', { x1: p.x0, y1: fixed(y), x2: p.x1, y2: fixed(y), class: 'grid' }),
    svg('text', { x: p.x0 - 6, y: fixed(y + 4), 'text-anchor': 'end', class: 'tick' }, label)
  ]
}

/**
 * Vertical bars, one per value, the tallest reaching the top. Every bar is drawn (a zero one with no
 * height) and carries its index and value (`data-index`, `data-value`) and a tooltip; `label(i)` names
 * bar i under the axis when `labelled(i)` says so.
 * @param {{ values: number[], width: number, height?: number, name: string, label: (i: number) => string,
 *           labelled: (i: number) => boolean, tip: (i: number, value: number) => string }} o
 */
export function barChart ({ values, width, height = 170, name, label, labelled, tip }) {
  const p = plot(width, height)
  const top = Math.max(1, ...values)
  const slot = (p.x1 - p.x0) / values.length
  const gap = Math.max(1, Math.min(6, slot * 0.2))
  const y = (v) => p.y1 - (v / top) * (p.y1 - p.y0)
  const bars = values.map((v, i) => svg('rect', {
    x: fixed(p.x0 + i * slot + gap / 2),
    y: fixed(y(v)),
    width: fixed(slot - gap),
    height: fixed(p.y1 - y(v)),
    class: v === 0 ? 'bar bar-zero' : 'bar',
    'data-index': i,
    'data-value': v
  }, svg('title', {}, tip(i, v))))
  const labels = values.flatMap((_, i) => labelled(i)
    ? [svg('text', { x: fixed(p.x0 + (i + 0.5) * slot), y: height - 8, 'text-anchor': 'middle', class: 'tick' }, label(i))]
    : [])
  return svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'insights-chart', role: 'img', 'aria-label': name, 'data-max': top },
    svg('title', {}, name),
    ...gridLine(p, p.y1, '0'),
    ...gridLine(p, p.y0, String(top)),
    ...bars,
    ...labels)
}

/**
 * The view rate of each status (0–100 %) at its posting time, from `from` to `to`, joined in time order.
 * A status nothing was delivered to has no rate and no dot. Each dot carries its status (`data-status-id`)
 * and rate in whole percent (`data-rate`).
 * @param {{ points: Array<{ id: string, at: number, rate: number, tip: string }>, from: number, to: number, width: number,
 *           height?: number, name: string, timeLabel: (t: number) => string }} o
 */
export function rateChart ({ points, from, to, width, height = 190, name, timeLabel }) {
  const p = plot(width, height)
  const span = Math.max(1, to - from)
  const x = (t) => p.x0 + ((Math.min(to, Math.max(from, t)) - from) / span) * (p.x1 - p.x0)
  const y = (rate) => p.y1 - rate * (p.y1 - p.y0)
  const ordered = [...points].sort((a, b) => a.at - b.at)
  const line = ordered.map((pt, i) => `${i === 0 ? 'M' : 'L'}${fixed(x(pt.at))},${fixed(y(pt.rate))}`).join(' ')
  return svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'insights-chart', role: 'img', 'aria-label': name, 'data-points': ordered.length },
    svg('title', {}, name),
    ...gridLine(p, y(0), '0%'),
    ...gridLine(p, y(0.5), '50%'),
    ...gridLine(p, y(1), '100%'),
    svg('text', { x: p.x0, y: height - 8, class: 'tick' }, timeLabel(from)),
    svg('text', { x: p.x1, y: height - 8, 'text-anchor': 'end', class: 'tick' }, timeLabel(to)),
    ...(ordered.length > 1 ? [svg('path', { d: line, class: 'rate-line' })] : []),
    ...ordered.map((pt) => svg('circle', {
      cx: fixed(x(pt.at)),
      cy: fixed(y(pt.rate)),
      r: 4,
      class: 'rate-dot',
      'data-status-id': pt.id,
      'data-rate': Math.round(pt.rate * 100)
    }, svg('title', {}, pt.tip))))
}
