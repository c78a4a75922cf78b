// The management API, as the page calls it: JSON both ways, same origin.

// APIError is an error answer: the status and the API's {error, field}.
export class APIError extends Error {
  constructor(status, body) {
    const msg = body && body.error ? body.error : `HTTP ${status}`;
    super(body && body.field ? `${msg} (field ${body.field})` : msg);
    this.status = status;
    this.field = body && body.field;
  }
}

// api sends method to path (with body as JSON, {} for a write that needs
// nothing) and returns the decoded answer, null for 204.
export async function api(method, path, body) {
  const init = { method, cache: 'no-store', credentials: 'omit', headers: {} };
  if (method !== 'GET') {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body === undefined ? {} : body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (!res.ok) throw new APIError(res.status, data);
  return data;
}

// seg escapes one path segment.
export const seg = encodeURIComponent;
