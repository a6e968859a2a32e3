// Calls the management API with the session cookie. Writes carry the session's CSRF token;
// errors become ApiError with the problem JSON's status, code, message and path.

export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.message || body.detail)) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.path = body && body.path;
    this.body = body;
  }
  get isConflict() { return this.status === 409 && this.code === 'optimistic_locking_error'; }
}

const state = { csrf: null, onUnauthorized: null };

export function setCsrf(token) { state.csrf = token; }
export function onUnauthorized(fn) { state.onUnauthorized = fn; }

export async function call(method, path, { body, semantic = false, ifMatch, quiet401 = false } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) {
    headers['Content-Type'] = semantic
      ? 'application/json; domain-model=launchdarkly.semanticpatch'
      : 'application/json';
  }
  if (method !== 'GET' && state.csrf) headers['X-CSRF-Token'] = state.csrf;
  if (ifMatch !== undefined && ifMatch !== null) headers['If-Match'] = String(ifMatch);
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = { message: text }; }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed);
    if (response.status === 401 && !quiet401 && state.onUnauthorized) state.onUnauthorized(error);
    throw error;
  }
  return parsed;
}

export const get = (path, options) => call('GET', path, options);
export const post = (path, body, options = {}) => call('POST', path, { ...options, body });
export const del = (path, options) => call('DELETE', path, options);
export const patchSemantic = (path, body, version) =>
  call('PATCH', path, { body, semantic: true, ifMatch: version });

export const enc = encodeURIComponent;
