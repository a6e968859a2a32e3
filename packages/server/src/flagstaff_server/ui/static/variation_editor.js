// A flag's variations (all environments): edit values, names and descriptions, add and remove
// variations. Saving sends addVariation / updateVariation / removeVariation in one semantic
// patch; the server's checks (unique values, a variation still served somewhere) come back as
// problem paths `/instructions/<i>/...`, shown on the row that instruction came from.
import { h, clear, field, button } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';

// 'boolean' (values fixed: true and false), 'string' (values typed as text) or 'json'
// (numbers, objects, arrays: values typed as JSON).
export function variationType(flag) {
  if (flag.kind === 'boolean') return 'boolean';
  return flag.variations.every((v) => typeof v.value === 'string') ? 'string' : 'json';
}

function valueText(value, type) {
  return type === 'string' ? value : JSON.stringify(value);
}

export function variationDraft(flag) {
  const type = variationType(flag);
  return flag.variations.map((v) => ({
    id: v._id, value: valueText(v.value, type), name: v.name || '', description: v.description || '', removed: false,
  }));
}

class ValueError extends Error {
  constructor(row, message) { super(message); this.row = row; }
}

function parsed(row, index, type) {
  if (type !== 'json') return row.value;
  try { return JSON.parse(row.value); } catch (error) { throw new ValueError(index, `Not JSON: ${error.message}`); }
}

// The instructions that turn `flag.variations` into the draft, and for each the draft row it
// came from. Throws ValueError for a value that is not JSON where JSON is needed.
export function variationInstructions(flag, rows) {
  const type = variationType(flag);
  const current = new Map(flag.variations.map((v) => [v._id, v]));
  const instructions = [];
  const origin = [];
  rows.forEach((row, index) => {
    const before = row.id ? current.get(row.id) : null;
    if (row.removed) {
      if (before) { instructions.push({ kind: 'removeVariation', variationId: row.id }); origin.push(index); }
      return;
    }
    const value = parsed(row, index, type);
    if (!before) {
      const add = { kind: 'addVariation', value };
      if (row.name) add.name = row.name;
      if (row.description) add.description = row.description;
      instructions.push(add);
      origin.push(index);
      return;
    }
    const update = { kind: 'updateVariation', variationId: row.id };
    if (type !== 'boolean' && JSON.stringify(value) !== JSON.stringify(before.value)) update.value = value;
    if (row.name !== (before.name || '')) update.name = row.name;
    if (row.description !== (before.description || '')) update.description = row.description;
    if (Object.keys(update).length > 2) { instructions.push(update); origin.push(index); }
  });
  return { instructions, origin };
}

// `/instructions/2/value` -> `variations/<row of instruction 2>/value`.
export function variationFieldPath(path, origin) {
  const m = path && path.match(/^\/instructions\/(\d+)(\/.*)?$/);
  if (!m || origin[Number(m[1])] === undefined) return null;
  return `variations/${origin[Number(m[1])]}${m[2] || ''}`;
}

// The editor. `save(instructions)` sends them and resolves to the updated flag; it rejects
// with the ApiError. `canWrite` false makes every control read-only.
export function variationEditor({ flag, canWrite, save, notify }) {
  const type = variationType(flag);
  const state = { flag, rows: variationDraft(flag) };
  const host = h('div');
  const form = h('form', { novalidate: true, 'aria-labelledby': 'variations-title' }, host);

  function draw() {
    const rows = state.rows.map((row, i) => {
      const label = `Variation ${i + 1}`;
      const value = h(type === 'json' ? 'textarea' : 'input', {
        rows: type === 'json' ? 1 : undefined, value: row.value, autocomplete: 'off', class: 'mono',
        disabled: !canWrite || type === 'boolean' || row.removed,
      });
      value.addEventListener('input', () => { row.value = value.value; });
      const name = h('input', { value: row.name, autocomplete: 'off', disabled: !canWrite || row.removed });
      name.addEventListener('input', () => { row.name = name.value; });
      const description = h('input', { value: row.description, autocomplete: 'off', disabled: !canWrite || row.removed });
      description.addEventListener('input', () => { row.description = description.value; });
      const toggle = type === 'boolean' ? null : button(row.removed ? `Keep ${label.toLowerCase()}` : `Remove ${label.toLowerCase()}`, () => {
        if (!row.id) state.rows.splice(i, 1); else row.removed = !row.removed;
        draw();
      }, { class: row.removed ? '' : 'link danger', disabled: !canWrite });
      return h('fieldset', { class: `variation${row.removed ? ' removed' : ''}`, tabindex: -1, dataset: { field: `variations/${i}` } },
        h('legend', {}, row.removed ? `${label} (removed when you save)` : label),
        h('div', { class: 'row' },
          field(`${label} value${type === 'json' ? ' (JSON)' : ''}`, value, { field: `variations/${i}/value` }),
          field(`${label} name`, name, { field: `variations/${i}/name` }),
          field(`${label} description`, description, { field: `variations/${i}/description` }),
          toggle));
    });
    const add = type === 'boolean' ? h('p', { class: 'muted' }, 'A boolean flag has exactly the variations true and false; their names and descriptions can change.')
      : button('Add variation', () => { state.rows.push({ id: null, value: '', name: '', description: '', removed: false }); draw(); }, { disabled: !canWrite });
    clear(host, rows, add,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', id: 'save-variations', disabled: !canWrite }, 'Save variations'),
        button('Discard variation changes', () => { state.rows = variationDraft(state.flag); draw(); })));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    let made;
    try { made = variationInstructions(state.flag, state.rows); } catch (error) {
      if (error instanceof ValueError) { showFieldError(form, `variations/${error.row}/value`, error.message); return; }
      throw error;
    }
    if (!made.instructions.length) { notify('Nothing to save: the variations are unchanged.'); return; }
    try {
      state.flag = await save(made.instructions);
      state.rows = variationDraft(state.flag);
      draw();
    } catch (error) {
      if (error && error.isConflict) return;  // the page reloads the flag and says so; the rows stay
      const where = variationFieldPath(error && error.path, made.origin);
      if (!where || !showFieldError(form, where, error.message)) notify(error.message, 'error');
      else notify('Variations not saved: fix the highlighted field.', 'error');
    }
  });

  draw();
  return {
    element: form,
    // A newer version of the flag (saved here or elsewhere): fields not edited since take its
    // values; edited ones keep what was typed, and the next save sends them on top of it.
    rebase(latest) {
      if (latest === state.flag || latest._version < state.flag._version) return;
      const before = new Map(variationDraft(state.flag).map((row) => [row.id, row]));
      const after = new Map(variationDraft(latest).map((row) => [row.id, row]));
      const rows = [];
      for (const row of state.rows) {
        const old = row.id ? before.get(row.id) : null;
        const fresh = row.id ? after.get(row.id) : null;
        if (row.id && !fresh) continue;  // removed meanwhile
        if (old && fresh) for (const name of ['value', 'name', 'description']) if (row[name] === old[name]) row[name] = fresh[name];
        rows.push(row);
      }
      for (const [id, fresh] of after) if (!before.has(id)) rows.push(fresh);  // added meanwhile
      state.flag = latest;
      state.rows = rows;
      draw();
    },
  };
}
