// Metrics of a project (docs/experiments.md, "Metrics"): the list, creating a custom conversion
// or numeric metric, and a metric's editor, which saves a JSON Patch of the fields changed and
// deletes (the server refuses a metric an experiment measures). Problem paths land on fields.
import { get, post, del, call, enc, ApiError } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';

const CRITERIA = [['HigherThanBaseline', 'Higher is better'], ['LowerThanBaseline', 'Lower is better (errors, latency)']];
const MEASURES = [['conversion', 'Conversion: did the unit send the event'], ['sum', 'Numeric: sum of the values per unit'], ['average', 'Numeric: average of the values per unit']];

export const metricsUrl = (project) => `/api/v2/metrics/${enc(project)}`;

function measureOf(metric) {
  if (!metric.isNumeric) return 'conversion';
  return metric.unitAggregationType === 'average' ? 'average' : 'sum';
}

export function describeMetric(metric) {
  if (metric.kind !== 'custom') return `${metric.kind} metric (no results: browser goals are not tallied)`;
  const better = metric.successCriteria === 'LowerThanBaseline' ? 'lower is better' : 'higher is better';
  const what = { conversion: 'conversion', sum: 'sum per unit', average: 'average per unit' }[measureOf(metric)];
  return `${what} of “${metric.eventKey}”, ${better}`;
}

// The editable fields as the API names them; `metric` fills them for an edit.
function metricForm(metric, canWrite) {
  const controls = {
    name: h('input', { autocomplete: 'off', value: metric ? metric.name : '' }),
    key: h('input', { autocomplete: 'off', value: metric ? metric.key : '', disabled: Boolean(metric) }),
    description: h('input', { autocomplete: 'off', value: metric ? metric.description || '' : '' }),
    eventKey: h('input', { autocomplete: 'off', value: metric ? metric.eventKey || '' : '' }),
    measure: select(MEASURES, metric ? measureOf(metric) : 'conversion'),
    successCriteria: select(CRITERIA, metric ? metric.successCriteria || 'HigherThanBaseline' : 'HigherThanBaseline'),
    unit: h('input', { autocomplete: 'off', value: metric ? metric.unit || '' : '', placeholder: 'ms, USD' }),
    randomizationUnits: h('input', { autocomplete: 'off', value: metric ? (metric.randomizationUnits || ['user']).join(', ') : 'user' }),
  };
  // a new metric's key follows its name until the key is edited
  let keyTouched = Boolean(metric);
  controls.name.addEventListener('input', () => {
    if (!keyTouched) controls.key.value = controls.name.value.trim().toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  });
  controls.key.addEventListener('input', () => { keyTouched = true; });
  for (const control of Object.values(controls)) if (!canWrite) control.disabled = true;
  const fields = h('div', {},
    h('div', { class: 'row' }, field('Name', controls.name, { field: '/name' }), field('Key', controls.key, { field: '/key' })),
    field('Description', controls.description, { field: '/description' }),
    h('div', { class: 'row' },
      field('Event key', controls.eventKey, { field: '/eventKey', hint: 'The key the application passes to track()' }),
      field('Measure', controls.measure, { field: '/isNumeric' }),
      field('Success', controls.successCriteria, { field: '/successCriteria' })),
    h('div', { class: 'row' },
      field('Unit', controls.unit, { field: '/unit', hint: 'Numeric metrics only' }),
      field('Randomization units', controls.randomizationUnits, { field: '/randomizationUnits', hint: 'Context kinds, comma-separated' })));
  function values() {
    const measure = controls.measure.value;
    const body = {
      name: controls.name.value.trim(),
      description: controls.description.value.trim(),
      eventKey: controls.eventKey.value.trim(),
      isNumeric: measure !== 'conversion',
      successCriteria: controls.successCriteria.value,
      randomizationUnits: controls.randomizationUnits.value.split(',').map((v) => v.trim()).filter(Boolean),
    };
    if (measure !== 'conversion') body.unitAggregationType = measure;
    if (measure !== 'conversion' && controls.unit.value.trim()) body.unit = controls.unit.value.trim();
    return body;
  }
  return { fields, values, key: () => controls.key.value.trim() };
}

function fail(form, notify, error) {
  const where = error.status === 409 && error.path === undefined ? '/key' : error.path;
  if (!(error instanceof ApiError) || !showFieldError(form, where, error.message)) notify(error.message, 'error');
}

const canWriteIn = (app) => app.session.role !== 'reader' && (!app.session.projectKey || app.session.projectKey === app.project);

export async function list(ctx) {
  const { app, main, notify, go, base, flash } = ctx;
  const answer = await get(`${metricsUrl(app.project)}?limit=1000`);
  const canWrite = canWriteIn(app);
  const made = metricForm(null, canWrite);
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'new-metric' },
    h('h2', { id: 'new-metric' }, 'New metric'), made.fields,
    h('button', { type: 'submit', class: 'primary', disabled: !canWrite }, 'Create metric'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    try {
      const created = await post(metricsUrl(app.project), { key: made.key(), kind: 'custom', ...made.values() });
      flash(`Created metric ${created.key}.`, 'success');
      go(`${base()}/metrics/${enc(created.key)}`);
    } catch (error) { fail(form, notify, error); }
  });
  const items = answer.items || [];
  clear(main, h('h1', {}, `Metrics of ${app.project}`),
    items.length ? h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, `Metrics of ${app.project}`),
      h('thead', {}, h('tr', {}, ['Metric', 'Measures', 'Randomization', 'Experiments', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, items.map((m) => h('tr', {},
        h('th', { scope: 'row' }, h('a', { href: `${base()}/metrics/${enc(m.key)}` }, m.name || m.key), h('div', { class: 'mono muted' }, m.key)),
        h('td', {}, describeMetric(m)),
        h('td', {}, (m.randomizationUnits || ['user']).join(', ')),
        h('td', {}, String(m.experimentCount || 0)),
        h('td', {}, time(m._creationDate))))))
      : h('p', { class: 'empty' }, 'No metrics yet. A metric counts what the application tracks; experiments and guarded rollouts measure it.'),
    form);
}

// A JSON Patch of the fields whose value changed (unitAggregationType and unit are removed from
// a conversion metric).
export function metricPatch(before, after) {
  const ops = [];
  for (const [name, value] of Object.entries(after)) {
    if (JSON.stringify(before[name]) !== JSON.stringify(value)) ops.push({ op: before[name] === undefined ? 'add' : 'replace', path: `/${name}`, value });
  }
  for (const name of ['unitAggregationType', 'unit']) {
    if (before[name] !== undefined && after[name] === undefined) ops.push({ op: 'remove', path: `/${name}` });
  }
  return ops;
}

export async function render(ctx, rawKey) {
  const { app, main, notify, go, base, flash } = ctx;
  const key = decodeURIComponent(rawKey);
  const url = `${metricsUrl(app.project)}/${enc(key)}`;
  const metric = await get(url);
  const canWrite = canWriteIn(app);
  const edit = metricForm(metric, canWrite);
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'metric-settings' },
    h('h2', { id: 'metric-settings' }, 'Settings'), edit.fields,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary', disabled: !canWrite }, 'Save metric'),
      button('Delete metric', async () => {
        if (!window.confirm(`Delete the metric ${key}?`)) return;
        try { await del(url); flash(`Deleted metric ${key}.`, 'success'); go(`${base()}/metrics`); } catch (error) { notify(error.message, 'error'); }
      }, { class: 'danger', disabled: !canWrite })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const ops = metricPatch(metric, edit.values());
    if (!ops.length) { notify('Nothing changed.', 'info'); return; }
    try {
      await call('PATCH', url, { body: ops });
      flash(`Saved metric ${key}.`, 'success');
      go(location.hash);
    } catch (error) { fail(form, notify, error); }
  });
  clear(main, h('p', {}, h('a', { href: `${base()}/metrics` }, '← Metrics')),
    h('h1', {}, metric.name || key),
    h('p', { class: 'muted' }, `${describeMetric(metric)} · measured by ${metric.experimentCount || 0} experiments · version ${metric._version}`),
    form);
}
