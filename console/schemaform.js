// Forms generated from a tool's input schema and a prompt's arguments,
// and the rendering of what a call returns.
import { h, fill, debounce } from './dom.js';
import { api, seg } from './api.js';

// typeOf is a property's JSON type: the first non-null one of a list.
function typeOf(p) {
  const t = Array.isArray(p.type) ? p.type.find((x) => x !== 'null') : p.type;
  if (Array.isArray(p.enum) && p.enum.length) return 'enum';
  return t || 'json';
}

// field makes the input of one argument and its reader: undefined when
// left empty (not sent), else the value, or throws naming the argument.
function field(name, p, required) {
  const t = typeOf(p);
  const id = `arg-${Math.random().toString(36).slice(2)}`;
  let input;
  let read;
  if (t === 'enum') {
    input = h('select', { id, name }, required ? null : h('option', { value: '' }, '—'),
      p.enum.map((v, i) => h('option', { value: String(i) }, JSON.stringify(v))));
    read = () => (input.value === '' ? undefined : p.enum[Number(input.value)]);
  } else if (t === 'boolean') {
    input = h('select', { id, name }, h('option', { value: '' }, '—'),
      h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
    read = () => (input.value === '' ? undefined : input.value === 'true');
  } else if (t === 'number' || t === 'integer') {
    input = h('input', { id, name, type: 'number', step: t === 'integer' ? '1' : 'any' });
    read = () => {
      if (input.value.trim() === '') return undefined;
      const n = Number(input.value);
      if (!Number.isFinite(n) || (t === 'integer' && !Number.isInteger(n))) throw new Error(`${name}: not ${t === 'integer' ? 'an integer' : 'a number'}`);
      return n;
    };
  } else if (t === 'string') {
    input = h('input', { id, name, type: 'text', spellcheck: 'false', autocomplete: 'off' });
    read = () => (input.value === '' ? undefined : input.value);
  } else {
    input = h('textarea', { id, name, rows: 3, spellcheck: 'false', placeholder: `${t} as JSON` });
    read = () => {
      if (input.value.trim() === '') return undefined;
      // Never e.message: Chromium's quotes the input, which may hold a secret.
      try { return JSON.parse(input.value); } catch { throw new Error(`${name}: not valid JSON`); }
    };
  }
  const label = h('label', { for: id }, name, required ? h('span', { class: 'req' }, ' *') : null, ` (${t})`);
  return { el: h('div', { class: 'field' }, label, input, p.description ? h('small', {}, p.description) : null), read, input };
}

// argsFields makes the inputs of an object schema's properties; a schema
// whose arguments cannot be listed gets one JSON textarea for all of them.
function argsFields(schema) {
  const s = schema && typeof schema === 'object' ? schema : {};
  const properties = s.properties && typeof s.properties === 'object' ? s.properties : null;
  if (!properties) {
    if (Object.keys(s).every((k) => k === 'type' || k === '$schema')) return { els: [], read: () => ({}) };
    const f = field('arguments', { type: 'object' }, false);
    return { els: [f.el], read: () => f.read() || {} };
  }
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const fields = Object.entries(properties).map(([name, p]) => [name, field(name, p || {}, required.has(name))]);
  return {
    els: fields.map(([, f]) => f.el),
    read: () => {
      const out = {};
      for (const [name, f] of fields) {
        const v = f.read();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
  };
}

// toolForm is the call form of a tool: its arguments, Call, and the result.
export function toolForm(tool) {
  const { els, read } = argsFields(tool.input_schema);
  const out = h('div', { class: 'result' });
  const form = h('form', { class: 'call' }, els, h('button', { type: 'submit' }, 'Call'), out);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let args;
    try { args = read(); } catch (e) { fill(out, h('p', { class: 'error' }, e.message)); return; }
    fill(out, h('p', { class: 'muted' }, 'calling…'));
    try {
      const res = await api('POST', `/api/mcp/tools/${seg(tool.name)}/call`, { arguments: args });
      fill(out, renderResult(res));
    } catch (e) {
      fill(out, h('p', { class: 'error' }, e.message));
    }
  });
  return form;
}

// safeImage: the image types shown inline; any other is described.
const safeImage = /^image\/(png|jpeg|gif|webp)$/;

// block renders one content block the way the model gets it.
export function block(b) {
  switch (b && b.type) {
    case 'text':
      return h('pre', { class: 'text' }, b.text);
    case 'image':
      if (safeImage.test(b.mime_type) && typeof b.data === 'string') {
        return h('img', { src: `data:${b.mime_type};base64,${b.data}`, alt: 'image result' });
      }
      return h('p', { class: 'muted' }, `[image ${b.mime_type}]`);
    case 'audio':
      return h('p', { class: 'muted' }, `[audio ${b.mime_type}]`);
    case 'resource': {
      const r = b.resource || {};
      return h('div', {}, h('p', { class: 'muted' }, `[resource ${r.uri || ''}]`), r.text != null ? h('pre', { class: 'text' }, r.text) : null);
    }
    case 'resource_link':
      return h('p', { class: 'muted' }, `[resource link ${b.uri || ''}]`);
    default:
      return h('pre', { class: 'text' }, JSON.stringify(b, null, 2));
  }
}

// renderResult shows a tool call's answer: the content blocks, the
// structured content, and the whole answer as JSON.
export function renderResult(res) {
  return [
    res.is_error ? h('p', { class: 'error' }, 'is_error: the tool reports an error') : null,
    (res.content || []).map(block),
    res.structured_content !== undefined ? h('details', {}, h('summary', {}, 'structured content'), h('pre', {}, JSON.stringify(res.structured_content, null, 2))) : null,
    h('details', {}, h('summary', {}, 'answer as JSON'), h('pre', {}, JSON.stringify(res, null, 2))),
  ];
}

// promptForm is the get form of a prompt: one text input per argument.
export function promptForm(prompt) {
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
  const fields = args.map((a) => [a.name, field(a.name, { type: 'string', description: a.description }, a.required)]);
  for (const [name, f] of fields) suggest(prompt.name, name, f, fields);
  const out = h('div', { class: 'result' });
  const form = h('form', { class: 'call' }, fields.map(([, f]) => f.el), h('button', { type: 'submit' }, 'Get'), out);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const argv = {};
    for (const [name, f] of fields) {
      const v = f.read();
      if (v !== undefined) argv[name] = v;
    }
    try {
      const res = await api('POST', `/api/mcp/prompts/${seg(prompt.name)}/get`, { arguments: argv });
      fill(out, res.description ? h('p', {}, res.description) : null,
        (res.messages || []).map((m) => h('div', { class: 'msg' }, h('b', {}, `${m.role}: `), block(m.content))));
    } catch (e) {
      fill(out, h('p', { class: 'error' }, e.message));
    }
  });
  return form;
}

// suggest offers the server's completions (POST /api/mcp/complete) under
// a prompt argument's input as it is typed, the other arguments as their
// context; after a refusal (a server without completions) it stops asking.
function suggest(prompt, name, f, fields) {
  const list = h('datalist', { id: `${f.input.id}-list` });
  f.input.setAttribute('list', list.id);
  f.el.append(list);
  let off = false;
  f.input.addEventListener('input', debounce(async () => {
    if (off) return;
    const context = {};
    for (const [n, g] of fields) if (n !== name && g.input.value) context[n] = g.input.value;
    try {
      const res = await api('POST', '/api/mcp/complete', { prompt, argument: name, value: f.input.value, context });
      fill(list, (res.values || []).map((v) => h('option', { value: v })));
    } catch (e) { off = e.status >= 400 && e.status < 500; }
  }, 200));
}
