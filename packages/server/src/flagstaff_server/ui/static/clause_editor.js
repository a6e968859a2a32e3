// Editing rule clauses (every operator, segment clauses, negation) as plain draft objects,
// shared by the flag targeting editor and the segment editor. Kinds, attribute names and values
// seen in contexts (context_suggestions.js) are offered as the clause is typed.
import { h, clear, field, select, button } from './dom.js';
import { suggestionsFrom } from './context_suggestions.js';

const NO_SUGGESTIONS = suggestionsFrom([]);

export const OPERATORS = [
  ['in', 'is one of'], ['startsWith', 'starts with'], ['endsWith', 'ends with'],
  ['contains', 'contains'], ['matches', 'matches regex'],
  ['lessThan', '<'], ['lessThanOrEqual', '≤'], ['greaterThan', '>'], ['greaterThanOrEqual', '≥'],
  ['before', 'is before (date)'], ['after', 'is after (date)'],
  ['semVerEqual', 'SemVer ='], ['semVerLessThan', 'SemVer <'], ['semVerGreaterThan', 'SemVer >'],
  ['segmentMatch', 'is in segment'],
];
const NUMERIC = new Set(['lessThan', 'lessThanOrEqual', 'greaterThan', 'greaterThanOrEqual']);
const DATES = new Set(['before', 'after']);

export function clauseDraft(clause) {
  return {
    id: clause._id || null,
    contextKind: clause.contextKind || 'user',
    attribute: clause.attribute || '',
    op: clause.op || 'in',
    negate: Boolean(clause.negate),
    values: (clause.values || []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n'),
  };
}

export function newClause() {
  return { id: null, contextKind: 'user', attribute: 'key', op: 'in', negate: false, values: '' };
}

function typed(op, text) {
  if (NUMERIC.has(op) || (DATES.has(op) && /^-?\d+(\.\d+)?$/.test(text))) {
    const n = Number(text);
    return Number.isNaN(n) ? text : n;
  }
  return text;
}

// The clause as the API takes it; values are one per line. An existing clause sends its `_id`
// so that replaceRules keeps it.
export function clauseBody(draft) {
  const values = draft.values.split('\n').map((v) => v.trim()).filter((v) => v !== '').map((v) => typed(draft.op, v));
  const body = { contextKind: draft.contextKind || 'user', attribute: draft.attribute, op: draft.op, negate: draft.negate, values };
  if (draft.id) body._id = draft.id;
  if (draft.op === 'segmentMatch') { body.attribute = 'segmentMatch'; delete body.contextKind; }
  return body;
}

// One clause row; `path` is the field name prefix for error placement (…/clauses/i).
function options(list, values) {
  clear(list, values.map((v) => h('option', { value: v })));
}

// `suggestions`: what loadSuggestions gave; segment keys are the values offered for segmentMatch.
export function clauseRow(draft, { path, onRemove, segments = [], label, suggestions = NO_SUGGESTIONS }) {
  const id = path.replace(/\W/g, '-');
  const kind = h('input', { value: draft.contextKind, size: 6, autocomplete: 'off', list: `${id}-kinds` });
  const attribute = h('input', { value: draft.attribute, size: 10, autocomplete: 'off', list: `${id}-attributes` });
  const op = select(OPERATORS, draft.op);
  const negate = h('input', { type: 'checkbox', checked: draft.negate });
  const values = h('textarea', { rows: 2, value: draft.values, placeholder: 'one value per line' });
  const kindList = h('datalist', { id: `${id}-kinds` });
  const attributeList = h('datalist', { id: `${id}-attributes` });
  options(kindList, suggestions.kinds());
  const offered = h('div', { class: 'suggest', role: 'group' });
  let offeredFor = null;
  // Buttons adding a value seen (or a segment key) that the clause does not hold yet.
  const offer = () => {
    const isSegment = op.value === 'segmentMatch';
    const present = new Set(values.value.split('\n').map((v) => v.trim()));
    const seen = isSegment ? segments.map((s) => s.key) : suggestions.values(kind.value.trim(), attribute.value.trim());
    const missing = seen.filter((v) => !present.has(v));
    const what = isSegment ? 'Segments' : `Values of ${attribute.value.trim()} seen`;
    const signature = `${what}\n${missing.join('\n')}`;
    if (signature === offeredFor) return; // unchanged: keep the buttons (and the focus on one)
    offeredFor = signature;
    offered.setAttribute('aria-label', what);
    offered.hidden = !missing.length;
    clear(offered, h('span', { class: 'muted' }, `${what}:`), missing.map((v) => button(v, () => {
      values.value = values.value.trim() ? `${values.value.replace(/\s+$/, '')}\n${v}` : v;
      sync();
      const next = offered.querySelector('button');
      (next || values).focus();
    }, { class: 'link', 'aria-label': `Add ${v}` })));
  };
  const sync = () => {
    Object.assign(draft, { contextKind: kind.value.trim(), attribute: attribute.value.trim(), op: op.value, negate: negate.checked, values: values.value });
    const isSegment = op.value === 'segmentMatch';
    kind.closest('.field').hidden = isSegment;
    attribute.closest('.field').hidden = isSegment;
    values.placeholder = isSegment ? 'segment keys, one per line' : 'one value per line';
    options(attributeList, suggestions.attributes(kind.value.trim()));
    offer();
  };
  const row = h('fieldset', { class: 'clause' },
    h('legend', { class: 'visually-hidden' }, label || 'Condition'),
    field('Context kind', kind, { field: `${path}/contextKind` }),
    field('Attribute', attribute, { field: `${path}/attribute` }),
    h('div', { class: 'check' }, negate, h('label', { for: negate.id = `${id}-negate` }, 'not')),
    field('Operator', op, { field: `${path}/op` }),
    h('div', { class: 'values' },
      field(draft.op === 'segmentMatch' ? 'Segments' : 'Values', values, { field: `${path}/values` }),
      offered),
    kindList, attributeList,
    button('Remove condition', onRemove, { class: 'link danger' }));
  for (const el of [kind, attribute, op, negate, values]) el.addEventListener('input', sync);
  op.addEventListener('change', sync);
  sync();
  return row;
}
