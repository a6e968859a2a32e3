// Where a flag is used (docs/code-references.md): the hunks `flagstaff code-refs` uploaded from
// each scanned repository's default branch, with a link to the line when the repository has a
// hunk URL template, the keys' extinctions, and whether the flag is stale and safe to remove.
// Reads /api/v2/code-refs/usage/{project}/{flag}; changes nothing.
import { get, enc } from './api.js';
import { h, clear, time } from './dom.js';

function hunkView(path, hunk) {
  const where = `${path}:${hunk.startingLineNumber}`;
  const title = hunk.url ? h('a', { href: hunk.url, rel: 'noopener', target: '_blank' }, where) : h('span', {}, where);
  const aliases = hunk.aliases.length ? h('span', { class: 'muted' }, ` as ${hunk.aliases.join(', ')}`) : null;
  return h('li', { class: 'hunk' },
    h('div', { class: 'mono' }, title, aliases),
    hunk.lines ? h('pre', {}, hunk.lines) : null);
}

function repositoryView(repository) {
  const files = `${repository.fileCount} file${repository.fileCount === 1 ? '' : 's'}`;
  const hunks = `${repository.hunkCount} reference${repository.hunkCount === 1 ? '' : 's'}`;
  const name = repository.sourceLink ? h('a', { href: repository.sourceLink, rel: 'noopener', target: '_blank' }, repository.name) : repository.name;
  return h('div', { class: 'repository', dataset: { repository: repository.name } },
    h('h3', {}, name, ' ', h('span', { class: 'muted' }, `${repository.defaultBranch} @ ${repository.head.slice(0, 10)}: ${hunks} in ${files}, scanned `, time(repository.syncTime))),
    h('ul', { class: 'hunks' }, repository.references.flatMap((reference) => reference.hunks.map((hunk) => hunkView(reference.path, hunk)))));
}

function verdict(usage) {
  if (usage.safeToRemove) {
    return h('p', { class: 'notice success', id: 'safe-to-remove', role: 'status' },
      `Safe to remove: the flag is stale (${usage.staleReason}) and no scanned repository references it (${usage.scannedRepositories.join(', ')}).`);
  }
  if (!usage.scannedRepositories.length) {
    return h('p', { class: 'muted' }, 'No repository has been scanned yet: run `flagstaff code-refs --dir REPO` to see where this flag is used.');
  }
  if (usage.stale) {
    return h('p', { class: 'notice', role: 'status' }, `Stale (${usage.staleReason}), but still referenced in code: remove those references first.`);
  }
  if (!usage.repositories.length) {
    return h('p', { class: 'muted' }, `Not referenced in ${usage.scannedRepositories.join(', ')}; not stale (${usage.staleReason}).`);
  }
  return null;
}

export function codeReferencesSection(ctx, key) {
  const { app } = ctx;
  const element = h('div', { id: 'code-references' }, h('p', { class: 'muted' }, 'Loading…'));
  async function refresh() {
    const usage = await get(`/api/v2/code-refs/usage/${enc(app.project)}/${enc(key)}`);
    const gone = usage.extinctions.map((event) => h('li', {},
      `Removed from ${event.repoName} (${event.branchName}) in `, h('code', {}, event.revision.slice(0, 10)),
      ` “${event.message}”, `, time(event.time)));
    clear(element,
      verdict(usage),
      usage.repositories.map(repositoryView),
      gone.length ? h('div', {}, h('h3', {}, 'Extinctions'), h('ul', { class: 'extinctions' }, gone)) : null);
  }
  return { element, refresh };
}
