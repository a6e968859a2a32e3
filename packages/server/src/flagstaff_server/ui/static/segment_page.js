// Segments of an environment: list, create, and an editor (included/excluded keys, rules with
// clauses and an optional percentage) saved as one semantic patch guarded by If-Match.
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

function draftOf(segment) {
  return {
    name: segment.name,
    description: segment.description || '',
    included: (segment.included || []).join('\n'),
    excluded: (segment.excluded || []).join('\n'),
    rules: (segment.rules || []).map((r) => ({
      id: r._id, clauses: r.clauses.map(clauseDraft),
      weight: typeof r.weight === 'number' ? String(r.weight / 1000) : '', bucketBy: r.bucketBy || '',
      description: r.description || '',
    })),
  };
}

export function segmentInstructions(original, draft) {
  const out = [];
  if (draft.name !== original.name) out.push({ kind: 'updateName', value: draft.name });
  if (draft.description !== original.description) out.push({ kind: 'updateDescription', value: draft.description });
  for (const [list, add, remove] of [['included', 'addIncludedUsers', 'removeIncludedUsers'], ['excluded', 'addExcludedUsers', 'removeExcludedUsers']]) {
    const before = new Set(lines(original[list]));
    const after = new Set(lines(draft[list]));
    const removed = [...before].filter((v) => !after.has(v));
    const added = [...after].filter((v) => !before.has(v));
    if (removed.length) out.push({ kind: remove, values: removed });
    if (added.length) out.push({ kind: add, values: added });
  }
  if (JSON.stringify(original.rules) !== JSON.stringify(draft.rules)) {
    for (const rule of original.rules) out.push({ kind: 'removeRule', ruleId: rule.id });
    for (const rule of draft.rules) {
      const body = { kind: 'addRule', clauses: rule.clauses.map(clauseBody) };
      if (rule.description) body.description = rule.description;
      if (rule.weight !== '') body.weight = Math.round(Number(rule.weight) * 1000);
      if (rule.bucketBy) body.bucketBy = rule.bucketBy;
      out.push(body);
    }
  }
  return out;
}

export async function render(ctx, rawKey) {
  const { app, main, notify } = ctx;
  const key = decodeURIComponent(rawKey);
  const url = `/api/v2/segments/${enc(app.project)}/${enc(app.env)}/${enc(key)}`;
  const [segment, others] = await Promise.all([get(url), get(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}?limit=1000`)]);
  const state = { segment, original: draftOf(segment), draft: draftOf(segment) };
  const host = h('div');
  const conflict = h('div', { class: 'conflict', role: 'alert', hidden: true });

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
      h('section', { class: 'card' }, h('h2', {}, 'Targets'), h('div', { class: 'row' },
        field('Included user keys', bind(h('textarea', { rows: 4, value: d.included }), 'included'), { field: 'included', hint: 'One per line' }),
        field('Excluded user keys', bind(h('textarea', { rows: 4, value: d.excluded }), 'excluded'), { field: 'excluded', hint: 'One per line' }))),
      h('section', { class: 'card' }, h('h2', {}, 'Rules'), rules,
        button('Add rule', () => { d.rules.push({ id: null, clauses: [newClause()], weight: '', bucketBy: '', description: '' }); draw(); })));
  }

  const form = h('form', { novalidate: true }, host, h('div', { class: 'savebar' },
    h('button', { type: 'submit', class: 'primary', id: 'save-segment' }, 'Save segment')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const instructions = segmentInstructions(state.original, state.draft);
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
      const where = error.path ? error.path.replace(/^\/instructions\/\d+\//, '').replace(/^\//, '') : error.path;
      if (!(error instanceof ApiError) || !showFieldError(form, where, error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, segment.name), h('p', { class: 'mono muted' }, `${segment.key} · version ${segment.version}`), conflict, form);
  draw();
}
