// The add and edit form of a server, with the seed's secret inputs
// (DESIGN W2): a secret input starts empty and shows only the stored
// name and its mask; an input left empty is not sent (the stored value is
// kept); a stored value is deleted only through its delete control, which
// sends "". The page never holds a stored secret: it has only masks.
import { h, fill } from './dom.js';
import { api, seg } from './api.js';

// storedText is how a stored secret shows: its reference (not a secret)
// or its mask.
function storedText(v) {
  if (!v || !v.has_value) return '';
  return v.reference ? `= ${v.reference}` : v.masked;
}

// secretInput is one secret's input, empty. It is a text input masked
// by CSS (.secret: -webkit-text-security), not a password input, so that
// the browser's password manager neither offers nor stores it.
function secretInput(attrs, multiline) {
  const a = { autocomplete: 'off', spellcheck: 'false', placeholder: 'unchanged', class: 'secret', ...attrs };
  return multiline ? h('textarea', { rows: 3, ...a }) : h('input', { type: 'text', ...a });
}

// secretField is one auth secret: the stored mask, an empty input, a
// delete control. value() is undefined (untouched: not sent), "" (delete)
// or the new value. A secret the stored auth kind requires (stored.required)
// keeps its delete control, labelled: the API refuses the delete until the
// kind changes, and its refusal names the field.
function secretField(key, label, stored, multiline) {
  const input = secretInput({ name: key, 'data-secret': key }, multiline);
  let deleted = false;
  const del = stored.has
    ? h('button', { type: 'button', class: 'del', 'data-delete': key, onclick: () => {
      deleted = !deleted;
      input.disabled = deleted;
      row.classList.toggle('deleted', deleted);
      del.textContent = deleted ? 'keep' : 'delete';
    } }, 'delete')
    : null;
  const row = h('div', { class: 'field secret-field' }, h('label', {}, label),
    stored.has ? h('span', { class: 'stored', 'data-stored': key }, stored.text) : h('span', { class: 'stored muted' }, 'none stored'),
    input, del,
    stored.has && stored.required ? h('small', { class: 'muted', 'data-required': key }, `required by ${stored.required}: to delete it, change the auth kind`) : null);
  return { el: row, value: () => (deleted ? '' : input.value === '' ? undefined : input.value) };
}

// secretMap is the editor of env or headers: a row per stored name (its
// mask, an empty input, delete) and rows for new names. value() holds only
// the names touched: a new value, "" for a deleted one; undefined when none.
function secretMap(key, stored) {
  const rows = [];
  const list = h('div', { class: 'secret-map', 'data-map': key });
  for (const [name, v] of Object.entries(stored || {})) {
    const f = secretField(`${key}.${name}`, name, { has: true, text: storedText(v) });
    rows.push(() => [name, f.value()]);
    list.append(f.el);
  }
  const addRow = () => {
    const n = h('input', { type: 'text', placeholder: 'NAME', spellcheck: 'false', autocomplete: 'off', 'data-new-name': key });
    const v = secretInput({ placeholder: 'value', 'data-new-value': key });
    const row = h('div', { class: 'field new-secret' }, n, v,
      h('button', { type: 'button', class: 'del', onclick: () => { row.remove(); n.value = ''; } }, 'remove'));
    rows.push(() => [n.value.trim(), v.value === '' ? undefined : v.value]);
    list.append(row);
  };
  const el = h('fieldset', {}, h('legend', {}, key), list,
    h('button', { type: 'button', 'data-add': key, onclick: addRow }, `add ${key === 'env' ? 'variable' : 'header'}`));
  return {
    el,
    value: () => {
      const out = {};
      for (const r of rows) {
        const [name, v] = r();
        if (name && v !== undefined) out[name] = v;
      }
      return Object.keys(out).length ? out : undefined;
    },
  };
}

const types = ['local', 'http', 'sse'];
const kinds = ['none', 'bearer', 'oauth', 'client_credentials'];
const numbers = ['timeout_seconds', 'connect_timeout_seconds', 'max_call_seconds', 'max_output_bytes', 'max_media_bytes', 'max_concurrent_calls'];

const words = (s) => s.split(/[\s,]+/).filter((x) => x !== '');

// input makes a labelled text (or other) input holding value; init is
// the value as the input holds it (read back), what "changed" compares to.
function input(key, label, value, attrs) {
  const i = h(attrs && attrs.rows ? 'textarea' : 'input', { name: key, spellcheck: 'false', autocomplete: 'off', ...attrs });
  i.value = value == null ? '' : String(value);
  return { i, init: i.value, el: h('div', { class: 'field' }, h('label', {}, label), i) };
}

function select(key, label, options, value) {
  const i = h('select', { name: key }, options.map((o) => h('option', { value: o }, o || '(default)')));
  i.value = value || '';
  return { i, init: i.value, el: h('div', { class: 'field' }, h('label', {}, label), i) };
}

// argList is the command's editor: one box per argument, kept exactly as
// typed (no trim, empty and multi-line arguments too), so that a command
// the user did not touch reads back as it was stored.
function argList(values) {
  const box = h('div', { class: 'args', 'data-args': '' });
  const addArg = (v) => {
    const t = h('textarea', { rows: Math.max(1, v.split('\n').length), name: 'arg', spellcheck: 'false', autocomplete: 'off', 'data-arg': '' });
    t.value = v;
    const row = h('div', { class: 'arg' }, t, h('button', { type: 'button', class: 'del', title: 'remove this argument', onclick: () => row.remove() }, '×'));
    box.append(row);
    return t;
  };
  for (const v of values.length ? values : ['']) addArg(v);
  const read = () => [...box.querySelectorAll('textarea[data-arg]')].map((t) => t.value);
  const init = JSON.stringify(read());
  return {
    el: h('div', { class: 'field' }, h('label', {}, 'command (one box per argument)'), box,
      h('button', { type: 'button', 'data-add': 'arg', onclick: () => addArg('').focus() }, 'add argument')),
    read,
    changed: () => JSON.stringify(read()) !== init,
  };
}

// resets are the limits an emptied field puts back to their default with
// 0 (config.ApplyPatch); timeout_seconds has no default to put back.
const resets = new Set(['connect_timeout_seconds', 'max_call_seconds', 'max_output_bytes', 'max_media_bytes', 'max_concurrent_calls']);

// serverForm is the add form (entry undefined) or the edit form of entry
// (the masked GET answer). onDone gets the saved entry.
export function serverForm(entry, onDone, onCancel) {
  const editing = !!entry;
  const e = entry || { type: 'local', enabled: true, env: {}, headers: {}, auth: { kind: 'none' }, tools_filter: {} };
  const a = e.auth || { kind: 'none' };
  const f = {
    name: input('name', 'name', '', { required: true, pattern: '[A-Za-z0-9_\\-]{1,48}' }),
    type: select('type', 'type', types, e.type),
    cwd: input('cwd', 'cwd', e.cwd),
    // text, not url: "${MCP_URL}" and "127.0.0.1:${PORT}" inside one are valid values; the API checks them.
    url: input('url', 'url', e.url),
    kind: select('auth.kind', 'auth', kinds, a.kind),
    client_id: input('auth.client_id', 'client id', a.client_id),
    scopes: input('auth.scopes', 'scopes (space separated)', (a.scopes || []).join(' ')),
    client_metadata_url: input('auth.client_metadata_url', 'client metadata URL', a.client_metadata_url),
    token_endpoint_auth_method: select('auth.token_endpoint_auth_method', 'token endpoint auth',
      ['', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'], a.token_endpoint_auth_method),
    signing_algorithm: select('auth.signing_algorithm', 'signing algorithm', ['', 'ES256', 'ES384', 'RS256', 'PS256'], a.signing_algorithm),
    allow: input('tools.allow', 'tools allowed (globs)', ((e.tools_filter || {}).allow || []).join(' ')),
    deny: input('tools.deny', 'tools denied (globs)', ((e.tools_filter || {}).deny || []).join(' ')),
    protocol_version: input('protocol_version', 'protocol version (pin)', e.pinned_protocol_version),
  };
  const nums = Object.fromEntries(numbers.map((k) => [k, input(k, k, editing ? e[k] : '', { type: 'number', min: k.startsWith('max_o') || k.startsWith('max_m') ? '-1' : '0' })]));
  const command = argList(e.command || []);
  const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: e.enabled !== false });
  const env = secretMap('env', e.env);
  const headers = secretMap('headers', e.headers);
  // What the stored kind requires: bearer its token, client_credentials
  // one credential (the secret or the key: the only one stored).
  const ccOnly = a.kind === 'client_credentials' && a.has_client_secret !== a.has_private_key ? 'client_credentials (its only credential)' : '';
  const token = secretField('auth.token', 'bearer token', { has: a.has_token, text: a.token_reference ? `= ${a.token_reference}` : a.token_masked, required: a.kind === 'bearer' ? 'bearer' : '' });
  const secret = secretField('auth.client_secret', 'client secret', { has: a.has_client_secret, text: a.client_secret_reference ? `= ${a.client_secret_reference}` : a.client_secret_masked, required: ccOnly });
  const key = secretField('auth.private_key', 'private key (PKCS#8 PEM)', { has: a.has_private_key, text: a.private_key_reference ? `= ${a.private_key_reference}` : a.private_key_masked, required: ccOnly }, true);

  const local = h('div', { class: 'group' }, command.el, f.cwd.el, env.el);
  const remote = h('div', { class: 'group' }, f.url.el, headers.el, f.kind.el);
  const byKind = {
    bearer: [token.el],
    oauth: [f.client_id.el, secret.el, f.scopes.el, f.client_metadata_url.el],
    client_credentials: [f.client_id.el, secret.el, key.el, f.token_endpoint_auth_method.el, f.signing_algorithm.el, f.scopes.el],
  };
  const authBox = h('div', { class: 'group auth' });
  const show = () => {
    local.hidden = f.type.i.value !== 'local';
    remote.hidden = f.type.i.value === 'local';
    fill(authBox, byKind[f.kind.i.value] || []);
  };
  f.type.i.addEventListener('change', show);
  f.kind.i.addEventListener('change', show);
  remote.append(authBox);
  const msg = h('p', { class: 'error', 'data-form-error': '' });
  // novalidate: the API validates, and its field error is shown in msg.
  const form = h('form', { class: 'server-form', novalidate: true, 'data-form': editing ? `edit-${e.name}` : 'add' },
    h('h3', {}, editing ? `Edit ${e.name}` : 'Add a server'),
    editing ? null : f.name.el, f.type.el, local, remote,
    h('div', { class: 'field' }, h('label', {}, enabled, ' enabled')),
    h('details', {}, h('summary', {}, 'limits, tool filter, protocol'), Object.values(nums).map((n) => n.el), f.allow.el, f.deny.el, f.protocol_version.el),
    msg,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, editing ? 'Save' : 'Add'), h('button', { type: 'button', onclick: onCancel }, 'Cancel')));
  show();

  // body is the POST body (what was filled in), or the PATCH body: only
  // the fields whose input differs from what the form was filled with.
  const body = () => {
    const b = {};
    const changed = (fld) => (editing ? fld.i.value !== fld.init : fld.i.value !== '');
    const put = (obj, k, fld, conv) => { if (changed(fld)) obj[k] = conv ? conv(fld.i.value) : fld.i.value; };
    if (!editing) b.name = f.name.i.value.trim();
    const type = f.type.i.value;
    if (!editing || type !== f.type.init) b.type = type;
    if (type === 'local') {
      const argv = command.read();
      if (editing ? command.changed() : argv.some((x) => x !== '')) b.command = argv;
      put(b, 'cwd', f.cwd);
      const v = env.value();
      if (v) b.env = v;
    } else {
      put(b, 'url', f.url);
      const v = headers.value();
      if (v) b.headers = v;
      const auth = {};
      const kind = f.kind.i.value;
      if (kind !== (a.kind || 'none')) auth.kind = kind;
      const visible = new Set(byKind[kind] || []);
      for (const k of ['client_id', 'client_metadata_url', 'token_endpoint_auth_method', 'signing_algorithm']) {
        if (visible.has(f[k].el)) put(auth, k, f[k]);
      }
      if (visible.has(f.scopes.el)) put(auth, 'scopes', f.scopes, words);
      for (const [k, s] of [['token', token], ['client_secret', secret], ['private_key', key]]) {
        const v3 = s.value();
        if (visible.has(s.el) && v3 !== undefined) auth[k] = v3;
      }
      if (!editing && kind === 'none' && Object.keys(auth).length === 0) { /* no auth */ } else if (Object.keys(auth).length) {
        if (!editing && !auth.kind) auth.kind = kind;
        b.auth = auth;
      }
    }
    if (!editing ? !enabled.checked : enabled.checked !== (e.enabled !== false)) b.enabled = enabled.checked;
    for (const [k, n] of Object.entries(nums)) {
      if (!changed(n)) continue;
      const raw = n.i.value.trim();
      if (raw === '' && !resets.has(k)) throw new Error(`${k} needs a value`);
      b[k] = raw === '' ? 0 : Number(raw); // 0 puts back the default
    }
    const tools = {};
    put(tools, 'allow', f.allow, words);
    put(tools, 'deny', f.deny, words);
    if (Object.keys(tools).length) b.tools = tools;
    put(b, 'protocol_version', f.protocol_version, (x) => x.trim());
    return b;
  };

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    msg.textContent = '';
    for (const x of form.querySelectorAll('.bad')) x.classList.remove('bad');
    let b;
    try { b = body(); } catch (err) { msg.textContent = err.message; return; }
    if (editing && !Object.keys(b).length) { onCancel(); return; }
    const submit = form.querySelector('button[type=submit]');
    submit.disabled = true;
    submit.textContent = editing ? 'saving…' : 'adding…';
    try {
      const saved = editing
        ? await api('PATCH', `/api/mcp/servers/${seg(e.name)}`, b)
        : await api('POST', '/api/mcp/servers', b);
      onDone(saved);
    } catch (err) {
      msg.textContent = err.message; // the API's error, naming its field
      const bad = err.field && form.querySelector(`[name="${CSS.escape(err.field)}"]`);
      if (bad) bad.classList.add('bad');
      submit.disabled = false;
      submit.textContent = editing ? 'Save' : 'Add';
    }
  });
  return form;
}
