// The signed-in member's own page (#/me): who they are, their base and custom roles, and the
// teams they are in (single sign-on puts members in teams by their identity provider's groups).
import { get, ApiError } from './api.js';
import { h, clear } from './dom.js';

export async function me(ctx) {
  const { main } = ctx;
  let member;
  try {
    member = await get('/api/v2/members/me');
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    clear(main, h('h1', {}, 'Your account'),
      h('p', {}, 'You are signed in with an access token, not as a member: there is no account to show.'));
    return;
  }
  const name = [member.firstName, member.lastName].filter(Boolean).join(' ');
  const roles = member.customRoles.length ? member.customRoles.join(', ') : 'none';
  const teams = member.teams.length
    ? h('ul', { id: 'my-teams' }, member.teams.map((t) => h('li', {}, `${t.name} (${t.key})`)))
    : h('p', { id: 'my-teams', class: 'muted' }, 'You are in no team.');
  clear(main, h('h1', {}, 'Your account'),
    h('dl', { class: 'card' },
      h('dt', {}, 'Email'), h('dd', {}, member.email),
      h('dt', {}, 'Name'), h('dd', {}, name || '—'),
      h('dt', {}, 'Role'), h('dd', {}, member.role),
      h('dt', {}, 'Custom roles'), h('dd', {}, roles)),
    h('h2', {}, 'Teams'), teams);
}
