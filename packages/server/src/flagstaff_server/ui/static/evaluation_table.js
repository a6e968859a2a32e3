// One table of flag evaluations (the evaluation API's items: key, _value, reason), shared by the
// debugger and the contexts explorer. Drawing only; the caller fetches.
import { h } from './dom.js';

// The reason's fields beyond its kind, as "name: JSON" (ruleID repeats ruleId: shown once).
export function reasonDetails(reason) {
  return Object.entries(reason || {})
    .filter(([k]) => k !== 'kind' && k !== 'ruleID')
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(', ');
}

export function evaluationTable(items, caption, flagHref) {
  return h('table', { class: 'list' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ['Flag', 'Value', 'Reason', 'Details'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, items.map((item) => {
      const reason = item.reason || {};
      return h('tr', {},
        h('td', {}, h('a', { href: flagHref(item.key) }, item.key)),
        h('td', {}, h('code', {}, JSON.stringify(item._value))),
        h('td', {}, h('span', { class: 'pill' }, reason.kind || '—')),
        h('td', { class: 'mono' }, reasonDetails(reason)));
    })));
}
