// Bulk actions on the flags ticked in the flag list: archive them, or add one tag to each.
// Each flag gets its own semantic patch (the API has no multi-flag write); the first refusal
// stops the run and is shown, naming the flag, and the list is reloaded either way.
import { patchSemantic, enc } from './api.js';
import { h, field } from './dom.js';

export function bulkToolbar({ app, notify }, selected, reload) {
  const tag = h('input', { autocomplete: 'off', placeholder: 'tag' });
  const count = h('span', { class: 'muted', 'aria-live': 'polite' });
  const archive = h('button', { type: 'button' }, 'Archive selected');
  const addTag = h('button', { type: 'button' }, 'Add tag to selected');

  async function apply(label, instruction) {
    const keys = [...selected.keys()];
    if (!keys.length) { notify('Select flags first (the checkbox in each row).', 'error'); return; }
    let done = 0;
    try {
      for (const key of keys) {
        const flag = selected.get(key);
        await patchSemantic(`/api/v2/flags/${enc(app.project)}/${enc(key)}`,
          { comment: `${label} (bulk, from the flag list)`, instructions: [instruction] }, flag._version);
        done += 1;
      }
      notify(`${label}: ${done} flag${done === 1 ? '' : 's'}`, 'success');
    } catch (error) {
      notify(`${label} stopped at ${keys[done]} after ${done} of ${keys.length}: ${error.message}`, 'error');
    }
    await reload();
  }
  archive.addEventListener('click', () => apply('Archived', { kind: 'archiveFlag' }));
  addTag.addEventListener('click', () => {
    const value = tag.value.trim();
    if (!value) { notify('Type the tag to add first.', 'error'); tag.focus(); return; }
    return apply(`Tagged ${value}`, { kind: 'addTags', values: [value] });
  });
  const toolbar = h('div', { class: 'bulk', role: 'group', 'aria-label': 'Bulk actions' },
    count, archive, field('Tag to add', tag), addTag);
  toolbar.update = () => { count.textContent = `${selected.size} selected`; };
  toolbar.update();
  return toolbar;
}
