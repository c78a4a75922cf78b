// The tools tab: tool search over every server (GET /api/mcp/tools/search)
// and the tool list the model is given (GET /api/mcp/tools/model).
import { h, fill } from './dom.js';
import { api, seg } from './api.js';

// toolsTab builds the tab once.
export function toolsTab(tab) {
  if (tab.firstChild) return;
  const q = h('input', { type: 'search', name: 'q', placeholder: 'what the tool should do', spellcheck: 'false', autocomplete: 'off', size: 40 });
  const out = h('div', { 'data-search': '' });
  const model = h('div', { 'data-model': '' });
  const search = async () => {
    try {
      const res = await api('GET', `/api/mcp/tools/search?q=${seg(q.value)}&limit=20`);
      fill(out, h('table', {}, h('thead', {}, h('tr', {}, ['tool', 'server', 'score', 'description'].map((x) => h('th', {}, x)))),
        h('tbody', {}, (res.tools || []).map((t) => h('tr', { 'data-match': t.name },
          h('td', {}, t.name), h('td', {}, t.server), h('td', {}, Number(t.score).toFixed(2)), h('td', {}, t.description || ''))))));
    } catch (e) { fill(out, h('p', { class: 'error' }, e.message)); }
  };
  const show = async () => {
    try {
      const res = await api('GET', '/api/mcp/tools/model');
      fill(model, h('p', {}, `${(res.tools || []).length} tools as the model gets them`), h('pre', {}, JSON.stringify(res.tools, null, 2)));
    } catch (e) { fill(model, h('p', { class: 'error' }, e.message)); }
  };
  fill(tab,
    h('form', { class: 'toolbar', onsubmit: (ev) => { ev.preventDefault(); search(); } }, q, h('button', { type: 'submit' }, 'Search'),
      h('button', { type: 'button', 'data-action': 'model', onclick: show }, "The model's tools")),
    out, model);
}
