// Suggestions for the clause editor from the contexts ingestion has seen: the context kinds, the
// attribute names of each kind and the values seen for each attribute. Built once per page from
// the newest contexts of the environment; a server without insights gives no suggestions.
import { get, enc } from './api.js';

const SAMPLE = 1000; // contexts read; the index keeps up to 10,000, the newest are the useful ones
const MAX_VALUES = 12; // values offered per attribute, the most frequent first

function add(map, key, make) {
  if (!map.has(key)) map.set(key, make());
  return map.get(key);
}

// Scalar values as the clause editor writes them (strings as typed, the rest as JSON).
function valueText(value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return null;
}

// kind -> attribute -> value text -> how often seen (pure, so it can be tested on its own).
export function suggestionsFrom(contexts) {
  const kinds = new Map();
  for (const context of contexts) {
    const attributes = add(kinds, context.kind || 'user', () => new Map());
    for (const [name, raw] of Object.entries(context)) {
      if (name === 'kind' || name === '_meta') continue;
      const counts = add(attributes, name, () => new Map());
      for (const item of Array.isArray(raw) ? raw : [raw]) {
        const text = valueText(item);
        if (text !== null) counts.set(text, (counts.get(text) || 0) + 1);
      }
    }
  }
  return {
    kinds: () => [...kinds.keys()].sort(),
    attributes: (kind) => [...(kinds.get(kind) || new Map()).keys()].sort(),
    values: (kind, attribute) => {
      const counts = (kinds.get(kind) || new Map()).get(attribute);
      if (!counts || attribute === 'key') return []; // keys are per context, not categories
      return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, MAX_VALUES).map(([v]) => v);
    },
  };
}

export async function loadSuggestions(project, env) {
  try {
    const answer = await get(`/api/v2/insights/${enc(project)}/${enc(env)}/contexts?limit=${SAMPLE}`);
    return suggestionsFrom(answer.items.map((item) => item.context));
  } catch {
    return suggestionsFrom([]);
  }
}
