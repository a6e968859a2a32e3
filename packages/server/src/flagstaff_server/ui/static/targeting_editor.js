// The targeting editor of one environment (prerequisites, individual targets, rules with their
// conditions and rollouts, default rule, off variation), editing a draft from targeting_draft.js
// in place; the flag page saves it.
import { h, clear, field, select, button, section } from './dom.js';
import { clauseRow, newClause } from './clause_editor.js';
import { TOTAL, variationLabel, serveDraft, rolloutTotal } from './targeting_draft.js';

function serveEditor(serve, variations, path, label) {
  const options = [...variations.map((v, i) => [String(i), variationLabel(v, i)]), ['rollout', 'a percentage rollout']];
  const choice = select(options, serve.kind === 'rollout' ? 'rollout' : String(serve.variation));
  const rollout = h('div', { class: 'rollout', tabindex: -1, dataset: { field: `${path}/rolloutWeights` } });
  const sum = h('output', { class: 'muted' });
  function drawRollout() {
    rollout.hidden = choice.value !== 'rollout';
    const inputs = variations.map((v, i) => {
      const input = h('input', { type: 'number', min: 0, max: 100, step: 0.001, value: serve.weights[i] ?? 0, class: 'pct' });
      input.addEventListener('input', () => { serve.weights[i] = Number(input.value || 0); total(); });
      return field(`% ${variationLabel(v, i)}`, input, { field: `${path}/rolloutWeights/${v._id}` });
    });
    const bucket = h('input', { value: serve.bucketBy, size: 10, autocomplete: 'off' });
    bucket.addEventListener('input', () => { serve.bucketBy = bucket.value.trim(); });
    const kind = h('input', { value: serve.contextKind, size: 8, autocomplete: 'off' });
    kind.addEventListener('input', () => { serve.contextKind = kind.value.trim(); });
    clear(rollout, inputs,
      field('Bucket by attribute', bucket, { field: `${path}/rolloutBucketBy` }),
      field('Context kind', kind, { field: `${path}/rolloutContextKind` }),
      sum);
    total();
  }
  function total() {
    const t = rolloutTotal(serve.weights);
    sum.value = `Total ${t / 1000}%${t === TOTAL ? '' : ' — must be 100%'}`;
  }
  choice.addEventListener('change', () => {
    if (choice.value === 'rollout') {
      serve.kind = 'rollout';
      if (!serve.weights.some(Number)) serve.weights = variations.map((_, i) => (i === 0 ? 100 : 0));
    } else { serve.kind = 'variation'; serve.variation = Number(choice.value); }
    drawRollout();
  });
  drawRollout();
  return h('div', { class: 'serve' }, field(label, choice, { field: `${path}/variationId` }), rollout);
}

// A section whose list may be empty: title, explanation and the add button on one line.
function listSection(title, note, list, addButton, empty) {
  const id = `sec-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h('section', { class: 'card', 'aria-labelledby': id },
    h('div', { class: 'sectionhead' }, h('h2', { id }, title), h('p', { class: 'muted' }, empty ? `None. ${note}` : note), empty ? addButton : null),
    empty ? null : list, empty ? null : addButton);
}

export function targetingEditor(state) {
  const { flag, draft, allFlags, segments } = state;
  const variations = flag.variations;
  const variationOptions = variations.map((v, i) => [String(i), variationLabel(v, i)]);
  const root = h('div', { class: 'targeting' });

  function redraw() {
    const focusedPath = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.field : null;
    const prereqs = h('div', {}, draft.prerequisites.map((p, i) => {
      const key = select([['', 'Choose a flag'], ...allFlags.filter((f) => f.key !== flag.key).map((f) => [f.key, f.name])], p.key);
      const other = () => allFlags.find((f) => f.key === key.value);
      const variation = select(other() ? other().variations.map((v, j) => [String(j), variationLabel(v, j)]) : [], String(p.variation));
      key.addEventListener('change', () => { p.key = key.value; p.variation = 0; redraw(); });
      variation.addEventListener('change', () => { p.variation = Number(variation.value); });
      return h('div', { class: 'row' },
        field(`Prerequisite ${i + 1}: flag`, key, { field: `prerequisites/${i}/key` }),
        field('must serve', variation, { field: `prerequisites/${i}/variationId` }),
        button('Remove prerequisite', () => { draft.prerequisites.splice(i, 1); redraw(); }, { class: 'link danger' }));
    }));
    const addPrereq = button('Add prerequisite', () => { draft.prerequisites.push({ key: '', variation: 0 }); redraw(); });

    const targets = h('div', {}, draft.targets.map((t, i) => {
      const kind = h('input', { value: t.contextKind, size: 8, autocomplete: 'off' });
      const variation = select(variationOptions, String(t.variation));
      const values = h('textarea', { rows: 2, value: t.values, placeholder: 'keys, one per line' });
      kind.addEventListener('input', () => { t.contextKind = kind.value.trim(); });
      variation.addEventListener('change', () => { t.variation = Number(variation.value); });
      values.addEventListener('input', () => { t.values = values.value; });
      return h('div', { class: 'row' },
        field('Serve', variation, { field: `targets/${i}/variationId` }),
        field('to context kind', kind, { field: `targets/${i}/contextKind` }),
        field('with keys', values, { field: `targets/${i}/values` }),
        button('Remove targets', () => { draft.targets.splice(i, 1); redraw(); }, { class: 'link danger' }));
    }));
    const addTargets = button('Add individual targets', () => { draft.targets.push({ contextKind: 'user', variation: 0, values: '' }); redraw(); });

    const rules = h('ol', { class: 'rules' }, draft.rules.map((rule, i) => {
      const description = h('input', { value: rule.description, autocomplete: 'off' });
      description.addEventListener('input', () => { rule.description = description.value; });
      const move = (delta) => () => {
        const j = i + delta;
        if (j < 0 || j >= draft.rules.length) return;
        [draft.rules[i], draft.rules[j]] = [draft.rules[j], draft.rules[i]];
        redraw();
      };
      return h('li', { class: 'rule' },
        h('fieldset', {},
          h('legend', {}, `Rule ${i + 1}`),
          field('Description', description, { field: `rules/${i}/description` }),
          h('p', { class: 'muted' }, 'If all of these match:'),
          rule.clauses.map((c, j) => clauseRow(c, {
            path: `rules/${i}/clauses/${j}`, segments, suggestions: state.suggestions, label: `Rule ${i + 1}, condition ${j + 1}`,
            onRemove: () => { rule.clauses.splice(j, 1); redraw(); },
          })),
          button('Add condition', () => { rule.clauses.push(newClause()); redraw(); }),
          serveEditor(rule.serve, variations, `rules/${i}`, 'then serve'),
          h('div', { class: 'actions' },
            button('Move up', move(-1), { disabled: i === 0 }),
            button('Move down', move(1), { disabled: i === draft.rules.length - 1 }),
            button('Remove rule', () => { draft.rules.splice(i, 1); redraw(); }, { class: 'danger' }))));
    }));
    const addRule = button('Add rule', () => {
      draft.rules.push({ id: null, description: '', clauses: [newClause()], serve: serveDraft(null, variations.length) });
      redraw();
    });
    const off = select([['', 'no off variation (SDK default)'], ...variationOptions], String(draft.offVariation));
    off.addEventListener('change', () => { draft.offVariation = off.value === '' ? '' : Number(off.value); });

    clear(root,
      listSection('Prerequisites', 'The off variation is served unless these flags serve the given variation.', prereqs, addPrereq, !draft.prerequisites.length),
      listSection('Individual targets', 'Context keys that always get a variation.', targets, addTargets, !draft.targets.length),
      listSection('Rules', 'Checked in order; the first rule whose conditions all match decides.', rules, addRule, !draft.rules.length),
      section('Default rule', serveEditor(draft.fallthrough, variations, 'fallthrough', 'When no rule matches, serve')),
      section('When the flag is off', field('Serve', off, { field: 'offVariation' })));
    if (focusedPath) {
      const again = root.querySelector(`[data-field="${CSS.escape(focusedPath)}"]`);
      if (again) again.focus();
    }
  }
  redraw();
  return root;
}
