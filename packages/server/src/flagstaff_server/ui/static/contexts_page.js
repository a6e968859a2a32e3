// The contexts explorer: the contexts ingestion has seen in the environment, searched by kind,
// part of the key and an attribute (the search lives in the address), and one context's page
// with every flag's value and reason for it and its recent evaluations.
import { get, post, enc, ApiError } from './api.js';
import { h, clear, field, time } from './dom.js';
import { evaluationTable, reasonDetails } from './evaluation_table.js';

const FILTERS = ['kind', 'key', 'attribute', 'value'];

function filtersFromHash() {
  const at = location.hash.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : location.hash.slice(at + 1));
  return Object.fromEntries(FILTERS.map((name) => [name, params.get(name) || '']));
}

function contextHref(ctx, context) {
  return `${ctx.base()}/contexts/${enc(context.kind || 'user')}/${enc(context.key)}`;
}

function attributeNames(context) {
  return Object.keys(context).filter((name) => name !== 'kind' && name !== 'key' && name !== '_meta');
}

export async function list(ctx) {
  const { app, main, go } = ctx;
  const filters = filtersFromHash();
  const inputs = Object.fromEntries(FILTERS.map((name) => [name, h('input', { type: 'search', name, value: filters[name], autocomplete: 'off' })]));
  const form = h('form', { class: 'card filters', role: 'search', 'aria-label': 'Search contexts' },
    field('Kind', inputs.kind, { hint: 'exactly, e.g. user' }),
    field('Key contains', inputs.key, { hint: 'any part, any case' }),
    field('Attribute', inputs.attribute, { hint: 'has this attribute' }),
    field('Attribute value', inputs.value, { field: 'value', hint: 'equals (or a list holds it)' }),
    h('button', { type: 'submit', class: 'primary' }, 'Search'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const name of FILTERS) if (inputs[name].value.trim()) params.set(name, inputs[name].value.trim());
    const query = params.toString();
    go(`${ctx.base()}/contexts${query ? `?${query}` : ''}`);
  });
  const query = new URLSearchParams({ limit: '200' });
  for (const name of FILTERS) if (filters[name]) query.set(name, filters[name]);
  const heading = h('h1', {}, `Contexts in ${app.env}`);
  let answer;
  try {
    answer = await get(`/api/v2/insights/${enc(app.project)}/${enc(app.env)}/contexts?${query}`);
  } catch (error) {
    const message = error instanceof ApiError && error.path === '/value' ? 'Give the attribute the value belongs to.' : error.message;
    clear(main, heading, form, h('p', { role: 'alert', class: 'field-error' }, message));
    return;
  }
  const searched = FILTERS.some((name) => filters[name]);
  let body;
  if (!answer.totalCount) {
    body = h('p', { class: 'empty' }, `No contexts seen in ${app.env} yet. SDKs report the contexts they evaluate flags for with their events; they appear here once ingestion has processed them.`);
  } else if (!answer.items.length) {
    body = h('p', { class: 'empty' }, `No context of the ${answer.totalCount} kept matches this search.`);
  } else {
    body = h('table', { class: 'list', id: 'contexts' },
      h('caption', {}, searched
        ? `${answer.items.length} matching contexts (newest first) of ${answer.totalCount} kept`
        : `${answer.items.length} most recently seen of ${answer.totalCount} kept`),
      h('thead', {}, h('tr', {}, ['Kind', 'Key', 'Name', 'Attributes', 'Last seen'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, answer.items.map(({ context, lastSeen }) => h('tr', {},
        h('td', {}, h('span', { class: 'pill' }, context.kind || 'user')),
        h('td', { class: 'mono' }, h('a', { href: contextHref(ctx, context) }, context.key)),
        h('td', {}, context.name || ''),
        h('td', { class: 'mono' }, attributeNames(context).join(', ')),
        h('td', {}, time(lastSeen))))));
  }
  clear(main, heading, form, body);
}

export async function detail(ctx, kindPart, keyPart) {
  const { app, main } = ctx;
  const kind = decodeURIComponent(kindPart);
  const key = decodeURIComponent(keyPart);
  const heading = h('h1', {}, `${kind} ${key}`);
  const back = h('p', {}, h('a', { href: `${ctx.base()}/contexts` }, `All contexts in ${app.env}`));
  let seen;
  try {
    seen = await get(`/api/v2/insights/${enc(app.project)}/${enc(app.env)}/contexts/${enc(kind)}/${enc(key)}`);
  } catch (error) {
    clear(main, heading, back, h('p', { role: 'alert' }, error.message));
    return;
  }
  const flagHref = (flagKey) => `${ctx.base()}/flags/${enc(flagKey)}`;
  let flags;
  try {
    const answer = await post(`/api/v2/projects/${enc(app.project)}/environments/${enc(app.env)}/flags/evaluate`, seen.context);
    flags = answer.items.length
      ? evaluationTable(answer.items, `Every flag's value for this context in ${app.env}, as served now`, flagHref)
      : h('p', { class: 'empty' }, 'This project has no flags.');
  } catch (error) {
    flags = h('p', { role: 'alert' }, `Could not evaluate: ${error.message}`);
  }
  const recent = seen.evaluations.length
    ? h('table', { class: 'list', id: 'recent-evaluations' },
      h('caption', {}, `${seen.evaluations.length} most recent, as the SDKs reported them`),
      h('thead', {}, h('tr', {}, ['When', 'Flag', 'Variation', 'Value', 'Reason'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, seen.evaluations.map((item) => h('tr', {},
        h('td', {}, time(item.creationDate)),
        h('td', {}, item.flagKey ? h('a', { href: flagHref(item.flagKey) }, item.flagKey) : '—'),
        h('td', {}, item.variation ?? '—'),
        h('td', {}, h('code', {}, JSON.stringify(item.value ?? null))),
        h('td', { class: 'mono' }, item.reason ? [item.reason.kind || '', ' ', reasonDetails(item.reason)] : '—')))))
    : h('p', { class: 'empty' }, 'No single evaluations of this context among the latest events received. SDKs send one per evaluation only for flags that track events or are being debugged; otherwise they send counts, which name no context.');
  clear(main, heading, back,
    h('p', {}, 'Last seen ', time(seen.lastSeen)),
    h('section', { class: 'card', 'aria-labelledby': 'context-attributes' },
      h('h2', { id: 'context-attributes' }, 'Attributes'),
      h('pre', { class: 'mono', tabindex: '0', 'aria-label': 'The context as last seen' }, JSON.stringify(seen.context, null, 2))),
    h('section', { class: 'card', 'aria-labelledby': 'context-flags' },
      h('h2', { id: 'context-flags' }, 'Flags'), flags),
    h('section', { class: 'card', 'aria-labelledby': 'context-recent' },
      h('h2', { id: 'context-recent' }, 'Recent evaluations'), recent));
}
