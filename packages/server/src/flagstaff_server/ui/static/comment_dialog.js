// Required comments (docs/workflows.md, "Required comments") for every edit the UI sends: where
// the environment has `requireComments`, or when the server answers 400 at `/comment` (a
// flag-wide edit touching such an environment), a modal dialog asks for the comment; a blank one
// is refused there, and Escape or Cancel sends nothing.
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

// Resolves to the trimmed comment, or null when cancelled.
export function askComment({ title, reason }) {
  return new Promise((resolve) => {
    const input = h('input', { autocomplete: 'off', required: true, id: 'required-comment' });
    const error = h('p', { class: 'field-error', role: 'alert' });
    const form = h('form', { method: 'dialog', novalidate: true },
      h('h2', { id: 'comment-dialog-title' }, title),
      h('p', {}, reason),
      field('Comment (required)', input),
      error,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', value: 'confirm' }, 'Send with this comment'),
        h('button', { type: 'button', onclick: () => dialog.close('cancel') }, 'Cancel')));
    const dialog = h('dialog', { class: 'card', 'aria-labelledby': 'comment-dialog-title', id: 'comment-dialog' }, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!input.value.trim()) {
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

// Calls `send(comment)`; asks first when `required` and `comment` is blank, and asks (then sends
// again) when the server wants a comment the caller did not know about. Resolves to send's
// answer, or null when the user cancelled.
export async function sendWithComment(send, { comment, required, title, env }) {
  let given = (comment || '').trim() || undefined;
  const reason = `${env ? env.name || env.key : 'This environment'} requires a comment on every change.`;
  if (required && !given) {
    given = await askComment({ title, reason });
    if (given === null) return null;
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
