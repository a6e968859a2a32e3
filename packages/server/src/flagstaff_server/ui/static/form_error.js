// Puts a problem JSON's message on the field its `path` names: the control whose data-field is
// the longest prefix of the path gets aria-invalid, the message, and focus.

export function clearFieldErrors(root) {
  for (const el of root.querySelectorAll('[aria-invalid="true"]')) el.removeAttribute('aria-invalid');
  for (const el of root.querySelectorAll('.field-error')) el.remove();
}

export function findField(root, path) {
  if (path === undefined || path === null) return null;
  let best = null;
  let bestLength = -1;
  for (const el of root.querySelectorAll('[data-field]')) {
    const name = el.dataset.field;
    const fits = path === name || path.startsWith(`${name}/`) || (name === '' && path === '');
    if (fits && name.length > bestLength) { best = el; bestLength = name.length; }
  }
  return best;
}

export function showFieldError(root, path, message) {
  const el = findField(root, path);
  if (!el) return false;
  el.setAttribute('aria-invalid', 'true');
  const note = document.createElement('p');
  note.className = 'field-error';
  note.id = `${el.id || 'field'}-error`;
  note.setAttribute('role', 'alert');
  note.textContent = message;
  el.setAttribute('aria-errormessage', note.id);
  el.insertAdjacentElement('afterend', note);
  el.focus();
  return true;
}
