// Required comments and confirmations (docs/workflows.md, "Required comments", "Confirm
// changes") for the edits the UI sends: where the environment has `requireComments`, or when the
// server answers 400 at `/comment` (a flag-wide edit touching such an environment), a modal
// dialog asks for the comment, and a blank one is refused there; where it has `confirmChanges`
// the same dialog asks to confirm. Escape or Cancel sends nothing.
import { ApiError } from './api.js';
import { h, field } from './dom.js';

export function currentEnvironment(app) {
  const project = app.projects.find((p) => p.key === app.project);
  const items = (project && project.environments && project.environments.items) || [];
  return items.find((e) => e.key === app.env) || { key: app.env, name: app.env };
}

export function needsComment(error) {
  return error instanceof ApiError && error.status === 400 && error.path === '/comment';
}

// Resolves to the trimmed comment ('' when none was asked for or given), or null when cancelled.
export function askComment({ title, reason, needComment = true, comment = '' }) {
  return new Promise((resolve) => {
    const input = h('input', { autocomplete: 'off', required: needComment, id: 'required-comment', value: comment });
    const error = h('p', { class: 'field-error', role: 'alert' });
    const form = h('form', { method: 'dialog', novalidate: true },
      h('h2', { id: 'comment-dialog-title' }, title),
      h('p', {}, reason),
      field(needComment ? 'Comment (required)' : 'Comment', input),
      error,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', value: 'confirm' }, needComment ? 'Send with this comment' : 'Confirm'),
        h('button', { type: 'button', onclick: () => dialog.close('cancel') }, 'Cancel')));
    const dialog = h('dialog', { class: 'card', 'aria-labelledby': 'comment-dialog-title', id: 'comment-dialog' }, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (needComment && !input.value.trim()) {
        error.textContent = 'A comment is required here; it goes to the audit log with the change.';
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      dialog.close('confirm');
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'confirm' ? input.value.trim() : null);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
}

// Calls `send(comment)`; asks first when `required` and `comment` is blank or when `confirm`,
// and asks (then sends again) when the server wants a comment the caller did not know about.
// Resolves to send's answer, or null when the user cancelled.
export async function sendWithComment(send, { comment, required, confirm, title, env }) {
  let given = (comment || '').trim() || undefined;
  const where = env ? env.name || env.key : 'This environment';
  const reason = required ? `${where} requires a comment on every change.` : `${where} asks for confirmation of every change.`;
  if ((required && !given) || confirm) {
    const answer = await askComment({ title, reason, needComment: Boolean(required), comment: given || '' });
    if (answer === null) return null;
    given = answer || undefined;
  }
  try {
    return await send(given);
  } catch (error) {
    if (given || !needsComment(error)) throw error;
    const asked = await askComment({ title, reason: error.message });
    if (asked === null) return null;
    return send(asked);
  }
}
