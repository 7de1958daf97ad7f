// api.js: the console's only way to the server. Every call is JSON over
// fetch with the session cookie; state-changing calls carry the session's
// X-CSRF-Token. Refusals become ApiError with the problem body (RFC 9457).

export const state = {
  session: null,   // {member, accountId, accountName, operator, csrfToken}
  config: { openSignup: false },
  models: null,    // cached GET /api/v1/models
};

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
  get code() { return this.problem.code || ''; }
}

// onUnauthorized is called when a signed-in call answers 401 (the session
// ended): the app sends the user to the sign-in page.
let onUnauthorized = () => {};
export function setUnauthorizedHandler(f) { onUnauthorized = f; }

export async function api(method, path, body, opts = {}) {
  const headers = { Accept: 'application/json', ...(opts.headers || {}) };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (opts.raw !== undefined) {
    init.body = opts.raw; // a File or Blob, sent as it is
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (method !== 'GET' && method !== 'HEAD' && state.session) {
    headers['X-CSRF-Token'] = state.session.csrfToken;
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, { title: 'Network error', detail: 'the server could not be reached; check the connection and try again', code: 'NETWORK' });
  }
  let data = null;
  const type = resp.headers.get('Content-Type') || '';
  if (resp.status !== 204 && type.includes('json')) {
    try { data = await resp.json(); } catch { data = null; }
  }
  if (!resp.ok && !(opts.accept || []).includes(resp.status)) {
    const problem = data && typeof data === 'object' ? data : { title: resp.statusText || `HTTP ${resp.status}`, detail: '' };
    if (resp.status === 401 && state.session && !opts.noRedirect) {
      state.session = null;
      onUnauthorized();
    }
    throw new ApiError(resp.status, problem);
  }
  return { status: resp.status, data, headers: resp.headers };
}

export const get = (path, opts) => api('GET', path, undefined, opts).then(r => r.data);
export const post = (path, body, opts) => api('POST', path, body === undefined ? {} : body, opts).then(r => r.data);
export const patch = (path, body) => api('PATCH', path, body).then(r => r.data);
export const del = (path) => api('DELETE', path).then(r => r.data);

// qs builds a query string from the set values of o.
export function qs(o) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) {
    if (v !== undefined && v !== null && v !== '') p.set(k, v);
  }
  const s = p.toString();
  return s ? '?' + s : '';
}

export async function loadSession() {
  try {
    state.session = await get('/api/v1/auth/session', { noRedirect: true });
  } catch (e) {
    state.session = null;
  }
  return state.session;
}

export async function loadConfig() {
  try {
    state.config = await get('/api/v1/auth/config', { noRedirect: true }) || { openSignup: false };
  } catch {
    state.config = { openSignup: false };
  }
  return state.config;
}

export async function loadModels(force) {
  if (!state.models || force) {
    const d = await get('/api/v1/models');
    state.models = d.models || [];
  }
  return state.models;
}

export function modelByID(id) {
  return (state.models || []).find(m => m.id === id);
}
