// The on/off switch in each flag-list row. It honours the environment's rules: with
// `requireComments` or `confirmChanges` set, a modal dialog asks for the comment and/or an
// explicit confirmation before the semantic patch goes out; otherwise one click toggles.
import { patchSemantic, enc, ApiError } from './api.js';
import { h, field } from './dom.js';
import { needsApproval, requestApproval } from './approvals.js';

// Resolves to the comment to send, or null when the user cancelled.
function askForChange(flag, on, env) {
  return new Promise((resolve) => {
    const needComment = Boolean(env.requireComments);
    const comment = h('input', { autocomplete: 'off', required: needComment });
    const error = h('p', { class: 'field-error', role: 'alert' });
    const verb = on ? 'on' : 'off';
    const title = h('h2', { id: 'toggle-dialog-title' }, `Turn ${flag.key} ${verb} in ${env.name}?`);
    const form = h('form', { method: 'dialog', novalidate: true },
      title,
      env.confirmChanges ? h('p', {}, `${env.name} asks for confirmation of every change.`) : null,
      field(needComment ? 'Comment (required)' : 'Comment', comment),
      error,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', value: 'confirm' }, `Turn ${verb}`),
        h('button', { type: 'button', value: 'cancel', onclick: () => dialog.close('cancel') }, 'Cancel')));
    const dialog = h('dialog', { class: 'card', 'aria-labelledby': 'toggle-dialog-title' }, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (needComment && !comment.value.trim()) {
        error.textContent = `${env.name} requires a comment for every change.`;
        comment.setAttribute('aria-invalid', 'true');
        comment.focus();
        return;
      }
      dialog.close('confirm');
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'confirm' ? comment.value.trim() : null);
    });
    document.body.append(dialog);
    dialog.showModal();
    comment.focus();
  });
}

// A switch for `flag` in `env` (an environment record); `onChanged(flag)` receives the patched flag.
export function rowToggle(ctx, flag, env, canToggle, onChanged) {
  const { app, notify } = ctx;
  const config = (flag.environments || {})[env.key] || {};
  const on = Boolean(config.on);
  const button = h('button', {
    type: 'button', class: `switch small ${on ? 'on' : 'off'}`, role: 'switch',
    'aria-checked': on ? 'true' : 'false', 'aria-label': `${flag.key} in ${env.key}`,
    dataset: { flag: flag.key }, disabled: flag.archived || !canToggle,
  }, on ? 'On' : 'Off');
  button.addEventListener('click', async () => {
    const want = !on;
    let comment = want ? 'turned on from the flag list' : 'turned off from the flag list';
    if (env.requireComments || env.confirmChanges) {
      const given = await askForChange(flag, want, env);
      if (given === null) { button.focus(); return; }
      if (given) comment = given;
    }
    try {
      const updated = await patchSemantic(`/api/v2/flags/${enc(app.project)}/${enc(flag.key)}`, {
        environmentKey: env.key, comment, instructions: [{ kind: want ? 'turnFlagOn' : 'turnFlagOff' }],
      }, flag._version);
      notify(`${flag.key} is ${want ? 'on' : 'off'} in ${env.key}`, 'success');
      onChanged(updated);
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) {
        notify(`${flag.key} changed meanwhile; reload the list and try again.`, 'error');
      } else if (needsApproval(error) && env.key === app.env) {
        // the same change as an approval request, reviewed and applied on the flag's page
        const instructions = [{ kind: want ? 'turnFlagOn' : 'turnFlagOff' }];
        if (window.confirm(`${error.message}\n\nRequest approval for turning ${flag.key} ${want ? 'on' : 'off'} instead?`)) {
          try {
            const made = await requestApproval(ctx, flag.key, instructions, env.requireComments ? comment : '');
            if (made) notify(`Approval requested for ${flag.key}: review and apply it on the flag's page.`, 'success');
          } catch (failure) { notify(failure.message, 'error'); }
        }
      } else notify(error.message, 'error');
      button.focus();
    }
  });
  return button;
}
