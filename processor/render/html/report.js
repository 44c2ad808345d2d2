// pageblame report: draws the data of processor/render/report_data.h with
// plain DOM and SVG (no library, nothing fetched). Views: the time chart with
// a growth table for a picked range, an icicle graph of live bytes, the
// address-space strip, the attribution of a region table. Open with
// #view=NAME to show one view (screenshots), #selftest to write what was
// drawn into #selftest-result (the browser test reads it).
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('pageblame-data').textContent);
  // Frame names are in D.names once each; a stack's frames are indices.
  D.stacks.forEach(function (s) {
    s.frames = s.frames.map(function (i) { return D.names[i]; });
    s.summary = s.summary.map(function (i) { return D.names[i]; });
  });
  var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948',
                 '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#8cd17d', '#d37295'];
  var OTHER = '#c9c3bf', BEFORE = '#6b7686';
  var TOP = PALETTE.length;
  var SVGNS = 'http://www.w3.org/2000/svg';

  // ---- helpers
  function human(b) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    var i = 0;
    while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return i === 0 ? String(b) + ' B' : b.toFixed(1) + ' ' + units[i];
  }
  function signed(b) { return b === 0 ? '0 B' : (b > 0 ? '+' : '-') + human(Math.abs(b)); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  // A name as drawn: whole up to MAX_NAME characters, else its start and end
  // around an ellipsis. A symbol can be a MiB long (a JIT's perf map, a
  // generated C++ name); laid out whole, in wrapping table cells and flame
  // boxes, it took Chromium minutes. The whole name stays in the data and
  // on hover (hoverTitle).
  var MAX_NAME = 200;
  function shortName(name) {
    return name.length <= MAX_NAME ? name : name.slice(0, MAX_NAME - 41) + '\u2026' + name.slice(name.length - 40);
  }
  // Hover text made when the pointer first comes over the element: as a
  // title attribute up front, whole names on every row and box would make
  // the page's DOM as big as all of them together.
  var hoverTitles = new WeakMap();
  function hoverTitle(e, make) { hoverTitles.set(e, make); return e; }
  document.addEventListener('mouseover', function (ev) {
    for (var n = ev.target; n && n !== document; n = n.parentNode) {
      var make = hoverTitles.get(n);
      if (make) { if (!n.hasAttribute('title')) n.setAttribute('title', make()); return; }
    }
  }, true);
  function fullStack(stack) { return function () { return frames(stack).slice().reverse().join('\n'); }; }
  // A stack's colour is its method's: the first TOP methods of the chart.
  function colorOf(stack) {
    if (stack < 0) return BEFORE;
    var r = methodRank[D.stacks[stack].method];
    return r !== undefined && r < TOP ? PALETTE[r] : OTHER;
  }
  // A method as attribute's first screen says it: its name whole, then its
  // context (data "methods": processor/analysis/method_groups.h).
  function methodName(m) { return m < 0 ? '[before trace]' : D.methods[m].name; }
  function methodStacks(m) {
    return function () {
      return D.methods[m].stacks.map(function (s) { return frames(s).slice().reverse().join('\n'); }).join('\n\n');
    };
  }
  function frames(stack) { return stack < 0 ? ['[before trace]'] : D.stacks[stack].frames; }
  // The application's frames, leaf first: "malloc ← grow_cache ← main"
  // (the page's data: the rule of processor/analysis/app_frames.h).
  function stackName(stack, n) {
    var f = stack < 0 ? frames(stack) : D.stacks[stack].summary;
    var s = f.slice(0, n || 3).map(shortName).join(' \u2190 ');
    return f.length > (n || 3) ? s + ' \u2190 \u2026' : s;
  }
  function swatch(color) { var s = el('span', {'class': 'sw'}); s.style.background = color; return s; }
  function secs(t) { return t.toFixed(6); }

  // ---- the time axis and series (values at boundaries, exact)
  var TL = D.timeline, N = TL.times.length;
  function dense(sparse) {
    var a = new Array(N), v = 0, j = 0;
    for (var k = 0; k < N; k++) {
      while (j < sparse.length && sparse[j] === k) { v = sparse[j + 1]; j += 2; }
      a[k] = v;
    }
    return a;
  }
  var stackSeries = TL.series.map(function (s) {
    return {stack: s.stack, kind: s.kind, mapped: dense(s.mapped), committed: dense(s.committed)};
  });
  // What no series holds: the stacks past the named ones.
  var rest = {stack: 'rest', mapped: TL.mapped.slice(), committed: TL.committed.slice()};
  stackSeries.forEach(function (s) {
    for (var k = 0; k < N; k++) { rest.mapped[k] -= s.mapped[k]; rest.committed[k] -= s.committed[k]; }
  });
  // One series per application method: the sums of its stacks' series,
  // ranked by their peak committed bytes (the kind: its top stack's).
  var byMethod = {}, methodSeries = [];
  stackSeries.slice(1).forEach(function (s) {
    var m = D.stacks[s.stack].method, g = byMethod[m];
    if (!g) {
      g = byMethod[m] = {method: m, stack: s.stack, kind: s.kind, mapped: new Array(N).fill(0),
                         committed: new Array(N).fill(0)};
      methodSeries.push(g);
    }
    for (var k = 0; k < N; k++) { g.mapped[k] += s.mapped[k]; g.committed[k] += s.committed[k]; }
  });
  function peakOf(a) { return a.reduce(function (p, v) { return Math.max(p, v); }, 0); }
  methodSeries.sort(function (a, b) { return peakOf(b.committed) - peakOf(a.committed); });
  var methodRank = {};
  methodSeries.forEach(function (g, i) { methodRank[g.method] = i; });
  var before = stackSeries[0];
  before.method = -1;
  var series = [before].concat(methodSeries);

  // ---- header
  function header() {
    document.getElementById('title').textContent = shortName(D.title);
    document.title = 'pageblame: ' + shortName(D.title) + ' pid ' + D.pid;
    var peak = 0, peakT = TL.times[0];
    for (var k = 0; k < N; k++) if (TL.committed[k] > peak) { peak = TL.committed[k]; peakT = TL.times[k]; }
    document.getElementById('summary').textContent =
      'pid ' + D.pid + ' (' + D.comm + '), trace ' + secs(D.start) + ' to ' + secs(D.end) + ' (' +
      (D.end - D.start).toFixed(3) + ' s): at the end ' + human(TL.committed[N - 1]) + ' committed, ' +
      human(TL.mapped[N - 1]) + ' mapped' +
      (D.resident ? ', ' + human(D.resident.total[D.resident.total.length - 1]) + ' resident at the last snapshot' : '') +
      '; ' + D.region_count + ' regions at ' + D.at_text + '; peak ' + human(peak) + ' committed at ' + secs(peakT) + '.';
    var w = document.getElementById('warnings');
    D.lost.forEach(function (l) {
      w.appendChild(el('div', {'class': 'warn'}, l.count + ' events lost between ' + secs(l.from) + ' and ' +
        secs(l.to) + ': pages changed then may be misattributed (red band on the chart).'));
    });
  }

  // ---- the charts: stacked layers over a time axis, into a box
  var RESERVED = '#d9dde4';
  var T0 = TL.times[0], T1 = TL.times[N - 1];
  // layers: [{values: [per time], color, name, cls}], bottom first; lines:
  // [{values, cls}] drawn over them; the axis from T0 to t1 (default T1).
  // Returns the scales and the root.
  function stackedChart(box, times, layers, lines, t1) {
    var T1 = Math.max(t1 || 0, TL.times[N - 1]);
    var W = Math.max(600, Math.min(box.clientWidth || 1100, 1400)), H = 300;
    var m = {l: 70, r: 12, t: 8, b: 26};
    var n = times.length, tops = new Array(n).fill(0), ymax = 1;
    layers.forEach(function (s) { for (var k = 0; k < n; k++) tops[k] += s.values[k]; });
    for (var k = 0; k < n; k++) ymax = Math.max(ymax, tops[k]);
    lines.forEach(function (l) { l.values.forEach(function (v) { ymax = Math.max(ymax, v); }); });
    var drawnMax = ymax;
    ymax *= 1.05;
    function x(t) { return m.l + (T1 > T0 ? (t - T0) / (T1 - T0) : 0) * (W - m.l - m.r); }
    function y(v) { return H - m.b - v / ymax * (H - m.t - m.b); }
    var root = svg('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H});
    var grid = svg('g', {'class': 'grid'}), axis = svg('g', {'class': 'axis'});
    var step = Math.pow(1024, Math.floor(Math.log(ymax) / Math.log(1024)));
    while (ymax / step > 8) step *= 2;
    while (ymax / step < 3) step /= 2;
    for (var v = 0; v <= ymax; v += step) {
      grid.appendChild(svg('line', {x1: m.l, x2: W - m.r, y1: y(v), y2: y(v)}));
      var tx = svg('text', {x: m.l - 6, y: y(v) + 4, 'text-anchor': 'end'});
      tx.textContent = human(v);
      axis.appendChild(tx);
    }
    for (var i = 0; i <= 6; i++) {
      var t = T0 + (T1 - T0) * i / 6;
      var lx = svg('text', {x: x(t), y: H - 8, 'text-anchor': i === 0 ? 'start' : i === 6 ? 'end' : 'middle'});
      lx.textContent = i === 0 ? secs(t) : '+' + (t - T0).toFixed(3) + ' s';
      axis.appendChild(lx);
    }
    axis.appendChild(svg('line', {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b}));
    root.appendChild(grid);
    var base = new Array(n).fill(0);
    layers.forEach(function (s) {
      var top = base.map(function (b, k) { return b + s.values[k]; });
      var d = 'M' + x(times[0]) + ',' + y(top[0]);
      for (var k = 1; k < n; k++) d += 'L' + x(times[k]) + ',' + y(top[k]);
      for (k = n - 1; k >= 0; k--) d += 'L' + x(times[k]) + ',' + y(base[k]);
      var p = svg('path', {d: d + 'Z', fill: s.color, 'class': 'layer' + (s.cls ? ' ' + s.cls : '')});
      var tt = svg('title', {});
      tt.textContent = s.name;
      p.appendChild(tt);
      root.appendChild(p);
      base = top;
    });
    lines.forEach(function (l) {
      var d = 'M' + x(times[0]) + ',' + y(l.values[0]);
      for (var k = 1; k < n; k++) d += 'L' + x(times[k]) + ',' + y(l.values[k]);
      root.appendChild(svg('path', {d: d, 'class': l.cls}));
    });
    D.lost.forEach(function (l) {
      var r = svg('rect', {x: x(l.from), y: m.t, width: Math.max(2, x(l.to) - x(l.from)), height: H - m.t - m.b, 'class': 'lost'});
      var tt = svg('title', {});
      tt.textContent = l.count + ' events lost';
      r.appendChild(tt);
      root.appendChild(r);
    });
    root.appendChild(axis);
    box.appendChild(root);
    return {x: x, y: y, root: root, W: W, m: m, H: H, drawnMax: drawnMax};
  }

  // Committed bytes by stack; with the box ticked, the PROT_NONE
  // reservations (mapped minus committed) as a band on top.
  var chart = {};
  function committedLayers() {
    var layers = [{values: series[0].committed, color: BEFORE, name: stackName(-1)}];
    series.slice(1, TOP + 1).forEach(function (s) {
      layers.push({values: s.committed, color: colorOf(s.stack), name: methodName(s.method)});
    });
    var other = rest.committed.slice();
    series.slice(TOP + 1).forEach(function (s) { for (var k = 0; k < N; k++) other[k] += s.committed[k]; });
    layers.push({values: other, color: OTHER, name: 'other stacks'});
    return layers;
  }
  function drawChart() {
    var box = document.getElementById('chart');
    box.textContent = '';
    var reserved = document.getElementById('show-reserved').checked;
    var layers = committedLayers(), lines = [];
    if (reserved) {
      layers.push({values: TL.mapped.map(function (v, k) { return v - TL.committed[k]; }), color: RESERVED,
                   name: 'reserved (PROT_NONE): mapped, not committed', cls: 'reserved'});
      lines.push({values: TL.committed, cls: 'committed'});
    }
    var c = stackedChart(box, TL.times, layers, lines);
    var sel = svg('rect', {x: 0, y: c.m.t, width: 0, height: c.H - c.m.t - c.m.b, 'class': 'sel'});
    c.root.appendChild(sel);
    var fin = el('div', {id: 'chart-final', 'data-mapped': TL.mapped[N - 1], 'data-committed': TL.committed[N - 1],
      'data-drawn': reserved ? 'mapped' : 'committed', 'data-drawn-max': c.drawnMax},
      'At the end: ' + human(TL.committed[N - 1]) + ' committed, ' + human(TL.mapped[N - 1]) + ' mapped (' +
      human(TL.mapped[N - 1] - TL.committed[N - 1]) + ' of it reserved, PROT_NONE).');
    box.appendChild(fin);
    var root = c.root, x = c.x, W = c.W;
    chart = {x: x, root: root, sel: sel, W: W};
    if (growthShown) showSelection(growthShown.from, growthShown.to);

    // Picking a range: the boundary nearest to the pointer at each end.
    function nearest(evt) {
      var r = root.getBoundingClientRect(), px = (evt.clientX - r.left) * W / r.width, best = 0;
      for (var k = 1; k < N; k++) if (Math.abs(x(TL.times[k]) - px) < Math.abs(x(TL.times[best]) - px)) best = k;
      return best;
    }
    root.addEventListener('mousedown', function (e) { dragFrom = nearest(e); dragNearest = nearest; e.preventDefault(); });
    root.addEventListener('mousemove', function (e) {
      if (dragFrom === null) return;
      showSelection(dragFrom, nearest(e));
    });
    root.addEventListener('dblclick', function () { pickRange(0, N - 1); });
  }
  var dragFrom = null, dragNearest = null;
  window.addEventListener('mouseup', function (e) {
    if (dragFrom === null) return;
    var to = dragNearest(e), from = dragFrom;
    dragFrom = null;
    if (to === from) return;
    pickRange(Math.min(from, to), Math.max(from, to));
  });
  function showSelection(i, j) {
    var a = chart.x(TL.times[Math.min(i, j)]), b = chart.x(TL.times[Math.max(i, j)]);
    chart.sel.setAttribute('x', a);
    chart.sel.setAttribute('width', Math.max(1, b - a));
  }

  // Resident bytes at each residency snapshot, by the same stacks (and
  // colours); without snapshots, a note.
  var residentShown = null;
  function drawResident() {
    var R = D.resident, box = document.getElementById('resident-chart');
    var note = document.getElementById('resident-note');
    if (!R) {
      note.textContent = D.snapshots
        ? 'No residency snapshot of this process: resident bytes are not known.'
        : 'The trace has no residency snapshots (TRACE.rss, taken by pageblame record; docs/residency.md): ' +
          'resident bytes are not known, so this page shows committed bytes only.';
      return;
    }
    var n = R.times.length, layers = [], other = R.total.slice();
    // By method, as the committed chart.
    var rm = {};
    R.series.forEach(function (s) {
      for (var k = 0; k < n; k++) other[k] -= s.bytes[k];
      var m = s.stack < 0 ? -1 : D.stacks[s.stack].method;
      if (!rm[m]) {
        rm[m] = {values: new Array(n).fill(0), color: colorOf(s.stack), name: methodName(m)};
        layers.push(rm[m]);
      }
      for (k = 0; k < n; k++) rm[m].values[k] += s.bytes[k];
    });
    layers.push({values: other, color: OTHER, name: 'other stacks'});
    // A snapshot at the recording's stop may come after the last memory call.
    var c = stackedChart(box, R.times, layers, [{values: R.total, cls: 'resident-total'}], R.times[n - 1]);
    // A dot per snapshot (one snapshot alone draws no area).
    R.times.forEach(function (t, k) {
      var dot = svg('circle', {cx: c.x(t), cy: c.y(R.total[k]), r: 2.5, 'class': 'snapshot'});
      var tt = svg('title', {});
      tt.textContent = 'snapshot at ' + secs(t) + ': ' + human(R.total[k]) + ' resident';
      dot.appendChild(tt);
      c.root.appendChild(dot);
    });
    note.textContent = n + ' residency snapshot' + (n === 1 ? '' : 's') + '; at the last (' + secs(R.times[n - 1]) +
      '): ' + human(R.total[n - 1]) + ' resident.';
    residentShown = {last: R.total[n - 1], points: n, drawnMax: c.drawnMax};
  }

  function legend() {
    var box = document.getElementById('legend');
    box.textContent = '';
    var items = [[-1, BEFORE, null]];
    for (var i = 1; i < series.length && i <= TOP; i++) {
      items.push([series[i].method, colorOf(series[i].stack), series[i].kind]);
    }
    items.forEach(function (it) {
      var s = hoverTitle(el('span', {'class': 'entry'}), it[0] < 0 ? fullStack(-1) : methodStacks(it[0]));
      s.appendChild(swatch(it[1]));
      s.appendChild(document.createTextNode(shortName(methodName(it[0]))));
      if (it[2]) s.appendChild(el('span', {'class': 'kind'}, it[2]));
      box.appendChild(s);
    });
    var o = el('span', {'class': 'entry'});
    o.appendChild(swatch(OTHER));
    o.appendChild(document.createTextNode('other stacks'));
    box.appendChild(o);
    if (document.getElementById('show-reserved').checked) {
      var r = el('span', {'class': 'entry'});
      r.appendChild(swatch(RESERVED));
      r.appendChild(document.createTextNode('reserved (PROT_NONE)'));
      box.appendChild(r);
    }
  }

  // ---- the growth table between boundaries i and j
  var growthShown = null;
  function pickRange(i, j) {
    showSelection(i, j);
    var rows = series.concat([rest]).map(function (s) {
      return {stack: s.stack, method: s.method, kind: s.kind || null,
              from: s.committed[i], to: s.committed[j], mfrom: s.mapped[i], mto: s.mapped[j]};
    }).filter(function (r) { return r.mfrom !== 0 || r.mto !== 0; });
    // Committed growth first; stacks that only reserved (PROT_NONE) after.
    rows.sort(function (a, b) {
      return (b.to - b.from) - (a.to - a.from) || b.to - a.to || (b.mto - b.mfrom) - (a.mto - a.mfrom);
    });
    var total = {from: TL.committed[i], to: TL.committed[j], mfrom: TL.mapped[i], mto: TL.mapped[j]};
    growthShown = {from: i, to: j, total: total, rows: rows};
    document.getElementById('growth-title').textContent = 'Growth from ' + secs(TL.times[i]) +
      (i === 0 ? ' (start)' : '') + ' to ' + secs(TL.times[j]) + (j === N - 1 ? ' (end)' : '') + ': ' +
      signed(total.to - total.from) + ' committed, ' + signed(total.mto - total.mfrom) + ' mapped';
    var t = el('table', {id: 'growth'});
    var h = el('tr');
    ['committed growth', 'from', 'to', 'mapped growth', 'kind', 'application method'].forEach(function (c, k) {
      h.appendChild(el('th', {'class': k < 4 ? 'num' : ''}, c));
    });
    t.appendChild(h);
    var shown = 40;
    rows.slice(0, shown).forEach(function (r) {
      var tr = el('tr');
      var g = r.to - r.from;
      tr.appendChild(el('td', {'class': 'num ' + (g > 0 ? 'pos' : g < 0 ? 'neg' : '')}, signed(g)));
      tr.appendChild(el('td', {'class': 'num'}, human(r.from)));
      tr.appendChild(el('td', {'class': 'num'}, human(r.to)));
      tr.appendChild(el('td', {'class': 'num'}, signed(r.mto - r.mfrom)));
      tr.appendChild(el('td', {'class': 'kind'}, r.kind || ''));
      var td = el('td', {'class': 'stack'});
      if (r.stack === 'rest') {
        td.appendChild(swatch(OTHER));
        td.appendChild(document.createTextNode('other stacks (not named in this page)'));
      } else {
        td.appendChild(swatch(colorOf(r.stack)));
        td.appendChild(document.createTextNode(shortName(methodName(r.method))));
        hoverTitle(td, r.method < 0 ? fullStack(-1) : methodStacks(r.method));
      }
      tr.appendChild(td);
      t.appendChild(tr);
    });
    var tot = el('tr', {'class': 'total'});
    var g = total.to - total.from;
    [signed(g), human(total.from), human(total.to), signed(total.mto - total.mfrom), '', 'total (as pageblame maps counts it)']
      .forEach(function (c, k) { tot.appendChild(el('td', {'class': k < 4 ? 'num' : ''}, c)); });
    t.appendChild(tot);
    var box = document.getElementById('growth-table');
    box.textContent = '';
    box.appendChild(t);
    if (rows.length > shown) box.appendChild(el('p', {'class': 'hint'}, (rows.length - shown) + ' more rows: see pageblame growth'));
    // The page credits the creating call; growth's default is the committing one.
    box.appendChild(el('p', {'class': 'hint'}, 'The same, exactly: pageblame growth --by create --sort committed --from ' +
      secs(TL.times[i]) + ' --to ' + (j === N - 1 ? 'end' : secs(TL.times[j])) + ' --pid ' + D.pid));
  }

  // ---- the icicle graph of live bytes
  var flameRoot = null;
  function buildFlame() {
    var root = {name: 'all', value: 0, children: {}, parent: null, depth: 0};
    D.live.forEach(function (item) {
      var node = root;
      root.value += item.bytes;
      frames(item.stack).forEach(function (name) {
        var c = node.children[name];
        if (!c) c = node.children[name] = {name: name, value: 0, children: {}, parent: node, depth: node.depth + 1};
        c.value += item.bytes;
        node = c;
      });
    });
    return root;
  }
  function hue(name) {
    if (name.charAt(0) === '[') return '#b8bfca';
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 'hsl(' + (10 + h % 45) + ',' + (65 + h % 20) + '%,' + (62 + (h >> 8) % 14) + '%)';
  }
  function drawFlame(zoom) {
    var box = document.getElementById('flame');
    box.textContent = '';
    var W = box.clientWidth || 1100, ROW = 18, maxDepth = 0;
    var total = flameRoot.value || 1;
    function add(node, x, w) {
      var d = el('div', {'class': 'fnode', 'data-name': shortName(node.name)});
      hoverTitle(d, function () {
        return node.name + '\n' + human(node.value) + ' (' + (100 * node.value / total).toFixed(1) + '% of ' + human(total) + ')';
      });
      d.style.left = x + 'px';
      d.style.width = w + 'px';
      d.style.top = node.depth * ROW + 'px';
      d.style.background = node.name === 'all' ? '#d6dbe3' : hue(node.name);
      d.textContent = node.name === 'all' ? 'all: ' + human(node.value) : shortName(node.name);
      d.addEventListener('click', function () { drawFlame(node === zoom && node.parent ? node.parent : node); });
      box.appendChild(d);
      maxDepth = Math.max(maxDepth, node.depth);
    }
    // The zoomed node's ancestors, full width, then its subtree to scale.
    for (var a = zoom.parent; a; a = a.parent) add(a, 0, W);
    (function layout(node, x, w) {
      add(node, x, w);
      var kids = Object.keys(node.children).map(function (k) { return node.children[k]; });
      kids.sort(function (p, q) { return q.value - p.value; });
      var cx = x;
      kids.forEach(function (c) {
        var cw = node.value ? w * c.value / node.value : 0;
        if (cw >= 1) layout(c, cx, cw);
        cx += cw;
      });
    })(zoom, 0, W);
    box.style.height = (maxDepth + 1) * ROW + 4 + 'px';
  }

  // ---- the address-space strip
  function drawStrip() {
    var box = document.getElementById('strip');
    var prevEnd = null;
    D.regions.forEach(function (r, i) {
      var start = BigInt(r.start);
      if (prevEnd !== null && start !== prevEnd) {
        var gap = start - prevEnd;
        box.appendChild(el('div', {'class': gap >= BigInt(1) << BigInt(30) ? 'gap big' : 'gap',
          title: 'gap of ' + human(Number(gap))}));
      }
      prevEnd = BigInt(r.end);
      var d = el('div', {'class': 'region' + (r.prot === '---' ? ' none' : ''), 'data-i': i});
      d.style.width = Math.max(3, Math.round(6 * Math.log2(r.bytes / 4096 + 1) + 3)) + 'px';
      d.style.backgroundColor = colorOf(r.origin);  // not `background`: it would drop the hatching of .none
      // The resident fraction, as a dark band from the bottom (unknown: none).
      if (r.rss !== null && r.rss !== undefined) {
        var f = r.bytes ? r.rss / r.bytes : 0;
        var shade = el('div', {'class': 'rss', 'data-fraction': f.toFixed(4)});
        shade.style.height = (100 * f).toFixed(1) + '%';
        d.appendChild(shade);
      }
      box.appendChild(d);
    });
    var tip = document.getElementById('tooltip');
    box.addEventListener('mouseover', function (e) {
      var i = e.target.getAttribute && e.target.getAttribute('data-i');
      if (i === null || i === undefined) return;
      tip.textContent = '';
      regionTip(D.regions[+i], tip);
      tip.style.display = 'block';
    });
    box.addEventListener('mousemove', function (e) {
      var x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      var y = e.clientY + 16 + tip.offsetHeight > window.innerHeight ? e.clientY - tip.offsetHeight - 10 : e.clientY + 16;
      tip.style.left = Math.max(4, x) + 'px';
      tip.style.top = Math.max(4, y) + 'px';
    });
    box.addEventListener('mouseout', function () { tip.style.display = 'none'; });
  }
  function regionTip(r, tip) {
    tip.appendChild(el('div', {'class': 'tt'}, r.start + '-' + r.end + '  ' + human(r.bytes) + '  ' + r.prot + '  ' +
      kindText(r) + '  ' + shortName(r.label)));
    if (D.strip_snapshot !== null) {
      tip.appendChild(el('div', {}, 'resident: ' + (r.rss === null ? 'not read (PROT_NONE, or mapped after the snapshot)'
        : human(r.rss) + ' (' + (r.bytes ? (100 * r.rss / r.bytes).toFixed(1) : '0') + '%)') +
        ', snapshot at ' + secs(D.strip_snapshot)));
    }
    if (isArena(r)) {
      tip.appendChild(el('div', {}, r.in_use_bytes === null
        ? 'inside malloc\'s arena: in use and free not known (no heap snapshot of this process by then)'
        : 'inside malloc\'s arena (heap snapshot at ' + secs(D.heap_snapshot) + '): ' + human(r.in_use_bytes) +
          ' in use, ' + human(r.free_bytes) + ' free held by glibc' + (r.held_by_glibc ? ' (freed; held by glibc)' : '') +
          '; the calls below made the pages usable, later mallocs reuse their chunks without a syscall'));
    }
    if (r.count > 1) {
      tip.appendChild(el('div', {}, r.count + ' neighbouring regions with the same creating stack, prot and label, shown as one ' +
        '(the page has too many to show each); the calls and history below are the first one\'s'));
    }
    function call(what, stack, text) {
      tip.appendChild(el('div', {}, what + ': ' + text));
      if (stack >= 0) tip.appendChild(el('div', {'class': 'frames'}, frames(stack).slice().reverse().slice(0, 12).map(shortName).join('\n')));
    }
    call('created by', r.origin, r.origin_call);
    if (r.commit >= 0) call('committed by', r.commit, r.commit_call);
    if (r.history.length) {
      tip.appendChild(el('div', {}, 'history:'));
      tip.appendChild(el('div', {'class': 'frames'}, r.history.join('\n')));
    }
  }

  // ---- inside malloc's arenas: in use and free held by glibc
  // The data gives "in_use_bytes", "free_bytes" and "held_by_glibc" on a
  // stack, method or region of an arena kind (malloc, heap) only, null
  // without a heap snapshot (processor/render/report_data.h); the cells say
  // them as attribute's text does.
  function isArena(o) { return o.in_use_bytes !== undefined; }
  function kindText(o) { return o.kind ? o.kind + (isArena(o) ? '*' : '') : ''; }
  function inUseText(o) {
    if (!isArena(o)) return '';
    if (o.in_use_bytes === null) return '?';
    return o.held_by_glibc ? 'freed; held by glibc' : human(o.in_use_bytes);
  }
  function freeText(o) { return !isArena(o) ? '' : o.free_bytes === null ? '?' : human(o.free_bytes); }
  var ARENA_NOTE = '* malloc arena pages (malloc*, heap*): credited to the call that made them usable; later ' +
    'mallocs reuse their chunks without a syscall, so "in use" is what any caller\'s live chunks hold on them, ' +
    'not that call\'s own (docs/heap.md)';

  // ---- the attribution of a region table
  function drawAttribution() {
    var A = D.attribution, box = document.getElementById('attribution');
    if (!A) { document.getElementById('attribution-view').style.display = 'none'; return; }
    box.appendChild(el('p', {}, A.title + ': ' + human(A.bytes) + ' in ' + (A.regions.length + A.more_regions) +
      ' regions: ' + human(A.bytes - A.before_trace_bytes - A.unmapped_bytes) + ' made by the stacks below, ' +
      human(A.before_trace_bytes) + ' from before the trace, ' + human(A.unmapped_bytes) + ' not mapped.'));
    // With a heap snapshot for this moment, the arena bytes in use and free
    // (as attribute's "in use" column); without, no such columns.
    var split = A.heap_snapshot_time !== null;
    var byStack = {};
    A.stacks.forEach(function (s) { byStack[s.stack] = s; });
    var t = el('table', {id: 'attribution-stacks'});
    var h = el('tr');
    // committed: what the rows are ranked by (attribute's first screen);
    // bytes: with the reservations (PROT_NONE) too.
    var cols = ['committed', 'bytes'].concat(split ? ['in use', 'free (held by glibc)'] : [],
                                              ['regions', 'stacks', 'kind', 'application method']);
    cols.forEach(function (c, k) { h.appendChild(el('th', {'class': k < cols.length - 2 ? 'num' : ''}, c)); });
    t.appendChild(h);
    var arenaRows = 0;
    // A row per method (attribute's first screen: its stacks' sums).
    A.methods.forEach(function (m) {
      var tr = el('tr');
      tr.appendChild(el('td', {'class': 'num committed', 'data-bytes': String(m.committed_bytes)},
                        human(m.committed_bytes)));
      tr.appendChild(el('td', {'class': 'num'}, human(m.bytes)));
      if (split) {
        var a = isArena(m) && m.in_use_bytes !== null;
        tr.appendChild(el('td', a ? {'class': 'num in-use', 'data-bytes': String(m.in_use_bytes)} : {'class': 'num in-use'},
                          inUseText(m)));
        tr.appendChild(el('td', a ? {'class': 'num free', 'data-bytes': String(m.free_bytes)} : {'class': 'num free'},
                          freeText(m)));
      }
      tr.appendChild(el('td', {'class': 'num'}, String(m.regions)));
      tr.appendChild(el('td', {'class': 'num'}, String(m.stack_count)));
      tr.appendChild(el('td', {'class': 'kind'}, kindText(m)));
      if (isArena(m)) arenaRows++;
      // Hover: each of its stacks, with its bytes (and split) first.
      var td = hoverTitle(el('td', {'class': 'stack'}), function () {
        return m.stacks.map(function (s) {
          var st = byStack[s], head = '';
          if (st) {
            head = '[' + human(st.committed_bytes) + ' committed' +
              (split && isArena(st) ? ', ' + inUseText(st) + (st.held_by_glibc ? '' : ' in use') + ', ' +
                                      freeText(st) + ' free held by glibc' : '') + ']\n';
          }
          return head + frames(s).slice().reverse().join('\n');
        }).join('\n\n');
      });
      td.appendChild(swatch(colorOf(m.stacks[0])));
      td.appendChild(document.createTextNode(shortName(m.name)));
      tr.appendChild(td);
      t.appendChild(tr);
    });
    [['[before trace]', A.before_trace_bytes], ['[not mapped]', A.unmapped_bytes]].forEach(function (p) {
      if (!p[1]) return;
      var tr = el('tr');
      tr.appendChild(el('td', {'class': 'num'}, ''));
      tr.appendChild(el('td', {'class': 'num'}, human(p[1])));
      for (var k = 2; k < cols.length - 1; k++) tr.appendChild(el('td', {'class': k < cols.length - 2 ? 'num' : ''}, ''));
      tr.appendChild(el('td', {}, p[0]));
      t.appendChild(tr);
    });
    box.appendChild(t);
    if (A.more_stacks) box.appendChild(el('p', {'class': 'hint'}, A.more_stacks + ' more stacks: see pageblame attribute'));
    if (arenaRows) {
      box.appendChild(el('p', {'class': 'hint', id: 'arena-note'}, ARENA_NOTE + (split
        ? '. In use and free: at the heap snapshot at ' + secs(A.heap_snapshot_time) +
          '; "freed; held by glibc": less than a tenth of the row\'s arena bytes in use, the rest free memory glibc kept.'
        : '. The trace has no heap snapshot for this moment (taken by pageblame record): in use and free are not known.')));
    }
  }

  // ---- one view only (#view=timeline|flame|strip|attribution)
  function applyView() {
    var m = /view=([a-z]+)/.exec(location.hash);
    if (!m) return;
    document.body.classList.add('view-only');
    var s = document.getElementById(m[1] + '-view');
    if (s) s.classList.add('shown');
  }

  applyView();
  header();
  var reservedBox = document.getElementById('show-reserved');
  reservedBox.checked = /reserved/.test(location.hash);
  reservedBox.addEventListener('change', function () { drawChart(); legend(); });
  drawChart();
  legend();
  drawResident();
  pickRange(0, N - 1);
  flameRoot = buildFlame();
  document.getElementById('flame-at').textContent = D.at_text;
  document.getElementById('strip-at').textContent = D.at_text;
  document.getElementById('strip-rss').textContent = D.strip_snapshot === null ? '' :
    '; the dark band at the bottom of each region is its resident fraction, from the residency snapshot at ' +
    secs(D.strip_snapshot) + ' (none: not read)';
  drawFlame(flameRoot);
  drawStrip();
  drawAttribution();
  var ms = performance.now();
  document.getElementById('footer').textContent = 'pageblame report; drawn ' + Math.round(ms) +
    ' ms after the page was opened; ' + D.stacks.length + ' stacks, ' + D.region_count + ' regions (' +
    D.regions.length + ' in the strip), ' +
    (N - 1) + ' time buckets.';

  // The strip's tooltip lines about arenas, per arena element (the pointer
  // over each): what the self-test reports.
  function stripArenaTips() {
    var out = [];
    D.regions.forEach(function (r) {
      if (!isArena(r)) return;
      var tip = el('div');
      regionTip(r, tip);
      var line = '';
      tip.childNodes.forEach(function (n) { if (/inside malloc/.test(n.textContent)) line = n.textContent; });
      out.push({start: r.start, in_use: r.in_use_bytes, free: r.free_bytes, line: line});
    });
    return out;
  }

  if (/selftest/.test(location.hash)) {
    var names = {};
    document.querySelectorAll('#flame .fnode').forEach(function (n) { names[n.getAttribute('data-name')] = 1; });
    // The longest text drawn for a name, and the hover text of the flame
    // box of the longest name (as the pointer would make it).
    var longestLabel = 0, longestName = '', hoverTitleLength = 0;
    document.querySelectorAll('#flame .fnode, #legend .entry, #growth td.stack, #attribution-stacks td.stack')
      .forEach(function (e) { longestLabel = Math.max(longestLabel, e.textContent.length); });
    D.names.forEach(function (n) { if (n.length > longestName.length) longestName = n; });
    document.querySelectorAll('#flame .fnode').forEach(function (e) {
      if (hoverTitleLength || e.getAttribute('data-name') !== shortName(longestName)) return;
      e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
      hoverTitleLength = (e.getAttribute('title') || '').length;
    });
    document.getElementById('selftest-result').textContent = JSON.stringify({
      errors: window.pbErrors,
      render_ms: ms,
      final_mapped: +document.getElementById('chart-final').getAttribute('data-mapped'),
      final_committed: +document.getElementById('chart-final').getAttribute('data-committed'),
      drawn: document.getElementById('chart-final').getAttribute('data-drawn'),
      drawn_max: +document.getElementById('chart-final').getAttribute('data-drawn-max'),
      legend: Array.prototype.map.call(document.querySelectorAll('#legend .entry'), function (e) { return e.textContent; }),
      resident_last: residentShown ? residentShown.last : null,
      resident_points: residentShown ? residentShown.points : 0,
      resident_note: document.getElementById('resident-note').textContent,
      strip_shaded: document.querySelectorAll('#strip .rss').length,
      regions: document.querySelectorAll('#strip .region').length,
      flame_names: Object.keys(names),
      growth_from: growthShown.total.from,
      growth_to: growthShown.total.to,
      growth_rows: growthShown.rows.map(function (r) {
        return {leaf: r.stack === 'rest' ? '[other]' : frames(r.stack)[frames(r.stack).length - 1],
                method: r.stack === 'rest' ? '[other]' : methodName(r.method), growth: r.to - r.from,
                mapped_growth: r.mto - r.mfrom};
      }),
      attribution_rows: document.querySelectorAll('#attribution-stacks tr').length,
      attribution_methods: Array.prototype.map.call(document.querySelectorAll('#attribution-stacks td.stack'),
        function (e) { return e.textContent; }),
      attribution_committed: Array.prototype.map.call(document.querySelectorAll('#attribution-stacks td.committed'),
        function (e) { return +e.getAttribute('data-bytes'); }),
      // Per method row: the in-use and free cells, their bytes (null: no
      // figure in the cell), and the kind cell; none without a heap snapshot.
      attribution_in_use: Array.prototype.map.call(document.querySelectorAll('#attribution-stacks td.in-use'),
        function (e) { return {text: e.textContent, bytes: e.hasAttribute('data-bytes') ? +e.getAttribute('data-bytes') : null}; }),
      attribution_free: Array.prototype.map.call(document.querySelectorAll('#attribution-stacks td.free'),
        function (e) { return {text: e.textContent, bytes: e.hasAttribute('data-bytes') ? +e.getAttribute('data-bytes') : null}; }),
      attribution_kinds: Array.prototype.map.call(document.querySelectorAll('#attribution-stacks td.kind'),
        function (e) { return e.textContent; }),
      attribution_columns: Array.prototype.map.call(document.querySelectorAll('#attribution-stacks th'),
        function (e) { return e.textContent; }),
      arena_note: (document.getElementById('arena-note') || {}).textContent || null,
      strip_arena_tips: stripArenaTips(),
      longest_name: longestName.length,
      longest_label: longestLabel,
      longest_name_hover_title: hoverTitleLength
    });
  }
})();
