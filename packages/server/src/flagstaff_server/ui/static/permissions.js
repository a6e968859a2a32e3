// What the signed-in caller may do, asked of the API (`GET /api/v2/caller/permissions`) for the
// resources a page shows, so the page hides or disables what would be refused. A hint only: the
// API decides every request, and a refusal (403) still shows its reason.
import { get, enc } from './api.js';

export const TARGETING_ACTIONS = ['updateRules', 'updateTargets', 'updateFallthrough', 'updateOffVariation', 'updatePrerequisites'];
export const SETTINGS_ACTIONS = ['updateName', 'updateDescription', 'updateTags', 'updateTemporary', 'updateMaintainer'];

export const flagResource = (project, env, key) => `proj/${project}:env/${env}:flag/${key}`;

// `{ may(resource, ...actions) }`: whether any of the actions is allowed on the resource. When
// the question cannot be asked (an older server), everything is allowed and the API decides.
export async function permissionsFor(resources) {
  const query = resources.map((r) => `resource=${enc(r)}`).join('&');
  let allowed = null;
  try {
    const answer = await get(`/api/v2/caller/permissions?${query}`);
    allowed = new Map(answer.items.map((item) => [item.resource, new Set(item.allowed)]));
  } catch { allowed = null; }
  return {
    may(resource, ...actions) {
      if (allowed === null) return true;
      const set = allowed.get(resource);
      return Boolean(set) && actions.some((action) => set.has(action));
    },
  };
}
