// A flag's progressive and guarded rollouts in the current environment (docs/rollouts.md): the
// newest release's stages, the last comparison of each guardrail metric (difference of new and
// original with its always-valid interval, against the threshold), the decision and why, and
// every step as a timeline; older releases folded below. Started, paused, resumed and stopped
// by the flag's semantic patch (`startAutomatedRelease` and its family).
import { get, enc } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';
import { intervalPlot } from './interval_plot.js';
import { metricsUrl } from './metrics_page.js';

const ACTIVE = ['in_progress', 'paused', 'monitoring_regressed'];
const STATUS = {
  in_progress: 'in progress', paused: 'paused', monitoring_regressed: 'regressed, held for you',
  completed: 'completed', reverted: 'rolled back', manually_completed: 'completed by hand',
  manually_reverted: 'reverted by hand', monitoring_stopped: 'stopped watching', not_started: 'not started',
};
const LOOK = { ok: 'no regression', regressed: 'regressed', insufficient: 'too little data' };

const pct = (allocation) => `${(allocation / 1000).toLocaleString(undefined, { maximumFractionDigits: 3 })}%`;
function duration(ms) {
  if (ms >= 86400000 && ms % 3600000 === 0) return `${ms / 86400000} d`;
  if (ms >= 3600000) return `${(ms / 3600000).toFixed(ms % 3600000 ? 1 : 0)} h`;
  if (ms >= 60000) return `${Math.round(ms / 60000)} min`;
  return `${(ms / 1000).toLocaleString()} s`;
}

export function releasesUrl(project, key, env) {
  return `/api/v2/projects/${enc(project)}/flags/${enc(key)}/environments/${enc(env)}/automated-releases`;
}

// Why the release is where it is, in one sentence, from its status and last look.
export function decision(release) {
  if (release.notice) return release.notice;
  const looks = (release.lastLook || {}).metrics || [];
  const stage = `stage ${release.stageIndex + 1} of ${release.stages.length}`;
  switch (release.status) {
    case 'in_progress': {
      if (!looks.length) return `At ${stage}; ${release.releaseKind === 'guarded' ? 'no look at the metrics yet' : 'it moves on when the stage\u2019s time is up'}.`;
      const short = looks.filter((l) => l.status === 'insufficient');
      if (short.length) return `Holding ${stage}: ${short.map((l) => `${l.metricKey} has ${l.originalUnits} original and ${l.newUnits} new units, fewer than ${release.minSampleSize} per variation`).join('; ')}. It never proceeds without the data.`;
      return `At ${stage}: no metric has regressed; it moves on when the stage\u2019s time is up.`;
    }
    case 'paused': return `Paused at ${stage}; the stage\u2019s clock is stopped.`;
    case 'completed': return 'Completed: every stage passed, the new variation is served to all.';
    default: return `${STATUS[release.status] || release.status}.`;
  }
}

function stagesList(release) {
  const done = ['completed', 'manually_completed'].includes(release.status);
  return h('ol', { class: 'stages' }, release.stages.map((stage, i) => {
    const state = done || i < release.stageIndex ? 'done' : i === release.stageIndex ? (ACTIVE.includes(release.status) ? 'current' : 'stopped') : 'pending';
    return h('li', { class: `stage ${state}`, 'aria-current': state === 'current' ? 'step' : null },
      h('strong', {}, pct(stage.allocation)), h('span', { class: 'muted' }, ` for ${duration(stage.durationMillis)}`),
      h('span', { class: 'visually-hidden' }, ` (${state})`));
  }));
}

function comparisons(release) {
  const looks = (release.lastLook || {}).metrics || [];
  if (!looks.length) return h('p', { class: 'muted' }, release.releaseKind === 'guarded' ? 'No comparison yet: the worker has not looked at this stage.' : 'A progressive rollout watches no metrics.');
  const plot = intervalPlot(looks.map((l) => ({
    label: l.metricKey,
    estimate: l.difference,
    intervals: [{ ...(l.sequentialConfidenceInterval || {}), kind: 'seq', name: 'always-valid interval' }],
  })), { label: `New minus original per guardrail metric at stage ${release.lastLook.stageIndex + 1}`, format: (v) => v.toPrecision(2) });
  const table = h('table', { class: 'list compact' },
    h('caption', {}, `Last look, stage ${release.lastLook.stageIndex + 1}, `, time(release.lastLook.at)),
    h('thead', {}, h('tr', {}, ['Metric', 'Verdict', 'Original units', 'New units', 'New − original', 'Always-valid interval', 'Tolerated'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, looks.map((l) => h('tr', {},
      h('th', { scope: 'row' }, l.metricKey),
      h('td', {}, h('span', { class: `pill ${l.status === 'ok' ? 'on' : l.status === 'regressed' ? 'off' : ''}` }, LOOK[l.status] || l.status)),
      h('td', {}, String(l.originalUnits)), h('td', {}, String(l.newUnits)),
      h('td', {}, typeof l.difference === 'number' ? l.difference.toPrecision(3) : '—'),
      h('td', {}, l.sequentialConfidenceInterval ? `${l.sequentialConfidenceInterval.lower.toPrecision(3)} to ${l.sequentialConfidenceInterval.upper.toPrecision(3)}` : '—'),
      h('td', {}, `${((l.threshold || 0) * 100).toFixed(1)}% of the original`)))));
  return h('div', {}, plot, table);
}

function timeline(release) {
  return h('ol', { class: 'timeline' }, [...release.events].reverse().map((e) => h('li', { class: `event ${e.kind}` },
    time(e.createdAt), ' ', h('span', { class: 'pill' }, `stage ${e.stageIndex + 1}`), ' ', e.description)));
}

function releaseCard(release, flag, actions) {
  const name = (id) => { const v = flag.variations.find((x) => x._id === id); return v ? (v.name || JSON.stringify(v.value)) : id; };
  const where = release.ruleId === 'fallthrough' ? 'the default rule' : `rule ${release.ruleId}`;
  const regressed = ['reverted', 'monitoring_regressed'].includes(release.status);
  return h('article', { class: 'release', dataset: { id: release._id } },
    h('h3', {}, `${release.releaseKind === 'guarded' ? 'Guarded' : 'Progressive'} rollout of ${name(release.targetVariationId)} on ${where} `,
      h('span', { class: `pill ${regressed ? 'off' : ACTIVE.includes(release.status) || release.status === 'completed' ? 'on' : ''}` }, STATUS[release.status] || release.status)),
    h('p', { class: regressed ? 'notice error decision' : 'decision', role: regressed ? 'alert' : null }, decision(release)),
    h('p', { class: 'muted' }, `From ${name(release.originalVariationId)} to ${name(release.targetVariationId)}, randomized by ${release.randomizationUnit}`,
      release.releaseKind === 'guarded' ? `; at least ${release.minSampleSize} units per variation and stage; metrics ${release.metrics.map((m) => `${m.key}${m.autoRollback ? ' (rolls back)' : ' (holds)'}`).join(', ')}` : '', '.'),
    stagesList(release), actions, h('h4', {}, 'Metric comparisons'),
    release.releaseKind === 'guarded' ? h('p', { class: 'muted' }, 'New minus original over the units of the current stage; the line is the always-valid interval, safe to read at every look. A metric regresses when the whole interval lies past the tolerated change on its worse side.') : null,
    comparisons(release), h('h4', {}, 'Timeline'), timeline(release));
}

// The start form: kind, where, original and target, stages, and (guarded) metrics.
function startForm(flag, metrics, env, start) {
  const variations = flag.variations.map((v, i) => [v._id, v.name || `${i}: ${JSON.stringify(v.value)}`]);
  const config = flag.environments[env];
  const kind = select([['guarded', 'Guarded (watches metrics, rolls back)'], ['progressive', 'Progressive (stages only)']], 'guarded');
  const rule = select([['fallthrough', 'Default rule'], ...(config.rules || []).map((r, i) => [r._id, `Rule ${i + 1}${r.description ? `: ${r.description}` : ''}`])], 'fallthrough');
  const original = select(variations, variations[Math.min(1, variations.length - 1)][0]);
  const target = select(variations, variations[0][0]);
  const stages = h('input', { autocomplete: 'off', value: '1, 5, 25, 50' });
  const minutes = h('input', { type: 'number', min: 0, step: 'any', value: 60, class: 'pct' });
  const minimum = h('input', { type: 'number', min: 2, value: 100, class: 'pct' });
  const chosen = metrics.map((m) => [m, h('input', { type: 'checkbox', id: `release-metric-${m.key}` })]);
  const metricBox = h('fieldset', { class: 'parts', 'data-field': '/instructions/0/metrics' }, h('legend', {}, 'Guardrail metrics'),
    chosen.length ? chosen.map(([m, box]) => h('div', { class: 'check' }, box, h('label', { for: box.id }, m.name || m.key)))
      : h('p', { class: 'muted' }, 'No metrics in this project yet.'));
  const form = h('form', { class: 'release-start', novalidate: true, 'aria-label': `Start a rollout in ${env}` },
    h('div', { class: 'row' }, field('Kind', kind), field('On', rule), field('From', original), field('To', target)),
    h('div', { class: 'row' },
      field('Stages (% of units)', stages, { field: '/instructions/0/stages', hint: 'Growing; 100% is reached on completing' }),
      field('Minutes per stage', minutes, { field: '/instructions/0/stages/0/durationMillis' }),
      field('Minimum units', minimum, { field: '/instructions/0/minSampleSize', hint: 'Per variation and stage' })),
    metricBox,
    h('button', { type: 'submit', class: 'primary' }, 'Start rollout'));
  kind.addEventListener('change', () => { metricBox.hidden = kind.value !== 'guarded'; minimum.closest('.field').hidden = kind.value !== 'guarded'; });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const instruction = {
      kind: 'startAutomatedRelease',
      releaseKind: kind.value,
      originalVariationId: original.value,
      targetVariationId: target.value,
      randomizationUnit: 'user',
      stages: stages.value.split(/[\s,]+/).filter(Boolean).map((p) => ({ allocation: Math.round(Number(p) * 1000), durationMillis: Math.round(Number(minutes.value) * 60000) })),
    };
    if (rule.value !== 'fallthrough') instruction.ruleId = rule.value;
    if (kind.value === 'guarded') {
      instruction.metrics = chosen.filter(([, box]) => box.checked).map(([m]) => ({ key: m.key }));
      instruction.minSampleSize = Number(minimum.value);
    }
    start(instruction, form);
  });
  return form;
}

// `send(instructions, form?)` patches the flag; the section redraws after every change.
export function releasesSection(ctx, key, { canWrite, currentFlag, send }) {
  const { app } = ctx;
  const host = h('div', { id: 'flag-releases' });

  async function refresh() {
    const flag = currentFlag();
    const [answer, metricAnswer] = await Promise.all([get(releasesUrl(app.project, key, app.env)), get(`${metricsUrl(app.project)}?limit=1000`).catch(() => ({ items: [] }))]);
    const releases = answer.items || [];
    const [latest, ...older] = releases;
    const ruleOf = (release) => (release.ruleId === 'fallthrough' ? {} : { ruleId: release.ruleId });
    function actions(release) {
      if (!canWrite || !ACTIVE.includes(release.status)) return null;
      const label = (v) => { const x = flag.variations.find((y) => y._id === v); return x ? (x.name || JSON.stringify(x.value)) : v; };
      return h('div', { class: 'actions' },
        release.status === 'in_progress' ? button('Pause', () => send([{ kind: 'pauseAutomatedRelease', ...ruleOf(release) }])) : button('Resume', () => send([{ kind: 'resumeAutomatedRelease', ...ruleOf(release) }])),
        button(`Stop and serve ${label(release.targetVariationId)}`, () => send([{ kind: 'stopAutomatedRelease', finalVariationId: release.targetVariationId, ...ruleOf(release) }])),
        button(`Stop and serve ${label(release.originalVariationId)}`, () => send([{ kind: 'stopAutomatedRelease', finalVariationId: release.originalVariationId, ...ruleOf(release) }]), { class: 'danger' }));
    }
    const running = latest && ACTIVE.includes(latest.status);
    const guardable = (metricAnswer.items || []).filter((m) => m.kind === 'custom');
    clear(host,
      latest ? releaseCard(latest, flag, actions(latest)) : h('p', { class: 'muted' }, `No progressive or guarded rollout of this flag in ${app.env} yet.`),
      older.length ? h('details', {}, h('summary', {}, `${older.length} earlier rollouts`), older.map((r) => releaseCard(r, flag, null))) : null,
      canWrite && !running ? h('details', { class: 'start-release' }, h('summary', {}, 'Start a rollout'),
        startForm(flag, guardable, app.env, (instruction, form) => send([instruction], form))) : null);
  }
  return { element: host, refresh };
}
