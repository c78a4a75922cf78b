// The console's main module: the server list, kept live from the event
// stream, and the tabs.
import { h, fill, toast, httpLink, debounce } from './dom.js';
import { api, seg } from './api.js';
import { serverForm } from './serverform.js';
import { toolForm, promptForm } from './schemaform.js';
import { loadCatalog, loadActors, cls } from './catalog.js';
import { resourcesTab, resourceUpdated } from './resources.js';
import { toolsTab } from './toolsview.js';

const list = document.getElementById('servers');
const cards = new Map(); // name → card
let tools = []; // GET /api/mcp/tools
let prompts = []; // GET /api/mcp/prompts

// when shows a time: of day, with the date when not today, and how far
// off it is ("in 4 s", "3 min ago"); the ticker below keeps that current.
function when(t) {
  const d = new Date(t);
  const now = new Date();
  const s = Math.round((d - now) / 1000);
  const a = Math.abs(s);
  const rel = a < 90 ? `${a} s` : a < 5400 ? `${Math.round(a / 60)} min` : a < 129600 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  const day = d.toDateString() === now.toDateString() ? '' : `${d.toLocaleDateString()} `;
  return `${day}${d.toLocaleTimeString()} (${s >= 0 ? `in ${rel}` : `${rel} ago`})`;
}
setInterval(() => { for (const e of document.querySelectorAll('[data-at]')) e.textContent = when(e.dataset.at); }, 1000);

// timeItem is item for a time: kept current by the ticker.
function timeItem(key, label, t) {
  const r = item(key, label, t ? when(t) : '');
  if (r) r[1].dataset.at = t;
  return r;
}

// card is a server's view: a head re-drawn on each refresh, and the tool,
// prompt and edit parts re-drawn only when what they show changed, so that
// an open form keeps what the user typed.
function card(name) {
  let c = cards.get(name);
  if (c) return c;
  c = { name, root: h('article', { class: 'server', 'data-server': name }) };
  c.head = h('div', { class: 'head' });
  c.info = h('dl', { class: 'info' });
  c.auth = h('div', { class: 'authorize' });
  c.actions = h('div', { class: 'actions' });
  c.edit = h('div', { class: 'edit' });
  c.toolList = h('div', {});
  c.tools = h('details', { class: 'tools' }, c.toolsSummary = h('summary', {}, 'tools'), c.toolList);
  c.promptList = h('div', {});
  c.prompts = h('details', { class: 'prompts' }, c.promptsSummary = h('summary', {}, 'prompts'), c.promptList);
  c.stderr = h('pre', { class: 'stderr' });
  c.notes = h('div', { class: 'notes' });
  c.instructions = h('pre', {});
  c.instructionsBox = h('details', { class: 'instructions', hidden: true }, h('summary', {}, 'instructions'), c.instructions);
  c.root.append(c.head, c.info, c.auth, c.notes, c.instructionsBox, c.actions, c.edit, c.tools, c.prompts, h('details', { class: 'stderr-box' }, h('summary', {}, 'stderr'), c.stderr));
  cards.set(name, c);
  return c;
}

function item(key, label, value, wide) {
  return value === undefined || value === '' || value === null ? null : [h('dt', {}, label), h('dd', { 'data-field': key, class: wide ? 'wide' : null }, String(value))];
}

// draw shows entry d (GET /api/mcp/servers/{name}) in its card.
function draw(d) {
  const c = card(d.name);
  c.entry = d;
  fill(c.head, h('h2', {}, d.name), h('span', { class: `state state-${cls(d.state)}`, 'data-state': '' }, d.state),
    d.enabled || d.state === 'disabled' ? null : h('span', { class: 'badge' }, 'disabled'),
    h('span', { class: 'muted' }, ` ${d.type} `, d.type === 'local' ? (d.command || []).join(' ') : d.url || ''));
  fill(c.info,
    item('ready', 'ready', d.ready ? 'yes' : 'no'), item('tools', 'tools', d.tool_count), item('prompts', 'prompts', d.prompt_count),
    item('tools_filtered', 'tools filtered', d.tools_filtered || ''), item('requests_refused', 'requests refused', d.requests_refused || ''),
    item('restarts', 'restarts', d.restarts), item('pid', 'pid', d.pid), timeItem('since', 'since', d.since),
    item('protocol', 'protocol', d.protocol_version), item('error_kind', 'error kind', d.error_kind),
    item('server_info', 'server', d.server_info ? [d.server_info.title || d.server_info.name, d.server_info.version].filter(Boolean).join(' ') : ''),
    item('starting_detail', 'starting', d.starting_detail, true),
    item('error', 'error', d.error, true), item('last_error', 'last error', d.last_error !== d.error ? d.last_error : '', true),
    timeItem('next_retry_at', 'next retry', d.next_retry_at));
  fill(c.auth, d.authorize_url ? ['login waiting: ', httpLink(d.authorize_url, 'authorize')] : null);
  c.instructions.textContent = d.instructions || '';
  c.instructionsBox.hidden = !d.instructions;
  // The buttons are re-made only when enabled changed: one re-made under
  // the pointer would lose the click.
  if (c.enabledShown !== d.enabled) {
    c.enabledShown = d.enabled;
    fill(c.actions,
      d.enabled ? h('button', { type: 'button', 'data-action': 'restart', onclick: () => act(d.name, 'POST', `/api/mcp/servers/${seg(d.name)}/restart`, 'restarted') }, 'Restart') : null,
      h('button', { type: 'button', 'data-action': 'toggle', onclick: () => act(d.name, 'PATCH', `/api/mcp/servers/${seg(d.name)}`, d.enabled ? 'disabled' : 'enabled', { enabled: !d.enabled }) }, d.enabled ? 'Disable' : 'Enable'),
      h('button', { type: 'button', 'data-action': 'edit', onclick: () => edit(d.name) }, 'Edit'),
      h('button', { type: 'button', 'data-action': 'delete', class: 'danger', onclick: () => confirmDelete(c) }, 'Delete'));
  }
  c.stderr.textContent = (d.stderr_tail || []).join('\n');
  drawLists(c);
}

// drawLists re-draws a card's tools and prompts when their names changed.
function drawLists(c) {
  const mine = tools.filter((t) => t.server === c.name);
  const sig = JSON.stringify(mine.map((t) => [t.name, t.title, t.description, t.input_schema, t.annotations, t.output_schema]));
  if (sig !== c.toolSig) {
    c.toolSig = sig;
    // A note about a tool no longer listed goes with it. One about a tool
    // still listed stays: its event may come before the list that holds
    // its new schema, and is sent once per schema.
    const names = new Set(mine.map((t) => t.name));
    for (const n of c.notes.querySelectorAll('[data-note]')) if (!names.has(n.dataset.note)) n.remove();
    c.toolsSummary.textContent = `tools (${mine.length})`;
    fill(c.toolList, mine.map((t) => {
      const body = h('div', {});
      const d = h('details', { class: 'tool', 'data-tool': t.name }, h('summary', {}, t.original_name || t.name, t.title ? h('span', { class: 'muted' }, ` ${t.title}`) : null, hints(t.annotations)),
        h('p', { class: 'desc' }, t.description || ''),
        t.output_schema ? h('details', { 'data-output-schema': '' }, h('summary', {}, 'output schema'), h('pre', {}, JSON.stringify(t.output_schema, null, 2))) : null, body);
      d.addEventListener('toggle', () => { if (d.open && !body.firstChild) body.append(toolForm(t)); });
      return d;
    }));
  }
  const ps = prompts.filter((p) => p.server === c.name);
  const psig = JSON.stringify(ps.map((p) => [p.name, p.description, p.arguments]));
  if (psig !== c.promptSig) {
    c.promptSig = psig;
    c.promptsSummary.textContent = `prompts (${ps.length})`;
    fill(c.promptList, ps.map((p) => h('details', { class: 'prompt', 'data-prompt': p.name },
      h('summary', {}, p.original_name || p.name), h('p', { class: 'desc' }, p.description || ''), promptForm(p))));
  }
}

// hints are a tool's annotations as badges (what the server claims).
const hintNames = { read_only_hint: 'read-only', destructive_hint: 'destructive', idempotent_hint: 'idempotent', open_world_hint: 'open world' };
function hints(a) {
  return Object.entries(hintNames).filter(([k]) => a && typeof a[k] === 'boolean')
    .map(([k, label]) => h('span', { class: 'hint', 'data-hint': k }, a[k] ? label : `not ${label}`));
}

async function act(name, method, path, done, body) {
  try {
    await api(method, path, body);
    toast(`${name} ${done}`);
  } catch (e) {
    toast(`${name}: ${e.message}`, true);
  }
  refreshServer(name);
}

// editing says whether c's edit form is open, and then keeps it: Edit and
// Delete do not replace a form being filled in (it is saved or cancelled).
function editing(c) {
  const form = c.edit.querySelector('form');
  if (!form) return false;
  toast(`${c.name}: its edit form is open: save or cancel it first`, true);
  form.scrollIntoView({ block: 'nearest' });
  return true;
}

function confirmDelete(c) {
  if (editing(c)) return;
  fill(c.edit, h('div', { class: 'confirm' }, `Delete ${c.name}? Its processes stop and its entry leaves the config file. `,
    h('button', { type: 'button', class: 'danger', 'data-action': 'confirm-delete', onclick: async () => {
      try {
        await api('DELETE', `/api/mcp/servers/${seg(c.name)}`);
        toast(`${c.name} deleted`);
        remove(c.name);
      } catch (e) { toast(`${c.name}: ${e.message}`, true); }
    } }, 'Delete'),
    h('button', { type: 'button', onclick: () => c.edit.replaceChildren() }, 'Cancel')));
}

async function edit(name) {
  const c = card(name);
  if (editing(c)) return;
  try {
    const entry = await api('GET', `/api/mcp/servers/${seg(name)}`); // the masked form: no secret
    fill(c.edit, serverForm(entry, (saved) => { c.edit.replaceChildren(); toast(`${name} saved`); draw({ ...c.entry, ...saved }); refreshServer(name); },
      () => c.edit.replaceChildren()));
  } catch (e) { toast(e.message, true); }
}

function remove(name) {
  const c = cards.get(name);
  if (c) { c.root.remove(); cards.delete(name); }
}

// refreshServer re-reads one server, a burst of events about it at once.
const pending = new Map();
function refreshServer(name) {
  clearTimeout(pending.get(name));
  pending.set(name, setTimeout(async () => {
    pending.delete(name);
    try { draw(await api('GET', `/api/mcp/servers/${seg(name)}`)); } catch (e) { if (e.status === 404) remove(name); }
  }, 100));
}

// refreshLists re-reads the tools and prompts of every server.
const refreshLists = debounce(async () => {
  try {
    [tools, prompts] = await Promise.all([api('GET', '/api/mcp/tools').then((r) => r.tools || []), api('GET', '/api/mcp/prompts').then((r) => r.prompts || [])]);
  } catch (e) { return; }
  for (const c of cards.values()) drawLists(c);
}, 100);

// refreshAll re-reads the whole list: at start, after a reconnect and
// after events were dropped.
const refreshAll = debounce(async () => {
  let res;
  try { res = await api('GET', '/api/mcp/servers'); } catch (e) { toast(e.message, true); return; }
  const ce = document.getElementById('config-error');
  ce.hidden = !res.config_error;
  ce.textContent = res.config_error ? `config file: ${res.config_error}` : '';
  const names = (res.servers || []).map((s) => s.name);
  for (const n of [...cards.keys()]) if (!names.includes(n)) remove(n);
  if (!names.length) fill(list, h('p', { class: 'muted', 'data-empty': '' }, 'no servers configured: add one, or apply one from the catalog'));
  else list.querySelector(':scope > p')?.remove();
  // In file order, moving only a card out of place: a moved card loses
  // the focus and the text selection of the form being typed in.
  let at = list.firstElementChild;
  for (const s of res.servers || []) {
    const root = card(s.name).root;
    if (root === at) at = at.nextElementSibling;
    else list.insertBefore(root, at);
    if (!cards.get(s.name).entry) draw(s);
    refreshServer(s.name);
  }
  refreshLists();
}, 50);

// The event stream. The browser reconnects by itself and resumes with
// Last-Event-ID; after a 503 (the runtime stopping) it gives up, and the
// page opens a new stream from the last id it saw: after 1 s, doubled on
// each failed open up to 10 s (a runtime being restarted is back soon; one
// gone is not hammered).
const live = document.getElementById('live');
let lastId = '';
let reopenDelay = 1000;
function listen() {
  const es = new EventSource(lastId ? `/api/mcp/events?last_event_id=${seg(lastId)}` : '/api/mcp/events');
  es.onopen = () => { reopenDelay = 1000; live.textContent = 'live'; live.className = 'live on'; refreshAll(); };
  es.onerror = () => {
    live.textContent = 'reconnecting…';
    live.className = 'live off';
    if (es.readyState === EventSource.CLOSED) {
      setTimeout(listen, reopenDelay);
      reopenDelay = Math.min(reopenDelay * 2, 10000);
    }
  };
  const on = (ev) => {
    if (ev.lastEventId) lastId = ev.lastEventId;
    let e;
    try { e = JSON.parse(ev.data); } catch { return; }
    switch (e.type) {
      case 'dropped': case 'config_loaded': case 'server_added': refreshAll(); break;
      case 'server_removed': remove(e.server); break;
      case 'tools_changed': case 'prompts_changed': refreshLists(); refreshServer(e.server); break;
      case 'resource_updated': resourceUpdated(e); break;
      case 'output_schema_unusable':
        if (cards.has(e.server)) cards.get(e.server).notes.querySelector(`[data-note="${CSS.escape(e.tool)}"]`)?.remove();
        if (cards.has(e.server)) cards.get(e.server).notes.append(h('p', { class: 'note', 'data-note': e.tool }, `tool ${e.tool}: its output schema is unusable: ${e.error}`));
        break;
      default: if (e.server && cards.has(e.server)) refreshServer(e.server);
    }
    if (!document.getElementById('tab-actors').hidden) actorsSoon();
  };
  for (const t of ['state_changed', 'session_started', 'session_lost', 'server_added', 'server_removed', 'tools_changed',
    'prompts_changed', 'instructions_changed', 'server_log', 'starting_output', 'login_required', 'login_completed', 'login_failed',
    'token_refreshed', 'refresh_refused', 'config_saved', 'config_rejected', 'config_loaded', 'actor_panicked', 'dropped',
    'resource_updated', 'request_refused', 'output_schema_unusable']) {
    es.addEventListener(t, on);
  }
}
const actorsSoon = debounce(() => loadActors(document.getElementById('tab-actors')), 300);

// Tabs.
for (const b of document.querySelectorAll('nav button')) {
  b.addEventListener('click', () => {
    // The tab shown stays as it is: re-reading it would lose what is being
    // typed in it (an apply overlay, a pasted config).
    if (b.classList.contains('on')) return;
    for (const o of document.querySelectorAll('nav button')) o.classList.toggle('on', o === b);
    for (const s of document.querySelectorAll('main > section')) s.hidden = s.id !== `tab-${b.dataset.tab}`;
    if (b.dataset.tab === 'catalog') loadCatalog(document.getElementById('tab-catalog'), refreshAll);
    if (b.dataset.tab === 'actors') loadActors(document.getElementById('tab-actors'));
    if (b.dataset.tab === 'tools') toolsTab(document.getElementById('tab-tools'));
    if (b.dataset.tab === 'resources') resourcesTab(document.getElementById('tab-resources'), [...cards.keys()]);
  });
}

const addBox = document.getElementById('add-form');
document.getElementById('add-server').addEventListener('click', () => {
  fill(addBox, serverForm(undefined, (saved) => { addBox.replaceChildren(); toast(`${saved.name} added`); refreshAll(); }, () => addBox.replaceChildren()));
});

// Reload: the runtime re-reads its config file (POST /api/mcp/reload).
const reloaded = document.getElementById('reloaded');
document.getElementById('reload').addEventListener('click', async () => {
  try {
    const r = await api('POST', '/api/mcp/reload');
    reloaded.textContent = Object.entries(r).filter(([, v]) => v && v.length).map(([k, v]) => `${k}: ${v.join(', ')}`).join('; ') || 'reloaded: no change';
    reloaded.className = 'muted';
  } catch (e) { reloaded.textContent = e.message; reloaded.className = 'error'; }
  refreshAll();
});

refreshAll();
listen();
