// What surrounds a flag on its page: the segments its rules use and the flags that depend on
// it (prerequisites), its change history with diffs, and two environments side by side with a
// copy of the chosen parts from one to the other (the API's `POST .../copy`).
import { get, post, enc, ApiError } from './api.js';
import { h, clear, field, select } from './dom.js';
import { auditEntry, diffBlock } from './audit_entry.js';
import { variationLabel } from './targeting_draft.js';

export function usage(flag, env, allFlags, segments, base) {
  const config = flag.environments[env] || {};
  const used = new Set((config.rules || []).flatMap((rule) => rule.clauses)
    .filter((clause) => clause.op === 'segmentMatch').flatMap((clause) => clause.values));
  const names = new Map(segments.map((s) => [s.key, s.name]));
  const dependents = allFlags.filter((other) => other.key !== flag.key
    && ((other.environments || {})[env]?.prerequisites || []).some((p) => p.key === flag.key));
  const linked = (items) => h('ul', {}, items);
  return h('div', { class: 'columns' },
    h('div', {}, h('h3', {}, `Segments used in ${env}`),
      used.size ? linked([...used].sort().map((key) => h('li', {},
        h('a', { href: `${base()}/segments/${enc(key)}` }, names.get(key) || key), ' ', h('span', { class: 'mono muted' }, key))))
        : h('p', { class: 'muted' }, 'No rule uses a segment.')),
    h('div', {}, h('h3', {}, `Flags depending on this one in ${env}`),
      dependents.length ? linked(dependents.map((other) => {
        const wanted = other.environments[env].prerequisites.find((p) => p.key === flag.key);
        const variation = flag.variations[wanted.variation];
        return h('li', {}, h('a', { href: `${base()}/flags/${enc(other.key)}` }, other.name),
          ` needs ${variation ? JSON.stringify(variation.value) : `variation ${wanted.variation}`}`);
      })) : h('p', { class: 'muted' }, 'No flag has this one as a prerequisite.')));
}

export async function history(host, project, key) {
  clear(host, h('p', { class: 'loading', role: 'status' }, 'Loading history…'));
  const params = new URLSearchParams({ spec: `proj/${project}:env/*:flag/${key}`, limit: '20' });
  const answer = await get(`/api/v2/auditlog?${params}`);
  clear(host, answer.items.length
    ? h('ol', { class: 'audit', 'aria-label': 'Changes to this flag, newest first' }, answer.items.map(auditEntry))
    : h('p', { class: 'muted' }, 'No changes yet.'));
}

// LaunchDarkly's copy actions, as the form offers them.
const PARTS = [
  ['updateOn', 'On / off', ['on']],
  ['updatePrerequisites', 'Prerequisites', ['prerequisites']],
  ['updateTargets', 'Individual targets', ['targets', 'contextTargets']],
  ['updateRules', 'Rules', ['rules']],
  ['updateFallthrough', 'Default rule', ['fallthrough']],
  ['updateOffVariation', 'Off variation', ['offVariation']],
];

function partsOf(config) {
  const picked = {};
  for (const [, , fields] of PARTS) for (const name of fields) if (name in config) picked[name] = config[name];
  return JSON.stringify(picked, null, 2);
}

export function compareAndCopy({ notify }, flag, envs, current, { canWrite, copyUrl, onCopied }) {
  const others = envs.filter((e) => e.key !== current);
  const from = select(envs.map((e) => [e.key, e.name]), others.length ? others[0].key : current, { id: 'compare-from' });
  const to = select(envs.map((e) => [e.key, e.name]), current, { id: 'compare-to' });
  const boxes = PARTS.map(([action, label]) => {
    const box = h('input', { type: 'checkbox', checked: true, id: `copy-${action}` });
    return [action, box, h('div', { class: 'check' }, box, h('label', { for: box.id }, label))];
  });
  const comment = h('input', { autocomplete: 'off', placeholder: 'why (shown in the audit log)' });
  const sideBySide = h('div');
  const copy = h('button', { type: 'submit', class: 'primary', disabled: !canWrite }, 'Copy');
  const error = h('p', { role: 'alert', class: 'field-error', hidden: true });
  function draw() {
    error.hidden = true;
    const a = flag.environments[from.value]; const b = flag.environments[to.value];
    const name = (key) => (envs.find((e) => e.key === key) || { name: key }).name;
    if (!a || !b) { clear(sideBySide); return; }
    clear(sideBySide, from.value === to.value ? h('p', { class: 'muted' }, 'Choose two different environments.')
      : h('div', { class: 'columns compare' },
        h('div', {}, h('h3', {}, name(from.value)), h('pre', { class: 'mono' }, partsOf(a))),
        h('div', {}, h('h3', {}, `${name(to.value)}, after copying the ticked parts changes`),
          diffBlock(partsOf(b), partsOf(picked(a, b)), `What copying changes in ${name(to.value)}`))));
    copy.textContent = `Copy ${name(from.value)} to ${name(to.value)}`;
  }
  function picked(a, b) {
    const result = { ...b };
    for (const [action, box] of boxes) {
      if (!box.checked) continue;
      for (const name of PARTS.find((p) => p[0] === action)[2]) if (name in a) result[name] = a[name]; else delete result[name];
    }
    return result;
  }
  for (const control of [from, to, ...boxes.map((b) => b[1])]) control.addEventListener('change', draw);
  const form = h('form', { class: 'copy', 'aria-label': 'Compare and copy' },
    h('div', { class: 'row' }, field('From', from), field('To', to)),
    h('fieldset', { class: 'parts' }, h('legend', {}, 'Parts to copy'), boxes.map((b) => b[2])),
    sideBySide,
    h('div', { class: 'row' }, field('Copy comment', comment, { field: '/comment' }), copy),
    error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const includedActions = boxes.filter(([, box]) => box.checked).map(([action]) => action);
    const body = { source: { key: from.value }, target: { key: to.value }, includedActions };
    if (comment.value.trim()) body.comment = comment.value.trim();
    try {
      const updated = await post(copyUrl, body);
      notify(`Copied ${includedActions.length} part(s) from ${from.value} to ${to.value}.`, 'success');
      await onCopied(updated);
    } catch (failure) {
      error.hidden = false;
      error.textContent = failure instanceof ApiError ? failure.message : String(failure);
    }
  });
  draw();
  return { element: form, redraw(next) { flag = next; draw(); } };
}

// Every environment's targeting of the flag in one table, the current one marked.
export function environmentComparison(flag, envs, current) {
  const rows = envs.filter((e) => flag.environments[e.key]).map((e) => {
    const c = flag.environments[e.key];
    const served = (holder) => {
      if (holder && holder.rollout) {
        const parts = holder.rollout.variations.filter((v) => v.weight).map((v) => `${v.weight / 1000}% ${JSON.stringify(flag.variations[v.variation].value)}`);
        return `rollout ${parts.join(' / ')} by ${holder.rollout.bucketBy || 'key'}`;
      }
      return holder && typeof holder.variation === 'number' ? variationLabel(flag.variations[holder.variation], holder.variation) : '—';
    };
    const targeted = (c.targets || []).reduce((n, t) => n + t.values.length, 0) + (c.contextTargets || []).filter((t) => t.contextKind !== 'user').reduce((n, t) => n + t.values.length, 0);
    return h('tr', { class: e.key === current ? 'current' : null },
      h('th', { scope: 'row' }, e.name),
      h('td', {}, h('span', { class: `pill ${c.on ? 'on' : 'off'}` }, c.on ? 'On' : 'Off')),
      h('td', {}, String((c.prerequisites || []).length)),
      h('td', {}, String(targeted)),
      h('td', {}, String((c.rules || []).length)),
      h('td', {}, served(c.fallthrough)),
      h('td', {}, typeof c.offVariation === 'number' ? variationLabel(flag.variations[c.offVariation], c.offVariation) : '—'),
      h('td', {}, String(c.version)));
  });
  return h('table', { class: 'list' },
    h('caption', { class: 'visually-hidden' }, 'Targeting in every environment'),
    h('thead', {}, h('tr', {}, ['Environment', 'State', 'Prerequisites', 'Targeted keys', 'Rules', 'Default rule', 'Off variation', 'Version'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows));
}
