// A flag's approval requests in the current environment (docs/workflows.md, "Approval
// requests"): the list with each request's instructions, reviews and conflicts, and the review
// (approve, decline), apply and delete buttons, and for review a diff of what the instructions
// change against the flag as it is now (change_preview.js); `requestApproval` turns an edit the
// environment refused with 405 into a request for it.
import { get, post, del, enc, ApiError } from './api.js';
import { h, clear, button, time } from './dom.js';
import { lineDiff } from './diff.js';
import { previewChanges } from './change_preview.js';
import { currentEnvironment, sendWithComment } from './comment_dialog.js';

export function requestsUrl(project, key, env) {
  return `/api/v2/projects/${enc(project)}/flags/${enc(key)}/environments/${enc(env)}/approval-requests`;
}

const GENERIC = '/api/v2/approval-requests';
const segmentResource = (app, key) => `proj/${app.project}:env/${app.env}:segment/${key}`;

export function needsApproval(error) {
  return error instanceof ApiError && error.status === 405;
}

// `segment`: the request is for the segment `key` (LaunchDarkly's generic route with a resourceId).
export async function requestApproval(ctx, key, instructions, comment, { segment = false } = {}) {
  const { app } = ctx;
  const env = currentEnvironment(app);
  return sendWithComment((given) => {
    const description = given || `Change ${key} in ${app.env}: ${instructions.map((i) => i.kind).join(', ')}`;
    const body = { description, instructions };
    if (given) body.comment = given;
    if (segment) return post(GENERIC, { ...body, resourceId: segmentResource(app, key) });
    return post(requestsUrl(app.project, key, app.env), body);
  }, { comment, required: Boolean(env.requireComments), title: `Request approval for ${key}`, env });
}

// The request's instructions as a diff against the flag now, one block per instruction.
export function changeDiff(flag, env, instructions) {
  return h('div', { class: 'change-diff' }, previewChanges(flag, env, instructions).map((part) => {
    if (part.unknown) {
      return h('div', {}, h('h3', {}, part.title), h('pre', {}, `${JSON.stringify(part.unknown, null, 2)}\n(not shown as a diff)`));
    }
    if (part.before.join('\n') === part.after.join('\n')) {
      return h('div', {}, h('h3', {}, part.title), h('p', { class: 'muted' }, `${part.after.join(', ') || 'none'}: no change from the flag as it is now`));
    }
    const lines = lineDiff(part.before.join('\n'), part.after.join('\n'));
    return h('div', {}, h('h3', {}, part.title),
      h('pre', { class: 'diff', 'aria-label': `${part.title}: now and as requested` }, lines.map(([kind, line]) => h('span', { class: `d-${kind}` }, `${kind === 'add' ? '+ ' : kind === 'del' ? '- ' : '  '}${line}\n`))));
  }));
}

function reviewLine(review) {
  const verb = { approve: 'approved', decline: 'declined', comment: 'commented' }[review.kind];
  const who = (review._reviewer && review._reviewer.name) || review.memberId;
  return h('li', {}, `${who} ${verb}`, review.comment ? `: ${review.comment}` : '', ' (', time(review.creationDate), ')');
}

function requestCard(ctx, item, { base, canWrite, refresh, onApplied, currentFlag }) {
  const { notify, app } = ctx;
  const pending = item.status === 'pending';
  const mine = item.requestorId === app.session.id;
  async function act(label, run) {
    try {
      await run();
      notify(label, 'success');
      await refresh();
    } catch (error) {
      notify(`${error.message}${error.path ? ` (at ${error.path})` : ''}`, 'error');
    }
  }
  const review = (kind) => act(`Request ${kind === 'approve' ? 'approved' : 'declined'}.`, () => post(`${base}/${enc(item._id)}/reviews`, { kind }));
  const apply = () => act('Request applied.', async () => {
    await post(`${base}/${enc(item._id)}/apply`, {});
    await onApplied();
  });
  const remove = () => act('Request deleted.', () => del(`${base}/${enc(item._id)}`));
  const who = (item._requestor && item._requestor.name) || item.requestorId;
  return h('li', { class: 'approval', dataset: { id: item._id } },
    h('p', {}, h('strong', {}, item.description), ' — ', `${who}, `, time(item.creationDate)),
    h('p', {}, `Status: ${item.status}; review: ${item.reviewStatus}`, item.executionDate ? ['; runs at ', time(item.executionDate)] : ''),
    pending && currentFlag ? changeDiff(currentFlag(), app.env, item.instructions) : null,
    h('details', { open: !currentFlag }, h('summary', {}, 'Instructions as sent'), h('pre', { class: 'instructions' }, JSON.stringify(item.instructions, null, 2))),
    item.conflicts.length ? h('ul', { class: 'notice', role: 'note' }, item.conflicts.map((c) => h('li', {}, `Conflict: ${c.reason}`))) : null,
    item.allReviews.length ? h('ul', {}, item.allReviews.map(reviewLine)) : null,
    pending && canWrite ? h('div', { class: 'actions' },
      mine ? null : button('Approve', () => review('approve'), { class: 'primary' }),
      mine ? null : button('Decline', () => review('decline')),
      button('Apply', apply, { disabled: item.reviewStatus !== 'approved' }),
      button('Delete request', remove, { class: 'danger' })) : null);
}

// `currentFlag()` gives the flag as the page has it now, for the diffs; without it (`segment`:
// the segment `key`'s requests) the instructions are shown as sent.
export function approvalsSection(ctx, key, { canWrite, onApplied, currentFlag, segment = false }) {
  const { app } = ctx;
  const base = segment ? GENERIC : requestsUrl(app.project, key, app.env);
  const listUrl = segment ? `${GENERIC}?limit=100&filter=${enc(`resourceId equals ${segmentResource(app, key)}`)}` : base;
  const host = h('div', { id: 'approval-requests' });
  async function refresh() {
    const answer = await get(listUrl);
    const items = answer.items;
    clear(host, items.length
      ? h('ul', { class: 'approvals' }, items.map((item) => requestCard(ctx, item, { base, canWrite, refresh, onApplied, currentFlag })))
      : h('p', { class: 'muted' }, `No approval requests for this ${segment ? 'segment' : 'flag'} in ${app.env}.`));
  }
  return { element: host, refresh };
}
