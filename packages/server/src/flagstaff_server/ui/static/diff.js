// A line diff (longest common subsequence) for the audit log's before/after documents.

export function lineDiff(beforeText, afterText) {
  const a = beforeText ? beforeText.split('\n') : [];
  const b = afterText ? afterText.split('\n') : [];
  if (a.length * b.length > 4_000_000) {
    return [...a.map((l) => ['del', l]), ...b.map((l) => ['add', l])];
  }
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0; let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { out.push(['same', a[i]]); i += 1; j += 1; } else if (lcs[i + 1][j] >= lcs[i][j + 1]) { out.push(['del', a[i]]); i += 1; } else { out.push(['add', b[j]]); j += 1; }
  }
  while (i < a.length) { out.push(['del', a[i]]); i += 1; }
  while (j < b.length) { out.push(['add', b[j]]); j += 1; }
  // unchanged stretches longer than 6 lines are folded to keep the change readable
  const folded = [];
  let run = [];
  const flush = () => {
    if (run.length > 6) { folded.push(...run.slice(0, 2), ['same', `… ${run.length - 4} unchanged lines …`], ...run.slice(-2)); } else folded.push(...run);
    run = [];
  };
  for (const line of out) { if (line[0] === 'same') run.push(line); else { flush(); folded.push(line); } }
  flush();
  return folded;
}
