// The Webhooks page (docs/workflows.md, "Webhooks"): the account's webhooks with their delivery
// status, creating and editing one (URL, on, signing and its secret, tags, policy statements as
// JSON), deleting it, and each webhook's delivery log from the API: every delivery's status and
// every attempt's time, HTTP status, latency and error. Reading needs an unscoped session,
// changing an unscoped admin; the server says so otherwise, and the page shows its words.
import { get, post, del, call, enc } from './api.js';
import { h, clear, field, select, button, time } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';

const BASE = '/api/v2/webhooks';
const counts = (s) => `delivered ${s.successCount || 0} · failed attempts ${s.errorCount || 0} · pending ${s.pending || 0}`;
const STATUSES = [['', 'all'], ['pending', 'pending'], ['delivered', 'delivered'], ['failed', 'failed']];

// The form's controls for a webhook (or a new one); `read()` gives the body's fields or marks
// the field at fault and gives null.
function webhookFields(hook = {}) {
  const name = h('input', { value: hook.name || '', autocomplete: 'off' });
  const url = h('input', { value: hook.url || '', autocomplete: 'off', type: 'url', size: 50, required: true });
  const on = h('input', { type: 'checkbox', checked: hook.on !== false, id: 'webhook-on' });
  const sign = h('input', { type: 'checkbox', checked: hook.sign !== false, id: 'webhook-sign' });
  const secret = h('input', { type: 'password', autocomplete: 'new-password', value: '' });
  const tags = h('input', { value: (hook.tags || []).join(', '), autocomplete: 'off' });
  const statements = h('textarea', { rows: 5, value: hook.statements && hook.statements.length ? JSON.stringify(hook.statements, null, 2) : '' });
  const element = h('div', {},
    h('div', { class: 'row' }, field('Name', name, { field: 'name' }), field('URL', url, { field: 'url' })),
    h('div', { class: 'row' },
      h('div', { class: 'check' }, on, h('label', { for: on.id }, 'On')),
      h('div', { class: 'check' }, sign, h('label', { for: sign.id }, 'Sign deliveries (X-LD-Signature)'))),
    h('div', { class: 'row' },
      field('Secret', secret, { field: 'secret', hint: hook._id ? 'Leave blank to keep the current secret' : 'Leave blank to have one generated when signing' }),
      field('Tags', tags, { field: 'tags', hint: 'Comma separated' })),
    field('Policy statements', statements, { field: 'statements', hint: 'JSON, e.g. [{"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/production:flag/*"]}]; blank: every change' }));
  function read(root) {
    clearFieldErrors(root);
    let parsed = [];
    if (statements.value.trim()) {
      try { parsed = JSON.parse(statements.value); } catch { showFieldError(root, 'statements', 'This is not valid JSON.'); return null; }
    }
    return {
      name: name.value.trim(), url: url.value.trim(), on: on.checked, sign: sign.checked,
      secret: secret.value || undefined, statements: parsed,
      tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean),
    };
  }
  return { element, read };
}

// Problem paths (`/url`, `/statements/0/actions/1`, `/0/value` of a JSON Patch) on their fields.
function placeError(root, error, fields, notify) {
  let path = (error.path || '').replace(/^\//, '');
  const m = path.match(/^(\d+)(?:\/value)?(.*)$/);
  if (m && fields) path = `${fields[Number(m[1])]}${m[2]}`;
  if (!showFieldError(root, path, error.message)) notify(`${error.message}${error.path ? ` (at ${error.path})` : ''}`, 'error');
}

export async function list(ctx) {
  const { main, notify, go } = ctx;
  const answer = await get(BASE);
  const fields = webhookFields();
  const form = h('form', { novalidate: true, 'aria-labelledby': 'new-webhook-title' },
    h('h2', { id: 'new-webhook-title' }, 'Add a webhook'), fields.element,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add webhook')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = fields.read(form);
    if (!body) return;
    try {
      const made = await post(BASE, body);
      ctx.flash(`Added the webhook ${made.name || made.url}.`, 'success');
      go(`#/webhooks/${enc(made._id)}`);
    } catch (error) { placeError(form, error, null, notify); }
  });
  const rows = answer.items.map((hook) => {
    const s = hook._status || {};
    return h('tr', {},
      h('th', { scope: 'row' }, h('a', { href: `#/webhooks/${enc(hook._id)}` }, hook.name || hook._id)),
      h('td', { class: 'mono' }, hook.url),
      h('td', {}, h('span', { class: `pill ${hook.on ? 'on' : 'off'}` }, hook.on ? 'On' : 'Off')),
      h('td', {}, counts(s)),
      h('td', {}, s.circuit === 'open' ? 'circuit open' : 'ok'));
  });
  clear(main, h('h1', {}, 'Webhooks'),
    h('p', { class: 'muted' }, 'Each change a webhook\'s statements allow is POSTed to its URL as the audit entry, signed with its secret, retried until delivered.'),
    rows.length
      ? h('table', { class: 'list workflow', id: 'webhooks' },
        h('caption', { class: 'visually-hidden' }, 'Webhooks'),
        h('thead', {}, h('tr', {}, ['Name', 'URL', 'State', 'Deliveries', 'Circuit'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, rows))
      : h('p', { id: 'webhooks' }, 'No webhooks yet.'),
    h('section', { class: 'card' }, form));
}

function attemptList(delivery) {
  return h('ol', { class: 'attempts' }, (delivery.attemptLog || []).map((a) => h('li', {},
    time(a.date), ': ', a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`, `, ${a.latencyMs} ms`, a.error && a.error !== `HTTP ${a.statusCode}` ? ` — ${a.error}` : '')));
}

// `onRefresh` runs on Refresh too (the page's status line follows the log).
function deliveryLog(id, onRefresh) {
  const host = h('div', { id: 'deliveries' });
  const status = select(STATUSES, '');
  async function refresh() {
    const answer = await get(`${BASE}/${enc(id)}/deliveries?limit=50${status.value ? `&status=${enc(status.value)}` : ''}`);
    clear(host, answer.items.length
      ? h('table', { class: 'list workflow' },
        h('caption', {}, `${answer.totalCount} ${answer.totalCount === 1 ? 'delivery' : 'deliveries'}, newest first`),
        h('thead', {}, h('tr', {}, ['Created', 'Status', 'Attempts', 'Finished', 'Attempt log (status, latency)'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, answer.items.map((d) => h('tr', { dataset: { id: d._id } },
          h('td', {}, time(d.creationDate)),
          h('td', {}, h('span', { class: `pill ${d.status === 'delivered' ? 'on' : 'off'}` }, d.status)),
          h('td', {}, String(d.attempts)),
          h('td', {}, d.finishedDate ? time(d.finishedDate) : d.nextAttemptDate ? ['next ', time(d.nextAttemptDate)] : '—'),
          h('td', {}, attemptList(d))))))
      : h('p', { class: 'muted' }, 'No deliveries.'));
  }
  status.addEventListener('change', () => refresh());
  const element = h('section', { class: 'card', 'aria-labelledby': 'deliveries-title' },
    h('h2', { id: 'deliveries-title' }, 'Delivery log'),
    h('div', { class: 'row' }, field('Status', status), button('Refresh', () => Promise.all([refresh(), onRefresh()]), { id: 'refresh-deliveries' })),
    host);
  return { element, refresh };
}

export async function detail(ctx, rawId) {
  const { main, notify, go } = ctx;
  const id = decodeURIComponent(rawId);
  const url = `${BASE}/${enc(id)}`;
  let hook = await get(url);
  const log = deliveryLog(id, async () => { hook = await get(url); drawTitle(); });
  const formHost = h('div');
  function drawForm() {
    const fields = webhookFields(hook);
    const form = h('form', { novalidate: true, 'aria-labelledby': 'edit-webhook-title' },
      h('h2', { id: 'edit-webhook-title' }, 'Settings'), fields.element,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, 'Save webhook'),
        button('Delete webhook', remove, { class: 'danger' })));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const body = fields.read(form);
      if (!body) return;
      const patch = [];
      const names = [];
      for (const name of ['name', 'url', 'on', 'sign', 'tags', 'statements']) {
        if (JSON.stringify(body[name]) !== JSON.stringify(hook[name] ?? (name === 'tags' || name === 'statements' ? [] : ''))) {
          patch.push({ op: 'replace', path: `/${name}`, value: body[name] });
          names.push(name);
        }
      }
      if (body.secret) { patch.push({ op: 'replace', path: '/secret', value: body.secret }); names.push('secret'); }
      if (!patch.length) { notify('Nothing to save: the webhook is unchanged.'); return; }
      try {
        hook = await call('PATCH', url, { body: patch });
        notify(`Saved the webhook ${hook.name || hook.url}.`, 'success');
        draw();
      } catch (error) { placeError(form, error, names, notify); }
    });
    clear(formHost, form);
  }
  async function remove() {
    if (!window.confirm(`Delete the webhook ${hook.name || hook.url}? Its pending deliveries are dropped.`)) return;
    try { await del(url); ctx.flash('Webhook deleted.', 'success'); go('#/webhooks'); } catch (error) { notify(error.message, 'error'); }
  }
  const title = h('div');
  function draw() { drawTitle(); drawForm(); }
  function drawTitle() {
    const s = hook._status || {};
    clear(title, h('h1', {}, hook.name || hook.url),
      h('p', { class: 'mono muted' }, hook.url),
      h('p', {}, `${hook.on ? 'On' : 'Off'} · ${hook.sign ? 'signed' : 'not signed'} · ${counts(s)}`,
        s.lastError ? [' · last error ', time(s.lastError), s.lastErrorMessage ? `: ${s.lastErrorMessage}` : ''] : '',
        s.circuit === 'open' ? [' · circuit open until ', time(s.circuitOpenUntil)] : ''));
  }
  clear(main, h('p', {}, h('a', { href: '#/webhooks' }, '← All webhooks')), title, log.element, h('section', { class: 'card' }, formHost));
  draw();
  await log.refresh();
}
