// A flag's triggers in the current environment (docs/workflows.md, "Flag triggers"): the list
// (tool, action, enabled, calls, last call), creating one, enabling or disabling it, resetting
// its URL and deleting it. A trigger's URL holds its secret and is shown once, in the answer to
// creating it or resetting it; the list shows it masked, as the server does.
import { get, post, del, call, enc } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';

const TOOLS = [['generic-trigger', 'Generic'], ['datadog', 'Datadog'], ['dynatrace', 'Dynatrace'], ['honeycomb', 'Honeycomb'], ['new-relic-apm', 'New Relic APM'], ['signalfx', 'SignalFx']];
const ACTIONS = [['turnFlagOn', 'Turn the flag on'], ['turnFlagOff', 'Turn the flag off']];
const actionText = (trigger) => (trigger.instructions || []).map((i) => (i.kind === 'turnFlagOn' ? 'turns on' : 'turns off')).join(', ');

export function triggersUrl(project, key, env) {
  return `/api/v2/flags/${enc(project)}/${enc(key)}/triggers/${enc(env)}`;
}

export function triggersSection(ctx, key, { canWrite, commentRequired }) {
  const { app, notify } = ctx;
  const base = triggersUrl(app.project, key, app.env);
  const listHost = h('div', { id: 'flag-triggers' });
  const secretHost = h('div', { role: 'status' });

  // the URL with its secret, once: the server never shows it again
  function showSecret(trigger, what) {
    const url = h('input', { readonly: true, value: trigger.triggerURL, class: 'mono', size: 60, id: 'trigger-url' });
    clear(secretHost, h('div', { class: 'notice success' },
      h('p', {}, `${what} Copy the URL now: it is not shown again.`),
      field('Trigger URL', url),
      button('Copy URL', async () => { await navigator.clipboard.writeText(trigger.triggerURL); notify('Trigger URL copied.', 'success'); })));
    url.focus();
    url.select();
  }

  async function act(run, done) {
    try { const answer = await run(); notify(done, 'success'); await refresh(); return answer; } catch (error) { notify(error.message, 'error'); return null; }
  }
  const patch = (trigger, kind) => call('PATCH', `${base}/${enc(trigger._id)}`, { body: { instructions: [{ kind }] }, semantic: true });

  function row(trigger) {
    const label = `${trigger._integrationKey} trigger that ${actionText(trigger)}`;
    return h('tr', { dataset: { id: trigger._id } },
      h('th', { scope: 'row' }, TOOLS.find(([k]) => k === trigger._integrationKey)?.[1] || trigger._integrationKey),
      h('td', {}, actionText(trigger)),
      h('td', {}, h('span', { class: `pill ${trigger.enabled ? 'on' : 'off'}` }, trigger.enabled ? 'Enabled' : 'Disabled')),
      h('td', {}, String(trigger._triggerCount || 0)),
      h('td', {}, trigger._lastTriggeredAt ? time(trigger._lastTriggeredAt) : 'never'),
      h('td', { class: 'mono' }, trigger.triggerURL),
      h('td', {}, canWrite ? h('div', { class: 'actions' },
        button(trigger.enabled ? 'Disable' : 'Enable', () => act(() => patch(trigger, trigger.enabled ? 'disableTrigger' : 'enableTrigger'), trigger.enabled ? 'Trigger disabled.' : 'Trigger enabled.'), { 'aria-label': `${trigger.enabled ? 'Disable' : 'Enable'} the ${label}` }),
        button('Reset URL', async () => {
          if (!window.confirm('Reset this trigger\'s URL? The old URL stops working at once.')) return;
          const answer = await act(() => patch(trigger, 'cycleTriggerUrl'), 'Trigger URL reset.');
          if (answer) showSecret(answer, 'The trigger has a new URL; the old one no longer works.');
        }, { 'aria-label': `Reset the URL of the ${label}` }),
        button('Delete', async () => {
          if (!window.confirm('Delete this trigger? Its URL stops working.')) return;
          await act(() => del(`${base}/${enc(trigger._id)}`), 'Trigger deleted.');
        }, { class: 'danger', 'aria-label': `Delete the ${label}` })) : null));
  }

  async function refresh() {
    const answer = await get(base);
    clear(listHost, answer.items.length
      ? h('table', { class: 'list workflow' },
        h('caption', { class: 'visually-hidden' }, `Triggers of ${key} in ${app.env}`),
        h('thead', {}, h('tr', {}, ['Tool', 'Action', 'State', 'Calls', 'Last call', 'URL', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, answer.items.map(row)))
      : h('p', { class: 'muted' }, `No triggers for this flag in ${app.env}.`));
  }

  const tool = select(TOOLS, 'generic-trigger');
  const action = select(ACTIONS, 'turnFlagOff');
  const comment = h('input', { autocomplete: 'off', required: commentRequired });
  const form = h('form', { novalidate: true, 'aria-label': `Add a trigger in ${app.env}` },
    h('div', { class: 'row' },
      field('Tool', tool),
      field('Action', action),
      field(commentRequired ? 'Comment (required)' : 'Comment', comment),
      h('button', { type: 'submit', class: 'primary', disabled: !canWrite, id: 'add-trigger' }, 'Add trigger')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (commentRequired && !comment.value.trim()) {
      comment.setAttribute('aria-invalid', 'true');
      notify('This environment requires a comment on every change.', 'error');
      comment.focus();
      return;
    }
    comment.removeAttribute('aria-invalid');
    const made = await act(() => post(base, {
      integrationKey: tool.value, instructions: [{ kind: action.value }], comment: comment.value.trim() || undefined,
    }), 'Trigger added.');
    if (made) { comment.value = ''; showSecret(made, 'Trigger added.'); }
  });
  return { element: h('div', {}, listHost, secretHost, form), refresh };
}
