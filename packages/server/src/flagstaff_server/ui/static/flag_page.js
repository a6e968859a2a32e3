// One flag: kill switch, targeting editor for the current environment (prerequisites, individual
// targets, rules, rollouts, default rule, off variation), comparison across environments,
// evaluation charts, variations and settings (the draft, editor and settings form in their own
// modules). Saving sends one semantic patch guarded by If-Match: <_version>; on a version
// conflict the draft stays as typed and can be re-applied on top of the latest version.
import { get, del, patchSemantic, enc, ApiError } from './api.js';
import { h, clear, field, button, time, section } from './dom.js';
import { loadSuggestions } from './context_suggestions.js';
import { showFieldError, clearFieldErrors } from './form_error.js';
import { evaluationChart } from './chart.js';
import { variationEditor } from './variation_editor.js';
import { usage, history, compareAndCopy, environmentComparison } from './flag_relations.js';
import { draftOf, instructionsFor, unevenRollouts, fieldPath } from './targeting_draft.js';
import { targetingEditor } from './targeting_editor.js';
import { flagSettingsForm } from './flag_settings.js';
import { approvalsSection, needsApproval, requestApproval } from './approvals.js';
import { currentEnvironment, sendWithComment } from './comment_dialog.js';
import { scheduledChangesSection } from './scheduled_changes.js';
import { triggersSection } from './flag_triggers.js';
import { codeReferencesSection } from './code_references.js';
import { permissionsFor, flagResource, TARGETING_ACTIONS, SETTINGS_ACTIONS } from './permissions.js';
import { releasesSection } from './release_timeline.js';

export async function render(ctx, rawKey) {
  const { app, main, notify } = ctx;
  const key = decodeURIComponent(rawKey);
  const flagUrl = `/api/v2/flags/${enc(app.project)}/${enc(key)}`;
  const [flag, list, segmentAnswer, suggestions] = await Promise.all([
    get(flagUrl),
    get(`/api/v2/flags/${enc(app.project)}?env=${enc(app.env)}&limit=1000`),
    get(`/api/v2/segments/${enc(app.project)}/${enc(app.env)}?limit=1000`).catch(() => ({ items: [] })),
    loadSuggestions(app.project, app.env),
  ]);
  if (!flag.environments[app.env]) {
    clear(main, h('h1', {}, flag.name), h('p', {}, `This flag has no configuration in ${app.env}.`));
    return;
  }
  const project = app.projects.find((p) => p.key === app.project);
  const envs = project && project.environments ? project.environments.items : [];
  const who = app.session;
  // what the caller's roles allow here: in this environment, and flag-wide (every environment)
  const here = flagResource(app.project, app.env, key);
  const everywhere = flagResource(app.project, '*', key);
  const allowed = await permissionsFor([here, everywhere]);
  const canToggle = allowed.may(here, 'updateOn');
  const canWrite = allowed.may(here, ...TARGETING_ACTIONS);
  const canWriteFlag = allowed.may(everywhere, ...SETTINGS_ACTIONS);
  const canArchive = allowed.may(everywhere, 'updateGlobalArchived');
  const canDelete = allowed.may(everywhere, 'deleteFlag');
  const canEditVariations = allowed.may(everywhere, 'updateFlagVariations');
  const readOnlyNote = canWrite || canToggle ? null : h('p', { class: 'notice', id: 'read-only-note' }, `Read-only: ${who.name} (${who.role}${who.environmentKey ? `, ${who.environmentKey} only` : ''}) cannot change ${app.env}.`);
  const state = { flag, original: draftOf(flag, app.env), allFlags: list.items, segments: segmentAnswer.items, suggestions };
  state.draft = draftOf(flag, app.env);

  const conflictBox = h('div', { class: 'conflict', role: 'alert', hidden: true });
  const approvalBox = h('div', { class: 'notice', role: 'alert', id: 'approval-offer', hidden: true });
  const approvals = approvalsSection(ctx, key, {
    canWrite,
    onApplied: async () => { state.flag = await get(flagUrl); redrawAll(true); },
    currentFlag: () => state.flag,
  });
  const environment = currentEnvironment(app);
  const commentRequired = Boolean(environment.requireComments);
  const confirmChanges = Boolean(environment.confirmChanges);

  // the environment requires approval (405): the same instructions become a request for it
  function offerApproval(error, instructions, why) {
    clear(approvalBox,
      h('p', {}, error.message),
      button('Request approval', async () => {
        try {
          if (await requestApproval(ctx, key, instructions, why) === null) return;
          approvalBox.hidden = true;
          notify('Approval requested: a reviewer can approve it below, then it can be applied.', 'success');
          await approvals.refresh();
        } catch (failure) { notify(`${failure.message}${failure.path ? ` (at ${failure.path})` : ''}`, 'error'); }
      }, { class: 'primary', id: 'request-approval' }));
    approvalBox.hidden = false;
  }
  const comment = h('input', { autocomplete: 'off', placeholder: 'why (shown in the audit log)', required: commentRequired });
  const editorHost = h('div');
  const header = h('div');
  const compareHost = h('div');
  const usageHost = h('div');
  const historyHost = h('div');
  const copier = compareAndCopy(ctx, flag, envs, app.env, {
    canWrite: who.role !== 'reader' && (!who.projectKey || who.projectKey === app.project),
    copyUrl: `${flagUrl}/copy`,
    onCopied: async () => {
      state.flag = await get(flagUrl);
      redrawAll(true);
      await history(historyHost, app.project, key);
    },
  });

  function drawHeader() {
    variations.rebase(state.flag);
    const config = state.flag.environments[app.env];
    const kill = h('button', {
      type: 'button', class: `switch ${config.on ? 'on' : 'off'}`, role: 'switch',
      'aria-checked': config.on ? 'true' : 'false', id: 'kill-switch', disabled: !canToggle,
    }, h('span', { class: 'visually-hidden' }, `${state.flag.name} in ${app.env}: `), config.on ? 'On' : 'Off');
    kill.addEventListener('click', () => toggle(!config.on));
    clear(header,
      h('div', { class: 'titlebar' },
        h('div', {}, h('h1', {}, state.flag.name), h('p', { class: 'mono muted' }, state.flag.key,
          ` · version ${state.flag._version} · ${state.flag.temporary ? 'temporary' : 'permanent'} `,
          state.flag.archived ? h('span', { class: 'pill off' }, 'archived') : null, ' ',
          (state.flag.tags || []).map((t) => h('span', { class: 'tag' }, t)))),
        h('div', { class: 'killbox' }, h('span', { id: 'kill-label' }, `Serving in ${app.env}`), kill)),
      state.flag.description ? h('p', {}, state.flag.description) : null);
    kill.setAttribute('aria-describedby', 'kill-label');
  }

  async function toggle(on) {
    const config = state.flag.environments[app.env];
    // with confirmChanges the dialog below asks instead
    if (!on && !confirmChanges && !window.confirm(`Turn ${state.flag.key} off in ${app.env}? Everyone gets the off variation.`)) return;
    try {
      // where comments are required, the dialog asks for one: no made-up comment is sent there
      const fallback = commentRequired ? '' : (on ? 'turned on' : 'turned off (kill switch)');
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, {
        environmentKey: app.env, comment: given || fallback || undefined,
        instructions: [{ kind: on ? 'turnFlagOn' : 'turnFlagOff' }],
      }, state.flag._version), { comment: comment.value, required: commentRequired, confirm: confirmChanges, title: `Turn ${state.flag.key} ${on ? 'on' : 'off'} in ${environment.name || app.env}`, env: environment });
      if (updated === null) { document.getElementById('kill-switch').focus(); return; }
      state.flag = updated;
      notify(`${state.flag.key} is ${on ? 'on' : 'off'} in ${app.env}`, 'success');
      redrawAll(false);
      document.getElementById('kill-switch').focus();
    } catch (error) {
      if (needsApproval(error)) {
        offerApproval(error, [{ kind: on ? 'turnFlagOn' : 'turnFlagOff' }], comment.value);
      } else if (error instanceof ApiError && error.isConflict) {
        state.flag = await get(flagUrl);
        notify(`The flag changed meanwhile (now version ${state.flag._version}); it is ${state.flag.environments[app.env].on ? 'on' : 'off'}. Try again if you still want that.`, 'error');
        redrawAll(false);
      } else notify(error.message, 'error');
      void config;
    }
  }

  function redrawAll(resetDraft) {
    if (resetDraft) { state.original = draftOf(state.flag, app.env); state.draft = draftOf(state.flag, app.env); }
    drawHeader();
    clear(editorHost, targetingEditor(state));
    clear(compareHost, environmentComparison(state.flag, envs, app.env));
    clear(usageHost, usage(state.flag, app.env, state.allFlags, state.segments, ctx.base));
    copier.redraw(state.flag);
  }

  async function save(event) {
    event.preventDefault();
    clearFieldErrors(editorHost);
    const { instructions, sections } = instructionsFor(state.flag, state.draft, state.original, state.allFlags);
    if (!instructions.length) { notify('Nothing to save: the targeting is unchanged.'); return; }
    const uneven = unevenRollouts(state.draft, sections);
    if (uneven.length) {
      // last first, so the first one ends up with the focus
      for (const [path, pct] of uneven.reverse()) {
        showFieldError(editorHost, `${path}/rolloutWeights`, `The percentages add up to ${pct}%; they must add up to 100%.`);
      }
      notify('Not saved: a percentage rollout must add up to 100%.', 'error');
      return;
    }
    if (commentRequired && !comment.value.trim()) {
      showFieldError(form, 'comment', `${environment.name || app.env} requires a comment on every change.`);
      notify('Not saved: a comment is required.', 'error');
      return;
    }
    try {
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, { environmentKey: app.env, comment: given, instructions }, state.flag._version),
        { comment: comment.value, required: commentRequired, confirm: confirmChanges, title: `Save targeting of ${state.flag.key} in ${environment.name || app.env}`, env: environment });
      if (updated === null) { document.getElementById('save-targeting').focus(); return; }
      state.flag = updated;
      conflictBox.hidden = true;
      comment.value = '';
      notify(`Saved. ${state.flag.key} is now at version ${state.flag._version}.`, 'success');
      redrawAll(true);
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) return showConflict();
      if (needsApproval(error)) return offerApproval(error, instructions, comment.value);
      if (error instanceof ApiError && error.status === 400) {
        const where = fieldPath(error.path, sections);
        if (!showFieldError(editorHost, where, error.message)) notify(`${error.message}${error.path ? ` (at ${error.path})` : ''}`, 'error');
        else notify('Not saved: fix the highlighted field.', 'error');
        return;
      }
      notify(error.message, 'error');
    }
  }

  async function showConflict() {
    const latest = await get(flagUrl);
    clear(conflictBox,
      h('h2', {}, 'Someone else changed this flag'),
      h('p', {}, `You edited version ${state.flag._version}; it is now at version ${latest._version}. Your changes below are kept and have not been saved.`),
      h('div', { class: 'actions' },
        button('Reload and re-apply my changes', () => {
          // sections you did not touch take the other person's version; the ones you edited
          // keep exactly what you typed, and saving sends only those
          const fresh = draftOf(latest, app.env);
          for (const name of Object.keys(fresh)) {
            if (JSON.stringify(state.draft[name]) === JSON.stringify(state.original[name])) state.draft[name] = fresh[name];
          }
          state.flag = latest;
          state.original = fresh;
          conflictBox.hidden = true;
          drawHeader();
          clear(editorHost, targetingEditor(state));
          clear(compareHost, environmentComparison(state.flag, envs, app.env));
          notify(`Loaded version ${latest._version}. Your changes are still in the form: review them and save.`);
          document.getElementById('save-targeting').focus();
        }, { class: 'primary', id: 'reapply' }),
        button('Discard my changes', () => { state.flag = latest; conflictBox.hidden = true; redrawAll(true); })));
    conflictBox.hidden = false;
    conflictBox.scrollIntoView({ block: 'center' });
    document.getElementById('reapply').focus();
  }

  const form = h('form', { novalidate: true, 'aria-label': `Targeting in ${app.env}` },
    editorHost,
    h('div', { class: 'savebar' },
      field(commentRequired ? 'Comment (required)' : 'Comment', comment, { field: 'comment' }),
      h('button', { type: 'submit', class: 'primary', id: 'save-targeting', disabled: !canWrite }, 'Save targeting'),
      button('Discard changes', () => redrawAll(true))));
  form.addEventListener('submit', save);

  const settings = () => flagSettingsForm(state.flag, {
    canWrite: canWriteFlag, canArchive, canDelete, send: flagWide, remove: removeFlag, notify,
  });

  async function flagWide(instructions, done, form) {
    if (form) clearFieldErrors(form);
    try {
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, { instructions, comment: given }, state.flag._version), { title: `${done}: ${state.flag.key}`, confirm: confirmChanges, env: environment });
      if (updated === null) return;
      state.flag = updated;
      notify(`${done}. ${state.flag.key} is now at version ${state.flag._version}.`, 'success');
      drawHeader();
      clear(settingsHost, settings());
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) {
        state.flag = await get(flagUrl);
        drawHeader();
        notify(`Someone else changed this flag (now version ${state.flag._version}). Your settings are still in the form; save again to apply them.`, 'error');
        return;
      }
      if (needsApproval(error)) { offerApproval(error, instructions, ''); return; }
      const where = error.path ? error.path.replace(/^\/instructions\/\d+\/?/, '').replace(/^value$/, '') : error.path;
      if (!(error instanceof ApiError) || !form || !showFieldError(form, where, error.message)) notify(error.message, 'error');
    }
  }

  async function removeFlag() {
    if (!window.confirm(`Delete ${state.flag.key} in every environment? SDKs will serve their defaults.`)) return;
    try {
      await del(flagUrl);
      ctx.flash(`Deleted ${state.flag.key}.`, 'success');
      ctx.go(`${ctx.base()}/flags`);
    } catch (error) { notify(error.message, 'error'); }
  }

  // Variations are flag-wide. Saving them keeps an unsaved targeting draft unless variations
  // were added or removed (which renumbers the indices the draft holds).
  async function saveVariations(instructions, version) {
    try {
      const updated = await sendWithComment((given) => patchSemantic(flagUrl, { instructions, comment: given }, version), { title: `Save variations of ${state.flag.key}`, confirm: confirmChanges, env: environment });
      if (updated === null) throw new Error('Variations not saved: cancelled.');
      const reshaped = instructions.some((i) => i.kind !== 'updateVariation');
      const draftChanged = JSON.stringify(state.draft) !== JSON.stringify(state.original);
      state.flag = updated;
      if (reshaped) redrawAll(true); else redrawAll(false);
      notify(`Saved variations. ${updated.key} is now at version ${updated._version}.${reshaped && draftChanged ? ' The targeting editor was reloaded with the new variations.' : ''}`, 'success');
      return updated;
    } catch (error) {
      if (error instanceof ApiError && error.isConflict) {
        const latest = await get(flagUrl);
        variations.rebase(latest);
        notify(`Someone else changed this flag (now version ${latest._version}). Your variation edits are still in the form; save again to apply them on top.`, 'error');
      }
      if (needsApproval(error)) offerApproval(error, instructions, '');
      throw error;
    }
  }
  const variations = variationEditor({ flag, canWrite: canEditVariations, save: saveVariations, notify });

  const settingsHost = h('div');
  const chartHost = h('div');
  const scheduled = scheduledChangesSection(ctx, key, { canWrite, currentFlag: () => state.flag, commentRequired });
  const triggers = triggersSection(ctx, key, { canWrite, commentRequired });
  const codeReferences = codeReferencesSection(ctx, key);
  // a rollout's start, pause, resume or stop edits the targeting: the editor reloads after it
  async function sendRelease(instructions, form) {
    if (form) clearFieldErrors(form);
    try {
      state.flag = await patchSemantic(flagUrl, { environmentKey: app.env, instructions }, state.flag._version);
      redrawAll(true);
      await releases.refresh();
      notify(`Sent ${instructions.map((i) => i.kind).join(', ')}; ${state.flag.key} is now at version ${state.flag._version}.`, 'success');
    } catch (error) {
      if (!form || !(error instanceof ApiError) || !showFieldError(form, error.path, error.message)) notify(error.message, 'error');
    }
  }
  const releases = releasesSection(ctx, key, { canWrite, currentFlag: () => state.flag, send: sendRelease });
  clear(main,
    readOnlyNote,
    header,
    conflictBox,
    approvalBox,
    h('section', { 'aria-labelledby': 'targeting-title' }, h('h2', { id: 'targeting-title', class: 'visually-hidden' }, `Targeting in ${app.env}`), form),
    section(`Approval requests in ${app.env}`, approvals.element),
    section(`Scheduled changes in ${app.env}`, scheduled.element),
    section(`Triggers in ${app.env}`, triggers.element),
    section(`Progressive and guarded rollouts in ${app.env}`, releases.element),
    section('Compare environments', compareHost),
    section('Compare two environments and copy', copier.element),
    section('Segments and dependent flags', usageHost),
    section('Evaluations', chartHost),
    section('Code references', codeReferences.element),
    h('section', { class: 'card', 'aria-labelledby': 'variations-title' }, h('h2', { id: 'variations-title' }, 'Variations (all environments)'), variations.element),
    h('section', { class: 'card', 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, 'Settings (all environments)'), settingsHost),
    section('History', historyHost),
    h('p', { class: 'muted' }, 'Created ', time(flag.creationDate)));
  redrawAll(false);
  for (const part of [approvals, scheduled, triggers, releases, codeReferences]) part.refresh().catch((error) => notify(error.message, 'error'));
  clear(settingsHost, settings());
  evaluationChart(chartHost, app.project, app.env, flag);
  history(historyHost, app.project, key).catch((error) => clear(historyHost, h('p', { role: 'alert' }, error.message)));
}
