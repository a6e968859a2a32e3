// One flag: kill switch, targeting editor for the current environment (prerequisites, individual
// targets, rules, rollouts, default rule, off variation), comparison across environments,
// evaluation charts, variations and settings. Saving sends one semantic patch guarded by If-Match: <_version>; on a version
// conflict the draft stays as typed and can be re-applied on top of the latest version.
import { get, del, patchSemantic, enc, ApiError } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';
import { clauseDraft, clauseRow, clauseBody, newClause } from './clause_editor.js';
import { loadSuggestions } from './context_suggestions.js';
import { showFieldError, clearFieldErrors } from './form_error.js';
import { evaluationChart } from './chart.js';
import { variationEditor } from './variation_editor.js';
import { usage, history, compareAndCopy } from './flag_relations.js';
import { approvalsSection, needsApproval, requestApproval } from './approvals.js';
import { currentEnvironment, sendWithComment } from './comment_dialog.js';
import { scheduledChangesSection } from './scheduled_changes.js';
import { triggersSection } from './flag_triggers.js';
import { codeReferencesSection } from './code_references.js';
import { permissionsFor, flagResource, TARGETING_ACTIONS, SETTINGS_ACTIONS } from './permissions.js';
import { releasesSection } from './release_timeline.js';

const TOTAL = 100000;

export function variationLabel(variation, index) {
  const value = JSON.stringify(variation.value);
  return variation.name ? `${variation.name} (${value})` : `${index}: ${value}`;
}

function serveDraft(holder, count) {
  if (holder && holder.rollout) {
    const weights = Array(count).fill(0);
    for (const item of holder.rollout.variations || []) weights[item.variation] = item.weight / 1000;
    return { kind: 'rollout', variation: 0, weights, bucketBy: holder.rollout.bucketBy || 'key', contextKind: holder.rollout.contextKind || 'user' };
  }
  return { kind: 'variation', variation: holder && typeof holder.variation === 'number' ? holder.variation : 0, weights: Array(count).fill(0), bucketBy: 'key', contextKind: 'user' };
}

export function draftOf(flag, env) {
  const config = flag.environments[env];
  const count = flag.variations.length;
  const targets = (config.targets || []).map((t) => ({ contextKind: 'user', variation: t.variation, values: t.values.join('\n') }));
  for (const t of config.contextTargets || []) {
    if (t.contextKind !== 'user' || (t.values || []).length) {
      if (t.contextKind !== 'user') targets.push({ contextKind: t.contextKind, variation: t.variation, values: t.values.join('\n') });
    }
  }
  return {
    prerequisites: (config.prerequisites || []).map((p) => ({ key: p.key, variation: p.variation })),
    targets,
    rules: (config.rules || []).map((r) => ({
      id: r._id,
      description: r.description || '',
      clauses: r.clauses.map(clauseDraft),
      serve: serveDraft(r, count),
    })),
    fallthrough: serveDraft(config.fallthrough, count),
    offVariation: typeof config.offVariation === 'number' ? config.offVariation : '',
  };
}

// A percentage as the API's weight: thousandths of a percent.
const weightOf = (pct) => Math.round(Number(pct || 0) * 1000);
const rolloutTotal = (weights) => weights.reduce((sum, pct) => sum + weightOf(pct), 0);

// The rollouts of the sections about to be sent whose weights do not add up to 100%, as
// [field path, total in percent]: the server would refuse them, so they are never sent.
export function unevenRollouts(draft, sections) {
  const serves = [];
  if (sections.includes('rules')) draft.rules.forEach((rule, i) => serves.push([`rules/${i}`, rule.serve]));
  if (sections.includes('fallthrough')) serves.push(['fallthrough', draft.fallthrough]);
  return serves
    .filter(([, serve]) => serve.kind === 'rollout' && rolloutTotal(serve.weights) !== TOTAL)
    .map(([path, serve]) => [path, rolloutTotal(serve.weights) / 1000]);
}

function servedBody(serve, variations) {
  if (serve.kind === 'variation') return { variationId: variations[serve.variation]._id };
  const rolloutWeights = {};
  serve.weights.forEach((pct, i) => { rolloutWeights[variations[i]._id] = weightOf(pct); });
  return { rolloutWeights, rolloutBucketBy: serve.bucketBy || 'key', rolloutContextKind: serve.contextKind || 'user' };
}

// Instructions for the sections whose draft differs from `original`, with a section name per
// instruction index (problem paths `/instructions/<i>/...` map back to fields through it).
export function instructionsFor(flag, draft, original, allFlags) {
  const variations = flag.variations;
  const same = (name) => JSON.stringify(draft[name]) === JSON.stringify(original[name]);
  const out = [];
  const sections = [];
  if (!same('prerequisites')) {
    out.push({ kind: 'replacePrerequisites', prerequisites: draft.prerequisites.map((p) => {
      const other = allFlags.find((f) => f.key === p.key);
      const id = other && other.variations[p.variation] ? other.variations[p.variation]._id : String(p.variation);
      return { key: p.key, variationId: id };
    }) });
    sections.push('prerequisites');
  }
  if (!same('targets')) {
    out.push({ kind: 'replaceTargets', targets: draft.targets.map((t) => ({
      contextKind: t.contextKind || 'user',
      variationId: variations[t.variation]._id,
      values: t.values.split(/[\n,]/).map((v) => v.trim()).filter(Boolean),
    })) });
    sections.push('targets');
  }
  if (!same('rules')) {
    // rules and clauses that already exist send their `_id`, which the server keeps, so
    // evaluation reasons keep naming the same rule after a save
    out.push({ kind: 'replaceRules', rules: draft.rules.map((r) => ({
      ...(r.id ? { _id: r.id } : {}),
      clauses: r.clauses.map(clauseBody),
      ...(r.description ? { description: r.description } : {}),
      ...servedBody(r.serve, variations),
    })) });
    sections.push('rules');
  }
  if (!same('fallthrough')) {
    out.push({ kind: 'updateFallthroughVariationOrRollout', ...servedBody(draft.fallthrough, variations) });
    sections.push('fallthrough');
  }
  if (!same('offVariation')) {
    out.push(draft.offVariation === '' ? { kind: 'updateOffVariation' } : { kind: 'updateOffVariation', variationId: variations[draft.offVariation]._id });
    sections.push('offVariation');
  }
  return { instructions: out, sections };
}

// `/instructions/2/rules/0/clauses/1/values` -> `rules/0/clauses/1/values`;
// `/environments/production/rules/0/...` -> `rules/0/...`.
export function fieldPath(path, sections) {
  if (!path) return path;
  let m = path.match(/^\/instructions\/(\d+)(\/.*)?$/);
  if (m) {
    const section = sections[Number(m[1])] || '';
    let rest = m[2] || '';
    if (rest.startsWith(`/${section}`)) rest = rest.slice(section.length + 1);
    return `${section}${rest}`;
  }
  m = path.match(/^\/environments\/[^/]+\/(.*)$/);
  if (m) return m[1].replace(/^contextTargets/, 'targets');
  return path.replace(/^\//, '');
}

function serveEditor(serve, variations, path, label) {
  const options = [...variations.map((v, i) => [String(i), variationLabel(v, i)]), ['rollout', 'a percentage rollout']];
  const choice = select(options, serve.kind === 'rollout' ? 'rollout' : String(serve.variation));
  const rollout = h('div', { class: 'rollout', tabindex: -1, dataset: { field: `${path}/rolloutWeights` } });
  const sum = h('output', { class: 'muted' });
  function drawRollout() {
    rollout.hidden = choice.value !== 'rollout';
    const inputs = variations.map((v, i) => {
      const input = h('input', { type: 'number', min: 0, max: 100, step: 0.001, value: serve.weights[i] ?? 0, class: 'pct' });
      input.addEventListener('input', () => { serve.weights[i] = Number(input.value || 0); total(); });
      return field(`% ${variationLabel(v, i)}`, input, { field: `${path}/rolloutWeights/${v._id}` });
    });
    const bucket = h('input', { value: serve.bucketBy, size: 10, autocomplete: 'off' });
    bucket.addEventListener('input', () => { serve.bucketBy = bucket.value.trim(); });
    const kind = h('input', { value: serve.contextKind, size: 8, autocomplete: 'off' });
    kind.addEventListener('input', () => { serve.contextKind = kind.value.trim(); });
    clear(rollout, inputs,
      field('Bucket by attribute', bucket, { field: `${path}/rolloutBucketBy` }),
      field('Context kind', kind, { field: `${path}/rolloutContextKind` }),
      sum);
    total();
  }
  function total() {
    const t = rolloutTotal(serve.weights);
    sum.value = `Total ${t / 1000}%${t === TOTAL ? '' : ' — must be 100%'}`;
  }
  choice.addEventListener('change', () => {
    if (choice.value === 'rollout') {
      serve.kind = 'rollout';
      if (!serve.weights.some(Number)) serve.weights = variations.map((_, i) => (i === 0 ? 100 : 0));
    } else { serve.kind = 'variation'; serve.variation = Number(choice.value); }
    drawRollout();
  });
  drawRollout();
  return h('div', { class: 'serve' }, field(label, choice, { field: `${path}/variationId` }), rollout);
}

function section(title, ...children) {
  const id = `sec-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), children);
}

// A section whose list may be empty: title, explanation and the add button on one line.
function listSection(title, note, list, addButton, empty) {
  const id = `sec-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h('section', { class: 'card', 'aria-labelledby': id },
    h('div', { class: 'sectionhead' }, h('h2', { id }, title), h('p', { class: 'muted' }, empty ? `None. ${note}` : note), empty ? addButton : null),
    empty ? null : list, empty ? null : addButton);
}

function editor(state, ctx) {
  const { flag, draft, allFlags, segments } = state;
  const variations = flag.variations;
  const variationOptions = variations.map((v, i) => [String(i), variationLabel(v, i)]);
  const root = h('div', { class: 'targeting' });

  function redraw() {
    const focusedPath = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.field : null;
    const prereqs = h('div', {}, draft.prerequisites.map((p, i) => {
      const key = select([['', 'Choose a flag'], ...allFlags.filter((f) => f.key !== flag.key).map((f) => [f.key, f.name])], p.key);
      const other = () => allFlags.find((f) => f.key === key.value);
      const variation = select(other() ? other().variations.map((v, j) => [String(j), variationLabel(v, j)]) : [], String(p.variation));
      key.addEventListener('change', () => { p.key = key.value; p.variation = 0; redraw(); });
      variation.addEventListener('change', () => { p.variation = Number(variation.value); });
      return h('div', { class: 'row' },
        field(`Prerequisite ${i + 1}: flag`, key, { field: `prerequisites/${i}/key` }),
        field('must serve', variation, { field: `prerequisites/${i}/variationId` }),
        button('Remove prerequisite', () => { draft.prerequisites.splice(i, 1); redraw(); }, { class: 'link danger' }));
    }));
    const addPrereq = button('Add prerequisite', () => { draft.prerequisites.push({ key: '', variation: 0 }); redraw(); });

    const targets = h('div', {}, draft.targets.map((t, i) => {
      const kind = h('input', { value: t.contextKind, size: 8, autocomplete: 'off' });
      const variation = select(variationOptions, String(t.variation));
      const values = h('textarea', { rows: 2, value: t.values, placeholder: 'keys, one per line' });
      kind.addEventListener('input', () => { t.contextKind = kind.value.trim(); });
      variation.addEventListener('change', () => { t.variation = Number(variation.value); });
      values.addEventListener('input', () => { t.values = values.value; });
      return h('div', { class: 'row' },
        field('Serve', variation, { field: `targets/${i}/variationId` }),
        field('to context kind', kind, { field: `targets/${i}/contextKind` }),
        field('with keys', values, { field: `targets/${i}/values` }),
        button('Remove targets', () => { draft.targets.splice(i, 1); redraw(); }, { class: 'link danger' }));
    }));
    const addTargets = button('Add individual targets', () => { draft.targets.push({ contextKind: 'user', variation: 0, values: '' }); redraw(); });

    const rules = h('ol', { class: 'rules' }, draft.rules.map((rule, i) => {
      const description = h('input', { value: rule.description, autocomplete: 'off' });
      description.addEventListener('input', () => { rule.description = description.value; });
      const move = (delta) => () => {
        const j = i + delta;
        if (j < 0 || j >= draft.rules.length) return;
        [draft.rules[i], draft.rules[j]] = [draft.rules[j], draft.rules[i]];
        redraw();
      };
      return h('li', { class: 'rule' },
        h('fieldset', {},
          h('legend', {}, `Rule ${i + 1}`),
          field('Description', description, { field: `rules/${i}/description` }),
          h('p', { class: 'muted' }, 'If all of these match:'),
          rule.clauses.map((c, j) => clauseRow(c, {
            path: `rules/${i}/clauses/${j}`, segments, suggestions: state.suggestions, label: `Rule ${i + 1}, condition ${j + 1}`,
            onRemove: () => { rule.clauses.splice(j, 1); redraw(); },
          })),
          button('Add condition', () => { rule.clauses.push(newClause()); redraw(); }),
          serveEditor(rule.serve, variations, `rules/${i}`, 'then serve'),
          h('div', { class: 'actions' },
            button('Move up', move(-1), { disabled: i === 0 }),
            button('Move down', move(1), { disabled: i === draft.rules.length - 1 }),
            button('Remove rule', () => { draft.rules.splice(i, 1); redraw(); }, { class: 'danger' }))));
    }));
    const addRule = button('Add rule', () => {
      draft.rules.push({ id: null, description: '', clauses: [newClause()], serve: serveDraft(null, variations.length) });
      redraw();
    });
    const off = select([['', 'no off variation (SDK default)'], ...variationOptions], String(draft.offVariation));
    off.addEventListener('change', () => { draft.offVariation = off.value === '' ? '' : Number(off.value); });

    clear(root,
      listSection('Prerequisites', 'The off variation is served unless these flags serve the given variation.', prereqs, addPrereq, !draft.prerequisites.length),
      listSection('Individual targets', 'Context keys that always get a variation.', targets, addTargets, !draft.targets.length),
      listSection('Rules', 'Checked in order; the first rule whose conditions all match decides.', rules, addRule, !draft.rules.length),
      section('Default rule', serveEditor(draft.fallthrough, variations, 'fallthrough', 'When no rule matches, serve')),
      section('When the flag is off', field('Serve', off, { field: 'offVariation' })));
    if (focusedPath) {
      const again = root.querySelector(`[data-field="${CSS.escape(focusedPath)}"]`);
      if (again) again.focus();
    }
  }
  redraw();
  return root;
}

function comparison(flag, envs, current) {
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

export async function render(ctx, rawKey) {
  const { app, main, notify } = ctx;
  const key = decodeURIComponent(rawKey);
  const flagUrl = `/api/v2/flags/${enc(app.project)}/${enc(key)}`;
  const [flag, list, segmentAnswer, suggestions] = await Promise.all([
    get(flagUrl),
    get(`/api/v2/flags/${enc(app.project)}?env=${enc(app.env)}&limit=1000`),
    get(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}?limit=1000`).catch(() => ({ items: [] })),
    loadSuggestions(app.project, app.env),
  ]);
  if (!flag.environments[app.env]) {
    clear(main, h('h1', {}, flag.name), h('p', {}, `This flag has no configuration in ${app.env}.`));
    return;
  }
  const project = app.projects.find((p) => p.key === app.project);
  const envs = project && project.environments ? project.environments.items : [];
  const who = app.session;
  // what the caller's roles allow here: in this environment, and flag-wide (every environment)
  const here = flagResource(app.project, app.env, key);
  const everywhere = flagResource(app.project, '*', key);
  const allowed = await permissionsFor([here, everywhere]);
  const canToggle = allowed.may(here, 'updateOn');
  const canWrite = allowed.may(here, ...TARGETING_ACTIONS);
  const canWriteFlag = allowed.may(everywhere, ...SETTINGS_ACTIONS);
  const canArchive = allowed.may(everywhere, 'updateGlobalArchived');
  const canDelete = allowed.may(everywhere, 'deleteFlag');
  const canEditVariations = allowed.may(everywhere, 'updateFlagVariations');
  const readOnlyNote = canWrite || canToggle ? null : h('p', { class: 'notice', id: 'read-only-note' }, `Read-only: ${who.name} (${who.role}${who.environmentKey ? `, ${who.environmentKey} only` : ''}) cannot change ${app.env}.`);
  const state = { flag, original: draftOf(flag, app.env), allFlags: list.items, segments: segmentAnswer.items, suggestions };
  state.draft = draftOf(flag, app.env);

  const conflictBox = h('div', { class: 'conflict', role: 'alert', hidden: true });
  const approvalBox = h('div', { class: 'notice', role: 'alert', id: 'approval-offer', hidden: true });
  const approvals = approvalsSection(ctx, key, {
    canWrite,
    onApplied: async () => { state.flag = await get(flagUrl); redrawAll(true); },
    currentFlag: () => state.flag,
  });
  const environment = currentEnvironment(app);
  const commentRequired = Boolean(environment.requireComments);
  const confirmChanges = Boolean(environment.confirmChanges);

  // the environment requires approval (405): the same instructions become a request for it
  function offerApproval(error, instructions, why) {
    clear(approvalBox,
      h('p', {}, error.message),
      button('Request approval', async () => {
        try {
          if (await requestApproval(ctx, key, instructions, why) === null) return;
          approvalBox.hidden = true;
          notify('Approval requested: a reviewer can approve it below, then it can be applied.', 'success');
          await approvals.refresh();
        } catch (failure) { notify(`${failure.message}${failure.path ? ` (at ${failure.path})` : ''}`, 'error'); }
      }, { class: 'primary', id: 'request-approval' }));
    approvalBox.hidden = false;
  }
  const comment = h('input', { autocomplete: 'off', placeholder: 'why (shown in the audit log)', required: commentRequired });
  const editorHost = h('div');
  const header = h('div');
  const compareHost = h('div');
  const usageHost = h('div');
  const historyHost = h('div');
  const copier = compareAndCopy(ctx, flag, envs, app.env, {
    canWrite: who.role !== 'reader' && (!who.projectKey || who.projectKey === app.project),
    copyUrl: `${flagUrl}/copy`,
    onCopied: async () => {
      state.flag = await get(flagUrl);
      redrawAll(true);
      await history(historyHost, app.project, key);
    },
  });

  function drawHeader() {
    variations.rebase(state.flag);
    const config = state.flag.environments[app.env];
    const kill = h('button', {
      type: 'button', class: `switch ${config.on ? 'on' : 'off'}`, role: 'switch',
      'aria-checked': config.on ? 'true' : 'false', id: 'kill-switch', disabled: !canToggle,
    }, h('span', { class: 'visually-hidden' }, `${state.flag.name} in ${app.env}: `), config.on ? 'On' : 'Off');
    kill.addEventListener('click', () => toggle(!config.on));
    clear(header,
      h('div', { class: 'titlebar' },
        h('div', {}, h('h1', {}, state.flag.name), h('p', { class: 'mono muted' }, state.flag.key,
          ` · version ${state.flag._version} · ${state.flag.temporary ? 'temporary' : 'permanent'} `,
          state.flag.archived ? h('span', { class: 'pill off' }, 'archived') : null, ' ',
          (state.flag.tags || []).map((t) => h('span', { class: 'tag' }, t)))),
        h('div', { class: 'killbox' }, h('span', { id: 'kill-label' }, `Serving in ${app.env}`), kill)),
      state.flag.description ? h('p', {}, state.flag.description) : null);
    kill.setAttribute('aria-describedby', 'kill-label');
  }

  async function toggle(on) {
    const config = state.flag.environments[app.env];
    // with confirmChanges the dialog below asks instead
    if (!on && !confirmChanges && !window.confirm(`Turn ${state.flag.key} off in ${app.env}? Everyone gets the off variation.`)) return;
    try {
      // where comments are required, the dialog asks for one: no made-up comment is sent there
      const fallback = commentRequired ? '' : (on ? 'turned on' : 'turned off (kill switch)');
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, {
        environmentKey: app.env, comment: given || fallback || undefined,
        instructions: [{ kind: on ? 'turnFlagOn' : 'turnFlagOff' }],
      }, state.flag._version), { comment: comment.value, required: commentRequired, confirm: confirmChanges, title: `Turn ${state.flag.key} ${on ? 'on' : 'off'} in ${environment.name || app.env}`, env: environment });
      if (updated === null) { document.getElementById('kill-switch').focus(); return; }
      state.flag = updated;
      notify(`${state.flag.key} is ${on ? 'on' : 'off'} in ${app.env}`, 'success');
      redrawAll(false);
      document.getElementById('kill-switch').focus();
    } catch (error) {
      if (needsApproval(error)) {
        offerApproval(error, [{ kind: on ? 'turnFlagOn' : 'turnFlagOff' }], comment.value);
      } else if (error instanceof ApiError && error.isConflict) {
        state.flag = await get(flagUrl);
        notify(`The flag changed meanwhile (now version ${state.flag._version}); it is ${state.flag.environments[app.env].on ? 'on' : 'off'}. Try again if you still want that.`, 'error');
        redrawAll(false);
      } else notify(error.message, 'error');
      void config;
    }
  }

  function redrawAll(resetDraft) {
    if (resetDraft) { state.original = draftOf(state.flag, app.env); state.draft = draftOf(state.flag, app.env); }
    drawHeader();
    clear(editorHost, editor(state, ctx));
    clear(compareHost, comparison(state.flag, envs, app.env));
    clear(usageHost, usage(state.flag, app.env, state.allFlags, state.segments, ctx.base));
    copier.redraw(state.flag);
  }

  async function save(event) {
    event.preventDefault();
    clearFieldErrors(editorHost);
    const { instructions, sections } = instructionsFor(state.flag, state.draft, state.original, state.allFlags);
    if (!instructions.length) { notify('Nothing to save: the targeting is unchanged.'); return; }
    const uneven = unevenRollouts(state.draft, sections);
    if (uneven.length) {
      // last first, so the first one ends up with the focus
      for (const [path, pct] of uneven.reverse()) {
        showFieldError(editorHost, `${path}/rolloutWeights`, `The percentages add up to ${pct}%; they must add up to 100%.`);
      }
      notify('Not saved: a percentage rollout must add up to 100%.', 'error');
      return;
    }
    if (commentRequired && !comment.value.trim()) {
      showFieldError(form, 'comment', `${environment.name || app.env} requires a comment on every change.`);
      notify('Not saved: a comment is required.', 'error');
      return;
    }
    try {
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, { environmentKey: app.env, comment: given, instructions }, state.flag._version),
        { comment: comment.value, required: commentRequired, confirm: confirmChanges, title: `Save targeting of ${state.flag.key} in ${environment.name || app.env}`, env: environment });
      if (updated === null) { document.getElementById('save-targeting').focus(); return; }
      state.flag = updated;
      conflictBox.hidden = true;
      comment.value = '';
      notify(`Saved. ${state.flag.key} is now at version ${state.flag._version}.`, 'success');
      redrawAll(true);
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) return showConflict();
      if (needsApproval(error)) return offerApproval(error, instructions, comment.value);
      if (error instanceof ApiError && error.status === 400) {
        const where = fieldPath(error.path, sections);
        if (!showFieldError(editorHost, where, error.message)) notify(`${error.message}${error.path ? ` (at ${error.path})` : ''}`, 'error');
        else notify('Not saved: fix the highlighted field.', 'error');
        return;
      }
      notify(error.message, 'error');
    }
  }

  async function showConflict() {
    const latest = await get(flagUrl);
    clear(conflictBox,
      h('h2', {}, 'Someone else changed this flag'),
      h('p', {}, `You edited version ${state.flag._version}; it is now at version ${latest._version}. Your changes below are kept and have not been saved.`),
      h('div', { class: 'actions' },
        button('Reload and re-apply my changes', () => {
          // sections you did not touch take the other person's version; the ones you edited
          // keep exactly what you typed, and saving sends only those
          const fresh = draftOf(latest, app.env);
          for (const name of Object.keys(fresh)) {
            if (JSON.stringify(state.draft[name]) === JSON.stringify(state.original[name])) state.draft[name] = fresh[name];
          }
          state.flag = latest;
          state.original = fresh;
          conflictBox.hidden = true;
          drawHeader();
          clear(editorHost, editor(state, ctx));
          clear(compareHost, comparison(state.flag, envs, app.env));
          notify(`Loaded version ${latest._version}. Your changes are still in the form: review them and save.`);
          document.getElementById('save-targeting').focus();
        }, { class: 'primary', id: 'reapply' }),
        button('Discard my changes', () => { state.flag = latest; conflictBox.hidden = true; redrawAll(true); })));
    conflictBox.hidden = false;
    conflictBox.scrollIntoView({ block: 'center' });
    document.getElementById('reapply').focus();
  }

  const form = h('form', { novalidate: true, 'aria-label': `Targeting in ${app.env}` },
    editorHost,
    h('div', { class: 'savebar' },
      field(commentRequired ? 'Comment (required)' : 'Comment', comment, { field: 'comment' }),
      h('button', { type: 'submit', class: 'primary', id: 'save-targeting', disabled: !canWrite }, 'Save targeting'),
      button('Discard changes', () => redrawAll(true))));
  form.addEventListener('submit', save);

  function settings() {
    const f = state.flag;
    const name = h('input', { value: f.name, autocomplete: 'off' });
    const description = h('textarea', { rows: 2, value: f.description || '' });
    const tags = h('input', { value: (f.tags || []).join(', '), autocomplete: 'off' });
    const temporary = h('input', { type: 'checkbox', checked: f.temporary, id: 'setting-temporary' });
    const availability = f.clientSideAvailability || {};
    const mobile = h('input', { type: 'checkbox', checked: availability.usingMobileKey, id: 'setting-mobile' });
    const browser = h('input', { type: 'checkbox', checked: availability.usingEnvironmentId, id: 'setting-browser' });
    const form = h('form', { novalidate: true, 'aria-labelledby': 'settings-title' },
      h('div', { class: 'row' }, field('Name', name, { field: 'name' }), field('Tags', tags, { field: 'tags', hint: 'Comma separated' })),
      field('Description', description, { field: 'description' }),
      h('div', { class: 'row' },
        h('div', { class: 'check' }, temporary, h('label', { for: temporary.id }, 'Temporary')),
        h('div', { class: 'check' }, mobile, h('label', { for: mobile.id }, 'Available to mobile SDKs')),
        h('div', { class: 'check' }, browser, h('label', { for: browser.id }, 'Available to client-side (browser) SDKs'))),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', disabled: !canWriteFlag }, 'Save settings'),
        button(f.archived ? 'Restore flag' : 'Archive flag', () => flagWide([{ kind: f.archived ? 'restoreFlag' : 'archiveFlag' }], f.archived ? 'Restored' : 'Archived'), { disabled: !canArchive }),
        button('Delete flag', removeFlag, { class: 'danger', disabled: !canDelete })));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const wanted = tags.value.split(',').map((t) => t.trim()).filter(Boolean);
      const current = f.tags || [];
      const instructions = [];
      if (name.value.trim() !== f.name) instructions.push({ kind: 'updateName', value: name.value.trim() });
      if (description.value !== (f.description || '')) instructions.push({ kind: 'updateDescription', value: description.value });
      const added = wanted.filter((t) => !current.includes(t));
      const removed = current.filter((t) => !wanted.includes(t));
      if (added.length) instructions.push({ kind: 'addTags', values: added });
      if (removed.length) instructions.push({ kind: 'removeTags', values: removed });
      if (temporary.checked !== f.temporary) instructions.push({ kind: temporary.checked ? 'makeFlagTemporary' : 'makeFlagPermanent' });
      for (const [box, value] of [[mobile, 'usingMobileKey'], [browser, 'usingEnvironmentId']]) {
        if (box.checked !== Boolean(availability[value])) instructions.push({ kind: box.checked ? 'turnOnClientSideAvailability' : 'turnOffClientSideAvailability', value });
      }
      if (!instructions.length) { notify('Nothing to save: the settings are unchanged.'); return; }
      flagWide(instructions, 'Saved settings', form);
    });
    return form;
  }

  async function flagWide(instructions, done, form) {
    if (form) clearFieldErrors(form);
    try {
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, { instructions, comment: given }, state.flag._version), { title: `${done}: ${state.flag.key}`, confirm: confirmChanges, env: environment });
      if (updated === null) return;
      state.flag = updated;
      notify(`${done}. ${state.flag.key} is now at version ${state.flag._version}.`, 'success');
      drawHeader();
      clear(settingsHost, settings());
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) {
        state.flag = await get(flagUrl);
        drawHeader();
        notify(`Someone else changed this flag (now version ${state.flag._version}). Your settings are still in the form; save again to apply them.`, 'error');
        return;
      }
      if (needsApproval(error)) { offerApproval(error, instructions, ''); return; }
      const where = error.path ? error.path.replace(/^\/instructions\/\d+\/?/, '').replace(/^value$/, '') : error.path;
      if (!(error instanceof ApiError) || !form || !showFieldError(form, where, error.message)) notify(error.message, 'error');
    }
  }

  async function removeFlag() {
    if (!window.confirm(`Delete ${state.flag.key} in every environment? SDKs will serve their defaults.`)) return;
    try {
      await del(flagUrl);
      ctx.flash(`Deleted ${state.flag.key}.`, 'success');
      ctx.go(`${ctx.base()}/flags`);
    } catch (error) { notify(error.message, 'error'); }
  }

  // Variations are flag-wide. Saving them keeps an unsaved targeting draft unless variations
  // were added or removed (which renumbers the indices the draft holds).
  async function saveVariations(instructions, version) {
    try {
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, { instructions, comment: given }, version), { title: `Save variations of ${state.flag.key}`, confirm: confirmChanges, env: environment });
      if (updated === null) throw new Error('Variations not saved: cancelled.');
      const reshaped = instructions.some((i) => i.kind !== 'updateVariation');
      const draftChanged = JSON.stringify(state.draft) !== JSON.stringify(state.original);
      state.flag = updated;
      if (reshaped) redrawAll(true); else redrawAll(false);
      notify(`Saved variations. ${updated.key} is now at version ${updated._version}.${reshaped && draftChanged ? ' The targeting editor was reloaded with the new variations.' : ''}`, 'success');
      return updated;
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) {
        const latest = await get(flagUrl);
        variations.rebase(latest);
        notify(`Someone else changed this flag (now version ${latest._version}). Your variation edits are still in the form; save again to apply them on top.`, 'error');
      }
      if (needsApproval(error)) offerApproval(error, instructions, '');
      throw error;
    }
  }
  const variations = variationEditor({ flag, canWrite: canEditVariations, save: saveVariations, notify });

  const settingsHost = h('div');
  const chartHost = h('div');
  const scheduled = scheduledChangesSection(ctx, key, { canWrite, currentFlag: () => state.flag, commentRequired });
  const triggers = triggersSection(ctx, key, { canWrite, commentRequired });
  const codeReferences = codeReferencesSection(ctx, key);
  // a rollout's start, pause, resume or stop edits the targeting: the editor reloads after it
  async function sendRelease(instructions, form) {
    if (form) clearFieldErrors(form);
    try {
      state.flag = await patchSemantic(flagUrl, { environmentKey: app.env, instructions }, state.flag._version);
      redrawAll(true);
      await releases.refresh();
      notify(`Sent ${instructions.map((i) => i.kind).join(', ')}; ${state.flag.key} is now at version ${state.flag._version}.`, 'success');
    } catch (error) {
      if (!form || !(error instanceof ApiError) || !showFieldError(form, error.path, error.message)) notify(error.message, 'error');
    }
  }
  const releases = releasesSection(ctx, key, { canWrite, currentFlag: () => state.flag, send: sendRelease });
  clear(main,
    readOnlyNote,
    header,
    conflictBox,
    approvalBox,
    h('section', { 'aria-labelledby': 'targeting-title' }, h('h2', { id: 'targeting-title', class: 'visually-hidden' }, `Targeting in ${app.env}`), form),
    section(`Approval requests in ${app.env}`, approvals.element),
    section(`Scheduled changes in ${app.env}`, scheduled.element),
    section(`Triggers in ${app.env}`, triggers.element),
    section(`Progressive and guarded rollouts in ${app.env}`, releases.element),
    section('Compare environments', compareHost),
    section('Compare two environments and copy', copier.element),
    section('Segments and dependent flags', usageHost),
    section('Evaluations', chartHost),
    section('Code references', codeReferences.element),
    h('section', { class: 'card', 'aria-labelledby': 'variations-title' }, h('h2', { id: 'variations-title' }, 'Variations (all environments)'), variations.element),
    h('section', { class: 'card', 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, 'Settings (all environments)'), settingsHost),
    section('History', historyHost),
    h('p', { class: 'muted' }, 'Created ', time(flag.creationDate)));
  redrawAll(false);
  for (const part of [approvals, scheduled, triggers, releases, codeReferences]) part.refresh().catch((error) => notify(error.message, 'error'));
  clear(settingsHost, settings());
  evaluationChart(chartHost, app.project, app.env, flag);
  history(historyHost, app.project, key).catch((error) => clear(historyHost, h('p', { role: 'alert' }, error.message)));
}
