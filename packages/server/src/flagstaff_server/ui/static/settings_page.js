// Settings: your name and password; the project's name and each environment's name, colour,
// required comments, confirmation and critical mark (one JSON Patch of the fields changed); and
// the pages that hold the rest (keys, projects, tokens, accounts, webhooks).
import { get, post, call, enc, ApiError } from './api.js';
import { h, clear, field, uid } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';

const FLAGS = [
  ['requireComments', 'Require a comment on every change'],
  ['confirmChanges', 'Ask to confirm every change'],
  ['critical', 'Critical (policies may treat it apart)'],
];

// What changed between the loaded and the edited values, as JSON Patch replace operations.
export function changes(before, after) {
  return Object.keys(after)
    .filter((name) => after[name] !== before[name])
    .map((name) => ({ op: 'replace', path: `/${name}`, value: after[name] }));
}

const patch = (path, operations) => call('PATCH', path, { body: operations });

function section(title, ...children) {
  const id = uid('settings');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

const fullName = (member) => [member.firstName, member.lastName].filter(Boolean).join(' ');

// Your first and last name: one JSON Patch of the names changed (`/api/v2/members/me/profile`);
// a problem path `/<i>/value` names the field of the i-th operation.
function nameForm({ notify }, member, onSaved) {
  const first = h('input', { value: member.firstName || '', autocomplete: 'given-name' });
  const last = h('input', { value: member.lastName || '', autocomplete: 'family-name' });
  const form = h('form', { class: 'narrow spaced', 'aria-label': 'Change your name', novalidate: true },
    h('div', { class: 'row' },
      field('First name', first, { field: '/firstName' }),
      field('Last name', last, { field: '/lastName' }),
      h('button', { type: 'submit' }, 'Save name')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const operations = changes(
      { firstName: member.firstName || '', lastName: member.lastName || '' },
      { firstName: first.value.trim(), lastName: last.value.trim() });
    if (!operations.length) { notify('Nothing to save: your name is unchanged.'); return; }
    try {
      Object.assign(member, await patch('/api/v2/members/me/profile', operations));
    } catch (error) {
      const at = /^\/(\d+)\//.exec((error instanceof ApiError && error.path) || '');
      const where = at && operations[Number(at[1])] ? operations[Number(at[1])].path : '/firstName';
      if (!showFieldError(form, where, error.message)) notify(error.message, 'error');
      return;
    }
    onSaved();
    notify(`Saved. You are ${fullName(member) || member.email}.`, 'success');
  });
  return form;
}

function profile(ctx, member) {
  const { app, go, flash } = ctx;
  const current = h('input', { type: 'password', autocomplete: 'current-password' });
  const next = h('input', { type: 'password', autocomplete: 'new-password' });
  const again = h('input', { type: 'password', autocomplete: 'new-password' });
  const form = h('form', { class: 'narrow', 'aria-label': 'Change your password', novalidate: true },
    field('Current password', current, { field: '/currentPassword' }),
    field('New password', next, { field: '/password', hint: 'At least 8 characters; afterwards every session of yours ends' }),
    field('New password again', again, { field: 'again' }),
    h('button', { type: 'submit', class: 'primary' }, 'Change password'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    if (next.value !== again.value) { showFieldError(form, 'again', 'The two new passwords differ.'); return; }
    try {
      await post('/api/v2/members/me/password', { currentPassword: current.value, password: next.value });
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.path ?? '', error.message)) showFieldError(form, '/currentPassword', error.message);
      return;
    }
    // the server ended every session of the account, this one included
    app.session = null;
    flash('Password changed. Sign in with the new one.', 'success');
    go('#/signin');
  });
  const who = h('strong', {});
  const showWho = () => clear(who, member ? [member.email, fullName(member) ? ` (${fullName(member)})` : ''] : app.session.name);
  showWho();
  return section('Your profile',
    h('p', {}, 'Signed in as ', who, ` · role ${app.session.role}`,
      app.session.projectKey ? ` · limited to project ${app.session.projectKey}` : '',
      member ? [' · ', h('a', { href: '#/me' }, 'your roles and teams')] : null),
    member ? [nameForm(ctx, member, showWho), form] : h('p', { class: 'muted' }, 'This session uses an access token, which has no password.'));
}

function projectForm(ctx, project) {
  const { notify, reloadProjects } = ctx;
  const name = h('input', { value: project.name, required: true });
  const form = h('form', { class: 'row', 'aria-label': `Project ${project.key}`, novalidate: true },
    field('Project name', name, { field: '/name' }),
    h('button', { type: 'submit' }, 'Rename project'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const operations = changes({ name: project.name }, { name: name.value.trim() });
    if (!operations.length) { notify('Nothing changed.'); return; }
    try {
      await patch(`/api/v2/projects/${enc(project.key)}`, operations);
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.path ?? '', error.message)) notify(error.message, 'error');
      return;
    }
    project.name = name.value.trim();
    await reloadProjects();
    notify(`Renamed project ${project.key} to ${project.name}.`, 'success');
  });
  return form;
}

function environmentForm(ctx, project, env) {
  const { notify, reloadProjects } = ctx;
  const loaded = { name: env.name, color: env.color, ...Object.fromEntries(FLAGS.map(([k]) => [k, Boolean(env[k])])) };
  const name = h('input', { value: env.name, required: true });
  const color = h('input', { type: 'color', value: `#${env.color || '000000'}` });
  const boxes = Object.fromEntries(FLAGS.map(([k]) => [k, h('input', { type: 'checkbox', checked: Boolean(env[k]), 'data-field': `/${k}` })]));
  const form = h('form', { class: 'card', 'aria-label': `Environment ${env.key}`, novalidate: true },
    h('h3', {}, env.name, ' ', h('span', { class: 'mono muted' }, env.key)),
    h('div', { class: 'row' },
      field('Name', name, { field: '/name' }),
      field('Colour', color, { field: '/color' })),
    FLAGS.map(([k, label]) => h('label', { class: 'check' }, boxes[k], label)),
    h('button', { type: 'submit' }, `Save ${env.key}`));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const edited = {
      name: name.value.trim(),
      color: color.value.replace(/^#/, ''),
      ...Object.fromEntries(FLAGS.map(([k]) => [k, boxes[k].checked])),
    };
    const operations = changes(loaded, edited);
    if (!operations.length) { notify(`Nothing changed in ${env.key}.`); return; }
    const turningOff = FLAGS.filter(([k]) => loaded[k] && !edited[k]).map(([, label]) => label.toLowerCase());
    // loosening a safeguard is asked twice: it affects everyone who changes flags here
    if (turningOff.length && !window.confirm(`Turn off in ${env.name}: ${turningOff.join('; ')}?`)) return;
    try {
      await patch(`/api/v2/projects/${enc(project.key)}/environments/${enc(env.key)}`, operations);
    } catch (error) {
      if (!(error instanceof ApiError) || !showFieldError(form, error.path ?? '', error.message)) notify(error.message, 'error');
      return;
    }
    Object.assign(loaded, edited);
    await reloadProjects();
    notify(`Saved ${env.key}: ${operations.map((o) => o.path.slice(1)).join(', ')}.`, 'success');
  });
  return form;
}

export async function render(ctx) {
  const { app, main } = ctx;
  let member = null;
  try { member = await get('/api/v2/members/me'); } catch { /* a token session: no member */ }
  const project = app.projects.find((p) => p.key === app.project);
  const admin = app.session.role === 'admin';
  const unscoped = !app.session.projectKey;
  const links = [
    ['Keys', `#/p/${enc(app.project)}/keys`, 'SDK keys, mobile keys and their reset; add an environment'],
    ['Projects', '#/projects', 'every project; create one'],
  ];
  if (unscoped) links.push(['Webhooks', '#/webhooks', 'changes sent to other services']);
  if (admin && unscoped) links.push(['Tokens', '#/tokens', 'access tokens for scripts and services'], ['Accounts', '#/accounts', 'who may sign in']);
  let projectPart = null;
  if (project) {
    const answer = await get(`/api/v2/projects/${enc(project.key)}/environments?limit=1000`);
    const editable = admin;
    projectPart = section(`Project ${project.name}`,
      editable ? projectForm(ctx, { key: project.key, name: project.name }) : null,
      answer.items.length
        ? answer.items.map((env) => (editable ? environmentForm(ctx, project, env) : h('p', {}, env.name)))
        : h('p', { class: 'empty' }, 'No environments yet: add one on the Keys page.'),
      editable ? null : h('p', { class: 'muted' }, 'Only admins change project and environment settings.'));
  }
  clear(main, h('h1', {}, 'Settings'),
    profile(ctx, member),
    projectPart,
    section('Other pages', h('ul', { class: 'plain' }, links.map(([label, href, what]) => h('li', {}, h('a', { href }, label), ` — ${what}`)))));
}
