// A flag's targeting in one environment as an editable draft, and back: the draft of a stored
// flag, the semantic-patch instructions for the sections that changed, the rollouts that would
// be refused, and problem paths mapped back to the draft's fields. Pure: no DOM, no requests.
import { clauseDraft, clauseBody } from './clause_editor.js';

export const TOTAL = 100000;

export function variationLabel(variation, index) {
  const value = JSON.stringify(variation.value);
  return variation.name ? `${variation.name} (${value})` : `${index}: ${value}`;
}

export function serveDraft(holder, count) {
  if (holder && holder.rollout) {
    const weights = Array(count).fill(0);
    for (const item of holder.rollout.variations || []) weights[item.variation] = item.weight / 1000;
    return { kind: 'rollout', variation: 0, weights, bucketBy: holder.rollout.bucketBy || 'key', contextKind: holder.rollout.contextKind || 'user' };
  }
  return { kind: 'variation', variation: holder && typeof holder.variation === 'number' ? holder.variation : 0, weights: Array(count).fill(0), bucketBy: 'key', contextKind: 'user' };
}

export function draftOf(flag, env) {
  const config = flag.environments[env];
  const count = flag.variations.length;
  const targets = (config.targets || []).map((t) => ({ contextKind: 'user', variation: t.variation, values: t.values.join('\n') }));
  for (const t of config.contextTargets || []) {
    if (t.contextKind !== 'user' || (t.values || []).length) {
      if (t.contextKind !== 'user') targets.push({ contextKind: t.contextKind, variation: t.variation, values: t.values.join('\n') });
    }
  }
  return {
    prerequisites: (config.prerequisites || []).map((p) => ({ key: p.key, variation: p.variation })),
    targets,
    rules: (config.rules || []).map((r) => ({
      id: r._id,
      description: r.description || '',
      clauses: r.clauses.map(clauseDraft),
      serve: serveDraft(r, count),
    })),
    fallthrough: serveDraft(config.fallthrough, count),
    offVariation: typeof config.offVariation === 'number' ? config.offVariation : '',
  };
}

// A percentage as the API's weight: thousandths of a percent.
const weightOf = (pct) => Math.round(Number(pct || 0) * 1000);
export const rolloutTotal = (weights) => weights.reduce((sum, pct) => sum + weightOf(pct), 0);

// The rollouts of the sections about to be sent whose weights do not add up to 100%, as
// [field path, total in percent]: the server would refuse them, so they are never sent.
export function unevenRollouts(draft, sections) {
  const serves = [];
  if (sections.includes('rules')) draft.rules.forEach((rule, i) => serves.push([`rules/${i}`, rule.serve]));
  if (sections.includes('fallthrough')) serves.push(['fallthrough', draft.fallthrough]);
  return serves
    .filter(([, serve]) => serve.kind === 'rollout' && rolloutTotal(serve.weights) !== TOTAL)
    .map(([path, serve]) => [path, rolloutTotal(serve.weights) / 1000]);
}

function servedBody(serve, variations) {
  if (serve.kind === 'variation') return { variationId: variations[serve.variation]._id };
  const rolloutWeights = {};
  serve.weights.forEach((pct, i) => { rolloutWeights[variations[i]._id] = weightOf(pct); });
  return { rolloutWeights, rolloutBucketBy: serve.bucketBy || 'key', rolloutContextKind: serve.contextKind || 'user' };
}

// Instructions for the sections whose draft differs from `original`, with a section name per
// instruction index (problem paths `/instructions/<i>/...` map back to fields through it).
export function instructionsFor(flag, draft, original, allFlags) {
  const variations = flag.variations;
  const same = (name) => JSON.stringify(draft[name]) === JSON.stringify(original[name]);
  const out = [];
  const sections = [];
  if (!same('prerequisites')) {
    out.push({ kind: 'replacePrerequisites', prerequisites: draft.prerequisites.map((p) => {
      const other = allFlags.find((f) => f.key === p.key);
      const id = other && other.variations[p.variation] ? other.variations[p.variation]._id : String(p.variation);
      return { key: p.key, variationId: id };
    }) });
    sections.push('prerequisites');
  }
  if (!same('targets')) {
    out.push({ kind: 'replaceTargets', targets: draft.targets.map((t) => ({
      contextKind: t.contextKind || 'user',
      variationId: variations[t.variation]._id,
      values: t.values.split(/[\n,]/).map((v) => v.trim()).filter(Boolean),
    })) });
    sections.push('targets');
  }
  if (!same('rules')) {
    // rules and clauses that already exist send their `_id`, which the server keeps, so
    // evaluation reasons keep naming the same rule after a save
    out.push({ kind: 'replaceRules', rules: draft.rules.map((r) => ({
      ...(r.id ? { _id: r.id } : {}),
      clauses: r.clauses.map(clauseBody),
      ...(r.description ? { description: r.description } : {}),
      ...servedBody(r.serve, variations),
    })) });
    sections.push('rules');
  }
  if (!same('fallthrough')) {
    out.push({ kind: 'updateFallthroughVariationOrRollout', ...servedBody(draft.fallthrough, variations) });
    sections.push('fallthrough');
  }
  if (!same('offVariation')) {
    out.push(draft.offVariation === '' ? { kind: 'updateOffVariation' } : { kind: 'updateOffVariation', variationId: variations[draft.offVariation]._id });
    sections.push('offVariation');
  }
  return { instructions: out, sections };
}

// `/instructions/2/rules/0/clauses/1/values` -> `rules/0/clauses/1/values`;
// `/environments/production/rules/0/...` -> `rules/0/...`.
export function fieldPath(path, sections) {
  if (!path) return path;
  let m = path.match(/^\/instructions\/(\d+)(\/.*)?$/);
  if (m) {
    const section = sections[Number(m[1])] || '';
    let rest = m[2] || '';
    if (rest.startsWith(`/${section}`)) rest = rest.slice(section.length + 1);
    return `${section}${rest}`;
  }
  m = path.match(/^\/environments\/[^/]+\/(.*)$/);
  if (m) return m[1].replace(/^contextTargets/, 'targets');
  return path.replace(/^\//, '');
}
