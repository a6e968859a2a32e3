// A flag's scheduled changes in the current environment (docs/workflows.md, "Scheduled
// changes"): the list (when, status, what it changes as a diff, conflicts), a form to schedule
// instructions at a time, editing a pending change's time and instructions, and deleting it. A
// change that conflicts with another pending one is refused by the server (400); the form then
// offers to schedule it anyway (`ignoreConflicts=true`), and the list shows the conflict.
import { get, post, del, call, enc } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';
import { changeDiff } from './approvals.js';

export function scheduleUrl(project, key, env) {
  return `/api/v2/projects/${enc(project)}/flags/${enc(key)}/environments/${enc(env)}/scheduled-changes`;
}

// `datetime-local` holds local time without a zone; the API takes Unix ms
const toMillis = (text) => (text ? new Date(text).getTime() : NaN);
function toLocalInput(ms) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const PRESETS = [['turnFlagOn', 'Turn the flag on'], ['turnFlagOff', 'Turn the flag off'], ['json', 'Instructions (JSON)']];

// The form's fields: when, what (a preset or JSON instructions), comment; `read()` gives
// {executionDate, instructions} or marks the field at fault and gives null.
function changeFields({ when, instructions, commentRequired }) {
  const date = h('input', { type: 'datetime-local', value: when ? toLocalInput(when) : '', required: true });
  const preset = instructions && instructions.length === 1 && ['turnFlagOn', 'turnFlagOff'].includes(instructions[0].kind) && !instructions[0].environmentKey
    ? instructions[0].kind : (instructions ? 'json' : 'turnFlagOn');
  const what = select(PRESETS, preset);
  const json = h('textarea', { rows: 4, value: instructions ? JSON.stringify(instructions, null, 2) : '[{"kind": "turnFlagOn"}]' });
  const jsonField = field('Instructions', json, { field: 'instructions', hint: 'A JSON list of flag semantic-patch instructions' });
  const comment = h('input', { autocomplete: 'off', required: commentRequired });
  const sync = () => { jsonField.hidden = what.value !== 'json'; };
  what.addEventListener('change', sync);
  sync();
  const element = h('div', {},
    h('div', { class: 'row' }, field('When', date, { field: 'executionDate' }), field('Change', what)),
    jsonField,
    field(commentRequired ? 'Comment (required)' : 'Comment', comment, { field: 'comment' }));
  function read(root) {
    clearFieldErrors(root);
    const executionDate = toMillis(date.value);
    if (Number.isNaN(executionDate)) { showFieldError(root, 'executionDate', 'Give a date and time.'); return null; }
    let list;
    if (what.value === 'json') {
      try { list = JSON.parse(json.value); } catch { showFieldError(root, 'instructions', 'This is not valid JSON.'); return null; }
      if (!Array.isArray(list)) { showFieldError(root, 'instructions', 'Give a JSON list of instructions.'); return null; }
    } else list = [{ kind: what.value }];
    if (commentRequired && !comment.value.trim()) { showFieldError(root, 'comment', 'This environment requires a comment on every change.'); return null; }
    return { executionDate, instructions: list, comment: comment.value.trim() || undefined };
  }
  return { element, read };
}

// A server error on its field: `/executionDate`, `/instructions/...`, `/comment`; PATCH paths
// `/instructions/<i>/value/...` name the edit's own instruction, mapped by `edits` (the kinds sent).
function placeError(root, error, edits) {
  let path = error.path || '';
  const m = path.match(/^\/instructions\/(\d+)(?:\/value)?/);
  if (edits && m) path = edits[Number(m[1])] === 'updateScheduledChangesExecutionDate' ? '/executionDate' : '/instructions';
  return showFieldError(root, path.replace(/^\//, ''), error.message);
}

export function scheduledChangesSection(ctx, key, { canWrite, currentFlag, commentRequired }) {
  const { app, notify } = ctx;
  const base = scheduleUrl(app.project, key, app.env);
  const listHost = h('div', { id: 'scheduled-changes' });
  const formHost = h('div');

  async function send(root, run, edits) {
    try {
      await run(false);
      return true;
    } catch (error) {
      if (error.status === 400 && /ignoreConflicts/.test(error.message)) {
        const again = button('Schedule anyway', async () => {
          try { await run(true); note.remove(); notify('Scheduled, with the conflict shown in the list.', 'success'); await refresh(); } catch (failure) { notify(failure.message, 'error'); }
        }, { id: 'schedule-anyway' });
        const note = h('div', { class: 'notice error', role: 'alert' }, h('p', {}, error.message), again);
        root.append(note);
        again.focus();
        return false;
      }
      if (!placeError(root, error, edits)) notify(error.message, 'error');
      return false;
    }
  }

  function createForm() {
    const fields = changeFields({ commentRequired });
    const form = h('form', { novalidate: true, 'aria-label': `Schedule a change in ${app.env}`, id: 'schedule-form' },
      h('h3', {}, 'Schedule a change'), fields.element,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', disabled: !canWrite }, 'Schedule')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      for (const old of form.querySelectorAll('.notice')) old.remove();
      const body = fields.read(form);
      if (!body) return;
      const done = await send(form, (ignore) => post(`${base}?ignoreConflicts=${ignore}`, body));
      if (done) { notify('Change scheduled.', 'success'); clear(formHost, createForm()); await refresh(); }
    });
    return form;
  }

  function editForm(item, host) {
    const fields = changeFields({ when: item.executionDate, instructions: item.instructions, commentRequired });
    const form = h('form', { novalidate: true, 'aria-label': 'Edit the scheduled change' }, fields.element,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save change'), button('Cancel', () => refresh())));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      for (const old of form.querySelectorAll('.notice')) old.remove();
      const body = fields.read(form);
      if (!body) return;
      const instructions = [];
      if (body.executionDate !== item.executionDate) instructions.push({ kind: 'updateScheduledChangesExecutionDate', value: body.executionDate });
      if (JSON.stringify(body.instructions) !== JSON.stringify(item.instructions)) instructions.push({ kind: 'replaceScheduledChangesInstructions', value: body.instructions });
      if (!instructions.length) { notify('Nothing to save: the change is as it was.'); return; }
      const url = `${base}/${enc(item._id)}`;
      const done = await send(form, (ignore) => call('PATCH', `${url}?ignoreConflicts=${ignore}`, { body: { comment: body.comment, instructions }, semantic: true }), instructions.map((i) => i.kind));
      if (done) { notify('Scheduled change saved.', 'success'); await refresh(); }
    });
    clear(host, form);
    form.querySelector('input').focus();
  }

  function row(item) {
    const pending = item._status === 'pending';
    const body = h('div');
    const maintainer = (item._maintainer && item._maintainer.name) || item._maintainerId;
    const remove = async () => {
      if (!window.confirm('Delete this scheduled change? It will not run.')) return;
      try { await del(`${base}/${enc(item._id)}`); notify('Scheduled change deleted.', 'success'); await refresh(); } catch (error) { notify(error.message, 'error'); }
    };
    clear(body,
      pending ? changeDiff(currentFlag(), app.env, item.instructions) : h('pre', {}, JSON.stringify(item.instructions, null, 2)),
      item.comment ? h('p', {}, `Comment: ${item.comment}`) : null,
      item._error ? h('p', { class: 'field-error' }, `Failed: ${item._error.message}`) : null,
      item.conflicts.length ? h('ul', { class: 'notice', role: 'note' }, item.conflicts.map((c) => h('li', {}, `Conflict: ${c.reason}`))) : null,
      pending && canWrite ? h('div', { class: 'actions' }, button('Edit', () => editForm(item, body)), button('Delete', remove, { class: 'danger' })) : null);
    return h('li', { class: 'scheduled', dataset: { id: item._id } },
      h('p', {}, h('strong', {}, time(item.executionDate)), ` — ${item._status}`,
        item._executedDate ? [', ran ', time(item._executedDate)] : '', `, by ${maintainer}`),
      body);
  }

  async function refresh() {
    const answer = await get(`${base}?status=all`);
    clear(listHost, answer.items.length
      ? h('ul', { class: 'approvals' }, answer.items.map(row))
      : h('p', { class: 'muted' }, `No scheduled changes for this flag in ${app.env}.`));
  }
  clear(formHost, createForm());
  return { element: h('div', {}, listHost, formHost), refresh };
}
