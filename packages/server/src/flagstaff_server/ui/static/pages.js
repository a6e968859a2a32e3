// Smaller pages: sign-in, accounts, environment keys, audit log with diffs, the evaluation
// debugger and the SDK fleet.
import { get, post, del, enc, ApiError } from './api.js';
import { h, clear, field, select, button, time, ago } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';
import { auditEntry } from './audit_entry.js';
import { evaluationTable } from './evaluation_table.js';

export function signIn(ctx) {
  const { main, afterSignIn } = ctx;
  const email = h('input', { type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const token = h('input', { type: 'password', autocomplete: 'off', required: true });
  const message = h('p', { role: 'alert', class: 'field-error', hidden: true });
  async function attempt(body, form) {
    message.hidden = true;
    clearFieldErrors(form);
    try {
      await afterSignIn(await post('/api/v2/session', body, { quiet401: true }));
    } catch (error) {
      message.hidden = false;
      message.textContent = error.message;
    }
  }
  const accountForm = h('form', { class: 'card', 'aria-labelledby': 'signin-account' },
    h('h2', { id: 'signin-account' }, 'With your account'),
    field('Email', email, { field: '/email' }), field('Password', password, { field: '/password' }),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  accountForm.addEventListener('submit', (e) => { e.preventDefault(); attempt({ email: email.value, password: password.value }, accountForm); });
  const tokenForm = h('form', { class: 'card', 'aria-labelledby': 'signin-token' },
    h('h2', { id: 'signin-token' }, 'With an access token'),
    field('Access token', token, { hint: 'The admin token printed at first start works too.' }),
    h('button', { type: 'submit' }, 'Sign in with token'));
  tokenForm.addEventListener('submit', (e) => { e.preventDefault(); attempt({ token: token.value.trim() }, tokenForm); });
  const columns = h('div', { class: 'columns' }, accountForm, tokenForm);
  clear(main, h('h1', {}, 'Sign in to Flagstaff'), message, columns);
  // a refused single sign-on comes back here with the reason in ?ssoError
  const params = new URLSearchParams(location.search);
  if (params.has('ssoError')) {
    message.hidden = false;
    message.textContent = `Single sign-on failed: ${params.get('ssoError')}`;
    history.replaceState(null, '', `${location.pathname}${location.hash}`);
  }
  email.focus();
  offerSso(columns);
}

async function offerSso(columns) {
  const sso = await get('/api/v2/session/sso', { quiet401: true }).catch(() => ({ enabled: false }));
  if (!sso.enabled) return;
  const card = h('section', { class: 'card', 'aria-labelledby': 'signin-sso' },
    h('h2', { id: 'signin-sso' }, 'With single sign-on'),
    sso.required ? h('p', { class: 'muted' }, 'Your organisation signs in with SSO; passwords are only for its owner.') : null,
    h('a', { href: '/api/v2/session/sso/start', class: 'button primary', id: 'sso-sign-in' }, 'Sign in with SSO'));
  columns.prepend(card);
}

// What an admin-only page says to anyone else when the API refuses them (403), instead of
// "Something went wrong"; any other error still goes to the router's message.
async function adminOnly(ctx, title, what, load) {
  try {
    return await load();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 403) throw error;
    const who = ctx.app.session;
    const scope = who.projectKey ? `, limited to ${who.projectKey}` : '';
    clear(ctx.main, h('h1', {}, title),
      h('p', {}, `Only an admin of the whole account can ${what}; you are signed in as ${who.name} (${who.role}${scope}).`),
      h('p', { class: 'muted' }, 'Ask such an admin, or sign out and sign in as one.'));
    return null;
  }
}

export async function accounts(ctx) {
  const { main, notify } = ctx;
  const answer = await adminOnly(ctx, 'Accounts', 'see and create accounts', () => get('/api/v2/accounts'));
  if (!answer) return;
  const email = h('input', { type: 'email', autocomplete: 'off' });
  const password = h('input', { type: 'password', autocomplete: 'new-password' });
  const role = select(['reader', 'writer', 'admin'], 'writer');
  const form = h('form', { class: 'card', novalidate: true }, h('h2', {}, 'New account'),
    h('div', { class: 'row' }, field('Email', email, { field: '/email' }), field('Password', password, { field: '/password', hint: 'At least 8 characters' }), field('Role', role, { field: '/role' }),
      h('button', { type: 'submit', class: 'primary' }, 'Create account')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    try {
      await post('/api/v2/accounts', { email: email.value, password: password.value, role: role.value });
      const created = email.value;
      await accounts(ctx);
      notify(`Created ${created}`, 'success');
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.status === 409 ? '/email' : error.path, error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, 'Accounts'),
    h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['Email', 'Role', 'Created', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, answer.items.map((a) => h('tr', {}, h('td', {}, a.email), h('td', {}, a.role), h('td', {}, time(a.creationDate)),
        h('td', {}, button(`Delete ${a.email}`, async () => {
          if (!window.confirm(`Delete the account ${a.email}?`)) return;
          try { await del(`/api/v2/accounts/${enc(a._id)}`); await accounts(ctx); } catch (error) { notify(error.message, 'error'); }
        }, { class: 'link danger' })))))),
    form);
}

function secretCell(label, value) {
  const shown = h('code', { class: 'secret' }, `${value.slice(0, 8)}…`);
  let visible = false;
  const toggle = button(`Show ${label}`, () => {
    visible = !visible;
    shown.textContent = visible ? value : `${value.slice(0, 8)}…`;
    toggle.textContent = `${visible ? 'Hide' : 'Show'} ${label}`;
  }, { class: 'link' });
  const copy = button(`Copy ${label}`, async () => {
    try { await navigator.clipboard.writeText(value); copy.textContent = 'Copied'; } catch { visible = true; shown.textContent = value; copy.textContent = 'Select and copy'; }
    setTimeout(() => { copy.textContent = `Copy ${label}`; }, 2000);
  }, { class: 'link' });
  return h('td', {}, shown, ' ', toggle, ' ', copy);
}

// A small create form whose problem `path` lands on its fields; `send` gets the values.
function createForm(title, fields, label, send, notify) {
  const controls = fields.map(([name, text]) => [name, text, h('input', { autocomplete: 'off' })]);
  const form = h('form', { class: 'card', novalidate: true }, h('h2', {}, title),
    h('div', { class: 'row' }, controls.map(([name, text, input]) => field(text, input, { field: `/${name}` })),
      h('button', { type: 'submit', class: 'primary' }, label)));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const values = Object.fromEntries(controls.map(([name, , input]) => [name, input.value.trim()]));
    try {
      await send(values);
    } catch (error) {
      const where = error.status === 409 ? '/key' : (error.path || '').replace(/^\/environments\/\d+/, '');
      if (!(error instanceof ApiError) || !showFieldError(form, where, error.message)) notify(error.message, 'error');
    }
  });
  return form;
}

export async function projects(ctx) {
  const { app, main, notify, flash, go, reloadProjects } = ctx;
  const admin = app.session.role === 'admin' && !app.session.projectKey;
  clear(main, h('h1', {}, 'Projects'),
    h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Project', 'Environments', 'Tags'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, app.projects.map((p) => h('tr', {},
        h('td', {}, h('a', { href: `#/p/${enc(p.key)}/e/${enc(((p.environments || {}).items || [{}])[0].key || '')}/flags` }, p.name), h('div', { class: 'mono muted' }, p.key)),
        h('td', {}, ((p.environments || {}).items || []).map((e) => e.name).join(', ')),
        h('td', {}, (p.tags || []).map((t) => h('span', { class: 'tag' }, t))))))),
    admin ? createForm('New project', [['name', 'Name'], ['key', 'Key']], 'Create project', async (values) => {
      const made = await post('/api/v2/projects', values);
      flash(`Created project ${made.key} with environments ${made.environments.map((e) => e.key).join(', ')}.`, 'success');
      await reloadProjects();
      go(`#/p/${enc(made.key)}/e/${enc(made.environments[0].key)}/flags`);
    }, notify) : null);
}

export async function keys(ctx) {
  const { app, main, notify, reloadProjects } = ctx;
  const answer = await get(`/api/v2/projects/${enc(app.project)}/environments?limit=1000`);
  async function reset(env, which) {
    const label = which === 'apiKey' ? 'SDK key' : 'mobile key';
    if (!window.confirm(`Reset the ${label} of ${env.name}? The old key keeps working for the grace period.`)) return;
    try {
      await post(`/api/v2/projects/${enc(app.project)}/environments/${enc(env.key)}/${which}`, undefined);
      await reloadProjects();
      await keys(ctx);
      notify(`Reset the ${label} of ${env.name}. Update your services before the old key expires.`, 'success');
    } catch (error) { notify(error.message, 'error'); }
  }
  clear(main, h('h1', {}, `Keys of ${app.project}`),
    h('table', { class: 'list keys' },
      h('thead', {}, h('tr', {}, ['Environment', 'SDK key', 'Mobile key', 'Client-side ID', 'Reset'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, answer.items.map((env) => h('tr', {},
        h('th', { scope: 'row' }, env.name, h('div', { class: 'mono muted' }, env.key)),
        secretCell(`${env.key} SDK key`, env.apiKey),
        secretCell(`${env.key} mobile key`, env.mobileKey),
        h('td', {}, h('code', {}, env._id)),
        h('td', {}, button(`Reset ${env.key} SDK key`, () => reset(env, 'apiKey'), { class: 'link danger' }), ' ',
          button(`Reset ${env.key} mobile key`, () => reset(env, 'mobileKey'), { class: 'link danger' })))))),
    app.session.role === 'admin' ? createForm('New environment', [['name', 'Name'], ['key', 'Key']], 'Create environment', async (values) => {
      await post(`/api/v2/projects/${enc(app.project)}/environments`, values);
      await reloadProjects();
      await keys(ctx);
      notify(`Created environment ${values.key}; every flag is configured there (off).`, 'success');
    }, notify) : null);
}

// " in Production": what the entry's short description says after "<verb> <name>".
export async function audit(ctx) {
  const { app, main } = ctx;
  const q = h('input', { type: 'search' });
  const scope = select([['project', `Everything in ${app.project}`], ['env', `Only ${app.env}`], ['all', 'Whole account']], 'project');
  const list = h('ol', { class: 'audit' });
  let latest = 0;
  async function draw() {
    // answers can arrive out of order when the filters change quickly: only the last one shows
    const asked = ++latest;
    // `proj/p:env/e` is the environment and everything in it, flag-level changes included
    const spec = scope.value === 'all' ? '' : scope.value === 'env' ? `proj/${app.project}:env/${app.env}` : `proj/${app.project}`;
    const params = new URLSearchParams({ limit: '50' });
    if (spec) params.set('spec', spec);
    if (q.value.trim()) params.set('q', q.value.trim());
    const answer = await get(`/api/v2/auditlog?${params}`);
    if (asked !== latest) return;
    clear(list, answer.items.length ? answer.items.map(auditEntry) : h('li', {}, 'No entries.'));
  }
  q.addEventListener('change', draw);
  scope.addEventListener('change', draw);
  clear(main, h('h1', {}, 'Audit log'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => { e.preventDefault(); draw(); } }, field('Search', q), field('Scope', scope), h('button', { type: 'submit' }, 'Filter')),
    list);
  await draw();
}

export async function debug(ctx) {
  const { app, main, notify } = ctx;
  const saved = sessionStorage.getItem('flagstaff.context') || JSON.stringify({ kind: 'user', key: 'user-1', country: 'se' }, null, 2);
  const context = h('textarea', { rows: 8, class: 'mono', value: saved, spellcheck: 'false' });
  const only = h('input', { type: 'search', placeholder: 'all flags' });
  const results = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'card', novalidate: true },
    field('Context (JSON)', context, { field: '', hint: 'A context such as {"kind": "user", "key": "user-1"}, or a multi-context' }),
    field('Flag key filter', only),
    h('button', { type: 'submit', class: 'primary' }, 'Evaluate'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    // results of an earlier context must not stand beside an error about this one
    results.replaceChildren();
    let body;
    try { body = JSON.parse(context.value); } catch (error) { showFieldError(form, '', `The context is not valid JSON: ${error.message}`); return; }
    sessionStorage.setItem('flagstaff.context', context.value);
    try {
      const answer = await post(`/api/v2/projects/${enc(app.project)}/environments/${enc(app.env)}/flags/evaluate`, body);
      const filter = only.value.trim().toLowerCase();
      const items = answer.items.filter((i) => !filter || i.key.toLowerCase().includes(filter));
      clear(results, evaluationTable(items, `${items.length} flags evaluated in ${app.env}`, (key) => `${ctx.base()}/flags/${enc(key)}`));
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.path ?? '', error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, `Evaluate for a context in ${app.env}`), form, results);
}

export async function fleet(ctx) {
  const { app, main } = ctx;
  let answer;
  try {
    answer = await get(`/api/v2/insights/${enc(app.project)}/${enc(app.env)}/sdk-instances`);
  } catch (error) {
    clear(main, h('h1', {}, 'SDK fleet'), h('p', { class: 'muted' }, `no data (${error.message})`));
    return;
  }
  const pill = (i) => (i.stopped ? ['off', 'stopped'] : i.staleFlagData ? ['off', 'stale'] : ['on', 'current']);
  const age = (i) => (i.stopped ? '' : i.dataAgeMs === null ? 'unknown' : `${Math.round(i.dataAgeMs / 1000)} s`);
  const state = (i) => (i.dataSourceState === 'unknown' ? 'no report yet' : i.dataSourceState);
  const due = (i) => (i.nextReportBy ? { title: `next report due by ${new Date(i.nextReportBy).toLocaleString()}` } : {});
  clear(main, h('h1', {}, `SDK fleet in ${app.env}`),
    h('p', {}, `${answer.running} SDK instances running, ${answer.stopped} stopped; ${answer.stale} on stale flag data.`),
    answer.items.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Instance', 'SDK', 'Data source', 'Data age', 'Last seen', 'Dropped events', 'Stale'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, answer.items.map((i) => h('tr', {},
        h('td', { class: 'mono' }, i.instanceId),
        h('td', {}, `${i.sdk.name || '?'} ${i.sdk.version || ''}${i.wrapper ? ` (${JSON.stringify(i.wrapper)})` : ''}`),
        h('td', due(i), state(i)),
        h('td', {}, age(i)),
        h('td', {}, ago(i.lastSeen)),
        h('td', {}, String(i.droppedEvents)),
        h('td', {}, h('span', { class: `pill ${pill(i)[0]}` }, pill(i)[1]))))))
      : h('p', { class: 'muted' }, 'no data: no SDK has sent diagnostics to this environment yet'));
}

export async function tokens(ctx) {
  const { app, main, notify } = ctx;
  const answer = await adminOnly(ctx, 'Access tokens', 'see and create access tokens', () => get('/api/v2/tokens'));
  if (!answer) return;
  const name = h('input', { autocomplete: 'off' });
  const role = select(['reader', 'writer', 'admin'], 'reader');
  const project = select([['', 'All projects'], ...app.projects.map((p) => [p.key, p.name])], '');
  const secret = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'card', novalidate: true }, h('h2', {}, 'New access token'),
    h('div', { class: 'row' }, field('Name', name, { field: '/name' }), field('Role', role, { field: '/role' }),
      field('Limited to project', project, { field: '/projectKey' }),
      h('button', { type: 'submit', class: 'primary' }, 'Create token')), secret);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    try {
      const body = { name: name.value.trim(), role: role.value };
      if (project.value) body.projectKey = project.value;
      const made = await post('/api/v2/tokens', body);
      await tokens(ctx);
      notify(`Created ${made.name}. Copy the token now: it is shown only once.`, 'success');
      const box = document.getElementById('new-token');
      box.hidden = false;
      clear(box, h('p', {}, h('strong', {}, 'New token (shown once): '), h('code', { class: 'secret' }, made.token)));
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.path, error.message)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, 'Access tokens'),
    h('div', { id: 'new-token', class: 'card', hidden: true }),
    h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Name', 'Role', 'Scope', 'Token', 'Created', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, answer.items.map((t) => h('tr', {},
        h('td', {}, t.name), h('td', {}, t.role),
        h('td', {}, [t.projectKey, t.environmentKey].filter(Boolean).join(' / ') || 'all projects'),
        h('td', {}, h('code', {}, t.token)), h('td', {}, time(t.creationDate)),
        h('td', {}, button(`Revoke ${t.name}`, async () => {
          if (!window.confirm(`Revoke ${t.name}? It stops working at once.`)) return;
          try { await del(`/api/v2/tokens/${enc(t._id)}`); await tokens(ctx); notify(`Revoked ${t.name}.`, 'success'); } catch (error) { notify(error.message, 'error'); }
        }, { class: 'link danger' })))))),
    form);
}
