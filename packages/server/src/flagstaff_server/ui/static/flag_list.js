// The flag list (search, tags, filters and sort kept in the URL, a per-row on/off switch,
// status, last evaluated) and the create-flag form.
import { get, post, enc, ApiError } from './api.js';
import { h, clear, append, field, select, ago } from './dom.js';
import { showFieldError, clearFieldErrors } from './form_error.js';
import { rowToggle } from './row_toggle.js';
import { permissionsFor, flagResource } from './permissions.js';
import { bulkToolbar } from './bulk_actions.js';
import { rowKeys, slashFocuses } from './row_keys.js';

const DEFAULTS = { q: '', tag: '', state: 'all', type: 'all', on: 'all', status: 'all', maintainer: '', sort: 'name' };
const STATUSES = ['new', 'active', 'launched', 'inactive', 'stale'];
const NO_MAINTAINER = '(none)';
// Rows drawn before the page counts as ready: more than a 900 px screen holds. The rest follow in
// the next task, on the first draw only (bench/ui.py, docs/ui.md "Speed with 1,000 flags").
const FIRST_ROWS = 40;

// LaunchDarkly's flags name a member (`maintainerId`) or a team (`maintainerTeamKey`).
function maintainerOf(flag) {
  if (flag.maintainerId) return flag.maintainerId;
  return flag.maintainerTeamKey ? `team ${flag.maintainerTeamKey}` : '';
}


// Filters and sort live in the hash's query (`#/p/x/e/y/flags?tag=a&sort=key`), so a filtered
// list can be bookmarked, shared and survives a reload.
function filtersFromHash() {
  const at = location.hash.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : location.hash.slice(at + 1));
  return Object.fromEntries(Object.entries(DEFAULTS).map(([k, d]) => [k, params.get(k) ?? d]));
}

function writeFiltersToHash(filters) {
  const params = new URLSearchParams();
  for (const [k, d] of Object.entries(DEFAULTS)) if (filters[k] !== d) params.set(k, filters[k]);
  const path = location.hash.split('?')[0];
  const query = params.toString();
  history.replaceState(null, '', query ? `${path}?${query}` : path);
}

const SORTS = {
  name: (a, b) => a.name.localeCompare(b.name),
  key: (a, b) => a.key.localeCompare(b.key),
  created: (a, b) => (b.creationDate || 0) - (a.creationDate || 0),
};

async function insightStatuses(project, env) {
  try {
    const answer = await get(`/api/v2/insights/${enc(project)}/${enc(env)}/flag-statuses`);
    return new Map(answer.items.map((item) => [item.flagKey, item]));
  } catch {
    return null;
  }
}

export async function render(ctx) {
  const { app, main, base } = ctx;
  const filters = filtersFromHash();
  const project = app.projects.find((p) => p.key === app.project);
  const env = ((project && project.environments && project.environments.items) || []).find((e) => e.key === app.env)
    || { key: app.env, name: app.env };
  // summary: the list needs no rules or targets (the bench's flags have none, so there it saves
  // only ~4% of the bytes); live and archived flags (and the permissions) are asked for at once
  // (bench/ui.py, docs/ui.md "Speed with 1,000 flags")
  const listed = `/api/v2/flags/${enc(app.project)}?env=${enc(app.env)}&limit=1000&summary=true`;
  const anyFlagHere = flagResource(app.project, app.env, '*');
  const newFlags = flagResource(app.project, '*', '*');
  const [answer, archived, insights, allowed] = await Promise.all([
    get(listed),
    get(`${listed}&archived=true`),
    insightStatuses(app.project, app.env),
    permissionsFor([anyFlagHere, newFlags]),
  ]);
  const canCreate = allowed.may(newFlags, 'createFlag');
  const canToggle = allowed.may(anyFlagHere, 'updateOn');
  const flags = [...answer.items, ...archived.items];
  const tags = [...new Set(flags.flatMap((f) => f.tags || []))].sort();
  const maintainers = [...new Set(flags.map(maintainerOf).filter(Boolean))].sort();

  const search = h('input', { type: 'search', value: filters.q, placeholder: 'key, name or description', 'aria-keyshortcuts': '/' });
  slashFocuses(search);
  const tagSelect = select([['', 'Any tag'], ...tags.map((t) => [t, t])], filters.tag);
  const onSelect = select([['all', 'On or off'], ['on', 'On'], ['off', 'Off']], filters.on);
  const statusSelect = select([['all', 'Any status'], ...STATUSES.map((st) => [st, st]), ['nodata', 'no data']], filters.status);
  const maintainerSelect = select([['', 'Anyone'], [NO_MAINTAINER, 'No maintainer'], ...maintainers.map((m) => [m, m])], filters.maintainer);
  const stateSelect = select([['all', 'Live'], ['archived', 'Archived'], ['deprecated', 'Deprecated']], filters.state);
  const typeSelect = select([['all', 'Any type'], ['temporary', 'Temporary'], ['permanent', 'Permanent']], filters.type);
  const sortSelect = select([['name', 'Name'], ['key', 'Key'], ['created', 'Newest first']], filters.sort);
  const body = h('tbody');
  const count = h('p', { class: 'muted', 'aria-live': 'polite' });
  const selected = new Map();
  const bulk = bulkToolbar(ctx, selected, () => render(ctx));
  const table = h('table', { class: 'list' },
    h('caption', { class: 'visually-hidden' }, `Flags in ${app.env}`),
    h('thead', {}, h('tr', {}, ['Select', 'Flag', `In ${app.env}`, 'Tags', 'Status', 'Last evaluated', 'Maintainer', 'Type'].map((c) => h('th', { scope: 'col' }, c)))),
    body);
  const empty = h('p', { class: 'empty' });
  rowKeys(body);

  // Rows are built once per flag version and reused, so a keystroke in the search only filters
  // and reorders them (1,000 flags: bench/ui.py).
  const rows = new WeakMap();
  function rowOf(flag) {
    const config = (flag.environments || {})[app.env] || {};
    const insight = insights && insights.get(flag.key);
    const href = `${base()}/flags/${enc(flag.key)}`;
    const pick = h('input', { type: 'checkbox', checked: selected.has(flag.key), 'aria-label': `Select ${flag.key}` });
    pick.addEventListener('change', () => {
      if (pick.checked) selected.set(flag.key, flag); else selected.delete(flag.key);
      bulk.update();
    });
    return h('tr', {},
      h('td', {}, pick),
      h('td', {}, h('a', { href }, flag.name), h('div', { class: 'mono muted' }, flag.key)),
      h('td', {}, rowToggle(ctx, flag, env, canToggle, (updated) => {
        const merged = { ...flag, ...updated };
        flags[flags.indexOf(flag)] = merged;
        if (selected.has(flag.key)) selected.set(flag.key, merged);
        draw();
        const again = body.querySelector(`button[data-flag="${CSS.escape(flag.key)}"]`);
        if (again) again.focus();
      })),
      h('td', {}, (flag.tags || []).map((t) => h('span', { class: 'tag' }, t))),
      h('td', {}, insights ? (insight ? h('span', { class: `pill status-${insight.status}` }, insight.status) : 'no data') : 'no data'),
      h('td', {}, !insights || !insight ? 'no data' : insight.lastEvaluated ? ago(insight.lastEvaluated) : 'never'),
      h('td', {}, maintainerOf(flag) || h('span', { class: 'muted' }, 'none')),
      h('td', {}, flag.temporary ? 'temporary' : 'permanent'));
  }

  let drawn = 0;
  const rowsOf = (list) => list.map((flag) => rows.get(flag) || rows.set(flag, rowOf(flag)).get(flag));
  function draw({ first = false } = {}) {
    const generation = ++drawn;
    filters.q = search.value; filters.tag = tagSelect.value; filters.on = onSelect.value; filters.status = statusSelect.value;
    filters.maintainer = maintainerSelect.value;
    filters.state = stateSelect.value; filters.type = typeSelect.value; filters.sort = sortSelect.value;
    writeFiltersToHash(filters);
    const q = filters.q.trim().toLowerCase();
    const shown = flags.filter((flag) => {
      const config = (flag.environments || {})[app.env] || {};
      if (q && ![flag.key, flag.name, flag.description || ''].some((s) => s.toLowerCase().includes(q))) return false;
      if (filters.tag && !(flag.tags || []).includes(filters.tag)) return false;
      if (filters.on === 'on' && !config.on) return false;
      if (filters.on === 'off' && config.on) return false;
      const insight = insights && insights.get(flag.key);
      if (filters.status !== 'all' && (insight ? insight.status : 'nodata') !== filters.status) return false;
      if (filters.maintainer && (maintainerOf(flag) || NO_MAINTAINER) !== filters.maintainer) return false;
      if (filters.state === 'all' && flag.archived) return false;
      if (filters.state === 'archived' && !flag.archived) return false;
      if (filters.state === 'deprecated' && !flag.deprecated) return false;
      if (filters.type === 'temporary' && !flag.temporary) return false;
      if (filters.type === 'permanent' && flag.temporary) return false;
      return true;
    }).sort(SORTS[filters.sort] || SORTS.name);
    const later = first ? shown.slice(FIRST_ROWS) : [];
    clear(body, rowsOf(later.length ? shown.slice(0, FIRST_ROWS) : shown));
    // a redraw meanwhile (a keystroke, a toggle) drew every row itself: the rest is then stale
    if (later.length) setTimeout(() => { if (generation === drawn) append(body, rowsOf(later)); listDrawn(); }, 0);
    else if (first) listDrawn();
    count.textContent = `${shown.length} of ${flags.length} flags`;
    table.hidden = !shown.length;
    empty.hidden = Boolean(shown.length);
    clear(empty, flags.length ? 'No flag matches these filters.'
      : canCreate ? ['No flags in this project yet: ', h('a', { href: `${base()}/new-flag` }, 'create the first one'), '.']
        : 'No flags in this project yet.');
  }
  for (const control of [search, tagSelect, onSelect, statusSelect, maintainerSelect, stateSelect, typeSelect, sortSelect]) {
    control.addEventListener('input', draw);
  }
  clear(main,
    h('div', { class: 'titlebar' },
      h('h1', {}, 'Flags'),
      canCreate ? h('a', { class: 'button primary', href: `${base()}/new-flag` }, 'Create flag') : null),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      field('Search', search), field('Tag', tagSelect), field('On/off', onSelect), field('Status', statusSelect),
      field('Maintainer', maintainerSelect), field('State', stateSelect), field('Type', typeSelect), field('Sort by', sortSelect)),
    count,
    bulk,
    table, empty);
  draw({ first: true });
}

// What bench/ui.py times the whole list to (the page is ready with the first rows).
const listDrawn = () => performance.mark('flagstaff:list-drawn');

// What each template fills in; the user can change any of it before creating.
const TEMPLATES = {
  release: { kind: 'boolean', values: '', temporary: true, tags: 'release' },
  'kill-switch': { kind: 'boolean', values: '', temporary: false, tags: 'kill-switch' },
  experiment: { kind: 'string', values: 'control\ntreatment', temporary: true, tags: 'experiment' },
};

function parseValue(kind, line) {
  if (kind === 'string') return line;
  if (kind === 'number') {
    const number = Number(line);
    if (line === '' || !Number.isFinite(number)) throw new Error(`Not a number: ${line}`);
    return number;
  }
  try { return JSON.parse(line); } catch (error) { throw new Error(`Not JSON: ${error.message}`); }
}

export async function create(ctx) {
  const { app, main, base, go, notify, flash } = ctx;
  const key = h('input', { required: true, autocomplete: 'off', pattern: '[A-Za-z0-9._\\-]+' });
  const name = h('input', { required: true, autocomplete: 'off' });
  const description = h('textarea', { rows: 2 });
  const tags = h('input', { autocomplete: 'off' });
  const maintainer = h('input', { autocomplete: 'off', value: (app.session && app.session.name) || '' });
  const kind = select([['boolean', 'Boolean (true / false)'], ['string', 'Strings'], ['number', 'Numbers'], ['json', 'JSON values']], 'boolean');
  const variations = h('textarea', { rows: 3, disabled: true, placeholder: 'one value per line' });
  const temporary = h('input', { type: 'checkbox', checked: true });
  const clientSide = h('input', { type: 'checkbox' });
  const template = select([['', 'None'], ['release', 'Release'], ['kill-switch', 'Kill switch'], ['experiment', 'Experiment']], '');
  template.addEventListener('change', () => {
    const chosen = TEMPLATES[template.value];
    if (!chosen) return;
    kind.value = chosen.kind; variations.disabled = chosen.kind === 'boolean';
    variations.value = chosen.values; temporary.checked = chosen.temporary; tags.value = chosen.tags;
  });
  kind.addEventListener('change', () => { variations.disabled = kind.value === 'boolean'; });
  let keyTouched = false;
  key.addEventListener('input', () => { keyTouched = true; });
  name.addEventListener('input', () => {
    if (!keyTouched) key.value = name.value.trim().toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  });
  const form = h('form', { class: 'card narrow', novalidate: true },
    field('Template', template, { hint: 'Fills the type, values, lifetime and tags below; edit them freely' }),
    field('Name', name, { field: '/name' }),
    field('Key', key, { field: '/key', hint: 'Letters, digits, dots, dashes, underscores. Used in code; cannot change.' }),
    field('Description', description, { field: '/description' }),
    field('Tags', tags, { field: '/tags', hint: 'Comma separated' }),
    field('Maintainer', maintainer, { field: '/maintainerId', hint: 'Who looks after it; empty for nobody' }),
    field('Variations', kind),
    field('Variation values', variations, { field: '/variations', hint: 'For strings or JSON: one value per line' }),
    h('div', { class: 'check' }, temporary, h('label', { for: temporary.id = 'temporary' }, 'Temporary (remove it after launch)')),
    h('div', { class: 'check' }, clientSide, h('label', { for: clientSide.id = 'client-side' }, 'Available to client-side (browser) SDKs')),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Create flag'),
      h('a', { href: `${base()}/flags`, class: 'button' }, 'Cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const body = {
      key: key.value.trim(), name: name.value.trim(), description: description.value,
      tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean), temporary: temporary.checked,
      clientSideAvailability: { usingEnvironmentId: clientSide.checked, usingMobileKey: false },
    };
    if (maintainer.value.trim()) body.maintainerId = maintainer.value.trim();
    if (kind.value !== 'boolean') {
      const lines = variations.value.split('\n').map((l) => l.trim()).filter(Boolean);
      try {
        body.variations = lines.map((line) => ({ value: parseValue(kind.value, line) }));
      } catch (error) {
        showFieldError(form, '/variations', error.message);
        return;
      }
    }
    try {
      await post(`/api/v2/flags/${enc(app.project)}`, body);
      flash(`Created flag ${body.key}`, 'success');
      go(`${base()}/flags/${enc(body.key)}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) showFieldError(form, '/key', error.message);
      else if (error instanceof ApiError && !showFieldError(form, error.path, error.message)) notify(error.message, 'error');
      else if (!(error instanceof ApiError)) notify(error.message, 'error');
    }
  });
  clear(main, h('h1', {}, 'Create a flag'), form);
  name.focus();
}
