// Evaluation counts per variation over time as an inline SVG line chart, from the ingestion
// insights API; "no data" when that API is absent or has nothing yet. A table carries the same
// numbers for screen readers and keyboard users.
import { get, enc } from './api.js';
import { h, clear, select, field, svg } from './dom.js';

const COLORS = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];

export function variationName(flag, name) {
  if (name === 'none') return 'default (error)';
  const v = flag.variations[Number(name)];
  return v ? (v.name || JSON.stringify(v.value)) : `variation ${name}`;
}

const HOUR = 3600000;

// Hourly points over the whole window (hours without data count 0), one line per variation.
export function lineChart(series, names, { from, to, width = 860, height = 220 }) {
  const first = Math.floor(from / HOUR) * HOUR;
  const hours = [];
  for (let t = first; t <= to; t += HOUR) hours.push(t);
  const keys = [...new Set(series.flatMap((p) => Object.keys(p.variations)))].sort();
  const max = Math.max(1, ...series.flatMap((p) => Object.values(p.variations)));
  const pad = { l: 48, r: 12, t: 12, b: 28 };
  const x0 = hours[0];
  const x1 = hours[hours.length - 1] || x0 + HOUR;
  const x = (t) => pad.l + ((t - x0) / (x1 - x0 || 1)) * (width - pad.l - pad.r);
  const y = (v) => height - pad.b - (v / max) * (height - pad.t - pad.b);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart', 'aria-label': 'Evaluations per hour by variation' });
  chart.append(svg('line', { x1: pad.l, y1: y(0), x2: width - pad.r, y2: y(0), class: 'axis' }));
  chart.append(svg('line', { x1: pad.l, y1: y(max), x2: width - pad.r, y2: y(max), class: 'grid' }));
  chart.append(svg('text', { x: pad.l - 6, y: y(max) + 4, class: 'tick', 'text-anchor': 'end' }, String(max)));
  chart.append(svg('text', { x: pad.l - 6, y: y(0) + 4, class: 'tick', 'text-anchor': 'end' }, '0'));
  const ticks = 6;
  for (let i = 0; i <= ticks; i += 1) {
    const t = x0 + ((x1 - x0) * i) / ticks;
    const d = new Date(t);
    const label = to - from > 2 * 86400000 ? d.toLocaleDateString() : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    chart.append(svg('text', { x: x(t), y: height - 8, class: 'tick', 'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle' }, label));
  }
  const byHour = new Map(series.map((p) => [p.hour, p.variations]));
  keys.forEach((key, i) => {
    const color = COLORS[i % COLORS.length];
    const points = hours.map((t) => `${x(t).toFixed(1)},${y((byHour.get(t) || {})[key] || 0).toFixed(1)}`);
    chart.append(svg('polyline', { points: points.join(' '), fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-linejoin': 'round' }));
    for (const [t, counts] of byHour) {
      if (counts[key]) chart.append(svg('circle', { cx: x(t), cy: y(counts[key]), r: 3, fill: color }, svg('title', {}, `${names(key)}: ${counts[key]} at ${new Date(t).toLocaleString()}`)));
    }
  });
  const legend = h('ul', { class: 'legend' }, keys.map((key, i) => h('li', {},
    h('span', { class: 'swatch', dataset: { color: String(i % COLORS.length) } }), names(key))));
  return { chart, legend, keys };
}

export async function evaluationChart(host, project, env, flag) {
  const range = select([['24', 'Last 24 hours'], ['168', 'Last 7 days'], ['720', 'Last 30 days']], '24');
  const body = h('div');
  async function draw() {
    const to = Date.now();
    const from = to - Number(range.value) * 3600000;
    let answer;
    try {
      answer = await get(`/api/v2/insights/${enc(project)}/${enc(env)}/flags/${enc(flag.key)}/evaluations?from=${from}&to=${to}`);
    } catch {
      clear(body, h('p', { class: 'muted' }, 'no data (evaluation insights are not available on this server)'));
      return;
    }
    if (!answer.total) {
      clear(body, h('p', { class: 'muted' }, `no data: no evaluations of ${flag.key} in ${env} reported in this period`));
      return;
    }
    const names = (k) => variationName(flag, k);
    const { chart, legend, keys } = lineChart(answer.series, names, { from, to });
    const table = h('table', { class: 'list compact' },
      h('caption', {}, `${answer.total} evaluations`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Hour'), keys.map((k) => h('th', { scope: 'col' }, names(k))))),
      h('tbody', {}, [...answer.series].sort((a, b) => a.hour - b.hour).map((p) => h('tr', {},
        h('th', { scope: 'row' }, new Date(p.hour).toLocaleString()), keys.map((k) => h('td', {}, String(p.variations[k] || 0)))))));
    clear(body, chart, legend, h('details', {}, h('summary', {}, 'Numbers'), table));
  }
  range.addEventListener('change', draw);
  clear(host, field('Period', range), body);
  await draw();
}
