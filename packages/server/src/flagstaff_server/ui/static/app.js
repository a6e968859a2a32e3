// The UI shell: session, project/environment switcher, navigation and the hash router.
// Each page is a module exporting render(ctx) that fills <main>.
import { get, post, del, setCsrf, onUnauthorized, enc } from './api.js';
import { h, clear, select, field, button } from './dom.js';
import * as flagList from './flag_list.js';
import * as flagPage from './flag_page.js';
import * as segmentPage from './segment_page.js';
import * as memberPage from './member_page.js';
import * as pages from './pages.js';
import * as contextsPage from './contexts_page.js';
import * as settingsPage from './settings_page.js';
import * as webhooksPage from './webhooks_page.js';
import * as metricsPage from './metrics_page.js';
import * as experimentPage from './experiment_page.js';

const main = document.getElementById('main');
const app = { session: null, projects: [], project: null, env: null };

export function notify(message, kind = 'info') {
  const box = document.getElementById('notice');
  box.hidden = false;
  box.className = `notice ${kind}`;
  clear(box, message);
}

// A notice for the page about to be shown (navigation clears the current one).
let pendingNotice = null;
export function flash(message, kind = 'info') { pendingNotice = [message, kind]; }

export function clearNotice() {
  const box = document.getElementById('notice');
  box.hidden = true;
  box.replaceChildren();
}

export function go(hash) {
  if (location.hash === hash) route(); else location.hash = hash;
}

export function base(project = app.project, env = app.env) {
  return `#/p/${enc(project)}/e/${enc(env)}`;
}

const ROUTES = [
  [/^#\/signin$/, () => pages.signIn(ctx())],
  [/^#\/accounts$/, () => pages.accounts(ctx())],
  [/^#\/me$/, () => memberPage.me(ctx())],
  [/^#\/projects$/, () => pages.projects(ctx())],
  [/^#\/tokens$/, () => pages.tokens(ctx())],
  [/^#\/webhooks$/, () => webhooksPage.list(ctx())],
  [/^#\/webhooks\/([^/]+)$/, (id) => webhooksPage.detail(ctx(), id)],
  [/^#\/p\/([^/]+)\/keys$/, (p) => pages.keys(ctx(p))],
  [/^#\/p\/([^/]+)\/settings$/, (p) => settingsPage.render(ctx(p))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/flags(?:\?[^#]*)?$/, (p, e) => flagList.render(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/new-flag$/, (p, e) => flagList.create(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/flags\/([^/]+)$/, (p, e, k) => flagPage.render(ctx(p, e), k)],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/segments$/, (p, e) => segmentPage.list(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/segments\/([^/]+)$/, (p, e, k) => segmentPage.render(ctx(p, e), k)],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/metrics$/, (p, e) => metricsPage.list(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/metrics\/([^/]+)$/, (p, e, k) => metricsPage.render(ctx(p, e), k)],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/experiments$/, (p, e) => experimentPage.list(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/experiments\/([^/?]+)(?:\?([^#]*))?$/, (p, e, k, q) => experimentPage.render(ctx(p, e), k, q)],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/audit$/, (p, e) => pages.audit(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/contexts(?:\?[^#]*)?$/, (p, e) => contextsPage.list(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/contexts\/([^/]+)\/([^/?]+)$/, (p, e, k, key) => contextsPage.detail(ctx(p, e), k, key)],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/debugger$/, (p, e) => pages.debug(ctx(p, e))],
  [/^#\/p\/([^/]+)\/e\/([^/]+)\/fleet$/, (p, e) => pages.fleet(ctx(p, e))],
];

function ctx(project, env) {
  if (project) app.project = decodeURIComponent(project);
  if (env) app.env = decodeURIComponent(env);
  // What pages need of the shell comes in here, so no page imports this module.
  return { app, main, notify, flash, clearNotice, go, base, refreshShell: renderShell, afterSignIn, reloadProjects };
}

async function loadProjects() {
  const answer = await get('/api/v2/projects?expand=environments&limit=1000');
  app.projects = answer.items;
}

function environmentsOf(projectKey) {
  const project = app.projects.find((p) => p.key === projectKey);
  return project && project.environments ? project.environments.items : [];
}

function renderShell() {
  const switcher = document.getElementById('switcher');
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!app.session) {
    switcher.replaceChildren(); nav.replaceChildren(); who.replaceChildren();
    return;
  }
  const projectSelect = select(app.projects.map((p) => [p.key, p.name]), app.project, { id: 'project-select' });
  projectSelect.addEventListener('change', () => {
    const envs = environmentsOf(projectSelect.value);
    go(`${base(projectSelect.value, envs.length ? envs[0].key : '')}/flags`);
  });
  const envSelect = select(environmentsOf(app.project).map((e) => [e.key, e.name]), app.env, { id: 'env-select' });
  envSelect.addEventListener('change', () => {
    const rest = location.hash.replace(/^#\/p\/[^/]+\/e\/[^/]+/, '');
    const page = rest.startsWith('/flags/') || rest.startsWith('/segments/') || !rest ? rest || '/flags' : rest;
    go(`${base(app.project, envSelect.value)}${page}`);
  });
  clear(switcher,
    field('Project', projectSelect),
    field('Environment', envSelect));
  const links = [
    ['Flags', `${base()}/flags`],
    ['Segments', `${base()}/segments`],
    ['Contexts', `${base()}/contexts`],
    ['Experiments', `${base()}/experiments`],
    ['Debugger', `${base()}/debugger`],
    ['SDK fleet', `${base()}/fleet`],
    ['Keys', `#/p/${enc(app.project)}/keys`],
    ['Audit log', `${base()}/audit`],
    ['Settings', app.project ? `#/p/${enc(app.project)}/settings` : '#/projects'],
  ];
  clear(nav, h('ul', {}, links.map(([label, href]) => {
    const current = location.hash.startsWith(href);
    return h('li', {}, h('a', { href, 'aria-current': current ? 'page' : null }, label));
  })));
  clear(who,
    h('a', { href: '#/me', class: 'muted', title: 'Your account' }, `${app.session.name} · ${app.session.role}`),
    button('Sign out', signOut, { class: 'link' }));
}

async function signOut() {
  try { await del('/api/v2/session'); } catch { /* already ended */ }
  app.session = null;
  setCsrf(null);
  go('#/signin');
}

export async function signedIn(session) {
  app.session = session;
  setCsrf(session.csrfToken);
  await loadProjects();
  if (!app.project || !app.projects.some((p) => p.key === app.project)) {
    const first = app.projects[0];
    app.project = first ? first.key : null;
    const envs = first ? environmentsOf(first.key) : [];
    app.env = envs.length ? envs[0].key : null;
  }
}

export async function reloadProjects() { await loadProjects(); renderShell(); }

// Every page fetches before it draws: until it has, <main> says so (and is aria-busy, which
// the browser tests wait on), with the heading's space kept so the content does not jump.
function showLoading() {
  main.setAttribute('aria-busy', 'true');
  clear(main, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
}

async function route() {
  const hash = location.hash || '#/';
  if (!app.session && hash !== '#/signin') {
    try {
      // answers 200 when signed out too: asking `GET /api/v2/session` would log a 401 console
      // error on every visit to the sign-in page
      const status = await get('/api/v2/session/status', { quiet401: true });
      if (!status.signedIn) throw new Error('signed out');
      await signedIn(status);
    } catch {
      sessionStorage.setItem('flagstaff.after', hash);
      location.hash = '#/signin';
      return;
    }
  }
  if (hash === '#/' || hash === '#') {
    if (!app.project) { go('#/projects'); return; }
    go(`${base()}/flags`);
    return;
  }
  for (const [pattern, render] of ROUTES) {
    const match = hash.match(pattern);
    if (match) {
      clearNotice();
      renderShell();
      showLoading();
      try {
        await render(...match.slice(1));
      } catch (error) {
        clear(main, h('h1', {}, 'Something went wrong'), h('p', { role: 'alert' }, error.message));
      }
      main.removeAttribute('aria-busy');
      performance.mark('flagstaff:page-ready'); // what bench/ui.py times a page load to
      renderShell();
      if (pendingNotice) { notify(...pendingNotice); pendingNotice = null; }
      // a page that focused its own first field keeps it; otherwise focus starts at the content
      const active = document.activeElement;
      if (!active || active === document.body || !main.contains(active)) main.focus({ preventScroll: true });
      return;
    }
  }
  clear(main, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to flags')));
}

onUnauthorized(() => {
  app.session = null;
  sessionStorage.setItem('flagstaff.after', location.hash);
  location.hash = '#/signin';
});

export async function afterSignIn(session) {
  await signedIn(session);
  const next = sessionStorage.getItem('flagstaff.after');
  sessionStorage.removeItem('flagstaff.after');
  go(next && next !== '#/signin' ? next : '#/');
}

export { post };
window.addEventListener('hashchange', route);
route();
