// What an approval request's instructions change, against the flag as it is now: for each
// instruction the part of the environment's configuration it touches, written out as lines
// (variations by name, rules as "if … serve …") before and after, for a line diff. Pure: no
// DOM, no requests. Kinds it cannot write out are listed as such, never guessed at.

const label = (flag, index) => {
  const v = flag.variations[index];
  if (!v) return `variation ${index}`;
  return v.name ? `${v.name} (${JSON.stringify(v.value)})` : JSON.stringify(v.value);
};
const indexOfId = (flag, id) => flag.variations.findIndex((v) => v._id === id);
const byId = (flag, id) => { const i = indexOfId(flag, id); return i < 0 ? `unknown variation ${id}` : label(flag, i); };

function clauseText(c) {
  const values = (c.values || []).map((v) => JSON.stringify(v)).join(', ');
  const who = c.attribute === 'segmentMatch' ? 'in segment' : `${c.contextKind || 'user'}.${c.attribute} ${c.op}`;
  return `${c.negate ? 'not ' : ''}${who} ${values}`;
}

// a stored serve ({variation} or {rollout}) as text
function servedText(flag, holder) {
  if (!holder) return 'nothing';
  if (holder.rollout) {
    const parts = (holder.rollout.variations || []).map((item) => `${item.weight / 1000}% ${label(flag, item.variation)}`);
    return `rollout by ${holder.rollout.bucketBy || 'key'}: ${parts.join(', ')}`;
  }
  return typeof holder.variation === 'number' ? label(flag, holder.variation) : 'nothing';
}

// an instruction's serve ({variationId} or {rolloutWeights}) as the same text
function requestedText(flag, body) {
  if (body.rolloutWeights) {
    const parts = Object.entries(body.rolloutWeights).map(([id, w]) => `${w / 1000}% ${byId(flag, id)}`);
    return `rollout by ${body.rolloutBucketBy || 'key'}: ${parts.join(', ')}`;
  }
  return body.variationId ? byId(flag, body.variationId) : 'nothing';
}

const ruleLines = (rules, serve) => rules.map((r, i) => `rule ${i + 1}${r.description ? ` (${r.description})` : ''}: if ${(r.clauses || []).map(clauseText).join(' and ')} then serve ${serve(r)}`);

function targetLines(flag, config) {
  const lines = [];
  for (const t of config.targets || []) lines.push(`user → ${label(flag, t.variation)}: ${t.values.join(', ')}`);
  for (const t of config.contextTargets || []) if ((t.values || []).length) lines.push(`${t.contextKind} → ${label(flag, t.variation)}: ${t.values.join(', ')}`);
  return lines;
}

// [{title, before: [lines], after: [lines]} | {title, unknown: instruction}] for each instruction
export function previewChanges(flag, env, instructions) {
  const config = (flag.environments || {})[env] || {};
  return instructions.map((ins) => {
    switch (ins.kind) {
      case 'turnFlagOn':
      case 'turnFlagOff':
        return { title: `State in ${env}`, before: [config.on ? 'On' : 'Off'], after: [ins.kind === 'turnFlagOn' ? 'On' : 'Off'] };
      case 'updateOffVariation':
        return { title: 'Off variation', before: [typeof config.offVariation === 'number' ? label(flag, config.offVariation) : 'none'], after: [ins.variationId ? byId(flag, ins.variationId) : 'none'] };
      case 'updateFallthroughVariationOrRollout':
        return { title: 'Default rule', before: [servedText(flag, config.fallthrough)], after: [requestedText(flag, ins)] };
      case 'replaceRules':
        return { title: 'Rules', before: ruleLines(config.rules || [], (r) => servedText(flag, r)), after: ruleLines(ins.rules || [], (r) => requestedText(flag, r)) };
      case 'replaceTargets': {
        const after = (ins.targets || []).filter((t) => (t.values || []).length).map((t) => `${t.contextKind || 'user'} → ${byId(flag, t.variationId)}: ${t.values.join(', ')}`);
        return { title: 'Individual targets', before: targetLines(flag, config), after };
      }
      case 'replacePrerequisites':
        return {
          title: 'Prerequisites',
          before: (config.prerequisites || []).map((p) => `${p.key} must serve its variation #${p.variation}`),
          after: (ins.prerequisites || []).map((p) => `${p.key} must serve its variation ${p.variationId}`),
        };
      default:
        return { title: ins.kind, unknown: ins };
    }
  });
}
