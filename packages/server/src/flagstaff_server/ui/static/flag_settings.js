// A flag's flag-wide settings form: name, description, tags, lifetime and client-side
// availability sent as one semantic patch through `send`, plus archive, restore and delete.
import { h, field, button } from './dom.js';

export function flagSettingsForm(f, { canWrite, canArchive, canDelete, send, remove, notify }) {
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
      h('button', { type: 'submit', class: 'primary', disabled: !canWrite }, 'Save settings'),
      button(f.archived ? 'Restore flag' : 'Archive flag', () => send([{ kind: f.archived ? 'restoreFlag' : 'archiveFlag' }], f.archived ? 'Restored' : 'Archived'), { disabled: !canArchive }),
      button('Delete flag', remove, { class: 'danger', disabled: !canDelete })));
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
    send(instructions, 'Saved settings', form);
  });
  return form;
}
