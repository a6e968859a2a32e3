// Experiments of an environment (docs/experiments.md): the list, and an experiment's page with
// its iterations, starting and stopping the current one (optionally shipping a winner), and the
// results of every metric: lift per treatment with its confidence interval and always-valid
// sequence as an SVG plot, the chance to beat the baseline, units, and the sample-ratio warning;
// and the units per treatment over time (`…/exposures`).
import { get, post, call, enc, ApiError } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';
import { intervalPlot, unitsPlot } from './interval_plot.js';
import { metricsUrl, describeMetric } from './metrics_page.js';

const experimentsUrl = (app) => `/api/v2/projects/${enc(app.project)}/environments/${enc(app.env)}/experiments`;
const STATUS = { not_started: 'draft', running: 'running', stopped: 'stopped' };

export function iterationsOf(experiment) {
  const all = [...(experiment.previousIterations || [])];
  if (experiment.currentIteration) all.push(experiment.currentIteration);
  if (experiment.draftIteration) all.push(experiment.draftIteration);
  return all;
}

const newest = (experiment) => iterationsOf(experiment).slice(-1)[0];
const statusPill = (status) => h('span', { class: `pill ${status === 'running' ? 'on' : ''}` }, STATUS[status] || status);

export async function list(ctx) {
  const { app, main, base } = ctx;
  const answer = await get(experimentsUrl(app));
  const items = answer.items || [];
  clear(main, h('h1', {}, `Experiments in ${app.env}`),
    items.length ? h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, `Experiments in ${app.env}`),
      h('thead', {}, h('tr', {}, ['Experiment', 'Flag', 'Status', 'Metrics', 'Started'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, items.map((e) => {
        const it = newest(e);
        return h('tr', {},
          h('th', { scope: 'row' }, h('a', { href: `${base()}/experiments/${enc(e.key)}` }, e.name), h('div', { class: 'mono muted' }, e.key)),
          h('td', { class: 'mono' }, Object.keys(it.flags || {}).join(', ')),
          h('td', {}, statusPill(it.status), e.archivedDate ? ' archived' : ''),
          h('td', {}, (it.metrics || []).map((m) => m.key).join(', ')),
          h('td', {}, it.startedAt ? time(it.startedAt) : '—'));
      })))
      : h('p', { class: 'empty' }, `No experiments in ${app.env} yet. Create one with POST ${experimentsUrl(app)} (docs/experiments.md).`),
    h('p', { class: 'muted' }, h('a', { href: `${base()}/metrics` }, 'Metrics'), ' are what experiments measure.'));
}

const percent = (v, digits = 1) => (typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toFixed(digits)}%` : '—');
const number = (v) => (typeof v === 'number' && Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(3)) : '—');
const interval = (i, fmt) => (i ? `${fmt(i.lower)} to ${fmt(i.upper)}` : '—');
const pValue = (p) => (typeof p === 'number' ? (p < 0.0001 ? '< 0.0001' : p.toFixed(4)) : '—');

// One metric's results: the SRM warning, the plot and the table with the same numbers.
export function resultsView(metric, results) {
  const kind = results.analysis.differenceKind;
  const fmt = kind === 'relative' ? (v) => percent(v) : number;
  const arms = results.treatmentResults;
  const srm = results.sampleRatioMismatch;
  const warning = srm && srm.detected ? h('p', { class: 'notice error srm', role: 'alert' },
    `Sample ratio mismatch: the units per treatment do not match the allocation (χ² = ${srm.chiSquared.toFixed(1)}, p = ${pValue(srm.pValue)} < ${srm.threshold}). Exposure may be broken (a redirect, a bot filter, a bug in one variation); do not trust these results until it is explained.`) : null;
  const compared = arms.filter((a) => !a.baseline);
  const baseline = arms.find((a) => a.baseline);
  const plot = intervalPlot(compared.map((a) => ({
    label: a.treatmentName,
    estimate: a.difference,
    intervals: [
      { ...(a.confidenceInterval || {}), kind: 'ci', name: '95% confidence interval' },
      { ...(a.sequentialConfidenceInterval || {}), kind: 'seq', name: 'always-valid interval' },
    ],
  })), { label: `${kind === 'relative' ? 'Relative' : 'Absolute'} lift of ${metric.key} against ${baseline ? baseline.treatmentName : 'the baseline'}`, format: fmt });
  const better = results.analysis.successCriteria === 'LowerThanBaseline' ? 'lower is better' : 'higher is better';
  const table = h('table', { class: 'list compact results' },
    h('caption', {}, `${metric.name || metric.key}: ${describeMetric(metric)}`),
    h('thead', {}, h('tr', {}, ['Treatment', 'Units', 'Mean', 'Lift', 'Confidence interval', 'Always-valid interval', 'p-value (Holm)', 'Chance to beat baseline', 'Chance to be best'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, arms.map((a) => h('tr', {},
      h('th', { scope: 'row' }, a.treatmentName, a.baseline ? h('span', { class: 'muted' }, ' (baseline)') : null),
      h('td', {}, String(a.units)),
      h('td', {}, number(a.dataMean)),
      h('td', {}, a.baseline ? '—' : a.shortfall ? `not yet: ${a.shortfall}` : fmt(a.difference)),
      h('td', {}, a.baseline ? '—' : interval(a.confidenceInterval, fmt)),
      h('td', {}, a.baseline ? '—' : interval(a.sequentialConfidenceInterval, fmt)),
      h('td', {}, a.baseline ? '—' : pValue(a.adjustedPValue ?? a.pValue)),
      h('td', { class: 'chance' }, a.baseline ? '—' : percent(a.probabilityToBeatBaseline)),
      h('td', {}, percent(a.pBest))))));
  return h('div', { class: 'metric-results' }, warning,
    h('p', { class: 'muted' }, `${kind === 'relative' ? 'Relative' : 'Absolute'} lift against the baseline, ${better}; dots are estimates, thick bars the ${Math.round((1 - results.analysis.alpha) * 100)}% confidence interval (read once), thin bars the always-valid interval (safe to read at any time).`),
    plot,
    h('ul', { class: 'legend' }, h('li', {}, h('span', { class: 'swatch ci' }), 'confidence interval'), h('li', {}, h('span', { class: 'swatch seq' }), 'always-valid interval')),
    table);
}

function iterationSummary(iteration) {
  const treatments = iteration.treatments.map((t) => `${t.name} ${t.allocationPercent}%${t.baseline ? ' (baseline)' : ''}`).join(', ');
  const [flagKey, ref] = Object.entries(iteration.flags)[0];
  const where = ref.ruleId === 'fallthrough' ? 'the default rule' : `rule ${ref.ruleId}`;
  return h('dl', { class: 'facts' },
    h('dt', {}, 'Hypothesis'), h('dd', {}, iteration.hypothesis || '—'),
    h('dt', {}, 'Flag'), h('dd', {}, h('span', { class: 'mono' }, flagKey), ` · ${where} · randomized by ${iteration.randomizationUnit}`),
    h('dt', {}, 'Treatments'), h('dd', {}, treatments),
    h('dt', {}, 'Dates'), h('dd', {}, iteration.startedAt ? time(iteration.startedAt) : 'not started', ' – ', iteration.endedAt ? time(iteration.endedAt) : iteration.startedAt ? 'now' : ''),
    iteration.winningTreatmentId ? [h('dt', {}, 'Winner'), h('dd', {}, iteration.treatments.find((t) => t._id === iteration.winningTreatmentId)?.name || iteration.winningTreatmentId, iteration.winningReason ? ` — ${iteration.winningReason}` : '')] : null);
}

// Units per treatment as they grew: a step line per treatment from the iteration's start (0) to
// its end or now, each step at the end of the hour the units were first exposed in.
export function unitsView(answer) {
  const end = answer.endedAt || Date.now();
  const first = Math.min(...answer.treatments.flatMap((t) => t.series.map((p) => p.time)));
  const start = Math.min(answer.startedAt || first, end);
  const at = (hour) => Math.max(start, Math.min(hour + answer.bucketMillis, end));
  const series = answer.treatments.map((t) => {
    const points = [[start, 0], ...t.series.map((p) => [at(p.time), p.units])];
    return { name: t.treatmentName, points: [...points, [end, points[points.length - 1][1]]] };
  });
  const hours = [...new Set(answer.treatments.flatMap((t) => t.series.map((p) => p.time)))].sort((a, b) => a - b);
  const unitsBy = (t, hour) => t.series.filter((p) => p.time <= hour).reduce((_, p) => p.units, 0);
  return h('div', {},
    unitsPlot(series, { label: 'Exposed units per treatment over time' }),
    h('ul', { class: 'legend' }, series.map((s, i) => h('li', {}, h('span', { class: 'swatch', dataset: { color: String(i % 8) } }), s.name))),
    h('details', {}, h('summary', {}, 'Numbers'), h('table', { class: 'list compact' },
      h('caption', {}, 'Units by the end of each hour with new exposures'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Hour'), answer.treatments.map((t) => h('th', { scope: 'col' }, t.treatmentName)))),
      h('tbody', {}, hours.map((hour) => h('tr', {}, h('th', { scope: 'row' }, time(hour)), answer.treatments.map((t) => h('td', {}, String(unitsBy(t, hour))))))))));
}

// The input of a new iteration like `iteration`, at the flag's current version.
function nextIteration(iteration, flag, env) {
  const flags = {};
  for (const [key, ref] of Object.entries(iteration.flags)) flags[key] = { ruleId: ref.ruleId, flagConfigVersion: flag.environments[env].version };
  return {
    hypothesis: iteration.hypothesis,
    metrics: iteration.metrics.map((m) => ({ key: m.key })),
    primarySingleMetricKey: iteration.primarySingleMetricKey,
    treatments: iteration.treatments.map((t) => ({ name: t.name, baseline: t.baseline, allocationPercent: t.allocationPercent, parameters: t.parameters })),
    flags,
    randomizationUnit: iteration.randomizationUnit,
  };
}

export async function render(ctx, rawKey, query = '') {
  const { app, main, notify, base } = ctx;
  const key = decodeURIComponent(rawKey);
  const url = `${experimentsUrl(app)}/${enc(key)}`;
  const experiment = await get(url);
  const iterations = iterationsOf(experiment);
  const chosenId = new URLSearchParams(query).get('iteration');
  const started = iterations.filter((it) => it.status !== 'not_started');
  const shown = iterations.find((it) => it._id === chosenId) || started.slice(-1)[0] || iterations.slice(-1)[0];
  const last = iterations.slice(-1)[0];
  const [flagKey] = Object.keys(last.flags);
  const [flag, metricAnswer] = await Promise.all([
    get(`/api/v2/flags/${enc(app.project)}/${enc(flagKey)}`),
    get(`${metricsUrl(app.project)}?limit=1000`),
  ]);
  const metrics = new Map((metricAnswer.items || []).map((m) => [m.key, m]));
  const who = app.session;
  const canWrite = who.role !== 'reader' && (!who.projectKey || who.projectKey === app.project) && (!who.environmentKey || who.environmentKey === app.env);
  const reload = () => ctx.go(location.hash);

  async function instruct(instruction, done) {
    try {
      await call('PATCH', url, { body: { instructions: [instruction] }, semantic: true });
      ctx.flash(done, 'success');
      reload();
    } catch (error) { notify(error.message, 'error'); }
  }
  const controls = h('div', { class: 'actions' });
  if (last.status === 'not_started') {
    controls.append(button('Start iteration', () => instruct({ kind: 'startIteration' }, `Started ${experiment.name}: ${flagKey} now serves the treatments.`), { class: 'primary', disabled: !canWrite }));
  } else if (last.status === 'running') {
    const winner = select([['', 'No winner: serve what was served before'], ...last.treatments.map((t) => [t._id, `Ship ${t.name}`])], '');
    const reason = h('input', { autocomplete: 'off' });
    controls.append(field('When stopping', winner), field('Reason', reason),
      button('Stop iteration', () => {
        const stop = { kind: 'stopIteration' };
        if (winner.value) { stop.winningTreatmentId = winner.value; if (reason.value.trim()) stop.winningReason = reason.value.trim(); }
        instruct(stop, `Stopped ${experiment.name}.`);
      }, { class: 'danger', disabled: !canWrite }));
  } else {
    controls.append(button('New iteration', async () => {
      try {
        await post(`${url}/iterations`, nextIteration(last, flag, app.env));
        ctx.flash('Added a draft iteration with the same treatments and metrics.', 'success');
        reload();
      } catch (error) { notify(error instanceof ApiError ? error.message : String(error), 'error'); }
    }, { disabled: !canWrite }));
  }
  const iterationRows = iterations.map((it, i) => h('tr', { class: it === shown ? 'current' : null },
    h('th', { scope: 'row' }, it.status === 'not_started' ? `${i + 1} (draft)`
      : h('a', { href: `${base()}/experiments/${enc(key)}?iteration=${enc(it._id)}`, 'aria-current': it === shown ? 'true' : null }, `Iteration ${i + 1}`)),
    h('td', {}, statusPill(it.status)),
    h('td', {}, it.startedAt ? time(it.startedAt) : '—'),
    h('td', {}, it.endedAt ? time(it.endedAt) : '—'),
    h('td', {}, it.winningTreatmentId ? (it.treatments.find((t) => t._id === it.winningTreatmentId) || {}).name : '—')));
  const resultsHost = h('div', { id: 'experiment-results', 'aria-live': 'polite' });
  const unitsHost = h('div', { id: 'experiment-units' });
  clear(main, h('p', {}, h('a', { href: `${base()}/experiments` }, '← Experiments')),
    h('div', { class: 'titlebar' }, h('h1', {}, experiment.name, ' ', statusPill(last.status)), controls),
    experiment.description ? h('p', {}, experiment.description) : null,
    h('section', { class: 'card', 'aria-labelledby': 'sec-iteration' }, h('h2', { id: 'sec-iteration' }, `Iteration ${iterations.indexOf(shown) + 1}`), iterationSummary(shown)),
    h('section', { class: 'card', 'aria-labelledby': 'sec-iterations' }, h('h2', { id: 'sec-iterations' }, 'Iterations'),
      h('table', { class: 'list compact' }, h('caption', { class: 'visually-hidden' }, 'Iterations'),
        h('thead', {}, h('tr', {}, ['Iteration', 'Status', 'Started', 'Stopped', 'Winner'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, iterationRows))),
    h('section', { 'aria-labelledby': 'sec-results' }, h('h2', { id: 'sec-results' }, 'Results'), resultsHost),
    h('section', { class: 'card', 'aria-labelledby': 'sec-units' }, h('h2', { id: 'sec-units' }, 'Sample sizes over time'), unitsHost));
  if (shown.status === 'not_started') {
    clear(resultsHost, h('p', { class: 'empty' }, 'Not started yet: results appear once the iteration runs and SDKs report exposures.'));
    clear(unitsHost, h('p', { class: 'muted' }, 'Not started yet.'));
    return;
  }
  const parts = await Promise.all(shown.metrics.map(async (m) => {
    const metric = metrics.get(m.key) || { key: m.key, kind: 'custom' };
    const card = h('section', { class: 'card', 'aria-labelledby': `res-${m.key}`, dataset: { metric: m.key } },
      h('h3', { id: `res-${m.key}` }, metric.name || m.key, m.key === shown.primarySingleMetricKey ? h('span', { class: 'muted' }, ' · primary') : null));
    try {
      const results = await get(`${url}/metrics/${enc(m.key)}/results?iterationId=${enc(shown._id)}`);
      card.append(results.metricSeen && !results.metricSeen.ever
        ? h('p', { class: 'muted' }, 'No exposures yet: no SDK has reported an evaluation in this iteration.')
        : resultsView(metric, results));
    } catch (error) {
      card.append(h('p', { class: 'muted' }, `No results: ${error.message}`));
    }
    return card;
  }));
  clear(resultsHost, parts);
  try {
    const units = await get(`${url}/exposures?iterationId=${enc(shown._id)}`);
    clear(unitsHost, units.treatments.some((t) => t.series.length) ? unitsView(units) : h('p', { class: 'muted' }, 'No exposures yet.'));
  } catch (error) {
    clear(unitsHost, h('p', { class: 'muted' }, `No data: ${error.message}`));
  }
}
