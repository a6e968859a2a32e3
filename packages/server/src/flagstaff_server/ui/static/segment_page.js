// Segments of an environment: list, create, and an editor (included/excluded keys of any context
// kind, rules with clauses and an optional percentage) saved as one semantic patch guarded by
// If-Match.
import { get, post, patchSemantic, enc, ApiError } from './api.js';
import { h, clear, field, button } from './dom.js';
import { clauseDraft, clauseRow, clauseBody, newClause } from './clause_editor.js';
import { loadSuggestions } from './context_suggestions.js';
import { showFieldError, clearFieldErrors } from './form_error.js';
import { currentEnvironment, sendWithComment } from './comment_dialog.js';
import { approvalsSection, needsApproval, requestApproval } from './approvals.js';

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

// The instructions turning `original` into `draft`, and for each where its problem paths point:
// `where` is the field prefix (`included/1` for the second included row, `rules/0/clauses/2`,
// `name`, ...) and `drop` the part of the instruction's own path that the prefix stands for.
export function segmentInstructions(original, draft) {
  const out = [];
  const origin = [];
  const push = (instruction, where, drop = '') => { out.push(instruction); origin.push({ where, drop }); };
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
  ruleInstructions(original.rules, draft.rules, push);
  return { instructions: out, origin };
}

const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// A clause as updateClause and addClauses take it: the server places the `_id` itself.
function clauseFields(draft) {
  const fields = clauseBody(draft);
  delete fields._id;
  return fields;
}

// Only what changed: a rule still in the draft keeps its `_id` and so do its clauses still there
// (evaluation reasons and the audit log keep naming the same rule). Rules the draft dropped are
// removed, the kept ones put in the draft's order, then each kept rule is edited in place and each
// new rule added before the next kept one, which leaves the rules in the draft's order.
function ruleInstructions(originalRules, draftRules, push) {
  const before = new Map(originalRules.map((rule) => [rule.id, rule]));
  const isKept = (rule) => Boolean(rule.id) && before.has(rule.id);
  const keptIds = draftRules.filter(isKept).map((rule) => rule.id);
  const stillThere = new Set(keptIds);
  for (const rule of originalRules) {
    if (!stillThere.has(rule.id)) push({ kind: 'removeRule', ruleId: rule.id }, 'rules');
  }
  const remaining = originalRules.filter((rule) => stillThere.has(rule.id)).map((rule) => rule.id);
  if (!sameJson(remaining, keptIds)) push({ kind: 'reorderRules', ruleIds: keptIds }, 'rules');
  draftRules.forEach((rule, i) => {
    const where = `rules/${i}`;
    if (!isKept(rule)) {
      const body = { kind: 'addRule', clauses: rule.clauses.map(clauseFields) };
      if (rule.description) body.description = rule.description;
      if (rule.weight !== '') body.weight = Math.round(Number(rule.weight) * 1000);
      if (rule.bucketBy) body.bucketBy = rule.bucketBy;
      const next = draftRules.slice(i + 1).find(isKept);
      if (next) body.beforeRuleId = next.id;
      push(body, where);
      return;
    }
    const old = before.get(rule.id);
    const oldClauses = new Map(old.clauses.map((clause) => [clause.id, clause]));
    const keptClauses = new Set(rule.clauses.filter((c) => c.id && oldClauses.has(c.id)).map((c) => c.id));
    const gone = old.clauses.filter((clause) => !keptClauses.has(clause.id)).map((clause) => clause.id);
    if (gone.length) push({ kind: 'removeClauses', ruleId: rule.id, clauseIds: gone }, where);
    rule.clauses.forEach((clause, j) => {
      const at = `${where}/clauses/${j}`;
      if (!keptClauses.has(clause.id)) {
        push({ kind: 'addClauses', ruleId: rule.id, clauses: [clauseFields(clause)] }, at, '/clauses/0');
      } else if (!sameJson(clauseBody(clause), clauseBody(oldClauses.get(clause.id)))) {
        push({ kind: 'updateClause', ruleId: rule.id, clauseId: clause.id, clause: clauseFields(clause) }, at, '/clause');
      }
    });
    if (rule.description !== old.description) push({ kind: 'updateRuleDescription', ruleId: rule.id, description: rule.description }, where);
    if (rule.weight !== old.weight || rule.bucketBy !== old.bucketBy) {
      // no weight: the whole match is in the segment; bucketBy null drops a former one
      const body = { kind: 'updateRuleRolloutAndContextKind', ruleId: rule.id, bucketBy: rule.bucketBy || null };
      if (rule.weight !== '') body.weight = Math.round(Number(rule.weight) * 1000);
      push(body, where);
    }
  });
}

// `/instructions/3/values/0` from an instruction made for `included/1` -> `included/1/values/0`;
// an updateClause's `/instructions/5/clause/values` -> `rules/<i>/clauses/<j>/values`.
function segmentFieldPath(path, origin) {
  const m = path && path.match(/^\/instructions\/(\d+)(\/.*)?$/);
  if (!m) return path ? path.replace(/^\//, '') : path;
  const { where, drop } = origin[Number(m[1])] || { where: '', drop: '' };
  let rest = m[2] || '';
  if (drop && (rest === drop || rest.startsWith(`${drop}/`))) rest = rest.slice(drop.length);
  if (where === 'name' || where === 'description') return where;
  return where ? `${where}${rest}` : rest.replace(/^\//, '');
}

// The flags whose rules in this environment test membership of the segment.
function usedBy(flags, key, env, base) {
  const using = flags.filter((flag) => (((flag.environments || {})[env] || {}).rules || [])
    .some((rule) => rule.clauses.some((c) => c.op === 'segmentMatch' && c.values.includes(key))));
  return h('section', { class: 'card', 'aria-labelledby': 'used-by-title' },
    h('h2', { id: 'used-by-title' }, `Flags using this segment in ${env}`),
    using.length ? h('ul', {}, using.map((flag) => h('li', {}, h('a', { href: `${base()}/flags/${enc(flag.key)}` }, flag.name))))
      : h('p', { class: 'muted' }, 'No flag rule uses this segment.'));
}

export async function render(ctx, rawKey) {
  const { app, main, notify } = ctx;
  const key = decodeURIComponent(rawKey);
  const url = `/api/v2/segments/${enc(app.project)}/${enc(app.env)}/${enc(key)}`;
  const [segment, others, flagList, suggestions] = await Promise.all([get(url), get(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}?limit=1000`),
    get(`/api/v2/flags/${enc(app.project)}?env=${enc(app.env)}&limit=1000`), loadSuggestions(app.project, app.env)]);
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
        rule.clauses.map((c, j) => clauseRow(c, { path: `rules/${i}/clauses/${j}`, segments: others.items.filter((s) => s.key !== key), suggestions, onRemove: () => { rule.clauses.splice(j, 1); draw(); } })),
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

  const environment = currentEnvironment(app);
  const commentRequired = Boolean(environment.requireComments);
  const canWrite = app.session.role !== 'reader';
  const approvals = approvalsSection(ctx, key, {
    canWrite,
    segment: true,
    onApplied: async () => { state.segment = await get(url); state.original = draftOf(state.segment); state.draft = draftOf(state.segment); draw(); },
  });
  // the environment requires approval for segments (405): the same instructions become a request
  const approvalBox = h('div', { class: 'notice', role: 'alert', id: 'approval-offer', hidden: true });
  function offerApproval(error, instructions, why) {
    clear(approvalBox, h('p', {}, error.message), button('Request approval', async () => {
      try {
        if (await requestApproval(ctx, key, instructions, why, { segment: true }) === null) return;
        approvalBox.hidden = true;
        notify('Approval requested: a reviewer can approve it below, then it can be applied.', 'success');
        await approvals.refresh();
      } catch (failure) { notify(`${failure.message}${failure.path ? ` (at ${failure.path})` : ''}`, 'error'); }
    }, { class: 'primary', id: 'request-approval' }));
    approvalBox.hidden = false;
  }
  const comment = h('input', { autocomplete: 'off', placeholder: 'why (shown in the audit log)', required: commentRequired });
  const form = h('form', { novalidate: true }, host, h('div', { class: 'savebar' },
    field(commentRequired ? 'Comment (required)' : 'Comment', comment, { field: 'comment' }),
    h('button', { type: 'submit', class: 'primary', id: 'save-segment' }, 'Save segment')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const { instructions, origin } = segmentInstructions(state.original, state.draft);
    if (!instructions.length) { notify('Nothing to save.'); return; }
    if (commentRequired && !comment.value.trim()) {
      showFieldError(form, 'comment', `${environment.name || app.env} requires a comment on every change.`);
      return;
    }
    try {
      const updated = await sendWithComment((given) => patchSemantic(url, { instructions, comment: given }, state.segment.version),
        { comment: comment.value, required: commentRequired, confirm: Boolean(environment.confirmChanges), title: `Save segment ${key} in ${environment.name || app.env}`, env: environment });
      if (updated === null) return;
      state.segment = updated;
      comment.value = '';
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
      if (needsApproval(error)) { offerApproval(error, instructions, comment.value.trim()); return; }
      const where = error.path === '/comment' ? 'comment' : segmentFieldPath(error.path, origin);
      if (!(error instanceof ApiError) || !showFieldError(form, where, error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, segment.name), h('p', { class: 'mono muted' }, `${segment.key} · version ${segment.version}`), conflict, approvalBox, form,
    h('section', { class: 'card', 'aria-labelledby': 'segment-approvals-title' }, h('h2', { id: 'segment-approvals-title' }, `Approval requests in ${app.env}`), approvals.element),
    usedBy(flagList.items, key, app.env, ctx.base));
  draw();
  approvals.refresh().catch((error) => notify(error.message, 'error'));
}
