// Builds DOM nodes. Text always goes in as text nodes, never as HTML, so data cannot inject markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (name === 'value' && 'value' in el) {
      el.value = value;
    } else if (name === 'checked' || name === 'selected' || name === 'disabled' || name === 'multiple') {
      el[name] = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

// An SVG element: attributes as given, children as nodes or text.
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let counter = 0;
export function uid(prefix = 'f') {
  counter += 1;
  return `${prefix}-${counter}`;
}

// A labelled form control: label + control (+ hint); `field` names it for error placement.
export function field(label, control, { hint, field: name } = {}) {
  if (!control.id) control.id = uid();
  // '' is a field too: the one a problem about the whole body (path "") lands on
  if (name !== undefined && name !== null) control.dataset.field = name;
  const wrap = h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
  if (hint) {
    const hintEl = h('small', { id: uid('hint'), class: 'hint' }, hint);
    control.setAttribute('aria-describedby', hintEl.id);
    wrap.append(hintEl);
  }
  return wrap;
}

export function select(options, value, attrs = {}) {
  const el = h('select', attrs);
  for (const option of options) {
    const [v, label] = Array.isArray(option) ? option : [option, option];
    el.append(h('option', { value: String(v), selected: String(v) === String(value) }, label));
  }
  return el;
}

export function button(label, onclick, attrs = {}) {
  return h('button', { type: 'button', ...attrs, onclick }, label);
}

export function time(ms) {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  return h('time', { datetime: d.toISOString(), title: d.toISOString() }, d.toLocaleString());
}

export function ago(ms) {
  if (!ms) return 'never';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 90) return `${s}s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

// A card section titled by its h2 (the id comes from the title, so tests and links can name it).
export function section(title, ...children) {
  const id = `sec-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), children);
}
