// Estimates with their intervals as an inline SVG (a forest plot): one row per estimate, a
// vertical line at 0 and, when given, one at a threshold. Used for an experiment's lift per
// treatment and a guarded rollout's metric comparisons; the caller shows the same numbers in a
// table, so the picture is never the only way to read them.
import { svg } from './dom.js';

const finite = (v) => typeof v === 'number' && Number.isFinite(v);

// rows: [{label, estimate, intervals: [{lower, upper, kind}]}]; kind names a CSS class
// (`ci`, `seq`). `format` writes an axis value; `threshold` adds a dashed line.
export function intervalPlot(rows, { label, format = (v) => v.toFixed(2), threshold = null, width = 640 } = {}) {
  const rowHeight = 34;
  const pad = { l: 150, r: 20, t: 10, b: 30 };
  const height = pad.t + pad.b + rowHeight * Math.max(rows.length, 1);
  const values = [0];
  if (finite(threshold)) values.push(threshold);
  for (const row of rows) {
    if (finite(row.estimate)) values.push(row.estimate);
    for (const i of row.intervals) if (finite(i.lower) && finite(i.upper)) values.push(i.lower, i.upper);
  }
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  const span = hi - lo || 1;
  lo -= span * 0.08;
  hi += span * 0.08;
  const x = (v) => pad.l + ((v - lo) / (hi - lo)) * (width - pad.l - pad.r);
  const plot = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart interval-plot', 'aria-label': label });
  const bottom = height - pad.b;
  plot.append(svg('line', { x1: pad.l, y1: bottom, x2: width - pad.r, y2: bottom, class: 'axis' }));
  // 0 and the ends, without an end that sits so close to 0 that the labels would overlap
  const ticks = [0, ...[lo, hi].filter((v) => Math.abs(x(v) - x(0)) > 48)];
  for (const v of ticks) {
    plot.append(svg('text', { x: x(v), y: height - 10, class: 'tick', 'text-anchor': 'middle' }, format(v)));
  }
  plot.append(svg('line', { x1: x(0), y1: pad.t, x2: x(0), y2: bottom, class: 'zero' }));
  if (finite(threshold) && threshold !== 0) {
    plot.append(svg('line', { x1: x(threshold), y1: pad.t, x2: x(threshold), y2: bottom, class: 'threshold' },
      svg('title', {}, `threshold ${format(threshold)}`)));
  }
  rows.forEach((row, index) => {
    const mid = pad.t + rowHeight * index + rowHeight / 2;
    plot.append(svg('text', { x: pad.l - 8, y: mid + 4, class: 'row-label', 'text-anchor': 'end' }, row.label));
    row.intervals.forEach((interval, k) => {
      if (!finite(interval.lower) || !finite(interval.upper)) return;
      const y = mid + (k - (row.intervals.length - 1) / 2) * 8;
      plot.append(svg('line', { x1: x(interval.lower), y1: y, x2: x(interval.upper), y2: y, class: `interval ${interval.kind}` },
        svg('title', {}, `${row.label}: ${interval.name || interval.kind} ${format(interval.lower)} to ${format(interval.upper)}`)));
    });
    if (finite(row.estimate)) {
      plot.append(svg('circle', { cx: x(row.estimate), cy: mid, r: 5, class: 'estimate' },
        svg('title', {}, `${row.label}: ${format(row.estimate)}`)));
    } else {
      plot.append(svg('text', { x: pad.l + 6, y: mid + 4, class: 'tick' }, 'no estimate yet'));
    }
  });
  return plot;
}

// Units per treatment over time as step lines (cumulative counts); `series` is
// [{name, points: [[ms, units], ...]}] with points in time order.
export function unitsPlot(series, { label, width = 640, height = 200 } = {}) {
  const pad = { l: 56, r: 16, t: 10, b: 28 };
  const times = series.flatMap((s) => s.points.map((p) => p[0]));
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const max = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])));
  const x = (t) => pad.l + ((t - t0) / (t1 - t0 || 1)) * (width - pad.l - pad.r);
  const y = (v) => height - pad.b - (v / max) * (height - pad.t - pad.b);
  const plot = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart units-plot', 'aria-label': label });
  plot.append(svg('line', { x1: pad.l, y1: y(0), x2: width - pad.r, y2: y(0), class: 'axis' }));
  plot.append(svg('text', { x: pad.l - 6, y: y(max) + 4, class: 'tick', 'text-anchor': 'end' }, String(max)));
  plot.append(svg('text', { x: pad.l - 6, y: y(0) + 4, class: 'tick', 'text-anchor': 'end' }, '0'));
  const when = (t) => new Date(t).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  plot.append(svg('text', { x: pad.l, y: height - 8, class: 'tick', 'text-anchor': 'start' }, when(t0)));
  plot.append(svg('text', { x: width - pad.r, y: height - 8, class: 'tick', 'text-anchor': 'end' }, when(t1)));
  series.forEach((s, i) => {
    let path = '';
    let last = 0;
    for (const [t, units] of s.points) {
      path += path ? ` L${x(t).toFixed(1)},${y(last).toFixed(1)} L${x(t).toFixed(1)},${y(units).toFixed(1)}` : `M${x(t).toFixed(1)},${y(units).toFixed(1)}`;
      last = units;
    }
    plot.append(svg('path', { d: path, class: `series series-${i % 8}`, fill: 'none' }, svg('title', {}, `${s.name}: ${last} units`)));
  });
  return plot;
}
