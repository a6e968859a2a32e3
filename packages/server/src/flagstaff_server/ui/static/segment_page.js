// Segments of an environment: list, create, and an editor (included/excluded keys of any context
// kind, rules with clauses and an optional percentage) saved as one semantic patch guarded by
// If-Match.
import { get, post, patchSemantic, enc, ApiError } from './api.js';
import { h, clear, field, button } from './dom.js';
import { clauseDraft, clauseRow, clauseBody, newClause } from './clause_editor.js';
import { showFieldError, clearFieldErrors } from './form_error.js';

const lines = (text) => text.split(/[\n,]/).map((v) => v.trim()).filter(Boolean);

export async function list(ctx) {
  const { app, main, base, go, notify } = ctx;
  const answer = await get(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}?limit=1000`);
  const key = h('input', { required: true, autocomplete: 'off' });
  const name = h('input', { required: true, autocomplete: 'off' });
  const form = h('form', { class: 'card', novalidate: true },
    h('h2', {}, 'New segment'),
    h('div', { class: 'row' }, field('Name', name, { field: '/name' }), field('Key', key, { field: '/key' }),
      h('button', { type: 'submit', class: 'primary' }, 'Create segment')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    try {
      await post(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}`, { key: key.value.trim(), name: name.value.trim() });
      go(`${base()}/segments/${enc(key.value.trim())}`);
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.status === 409 ? '/key' : error.path, error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, `Segments in ${app.env}`),
    answer.items.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Segment', 'Included', 'Excluded', 'Rules', 'Version'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, answer.items.map((s) => h('tr', {},
        h('td', {}, h('a', { href: `${base()}/segments/${enc(s.key)}` }, s.name), h('div', { class: 'mono muted' }, s.key)),
        h('td', {}, String((s.included || []).length + (s.includedContexts || []).reduce((n, c) => n + c.values.length, 0))),
        h('td', {}, String((s.excluded || []).length + (s.excludedContexts || []).reduce((n, c) => n + c.values.length, 0))),
        h('td', {}, String((s.rules || []).length)),
        h('td', {}, String(s.version))))))
      : h('p', {}, 'No segments yet.'),
    form);
}

// Included/excluded keys as rows of {contextKind, values}: user keys (`included`/`excluded`)
// first, then `includedContexts`/`excludedContexts`; an empty user row when there are none.
function targetRows(users, contexts) {
  const rows = [];
  if ((users || []).length || !(contexts || []).some((c) => c.contextKind === 'user')) rows.push({ contextKind: 'user', values: (users || []).join('\n') });
  for (const entry of contexts || []) rows.push({ contextKind: entry.contextKind, values: (entry.values || []).join('\n') });
  return rows;
}

function draftOf(segment) {
  return {
    name: segment.name,
    description: segment.description || '',
    included: targetRows(segment.included, segment.includedContexts),
    excluded: targetRows(segment.excluded, segment.excludedContexts),
    rules: (segment.rules || []).map((r) => ({
      id: r._id, clauses: r.clauses.map(clauseDraft),
      weight: typeof r.weight === 'number' ? String(r.weight / 1000) : '', bucketBy: r.bucketBy || '',
      description: r.description || '',
    })),
  };
}

// kind -> {keys, row}: the keys of every row of that kind, and the first such row (where an
// error about that kind is shown).
function keysByKind(rows) {
  const byKind = new Map();
  rows.forEach((row, index) => {
    const kind = row.contextKind.trim();
    if (!byKind.has(kind)) byKind.set(kind, { keys: new Set(), row: index });
    for (const key of lines(row.values)) byKind.get(kind).keys.add(key);
  });
  return byKind;
}

// The instructions turning `original` into `draft`, and for each the field prefix its problem
// paths map to (`included/1` for the second included row, `rules`, `name`, ...).
export function segmentInstructions(original, draft) {
  const out = [];
  const origin = [];
  const push = (instruction, where) => { out.push(instruction); origin.push(where); };
  if (draft.name !== original.name) push({ kind: 'updateName', value: draft.name }, 'name');
  if (draft.description !== original.description) push({ kind: 'updateDescription', value: draft.description }, 'description');
  // every removal before any addition, so a key can move from included to excluded in one save
  const additions = [];
  for (const side of ['included', 'excluded']) {
    const before = keysByKind(original[side]);
    const after = keysByKind(draft[side]);
    const title = side === 'included' ? 'Included' : 'Excluded';
    for (const [kind, { keys, row }] of before) {
      const kept = after.get(kind);
      const removed = [...keys].filter((key) => !kept || !kept.keys.has(key));
      if (removed.length) push({ kind: `remove${title}Targets`, contextKind: kind, values: removed }, `${side}/${kept ? kept.row : row}`);
    }
    for (const [kind, { keys, row }] of after) {
      const had = before.get(kind);
      const added = [...keys].filter((key) => !had || !had.keys.has(key));
      if (added.length) additions.push([{ kind: `add${title}Targets`, contextKind: kind, values: added }, `${side}/${row}`]);
    }
  }
  for (const [instruction, where] of additions) push(instruction, where);
  if (JSON.stringify(original.rules) !== JSON.stringify(draft.rules)) {
    for (const rule of original.rules) push({ kind: 'removeRule', ruleId: rule.id }, 'rules');
    draft.rules.forEach((rule, i) => {
      const body = { kind: 'addRule', clauses: rule.clauses.map(clauseBody) };
      if (rule.description) body.description = rule.description;
      if (rule.weight !== '') body.weight = Math.round(Number(rule.weight) * 1000);
      if (rule.bucketBy) body.bucketBy = rule.bucketBy;
      push(body, `rules/${i}`);
    });
  }
  return { instructions: out, origin };
}

// `/instructions/3/values/0` from an instruction made for `included/1` -> `included/1/values/0`;
// a rule's `/instructions/5/clauses/0/values` -> `rules/<i>/clauses/0/values`.
function segmentFieldPath(path, origin) {
  const m = path && path.match(/^\/instructions\/(\d+)(\/.*)?$/);
  if (!m) return path ? path.replace(/^\//, '') : path;
  const where = origin[Number(m[1])];
  const rest = m[2] || '';
  if (where === 'name' || where === 'description') return where;
  return where ? `${where}${rest}` : rest.replace(/^\//, '');
}

export async function render(ctx, rawKey) {
  const { app, main, notify } = ctx;
  const key = decodeURIComponent(rawKey);
  const url = `/api/v2/segments/${enc(app.project)}/${enc(app.env)}/${enc(key)}`;
  const [segment, others] = await Promise.all([get(url), get(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}?limit=1000`)]);
  const state = { segment, original: draftOf(segment), draft: draftOf(segment) };
  const host = h('div');
  const conflict = h('div', { class: 'conflict', role: 'alert', hidden: true });

  // One list of keys per context kind, for `side` ('included' or 'excluded').
  function targetList(side, title, note) {
    const rows = state.draft[side];
    return h('div', {}, h('h3', {}, title), h('p', { class: 'muted' }, note),
      rows.map((row, i) => {
        const kind = h('input', { value: row.contextKind, size: 8, autocomplete: 'off' });
        kind.addEventListener('input', () => { row.contextKind = kind.value.trim(); });
        const keys = h('textarea', { rows: 3, value: row.values, placeholder: 'keys, one per line' });
        keys.addEventListener('input', () => { row.values = keys.value; });
        return h('div', { class: 'row', dataset: { field: `${side}/${i}` }, tabindex: -1 },
          field(`${title} context kind ${i + 1}`, kind, { field: `${side}/${i}/contextKind` }),
          field(`${title} keys ${i + 1}`, keys, { field: `${side}/${i}/values`, hint: 'One per line' }),
          button(`Remove ${title.toLowerCase()} keys ${i + 1}`, () => { rows.splice(i, 1); draw(); }, { class: 'link danger' }));
      }),
      button(`Add ${title.toLowerCase()} context kind`, () => { rows.push({ contextKind: '', values: '' }); draw(); }));
  }

  function draw() {
    const d = state.draft;
    const bind = (el, prop) => { el.addEventListener('input', () => { d[prop] = el.value; }); return el; };
    const rules = h('ol', { class: 'rules' }, d.rules.map((rule, i) => {
      const weight = h('input', { type: 'number', min: 0, max: 100, step: 0.001, value: rule.weight, class: 'pct' });
      weight.addEventListener('input', () => { rule.weight = weight.value; });
      const bucket = h('input', { value: rule.bucketBy, size: 10 });
      bucket.addEventListener('input', () => { rule.bucketBy = bucket.value.trim(); });
      return h('li', { class: 'rule' }, h('fieldset', {}, h('legend', {}, `Rule ${i + 1}`),
        rule.clauses.map((c, j) => clauseRow(c, { path: `rules/${i}/clauses/${j}`, segments: others.items.filter((s) => s.key !== key), onRemove: () => { rule.clauses.splice(j, 1); draw(); } })),
        button('Add condition', () => { rule.clauses.push(newClause()); draw(); }),
        h('div', { class: 'row' },
          field('Include this % of matches (empty: all)', weight, { field: `rules/${i}/weight` }),
          field('Bucket by', bucket, { field: `rules/${i}/bucketBy` })),
        button('Remove rule', () => { d.rules.splice(i, 1); draw(); }, { class: 'danger' })));
    }));
    clear(host,
      h('section', { class: 'card' }, h('h2', {}, 'About'),
        field('Name', bind(h('input', { value: d.name }), 'name'), { field: 'name' }),
        field('Description', bind(h('textarea', { rows: 2, value: d.description }), 'description'), { field: 'description' })),
      h('section', { class: 'card' }, h('h2', {}, 'Targets'), h('div', { class: 'columns' },
        targetList('included', 'Included', 'Contexts with these keys are in the segment, whatever the rules say.'),
        targetList('excluded', 'Excluded', 'Contexts with these keys are never in the segment (unless included).'))),
      h('section', { class: 'card' }, h('h2', {}, 'Rules'), rules,
        button('Add rule', () => { d.rules.push({ id: null, clauses: [newClause()], weight: '', bucketBy: '', description: '' }); draw(); })));
  }

  const form = h('form', { novalidate: true }, host, h('div', { class: 'savebar' },
    h('button', { type: 'submit', class: 'primary', id: 'save-segment' }, 'Save segment')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const { instructions, origin } = segmentInstructions(state.original, state.draft);
    if (!instructions.length) { notify('Nothing to save.'); return; }
    try {
      state.segment = await patchSemantic(url, { instructions }, state.segment.version);
      state.original = draftOf(state.segment); state.draft = draftOf(state.segment);
      conflict.hidden = true;
      notify(`Saved segment ${key} (version ${state.segment.version}).`, 'success');
      draw();
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) {
        const latest = await get(url);
        clear(conflict, h('p', {}, `Someone else saved this segment (now version ${latest.version}). Your edits are kept.`),
          button('Reload and re-apply my changes', () => {
            state.segment = latest; state.original = draftOf(latest); conflict.hidden = true;
            notify('Loaded the latest version; your edits are still in the form. Save again.');
          }, { class: 'primary' }));
        conflict.hidden = false;
        return;
      }
      const where = segmentFieldPath(error.path, origin);
      if (!(error instanceof ApiError) || !showFieldError(form, where, error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, segment.name), h('p', { class: 'mono muted' }, `${segment.key} · version ${segment.version}`), conflict, form);
  draw();
}
