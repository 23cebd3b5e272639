// The inline stylesheet and script of the `ferry check --html` page. The script builds every piece of text it
// shows with textContent (never innerHTML), so model strings from the JSON cannot become markup.
#include "tools/check_html_assets.h"

namespace ferry::tools {

const char kCheckHtmlCss[] = R"CSS(
:root { --native: #c6efce; --native-s: #2e7d32; --fallback: #ffe08a; --fallback-s: #a67c00;
        --unsupported: #ffb3b3; --unsupported-s: #c62828; --sel: #1565c0; --line: #d8dce2; --muted: #5f6b7a; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1d2733;
       background: #f4f6f9; }
header { display: flex; align-items: center; gap: 16px; padding: 10px 18px; background: #1d2733; color: #fff; }
header h1 { font-size: 17px; margin: 0; font-weight: 600; white-space: nowrap; }
header .path { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; opacity: .85; overflow: hidden;
               text-overflow: ellipsis; white-space: nowrap; flex: 1; }
.status { padding: 3px 10px; border-radius: 12px; font-weight: 600; font-size: 13px; white-space: nowrap; }
.status.ok { background: var(--native); color: #14451a; }
.status.bad { background: var(--unsupported); color: #6b0d0d; }
main { padding: 12px 18px 24px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 12px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; min-width: 120px; }
.card .k { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.card .v { font-size: 22px; font-weight: 650; }
.card .s { font-size: 12px; color: var(--muted); }
.card.native { border-left: 6px solid var(--native-s); }
.card.fallback { border-left: 6px solid var(--fallback-s); }
.card.unsupported { border-left: 6px solid var(--unsupported-s); }
.card.info { flex: 1; min-width: 260px; font-size: 12.5px; }
.card.info .v { font-size: 13px; font-weight: 400; overflow-wrap: anywhere; }
.bar { position: relative; height: 8px; width: 160px; background: #e9edf2; border-radius: 4px; margin: 3px 0 5px; }
.bar > span { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 4px; background: var(--fallback-s); }
.work { display: flex; gap: 12px; align-items: stretch; }
.graph-panel { flex: 1; min-width: 0; background: #fff; border: 1px solid var(--line); border-radius: 8px;
               display: flex; flex-direction: column; }
.toolbar { display: flex; align-items: center; gap: 8px; padding: 6px 10px; border-bottom: 1px solid var(--line);
           font-size: 12.5px; flex-wrap: wrap; }
.toolbar button { font: inherit; padding: 2px 9px; border: 1px solid #b9c1cc; background: #f7f9fb; border-radius: 5px;
                  cursor: pointer; }
.toolbar input { font: inherit; padding: 2px 6px; border: 1px solid #b9c1cc; border-radius: 5px; width: 170px; }
.legend { display: flex; gap: 10px; margin-right: auto; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -2px; margin-right: 4px;
      border: 1.5px solid; }
.sw.native { background: var(--native); border-color: var(--native-s); }
.sw.fallback { background: var(--fallback); border-color: var(--fallback-s); }
.sw.unsupported { background: var(--unsupported); border-color: var(--unsupported-s); }
#graph { overflow: auto; height: 72vh; min-height: 320px; position: relative; }
#graph svg { display: block; margin: 0 auto; }
#graph .node { cursor: pointer; }
#graph .node.selected path, #graph .node.selected polygon { stroke: var(--sel); stroke-width: 3; }
#graph .node.hover path, #graph .node.hover polygon { stroke-width: 2.5; }
#graph .edge.hl path { stroke: var(--sel); stroke-width: 2; }
#graph .edge.hl polygon { stroke: var(--sel); fill: var(--sel); }
#graph.searching .node:not(.match) { opacity: .25; }
#graph.searching .gnode:not(.match) { opacity: .25; }
.grid { display: flex; flex-wrap: wrap; gap: 3px; padding: 8px; align-content: flex-start; }
.gnode { font-size: 10px; padding: 1px 4px; border-radius: 4px; border: 1.2px solid; cursor: pointer;
         max-width: 140px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.gnode.native { background: var(--native); border-color: var(--native-s); }
.gnode.fallback { background: var(--fallback); border-color: var(--fallback-s); }
.gnode.unsupported { background: var(--unsupported); border-color: var(--unsupported-s); }
.gnode.selected { outline: 2.5px solid var(--sel); }
.note { padding: 6px 10px; font-size: 12.5px; color: #6b4d00; background: #fff6d6; border-bottom: 1px solid var(--line); }
aside#details { width: 380px; flex: none; background: #fff; border: 1px solid var(--line); border-radius: 8px;
                padding: 10px 12px; max-height: calc(72vh + 40px); overflow: auto; font-size: 13px; }
#details h3 { margin: 0 0 2px; font-size: 15px; word-break: break-all; }
#details .op { font-family: "DejaVu Sans Mono", monospace; font-size: 12.5px; color: var(--muted); margin-bottom: 8px; }
#details .verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px;
                    border: 1.5px solid; }
#details .verdict.native { background: var(--native); border-color: var(--native-s); }
#details .verdict.fallback { background: var(--fallback); border-color: var(--fallback-s); }
#details .verdict.unsupported { background: var(--unsupported); border-color: var(--unsupported-s); }
#details dl { display: grid; grid-template-columns: 78px 1fr; gap: 3px 8px; margin: 8px 0; }
#details dt { color: var(--muted); }
#details dd { margin: 0; word-break: break-word; }
#details .mono, td.mono { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
#details ul { margin: 2px 0 6px; padding-left: 16px; }
#details li { word-break: break-all; }
#details a, table a { color: var(--sel); cursor: pointer; text-decoration: underline; }
#details .hint { color: var(--muted); }
section.tables { margin-top: 16px; }
h2 { font-size: 16px; margin: 18px 0 6px; }
table { border-collapse: collapse; background: #fff; border: 1px solid var(--line); width: 100%; font-size: 12.5px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eceff3; vertical-align: top; }
th { background: #eef1f5; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.row-unsupported td:first-child { border-left: 4px solid var(--unsupported-s); }
tr.row-fallback td:first-child { border-left: 4px solid var(--fallback-s); }
td.name { word-break: break-all; max-width: 320px; }
.empty { color: var(--muted); font-style: italic; }
footer { padding: 8px 18px 18px; color: var(--muted); font-size: 12px; }
.view { display: flex; gap: 10px; align-items: center; white-space: nowrap; }
.view label { cursor: pointer; }
.toolbar input[type=checkbox] { width: auto; padding: 0; margin: 0 4px 0 0; vertical-align: -2px; }
#shown { color: var(--muted); }
#graph .hidden { display: none; }
.sev { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 11.5px; font-weight: 600;
       border: 1.5px solid; }
.sev-error { background: var(--unsupported); border-color: var(--unsupported-s); color: #6b0d0d; }
.sev-slow { background: var(--fallback); border-color: var(--fallback-s); color: #5c4400; }
.sev-minor { background: #eef1f5; border-color: #b9c1cc; color: var(--muted); }
.sev-info { background: #e3eefc; border-color: #7ea6d8; color: #1d4f8c; }
tr.sev-row-minor td, tr.sev-row-info td { color: var(--muted); }
tr.sev-row-minor td:first-child, tr.sev-row-info td:first-child { border-left: 4px solid #b9c1cc; }
td.name summary { cursor: pointer; }
ol.members { margin: 4px 0 0; padding-left: 24px; max-height: 240px; overflow: auto; }
.sev-summary { font-size: 12.5px; margin: 0 0 6px; }
)CSS";

const char kCheckHtmlJs[] = R"JS(
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ferry-data').textContent);
  var nodes = data.nodes, edges = data.edges;
  var graph = document.getElementById('graph');
  var details = document.getElementById('details');
  var svg = graph.querySelector('svg');
  var byId = function (i) { return document.getElementById('ferry_node_' + i); };

  // Producers and consumers of each node (from the drawn edges), for links in the details panel.
  var preds = nodes.map(function () { return []; }), succs = nodes.map(function () { return []; });
  edges.forEach(function (e) { succs[e[0]].push(e[1]); preds[e[1]].push(e[0]); });
  var producer = new Map();
  nodes.forEach(function (n, i) { n.outputs.forEach(function (o) { if (o && !producer.has(o)) producer.set(o, i); }); });

  function fmtFlops(f) {
    if (!f) return '-';
    var u = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'K']];
    for (var k = 0; k < u.length; k++) if (f >= u[k][0]) return (f / u[k][0]).toFixed(2) + ' ' + u[k][1] + 'FLOP';
    return f.toFixed(0) + ' FLOP';
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function link(i, text) {
    var a = el('a', null, text);
    a.addEventListener('click', function (ev) { ev.preventDefault(); select(i, true); });
    return a;
  }
  function row(dl, k, v) {
    if (v === undefined || v === null || v === '') return;
    dl.appendChild(el('dt', null, k));
    var dd = el('dd');
    if (v instanceof Node) dd.appendChild(v); else dd.textContent = String(v);
    dl.appendChild(dd);
  }
  function values(names, types, linkTo) {
    var ul = el('ul');
    names.forEach(function (name, k) {
      var li = el('li', 'mono');
      if (!name) { li.textContent = '(omitted)'; ul.appendChild(li); return; }
      var p = linkTo ? producer.get(name) : undefined;
      if (p !== undefined) li.appendChild(link(p, name)); else li.appendChild(document.createTextNode(name));
      if (types[k]) li.appendChild(document.createTextNode(': ' + types[k]));
      ul.appendChild(li);
    });
    if (!names.length) ul.appendChild(el('li', 'hint', '(none)'));
    return ul;
  }
  function show(i) {
    details.textContent = '';
    if (i === null) {
      details.appendChild(el('h3', null, 'Node details'));
      details.appendChild(el('p', 'hint', 'Hover over a node to see its verdict, reason and remedy; click to pin it. ' +
                                          'Click a row of the problem table to find its node.'));
      return;
    }
    var n = nodes[i];
    details.appendChild(el('h3', null, n.name || '(unnamed node #' + i + ')'));
    details.appendChild(el('div', 'op', (n.domain === 'ai.onnx' ? '' : n.domain + '::') + n.op + ' \u00b7 opset ' +
                                        n.opset + (n.graph !== 'main' ? ' \u00b7 ' + n.graph : '')));
    details.appendChild(el('span', 'verdict ' + n.verdict, n.verdict));
    var dl = el('dl');
    row(dl, 'backend', n.backend);
    row(dl, 'kernel', n.kernel);
    row(dl, 'layer', n.layer);
    row(dl, 'reason', n.reason);
    row(dl, 'remedy', n.remedy);
    row(dl, 'FLOPs', fmtFlops(n.flops));
    row(dl, 'time', n.time);  // with --profile TRACE
    row(dl, 'node #', i);
    details.appendChild(dl);
    if (n.attempts.length) {
      details.appendChild(el('b', null, 'Backends asked'));
      var ul = el('ul');
      n.attempts.forEach(function (a) {
        ul.appendChild(el('li', null, a.backend + ': ' + (a.layer ? '[' + a.layer + '] ' + a.reason : 'takes it')));
      });
      details.appendChild(ul);
    }
    details.appendChild(el('b', null, 'Inputs'));
    details.appendChild(values(n.inputs, n.input_types, true));
    details.appendChild(el('b', null, 'Outputs'));
    details.appendChild(values(n.outputs, n.output_types, false));
    if (succs[i].length) {
      details.appendChild(el('b', null, 'Consumers'));
      var cl = el('ul');
      succs[i].forEach(function (j) {
        var li = el('li');
        li.appendChild(link(j, (nodes[j].name || '#' + j) + ' (' + nodes[j].op + ')'));
        cl.appendChild(li);
      });
      details.appendChild(cl);
    }
  }

  var pinned = null, hovered = null;
  function mark(i, cls, on) {
    if (i === null) return;
    var e = byId(i);
    if (e) e.classList.toggle(cls, on);
    if (cls !== 'selected') return;
    preds[i].forEach(function (p) { var x = document.getElementById('ferry_edge_' + p + '_' + i); if (x) x.classList.toggle('hl', on); });
    succs[i].forEach(function (s) { var x = document.getElementById('ferry_edge_' + i + '_' + s); if (x) x.classList.toggle('hl', on); });
  }
  function reveal(i) {
    var e = byId(i);
    if (!e) return;
    var r = e.getBoundingClientRect(), c = graph.getBoundingClientRect();
    graph.scrollLeft += (r.left + r.width / 2) - (c.left + c.width / 2);
    graph.scrollTop += (r.top + r.height / 2) - (c.top + c.height / 2);
  }
  function select(i, scroll) {
    var target = byId(i);
    if (target && scroll) target.classList.remove('hidden');  // asked for by name: show it even when filtered out
    mark(pinned, 'selected', false);
    pinned = (pinned === i && !scroll) ? null : i;
    mark(pinned, 'selected', true);
    show(pinned);
    if (pinned !== null && scroll) reveal(pinned);
    try { history.replaceState(null, '', pinned === null ? location.pathname : '#node=' + pinned); } catch (e) {}
  }
  function nodeOf(target) {
    var e = target.closest ? target.closest('[data-index]') : null;
    return e && graph.contains(e) ? Number(e.getAttribute('data-index')) : null;
  }
  graph.addEventListener('mouseover', function (ev) {
    var i = nodeOf(ev.target);
    if (i === hovered) return;
    mark(hovered, 'hover', false);
    hovered = i;
    mark(hovered, 'hover', true);
    show(i !== null ? i : pinned);
  });
  graph.addEventListener('mouseleave', function () { mark(hovered, 'hover', false); hovered = null; show(pinned); });
  graph.addEventListener('click', function (ev) { var i = nodeOf(ev.target); if (i !== null) select(i, false); });
  // A row of a table pins its (first) node; in a group's list of nodes each name pins its own, and opening the
  // list pins nothing.
  document.querySelectorAll('tr[data-ref]').forEach(function (tr) {
    tr.addEventListener('click', function (ev) {
      if (ev.target.closest && ev.target.closest('details')) return;
      select(Number(tr.getAttribute('data-ref')), true);
      graph.scrollIntoView({block: 'nearest'});
    });
  });
  document.querySelectorAll('a[data-ref]').forEach(function (a) {
    a.addEventListener('click', function (ev) {
      ev.preventDefault();
      select(Number(a.getAttribute('data-ref')), true);
      graph.scrollIntoView({block: 'nearest'});
    });
  });

  // "problems only": hide the nodes that run natively (or where --pin put them) and the edges to them; with
  // "+ neighbours", keep the producers and consumers of every problem node too.
  var only = document.getElementById('problems-only'), near = document.getElementById('neighbours');
  var shown = document.getElementById('shown');
  var isProblem = nodes.map(function (n) { return n.verdict === 'fallback' || n.verdict === 'unsupported'; });
  function applyView() {
    var on = !!(only && only.checked && !only.disabled), withNear = on && near && near.checked;
    var keep = isProblem.slice();
    if (withNear) {
      isProblem.forEach(function (p, i) {
        if (!p) return;
        preds[i].forEach(function (j) { keep[j] = true; });
        succs[i].forEach(function (j) { keep[j] = true; });
      });
    }
    var count = 0;
    nodes.forEach(function (n, i) {
      var e = byId(i);
      if (e) e.classList.toggle('hidden', on && !keep[i]);
      if (!on || keep[i]) count++;
    });
    edges.forEach(function (e) {
      var x = document.getElementById('ferry_edge_' + e[0] + '_' + e[1]);
      if (x) x.classList.toggle('hidden', on && !(keep[e[0]] && keep[e[1]]));
    });
    graph.classList.toggle('problems-only', on);
    if (near) near.disabled = !(only && only.checked && !only.disabled);
    if (shown) shown.textContent = on ? count + ' of ' + nodes.length + ' nodes' : '';
  }
  // The problem nodes worst first, as the problem table lists them (a group's nodes in its order).
  var worstFirst = [];
  document.querySelectorAll('#problems tr[data-ref]:not([data-severity="info"])').forEach(function (tr) {
    var members = tr.querySelectorAll('a[data-ref]');
    if (!members.length) worstFirst.push(Number(tr.getAttribute('data-ref')));
    members.forEach(function (a) { worstFirst.push(Number(a.getAttribute('data-ref'))); });
  });
  function step(by) {
    if (!worstFirst.length) return;
    var at = worstFirst.indexOf(pinned);
    at = at < 0 ? (by > 0 ? 0 : worstFirst.length - 1) : (at + by + worstFirst.length) % worstFirst.length;
    select(worstFirst[at], true);
    document.getElementById('problem-pos').textContent = (at + 1) + '/' + worstFirst.length;
  }
  var prev = document.getElementById('prev-problem'), next = document.getElementById('next-problem');
  if (prev) prev.addEventListener('click', function () { step(-1); });
  if (next) next.addEventListener('click', function () { step(1); });
  if (only) only.addEventListener('change', function () { applyView(); if (pinned !== null) reveal(pinned); });
  if (near) near.addEventListener('change', function () { applyView(); if (pinned !== null) reveal(pinned); });
  applyView();

  // The bounding box of the node elements not hidden, in unscaled pixels of the drawing; null when none is shown.
  function shownBox() {
    var c = svg.getBoundingClientRect(), x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    nodes.forEach(function (n, i) {
      var e = byId(i);
      if (!e || e.classList.contains('hidden')) return;
      var r = e.getBoundingClientRect();
      x0 = Math.min(x0, r.left - c.left); y0 = Math.min(y0, r.top - c.top);
      x1 = Math.max(x1, r.right - c.left); y1 = Math.max(y1, r.bottom - c.top);
    });
    if (!(x1 > x0)) return null;
    return {x: x0 / scale, y: y0 / scale, w: Math.max(1, (x1 - x0) / scale), h: Math.max(1, (y1 - y0) / scale)};
  }

  // Zoom: the SVG is sized in CSS pixels from its viewBox times the scale.
  var scale = 1, vw = 0, vh = 0;
  function applyScale() {
    if (!svg) return;
    svg.style.width = (vw * scale) + 'px';
    svg.style.height = (vh * scale) + 'px';
    document.getElementById('zoom-level').textContent = Math.round(scale * 100) + '%';
  }
  function zoomTo(s, cx, cy) {
    var ox = (graph.scrollLeft + cx) / scale, oy = (graph.scrollTop + cy) / scale;
    scale = Math.min(4, Math.max(0.02, s));
    applyScale();
    graph.scrollLeft = ox * scale - cx;
    graph.scrollTop = oy * scale - cy;
  }
  if (svg) {
    var vb = svg.viewBox.baseVal;
    vw = vb.width * 4 / 3; vh = vb.height * 4 / 3;  // Graphviz sizes in points
    svg.removeAttribute('width'); svg.removeAttribute('height');
    // Fit the width, but not below 50%: labels stay legible on wide graphs ("fit" shows all of it).
    scale = Math.min(1, Math.max(0.5, (graph.clientWidth - 4) / vw));
    applyScale();
    if (vh * scale + 24 < graph.clientHeight) graph.style.height = (vh * scale + 24) + 'px';  // small graphs
    var mid = function () { return [graph.clientWidth / 2, graph.clientHeight / 2]; };
    document.getElementById('zoom-in').onclick = function () { var m = mid(); zoomTo(scale * 1.25, m[0], m[1]); };
    document.getElementById('zoom-out').onclick = function () { var m = mid(); zoomTo(scale / 1.25, m[0], m[1]); };
    document.getElementById('zoom-fit').onclick = function () {
      var box = graph.classList.contains('problems-only') ? shownBox() : null;
      if (!box) { zoomTo(Math.min((graph.clientWidth - 4) / vw, (graph.clientHeight - 4) / vh), 0, 0); return; }
      // Fit the nodes still shown: their bounding box, in unscaled drawing pixels, fills the panel.
      var s = Math.min(1.5, (graph.clientWidth - 24) / box.w, (graph.clientHeight - 24) / box.h);
      zoomTo(s, 0, 0);
      var c = graph.getBoundingClientRect(), o = svg.getBoundingClientRect();
      var left = o.left - c.left + graph.scrollLeft, top = o.top - c.top + graph.scrollTop;  // the drawing's origin
      graph.scrollLeft = left + box.x * scale - (graph.clientWidth - box.w * scale) / 2;
      graph.scrollTop = top + box.y * scale - (graph.clientHeight - box.h * scale) / 2;
    };
    document.getElementById('zoom-1').onclick = function () { var m = mid(); zoomTo(1, m[0], m[1]); };
    graph.addEventListener('wheel', function (ev) {
      if (!ev.ctrlKey) return;
      ev.preventDefault();
      var c = graph.getBoundingClientRect();
      zoomTo(scale * (ev.deltaY < 0 ? 1.15 : 1 / 1.15), ev.clientX - c.left, ev.clientY - c.top);
    }, {passive: false});
  } else {
    document.querySelectorAll('.zoom').forEach(function (b) { b.style.display = 'none'; });
  }

  // Search by name or op: dims the rest; Enter pins the next match.
  var search = document.getElementById('search'), found = document.getElementById('found'), matches = [], cursor = -1;
  search.addEventListener('input', function () {
    var q = search.value.trim().toLowerCase();
    matches = [];
    cursor = -1;
    nodes.forEach(function (n, i) {
      var hit = q !== '' && ((n.name || '').toLowerCase().indexOf(q) >= 0 || n.op.toLowerCase().indexOf(q) >= 0);
      var e = byId(i);
      if (e) e.classList.toggle('match', hit);
      if (hit) matches.push(i);
    });
    graph.classList.toggle('searching', q !== '');
    found.textContent = q === '' ? '' : matches.length + ' found';
  });
  search.addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter' || !matches.length) return;
    cursor = (cursor + 1) % matches.length;
    select(matches[cursor], true);
    found.textContent = (cursor + 1) + ' of ' + matches.length;
  });

  // Start on the node named by the URL (#node=<index>), else the worst problem (the first row of the problem
  // table), else the first node that does not run natively, else the top of the drawing.
  var worst = document.querySelector('#problems tr[data-ref]');
  var first = worst ? Number(worst.getAttribute('data-ref'))
                    : nodes.findIndex(function (n) { return n.verdict !== 'native'; });
  var linked = /^#node=(\d+)$/.exec(location.hash);
  if (linked && Number(linked[1]) < nodes.length) first = Number(linked[1]);
  show(null);
  if (first >= 0) select(first, true);
  else if (svg && nodes.length) {  // the top of the drawing, centered on its topmost node
    var top = null, best = Infinity;
    for (var i = 0; i < nodes.length; i++) {
      var e = byId(i), y = e ? e.getBoundingClientRect().top : Infinity;
      if (y < best) { best = y; top = i; }
    }
    if (top !== null) { reveal(top); graph.scrollTop = 0; }
  }
})();
)JS";

}  // namespace ferry::tools
