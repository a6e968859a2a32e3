// One audit entry as the audit log and a flag's history show it: who did what, where, the
// comment, the request as sent and a line diff of the resource before and after.
import { h, time } from './dom.js';
import { lineDiff } from './diff.js';

function whereOf(entry) {
  const head = `${entry.titleVerb} ${entry.name}`;
  return entry.shortDescription.startsWith(head) ? entry.shortDescription.slice(head.length) : '';
}

export function diffBlock(beforeText, afterText, label = 'Changes') {
  return h('pre', { class: 'diff', 'aria-label': label }, lineDiff(beforeText, afterText).map(([kind, line]) =>
    h('span', { class: `d-${kind}` }, `${kind === 'add' ? '+ ' : kind === 'del' ? '- ' : '  '}${line}\n`)));
}

export function auditEntry(entry) {
  const before = entry.delta.before ? JSON.stringify(entry.delta.before, null, 2) : '';
  const after = entry.delta.after ? JSON.stringify(entry.delta.after, null, 2) : '';
  return h('li', {}, h('details', {},
    h('summary', {}, time(entry.date), ' ', h('strong', {}, entry.token.name), ` ${entry.titleVerb} `, h('strong', {}, entry.name),
      whereOf(entry), entry.comment ? h('span', { class: 'muted' }, ` — ${entry.comment}`) : null),
    h('p', { class: 'mono muted' }, entry.target.resources.join(', ')),
    entry.delta.patch ? h('details', {}, h('summary', {}, 'Request'), h('pre', {}, JSON.stringify(entry.delta.patch, null, 2))) : null,
    diffBlock(before, after)));
}
