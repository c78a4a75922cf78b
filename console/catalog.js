// The catalog tab: known server templates and the servers of other hosts
// (GET /api/mcp/catalog, masked), a source's diff against the running
// config, and apply with a new name ("as") and an overlay (a PATCH body
// laid over the entry: how a template gets its values).
import { h, fill, toast } from './dom.js';
import { api, seg } from './api.js';

const summary = (c) => (c ? (c.type === 'local' ? (c.command || []).join(' ') : `${c.type} ${c.url || ''}`) : '(does not parse)');

// applyForm is an entry's apply form.
function applyForm(entry, onApplied) {
  const as = h('input', { type: 'text', name: 'as', placeholder: entry.name, spellcheck: 'false', autocomplete: 'off' });
  const overlay = h('textarea', { name: 'overlay', rows: 3, spellcheck: 'false', autocomplete: 'off', class: 'secret', placeholder: '{"command": [...]} — fields to lay over the entry' });
  const out = h('span', { class: 'apply-result' });
  const form = h('form', { class: 'apply' }, h('label', {}, 'as ', as), h('label', {}, 'overlay ', overlay),
    h('button', { type: 'submit' }, 'Apply'), out);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const e = { source: entry.source, file: entry.file, name: entry.name };
    if (as.value.trim()) e.as = as.value.trim();
    if (overlay.value.trim()) {
      // Never err.message: Chromium's quotes the input around the error,
      // and the overlay may hold a secret.
      try { e.config = JSON.parse(overlay.value); } catch { out.textContent = 'overlay: not valid JSON'; out.className = 'apply-result status-bad'; return; }
    }
    try {
      const res = await api('POST', '/api/mcp/catalog/apply', { entries: [e] });
      const r = (res.results || [])[0] || {};
      out.textContent = r.status + (r.error ? `: ${r.error}` : '') + (r.field ? ` (field ${r.field})` : '');
      out.className = `apply-result status-${r.status === 'added' ? 'ok' : 'bad'}`;
      if (r.status === 'added') { overlay.value = ''; toast(`added ${r.server}`); onApplied(); }
    } catch (err) {
      out.textContent = err.message;
      out.className = 'apply-result status-bad';
    }
  });
  return form;
}

// diffTable shows a diff answer.
function diffTable(res) {
  const rows = (res.servers || []).map((s) => h('tr', { 'data-diff': s.name },
    h('td', {}, s.name), h('td', {}, s.file || ''), h('td', { class: `diff-${s.status}` }, s.status),
    h('td', {}, (s.fields || []).join(', ')), h('td', { class: 'error' }, s.error || '')));
  return [h('table', {}, h('thead', {}, h('tr', {}, ['name', 'file', 'status', 'fields', 'error'].map((x) => h('th', {}, x)))), h('tbody', {}, rows)),
    (res.warnings || []).map((w) => h('p', { class: 'warn' }, `${w.source} ${w.file}: ${w.message}`))];
}

// formats are what POST /api/mcp/catalog/diff reads pasted content as.
const formats = ['mcpvisor', 'claude-desktop', 'claude-code', 'cursor', 'vscode', 'windsurf', 'opencode', 'goose', 'zed', 'codex', 'gemini'];

// pasteBox diffs a pasted config against the running one. Diff only: apply
// takes catalog entries, not pasted ones; a server from it is added with
// "Add server". The content is masked like a secret input: it may hold some.
function pasteBox() {
  const format = h('select', { name: 'format' }, formats.map((f) => h('option', { value: f }, f)));
  const content = h('textarea', { name: 'content', rows: 5, class: 'secret', spellcheck: 'false', autocomplete: 'off', placeholder: 'a config file, as that host writes it' });
  const out = h('div', { class: 'diff', 'data-paste-diff': '' });
  const form = h('form', { class: 'apply', onsubmit: async (ev) => {
    ev.preventDefault();
    // The pasted content may hold secrets: once answered, it is not kept.
    try {
      const res = await api('POST', '/api/mcp/catalog/diff', { format: format.value, content: content.value });
      content.value = '';
      fill(out, diffTable(res));
    } catch (e) { fill(out, h('p', { class: 'error' }, e.message)); }
  } }, h('label', {}, 'format ', format), content, h('button', { type: 'submit' }, 'Diff'), out);
  return h('details', { 'data-paste': '' }, h('summary', {}, 'Diff a pasted config (diff only: add its servers with Add server)'), form);
}

// loadCatalog fills the tab; onApplied runs after a server was added.
export async function loadCatalog(tab, onApplied) {
  fill(tab, h('p', { class: 'muted' }, 'loading…'));
  let cat;
  try { cat = await api('GET', '/api/mcp/catalog'); } catch (e) { fill(tab, h('p', { class: 'error' }, e.message)); return; }
  const entries = cat.entries || [];
  const sources = [...new Set(entries.map((e) => e.source))];
  const src = h('select', { name: 'source' }, sources.map((s) => h('option', { value: s }, s)));
  const diffOut = h('div', { class: 'diff' });
  const diff = async () => {
    try { fill(diffOut, diffTable(await api('GET', `/api/mcp/catalog/diff?source=${seg(src.value)}`))); } catch (e) { fill(diffOut, h('p', { class: 'error' }, e.message)); }
  };
  const rows = entries.map((e) => {
    const cell = h('td', {});
    cell.append(h('button', { type: 'button', onclick: () => fill(cell, applyForm(e, onApplied)) }, 'Apply…'));
    return h('tr', { 'data-entry': `${e.source}/${e.name}` },
      h('td', {}, e.source), h('td', {}, e.name, e.file ? h('small', {}, ` ${e.file}`) : null),
      h('td', {}, e.description || '', h('br'), h('code', {}, summary(e.config))),
      h('td', {}, (e.requires || []).join(' ')),
      h('td', { class: 'warn' }, (e.warnings || []).join('; ')), cell);
  });
  fill(tab,
    h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: () => loadCatalog(tab, onApplied) }, 'Reload'),
      h('label', {}, ' diff of source ', src), h('button', { type: 'button', 'data-diff-button': '', onclick: diff }, 'Diff')),
    diffOut, pasteBox(),
    (cat.warnings || []).map((w) => h('p', { class: 'warn' }, `${w.source} ${w.file}: ${w.message}`)),
    h('table', { class: 'catalog' }, h('thead', {}, h('tr', {}, ['source', 'name', 'what', 'requires', 'warnings', ''].map((x) => h('th', {}, x)))), h('tbody', {}, rows)));
}

// loadActors fills the tab with the actor tree of /debug/actors, or says
// that the host did not mount it.
export async function loadActors(tab) {
  let tree;
  try { tree = await api('GET', '/debug/actors'); } catch (e) {
    fill(tab, h('p', { class: 'muted' }, e.status === 404 ? 'the actor tree is not mounted on this listener (/debug/)' : e.message));
    return;
  }
  const node = (a) => h('li', { 'data-actor': a.path },
    h('b', {}, a.name), ` ${a.kind} `, h('span', { class: `state state-${cls(a.state)}` }, a.state),
    a.restarts ? ` restarts ${a.restarts}` : '', a.pid ? ` pid ${a.pid}` : '', a.unresponsive ? ' unresponsive' : '',
    a.children && a.children.length ? h('ul', {}, a.children.map(node)) : null);
  fill(tab, h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: () => loadActors(tab) }, 'Refresh')), h('ul', { class: 'tree' }, node(tree)));
}

// cls makes a server-given word safe as part of a class name.
export const cls = (s) => String(s || '').replace(/[^a-z_]/g, '');
